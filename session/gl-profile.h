/* gl-profile.h: distribution profiles (keyfiles)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define GL_PROFILE_ERROR (gl_profile_error_quark ())

typedef enum {
  GL_PROFILE_ERROR_NOT_FOUND,
  GL_PROFILE_ERROR_MALFORMED,
} GlProfileError;

GQuark gl_profile_error_quark (void);

typedef enum {
  GL_PROFILE_BASE_HOST,       /* the host's / as read-only base */
  GL_PROFILE_BASE_TARBALL,    /* a rootfs tarball fetched with libcurl */
  GL_PROFILE_BASE_BOOTSTRAP,  /* debootstrap / mmdebstrap */
} GlProfileBaseType;

typedef struct {
  char *name;             /* file name without .profile: what users type */
  char *path;             /* the file it came from */
  char *display_name;
  char *description;
  char *family;           /* apt, dnf, pacman, apk */
  char *release;

  GlProfileBaseType base_type;
  /* tarball */
  char *url;              /* may contain {arch}; may be a directory URL ending in '/' with file_pattern */
  char *file_pattern;     /* glob matched against the checksum list when the file name varies */
  char *checksum;         /* "sha256:HEX", fixed */
  char *checksum_url;     /* a list (SHA256SUMS, .sha256) to take the sum from */
  guint strip_components;
  gboolean oci;           /* Format=oci: an OCI image archive whose layers form the tree */
  /* bootstrap */
  char *bootstrap_tool;   /* mmdebstrap or debootstrap (first that exists) */
  char *suite;
  char *mirror;           /* NULL: host's apt configuration, else the tool's default */
  char **include;         /* extra packages */

  char **repositories;
  char **launchers;

  /* package manager commands, run inside the sandbox as root */
  char *cmd_refresh;
  char *cmd_upgrade;
  char *cmd_install;      /* packages appended */
  char *cmd_list_upgradable;

  char **hooks_post_create;   /* scripts, relative to the profile's dir or absolute */
  GHashTable *tweaks;         /* key -> value strings */
} GlProfile;

void gl_profile_free (GlProfile *profile);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GlProfile, gl_profile_free)

/* Parses a profile.  Errors name the file, the line where GKeyFile gives it,
 * and the key. */
GlProfile *gl_profile_load_from_data (const char *name, const char *path,
                                      const char *data, gsize length, GError **error);
GlProfile *gl_profile_load_file (const char *path, GError **error);

/* All profiles in @search_path (gl_paths_profile_dirs ()), one per name, the first directory winning.  Malformed files
 * are skipped and their errors appended to @errors (GError*s). */
GPtrArray *gl_profile_list (const char * const *search_path, GPtrArray *errors);

GlProfile *gl_profile_find (const char * const *search_path, const char *name, GError **error);

const char *gl_profile_base_type_to_string (GlProfileBaseType type);

/* Replaces {arch} (Debian name, e.g. amd64), {uname_arch} (x86_64) and
 * {release} in @template. */
char *gl_profile_expand (GlProfile *profile, const char *template_str);

G_END_DECLS
