/* gl-fsutil.h: file-system helpers
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>
#include <sys/stat.h>

#include "gl-mkdir.h"   /* gl_mkdir_with_parents (in xdg/, for both) */
#include "gl-overlay.h" /* whiteouts and opaque directories (in xdg/, for both) */
#include "gl-view.h"    /* the view over layers (in xdg/, for both) */

G_BEGIN_DECLS

/* Removes @path and everything below it without following symbolic links
 * and without crossing into other mounts (a mount point inside is an
 * error, so a stray bind mount never takes host files with it). A missing
 * @path is not an error.  One directory is open at a time, whatever the
 * depth of the tree. */
gboolean gl_rm_rf (const char *path, GCancellable *cancellable, GError **error);
/* gl_rm_rf, adding to @freed the space it freed as it went: the blocks of
 * what it removed, but of a file only when no other path still linked to
 * it (the same as gl_reclaim_size before, without a walk of its own). */
gboolean gl_rm_rf_freed (const char *path, guint64 *freed, GCancellable *cancellable,
                         GError **error);

/* mkdir with a mode, failing if it exists */
gboolean gl_mkdir (const char *path, int mode, GError **error);

/* Files of a tree being built (untrusted, not running), as root: @rel
 * (relative, "etc/os-release") reached without following any link (a link
 * on the way is an error) and never outside @root. */
/* Opens @rel for reading (O_RDONLY, O_CLOEXEC): a regular file only, never
 * a FIFO or device; -1 with @error otherwise. */
int gl_tree_open_file (const char *root, const char *rel, GError **error);
/* Opens the directory @rel for reading (fdopendir). */
int gl_tree_open_dir (const char *root, const char *rel, GError **error);
/* Reads @rel, a regular file of at most 1 MiB (never a FIFO or device). */
gboolean gl_tree_read_file (const char *root, const char *rel, char **contents, gsize *length,
                            GError **error);
/* The same, of at most @max bytes. */
gboolean gl_tree_read_file_max (const char *root, const char *rel, gsize max, char **contents,
                                gsize *length, GError **error);
/* Replaces @rel by a new file (whatever was there is removed, not followed). */
gboolean gl_tree_write_file (const char *root, const char *rel, const char *contents, gssize length,
                             int mode, GError **error);

/* "12.3 MiB" */
char *gl_format_size (guint64 bytes);

/* The first line (from 1) of a key file that GKeyFile cannot parse as a
 * blank line, comment, group header or key=value; 0 if there is none
 * (GKeyFile's own errors name no line). */
guint gl_keyfile_bad_line (const char *data, gsize length);

/* How many times KEY= (without a locale) is given in GROUP (which may
 * appear more than once) of a key file: GKeyFile keeps only the last. */
guint gl_keyfile_count_key (const char *data, gsize length, const char *group, const char *key);

G_END_DECLS
