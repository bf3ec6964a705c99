/* gl-fsutil.h: file-system helpers
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>
#include <sys/stat.h>

#include "gl-mkdir.h"   /* gl_mkdir_with_parents (in xdg/, for both) */
#include "gl-overlay.h" /* whiteouts and opaque directories (in xdg/, for both) */

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

/* The view an overlay mount would show over the layers @layers (top
 * first, NULL ones skipped), read from the layers as trees (above) without
 * mounting it: a whiteout hides the name below it; an opaque directory
 * (user.overlay.opaque, as glimpse's overlays are mounted) or a whiteout or
 * other non-directory on the way hides the layers below it.  The path is
 * walked a component at a time from descriptors, never through a host
 * path; what is read is the descriptor opened at the end of the walk. */
typedef enum {
  GL_VIEW_FILE,     /* a regular file, read */
  GL_VIEW_ABSENT,   /* nothing there */
  GL_VIEW_UNKNOWN,  /* anything else: a link or ".." on the way (not
                     * followed), too many links (followed) or too long a
                     * walk through them, not a regular
                     * file, larger than asked, unreadable */
} GlViewFile;

typedef enum {
  GL_VIEW_NO_FLAGS = 0,
  /* Follow symbolic links as a program inside the view would (apt reading
   * its own keyrings), but inside the view: a target is looked up afresh
   * from the view's root (an absolute one, never the host's) or from the
   * link's directory; ".." stops at the view's root; at most 40 links,
   * a path (links substituted) shorter than PATH_MAX and 4096 components
   * looked up (each ".." counted).
   * For readers that run as the user; without it, a link is
   * GL_VIEW_UNKNOWN (root reading an untrusted tree). */
  GL_VIEW_FOLLOW_LINKS = 1 << 0,
} GlViewFlags;

/* Reads @rel of the view, of at most @max bytes, into @contents (and
 * @length) when it is GL_VIEW_FILE. */
GlViewFile gl_view_read_file (const char * const *layers, gsize n_layers, const char *rel, gsize max,
                              char **contents, gsize *length);
/* As gl_view_read_file, the file opened for reading (*@fd) instead: a
 * regular file of at most @max bytes when opened (it may grow after);
 * never a FIFO or a device, not even for a moment. */
GlViewFile gl_view_open_file (const char * const *layers, gsize n_layers, const char *rel, gsize max,
                              int *fd);
/* The names (a set) in the directory @rel of the view; an empty set when
 * there is none, NULL when what is there is GL_VIEW_UNKNOWN as above. */
GHashTable *gl_view_dir_names (const char * const *layers, gsize n_layers, const char *rel);

/* The same, with @flags */
GlViewFile gl_view_read_file_full (const char * const *layers, gsize n_layers, const char *rel,
                                   GlViewFlags flags, gsize max, char **contents, gsize *length);
GlViewFile gl_view_open_file_full (const char * const *layers, gsize n_layers, const char *rel,
                                   GlViewFlags flags, gsize max, int *fd);
GHashTable *gl_view_dir_names_full (const char * const *layers, gsize n_layers, const char *rel,
                                    GlViewFlags flags);

/* What the layer @root (a tree, as above) has at the directory @rel of
 * the view, walked a component at a time without following links (one
 * layer at a time, for callers that merge layers themselves): */
typedef enum {
  GL_LAYER_DIR,      /* the directory, opened (O_RDONLY|O_DIRECTORY) in *@fd;
                      * *@opaque when it or a directory above it is opaque,
                      * so that the layers below do not show there */
  GL_LAYER_NONE,     /* nothing: the layers below show */
  GL_LAYER_HIDES,    /* a whiteout or another non-directory on the way, or
                      * nothing under an opaque directory: nothing below shows */
  GL_LAYER_UNKNOWN,  /* a link on the way (not followed), "..", or unreadable */
} GlLayerDir;
GlLayerDir gl_layer_open_dir (const char *root, const char *rel, int *fd, gboolean *opaque);

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
