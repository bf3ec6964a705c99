/* gl-sandbox.h: one sandbox of the store — sandbox.conf, its layers, its locks
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* Sandbox base kinds, as written to sandbox.conf Base= */
#define GL_BASE_HOST   "host"
#define GL_BASE_ROOTFS "rootfs"

/* What the name of an old system generation's trash starts with
 * (system/.trash-XXXXXX, gl-pkg.c): glimpse-remove-trash removes nothing
 * else, glimpse remove waits for its remover */
#define GL_SANDBOX_TRASH_PREFIX ".trash-"

typedef struct {
  char *id;
  char *path;            /* <store>/<id> */
  char *profile;         /* profile name it was created from */
  char *name;            /* display name */
  char *base;            /* GL_BASE_HOST or GL_BASE_ROOTFS */
  char *family;          /* apt, dnf, pacman, apk */
  char *release;         /* the release resolved at creation (e.g. a codename), or NULL */
  char *follows;         /* the moving suite it follows (Debian "stable"), or NULL */
  char **launchers;      /* desktop ids of the base exported by default (the profile's
                          * choice; NULL or empty: every visible app).  What the
                          * sandbox's own packages install is exported besides. */
  char **added_launchers;  /* the admin's add-launcher (AddedLaunchers=) and */
  char **hidden_launchers; /* remove-launcher (HiddenLaunchers=), over the default */
  char **repositories;   /* extra repositories, in the family's own syntax */
  char **repository_uris; /* "NAME=URI" of each added repository: what glimpse
                           * itself recorded (RepositoryURIs=), the only
                           * record of them the sandbox cannot rewrite */
  GDateTime *created;
  GDateTime *updated;
} GlSandbox;

void gl_sandbox_free (GlSandbox *sandbox);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GlSandbox, gl_sandbox_free)

/* The id grammar (the launcher has its own copy; tests/test-contract.c
 * checks they agree): 1–64 characters, the first a letter or digit, the
 * rest letters, digits, '.', '_' or '-'. */
gboolean    gl_sandbox_id_is_valid (const char *id);
/* Checks the id and says why it is not valid (GL_STORE_ERROR_INVALID_ID). */
gboolean    gl_sandbox_id_validate (const char *id, GError **error);
/* A display name: 1 to 128 characters of valid UTF-8 without control
 * characters (it ends up in menus and file-manager labels). */
gboolean    gl_sandbox_name_validate (const char *name, GError **error);

/* Loads <store_dir>/<id>/sandbox.conf (GL_STORE_ERROR_NOT_FOUND, _MALFORMED). */
GlSandbox  *gl_sandbox_load (const char *store_dir, const char *id, GError **error);
/* Parses sandbox.conf text; path/id are filled in by the caller. */
GlSandbox  *gl_sandbox_load_from_data (const char *id, const char *path,
                                       const char *data, gsize length, GError **error);
char       *gl_sandbox_to_data (GlSandbox *sandbox, gsize *length);
/* Writes <path>/sandbox.conf atomically. */
gboolean    gl_sandbox_save (GlSandbox *sandbox, GError **error);

/* Directory holding the sandbox's own tree: <path>/rootfs, or NULL when the base is the host. */
char       *gl_sandbox_get_rootfs (GlSandbox *sandbox);
/* The tree the current generation lies over: after a rebase the base it
 * was moved to (<path>/system/base-G/tree, or the older system/base/tree),
 * else rootfs/; NULL for a sandbox of the host. */
char       *gl_sandbox_get_base_tree (GlSandbox *sandbox);

/* The system layer, per the generations contract:
 * <path>/system/current holds "N\n" (decimal, N >= 1) and the layer is
 * <path>/system/<N>/tree.  The current generation's number, or 0 when the
 * sandbox has no system layer (no system/current); FALSE with an error when
 * system/current cannot be read or is malformed. */
gboolean    gl_sandbox_get_system_generation (GlSandbox *sandbox, guint *generation, GError **error);
/* After a rebase, generation @n names the bare base it lies over in
 * <system>/<n>/base ("G\n": <system>/base-G); 0 when it names none. */
guint       gl_sandbox_generation_base (const char *system, guint n);
/* The record of a rebase's base, <base_dir>/release (Release=, Follows=
 * as in sandbox.conf), written into system/base-G before the rename of
 * `current` switches to it: gl_sandbox_load takes the release of the
 * base the current generation names from there, so the record is the
 * generation's and never behind it (a crash before sandbox.conf is saved). */
gboolean    gl_sandbox_write_base_record (const char *base_dir, const char *release,
                                          const char *follows, GError **error);
/* <path>/system/<N>/tree of the current generation, or NULL when there is
 * none (no system/current, or one that cannot be read: see
 * gl_sandbox_get_system_generation() for the reason). */
