/* gl-overlay.h: the marks overlayfs leaves in a layer, read as glimpse's
 * overlays read them
 *
 * Here, in the leaf library, so that the export's scan of applications
 * (xdg/) and the view's resolver (xdg/gl-view.c) agree.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>
#include <sys/stat.h>

G_BEGIN_DECLS

/* TRUE if @st is an overlayfs whiteout (a character device 0:0): the
 * name is removed from the layers below. */
gboolean gl_overlay_is_whiteout (const struct stat *st);

/* TRUE if the directory open at @dfd is opaque: the layers below do not
 * show in it.  glimpse's overlays are mounted with userxattr, so the mark
 * is user.overlay.opaque=y; trusted.overlay.opaque means nothing to them. */
gboolean gl_overlay_dir_is_opaque (int dfd);

G_END_DECLS
