/* gl-store-monitor.h: inotify watches on the sandbox store
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct _GlStoreMonitor GlStoreMonitor;

/* Called from the main context for every event that may change what a
 * sandbox exports.  @id is the sandbox, or NULL when the store directory
 * itself changed (a sandbox created or removed) or when events were lost
 * (the kernel queue overflowed: everything may have changed). */
typedef void (*GlStoreMonitorFunc) (GlStoreMonitor *monitor, const char *id, gpointer user_data);

/* Watches @store_dir (created or not: its parent is watched until it
 * appears).  @host_root is "/" except in tests: host-based sandboxes see
 * its usr/share/applications. */
GlStoreMonitor *gl_store_monitor_new (const char *store_dir, const char *host_root,
                                      GlStoreMonitorFunc func, gpointer user_data,
                                      GError **error);
void            gl_store_monitor_free (GlStoreMonitor *monitor);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GlStoreMonitor, gl_store_monitor_free)

/* (Re)arms the watches of sandbox @id: its directory, sandbox.conf, its
 * system/current, and usr/share/{applications,icons,pixmaps} of each layer
 * (rootfs or the host, and the current system generation), plus the parents
 * of those that do not exist yet.  Watches no longer needed (an old system
 * generation) are dropped.  Call it after every event of the sandbox, before
 * reading it. */
void            gl_store_monitor_watch_sandbox (GlStoreMonitor *monitor, const char *id);
/* What the watches saw of sandbox @id since its changes were last taken
 * (they start with its first gl_store_monitor_watch_sandbox): FALSE when
 * anything may have changed (a directory came or went, sandbox.conf, the
 * system generation, the user's choice, events lost or too many of them:
 * re-arm the watches and look at everything); else TRUE and *@dirs the
 * watched directories in which files changed, the watches as they were.
 * Taking them starts afresh. */
gboolean        gl_store_monitor_take_changes (GlStoreMonitor *monitor, const char *id, GStrv *dirs);
/* The changes taken were not used (the sandbox was not exported): the
 * next take says anything may have changed. */
void            gl_store_monitor_lose_changes (GlStoreMonitor *monitor, const char *id);
/* The layer roots of @id whose applications, icons and pixmaps
 * directories, and those leading to them, are watched (as
 * GlExportSource.watched_roots has it); NULL if a watch could not be added */
GStrv           gl_store_monitor_watched_roots (GlStoreMonitor *monitor, const char *id);
/* Reads the events the kernel has queued now (before a sync takes them) */
void            gl_store_monitor_drain (GlStoreMonitor *monitor);
/* Drops every watch of sandbox @id. */
void            gl_store_monitor_forget_sandbox (GlStoreMonitor *monitor, const char *id);
/* Re-arms the watch on the store directory (after a NULL callback). */
void            gl_store_monitor_watch_store (GlStoreMonitor *monitor);

/* The layer roots of sandbox @id as the watches see them, highest first
 * (the current system generation's tree, then rootfs or @host_root). */
GStrv           gl_store_monitor_layer_roots (const char *store_dir, const char *id,
                                              const char *host_root);

/* Also watches the user's launcher choices, @config_home/glimpse/launchers/
 * <id>.conf (or its parents until it exists): a change is reported for
 * that sandbox. */
void            gl_store_monitor_watch_user_config (GlStoreMonitor *monitor, const char *config_home);

guint           gl_store_monitor_n_watches (GlStoreMonitor *monitor);

G_END_DECLS
