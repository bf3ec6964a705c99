/* gl-tree.h: reading files of a sandbox tree, which are hostile
 *
 * A sandbox's desktop entries and icons come from packages of a development
 * release or a third-party repository.  They are read only inside the
 * sandbox's own tree: symbolic links resolved within it, never through
 * /proc or the user's home, only regular files, never blocking, never more
 * than a size cap.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define GL_TREE_MAX_ENTRY   (64 * 1024)     /* a desktop entry */
#define GL_TREE_MAX_RASTER  (1024 * 1024)   /* a PNG or XPM icon */
#define GL_TREE_MAX_SVG     (256 * 1024)    /* an SVG icon */

/* Resolves @path (absolute or relative) inside @root the way the sandbox
 * would see it: symbolic links are followed relative to @root, never out of
 * it (at most 40 links, and a bounded walk: 64 Ki components walked from
 * the root, one lookup costing its depth).  Returns the host path of the
 * final file, or NULL if it does not exist or costs more. */
char *gl_tree_resolve (const char *root, const char *path);

/* Reads the regular file @path inside @root: resolved as
 * gl_tree_resolve() does, it must lie under one of @under (relative
 * prefixes such as "usr/"; NULL: anywhere in @root), be a regular file
 * readable by everyone and at most @max bytes.  It is opened with openat2
 * (RESOLVE_IN_ROOT, RESOLVE_NO_MAGICLINKS, RESOLVE_NO_SYMLINKS on the
 * resolved path) and O_NONBLOCK|O_NOFOLLOW, so a FIFO, a device, a link
 * swapped in or a file of /proc is refused, never followed, never waited
 * on.  @mode gets the file's permission bits.  The error says what was
 * refused and why. */
GBytes *gl_tree_read (const char *root, const char *path, const char * const *under,
                      gsize max, guint *mode, GError **error);

/* The same, with the fstat of the file read in @st. */
struct stat;
GBytes *gl_tree_read_stat (const char *root, const char *path, const char * const *under,
                           gsize max, struct stat *st, GError **error);

/* The places of a tree exports read from: usr/ and opt/. */
extern const char * const gl_tree_data_prefixes[];

G_END_DECLS
