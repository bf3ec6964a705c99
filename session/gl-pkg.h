/* gl-pkg.h: package operations on a sandbox's system layer
 *
 * Every operation runs the sandbox's package manager through
 * glimpse-pkgns (root of a user namespace mapped to the `glimpse` user's
 * subordinate range, never the host's root) over the base and the current
 * system generation, and on success seals the next generation:
 *
 *   <sandbox>/system/current       "N\n", replaced atomically
 *   <sandbox>/system/<N>/tree      the flattened system layer over the base
 *   <sandbox>/system/<N>/lock      views hold a shared flock on it
 *   <sandbox>/system/op.lock       package operations on one sandbox, one at a time
 *   <sandbox>/system/<N>/base      "G\n": after a rebase, generation N lies over
 *                                  system/base-G (so the rename of `current`
 *                                  switches generation and base at once)
 *   <sandbox>/system/base-G/tree   the bare base the rebase to generation G built
 *                                  (hard links), which reset returns to
 *   <sandbox>/system/base-G/release  its Release=/Follows=, which win over
 *                                  sandbox.conf's (gl_sandbox_write_base_record)
 *   <sandbox>/system/base/tree     the same before generations named their base
 *                                  (read for generations without N/base)
 *   <sandbox>/system/rebased       "N\n": the first generation of the last rebase;
 *   <sandbox>/system/reclaimed     "N\n": rootfs/ emptied since (gl-reclaim.h)
 *   <sandbox>/system/.op-XXXXXX    one operation's scratch (upper, work, …);
 *                                  left by a killed operation, removed by the next
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

#include "gl-store.h"

G_BEGIN_DECLS

#define GL_PKG_ERROR (gl_pkg_error_quark ())

typedef enum {
  GL_PKG_ERROR_FAILED,        /* the package manager failed; the sandbox is unchanged */
  GL_PKG_ERROR_SETUP,         /* the namespace could not be built */
  GL_PKG_ERROR_UNSUPPORTED,   /* not for this sandbox or family */
  GL_PKG_ERROR_INVALID,       /* bad input (repository spec, key, name) */
  GL_PKG_ERROR_LIMIT,         /* stopped at a limit (gl-pkg-limits.h); the sandbox is unchanged */
} GlPkgError;

GQuark gl_pkg_error_quark (void);

/* Lines of progress (the package manager's output, and glimpse's own
 * notes such as "waiting for …"), without the newline. */
typedef void (*GlPkgProgress) (const char *line, gpointer user_data);

/* The `glimpse` user's subordinate range (65536 ids) from /etc/subuid and
 * /etc/subgid under @etc_dir ("/etc"); the user and its range are created
 * when missing, without overlapping existing entries. */
gboolean gl_pkg_ensure_range (const char *etc_dir, guint32 *uid, guint32 *gid, GError **error);
/* The first free start of @count ids (>= 100000) given subuid-format text:
 * overlapping no entry of either, and holding no id of an account or group
 * the system knows (getpwuid, getgrgid: local, LDAP, …), whose files the
 * range's root would otherwise own. */
guint32  gl_pkg_free_range_start (const char *subuid, const char *subgid, guint32 count);
/* Whether @id is a user or group id that getpwuid or getgrgid knows */
typedef gboolean (*GlPkgIdKnown) (guint32 id, gpointer data);
gboolean gl_pkg_id_is_account (guint32 id, gpointer data);
/* Whether every source of passwd and group in @nsswitch (nsswitch.conf's
 * text; NULL: none, glibc's default) lists all the ids it answers for:
 * files, compat, systemd.  LDAP, SSSD, NIS, winbind need not. */
gboolean gl_pkg_nss_lists_all (const char *nsswitch);
/* The ids of the accounts and groups the system lists (getpwent,
 * getgrent), read at once; gl_pkg_accounts_known (a GlPkgIdKnown) looks an
 * id up there, and with getpwuid/getgrgid too when @nsswitch_path names a
 * source that need not list its accounts. */
