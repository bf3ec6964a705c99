/* gl-export-store.h: the export engine (xdg/) applied to the sandbox store
 *
 * This is the API the CLI ("glimpse export", "unexport", "remove") and the
 * session agent use:
 *   gl_export_store_context_new ()       the user's directories, the
 *                                        installed launcher, the cache tools
 *   gl_export_store_sync_all ()          every sandbox of the store
 *   gl_export_store_sync_sandbox ()      one sandbox (the agent, on a change)
 *   gl_export_unexport ()                take one sandbox out (xdg/gl-export.h)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "gl-export.h"
#include "gl-sandbox.h"
#include "gl-store.h"

G_BEGIN_DECLS

/* The host root: $GLIMPSE_HOST_ROOT (tests) or "/". */
const char *gl_export_store_host_root (void);

/* A context for the calling user: the launcher and glimpse of gl-paths,
 * update-desktop-database and gtk-update-icon-cache run when installed. */
GlExportContext *gl_export_store_context_new (void);

/* The system layer's current tree, per the generations contract:
 * <path>/system/<N>/tree for N in <path>/system/current; NULL and no error
 * when the sandbox has no system layer, NULL and an error when
 * system/current cannot be read. */
char *gl_export_store_system_tree (GlSandbox *sandbox, GError **error);

/* Where @sandbox's applications come from: its system layer over its base
 * (its rootfs, or @host_root for a sandbox of the host); the user's own
 * choice read from @config_home. */
GlExportSource *gl_export_store_source_new (GlSandbox *sandbox, const char *host_root,
                                            const char *config_home, GError **error);

/* Every sandbox of @store_dir the user has not switched off ("glimpse
 * unexport": Disabled=true in their launcher file); exports of every other
 * sandbox removed.  What "glimpse export" and the agent's full sync run.
 * Problems of single sandboxes or entries go to @warnings. */
gboolean gl_export_store_sync_all (GlExportContext *ctx, const char *store_dir,
                                   const char *host_root, GlExportStats *stats,
                                   GPtrArray *warnings, GError **error);

/* One sandbox: its exports brought up to date, the others' left alone.  A
 * sandbox gone from the store (or switched off by the user) is unexported. */
gboolean gl_export_store_sync_sandbox (GlExportContext *ctx, const char *store_dir,
                                       const char *id, const char *host_root,
                                       GlExportStats *stats, GPtrArray *warnings,
                                       GError **error);

/* For "glimpse remove": removes the calling user's exports of @id.  As root
 * (e.g. under sudo) it does nothing and returns TRUE: exports live in each
 * user's home and are cleaned by that user's next sync (the session agent
 * or "glimpse export"), which drops sandboxes that are gone from the store. */
gboolean gl_export_store_remove_sandbox (const char *id, GError **error);

G_END_DECLS
