/* gl-view.h: the view an overlay mount would show over layers
 *
 * Here, in the leaf library, so that xdg/ (a sandbox's icons) and session/
 * (which links it: the update check, the store) share one resolver.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>
#include <sys/stat.h>

G_BEGIN_DECLS

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
  /* With GL_VIEW_FOLLOW_LINKS, for root reading a file the sandbox may
   * have made a link (etc/os-release -> ../usr/lib/os-release): a file
   * reached through a link is taken only in the view's /usr, never in
   * /etc, /root, /home, /proc… of a base that is the host's own tree
   * (GL_VIEW_UNKNOWN there). */
  GL_VIEW_LINKS_INTO_USR = 1 << 1,
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

/* The entries of the directory @rel of the view (NULL as
 * gl_view_dir_names returns NULL; none when there is no directory): each
 * with the index in @layers of the layer that gives it and its kind
 * there (a dirent DT_* value, DT_UNKNOWN when it could not be told), and
 * in *@dir_rel (when not NULL) the directory's path in the layers
 * (relative, without links or ".."), so that an entry of kind DT_REG is
 * <layer>/<dir_rel>/<name>. */
typedef struct {
  char *name;
  gsize layer;
  unsigned char type;
} GlViewEntry;
void gl_view_entry_free (GlViewEntry *entry);
GPtrArray *gl_view_dir_entries (const char * const *layers, gsize n_layers, const char *rel,
                                GlViewFlags flags, char **dir_rel);

/* Where the file @rel of the view is, links followed as
 * GL_VIEW_FOLLOW_LINKS follows them: the index in @layers of the layer
 * that gives it (*@layer) and its path there (*@layer_rel, relative,
 * without links or ".."), for a reader that opens it from that layer
 * again.  GL_VIEW_FILE for a regular file; GL_VIEW_ABSENT or
 * GL_VIEW_UNKNOWN (anything else) as above. */
GlViewFile gl_view_locate_file (const char * const *layers, gsize n_layers, const char *rel,
                                gsize *layer, char **layer_rel);

/* The file @pathfd (an O_PATH descriptor, which it takes) opened for
 * reading when it is a regular file of at most @max bytes, else -1 with
 * errno set (EINVAL: not a regular file; EFBIG: larger), never opening a
 * FIFO or device (see gl-view.c) */
int gl_reopen_regular (int pathfd, gsize max);

/* Reads the open file @fd (which it closes), of at most @max bytes even
 * if it grows while it is read; FALSE with errno (EFBIG when larger). */
gboolean gl_read_fd_max (int fd, gsize max, char **contents, gsize *length);

G_END_DECLS
