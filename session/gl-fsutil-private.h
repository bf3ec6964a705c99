/* gl-fsutil-private.h: test hooks of the file-system helpers
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "gl-fsutil.h"
#include "gl-view-private.h"   /* gl_view_set_before_open_hook */

G_BEGIN_DECLS

/* Calls @hook (NULL: none) with the directory and the name of a directory
 * gl_rm_rf() may not read (EACCES), just before it makes it readable by its
 * owner: a test swaps the directory there for something else, as another
 * process could. */
void gl_rm_rf_set_before_chmod_hook (void (*hook) (int dfd, const char *name));

G_END_DECLS
