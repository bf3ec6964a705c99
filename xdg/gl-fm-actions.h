/* gl-fm-actions.h: "Open in <sandbox>" in the file managers
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "gl-export-private.h"

G_BEGIN_DECLS

/* Adds the per-sandbox files (Nautilus and Caja scripts, Nemo action,
 * Dolphin service menu, PCManFM-Qt action) to @plan. */
void gl_fm_actions_plan (GHashTable *plan, GlExportContext *ctx,
                         const char *id, const char *name);

/* The Thunar uca.xml path and the system default it starts from. */
char *gl_fm_thunar_path (GlExportContext *ctx);
char *gl_fm_thunar_system_default (void);

/* Merges Glimpse's actions for @sandboxes into @existing (NULL: a new file):
 * every byte outside Glimpse's own <action> elements (unique-id starting with
 * "glimpse-") is kept as it is.  Fails, naming @path, if @existing is not
 * well-formed. */
char *gl_fm_thunar_merge (const char *path, const char *existing,
                          const GlExportedSandbox *sandboxes, guint n_sandboxes,
                          const char *glimpse, GError **error);

G_END_DECLS
