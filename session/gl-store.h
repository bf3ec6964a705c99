/* gl-store.h: the sandbox store, a directory of sandboxes
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

#include "gl-sandbox.h"

G_BEGIN_DECLS

#define GL_STORE_ERROR (gl_store_error_quark ())

typedef enum {
  GL_STORE_ERROR_INVALID_ID,    /* an id that does not match the grammar */
  GL_STORE_ERROR_NOT_FOUND,     /* no sandbox with that id */
  GL_STORE_ERROR_EXISTS,        /* a sandbox with that id exists already */
  GL_STORE_ERROR_MALFORMED,     /* sandbox.conf cannot be parsed */
  GL_STORE_ERROR_IN_USE,        /* an app of the sandbox runs */
  GL_STORE_ERROR_PERMISSION,    /* needs root */
} GlStoreError;

GQuark gl_store_error_quark (void);

#define GL_TYPE_STORE (gl_store_get_type ())
G_DECLARE_FINAL_TYPE (GlStore, gl_store, GL, STORE, GObject)

/* A store in @dir (which need not exist yet: an empty store). */
GlStore    *gl_store_new (const char *dir);
/* The store at gl_paths_store_dir (). */
GlStore    *gl_store_new_default (void);

/* The store's directory.  For monitoring: a sandbox appears or goes as an
 * entry of this directory named by a valid id (gl_sandbox_id_is_valid());
 * entries starting with '.' (sandboxes being created or removed) are
 * never sandboxes.  Per sandbox, watch
 * gl_sandbox_get_watch_dirs(). */
const char *gl_store_get_dir (GlStore *self);

/* Every sandbox, sorted by id.  Broken ones are skipped with a g_debug,
 * and their errors appended to @errors if non-NULL (GError*s).  A missing
 * store directory is an empty store.  Run as root, it first removes what
 * interrupted creations and removals left (gl_store_clean_abandoned()). */
GPtrArray  *gl_store_list (GlStore *self, GPtrArray *errors, GError **error);

/* The sandbox @id (GL_STORE_ERROR_INVALID_ID, _NOT_FOUND, _MALFORMED). */
GlSandbox  *gl_store_load (GlStore *self, const char *id, GError **error);

/* The first free id of base, base-2, base-3, … */
char       *gl_store_allocate_id (GlStore *self, const char *base, GError **error);

/* Creates the store directory (root:root 0755 when run as root) if missing. */
gboolean    gl_store_ensure (GlStore *self, GError **error);

/* A new hidden directory <store>/.<prefix>-XXXXXX (mode 0700) for work in
 * progress (prefix "creating", "removing"), with an exclusive flock on it
 * held through the returned fd (-1 on error).  While the fd is open the
 * directory is in use; once its holder is gone (even by kill -9) the next
 * gl_store_clean_abandoned() removes it.  @path receives its path. */
int         gl_store_make_work_dir (GlStore *self, const char *prefix, char **path, GError **error);
/* Takes an exclusive flock on the existing directory @path (the same
 * protocol, for a directory about to be renamed into work); -1 with an
 * error if someone else holds it or it cannot be opened. */
int         gl_store_lock_work_dir (GlStore *self, const char *path, GError **error);

/* Removes the hidden .creating-XXXXXX and .removing-XXXXXX directories whose holders are
 * gone.  Returns how many it removed; failures are only g_debug'ed (a user
 * who cannot remove them leaves them to root). */
guint       gl_store_clean_abandoned (GlStore *self, GCancellable *cancellable);

G_END_DECLS
