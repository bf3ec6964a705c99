/* gl-pkg-limits.h: the resource limits of a package operation
 *
 * A hostile maintainer script must not take the host down with it: every
 * run of glimpse-pkgns (and everything under it) is limited, by the host's
 * root, before anything of the sandbox runs, so nothing inside can lift
 * the limits.  The [Packages] group of glimpse.conf (gl_paths_config_file())
 * sets them; 0 turns one off:
 *
 *   MaxTasks=      processes and threads at once               (2048)
 *   MaxMemoryMiB=  memory, swap included                        (4096)
 *   MaxSeconds=    wall time of the whole operation             (14400)
 *   MinFreeMiB=    space left free on the store's file system   (256)
 *
 * Tasks and memory are a cgroup made for the operation (op-PID-N in a
 * directory glimpse/ of its own): of cgroup v2 where its pids and memory
 * controllers are available (<v2 mount>/glimpse), else of the v1 pids and
 * memory hierarchies (below glimpse's own cgroup there, so glimpse's own
 * limits still hold).  Where neither exists, only RLIMIT_NPROC (MaxTasks=
 * per uid of the range) limits the tasks, and memory is not limited: the
 * caller is given a warning.  An operation's cgroups are removed after it;
 * ones a killed glimpse left are removed by the next operation.
 *
 * glimpse-pkgns moves itself into the cgroups and stops the operation (its
 * whole PID namespace) when a limit is reached; see glimpse-pkgns.c.  A
 * bootstrap (mmdebstrap) joins them through gl_spawn and is watched by
 * gl_pkg_limits_watch_start.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct {
  guint64 max_tasks;
  guint64 max_memory_mib;
  guint64 max_seconds;
  guint64 min_free_mib;
} GlPkgLimitValues;

/* The settings of @conf (a glimpse.conf; missing: the defaults).  An error
 * names a setting that is not a number. */
gboolean gl_pkg_limits_load (const char *conf, GlPkgLimitValues *values, GError **error);

typedef struct _GlPkgLimits GlPkgLimits;

/* Makes the cgroups of one run of glimpse-pkgns with the limits of
 * gl_paths_config_file() (removing the ones killed operations left) and
 * adds glimpse-pkgns's options for them to @argv.  @warning: set to what
 * cannot be limited here, or NULL. */
GlPkgLimits *gl_pkg_limits_prepare (GPtrArray *argv, char **warning, GError **error);

/* What glimpse-pkgns's <op>/stopped-by names ("tasks", "memory", "time",
 * "disk"), as a message: the limit, its value and the setting that
 * raises it. */
char *gl_pkg_limits_describe (GlPkgLimits *limits, const char *which);

/* A run that glimpse-pkgns does not supervise (mmdebstrap's bootstrap,
 * which makes namespaces of its own) is held by the same limits: its
 * child joins these cgroup directories (GlSpawnOptions.cgroups;
 * NULL-terminated, owned by @limits), and a watch stops it at a limit. */
const char * const *gl_pkg_limits_get_cgroups (GlPkgLimits *limits);

typedef struct _GlPkgLimitsWatch GlPkgLimitsWatch;
/* Watches the run from now on, in a thread: the cgroups' task and memory
 * events, its time (MaxSeconds=), the free space of @path's file system
 * (MinFreeMiB=); cancels @cancellable when one is reached. */
GlPkgLimitsWatch *gl_pkg_limits_watch_start (GlPkgLimits *limits, const char *path,
                                             GCancellable *cancellable);
/* Ends the watch (the run has ended): the limit it reached, as
 * gl_pkg_limits_describe names them ("tasks", …), or NULL. */
const char *gl_pkg_limits_watch_end (GlPkgLimitsWatch *watch);

/* Removes the cgroups (the run has ended), waiting (up to a minute: see
 * gl-pkg-limits.c) until they are empty: glimpse-pkgns may end before the last process of the
 * operation, which ends in them (see its supervise()); once they are
 * removed, nothing of the operation runs. */
void  gl_pkg_limits_free (GlPkgLimits *limits);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (GlPkgLimits, gl_pkg_limits_free)

G_END_DECLS