typedef struct _GlPkgAccounts GlPkgAccounts;
GlPkgAccounts *gl_pkg_accounts_new (const char *nsswitch_path);
gboolean gl_pkg_accounts_known (guint32 id, gpointer data);
void     gl_pkg_accounts_free (GlPkgAccounts *accounts);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GlPkgAccounts, gl_pkg_accounts_free)
/* The same, with @known (NULL: none) telling which ids are taken. */
guint32  gl_pkg_free_range_start_full (const char *subuid, const char *subgid, guint32 count,
                                       GlPkgIdKnown known, gpointer data);

/* The generation `current` names, or 0 (no system layer). */
guint    gl_pkg_current_generation (const char *sandbox_path);
/* <sandbox>/system/<current>/tree, or NULL. */
char    *gl_pkg_current_tree (GlSandbox *sandbox);

/* Defangs the whole tree at @path as a merge does what it moves in: no
 * set-id bits, no file capabilities, nothing writable by group or others,
 * no device nodes (whiteouts stay).
 * A base tree lies in the store, reachable by every host user: a setuid
 * binary of an image must not run as root outside a view. */
gboolean gl_pkg_tree_defang (const char *path, GError **error);

/* Flattening: @dst (a new directory) becomes a hard-link copy of @src. */
gboolean gl_pkg_tree_link_copy (const char *src, const char *dst, GCancellable *cancellable,
                                GError **error);
/* Merges an overlay upper directory into @dst: whiteouts and opaque
 * directories applied (and kept where they hide a file of @base, the
 * base tree), everything else moved in and defanged (no set-id bits, file
 * capabilities or group/other write bits); the data of the first files
 * moved in is fsync()ed.  @n_files: how many regular files were moved. */
gboolean gl_pkg_tree_merge_upper (const char *upper, const char *dst, const char *base,
                                  guint *n_files, GCancellable *cancellable, GError **error);

/* Whether the overlay upper directory @upper changes what the trees
 * @lowers (top first, NULL-terminated; ids below the range taken as
 * shifted into the range at @uid, @gid) show: a new, removed or different
 * entry (type, mode, owner, extended attributes, a file's bytes, a link's
 * target), an opaque directory.  A directory's times are no change, nor a
 * whiteout over nothing, nor a file copied up and left as it was.
 * Anything that cannot be compared is a change. */
gboolean gl_pkg_upper_changes (const char *upper, const char * const *lowers, guint32 uid, guint32 gid);

typedef struct _GlPkgOp GlPkgOp;

/* Takes the sandbox's operation lock (saying so through @progress when it
 * has to wait), converts the old system/{upper,work} layout, removes what
 * killed operations left, and prepares a scratch directory. */
GlPkgOp *gl_pkg_op_begin (GlSandbox *sandbox, GlPkgProgress progress, gpointer user_data,
                          GError **error);
/* A directory shown read-only at /run/glimpse-input inside; files put there
 * before gl_pkg_op_run are the operation's input. */
const char *gl_pkg_op_get_input_dir (GlPkgOp *op);
/* Where the operation's lines go from now on. */
void        gl_pkg_op_set_progress (GlPkgOp *op, GlPkgProgress progress, gpointer user_data);
/* The scratch directory (on the sandbox's file system). */
const char *gl_pkg_op_get_dir (GlPkgOp *op);
/* A rebase: the operation runs over @base (a new, root-owned base tree
 * inside the scratch) alone, without the old base and generations; the
 * commit makes a generation of the whole new base (ids shifted into the
 * range, whiteouts over what of rootfs/ it lacks) with the operation's
 * result merged in, and keeps a copy of the bare new base as system/base-N
 * for reset.  rootfs/ itself never changes under a running view.
 * @release, @follows: the new base's Release=, Follows= (NULL: none),
 * recorded with it (gl_sandbox_write_base_record) before the switch. */
void        gl_pkg_op_set_new_base (GlPkgOp *op, const char *base, const char *release,
                                    const char *follows);
/* The bare base the current generation lies over after a rebase
 * (system/base-G/tree, or system/base/tree of the older layout), or NULL. */
char       *gl_pkg_saved_base_tree (GlSandbox *sandbox);
/* The tree the sandbox's packages lie over: gl_pkg_saved_base_tree()
 * after a rebase, else rootfs/ (NULL for a sandbox of the host). */
