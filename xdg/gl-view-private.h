/* gl-view-private.h: test hooks of the view's resolver
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "gl-view.h"

G_BEGIN_DECLS

/* Calls @hook (NULL: none) with the directory and the name of each regular
 * file the view's resolver found, just before it opens it: a test swaps
 * the file there for something else. */
void gl_view_set_before_open_hook (void (*hook) (int dfd, const char *name));

G_END_DECLS
