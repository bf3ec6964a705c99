/* gl-store.h: the sandbox store under GL_SANDBOX_DIR
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

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

/* Sandbox base kinds, as written to sandbox.conf Base= */
#define GL_BASE_HOST   "host"
#define GL_BASE_ROOTFS "rootfs"

typedef struct {
  char *id;
  char *path;            /* <store>/<id> */
  char *profile;         /* profile name it was created from */
  char *name;            /* display name */
  char *base;            /* GL_BASE_HOST or GL_BASE_ROOTFS */
  char *family;          /* apt, dnf, pacman, apk */
  char **launchers;      /* desktop ids exported by default (admin's choice) */
  char **repositories;   /* extra repositories, in the family's own syntax */
  GDateTime *created;
  GDateTime *updated;
} GlSandbox;

void gl_sandbox_free (GlSandbox *sandbox);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GlSandbox, gl_sandbox_free)

/* The store directory: $GLIMPSE_SANDBOX_DIR if set (tests), else GL_SANDBOX_DIR. */
const char *gl_store_default_dir (void);

gboolean    gl_id_is_valid (const char *id);
/* Checks the id and says why it is not valid. */
gboolean    gl_id_validate (const char *id, GError **error);
/* The first free id of base, base-2, base-3, … in store_dir. */
char       *gl_store_allocate_id (const char *store_dir, const char *base, GError **error);

GlSandbox  *gl_sandbox_load (const char *store_dir, const char *id, GError **error);
/* Parses sandbox.conf text; path/id are filled in by the caller. */
GlSandbox  *gl_sandbox_load_from_data (const char *id, const char *path,
                                       const char *data, gsize length, GError **error);
char       *gl_sandbox_to_data (GlSandbox *sandbox, gsize *length);
/* Writes <path>/sandbox.conf atomically. */
gboolean    gl_sandbox_save (GlSandbox *sandbox, GError **error);

/* Directory holding the sandbox's own tree: <path>/rootfs, or NULL when the base is the host. */
char       *gl_sandbox_get_rootfs (GlSandbox *sandbox);
/* <path>/system/upper, the system layer */
char       *gl_sandbox_get_system_upper (GlSandbox *sandbox);
/* <path>/users/<uid> */
char       *gl_sandbox_get_user_dir (GlSandbox *sandbox, uid_t uid);

/* Every sandbox in the store, sorted by id.  Broken ones are skipped with a
 * g_debug, and their errors appended to @errors if non-NULL (GError*s). */
GPtrArray  *gl_store_list (const char *store_dir, GPtrArray *errors, GError **error);

/* The locks.  While an app runs, the launcher holds a shared lock on
 * <path>/lock (root's, 0600; only the setuid launcher takes it) and on the
 * user's own <path>/users/<uid>/lock.
 *
 * TRUE if some app of the sandbox runs, as far as the caller can see: root
 * sees every user's apps, a user their own (and, if they can open it, the
 * sandbox's lock). */
gboolean    gl_sandbox_is_in_use (GlSandbox *sandbox);
/* The administrator's lock for changing or removing the whole sandbox:
 * <path>/lock and every user's lock, exclusively.  Returns the descriptors
 * (unref the array to release them), or NULL with GL_STORE_ERROR_IN_USE. */
GArray     *gl_sandbox_lock_exclusive (GlSandbox *sandbox, GError **error);
/* The lock of one user's layer, exclusively, as that user (glimpse purge):
 * an fd to close, or -1 with GL_STORE_ERROR_IN_USE.  The layer directory
 * users/<uid> must exist. */
int         gl_sandbox_lock_user (GlSandbox *sandbox, uid_t uid, GError **error);

/* Disk usage of the sandbox's directory in bytes (not following links, one
 * file system). */
guint64     gl_sandbox_get_size (GlSandbox *sandbox);

G_END_DECLS