char       *gl_pkg_base_tree (GlSandbox *sandbox);
/* Which network the operation's command has (see glimpse-pkgns.c).  It
 * never has the host's: every stage runs in a network namespace of its
 * own, and downloads go through glimpse's proxy (gl-pkg-proxy.h) to the
 * sandbox's repositories only.
 * NONE: no way out at all (the default; uninstall, remove-repo);
 * PROXY: downloads through the proxy (add-repo's index check);
 * FETCH_FIRST: the command runs twice, GLIMPSE_STAGE=fetch with the proxy
 * (downloads only), then GLIMPSE_STAGE=apply without it (dpkg and
 * maintainer scripts);
 * UNTIL_CUT (apt): the command runs once with the proxy, and the network
 * is cut before dpkg first runs: glimpse's apt configuration
 * (GL_PKG_APT_LAST_CONF, read last) adds a DPkg::Pre-Invoke hook that asks glimpse-pkgns
 * for the cut and waits for it (--net-until-cut). */
typedef enum {
  GL_PKG_NETWORK_NONE,
  GL_PKG_NETWORK_PROXY,
  GL_PKG_NETWORK_FETCH_FIRST,
  GL_PKG_NETWORK_UNTIL_CUT,
} GlPkgNetwork;
void gl_pkg_op_set_network (GlPkgOp *op, GlPkgNetwork network);
/* An origin the operation may download from besides the sandbox's own
 * repositories (add-repo: the one being added). */
void gl_pkg_op_allow_uri (GlPkgOp *op, const char *uri);
/* The addresses of the repositories an operation on @sandbox may download
 * from, as glimpse knows them, never as the sandbox's system layer says:
 * the sources of its base (@base: the host's /, rootfs/, a rebase's new
 * base) as of its creation, the repositories added with add-repo
 * (sandbox.conf's RepositoryURIs=), and the [Packages] Mirrors= of
 * /etc/glimpse/glimpse.conf.  @unknown: names of added repositories
 * without a recorded address (added by an older glimpse). */
GStrv gl_pkg_repository_uris (GlSandbox *sandbox, const char *base, GStrv *unknown);
/* Runs /bin/sh -c @script with @args as $1… inside the namespace; its
 * output goes to the progress callback.  @what names the operation in
 * errors ("installing foo"). */
gboolean gl_pkg_op_run (GlPkgOp *op, const char *what, const char *script,
                        const char * const *args, GCancellable *cancellable, GError **error);
/* Runs /bin/sh -c @script (@args as $1…) inside @tree, a tree being built
 * that is in no view yet (a new sandbox's rootfs, a rebase's new base), the
 * way package operations run (glimpse-pkgns --tree): as root of a user
 * namespace mapped to the `glimpse` range, with @tree itself as its
 * writable / (idmapped: what it writes is owned by the tree's own ids), a
 * PID namespace, seccomp, no network.  Nothing of @tree ever runs as the
 * host's root.  The files @inputs (host paths) are shown read-only as
 * /run/glimpse-input/0, 1, …  @what names the command in errors. */
gboolean gl_pkg_run_in_tree (const char *tree, const char *what, const char *script,
                             const char * const *args, const char * const *inputs,
                             GlPkgProgress progress, gpointer user_data,
                             GCancellable *cancellable, GError **error);
/* Seals the result as the next generation and switches `current` to it;
 * old generations no view uses are deleted. */
gboolean gl_pkg_op_commit (GlPkgOp *op, GCancellable *cancellable, GError **error);
/* Deletes the generations but the current one that no view holds, and
 * after a rebase the old base once nothing uses it (gl-reclaim.h), saying
 * what was given back and what is kept; gl_pkg_op_begin and
 * gl_pkg_op_commit call it. */
void     gl_pkg_op_reclaim (GlPkgOp *op);
/* Discards whatever was not committed and releases the lock. */
void     gl_pkg_op_free (GlPkgOp *op);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GlPkgOp, gl_pkg_op_free)

/* The operations.  Each leaves the sandbox as it was on any failure. */
gboolean gl_pkg_install (GlSandbox *sandbox, const char * const *packages,
                         GlPkgProgress progress, gpointer user_data,
                         GCancellable *cancellable, GError **error);
