/* glimpse-progress.h: the download progress bar of the command line
 *
 * The library reports progress through a GlDownloadProgressFunc; this is
 * the program's way of showing it, on stderr: a one-line bar with
 * percentage, size and rate on a terminal, plain lines every 10%
 * otherwise.  Pass gl_cli_progress_update as the progress function and the
 * GlCliProgress as its user_data.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _GlCliProgress GlCliProgress;

GlCliProgress *gl_cli_progress_new    (const char *label,
                                       gboolean    is_terminal);
void           gl_cli_progress_update (guint64     received,
                                       guint64     total,
                                       gpointer    user_data);
/* Ends the bar's line on a terminal. */
void           gl_cli_progress_free   (GlCliProgress *progress);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (GlCliProgress, gl_cli_progress_free)

G_END_DECLS
