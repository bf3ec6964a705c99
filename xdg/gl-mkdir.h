/* gl-mkdir.h: a directory and its parents, with a GError
 *
 * Here, in the leaf library, so that xdg/ and session/ (which links it)
 * share one copy.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* g_mkdir_with_parents (an existing directory is fine), its errno a
 * G_IO_ERROR naming @path */
gboolean gl_mkdir_with_parents (const char *path, int mode, GError **error);

G_END_DECLS
