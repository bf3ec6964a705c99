/* gl-fm-actions.h: "Open in <sandbox>" in the file managers
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "gl-export-private.h"

G_BEGIN_DECLS

/* Adds the per-sandbox files (Nautilus and Nemo scripts, the Caja script
 * when ctx->caja_scripts, Dolphin service menu, FileManager-Actions action
 * for PCManFM-Qt and caja-actions) to @plan.  @names (id -> display name,
 * or NULL) are the other sandboxes that have or may get scripts: a script,
 * named by what the user sees, carries the id when another one could
 * want its name. */
void gl_fm_actions_plan (GHashTable *plan, GlExportContext *ctx, GHashTable *names,
                         const char *id, const char *name);

/* The FileManager-Actions menu "Glimpse" grouping every sandbox's action. */
void gl_fm_actions_plan_shared (GHashTable *plan, GlExportContext *ctx,
                                const GlExportedSandbox *sandboxes, guint n);

/* TRUE when caja-actions is installed: Caja shows the FileManager-Actions
 * files, and a Caja script would be a second entry. */
gboolean gl_fm_caja_actions_installed (void);

/* The Thunar uca.xml path and the system default it starts from. */
char *gl_fm_thunar_path (GlExportContext *ctx);
char *gl_fm_thunar_system_default (void);

/* Merges Glimpse's actions for @sandboxes into @existing (NULL: a new file;
 * two of one display name are told apart by their ids, as the scripts are):
 * every byte outside Glimpse's own <action> elements (unique-id starting with
 * "glimpse-") is kept as it is.  Fails, naming @path, if @existing is not
 * well-formed. */
char *gl_fm_thunar_merge (const char *path, const char *existing,
                          const GlExportedSandbox *sandboxes, guint n_sandboxes,
                          const char *glimpse, GError **error);

G_END_DECLS
