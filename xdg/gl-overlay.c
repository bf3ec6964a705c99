/* gl-overlay.c: the marks overlayfs leaves in a layer
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-overlay.h"

#include <sys/sysmacros.h>
#include <sys/xattr.h>

gboolean
gl_overlay_is_whiteout (const struct stat *st)
{
  return S_ISCHR (st->st_mode) && st->st_rdev == makedev (0, 0);
}

gboolean
gl_overlay_dir_is_opaque (int dfd)
{
  char v[4];
  ssize_t n = fgetxattr (dfd, "user.overlay.opaque", v, sizeof v);

  return n == 1 && v[0] == 'y';
}
