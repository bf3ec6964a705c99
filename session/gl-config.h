/* gl-config.h: the administrator's settings, /etc/glimpse/glimpse.conf
 * (gl_paths_config_file()), read in one place
 *
 *   [Packages]
 *   MaxTasks=, MaxMemoryMiB=, MaxSeconds=, MinFreeMiB=
 *                  the limits of a package operation (gl-pkg-limits.h)
 *   Mirrors=       download addresses, separated by ';', every package
 *                  operation may use besides the sandbox's repositories
 *   LaunchpadAPI=, PPAArchive=
 *                  where ppa: looks (gl-repo.h; tests serve them locally)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct {
  char *path;
  /* [Packages] limits: the defaults when unset, 0 turns one off */
  guint64 max_tasks;
  guint64 max_memory_mib;
  guint64 max_seconds;
  guint64 min_free_mib;
  char **mirrors;          /* never NULL; each stripped */
  char *launchpad_api;     /* NULL: unset */
  char *ppa_archive;       /* NULL: unset */
} GlConfig;

/* The settings of @path (a missing file: the defaults).  An error names the
 * file when it is there but cannot be read (its G_IO_ERROR) or parsed, or a
 * limit in it is not a number (both G_IO_ERROR_INVALID_DATA). */
GlConfig *gl_config_load (const char *path, GError **error);
/* The same of gl_paths_config_file() */
GlConfig *gl_config_load_default (GError **error);
void      gl_config_free (GlConfig *config);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GlConfig, gl_config_free)

G_END_DECLS