char       *gl_sandbox_get_system_tree (GlSandbox *sandbox);
/* <path>/system/upper: the system layer of the old layout, which package
 * operations convert into generation 1.  For readers not yet moved to
 * gl_sandbox_get_system_tree(). */
char       *gl_sandbox_get_system_upper (GlSandbox *sandbox);

/* <path>/users/<uid> */
char       *gl_sandbox_get_user_dir (GlSandbox *sandbox, uid_t uid);

/* For monitoring: the directories whose changes change what the sandbox
 * exports, whether they exist yet or not: the sandbox directory
 * (sandbox.conf), <path>/system (a new generation makes system/current
 * change), and the application directories (usr/share/applications,
 * usr/local/share/applications) of the current system tree and of rootfs/.
 * When system/current changes, ask again: the tree is another one. */
GStrv       gl_sandbox_get_watch_dirs (GlSandbox *sandbox);

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
 * (unref the array to release them), or NULL with GL_STORE_ERROR_IN_USE.
 * A view that is ending (its last app has exited) is waited for, briefly:
 * its process 1 holds the locks until its overlays are down. */
GArray     *gl_sandbox_lock_exclusive (GlSandbox *sandbox, GError **error);
/* The lock of one user's layer, exclusively, as that user (glimpse purge):
 * an fd to close, or -1 with GL_STORE_ERROR_IN_USE.  The layer directory
 * users/<uid> must exist.  A view of the user's that is ending is waited
 * for, briefly (as by gl_sandbox_lock_exclusive). */
int         gl_sandbox_lock_user (GlSandbox *sandbox, uid_t uid, GError **error);

/* With @uid's lock held (or every lock): asks the launcher
 * (glimpse-launch --held ID, setuid: only it reads root's record of a
 * user's last view) whether a view of @uid's still uses that user's layer,
 * and the system generation it was built from: one that has ended, but
 * that a process outside keeps (it holds the view's mount namespace, or a
 * file opened through /proc/PID/root), so that its overlays are still
 * mounted.  Root asks as @uid; for a uid the password database does not
 * know (the launcher cannot run as it), it looks for processes of that
 * uid instead, all the launcher would count.  FALSE with GL_STORE_ERROR_IN_USE when one
 * does (its message says what holds it, as the launcher names it), or with
 * another error when it cannot be told. */
gboolean    gl_sandbox_layer_free (GlSandbox *sandbox, uid_t uid, GError **error);
/* gl_sandbox_layer_free () for every user root has a record of a view of
 * (users/.views/<uid>: whoever launched the sandbox through the setuid
 * launcher), as root; TRUE when there are none.  With every lock held
 * (remove), or @running_ok (package operations, which old system
 * generations no view uses any more): a user whose view runs now is not
 * asked (it holds its generation's lock), the others with their lock
 * held, as purge holds it; and with @running_ok, FALSE (GL_STORE_ERROR_IN_USE)
 * while a user who has launched it without the launcher's setuid bit holds
 * their lock: such a view holds no generation's lock, so none may go. */
gboolean    gl_sandbox_layers_free (GlSandbox *sandbox, gboolean running_ok, GError **error);
/* Whether no view built by the launcher without its setuid bit may run
 * (else FALSE, GL_STORE_ERROR_IN_USE naming the uid): such a view cannot
 * open its generation's lock (root's, 0600) nor write a record in
 * users/.views/; all that says it may be up is its user's lock
 * (users/<uid>/lock) held while that user has launched without the bit
 * at some time (users/<uid>/view.lock, made only by such launches, before
 * they take the user's lock).  The launcher, without the bit, reads
 * `current` again once it holds that lock, so its view is never built on
 * a generation an operation switched away from before it looked here. */
gboolean    gl_sandbox_no_unprivileged_view (GlSandbox *sandbox, GError **error);

/* Disk usage of the sandbox's directory in bytes (not following links, one
 * file system). */
guint64     gl_sandbox_get_size (GlSandbox *sandbox);

/* What gl_sandbox_remove says while it waits (a line, no newline). */
typedef void (*GlSandboxSay) (const char *line, gpointer user_data);

/* Removes the sandbox: refuses while in use (an app runs, or an ended view
 * is still held: gl_sandbox_layers_free ()) unless @force.  It waits a
 * bounded time (60 s) for the removal of what package operations replaced
 * (saying so through @say, if given), and fails naming it after that.  It leaves the
 * store first (renamed to a hidden .removing-XXXXXX, locked while it is
 * deleted), so a removal cut short leaves nothing that looks usable, and
 * the next store operation finishes it. */
gboolean    gl_sandbox_remove (GlSandbox *sandbox, gboolean force,
                               GlSandboxSay say, gpointer user_data,
                               GCancellable *cancellable, GError **error);

G_END_DECLS
