/* gl-updates-schedule.h: when the agent checks each sandbox for updates,
 * what it remembers, and what it tells the user
 *
 * Checks shortly after start (a delay plus jitter), then every few hours
 * ($XDG_CONFIG_HOME/glimpse/updates.conf, [Updates] Interval=HOURS,
 * FirstDelay=SECONDS), when the network comes back (GNetworkMonitor),
 * after a sandbox's system generation changed (a `glimpse update`
 * finished), and on demand.  One sandbox's check that runs longer than
 * CheckTimeout=SECONDS (default 20 min) is stopped and fails.  A failed
 * check is retried with back-off and never notified; a check that finds updates not announced (or snoozed
 * with "Later") before notifies once per sandbox.  Results are published
 * as the agent's sandbox properties:
 *   "update-state" s    "checking", "up-to-date", "updates", "error",
 *                       "unsupported" (no apt, dnf, pacman or apk sandbox)
 *   "updates" a(sssssbb) name, arch, installed, candidate, suites, held, phased
 *   "update-error" s    the last failure
 *   "update-checked" x  when the last check finished (µs since the epoch)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

#include "gl-agent.h"

G_BEGIN_DECLS

typedef struct _GlUpdatesSchedule GlUpdatesSchedule;

/* config_file: the keyfile (need not exist); cache_dir: where the checks
 * keep releases, index summaries and what was announced. */
GlUpdatesSchedule *gl_updates_schedule_new   (GlAgent            *agent,
                                              const char         *config_file,
                                              const char         *cache_dir);
void               gl_updates_schedule_free  (GlUpdatesSchedule  *schedule);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GlUpdatesSchedule, gl_updates_schedule_free)

/* Arms the timers and the network watch. */
void               gl_updates_schedule_start (GlUpdatesSchedule  *schedule);

/* Checks these sandboxes now (NULL or empty: all), one after the other,
 * and completes when done; the results are in the agent's properties. */
void               gl_updates_schedule_check        (GlUpdatesSchedule   *schedule,
                                                     const char * const  *ids,
                                                     GAsyncReadyCallback  callback,
                                                     gpointer             user_data);
gboolean           gl_updates_schedule_check_finish (GlUpdatesSchedule   *schedule,
                                                     GAsyncResult        *result,
                                                     GError             **error);

G_END_DECLS
