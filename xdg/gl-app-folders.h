/* gl-app-folders.h: one GNOME Shell app folder per sandbox
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "gl-export-private.h"

G_BEGIN_DECLS

/* TRUE where the org.gnome.desktop.app-folders schema is installed. */
gboolean gl_app_folders_available (void);

/* Folder "glimpse-<id>" named "Glimpse: <name>" for each of @sandboxes,
 * appended to folder-children when new (never reordering the user's); the
 * folders of @removed_ids are taken out again.  No-op without the schema. */
void gl_app_folders_sync (const GlExportedSandbox *sandboxes, guint n_sandboxes,
                          const char * const *removed_ids);

G_END_DECLS
