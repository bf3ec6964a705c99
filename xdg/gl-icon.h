/* gl-icon.h: finding an application's icon inside a sandbox tree
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct {
  char *root;      /* the root it was found in */
  char *path;      /* the file on the host, inside @root (read it with gl_tree_read) */
  char *size_dir;  /* hicolor directory it goes to ("48x48", "scalable"), or NULL: unthemed */
  char *ext;       /* "png", "svg" or "xpm" */
} GlIconFile;

void gl_icon_file_free (GlIconFile *file);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GlIconFile, gl_icon_file_free)

/* The files of the icon @icon (a themed name, a name with an extension, or an
 * absolute path) as the sandbox has it, in the view over @roots (its
 * layers, top first, merged as overlayfs merges them: gl-view.h; links
 * followed inside the view, never by host path): the hicolor theme, then
 * other themes, then share/icons and share/pixmaps.  For a themed icon every size of the first
 * theme that has it is returned (the host picks the best); for other icons
 * the single file.  Returns an empty array when nothing is found. */
GPtrArray *gl_icon_resolve (const char * const *roots, const char *icon);

/* The same lookup through an index of the themes built once for @roots:
 * for exporting many applications of one sandbox. */
typedef struct _GlIconIndex GlIconIndex;

GlIconIndex *gl_icon_index_new (const char * const *roots);
void         gl_icon_index_free (GlIconIndex *index);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GlIconIndex, gl_icon_index_free)
GPtrArray   *gl_icon_index_resolve (GlIconIndex *index, const char *icon);

/* The size a PNG file declares (its IHDR width), or 0. */
int gl_icon_png_size (const char *path);

G_END_DECLS
