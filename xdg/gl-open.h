/* gl-open.h: opening files with a sandbox's own default applications
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "gl-export.h"

G_BEGIN_DECLS

/* The desktop id of the sandbox's application for @content_type: the
 * defaults and added associations of the mimeapps.list files (the user's
 * own in the sandbox, @user_config_dir, first; then each tree's
 * etc/xdg/mimeapps.list, applications/mimeapps.list and defaults.list),
 * then mimeinfo.cache, then any entry whose MimeType has the type or a
 * parent of it.  NULL when none handles it. */
char *gl_open_find_app (GlExportSource *source, const char *user_config_dir,
                        const char *content_type);

/* The content type for a file or URI: x-scheme-handler/SCHEME for non-file
 * URIs, else what the host's MIME database says. */
char *gl_open_content_type (const char *uri);

/* The command lines (GStrv*) that open @uris with @desktop_id of the
 * sandbox: "LAUNCHER ID -- EXEC…" with the field codes expanded; one run
 * per file when the entry takes a single file. */
GPtrArray *gl_open_commands (GlExportSource *source, const char *launcher,
                             const char *desktop_id, const char * const *uris,
                             GError **error);

G_END_DECLS
