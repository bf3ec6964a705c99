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

/* Runs @argv (searched in PATH) with the isolated XDG directories in its
 * environment, plus @extra_env ("NAME=value", NULL-terminated, may be NULL);
 * its stdout into @out (if non-NULL), its exit status into @status. */
void tu_run_env (const char * const *argv, const char * const *extra_env, char **out, int *status);
void tu_run (const char * const *argv, char **out, int *status);

/* The records of the argv recorder (tests/xdg/argv-recorder.c): one GStrv
 * per run. */
GPtrArray *tu_read_records (const char *path);
/* Waits until @path holds at least one record (20 s at most). */
GPtrArray *tu_wait_records (const char *path);
/* Launches @desktop_file with @uris through GIO and waits for its runs. */
void tu_launch_and_wait (const char *desktop_file, GList *uris);
gboolean tu_timed_out (gpointer user_data);

G_END_DECLS
