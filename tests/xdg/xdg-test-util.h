/* xdg-test-util.h: a fake sandbox tree for the desktop-integration tests
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "gl-export.h"

G_BEGIN_DECLS

void  tu_write (const char *root, const char *rel, const char *contents);
void  tu_write_png (const char *root, const char *rel, int size);
void  tu_symlink (const char *root, const char *rel, const char *target);
/* Makes a whiteout (char 0/0) like overlayfs; FALSE if mknod is not allowed. */
gboolean tu_whiteout (const char *root, const char *rel);

/* A sandbox "deb" named "Debian “sid”" under a new temporary directory:
 * <root>/rootfs and <root>/system/upper; see xdg-test-util.c for what is in
 * it.  Returns <root>. */
char *tu_make_tree (void);
/* Removes such a tree and frees the string: g_autoptr(TuTree) root = tu_make_tree (). */
typedef char TuTree;
void  tu_tree_free (TuTree *root);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (TuTree, tu_tree_free)
GlExportSource *tu_source (const char *root, const char *id, const char *name);

/* "relative-path mode sha256\n" for every file, link and directory under
 * @dir, sorted ("" if @dir does not exist). */
char *tu_snapshot (const char *dir);

extern const char tu_editor_entry[];

G_END_DECLS
