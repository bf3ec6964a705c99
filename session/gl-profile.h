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
  GL_PROFILE_ERROR_UNSUPPORTED,   /* no image for this machine */
} GlProfileError;

GQuark gl_profile_error_quark (void);

typedef enum {
  GL_PROFILE_BASE_HOST,       /* the host's / as read-only base */
  GL_PROFILE_BASE_TARBALL,    /* a rootfs tarball fetched with libcurl */
  GL_PROFILE_BASE_BOOTSTRAP,  /* debootstrap / mmdebstrap */
} GlProfileBaseType;

/* A [Repository NAME] group: added to a new sandbox by gl_repo_add, as
 * glimpse add-repo adds one. */
typedef struct {
  char *name;             /* NAME: the name add-repo gives it (gl_repo_name_validate) */
  char *source;           /* Source=: a "deb …" line, ppa:OWNER/NAME, or a file (made absolute) */
  char *key;              /* Key=: a file (made absolute) or an http(s) URL; NULL for ppa: */
} GlProfileRepo;

typedef struct {
  char *name;             /* file name without .profile: what users type */
  char *path;             /* the file it came from */
  char *display_name;
  char *description;
  char *family;           /* apt, dnf, pacman, apk */
  char *release;          /* a fixed release; with a channel, the one pinned by default (or NULL) */
  char **architectures;   /* the family's machine names this profile has images for; empty: any */

  GlProfileBaseType base_type;
  /* tarball */
  char *url;              /* may contain {arch}; may be a directory URL ending in '/' with file_pattern */
  char *file_pattern;     /* glob matched against the checksum list when the file name varies */
  char *checksum;         /* "sha256:HEX", fixed */
  char *checksum_url;     /* a list (SHA256SUMS, .sha256) to take the sum from */
  guint strip_components;
  gboolean oci;           /* Format=oci: an OCI image archive whose layers form the tree */
  char *channel;          /* how {release} is resolved at creation: ubuntu-lts, alpine, fedora; NULL: fixed */
  char *channel_url;      /* where the channel is looked up (alpine: latest-releases.yaml; fedora: releases/) */
  char *archive_url;      /* Url for releases that have moved to an archive (fedora) */
  char *signature;        /* what is signed: "checksums" (detached), "clearsigned" (the list), "file"; NULL: nothing */
  char *signature_url;    /* the detached signature ({file}: the image's file name) */
  char **signed_by;       /* fingerprints the signature must be made with (any key of the keyrings if empty) */
  char **keyrings;        /* keyring files (relative: to the profile's directory); those that exist are used */
  /* bootstrap */
  char *bootstrap_tool;   /* NULL or mmdebstrap; debootstrap is read, and refused by create */
  char *suite;
  char *mirror;           /* NULL: host's apt configuration, else the tool's default */
  char **include;         /* extra packages */

  GPtrArray *repositories;  /* GlProfileRepo*, in the file's order */
  char **launchers;

  /* package manager commands, run inside the sandbox as root */
  char *cmd_refresh;
  char *cmd_upgrade;
  char *cmd_install;      /* packages appended */
  char *cmd_list_upgradable;  /* optional; read, shown, never run */

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

/* Replaces {arch} (the family's name for this machine, e.g. amd64 for apt,
 * x86_64 for dnf, armv7 for apk), {uname_arch} (the kernel's, x86_64) and
 * {release} (left as it is when a channel resolves it) in @template. */
char *gl_profile_expand (GlProfile *profile, const char *template_str);

/* The same for machine @machine (uname -m), with @release, and the
 * NAME, VALUE pairs of @extra ({version}, {file}, …; nullable). */
char *gl_profile_expand_full (GlProfile *profile, const char *template_str, const char *machine,
                              const char *release, const char * const *extra);

/* What a sandbox made from @profile with release @release follows (its
 * Follows=): the moving suite of a bootstrap profile ("stable") when it is
 * not @release itself, else NULL.  Free with g_free. */
char *gl_profile_follows (const GlProfile *profile, const char *release);

/* The name package family @family (apt, dnf, pacman, apk) gives the
 * machine the kernel calls @machine, or NULL when it has none. */
const char *gl_profile_family_arch (const char *family, const char *machine);

/* Checks that the profile can make a sandbox on @machine (NULL: this
 * one): its family has a name for it and the profile lists it (if it
 * lists any).  The error says which machines it supports. */
gboolean gl_profile_check_machine (GlProfile *profile, const char *machine, GError **error);

G_END_DECLS
