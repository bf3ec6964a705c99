/* gl-mkdir.c: a directory and its parents, with a GError
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-mkdir.h"

#include <errno.h>

gboolean
gl_mkdir_with_parents (const char *path, int mode, GError **error)
{
  int saved;

  if (g_mkdir_with_parents (path, mode) == 0)
    return TRUE;
  saved = errno;
  g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
               "Cannot create %s: %s", path, g_strerror (saved));
  return FALSE;
}
