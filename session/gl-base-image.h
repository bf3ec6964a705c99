/* gl-base-image.h: what a tarball profile's base image is today — the
 * release its channel resolves to, the image's address, the SHA-256 it
 * must have (from a checksum list whose signature was checked), and the
 * signature checks of the image itself
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

#include "gl-profile.h"

G_BEGIN_DECLS

typedef struct {
  char *release;         /* {release} as resolved (a codename, a number, a date) */
  char *version;         /* the release's version where the channel gives one, or NULL */
  char *how;             /* how it was found, for people ("newest LTS in …") */
  char *url;             /* the image */
  char *file_name;       /* its name (the last segment of url) */
  char *sha256;          /* the SHA-256 it must have */
  char *signature_url;   /* Signature=file: its detached signature; else NULL */
  char *checked;         /* how the image is checked, for people: by what sum, which signature
                          * (or that none is), over what connection */
} GlBaseImage;

void gl_base_image_free (GlBaseImage *image);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GlBaseImage, gl_base_image_free)

/* Resolves the release only: from the channel (or @release_pin, or the
 * profile's Release=).  @machine: uname -m (NULL: this machine).  Ubuntu
 * LTS is read from distro-info-data; Alpine and Fedora need the network. */
gboolean gl_base_image_resolve_release (GlProfile     *profile,
                                        const char    *release_pin,
                                        const char    *machine,
                                        char         **release,
                                        char         **version,
                                        char         **how,
                                        GCancellable  *cancellable,
                                        GError       **error);

/* Everything: the release, then the image and its checksum, with the
 * checksum list's signature checked (Signature=checksums, clearsigned). */
GlBaseImage *gl_base_image_resolve (GlProfile     *profile,
                                    const char    *release_pin,
                                    const char    *machine,
                                    GCancellable  *cancellable,
                                    GError       **error);

/* The keyrings of the profile that exist (Keyring=, expanded for @release;
 * relative paths from the profile's directory); an error naming those tried when none does. */
GStrv gl_base_image_keyrings (GlProfile *profile, const char *release, GError **error);

/* Signature=file: checks @path against the detached signature at
 * @signature_path with the profile's keyrings and SignedBy=. */
gboolean gl_base_image_verify_file (GlProfile     *profile,
                                    const char    *release,
                                    const char    *path,
                                    const char    *signature_path,
                                    GCancellable  *cancellable,
                                    GError       **error);

G_END_DECLS
