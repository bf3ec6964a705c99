/* gl-changes.h: what a user's layer of a sandbox holds, and purging it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef enum {
  GL_CHANGE_ADDED,     /* in the layer, not on the host */
  GL_CHANGE_MODIFIED,  /* in the layer, and on the host (copied up, then changed) */
  GL_CHANGE_DELETED,   /* a whiteout: hidden from the view */
  GL_CHANGE_REPLACED,  /* an opaque directory: its host content is hidden */
} GlChangeKind;

typedef struct {
  GlChangeKind kind;
  char *layer;         /* home, tmp, … */
  char *path;          /* the path as seen inside the sandbox (= host path) */
  gboolean is_dir;
} GlChange;

void gl_change_free (GlChange *change);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GlChange, gl_change_free)

const char *gl_change_kind_to_string (GlChangeKind kind);

/* The overlaid directories: layer name and host directory, for a user with
 * home directory @home and uid @uid.  NULL-terminated pairs. */
GStrv gl_changes_layers (const char *home, uid_t uid);

/* The changes in @user_dir (<sandbox>/users/<uid>) under @filter (a path
 * inside, or NULL for all), sorted by path.  @host_root is "/" except in tests. */
GPtrArray *gl_changes_list (const char *user_dir, const char *home, uid_t uid,
                            const char *host_root, const char *filter, GError **error);

/* Drops the changes under @filter (NULL: all, and the mount points the
 * launcher made in users/<uid>/mountpoints) from @user_dir. */
gboolean gl_changes_purge (const char *user_dir, const char *home, uid_t uid,
                           const char *filter, GCancellable *cancellable, GError **error);

G_END_DECLS