gboolean gl_pkg_uninstall (GlSandbox *sandbox, const char * const *packages,
                           GlPkgProgress progress, gpointer user_data,
                           GCancellable *cancellable, GError **error);
/* Refreshes the indexes and upgrades everything; records Updated=. */
gboolean gl_pkg_update (GlSandbox *sandbox, GlPkgProgress progress, gpointer user_data,
                        GCancellable *cancellable, GError **error);
/* Drops every package change: back to the base (after a rebase, the
 * base it moved to, as a new generation).  *@dropped (may be NULL): FALSE
 * when there was nothing to drop (no system generation over the base it
 * was created from, no added repository). */
gboolean gl_pkg_reset (GlSandbox *sandbox, GlPkgProgress progress, gpointer user_data,
                       gboolean *dropped, GError **error);

/* The script of an install (@install TRUE, the packages in "$@") or
 * upgrade of @family, run with the network gl_pkg_staged_network gives:
 * dnf, pacman, apk in two stages: downloads only when $GLIMPSE_STAGE is
 * "fetch" (with the network), else applies what was downloaded, offline;
 * apt in one run, the network cut before dpkg runs.  @cmd: the profile's
 * Install= or Upgrade=; @refresh: its Refresh=, run by an upgrade, and
 * first by an apt install (NULL: not), which gl_pkg_install gives it when
 * a source has no index yet (gl_pkg_apt_index_missing): a new sandbox
 * installs without `glimpse update` first, an up-to-date one downloads no
 * index. */
char    *gl_pkg_staged_script (const char *family, const char *refresh, const char *cmd,
                               gboolean install);
/* The network of gl_pkg_staged_script's script: UNTIL_CUT for apt,
 * FETCH_FIRST for the others */
GlPkgNetwork gl_pkg_staged_network (const char *family);
/* glimpse's DPkg::Pre-Invoke entry of an apt operation with the network
 * until the cut (GL_PKG_NETWORK_UNTIL_CUT; glimpse-pkgns --net-until-cut):
 * it asks PID 1 of the operation to cut the network and fails unless it
 * answers that it did. */
#define GL_PKG_CUT_HOOK \
  "printf o > /run/glimpse-net/request && read -r glimpse_net < /run/glimpse-net/answer " \
  "&& test x$glimpse_net = xoffline"
/* What to run after the script's apply stage (apk: its cache goes), or "" */
const char *gl_pkg_staged_cleanup (const char *family);

/* Package names as the package managers take them: no options, no shell. */
gboolean gl_pkg_name_validate (const char *name, GError **error);

/* The family's apt.conf for operations (apt family only): $APT_CONFIG,
 * read before the sandbox's own configuration */
extern const char gl_pkg_apt_conf[];
/* What glimpse sets for one operation (its proxy, the cut's
 * DPkg::Pre-Invoke hook, apt's caches): given to every run of apt with -c,
 * which apt reads after every configuration file, so nothing in the
 * sandbox's (Dir::Etc::main "/dev/null", Dir::Etc::parts, #clear) keeps
 * it from being read or undoes it */
#define GL_PKG_APT_LAST_CONF "/run/glimpse-input/apt-proxy.conf"
/* apt's main file in an operation (Dir::Etc::main of glimpse's
 * $APT_CONFIG, read after the sandbox's apt.conf.d by every apt program):
 * apt's caches and the view's architectures, written by gl_pkg_op_run; a
 * run of apt before that (or with no caches) finds no file and reads none */
#define GL_PKG_APT_MAIN_CONF "/run/glimpse-input/apt-caches.conf"
/* Writes glimpse's apt.conf and GL_PKG_APT_LAST_CONF (empty until
 * gl_pkg_op_run fills it) into the operation's input directory */
gboolean gl_pkg_write_apt_conf (const char *input_dir, GError **error);
/* @cmd, a command of an apt profile or family ("apt-get install -y"),
 * with "-c GL_PKG_APT_LAST_CONF" after its apt-get or apt (which may
 * follow VAR=value assignments); an error naming the command if it does
 * not start so */
char    *gl_pkg_apt_command (const char *cmd, GError **error);

G_END_DECLS
