/* gl-pkg.c: package operations on a sandbox's system layer (see gl-pkg.h)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-pkg.h"
#include "gl-pkg-private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "gl-apt-sources.h"
#include "gl-fsutil.h"
#include "gl-paths.h"
#include "gl-config.h"
#include "gl-pkg-limits.h"
#include "gl-pkg-proxy.h"
#include "gl-printable.h"
#include "gl-profile.h"
#include "gl-reclaim.h"
#include "gl-spawn.h"

#define GL_PKG_RANGE 65536u
#define OVL_XATTR_PREFIX "user.overlay."

G_DEFINE_QUARK (gl-pkg-error-quark, gl_pkg_error)

const char gl_pkg_apt_conf[] =
  "// glimpse: package operations\n"
  "APT::Keep-Downloaded-Packages \"false\";\n"
  "Binary::apt-get::APT::Keep-Downloaded-Packages \"false\";\n"
  "Dpkg::Use-Pty \"0\";\n"
  "APT::Color \"0\";\n"
  "quiet \"1\";\n"
  "APT::Update::Error-Mode \"any\";\n"
  /* No fsync per unpacked file: nothing of the operation counts until its
   * commit, which makes the new generation durable itself (its files'
   * data, then `current`); a crash before that discards it all anyway. */
  "Dpkg::Options { \"--force-confdef\"; \"--force-confold\"; \"--force-unsafe-io\"; };\n"
  /* The sandbox's /etc/apt/apt.conf stays unread: the main file, which
   * apt reads after the sandbox's apt.conf.d, is glimpse's
   * GL_PKG_APT_MAIN_CONF (apt's caches and the view's architectures, for
   * every apt program of the operation: see gl_pkg_op_run).  What must be
   * read, the cut's hook among it, is in GL_PKG_APT_LAST_CONF, given on
   * apt's command line (gl_pkg_apt_command): the sandbox's apt.conf.d
   * could name another main file. */
  "Dir::Etc::main \"" GL_PKG_APT_MAIN_CONF "\";\n";

static gboolean
errno_error (GError **error, int errsv, const char *what, const char *path)
{
  g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv), "%s %s: %s", what, path,
               g_strerror (errsv));
  return FALSE;
}

gboolean
gl_pkg_write_apt_conf (const char *input_dir, GError **error)
{
  g_autofree char *conf = g_build_filename (input_dir, "apt.conf", NULL);
  g_autofree char *last = g_build_filename (input_dir, "apt-proxy.conf", NULL);

  /* (the second until gl_pkg_op_run writes what the operation needs) */
  return g_file_set_contents_full (conf, gl_pkg_apt_conf, -1, G_FILE_SET_CONTENTS_NONE, 0644, error)
         && g_file_set_contents_full (last, "// glimpse: nothing for this operation\n", -1,
                                      G_FILE_SET_CONTENTS_NONE, 0644, error);
}

/* Whether @word is a shell assignment (NAME=…) */
static gboolean
is_assignment (const char *word)
{
  const char *eq = strchr (word, '=');

  if (eq == NULL || eq == word || g_ascii_isdigit (word[0]))
    return FALSE;
  for (const char *c = word; c < eq; c++)
    if (!g_ascii_isalnum (*c) && *c != '_')
      return FALSE;
  return TRUE;
}

char *
gl_pkg_apt_command (const char *cmd, GError **error)
{
  const char *p = cmd;

  for (;;)
    {
      const char *start, *end, *base;
      g_autofree char *word = NULL;

      while (*p == ' ' || *p == '\t')
        p++;
      start = p;
      while (*p != '\0' && *p != ' ' && *p != '\t')
        p++;
      end = p;
      if (start == end)
        break;
      word = g_strndup (start, end - start);
      if (is_assignment (word))
        continue;
      base = strrchr (word, '/') ? strrchr (word, '/') + 1 : word;
      if (!g_str_equal (base, "apt-get") && !g_str_equal (base, "apt"))
        break;
      return g_strdup_printf ("%.*s -c " GL_PKG_APT_LAST_CONF "%s", (int) (end - cmd), cmd, end);
    }
  g_set_error (error, GL_PKG_ERROR, GL_PKG_ERROR_INVALID,
               "The profile's command “%s” does not run apt-get or apt: glimpse gives apt the "
               "settings of an operation (the network cut before dpkg runs among them) on "
               "apt's command line; make it start with apt-get or apt (after VAR=value "
               "assignments, if any)", cmd);
  return NULL;
}

/* ------------------------------------------------------------ the range */

typedef struct {
  char *name;
  guint64 start, count;
} SubEntry;

static GArray *
parse_sub (const char *text)
{
  GArray *a = g_array_new (FALSE, TRUE, sizeof (SubEntry));
  g_auto(GStrv) lines = g_strsplit (text ? text : "", "\n", -1);
  for (char **l = lines; *l; l++)
    {
      g_auto(GStrv) f = g_strsplit (*l, ":", 3);
      SubEntry e = { 0 };
      if (g_strv_length (f) != 3 || **l == '#')
        continue;
      if (!g_ascii_string_to_unsigned (f[1], 10, 0, G_MAXUINT32, &e.start, NULL)
          || !g_ascii_string_to_unsigned (f[2], 10, 1, G_MAXUINT32, &e.count, NULL))
        continue;
      e.name = g_strdup (f[0]);
      g_array_append_val (a, e);
    }
  return a;
}

static void
free_sub (GArray *a)
{
  for (guint i = 0; i < a->len; i++)
    g_free (g_array_index (a, SubEntry, i).name);
  g_array_unref (a);
}

static gboolean
find_sub (GArray *a, const char *user, uid_t uid, guint32 *start)
{
  g_autofree char *num = g_strdup_printf ("%u", (unsigned) uid);
  for (guint i = 0; i < a->len; i++)
    {
      SubEntry *e = &g_array_index (a, SubEntry, i);
      if ((g_str_equal (e->name, user) || g_str_equal (e->name, num)) && e->count >= GL_PKG_RANGE)
        {
          *start = (guint32) e->start;
          return TRUE;
        }
    }
  return FALSE;
}

static gboolean
overlaps (GArray *a, guint64 start, guint64 count)
{
  for (guint i = 0; i < a->len; i++)
    {
      SubEntry *e = &g_array_index (a, SubEntry, i);
      if (start < e->start + e->count && e->start < start + count)
        return TRUE;
    }
  return FALSE;
}

gboolean
gl_pkg_id_is_account (guint32 id, gpointer data)
{
  return getpwuid ((uid_t) id) != NULL || getgrgid ((gid_t) id) != NULL;
}

/* Whether an id of [start, start + count) is one @known knows */
static gboolean
has_known_id (guint64 start, guint64 count, GlPkgIdKnown known, gpointer data)
{
  for (guint64 id = start; id < start + count; id++)
    if (known ((guint32) id, data))
      return TRUE;
  return FALSE;
}

guint32
gl_pkg_free_range_start_full (const char *subuid, const char *subgid, guint32 count,
                              GlPkgIdKnown known, gpointer data)
{
  GArray *u = parse_sub (subuid), *g = parse_sub (subgid);
  guint64 start = 100000;
  while (start + count < G_MAXUINT32
         && (overlaps (u, start, count) || overlaps (g, start, count)
             || (known != NULL && has_known_id (start, count, known, data))))
    start += GL_PKG_RANGE;
  free_sub (u);
  free_sub (g);
  return start + count < G_MAXUINT32 ? (guint32) start : 0;
}

gboolean
gl_pkg_nss_lists_all (const char *nsswitch)
{
  /* (no nsswitch.conf: glibc's default, files) */
  g_auto(GStrv) lines = g_strsplit (nsswitch ? nsswitch : "", "\n", -1);

  for (char **l = lines; *l; l++)
    {
      g_auto(GStrv) words = NULL;
      char *colon;
      g_strstrip (*l);
      if (!g_str_has_prefix (*l, "passwd") && !g_str_has_prefix (*l, "group"))
        continue;
      colon = strchr (*l, ':');
      if (colon == NULL)
        continue;
      *colon = '\0';
      g_strstrip (*l);
      if (!g_str_equal (*l, "passwd") && !g_str_equal (*l, "group"))
        continue;
      /* (a comment ends the line; [ACTION] tokens are no source) */
      if (strchr (colon + 1, '#') != NULL)
        *strchr (colon + 1, '#') = '\0';
      words = g_strsplit_set (colon + 1, " \t", -1);
      for (char **w = words; *w; w++)
        if (**w != '\0' && **w != '[' && (*w)[strlen (*w) - 1] != ']'
            && !g_str_equal (*w, "files") && !g_str_equal (*w, "systemd") && !g_str_equal (*w, "compat"))
          return FALSE;
    }
  return TRUE;
}

struct _GlPkgAccounts {
  GHashTable *ids;
  gboolean complete;
};

GlPkgAccounts *
gl_pkg_accounts_new (const char *nsswitch_path)
{
  GlPkgAccounts *a = g_new0 (GlPkgAccounts, 1);
  g_autofree char *text = NULL;
  struct passwd *pw;
  struct group *gr;

  a->ids = g_hash_table_new (NULL, NULL);
  g_file_get_contents (nsswitch_path, &text, NULL, NULL);
  a->complete = gl_pkg_nss_lists_all (text);
  setpwent ();
  while ((pw = getpwent ()) != NULL)
    g_hash_table_add (a->ids, GUINT_TO_POINTER (pw->pw_uid));
  endpwent ();
  setgrent ();
  while ((gr = getgrent ()) != NULL)
    g_hash_table_add (a->ids, GUINT_TO_POINTER (gr->gr_gid));
  endgrent ();
  g_debug ("%u account and group ids listed; %s", g_hash_table_size (a->ids),
           a->complete ? "that is all of them (files, systemd)"
                       : "other sources (LDAP, SSSD, NIS) are asked id by id");
  return a;
}

gboolean
gl_pkg_accounts_known (guint32 id, gpointer data)
{
  GlPkgAccounts *a = data;

  return g_hash_table_contains (a->ids, GUINT_TO_POINTER (id))
         || (!a->complete && gl_pkg_id_is_account (id, NULL));
}

void
gl_pkg_accounts_free (GlPkgAccounts *a)
{
  if (a == NULL)
    return;
  g_hash_table_unref (a->ids);
  g_free (a);
}

guint32
gl_pkg_free_range_start (const char *subuid, const char *subgid, guint32 count)
{
  /* (once, when the range is made.  A lookup of each id of a candidate
   * took half a minute with nss-systemd (a round trip per id); the ids
   * the system lists are read at once, and only sources that need not
   * list their accounts (LDAP, SSSD) are asked id by id.) */
  g_autoptr(GlPkgAccounts) accounts = gl_pkg_accounts_new ("/etc/nsswitch.conf");
  return gl_pkg_free_range_start_full (subuid, subgid, count, gl_pkg_accounts_known, accounts);
}

static gboolean
run_tool (const char * const *argv, GError **error)
{
  GlSpawnOptions options = { .output = GL_SPAWN_OUTPUT_CAPTURE };
  g_auto(GlSpawnResult) result = { 0 };
  if (gl_spawn_run (argv, &options, &result, NULL, error))
    return TRUE;
  if (result.err != NULL && g_bytes_get_size (result.err) > 0)
    g_prefix_error (error, "%.*s: ", (int) MIN (g_bytes_get_size (result.err), 500),
                    (const char *) g_bytes_get_data (result.err, NULL));
  return FALSE;
}

gboolean
gl_pkg_ensure_range (const char *etc_dir, guint32 *uid, guint32 *gid, GError **error)
{
  g_autofree char *subuid_path = g_build_filename (etc_dir, "subuid", NULL);
  g_autofree char *subgid_path = g_build_filename (etc_dir, "subgid", NULL);

  for (int attempt = 0; attempt < 2; attempt++)
    {
      g_autofree char *su = NULL, *sg = NULL;
      struct passwd *pw = getpwnam ("glimpse");
      GArray *u, *g;
      gboolean have;
      guint32 start;

      if (pw == NULL)
        {
          const char *argv[] = { "useradd", "--system", "--no-create-home", "--home-dir",
                                 "/nonexistent", "--shell", "/usr/sbin/nologin", "--comment",
                                 "Glimpse package operations", "glimpse", NULL };
          if (attempt > 0 || !run_tool (argv, error))
            {
              g_prefix_error (error, "Cannot create the system user “glimpse” whose subordinate ids "
                              "package operations use: ");
              return FALSE;
            }
          pw = getpwnam ("glimpse");
          if (pw == NULL)
            return g_set_error (error, GL_PKG_ERROR, GL_PKG_ERROR_SETUP,
                                "The system user “glimpse” was created but cannot be found"), FALSE;
        }
      g_file_get_contents (subuid_path, &su, NULL, NULL);
      g_file_get_contents (subgid_path, &sg, NULL, NULL);
      u = parse_sub (su);
      g = parse_sub (sg);
      have = find_sub (u, "glimpse", pw->pw_uid, uid) && find_sub (g, "glimpse", pw->pw_uid, gid);
      free_sub (u);
      free_sub (g);
      if (have)
        return TRUE;
      if (attempt > 0)
        break;
      start = gl_pkg_free_range_start (su, sg, GL_PKG_RANGE);
      if (start == 0)
        break;
      {
        g_autofree char *range = g_strdup_printf ("%u-%u", start, start + GL_PKG_RANGE - 1);
        const char *argv[] = { "usermod", "--add-subuids", range, "--add-subgids", range, "glimpse", NULL };
        if (!run_tool (argv, error))
          {
            g_prefix_error (error, "Cannot give the user “glimpse” the subordinate ids %s: ", range);
            return FALSE;
          }
      }
    }
  g_set_error (error, GL_PKG_ERROR, GL_PKG_ERROR_SETUP,
               "The user “glimpse” has no range of 65536 ids in %s and %s, and none could be "
               "allocated; add one (e.g. “usermod --add-subuids 300000-365535 --add-subgids "
               "300000-365535 glimpse”)", subuid_path, subgid_path);
  return FALSE;
}

/* -------------------------------------------------------- generations */

guint
gl_pkg_current_generation (const char *sandbox_path)
{
  g_autofree char *path = g_build_filename (sandbox_path, "system", "current", NULL);
  g_autofree char *text = NULL;
  guint64 n = 0;

  if (!g_file_get_contents (path, &text, NULL, NULL))
    return 0;
  g_strchomp (text);
  if (!g_ascii_string_to_unsigned (text, 10, 1, G_MAXUINT32, &n, NULL))
    return 0;
  return (guint) n;
}

char *
gl_pkg_current_tree (GlSandbox *sandbox)
{
  return gl_sandbox_get_system_tree (sandbox);
}

static gboolean
copy_xattrs (int from, int to, gboolean skip_overlay, const char *shown, GError **error)
{
  char names[65536], value[65536];
  ssize_t len = flistxattr (from, names, sizeof names);
  if (len < 0)
    return errno == ENOTSUP ? TRUE : errno_error (error, errno, "Cannot read attributes of", shown);
  for (char *n = names; n < names + len; n += strlen (n) + 1)
    {
      ssize_t vl;
      if (skip_overlay && g_str_has_prefix (n, OVL_XATTR_PREFIX)
          && !g_str_equal (n, OVL_XATTR_PREFIX "opaque"))
        continue;
      vl = fgetxattr (from, n, value, sizeof value);
      if (vl < 0 || fsetxattr (to, n, value, (size_t) vl, 0) != 0)
        return errno_error (error, errno, "Cannot copy attributes of", shown);
    }
  return TRUE;
}

/* Owner, mode, extended attributes and times of directory @from onto @to. */
static gboolean
copy_dir_attrs (int from, int to, const char *shown, GError **error)
{
  struct stat st;
  struct timespec ts[2];
  if (fstat (from, &st) != 0)
    return errno_error (error, errno, "Cannot inspect", shown);
  if (fchown (to, st.st_uid, st.st_gid) != 0 || fchmod (to, st.st_mode & 07777 & ~(mode_t) 022) != 0)
    return errno_error (error, errno, "Cannot set the owner of", shown);
  if (!copy_xattrs (from, to, TRUE, shown, error))
    return FALSE;
  ts[0] = st.st_atim;
  ts[1] = st.st_mtim;
  if (futimens (to, ts) != 0)
    return errno_error (error, errno, "Cannot set the times of", shown);
  return TRUE;
}

static int
open_dir_at (int dfd, const char *name)
{
  return openat (dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

static gboolean
link_copy_at (int src, int dst, const char *shown, GCancellable *cancellable, GError **error)
{
  DIR *d;
  struct dirent *de;
  int fd = dup (src);
  gboolean ok = TRUE;

  if (fd < 0 || (d = fdopendir (fd)) == NULL)
    return errno_error (error, errno, "Cannot read", shown);
  while (ok && (de = readdir (d)) != NULL)
    {
      struct stat st;
      g_autofree char *child = NULL;
      if (g_str_equal (de->d_name, ".") || g_str_equal (de->d_name, ".."))
        continue;
      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        {
          ok = FALSE;
          break;
        }
      child = g_build_filename (shown, de->d_name, NULL);
      if (fstatat (src, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        ok = errno_error (error, errno, "Cannot inspect", child);
      else if (S_ISDIR (st.st_mode))
        {
          int s, t;
          if (mkdirat (dst, de->d_name, 0700) != 0)
            {
              ok = errno_error (error, errno, "Cannot create", child);
              break;
            }
          s = open_dir_at (src, de->d_name);
          t = open_dir_at (dst, de->d_name);
          if (s < 0 || t < 0)
            ok = errno_error (error, errno, "Cannot open", child);
          else
            ok = link_copy_at (s, t, child, cancellable, error)
                 && copy_dir_attrs (s, t, child, error);
          if (s >= 0)
            close (s);
          if (t >= 0)
            close (t);
        }
      else if (S_ISFIFO (st.st_mode))
        continue;   /* (one an older glimpse let in: see defang_one) */
      else if (linkat (src, de->d_name, dst, de->d_name, 0) != 0)
        ok = errno_error (error, errno, "Cannot link", child);
    }
  closedir (d);
  return ok;
}

gboolean
gl_pkg_tree_link_copy (const char *src, const char *dst, GCancellable *cancellable, GError **error)
{
  int s = open_dir_at (AT_FDCWD, src), t;
  gboolean ok;
  if (s < 0)
    return errno_error (error, errno, "Cannot open", src);
  t = open_dir_at (AT_FDCWD, dst);
  if (t < 0)
    {
      close (s);
      return errno_error (error, errno, "Cannot open", dst);
    }
  ok = link_copy_at (s, t, src, cancellable, error) && copy_dir_attrs (s, t, dst, error);
  close (s);
  close (t);
  return ok;
}

static gboolean
is_opaque (int dfd)
{
  char v[4];
  ssize_t n = fgetxattr (dfd, OVL_XATTR_PREFIX "opaque", v, sizeof v);
  return n == 1 && v[0] == 'y';
}

/* Whether the base has @rel (relative to the upper's top), as far as the
 * path resolves: a whiteout over nothing is dropped, one over a base file
 * kept. */
static gboolean
base_has (const char *base, const char *rel)
{
  g_autofree char *p = g_build_filename (base, rel, NULL);
  struct stat st;
  return base == NULL || lstat (p, &st) == 0 || errno != ENOENT;
}

/* What a maintainer script wrote becomes part of a tree that every user
 * can reach on the host: no set-id bits or file capabilities (they would
 * run as the range's ids on the host; inside a view everything is nosuid
 * anyway), and nothing writable by group or others (a sealed generation is
 * never changed, and users' writes never reach the system layer).  Walks a
 * whole directory moved in at once. */
/* Up to this many files moved in are fsync()ed one by one; more, and the
 * whole file system is synced once instead. */
#define FSYNC_BUDGET 512
/* The files to sync are kept open, this many at most, and synced by
 * SYNC_THREADS threads at once: the journal commits them together (a
 * sync after another waits for a commit and a flush of the disk of its
 * own: 2-9 ms each on a busy disk). */
#define SYNC_BATCH 64
#define SYNC_THREADS 4

typedef struct {
  guint n;              /* regular files met */
  GArray *fds;          /* open, not synced yet */
  GPtrArray *names;     /* theirs, for a message */
  guint next;           /* (sync_set_flush) */
  int failed, errsv;
  GMutex lock;
} SyncSet;

static void
sync_set_init (SyncSet *ss)
{
  memset (ss, 0, sizeof *ss);
  ss->fds = g_array_new (FALSE, FALSE, sizeof (int));
  ss->names = g_ptr_array_new_with_free_func (g_free);
  ss->failed = -1;
  g_mutex_init (&ss->lock);
}

static void
sync_set_close (SyncSet *ss)
{
  for (guint i = 0; i < ss->fds->len; i++)
    close (g_array_index (ss->fds, int, i));
  g_array_set_size (ss->fds, 0);
  g_ptr_array_set_size (ss->names, 0);
}

static void
sync_set_clear (SyncSet *ss)
{
  if (ss->fds == NULL)
    return;
  sync_set_close (ss);
  g_array_unref (ss->fds);
  g_ptr_array_unref (ss->names);
  g_mutex_clear (&ss->lock);
  ss->fds = NULL;
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (SyncSet, sync_set_clear)

/* @fd, to be synced with the others of @ss (which closes it) */
static void
sync_set_add (SyncSet *ss, int fd, const char *shown)
{
  g_array_append_val (ss->fds, fd);
  g_ptr_array_add (ss->names, g_strdup (shown));
}

static gpointer
sync_worker (gpointer data)
{
  SyncSet *ss = data;

  for (;;)
    {
      guint i;
      g_mutex_lock (&ss->lock);
      i = ss->next++;
      g_mutex_unlock (&ss->lock);
      if (i >= ss->fds->len)
        return NULL;
      if (fsync (g_array_index (ss->fds, int, i)) != 0)
        {
          int errsv = errno;
          g_mutex_lock (&ss->lock);
          if (ss->failed < 0)
            {
              ss->failed = (int) i;
              ss->errsv = errsv;
            }
          g_mutex_unlock (&ss->lock);
        }
    }
}

/* Syncs and closes the files of @ss (their data on disk before `current`
 * names the generation) */
static gboolean
sync_set_flush (SyncSet *ss, GError **error)
{
  GThread *threads[SYNC_THREADS];
  guint n = MIN (SYNC_THREADS, ss->fds->len);
  gboolean ok = TRUE;

  ss->next = 0;
  /* (a thread that cannot be made leaves its share to the others) */
  for (guint t = 1; t < n; t++)
    threads[t] = g_thread_try_new ("gl-sync", sync_worker, ss, NULL);
  sync_worker (ss);
  for (guint t = 1; t < n; t++)
    if (threads[t] != NULL)
      g_thread_join (threads[t]);
  if (ss->failed >= 0)
    ok = errno_error (error, ss->errsv, "Cannot write", ss->names->pdata[ss->failed]);
  ss->failed = -1;
  sync_set_close (ss);
  return ok;
}

/* @visit is called on a file of a tree walked by walk_tree (@st: its
 * lstat); it may remove a file that is not a directory. */
typedef gboolean (*TreeVisit) (int dfd, const char *name, const struct stat *st, const char *shown,
                               gpointer data, GError **error);

/* Calls @visit on @name (at @dfd; @shown names it in messages) and, if it
 * is a directory, on everything below it, each directory before its
 * contents; no link is followed. */
static gboolean
walk_tree (int dfd, const char *name, const char *shown, TreeVisit visit, gpointer data, GError **error)
{
  struct stat st;
  if (fstatat (dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
    return errno_error (error, errno, "Cannot inspect", shown);
  if (!visit (dfd, name, &st, shown, data, error))
    return FALSE;
  if (S_ISDIR (st.st_mode))
    {
      int fd = open_dir_at (dfd, name);
      DIR *d;
      struct dirent *de;
      gboolean ok = TRUE;
      if (fd < 0 || (d = fdopendir (fd)) == NULL)
        return errno_error (error, errno, "Cannot read", shown);
      while (ok && (de = readdir (d)) != NULL)
        {
          g_autofree char *child = NULL;
          if (g_str_equal (de->d_name, ".") || g_str_equal (de->d_name, ".."))
            continue;
          child = g_build_filename (shown, de->d_name, NULL);
          ok = walk_tree (dirfd (d), de->d_name, child, visit, data, error);
        }
      closedir (d);
      return ok;
    }
  return TRUE;
}

static gboolean
defang_one (int dfd, const char *name, const struct stat *st, const char *shown, gpointer data,
            GError **error)
{
  SyncSet *ss = data;
  mode_t mode;
  if (S_ISLNK (st->st_mode))
    return TRUE;
  /* A device node in the store would open a host device for anyone who
   * reaches it (views and package operations have their own /dev); a
   * whiteout (0/0) is no device. */
  if ((S_ISBLK (st->st_mode) || S_ISCHR (st->st_mode)) && st->st_rdev != makedev (0, 0))
    {
      if (unlinkat (dfd, name, 0) != 0)
        return errno_error (error, errno, "Cannot remove the device node", shown);
      return TRUE;
    }
  /* A FIFO blocks whoever opens it to read, for good: one in
   * /usr/share/applications hung every later operation's
   * update-desktop-database (the package namespace makes none:
   * glimpse-pkgns, install_seccomp) */
  if (S_ISFIFO (st->st_mode))
    {
      if (unlinkat (dfd, name, 0) != 0)
        return errno_error (error, errno, "Cannot remove the FIFO", shown);
      return TRUE;
    }
  mode = st->st_mode & 07777 & ~(mode_t) 022;
  if (!S_ISDIR (st->st_mode))
    mode &= ~(mode_t) 06000;
  if (S_ISREG (st->st_mode))
    {
      char path[64];
      g_snprintf (path, sizeof path, "/proc/self/fd/%d/", dfd);
      {
        g_autofree char *full = g_strconcat (path, name, NULL);
        if (lremovexattr (full, "security.capability") != 0 && errno != ENODATA && errno != ENOTSUP)
          return errno_error (error, errno, "Cannot drop the capabilities of", shown);
      }
      /* Its data on disk before `current` names the generation */
      if (++ss->n <= FSYNC_BUDGET)
        {
          int fd = openat (dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
          if (fd < 0)
            return errno_error (error, errno, "Cannot write", shown);
          sync_set_add (ss, fd, shown);
          if (ss->fds->len >= SYNC_BATCH && !sync_set_flush (ss, error))
            return FALSE;
        }
    }
  if (mode != (st->st_mode & 07777) && fchmodat (dfd, name, mode, AT_SYMLINK_NOFOLLOW) != 0)
    return errno_error (error, errno, "Cannot change the mode of", shown);
  return TRUE;
}

static gboolean
defang_at (int dfd, const char *name, const char *shown, SyncSet *ss, GError **error)
{
  return walk_tree (dfd, name, shown, defang_one, ss, error);
}

gboolean
gl_pkg_tree_defang (const char *path, GError **error)
{
  SyncSet ss;
  gboolean ok;

  sync_set_init (&ss);
  ok = defang_at (AT_FDCWD, path, path, &ss, error) && sync_set_flush (&ss, error);
  sync_set_clear (&ss);
  return ok;
}

static gboolean
merge_at (int upper, int dst, const char *base, const char *rel, const char *shown,
          SyncSet *ss, GCancellable *cancellable, GError **error)
{
  DIR *d;
  struct dirent *de;
  int fd = dup (upper);
  gboolean ok = TRUE;
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);

  if (fd < 0 || (d = fdopendir (fd)) == NULL)
    return errno_error (error, errno, "Cannot read", shown);
  while ((de = readdir (d)) != NULL)
    if (!g_str_equal (de->d_name, ".") && !g_str_equal (de->d_name, ".."))
      g_ptr_array_add (names, g_strdup (de->d_name));
  closedir (d);

  for (guint i = 0; ok && i < names->len; i++)
    {
      const char *name = names->pdata[i];
      g_autofree char *child = g_build_filename (shown, name, NULL);
      g_autofree char *child_rel = g_build_filename (rel, name, NULL);
      struct stat st, dst_st;
      gboolean dst_is_dir;

      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        return FALSE;
      if (fstatat (upper, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return errno_error (error, errno, "Cannot inspect", child);
      dst_is_dir = fstatat (dst, name, &dst_st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR (dst_st.st_mode);
      if (S_ISDIR (st.st_mode) && dst_is_dir)
        {
          int u = open_dir_at (upper, name), t = open_dir_at (dst, name);
          if (u < 0 || t < 0)
            ok = errno_error (error, errno, "Cannot open", child);
          else if (is_opaque (u))
            ok = TRUE;  /* replaced whole, below */
          else
            {
              ok = merge_at (u, t, base, child_rel, child, ss, cancellable, error)
                   && copy_dir_attrs (u, t, child, error);
              close (u);
              close (t);
              continue;
            }
          if (u >= 0)
            close (u);
          if (t >= 0)
            close (t);
          if (!ok)
            return FALSE;
        }
      /* A whiteout, an opaque or new directory, a file of any kind: it
       * replaces whatever the older generation had there. */
      {
        g_autofree char *dst_path = NULL;
        char fdpath[64];
        g_snprintf (fdpath, sizeof fdpath, "/proc/self/fd/%d/%s", dst, name);
        dst_path = g_strdup (fdpath);
        if (!gl_rm_rf (dst_path, cancellable, error))
          return FALSE;
      }
      if (gl_overlay_is_whiteout (&st) && !base_has (base, child_rel))
        continue;
      if (!defang_at (upper, name, child, ss, error))
        return FALSE;
      /* (a device node or FIFO defang_at removed: nothing to move) */
      if (fstatat (upper, name, &st, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT)
        continue;
      if (renameat (upper, name, dst, name) != 0)
        return errno_error (error, errno, "Cannot move", child);
    }
  return ok;
}

static gboolean
writeback_one (int dfd, const char *name, const struct stat *st, const char *shown, gpointer data,
               GError **error)
{
  guint *n = data;
  int fd;

  if (!S_ISREG (st->st_mode) || st->st_size == 0 || ++*n > FSYNC_BUDGET)
    return TRUE;
  fd = openat (dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd >= 0)
    {
      (void) sync_file_range (fd, 0, 0, SYNC_FILE_RANGE_WRITE);
      close (fd);
    }
  return TRUE;
}

/* Has the disk start writing the data of the regular files of @upper (as
 * many as are fsync()ed one by one), waiting for none: it writes while
 * the new tree is linked, and their fsyncs wait for less.  Only a hint:
 * the fsyncs are what makes the data durable. */
static void
writeback_start (const char *upper)
{
  guint n = 0;
  g_autoptr(GError) error = NULL;

  if (!walk_tree (AT_FDCWD, upper, upper, writeback_one, &n, &error))
    g_debug ("%s", error->message);
}

/* gl_pkg_tree_merge_upper, the files moved in left in @ss, to be synced
 * by the caller (with what else it has to sync) */
static gboolean
merge_upper_into (const char *upper, const char *dst, const char *base, SyncSet *ss,
                  GCancellable *cancellable, GError **error)
{
  int u = open_dir_at (AT_FDCWD, upper), t;
  gboolean ok;
  if (u < 0)
    return errno_error (error, errno, "Cannot open", upper);
  t = open_dir_at (AT_FDCWD, dst);
  if (t < 0)
    {
      close (u);
      return errno_error (error, errno, "Cannot open", dst);
    }
  ok = merge_at (u, t, base, "", upper, ss, cancellable, error);
  close (u);
  close (t);
  return ok;
}

gboolean
gl_pkg_tree_merge_upper (const char *upper, const char *dst, const char *base,
                         guint *n_files, GCancellable *cancellable, GError **error)
{
  g_auto(SyncSet) ss = { 0 };
  gboolean ok;

  sync_set_init (&ss);
  ok = merge_upper_into (upper, dst, base, &ss, cancellable, error) && sync_set_flush (&ss, error);
  *n_files = ss.n;
  return ok;
}

/* ------------------------------------------------- a change that matters */

static guint32
shift_id (guint32 id, guint32 start)
{
  return id < GL_PKG_RANGE ? start + id : id;
}

/* The extended attributes of @a and @b but overlayfs' own are the same */
static gboolean
same_xattrs (int a, int b)
{
  char names_a[65536], names_b[65536], va[65536], vb[65536];
  ssize_t la = flistxattr (a, names_a, sizeof names_a), lb = flistxattr (b, names_b, sizeof names_b);
  guint n_a = 0, n_b = 0;

  if (la < 0 || lb < 0)
    return la < 0 && lb < 0 && errno == ENOTSUP;
  for (char *n = names_b; n < names_b + lb; n += strlen (n) + 1)
    if (!g_str_has_prefix (n, OVL_XATTR_PREFIX))
      n_b++;
  for (char *n = names_a; n < names_a + la; n += strlen (n) + 1)
    {
      ssize_t x, y;
      if (g_str_has_prefix (n, OVL_XATTR_PREFIX))
        continue;
      n_a++;
      x = fgetxattr (a, n, va, sizeof va);
      y = fgetxattr (b, n, vb, sizeof vb);
      if (x < 0 || x != y || memcmp (va, vb, (size_t) x) != 0)
        return FALSE;
    }
  return n_a == n_b;
}

static gboolean
same_bytes (int a, int b)
{
  char ba[65536], bb[65536];
  for (;;)
    {
      ssize_t x = read (a, ba, sizeof ba), y;
      if (x < 0)
        return FALSE;
      y = read (b, bb, (size_t) x);    /* (the sizes are the same) */
      if (y != x || memcmp (ba, bb, (size_t) x) != 0)
        return FALSE;
      if (x == 0)
        return TRUE;
    }
}

static gboolean upper_changes_at (int upper, const int *lowers, guint n, const char *rel,
                                  guint32 uid, guint32 gid);

/* Regenerable caches that a package manager's hooks rewrite on every run
 * (AppStream's, from apt's APT::Update::Post-Invoke-Success): their new
 * contents alone are not a change of the system.  An operation that
 * changed nothing else makes no generation, and the caches the sandbox
 * has stay (they match its unchanged system); AppStream rebuilds a stale
 * one when it is read. */
static const char * const regenerated_caches[] = {
  "var/cache/swcatalog", "var/cache/app-info", NULL
};

/* Whether the entry @name of the upper directory @upper changes what the
 * lower directories @lowers (@n of them, top first, -1 where absent) show
 * there. */
static gboolean
entry_changes (int upper, const int *lowers, guint n, const char *name, const char *rel,
               guint32 uid, guint32 gid)
{
  struct stat st, lst;
  guint found = n;
  gboolean changes = TRUE;

  if (fstatat (upper, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
    return TRUE;
  for (guint k = 0; k < n; k++)
    {
      if (lowers[k] < 0 || fstatat (lowers[k], name, &lst, AT_SYMLINK_NOFOLLOW) != 0)
        continue;
      if (!gl_overlay_is_whiteout (&lst))
        found = k;
      break;
    }
  if (found == n)
    return !gl_overlay_is_whiteout (&st);   /* a whiteout over nothing changes nothing */
  if ((st.st_mode & S_IFMT) != (lst.st_mode & S_IFMT) || (st.st_mode & 07777) != (lst.st_mode & 07777)
      || st.st_uid != shift_id (lst.st_uid, uid) || st.st_gid != shift_id (lst.st_gid, gid))
    return TRUE;
  if (S_ISLNK (st.st_mode))
    {
      char a[PATH_MAX], b[PATH_MAX];
      ssize_t x = readlinkat (upper, name, a, sizeof a), y = readlinkat (lowers[found], name, b, sizeof b);
      return x < 0 || x != y || memcmp (a, b, (size_t) x) != 0;
    }
  if (S_ISREG (st.st_mode))
    {
      int a, b;
      if (st.st_size != lst.st_size)
        return TRUE;
      a = openat (upper, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
      b = openat (lowers[found], name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
      changes = a < 0 || b < 0 || !same_xattrs (a, b) || !same_bytes (a, b);
      if (a >= 0)
        close (a);
      if (b >= 0)
        close (b);
      return changes;
    }
  if (S_ISDIR (st.st_mode))
    {
      int u = open_dir_at (upper, name), sub[8];
      guint m = 0;
      /* the lower directories merged there: down to an opaque one, or to
       * anything else that hides the ones below */
      for (guint k = found; k < n && m < G_N_ELEMENTS (sub); k++)
        {
          struct stat kst;
          int fd;
          if (lowers[k] < 0 || fstatat (lowers[k], name, &kst, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
          if (!S_ISDIR (kst.st_mode) || (fd = open_dir_at (lowers[k], name)) < 0)
            break;
          sub[m++] = fd;
          if (is_opaque (fd))
            break;
        }
      changes = u < 0 || m == 0 || is_opaque (u) || !same_xattrs (u, sub[0])
                || upper_changes_at (u, sub, m, rel, uid, gid);
      if (u >= 0)
        close (u);
      for (guint k = 0; k < m; k++)
        close (sub[k]);
      return changes;
    }
  return TRUE;    /* a device, a FIFO, a socket */
}

static gboolean
upper_changes_at (int upper, const int *lowers, guint n, const char *rel, guint32 uid, guint32 gid)
{
  int fd = dup (upper);
  DIR *d = fd >= 0 ? fdopendir (fd) : NULL;
  struct dirent *de;
  gboolean changes = FALSE;

  if (d == NULL)
    {
      if (fd >= 0)
        close (fd);
      return TRUE;
    }
  while (!changes && (de = readdir (d)) != NULL)
    if (!g_str_equal (de->d_name, ".") && !g_str_equal (de->d_name, ".."))
      {
        g_autofree char *child = rel[0] ? g_strconcat (rel, "/", de->d_name, NULL)
                                        : g_strdup (de->d_name);
        if (!g_strv_contains (regenerated_caches, child))
          changes = entry_changes (dirfd (d), lowers, n, de->d_name, child, uid, gid);
      }
  closedir (d);
  return changes;
}

gboolean
gl_pkg_upper_changes (const char *upper, const char * const *lowers, guint32 uid, guint32 gid)
{
  int u = open_dir_at (AT_FDCWD, upper), fds[8] = { -1, -1, -1, -1, -1, -1, -1, -1 };
  guint n = 0;
  gboolean changes;

  for (; lowers[n] != NULL && n < G_N_ELEMENTS (fds); n++)
    fds[n] = open_dir_at (AT_FDCWD, lowers[n]);
  changes = u < 0 || lowers[n] != NULL || upper_changes_at (u, fds, n, "", uid, gid);
  if (u >= 0)
    close (u);
  for (guint k = 0; k < n; k++)
    if (fds[k] >= 0)
      close (fds[k]);
  return changes;
}

/* ------------------------------------------------------------ the op */

/* (apt's binary caches, in a generation and in an operation's scratch:
 * see apt_cache_prepare) */
#define APT_CACHE_DIR "apt-cache"

typedef struct _GlPkgTrash GlPkgTrash;

struct _GlPkgOp {
  GlSandbox *sandbox;          /* borrowed */
  GlPkgProgress progress;
  gpointer user_data;
  int lock_fd;
  guint32 uid, gid;
  guint current;
  guint next;                  /* the number of the generation it makes: above every one
                                * in system/ (a reset keeps the ones views hold) */
  char *system;                /* <sandbox>/system */
  char *dir;                   /* system/.op-XXXXXX */
  char *input;                 /* dir/input */
  char *apt_cache;             /* dir/apt-cache (an apt sandbox's), or NULL */
  char *new_base;              /* a rebase: the new base tree (in dir), or NULL */
  char *new_release, *new_follows; /* a rebase: the new base's record */
  GlPkgNetwork network;
  GPtrArray *extra_uris;       /* gl_pkg_op_allow_uri */
  gboolean ran;
  gboolean held_said;          /* gl_pkg_op_reclaim said old generations are kept */
  GlPkgTrash *trash;           /* what the operation replaced, to be removed (see trash_new) */
  GlPkgTrash *disposing;       /* a trash handed to its remover (trash_dispose_start) */
  pid_t disposer;              /* ... the remover's parent, or -1 */
  int dispose_report;          /* ... where the remover says it cannot exec, or -1 */
  /* The next generation's tree, made while the command runs (see
   * prepare_next_start) */
  gboolean prepare_next;       /* wanted: an operation that nearly always changes something */
  GThread *prep;               /* making it, or made (joined by prepare_next_join) */
  gboolean prep_ok;
  GError *prep_error;
  gboolean prep_left;          /* system/<next> was made and is not the operation's result (yet) */
  GlPkgLimits *limits;         /* the command's cgroups, removed last (see spawn_pkgns) */
  /* glimpse-pkgns --walk-refresh's arguments but the lock's, for the walk
   * of the base after an operation that ended before its walk beside the
   * command began (walk_refresh_start), or NULL; the walk cache's path */
  GPtrArray *walk_refresh;
  char *walk_cache;
};

static void
say (GlPkgOp *op, const char *format, ...) G_GNUC_PRINTF (2, 3);
static void prepare_next_start (GlPkgOp *op);
static void prepare_next_drop (GlPkgOp *op);

static void
say (GlPkgOp *op, const char *format, ...)
{
  va_list ap;
  g_autofree char *line = NULL;
  va_start (ap, format);
  line = g_strdup_vprintf (format, ap);
  va_end (ap);
  if (op->progress)
    op->progress (line, op->user_data);
}

/* ------------------------------------------------------------ trash */

/* What an operation replaced (old generations, its own scratch) leaves the
 * user's path at once and goes in the background:
 *   - it is renamed into system/.trash-XXXXXX/, a directory of its own
 *     with a lock file, both made and the lock taken before anything is
 *     moved in; a generation is moved only while its own lock (the one
 *     every view holds shared) is held exclusively, and that lock stays
 *     held until the generation is gone: no view can take it meanwhile;
 *   - a detached remover, glimpse-remove-trash (its own session, its
 *     output nowhere, not waited for; exec'd straight after the fork, see
 *     trash_exec_remover), inherits every one of those locks and removes
 *     what was moved in, then the trash directory with its lock last;
 *   - a remover that was killed, that could not be started, or an
 *     operation killed between the rename and the start of the remover,
 *     leaves the trash to the next operation (remove_abandoned), which
 *     removes it under the same locks: only a trash whose lock and whose
 *     generations' locks it can take exclusively at once, so never one a
 *     remover is still at nor a generation a view got hold of.
 * `current` never names a trash, so no launch opens one.  Its name starts
 * with GL_SANDBOX_TRASH_PREFIX. */

struct _GlPkgTrash {
  char *dir;            /* system/.trash-XXXXXX */
  GPtrArray *items;     /* the names moved into it */
  GArray *fds;          /* the locks held: the trash's, each generation's */
};

static void
trash_close_fds (GlPkgTrash *t)
{
  for (guint i = 0; i < t->fds->len; i++)
    close (g_array_index (t->fds, int, i));
  g_array_set_size (t->fds, 0);
}

static void
trash_free (GlPkgTrash *t)
{
  if (t == NULL)
    return;
  trash_close_fds (t);
  g_array_unref (t->fds);
  g_ptr_array_unref (t->items);
  g_free (t->dir);
  g_free (t);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (GlPkgTrash, trash_free)

/* A new trash in @system, its lock held; NULL (and a debug message) if it
 * cannot be made: the caller removes then at once, as before */
static GlPkgTrash *
trash_new (const char *system)
{
  g_autofree char *dir = g_build_filename (system, GL_SANDBOX_TRASH_PREFIX "XXXXXX", NULL);
  g_autofree char *lock = NULL;
  GlPkgTrash *t;
  int fd;

  if (g_mkdtemp_full (dir, 0700) == NULL)
    {
      g_debug ("Cannot create %s: %s", dir, g_strerror (errno));
      return NULL;
    }
  lock = g_build_filename (dir, "lock", NULL);
  fd = open (lock, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0 || flock (fd, LOCK_EX | LOCK_NB) != 0)
    {
      g_debug ("Cannot lock %s: %s", lock, g_strerror (errno));
      if (fd >= 0)
        close (fd);
      unlink (lock);
      rmdir (dir);
      return NULL;
    }
  t = g_new0 (GlPkgTrash, 1);
  t->dir = g_steal_pointer (&dir);
  t->items = g_ptr_array_new_with_free_func (g_free);
  t->fds = g_array_new (FALSE, FALSE, sizeof (int));
  g_array_append_val (t->fds, fd);
  return t;
}

/* @path (a directory of system/) moved into @op's trash as @name.  Once
 * a trash exists, *@lock_fd (NULL or -1: none), a lock held on @path, is
 * the trash's, whatever the outcome (*@lock_fd becomes -1); without a
 * trash it stays the caller's, held while the caller removes @path: no
 * view may take it meanwhile.  FALSE: not moved (the caller removes it
 * itself). */
static gboolean
trash_move (GlPkgOp *op, const char *path, const char *name, int *lock_fd)
{
  g_autofree char *to = NULL;

  if (op->trash == NULL)
    op->trash = trash_new (op->system);
  if (op->trash == NULL)
    return FALSE;
  if (lock_fd != NULL && *lock_fd >= 0)
    {
      g_array_append_val (op->trash->fds, *lock_fd);
      *lock_fd = -1;
    }
  to = g_build_filename (op->trash->dir, name, NULL);
  if (renameat2 (AT_FDCWD, path, AT_FDCWD, to, RENAME_NOREPLACE) != 0)
    {
      g_debug ("Cannot move %s to %s: %s", path, to, g_strerror (errno));
      return FALSE;
    }
  g_ptr_array_add (op->trash->items, g_strdup (name));
  return TRUE;
}

/* The space removing @t gives back (NULL: none): what is linked only from
 * in it, apt's caches aside (replaced at every operation, not worth a
 * "Reclaimed"; not walked) */
static guint64
trash_size (GlPkgTrash *t)
{
  return t != NULL ? gl_reclaim_size_whole_but (t->dir, APT_CACHE_DIR) : 0;
}

static int
compare_fds (gconstpointer a, gconstpointer b)
{
  return *(const int *) a - *(const int *) b;
}

/* The detached remover's, after fork: never returns.  glimpse has threads
 * (GLib's, curl's), and a lock one of them held at the fork stays held in
 * the child for good (malloc's arenas aside: GSlice's, stdio's, gettext's,
 * GLib's log lock): until it execs, the child makes only async-signal-safe
 * calls, on what was made ready before the fork.  @keep: the descriptors
 * it keeps open (sorted): the trash's locks, and @report (close-on-exec),
 * where it writes errno if it cannot exec. */
static void G_GNUC_NORETURN
trash_exec_remover (const GArray *keep, int null, int report, const char *helper,
                    char *const *argv, gboolean to_root)
{
  static char *const envp[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", NULL };
  struct sigaction dfl = { .sa_handler = SIG_DFL };
  sigset_t none;
  int from = 3, saved;
  pid_t pid;

  /* its own session, and not a child of the command's: nobody waits */
  setsid ();
  pid = _Fork ();
  if (pid != 0)
    _exit (pid < 0 ? 1 : 0);
  if (null >= 0)
    {
      dup2 (null, 0);
      dup2 (null, 1);
      dup2 (null, 2);
    }
  /* the locks only: not the operation's (the next one must not wait for
   * this), nor anything else of the command's */
  for (guint i = 0; i < keep->len; i++)
    {
      int fd = g_array_index (keep, int, i);
      if (fd > from)
        close_range ((unsigned) from, (unsigned) fd - 1, 0);
      from = MAX (from, fd + 1);
      if (fd != report)
        fcntl (fd, F_SETFD, 0);
    }
  close_range ((unsigned) from, ~0U, 0);
  /* (not the caller's working directory: that stays unmountable while
   * this runs; a relative store path keeps it) */
  if (to_root && chdir ("/") != 0)
    _exit (1);
  /* (every signal default, not only those glimpse itself may catch or
   * ignore: one ignored by whoever started glimpse -- nohup, a shell's
   * background job -- would otherwise stay ignored through the exec;
   * sigaction fails harmlessly for SIGKILL, SIGSTOP and libc's own) */
  for (int sig = 1; sig < NSIG; sig++)
    (void) sigaction (sig, &dfl, NULL);
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  execve (helper, argv, envp);
  saved = errno;
  (void) !write (report, &saved, sizeof saved);
  _exit (1);
}

/* Hands @op's trash to a detached process of its own (see above) that
 * execs glimpse-remove-trash, or removes it here if that cannot be
 * started.  The removal is gl_rm_rf's, as everywhere else: never into
 * another mount, a bind mount of the store's own file system included
 * (`rm --one-file-system` compares st_dev only, and walks into one).
 * In two steps, so that the caller does something else while the remover
 * starts (some 2 ms: the exec of a new program): trash_dispose_start
 * forks, trash_dispose_finish learns whether it execs (its trash's locks
 * held here until then, for the removal here if it does not). */
static void trash_dispose_finish (GlPkgOp *op);

static void
trash_dispose_start (GlPkgOp *op)
{
  g_autoptr(GlPkgTrash) t = NULL;
  g_autoptr(GArray) keep = NULL;
  g_autofree char *lock_fd = NULL;
  const char *helper = gl_paths_remove_trash ();
  char *argv[4];
  int report[2] = { -1, -1 }, null = -1;
  pid_t pid = -1;

  trash_dispose_finish (op);
  t = g_steal_pointer (&op->trash);
  if (t == NULL)
    return;
  if (t->items->len == 0)
    {
      g_autofree char *lock = g_build_filename (t->dir, "lock", NULL);
      unlink (lock);
      rmdir (t->dir);
      return;
    }
  gl_pkg_crash_point ("trash-moved");
  /* (everything the child needs, made now: it may allocate nothing) */
  lock_fd = g_strdup_printf ("%d", g_array_index (t->fds, int, 0));
  argv[0] = (char *) helper;
  argv[1] = lock_fd;
  argv[2] = t->dir;
  argv[3] = NULL;
  if (pipe2 (report, O_CLOEXEC) == 0)
    {
      keep = g_array_copy (t->fds);
      g_array_append_val (keep, report[1]);
      g_array_sort (keep, compare_fds);
      null = open ("/dev/null", O_RDWR | O_CLOEXEC);
      pid = fork ();
      if (pid == 0)
        trash_exec_remover (keep, null, report[1], helper, argv, g_path_is_absolute (t->dir));
      close (report[1]);
      if (null >= 0)
        close (null);
      if (pid < 0)
        {
          close (report[0]);
          report[0] = -1;
        }
    }
  op->disposing = g_steal_pointer (&t);
  op->disposer = pid;
  op->dispose_report = report[0];
}

static void
trash_dispose_finish (GlPkgOp *op)
{
  g_autoptr(GlPkgTrash) t = g_steal_pointer (&op->disposing);
  g_autoptr(GError) error = NULL;
  const char *helper = gl_paths_remove_trash ();
  pid_t pid = op->disposer;
  int report = op->dispose_report, exec_errno = 0, status;

  op->disposer = -1;
  op->dispose_report = -1;
  if (t == NULL)
    return;
  if (pid > 0 && waitpid (pid, &status, 0) == pid && WIFEXITED (status)
      && WEXITSTATUS (status) == 0)
    {
      /* (the remover's end closes when it execs; errno if it cannot) */
      ssize_t n = TEMP_FAILURE_RETRY (read (report, &exec_errno, sizeof exec_errno));
      close (report);
      if (n == 0)
        return;
    }
  else if (report >= 0)
    close (report);
  g_debug ("Cannot start %s for %s (%s); removing it now", helper, t->dir,
           exec_errno ? g_strerror (exec_errno) : "fork failed");
  if (!gl_rm_rf (t->dir, NULL, &error))
    g_debug ("%s", error->message);
}

static void
trash_dispose (GlPkgOp *op)
{
  trash_dispose_start (op);
  trash_dispose_finish (op);
}


static guint64 delete_old_generations (GlPkgOp *op, guint keep);

static guint64 remove_unused_bases (GlPkgOp *op);

static void reclaim (GlPkgOp *op);

void
gl_pkg_op_reclaim (GlPkgOp *op)
{
  reclaim (op);
  trash_dispose (op);
}

static void
reclaim (GlPkgOp *op)
{
  guint64 gens, base = 0;
  gboolean in_use = FALSE;
  g_autoptr(GError) error = NULL;

  /* A view that has ended but that a process outside still keeps (its
   * mount namespace held) keeps its overlays, over the generation and base
   * it was built from (which one is not recorded): nothing old goes then.
   * Nor while a view built without the launcher's setuid bit may run: it
   * cannot hold its generation's lock (gl_sandbox_layers_free). */
  if (!gl_sandbox_layers_free (op->sandbox, TRUE, &error))
    {
      /* (once: an operation reclaims at its start and at its end) */
      if (!op->held_said)
        say (op, "The old system generations of “%s” are kept: %s; the first package "
             "operation after that reclaims them", op->sandbox->id, error->message);
      op->held_said = TRUE;
      return;
    }
  gens = delete_old_generations (op, op->current);
  /* (with the generations that named it: the bare base of a rebase they
   * lay over, mostly links into them) */
  gens += remove_unused_bases (op);
  gens += trash_size (op->trash);
  if (op->current > 0 && !gl_reclaim_old_base (op->sandbox, &base, &in_use, &error))
    say (op, "Cannot reclaim the old base of “%s”: %s", op->sandbox->id, error->message);
  /* (a generation replaced by the next is mostly links into it: said
   * when it is worth saying) */
  if (gens < 1024 * 1024)
    gens = 0;
  if (base > 0 || gens > 0)
    {
      g_autofree char *size = g_format_size (base + gens);
      say (op, "Reclaimed %s of “%s”: %s%s%s", size, op->sandbox->id, base ? "its old base" : "",
           base && gens ? " and " : "", gens ? "system generations no app uses any more" : "");
    }
  if (in_use)
    say (op, "The old base of “%s” is kept while an app runs in the sandbox; the first package "
         "operation after the last one ends reclaims it", op->sandbox->id);
}

static gboolean
is_generation_name (const char *name, guint *n)
{
  guint64 v;
  if (!g_ascii_string_to_unsigned (name, 10, 1, G_MAXUINT32, &v, NULL))
    return FALSE;
  *n = (guint) v;
  return TRUE;
}

/* Every generation but @keep that no view holds goes into the trash (see
 * trash_new; removed at once if it cannot); the ones in use stay for a
 * later operation.  Returns the bytes given back. */
static guint64
delete_old_generations (GlPkgOp *op, guint keep)
{
  guint64 freed = 0;
  g_autoptr(GDir) d = g_dir_open (op->system, 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name (d)) != NULL)
    {
      guint n;
      g_autofree char *dir = NULL, *lock = NULL, *caches = NULL;
      g_autoptr(GError) error = NULL;
      guint64 size = 0;
      int fd;
      if (!is_generation_name (name, &n) || n == keep)
        continue;
      dir = g_build_filename (op->system, name, NULL);
      lock = g_build_filename (dir, "lock", NULL);
      fd = open (lock, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
      if (fd >= 0 && flock (fd, LOCK_EX | LOCK_NB) != 0)
        {
          g_debug ("generation %s is in use; kept", dir);
          close (fd);
          continue;
        }
      /* (its lock held until it is gone, by whoever removes it; counted
       * with the trash) */
      if (trash_move (op, dir, name, &fd))
        continue;
      /* (apt's caches, replaced at every operation, are not worth a
       * "Reclaimed") */
      caches = g_build_filename (dir, APT_CACHE_DIR, NULL);
      if (!gl_rm_rf (caches, NULL, &error))
        g_debug ("%s", error->message);
      g_clear_error (&error);
      if (!gl_rm_rf_freed (dir, &size, NULL, &error))
        g_debug ("%s", error->message);
      else
        freed += size;
      if (fd >= 0)
        close (fd);
    }
  return freed;
}

/* Whether every lock of the trash @path (its own, its generations') is
 * free; @fds gets them, held exclusively */
static gboolean
trash_lock_all (const char *path, GArray *fds)
{
  g_autoptr(GDir) d = g_dir_open (path, 0, NULL);
  const char *name;
  g_autofree char *own = g_build_filename (path, "lock", NULL);
  int fd = open (own, O_RDWR | O_CLOEXEC | O_NOFOLLOW);

  /* (none: a remover at its last step, or stopped there; what is left is
   * only the directory, as good as gone) */
  if (fd >= 0)
    g_array_append_val (fds, fd);
  if (fd >= 0 && flock (fd, LOCK_EX | LOCK_NB) != 0)
    return FALSE;
  while (d && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *lock = g_build_filename (path, name, "lock", NULL);
      fd = open (lock, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
      if (fd < 0)
        continue;
      g_array_append_val (fds, fd);
      if (flock (fd, LOCK_EX | LOCK_NB) != 0)
        return FALSE;
    }
  return TRUE;
}

/* Generation @n of @system's lock, held exclusively (-1: it has none);
 * FALSE if a view holds it */
static gboolean
generation_lock (const char *system, guint n, int *fd)
{
  g_autofree char *num = g_strdup_printf ("%u", n);
  g_autofree char *lock = g_build_filename (system, num, "lock", NULL);

  *fd = open (lock, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  if (*fd >= 0 && flock (*fd, LOCK_EX | LOCK_NB) != 0)
    {
      close (*fd);
      *fd = -1;
      return FALSE;
    }
  return TRUE;
}

/* The highest generation of @system (0: none); *@names_base (if not
 * NULL): whether one of them lies over base-@g */
static guint
generations_scan (const char *system, guint g, gboolean *names_base)
{
  g_autoptr(GDir) d = g_dir_open (system, 0, NULL);
  const char *name;
  guint n, top = 0;

  if (names_base != NULL)
    *names_base = FALSE;
  while (d && (name = g_dir_read_name (d)) != NULL)
    if (is_generation_name (name, &n))
      {
        top = MAX (top, n);
        if (names_base != NULL && gl_sandbox_generation_base (system, n) == g)
          *names_base = TRUE;
      }
  return top;
}

static gboolean
base_named (const char *system, guint g)
{
  gboolean named;

  generations_scan (system, g, &named);
  return named;
}

/* What a killed operation left: scratch directories, and generations newer
 * than `current` that were never switched to, with the bases a rebase made
 * for them (base-N).  (After a reset, which leaves no `current`, the
 * generations views held are newer than none: those still held stay, and
 * the bases they lie over; all of them while a view without the launcher's
 * setuid bit may run, which holds no generation's lock.) */
static void
remove_abandoned (const char *system, guint current, gboolean unprivileged_view)
{
  g_autoptr(GDir) d = g_dir_open (system, 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name (d)) != NULL)
    {
      guint n;
      g_autofree char *path = g_build_filename (system, name, NULL);
      g_autoptr(GError) error = NULL;
      int lock = -1;
      /* (a generation's lock held while it goes) */
      if (is_generation_name (name, &n) && n > current && !generation_lock (system, n, &lock))
        g_debug ("%s is held by a view; kept", path);
      else if (is_generation_name (name, &n) && n > current && unprivileged_view)
        {
          /* (which one such a view holds is not known) */
          g_debug ("%s may be held by a view without the launcher's setuid bit; kept", path);
          if (lock >= 0)
            close (lock);
        }
      else if (g_str_has_prefix (name, "base-") && is_generation_name (name + 5, &n)
               && n > current && base_named (system, n))
        g_debug ("%s is the base of a generation left; kept", path);
      else if (g_str_has_prefix (name, ".op-") || g_str_equal (name, "current.tmp")
               || (is_generation_name (name, &n) && n > current)
               || (g_str_has_prefix (name, "base-") && is_generation_name (name + 5, &n) && n > current))
        {
          g_debug ("removing %s, left by an interrupted operation", path);
          if (!gl_rm_rf (path, NULL, &error))
            g_debug ("%s", error->message);
          if (lock >= 0)
            close (lock);
        }
      else if (g_str_has_prefix (name, GL_SANDBOX_TRASH_PREFIX))
        {
          g_autoptr(GArray) fds = g_array_new (FALSE, FALSE, sizeof (int));
          if (trash_lock_all (path, fds))
            {
              g_debug ("removing %s, whose removal was interrupted", path);
              if (!gl_rm_rf (path, NULL, &error))
                g_debug ("%s", error->message);
            }
          else
            g_debug ("%s is being removed, or a view holds what it has; kept", path);
          for (guint i = 0; i < fds->len; i++)
            close (g_array_index (fds, int, i));
        }
    }
}

/* fsync() of the directory @dir, or syncfs() of its file system (@whole);
 * @shown: what it makes durable, for a message */
static gboolean
sync_dir (const char *dir, gboolean whole, const char *shown, GError **error)
{
  int fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 || (whole ? syncfs (fd) : fsync (fd)) != 0)
    {
      int errsv = errno;
      if (fd >= 0)
        close (fd);
      return errno_error (error, errsv, "Cannot write", shown);
    }
  close (fd);
  return TRUE;
}

/* system/current.tmp naming generation @n, not synced yet: a descriptor
 * of it, or -1 */
static int
write_current_tmp (const char *system, guint n, GError **error)
{
  g_autofree char *tmp = g_build_filename (system, "current.tmp", NULL);
  g_autofree char *text = g_strdup_printf ("%u\n", n);
  int fd = open (tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0)
    return errno_error (error, errno, "Cannot write", tmp), -1;
  if (write (fd, text, strlen (text)) != (ssize_t) strlen (text) || fchmod (fd, 0644) != 0)
    {
      int errsv = errno;
      close (fd);
      return errno_error (error, errsv, "Cannot write", tmp), -1;
    }
  return fd;
}

/* The switch: current.tmp, synced, renamed over `current`, and the rename
 * made durable before anything of the generation it replaced is removed
 * (the removal could otherwise reach the disk first, on a file system
 * that does not keep the order of metadata changes, and leave `current`
 * naming a removed generation) and before the command says it is done. */
static gboolean
publish_current (const char *system, GError **error)
{
  g_autofree char *tmp = g_build_filename (system, "current.tmp", NULL);
  g_autofree char *path = g_build_filename (system, "current", NULL);

  if (rename (tmp, path) != 0)
    return errno_error (error, errno, "Cannot replace", path);
  return sync_dir (system, FALSE, path, error);
}

static gboolean
write_current (const char *system, guint n, GError **error)
{
  g_autofree char *tmp = g_build_filename (system, "current.tmp", NULL);
  int fd = write_current_tmp (system, n, error);

  if (fd < 0)
    return FALSE;
  if (fsync (fd) != 0)
    {
      int errsv = errno;
      close (fd);
      return errno_error (error, errsv, "Cannot write", tmp);
    }
  close (fd);
  return publish_current (system, error);
}

static gboolean
make_lock_file (const char *path, GError **error)
{
  int fd = open (path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0)
    return errno_error (error, errno, "Cannot create", path);
  close (fd);
  return TRUE;
}

typedef struct {
  guint32 uid, gid;
} ShiftIds;

static gboolean
shift_one (int dfd, const char *name, const struct stat *st, const char *shown, gpointer data,
           GError **error)
{
  const ShiftIds *ids = data;
  if (st->st_uid < GL_PKG_RANGE || st->st_gid < GL_PKG_RANGE)
    {
      uid_t u = st->st_uid < GL_PKG_RANGE ? ids->uid + st->st_uid : st->st_uid;
      gid_t g = st->st_gid < GL_PKG_RANGE ? ids->gid + st->st_gid : st->st_gid;
      if (fchownat (dfd, name, u, g, AT_SYMLINK_NOFOLLOW) != 0)
        return errno_error (error, errno, "Cannot change the owner of", shown);
      /* chown clears set-id bits */
      if (!S_ISLNK (st->st_mode) && fchmodat (dfd, name, st->st_mode & 07777, 0) != 0)
        return errno_error (error, errno, "Cannot change the mode of", shown);
    }
  return TRUE;
}

/* Ids on disk shifted into the range (the conversion of a system layer
 * written by the host's root). */
static gboolean
shift_tree (int dfd, const char *name, guint32 uid, guint32 gid, const char *shown, GError **error)
{
  ShiftIds ids = { uid, gid };
  return walk_tree (dfd, name, shown, shift_one, &ids, error);
}

/* system/{upper,work} (the layout before generations) becomes
 * system/1/tree once; an empty one simply goes. */
static gboolean
convert_old_layout (GlPkgOp *op, GError **error)
{
  g_autofree char *upper = g_build_filename (op->system, "upper", NULL);
  g_autofree char *work = g_build_filename (op->system, "work", NULL);
  g_autofree char *gen = g_build_filename (op->system, "1", NULL);
  g_autofree char *tree = g_build_filename (gen, "tree", NULL);
  g_autofree char *lock = g_build_filename (gen, "lock", NULL);
  g_autoptr(GDir) d = NULL;
  gboolean empty;
  struct stat st;

  if (lstat (upper, &st) != 0 || !S_ISDIR (st.st_mode) || op->current != 0)
    return TRUE;
  d = g_dir_open (upper, 0, NULL);
  empty = d == NULL || g_dir_read_name (d) == NULL;
  if (!empty)
    {
      say (op, "Converting the system layer of “%s” to generations (owned by the ids of user "
           "“glimpse”)…", op->sandbox->id);
      if (!gl_rm_rf (gen, NULL, error) || !gl_mkdir (gen, 0755, error)
          || !shift_tree (AT_FDCWD, upper, op->uid, op->gid, upper, error)
          || (rename (upper, tree) != 0 && !errno_error (error, errno, "Cannot move", upper)))
        return FALSE;
      if (!make_lock_file (lock, error) || !write_current (op->system, 1, error))
        return FALSE;
      op->current = 1;
    }
  else if (!gl_rm_rf (upper, NULL, error))
    return FALSE;
  return gl_rm_rf (work, NULL, error);
}

/* apt's binary caches: pkgcache.bin and srcpkgcache.bin, the package
 * lists and dpkg's status as apt parsed them, which apt builds anew when
 * it has none (a fraction of a second for a few lists, seconds for a whole
 * archive's).  The sandbox's own configuration may turn them off (Docker
 * images do) or keep them in the system layer (every index change would
 * write tens of MB into the new generation), so glimpse's apt.conf puts
 * them in /run/glimpse-cache, the operation's <op>/apt-cache shown
 * writable there (glimpse-pkgns --cache).  An operation that makes a new
 * generation keeps them with it, in <generation>/apt-cache (root's, beside
 * its tree, never synced: apt checks a cache against the lists and status
 * it read, and builds it anew when it does not match or does not parse);
 * the next operation gets them there as links.  What that lets a hostile
 * package do to a later operation is what the generation itself lets it
 * do:
 *   - they are kept only with the generation the same operation made:
 *     whatever its namespace wrote into the caches (apt, or any maintainer
 *     script of its packages), it could as well leave in that generation's
 *     tree, which becomes the sandbox's system -- apt itself, its
 *     configuration, its lists, dpkg's status.  A crafted cache that apt
 *     takes as valid, or one that attacks apt's parser, reaches the next
 *     operation's apt, which a replaced /usr/bin/apt-get would be anyway;
 *   - an operation that makes no generation (failed, interrupted, killed,
 *     or one that changed nothing) keeps nothing: the caches the next
 *     operation gets are the ones kept with the generation it runs on;
 *     `glimpse reset` and a rebase start from generations without them;
 *   - the next operation gets them as links to root's files (mode 0644),
 *     whose owner its namespace does not map: it may read them and
 *     replace them (a rename in its own directory), never write into
 *     them, so they stay as kept for every later operation over that
 *     generation;
 *   - what is kept is a regular file of the namespace's root (or the
 *     link given, unchanged), made root's (which clears set-id bits) and
 *     moved, never followed, never read by glimpse. */
static const char * const apt_cache_files[] = { "pkgcache.bin", "srcpkgcache.bin" };

/* <op>/apt-cache, the namespace's, with links to what the current
 * generation kept */
static gboolean
apt_cache_prepare (GlPkgOp *op, GError **error)
{
  g_autofree char *dir = g_build_filename (op->dir, APT_CACHE_DIR, NULL);
  g_autofree char *num = g_strdup_printf ("%u", op->current);

  if (!gl_mkdir (dir, 0755, error))
    return FALSE;
  if (chown (dir, op->uid, op->gid) != 0)
    return errno_error (error, errno, "Cannot hand over", dir);
  for (gsize i = 0; op->current > 0 && i < G_N_ELEMENTS (apt_cache_files); i++)
    {
      g_autofree char *kept = g_build_filename (op->system, num, APT_CACHE_DIR, apt_cache_files[i], NULL);
      g_autofree char *given = g_build_filename (dir, apt_cache_files[i], NULL);
      if (link (kept, given) != 0 && errno != ENOENT)
        g_debug ("%s is not given to the operation: %s", kept, g_strerror (errno));
    }
  op->apt_cache = g_steal_pointer (&dir);
  return TRUE;
}

/* The caches of the operation into @gen/apt-cache, @gen the generation it
 * made (see above); what is not as it should be is left out */
static void
apt_cache_keep (GlPkgOp *op, const char *gen)
{
  g_autofree char *dir = NULL, *num = g_strdup_printf ("%u", op->current);
  int from, to;

  if (op->apt_cache == NULL)
    return;
  dir = g_build_filename (gen, APT_CACHE_DIR, NULL);
  from = open (op->apt_cache, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  to = from >= 0 && mkdir (dir, 0755) == 0 ? open (dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
  for (gsize i = 0; to >= 0 && i < G_N_ELEMENTS (apt_cache_files); i++)
    {
      const char *name = apt_cache_files[i];
      int fd = openat (from, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
      struct stat st, kept;
      g_autofree char *kept_path = g_build_filename (op->system, num, APT_CACHE_DIR, name, NULL);
      gboolean ok = FALSE;

      if (fd < 0 || fstat (fd, &st) != 0 || !S_ISREG (st.st_mode))
        ;
      else if (st.st_uid == 0)
        /* the link given, left as it was (the namespace makes no root's files) */
        ok = lstat (kept_path, &kept) == 0 && kept.st_dev == st.st_dev && kept.st_ino == st.st_ino
             && linkat (from, name, to, name, 0) == 0;
      else
        ok = st.st_uid == op->uid && st.st_gid == op->gid && st.st_nlink == 1
             && fchown (fd, 0, 0) == 0 && fchmod (fd, 0644) == 0 && renameat (from, name, to, name) == 0;
      if (fd >= 0 && !ok)
        g_debug ("apt's %s of the operation is not kept", name);
      if (fd >= 0)
        close (fd);
    }
  if (from >= 0)
    close (from);
  if (to >= 0)
    close (to);
}

/* In a generation made since glimpse keeps FIFOs out of generations
 * (defang_one, link_copy_at): an older one's tree may hold one */
#define NO_FIFO_MARK "no-fifo"

typedef struct {
  const char *tree;     /* the generation's tree */
  int upper;            /* the operation's upper layer */
  guint32 uid, gid;
  guint found;
} HideFifos;

/* Under @upper, the directory @rel (of @tree), made where missing with
 * the owner, mode and attributes of @tree's: a descriptor, or -1 */
static int
upper_dir_for (int upper, int tree, const char *rel, GError **error)
{
  g_auto(GStrv) parts = g_strsplit (rel, "/", -1);
  int u = dup (upper), t = dup (tree);

  for (char **p = parts; u >= 0 && t >= 0 && *p != NULL; p++)
    {
      int nu, nt;
      if (**p == '\0' || g_str_equal (*p, "."))
        continue;
      nt = open_dir_at (t, *p);
      if (nt < 0 || (mkdirat (u, *p, 0700) != 0 && errno != EEXIST))
        {
          errno_error (error, errno, "Cannot hide a FIFO of the sandbox under", rel);
          if (nt >= 0)
            close (nt);
          close (u);
          close (t);
          return -1;
        }
      nu = open_dir_at (u, *p);
      if (nu >= 0 && !copy_dir_attrs (nt, nu, rel, error))
        {
          close (nu);
          nu = -1;
        }
      else if (nu < 0)
        errno_error (error, errno, "Cannot open", rel);
      close (u);
      close (t);
      u = nu;
      t = nt;
      if (u < 0)
        break;
    }
  if (t >= 0)
    close (t);
  return u;
}

static gboolean
hide_fifo_one (int dfd, const char *name, const struct stat *st, const char *shown, gpointer data,
               GError **error)
{
  HideFifos *h = data;
  g_autofree char *rel = NULL;
  int tree, dir;
  gboolean ok;

  if (!S_ISFIFO (st->st_mode))
    return TRUE;
  h->found++;
  rel = g_path_get_dirname (shown + strlen (h->tree));
  tree = open_dir_at (AT_FDCWD, h->tree);
  if (tree < 0)
    return errno_error (error, errno, "Cannot open", h->tree);
  dir = upper_dir_for (h->upper, tree, rel, error);
  close (tree);
  if (dir < 0)
    return FALSE;
  ok = (mknodat (dir, name, S_IFCHR | 0, makedev (0, 0)) == 0 || errno == EEXIST)
       && fchownat (dir, name, h->uid, h->gid, AT_SYMLINK_NOFOLLOW) == 0;
  if (!ok)
    errno_error (error, errno, "Cannot hide the FIFO", shown);
  close (dir);
  return ok;
}

/* A FIFO blocks whoever opens it to read, for good (a trigger's
 * update-desktop-database in /usr/share/applications): one that an older
 * glimpse let into the current generation gets a whiteout in the
 * operation's upper layer, so the operation does not see it, nor the
 * generation it makes.  Generations made since are marked and not walked;
 * an older one found to hold none is marked then (its tree never changes;
 * the mark is beside it, not in it). */
static gboolean
hide_old_fifos (GlPkgOp *op, const char *upper, GError **error)
{
  g_autofree char *num = g_strdup_printf ("%u", op->current);
  g_autofree char *mark = g_build_filename (op->system, num, NO_FIFO_MARK, NULL);
  g_autofree char *tree = g_build_filename (op->system, num, "tree", NULL);
  HideFifos h = { tree, -1, op->uid, op->gid, 0 };
  gboolean ok;

  if (op->current == 0 || g_file_test (mark, G_FILE_TEST_EXISTS) || !g_file_test (tree, G_FILE_TEST_IS_DIR))
    return TRUE;
  h.upper = open_dir_at (AT_FDCWD, upper);
  if (h.upper < 0)
    return errno_error (error, errno, "Cannot open", upper);
  ok = walk_tree (AT_FDCWD, tree, tree, hide_fifo_one, &h, error);
  close (h.upper);
  if (ok && h.found == 0 && !g_file_set_contents_full (mark, "", 0, G_FILE_SET_CONTENTS_NONE, 0644, NULL))
    g_debug ("cannot write %s", mark);
  return ok;
}

GlPkgOp *
gl_pkg_op_begin (GlSandbox *sandbox, GlPkgProgress progress, gpointer user_data, GError **error)
{
  g_autoptr(GlPkgOp) op = g_new0 (GlPkgOp, 1);
  g_autofree char *lock = NULL, *tmpl = NULL;
  struct stat st;

  op->sandbox = sandbox;
  op->progress = progress;
  op->user_data = user_data;
  op->lock_fd = -1;
  op->disposer = -1;
  op->dispose_report = -1;
  op->system = g_build_filename (sandbox->path, "system", NULL);

  if (!gl_pkg_ensure_range ("/etc", &op->uid, &op->gid, error))
    return NULL;
  if (lstat (op->system, &st) != 0)
    {
      if (errno != ENOENT || !gl_mkdir (op->system, 0755, error))
        return errno == ENOENT ? NULL : (errno_error (error, errno, "Cannot open", op->system), NULL);
    }
  else if (!S_ISDIR (st.st_mode) || st.st_uid != 0 || (st.st_mode & 022))
    {
      g_set_error (error, GL_STORE_ERROR, GL_STORE_ERROR_PERMISSION,
                   "%s is not a root-owned directory writable only by root; the sandbox is damaged",
                   op->system);
      return NULL;
    }
  lock = g_build_filename (op->system, "op.lock", NULL);
  op->lock_fd = open (lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (op->lock_fd < 0)
    return errno_error (error, errno, "Cannot open", lock), NULL;
  if (flock (op->lock_fd, LOCK_EX | LOCK_NB) != 0)
    {
      say (op, "Waiting for another package operation on “%s” to finish…", sandbox->id);
      if (flock (op->lock_fd, LOCK_EX) != 0)
        return errno_error (error, errno, "Cannot lock", lock), NULL;
    }
  op->current = gl_pkg_current_generation (sandbox->path);
  remove_abandoned (op->system, op->current, !gl_sandbox_no_unprivileged_view (op->sandbox, NULL));
  op->next = MAX (op->current, generations_scan (op->system, 0, NULL)) + 1;
  if (!convert_old_layout (op, error))
    return NULL;
  /* what views that have ended since the last operation held */
  gl_pkg_op_reclaim (op);

  tmpl = g_build_filename (op->system, ".op-XXXXXX", NULL);
  /* Searchable by the range only (its root builds the view in it): what a
   * script leaves in upper/ (a program set-uid to the range, which owns
   * every sealed generation) is nobody else's to reach while it runs. */
  if (g_mkdtemp_full (tmpl, 0700) == NULL)
    return errno_error (error, errno, "Cannot create", tmpl), NULL;
  if (chown (tmpl, 0, op->gid) != 0 || chmod (tmpl, 0710) != 0)
    return errno_error (error, errno, "Cannot hand over", tmpl), NULL;
  op->dir = g_steal_pointer (&tmpl);
  op->input = g_build_filename (op->dir, "input", NULL);
  {
    g_autofree char *upper = g_build_filename (op->dir, "upper", NULL);
    g_autofree char *work = g_build_filename (op->dir, "work", NULL);
    if (!gl_mkdir (op->input, 0755, error) || !gl_mkdir (upper, 0755, error)
        || !gl_mkdir (work, 0755, error))
      return NULL;
    if (chown (upper, op->uid, op->gid) != 0 || chown (work, op->uid, op->gid) != 0)
      return errno_error (error, errno, "Cannot hand over", upper), NULL;
    if (!hide_old_fifos (op, upper, error))
      return NULL;
  }
  if (g_strcmp0 (sandbox->family, "apt") == 0 && !apt_cache_prepare (op, error))
    return NULL;
  return g_steal_pointer (&op);
}

const char *
gl_pkg_op_get_input_dir (GlPkgOp *op)
{
  return op->input;
}

const char *
gl_pkg_op_get_dir (GlPkgOp *op)
{
  return op->dir;
}

void
gl_pkg_op_set_progress (GlPkgOp *op, GlPkgProgress progress, gpointer user_data)
{
  op->progress = progress;
  op->user_data = user_data;
}

void
gl_pkg_op_set_new_base (GlPkgOp *op, const char *base, const char *release, const char *follows)
{
  g_return_if_fail (!op->ran);
  g_free (op->new_base);
  op->new_base = g_strdup (base);
  g_free (op->new_release);
  op->new_release = g_strdup (release);
  g_free (op->new_follows);
  op->new_follows = g_strdup (follows);
}

/* The walk of the base for the walk's cache, after an operation whose
 * command ended before the walk beside it began (glimpse-pkgns:
 * WALK_BESIDE_DELAY_MS): glimpse-pkgns --walk-refresh in a session of its
 * own, its output nowhere, not waited for.  Started with posix_spawn (no
 * copy of glimpse's memory: two forks of it, as the trash's remover is
 * started, took 1-3 ms of the operation's end here); it ends as a child
 * of ours, reaped by init once we have ended.  It holds the cache's lock
 * (the cache's path and ".lock", taken here and inherited as its
 * descriptor 3) until it ends: none is started while another runs, and an
 * operation's walker does not write the cache meanwhile.  If it cannot
 * start, the next operation masks from the cache as it is, as one does
 * after an operation killed before its walk ended. */
static void
walk_refresh_start (GlPkgOp *op)
{
  static char *const envp[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", NULL };
  g_autoptr(GPtrArray) argv = g_steal_pointer (&op->walk_refresh);
  g_autofree char *lock_path = NULL;
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  sigset_t none, dfl;
  pid_t pid;
  int lock, err;

  if (argv == NULL)
    return;
  lock_path = g_strconcat (op->walk_cache, ".lock", NULL);
  lock = open (lock_path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (lock < 0 || flock (lock, LOCK_EX | LOCK_NB) != 0)
    {
      if (lock >= 0)
        close (lock);
      return;
    }
  g_ptr_array_add (argv, g_strdup ("--walk-lock-fd"));
  g_ptr_array_add (argv, g_strdup ("3"));
  g_ptr_array_add (argv, NULL);
  /* the lock at 3 first (it may be 0-2, when we were started without
   * them), /dev/null on 0-2, nothing else; at /, not our directory */
  if ((err = posix_spawn_file_actions_init (&actions)) != 0)
    {
      g_debug ("Cannot start %s: %s", (char *) argv->pdata[0], g_strerror (err));
      close (lock);
      return;
    }
  if ((err = posix_spawnattr_init (&attr)) != 0)
    {
      g_debug ("Cannot start %s: %s", (char *) argv->pdata[0], g_strerror (err));
      posix_spawn_file_actions_destroy (&actions);
      close (lock);
      return;
    }
  /* (every signal default, not only those glimpse itself may catch or
   * ignore: one ignored by whoever started glimpse -- nohup, a shell's
   * background job -- would otherwise stay ignored through the exec) */
  sigemptyset (&none);
  sigfillset (&dfl);
  /* (a step that cannot be recorded -- no memory -- is a walk not
   * started, never one started without it: without its lock at 3, or
   * with glimpse's output) */
  if ((err = posix_spawn_file_actions_adddup2 (&actions, lock, 3)) == 0
      && (err = posix_spawn_file_actions_addopen (&actions, 0, "/dev/null", O_RDWR, 0)) == 0
      && (err = posix_spawn_file_actions_adddup2 (&actions, 0, 1)) == 0
      && (err = posix_spawn_file_actions_adddup2 (&actions, 0, 2)) == 0
      && (err = posix_spawn_file_actions_addclosefrom_np (&actions, 4)) == 0
      && (err = posix_spawn_file_actions_addchdir_np (&actions, "/")) == 0
      && (err = posix_spawnattr_setsigmask (&attr, &none)) == 0
      && (err = posix_spawnattr_setsigdefault (&attr, &dfl)) == 0
      && (err = posix_spawnattr_setflags (&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK
                                                 | POSIX_SPAWN_SETSIGDEF)) == 0)
    err = posix_spawn (&pid, argv->pdata[0], &actions, &attr, (char *const *) argv->pdata, envp);
  if (err != 0)
    g_debug ("Cannot start %s: %s", (char *) argv->pdata[0], g_strerror (err));
  posix_spawnattr_destroy (&attr);
  posix_spawn_file_actions_destroy (&actions);
  close (lock);
}

void
gl_pkg_op_free (GlPkgOp *op)
{
  if (op == NULL)
    return;
  /* (first: the operation's last process may still be ending; the
   * remover of a trash handed over meanwhile starts beside the wait) */
  g_clear_pointer (&op->limits, gl_pkg_limits_free);
  trash_dispose_finish (op);
  prepare_next_drop (op);
  if (op->dir)
    {
      g_autoptr(GError) error = NULL;
      if (!gl_rm_rf (op->dir, NULL, &error))
        g_debug ("%s", error->message);
    }
  trash_dispose (op);
  walk_refresh_start (op);
  if (op->lock_fd >= 0)
    close (op->lock_fd);
  if (op->extra_uris)
    g_ptr_array_unref (op->extra_uris);
  g_free (op->system);
  g_free (op->dir);
  g_free (op->input);
  g_free (op->apt_cache);
  g_free (op->new_release);
  g_free (op->new_follows);
  g_free (op->new_base);
  g_clear_pointer (&op->walk_refresh, g_ptr_array_unref);
  g_free (op->walk_cache);
  g_free (op);
}

void
gl_pkg_op_set_network (GlPkgOp *op, GlPkgNetwork network)
{
  op->network = network;
}

void
gl_pkg_op_allow_uri (GlPkgOp *op, const char *uri)
{
  if (op->extra_uris == NULL)
    op->extra_uris = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (op->extra_uris, g_strdup (uri));
}

/* Every http(s):// URL in the lines of @text that are not comments */
static void
add_uris_in_text (GPtrArray *uris, const char *text)
{
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  for (char **l = lines; *l; l++)
    {
      const char *p = *l;
      while (g_ascii_isspace (*p))
        p++;
      if (*p == '#' || *p == ';')
        continue;
      while ((p = strstr (p, "http")) != NULL)
        {
          gsize n;
          if (!g_str_has_prefix (p, "http://") && !g_str_has_prefix (p, "https://"))
            {
              p += 4;
              continue;
            }
          n = strcspn (p, " \t\r\"',;");
          g_ptr_array_add (uris, g_strndup (p, n));
          p += n;
        }
    }
}

/* The regular file @rel of @root, or every regular file in the directory
 * @rel when @dir.  The base is an image's or a bootstrap's tree (or the
 * host's /), read here as root: no link is followed, on the way or at the
 * end (it is skipped), nothing but regular files of at most 4 MiB read
 * (gl_tree_*). */
static void
add_uris_in_files (GPtrArray *uris, const char *root, const char *rel, gboolean dir, const char *suffix)
{
  g_autoptr(GError) error = NULL;
  DIR *d = NULL;
  struct dirent *e;
  int fd;

  if (!dir)
    {
      g_autofree char *text = NULL;
      if (gl_tree_read_file_max (root, rel, 4 * 1024 * 1024, &text, NULL, &error))
        add_uris_in_text (uris, text);
      else if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND))
        g_debug ("%s", error->message);
      return;
    }
  fd = gl_tree_open_dir (root, rel, &error);
  if (fd < 0 || (d = fdopendir (fd)) == NULL)
    {
      if (fd >= 0)
        close (fd);
      else if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND))
        g_debug ("%s", error->message);
      return;
    }
  while ((e = readdir (d)) != NULL)
    if (!g_str_equal (e->d_name, ".") && !g_str_equal (e->d_name, "..")
        && (suffix == NULL || g_str_has_suffix (e->d_name, suffix)))
      {
        g_autofree char *child = g_build_filename (rel, e->d_name, NULL);
        add_uris_in_files (uris, root, child, FALSE, NULL);
      }
  closedir (d);
}

GStrv
gl_pkg_repository_uris (GlSandbox *sandbox, const char *base, GStrv *unknown)
{
  g_autoptr(GPtrArray) uris = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GStrvBuilder) missing = g_strv_builder_new ();
  g_autoptr(GlConfig) conf = NULL;
  g_autoptr(GError) conf_error = NULL;

  /* the base's own configuration: the host's, or the tree glimpse made
   * at creation (or rebase); package operations never write it */
  if (g_strcmp0 (sandbox->family, "apt") == 0)
    {
      g_autoptr(GError) error = NULL;
      /* (a host sandbox's base is the host's own /: its links are the
       * administrator's) */
      g_autoptr(GPtrArray) sources = g_strcmp0 (sandbox->base, GL_BASE_HOST) == 0
                                     ? gl_apt_sources_read (base, &error)
                                     : gl_apt_sources_read_tree (base, &error);
      if (sources == NULL)
        g_debug ("The apt sources of %s: %s", base, error->message);
      for (guint i = 0; sources && i < sources->len; i++)
        {
          GlAptSource *src = sources->pdata[i];
          if (src->enabled)
            g_ptr_array_add (uris, g_strdup (src->uri));
        }
    }
  else
    {
      add_uris_in_files (uris, base, "etc/yum.repos.d", TRUE, ".repo");
      add_uris_in_files (uris, base, "etc/dnf/dnf.conf", FALSE, NULL);
      add_uris_in_files (uris, base, "etc/pacman.conf", FALSE, NULL);
      add_uris_in_files (uris, base, "etc/pacman.d", TRUE, NULL);
      add_uris_in_files (uris, base, "etc/apk/repositories", FALSE, NULL);
    }
  /* the repositories glimpse added, as it recorded them */
  for (char **r = sandbox->repositories; r && *r; r++)
    {
      g_autofree char *prefix = g_strconcat (*r, "=", NULL);
      gboolean found = FALSE;
      for (char **u = sandbox->repository_uris; u && *u; u++)
        if (g_str_has_prefix (*u, prefix))
          {
            g_ptr_array_add (uris, g_strdup (*u + strlen (prefix)));
            found = TRUE;
          }
      if (!found)
        g_strv_builder_add (missing, *r);
    }
  /* the administrator's mirrors (a glimpse.conf that cannot be read or
   * has a bad limit: the operation fails at its limits,
   * gl_pkg_limits_prepare, which reads the same file) */
  conf = gl_config_load_default (&conf_error);
  if (conf == NULL)
    g_debug ("%s", conf_error->message);
  for (char **m = conf ? conf->mirrors : NULL; m && *m; m++)
    g_ptr_array_add (uris, g_strdup (*m));
  if (unknown)
    *unknown = g_strv_builder_end (missing);
  g_ptr_array_add (uris, NULL);
  return (GStrv) g_ptr_array_free (g_steal_pointer (&uris), FALSE);
}

/* The operation's proxy, allowed the sandbox's repositories */
static GlPkgProxy *
make_proxy (GlPkgOp *op, const char *base)
{
  GlPkgProxy *proxy = gl_pkg_proxy_new ();
  g_auto(GStrv) unknown = NULL;
  g_auto(GStrv) uris = gl_pkg_repository_uris (op->sandbox, base, &unknown);

  for (char **u = uris; *u; u++)
    if (!gl_pkg_proxy_allow (proxy, *u))
      g_debug ("Not a repository address the proxy can allow: %s", *u);
  for (guint i = 0; op->extra_uris && i < op->extra_uris->len; i++)
    gl_pkg_proxy_allow (proxy, op->extra_uris->pdata[i]);
  for (char **n = unknown; *n; n++)
    say (op, "glimpse: the repository %s was added by an older glimpse, which did not record its "
         "address; downloads from it are refused until it is added again (glimpse add-repo)", *n);
  return proxy;
}

static const char *
pkgns_path (void)
{
  return gl_paths_pkgns ();
}

typedef struct {
  GlPkgOp *op;       /* (NULL: a hook in a tree) */
  GlPkgProgress progress;
  gpointer user_data;
  GPtrArray *tail;   /* the error lines, for the message */
  char *signer;      /* the key of a signature apt had no key for */
  gboolean unmet;    /* within apt's list of unmet dependencies */
  const char *id;    /* the sandbox's, when installing into it; else NULL */
  gboolean err;      /* the last line was apt's "Err:N URL …" */
  char *answer;      /* the answer of the last fetch that failed ("404  Not Found") */
} RunState;

/* The key id after @marker in @line ("NO_PUBKEY 0123…" from gpgv, "Missing
 * key 0123…," from sqv), or NULL. */
static char *
key_after (const char *line, const char *marker)
{
  const char *p = strstr (line, marker);
  gsize n = 0;

  if (p == NULL)
    return NULL;
  p += strlen (marker);
  while (g_ascii_isxdigit (p[n]))
    n++;
  return n >= 8 ? g_strndup (p, n) : NULL;
}

static void
on_line (const char *raw, gpointer data)
{
  RunState *rs = data;
  g_autofree char *line = gl_printable (raw);
  g_autofree char *signer = NULL;

  /* (the command runs: the walk of the base is over) */
  if (rs->op != NULL)
    prepare_next_start (rs->op);
  if (rs->progress)
    rs->progress (line, rs->user_data);
  if (rs->signer == NULL
      && ((signer = key_after (line, "NO_PUBKEY ")) != NULL || (signer = key_after (line, "Missing key ")) != NULL))
    rs->signer = g_steal_pointer (&signer);
  /* apt's "E: Unable to correct problems, you have held broken packages"
   * names neither the package nor the dependency: its list above does
   * (" foo : Depends: bar (>= 2) but it is not installable", a further
   * dependency of foo on a line of its own, indented) */
  if (rs->unmet && line[0] == ' ' && rs->tail->len < 8)
    {
      g_autoptr(GString) one = g_string_new (NULL);
      g_auto(GStrv) words = g_strsplit_set (line, " ", -1);

      for (gsize i = 0; words[i] != NULL; i++)
        if (words[i][0] != '\0')
          g_string_append_printf (one, "%s%s", one->len ? " " : "", words[i]);
      g_ptr_array_add (rs->tail, g_string_free (g_steal_pointer (&one), FALSE));
      return;
    }
  rs->unmet = g_str_equal (line, "The following packages have unmet dependencies:");
  /* "Err:2 URL SUITE Release" then "  404  Not Found [IP: …]": the reason
   * the E: line below it leaves out */
  if (rs->err && line[0] == ' ')
    {
      const char *ip = strstr (line, " [IP: ");

      g_free (rs->answer);
      rs->answer = g_strstrip (ip != NULL ? g_strndup (line, ip - line) : g_strdup (line));
    }
  rs->err = g_str_has_prefix (line, "Err:");
  if ((g_str_has_prefix (line, "E: ") || g_str_has_prefix (line, "glimpse-pkgns: ")
       || g_str_has_prefix (line, "dpkg: error")) && rs->tail->len < 8)
    {
      /* apt says "is not signed" for a release signed by a key it was not
       * given: say by which */
      if (rs->signer != NULL && g_str_has_prefix (line, "E: ") && g_str_has_suffix (line, "' is not signed."))
        g_ptr_array_add (rs->tail, g_strdup_printf ("%.*s' is signed by key %s, not by the key it is trusted "
                                                    "with (for add-repo: the one given with --key); get "
                                                    "the repository's signing key from its publisher, check "
                                                    "that its fingerprint ends in %s, and give it to "
                                                    "“glimpse add-repo” with --key",
                                                    (int) (strlen (line) - strlen ("' is not signed.")), line,
                                                    rs->signer, rs->signer));
      /* an install reads only the indexes the sandbox has (glimpse(1)):
       * a package published since is missing until an update */
      else if (rs->id != NULL && g_str_has_prefix (line, "E: Unable to locate package "))
        g_ptr_array_add (rs->tail, g_strdup_printf ("%s (not in the package indexes the sandbox has: check "
                                                    "the name; one published since they were fetched needs "
                                                    "“sudo glimpse update %s” first)", line, rs->id));
      /* "does not have a Release file": what the server said, and where
       * the mistake usually is */
      else if (g_str_has_prefix (line, "E: The repository '") && g_str_has_suffix (line, "' does not have a Release file."))
        g_ptr_array_add (rs->tail, g_strdup_printf ("%s%s%s%s check the repository's address and suite (a flat "
                                                    "repository's suite is “./”)", line,
                                                    rs->answer != NULL ? " (the server answered “" : "",
                                                    rs->answer != NULL ? rs->answer : "",
                                                    rs->answer != NULL ? "”);" : ""));
      else
        g_ptr_array_add (rs->tail, g_strdup (line));
    }
}

/* Runs glimpse-pkgns (@argv: the program and its options, --op @op_dir
 * among them) within the limits of gl-pkg-limits.h, showing @input
 * inside, with /bin/sh -c @script and @args as $1…, (@options: what else
 * it is given, a descriptor to pass), its lines to
 * @progress; an error says what failed (@what) and that @unchanged (if
 * not NULL) is unchanged.  @op: the operation it runs (NULL: a hook in a
 * tree), whose next tree is made from the command's first line on
 * (prepare_next_start). */
static gboolean
spawn_pkgns (GlPkgOp *op, GPtrArray *argv, GlSpawnOptions *options, const char *op_dir, const char *input,
             const char *script, const char * const *args, const char *what, const char *unchanged,
             GlPkgProgress progress, gpointer user_data, GCancellable *cancellable, GError **error)
{
  g_autoptr(GError) local = NULL;
  g_auto(GlSpawnResult) result = { 0 };
  g_autoptr(GPtrArray) tail = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *signer = NULL;
  RunState rs = { op, progress, user_data, tail, NULL, FALSE,
                  g_str_has_prefix (what, "installing ") ? unchanged : NULL, FALSE, NULL };
  gboolean ran;
  g_autoptr(GlPkgLimits) limits = NULL;
  g_autofree char *warning = NULL;
  g_autofree char *stopped_path = g_build_filename (op_dir, "stopped-by", NULL);
  g_autofree char *stopped = NULL;
  int status;

  limits = gl_pkg_limits_prepare (argv, &warning, error);
  if (limits == NULL)
    return FALSE;
  if (warning != NULL && progress != NULL)
    progress (warning, user_data);
  g_ptr_array_add (argv, g_strdup ("--input"));
  g_ptr_array_add (argv, g_strdup (input));
  g_ptr_array_add (argv, g_strdup ("--"));
  g_ptr_array_add (argv, g_strdup ("/bin/sh"));
  g_ptr_array_add (argv, g_strdup ("-c"));
  g_ptr_array_add (argv, g_strdup (script));
  g_ptr_array_add (argv, g_strdup ("sh"));
  for (guint i = 0; args && args[i]; i++)
    g_ptr_array_add (argv, g_strdup (args[i]));
  g_ptr_array_add (argv, NULL);
  /* Its output is a pipe we make, as host root.  A trigger in there that
   * follows a package's link to its own output (/proc/self/fd/1,
   * /dev/stdout, /dev/stderr) - update-mime-database over
   * /usr/share/mime/packages, the case as it was reported; glimpse never
   * runs it itself - does not wait on it: the pipe's owner, host root, is
   * no id of the namespace, whose root may then not open it (EACCES), and
   * the file is skipped (tests/pkg/test-pkg-own-output.sh).  A FIFO
   * cannot be made or shown there (174ce80).  What a read there can still
   * wait on (/dev/ptmx; a pipe of apt's or dpkg's through /proc/PID/fd; as
   * simply an apt.conf.d hook that sleeps) keeps the operation only until
   * MaxSeconds= or Ctrl-C, inside the namespace, and changes nothing: no
   * more than any hostile maintainer script can do to its own sandbox. */
  options->output = GL_SPAWN_OUTPUT_LINES;
  options->line_func = on_line;
  options->line_data = &rs;
  ran = gl_spawn_run ((const char * const *) argv->pdata, options, &result, cancellable, &local);
  signer = rs.signer;   /* freed with this frame */
  g_clear_pointer (&rs.answer, g_free);
  /* glimpse-pkgns ends once nothing of the sandbox runs; the teardown of
   * its view's mount namespace may go on (its supervise()), in the
   * cgroups: an operation's are removed when it is freed, after the
   * commit, which that teardown need not hold */
  if (ran && op != NULL)
    op->limits = g_steal_pointer (&limits);
  if (ran)
    return TRUE;
  status = result.wait_status;
  /* (written by glimpse-pkgns, the host's root, where the namespace writes nothing) */
  if (g_file_get_contents (stopped_path, &stopped, NULL, NULL))
    {
      g_autofree char *why = gl_pkg_limits_describe (limits, g_strstrip (stopped));
      g_set_error (error, GL_PKG_ERROR, GL_PKG_ERROR_LIMIT, "%s was stopped: %s%s%s%s", what, why,
                   unchanged ? "; “" : "", unchanged ? unchanged : "", unchanged ? "” is unchanged" : "");
      return FALSE;
    }
  if (g_error_matches (local, G_IO_ERROR, G_IO_ERROR_CANCELLED)
      || (WIFSIGNALED (status) && (WTERMSIG (status) == SIGINT || WTERMSIG (status) == SIGTERM)))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "Interrupted while %s%s%s%s", what,
                   unchanged ? "; “" : "", unchanged ? unchanged : "", unchanged ? "” is unchanged" : "");
      return FALSE;
    }
  if (!g_error_matches (local, GL_SPAWN_ERROR, GL_SPAWN_ERROR_FAILED))
    {
      g_propagate_prefixed_error (error, g_steal_pointer (&local), "Cannot start %s: ", pkgns_path ());
      return FALSE;
    }
  {
    g_autofree char *last = NULL;
    gboolean setup = WIFEXITED (status) && WEXITSTATUS (status) == 125;
    if (tail->len > 0)
      {
        g_ptr_array_add (tail, NULL);
        last = g_strjoinv ("; ", (char **) tail->pdata);
      }
    g_set_error (error, GL_PKG_ERROR, setup ? GL_PKG_ERROR_SETUP : GL_PKG_ERROR_FAILED,
                 "%s%s failed (%s %d)%s%s%s%s%s",
                 setup ? "Preparing the package namespace for " : "",
                 what, WIFEXITED (status) ? "exit status" : "signal",
                 WIFEXITED (status) ? WEXITSTATUS (status) : WTERMSIG (status),
                 last ? ": " : "", last ? last : "",
                 unchanged ? "; “" : "", unchanged ? unchanged : "", unchanged ? "” is unchanged" : "");
  }
  return FALSE;
}

gboolean
gl_pkg_op_run (GlPkgOp *op, const char *what, const char *script, const char * const *args,
               GCancellable *cancellable, GError **error)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *ids = g_strdup_printf ("%u:%u", op->uid, op->gid);
  g_autofree char *rootfs = gl_sandbox_get_rootfs (op->sandbox);
  g_autofree char *tree = NULL;
  g_autofree char *store_parent = g_path_get_dirname (gl_paths_store_dir ());
  GlSpawnOptions options = { .output = GL_SPAWN_OUTPUT_LINES };
  g_autoptr(GlPkgProxy) proxy = NULL;
  g_autoptr(GPtrArray) walk = NULL;
  int relay_fd = -1, log_fd = -1;
  gboolean ok;

  g_return_val_if_fail (!op->ran, FALSE);
  op->ran = TRUE;
  /* apt's configuration read last (-c on its command line:
   * gl_pkg_apt_command): its binary caches
   * (see "apt's binary caches"), the proxy of an operation that downloads.
   * (Scratch, as the next: root's directory of the operation, read by the
   * namespace; nothing of it is kept, so nothing synced.) */
  if (op->apt_cache != NULL || op->network != GL_PKG_NETWORK_NONE)
    {
      g_autofree char *conf = g_build_filename (op->input, "apt-proxy.conf", NULL);
      g_autofree char *main_conf = g_build_filename (op->input, "apt-caches.conf", NULL);
      g_autoptr(GString) text = g_string_new ("// glimpse: written for this operation\n");
      if (op->apt_cache != NULL)
        g_string_append (text, "Dir::Cache::pkgcache \"/run/glimpse-cache/pkgcache.bin\";\n"
                               "Dir::Cache::srcpkgcache \"/run/glimpse-cache/srcpkgcache.bin\";\n");
      /* the view's architectures, read here, so that no run of apt asks
       * dpkg for them (a dpkg run per apt-get, apt-config and
       * apt-extracttemplates, and after dpkg's: ~10 per install) */
      if (op->apt_cache != NULL)
        {
          g_autofree char *num = g_strdup_printf ("%u", op->current);
          g_autofree char *cur = op->current > 0 && op->new_base == NULL
                                   ? g_build_filename (op->system, num, "tree", NULL) : NULL;
          g_autofree char *archs = gl_pkg_apt_architectures (cur, op->new_base ? op->new_base
                                                                  : rootfs ? rootfs : "/");
          g_auto(GStrv) each = archs ? g_strsplit (archs, " ", -1) : NULL;

          if (each != NULL)
            {
              g_string_append (text, "// the view's architectures (dpkg's status and arch file)\n"
                                     "#clear APT::Architectures;\nAPT::Architectures {");
              for (char **a = each; *a; a++)
                g_string_append_printf (text, " \"%s\";", *a);
              g_string_append (text, " };\n");
            }
          /* The same for the apt programs that apt-get does not start
           * with -c: apt-extracttemplates (run by debconf's
           * dpkg-preconfigure for every install) would otherwise build
           * apt's cache in memory (~15 ms) where the sandbox's
           * configuration turns the cache files off (a container's
           * docker-clean), and ask dpkg for the architectures three times.
           * Read as apt's main file, after the sandbox's apt.conf.d (a
           * setting of the sandbox's may name another: speed only). */
          if (!g_file_set_contents_full (main_conf, text->str, -1, G_FILE_SET_CONTENTS_NONE, 0644, error))
            return FALSE;
        }
      if (op->network != GL_PKG_NETWORK_NONE)
        g_string_append_printf (text,
          "// downloads go through glimpse's proxy (the only way out)\n"
          "#clear Acquire::http::Proxy;\n#clear Acquire::https::Proxy;\n"
          "Acquire::http::Proxy \"http://127.0.0.1:%d\";\n"
          "Acquire::https::Proxy \"http://127.0.0.1:%d\";\n", GL_PKG_PROXY_PORT, GL_PKG_PROXY_PORT);
      /* The cut (glimpse-pkgns --net-until-cut): the last DPkg::Pre-Invoke
       * entry, after the sandbox's own (this file is read last, after
       * every configuration file: a Dir::Etc::main or Dir::Etc::parts of
       * the sandbox's cannot keep it from being read).  apt runs
       * DPkg::Pre-Invoke first thing when it is about to run dpkg
       * (pkgDPkgPM::Go), before DPkg::Pre-Install-Pkgs (debconf's
       * dpkg-preconfigure, which runs the new packages' config scripts)
       * and before dpkg itself, and stops without running dpkg when an
       * entry fails.  The hook asks PID 1 of the operation for the cut and
       * waits for its answer, which comes once the network is gone; with
       * no answer "offline", it fails.  Shell built-ins only. */
      if (op->network == GL_PKG_NETWORK_UNTIL_CUT)
        g_string_append (text, "// the network is cut before dpkg runs\n"
                               "DPkg::Pre-Invoke { \"" GL_PKG_CUT_HOOK "\"; };\n");
      if (!g_file_set_contents_full (conf, text->str, -1, G_FILE_SET_CONTENTS_NONE, 0644, error))
        return FALSE;
    }
  if (op->network != GL_PKG_NETWORK_NONE)
    {
      g_autofree char *base = op->new_base ? g_strdup (op->new_base) : rootfs ? gl_pkg_base_tree (op->sandbox)
                                                                              : g_strdup ("/");
      proxy = make_proxy (op, base);
      if (!gl_pkg_proxy_start (proxy, &relay_fd, &log_fd, error))
        return FALSE;
      options.pass_fd = relay_fd;
      options.pass_fd_as = 3;
      options.extra_lines_fd = log_fd;
    }
  g_ptr_array_add (argv, g_strdup (pkgns_path ()));
  g_ptr_array_add (argv, g_strdup ("--ids"));
  g_ptr_array_add (argv, g_strdup (ids));
  g_ptr_array_add (argv, g_strdup ("--base"));
  g_ptr_array_add (argv, g_strdup (op->new_base ? op->new_base : rootfs ? rootfs : "/"));
  if (rootfs == NULL && op->new_base == NULL)
    g_ptr_array_add (argv, g_strdup ("--host"));
  g_ptr_array_add (argv, g_strdup ("--op"));
  g_ptr_array_add (argv, g_strdup (op->dir));
  if (op->network == GL_PKG_NETWORK_PROXY)
    g_ptr_array_add (argv, g_strdup ("--net"));
  else if (op->network == GL_PKG_NETWORK_FETCH_FIRST)
    g_ptr_array_add (argv, g_strdup ("--fetch-stage"));
  else if (op->network == GL_PKG_NETWORK_UNTIL_CUT)
    g_ptr_array_add (argv, g_strdup ("--net-until-cut"));
  if (op->network != GL_PKG_NETWORK_NONE)
    {
      g_ptr_array_add (argv, g_strdup ("--proxy-fd"));
      g_ptr_array_add (argv, g_strdup ("3"));
    }
  /* (a rebase starts from the new base alone) */
  if (op->current > 0 && op->new_base == NULL)
    {
      g_autofree char *num = g_strdup_printf ("%u", op->current);
      tree = g_build_filename (op->system, num, "tree", NULL);
      g_ptr_array_add (argv, g_strdup ("--lower"));
      g_ptr_array_add (argv, g_strdup (tree));
    }
  /* The sandbox stores (users' layers), the download cache */
  g_ptr_array_add (argv, g_strdup ("--hide"));
  g_ptr_array_add (argv, g_strdup (store_parent));
  if (!g_str_equal (store_parent, GL_SANDBOX_DIR) && !g_str_has_prefix (GL_SANDBOX_DIR, store_parent))
    {
      g_ptr_array_add (argv, g_strdup ("--hide"));
      g_ptr_array_add (argv, g_path_get_dirname (GL_SANDBOX_DIR));
    }
  g_ptr_array_add (argv, g_strdup ("--hide"));
  g_ptr_array_add (argv, g_strdup (gl_paths_cache_dir ()));
  if (op->apt_cache != NULL)
    {
      g_ptr_array_add (argv, g_strdup ("--cache"));
      g_ptr_array_add (argv, g_strdup (op->apt_cache));
    }
  /* What the walk of the base found, for the next operation over the same
   * base (system/ is root's alone, and hidden above) */
  if (op->new_base == NULL)
    {
      g_free (op->walk_cache);
      op->walk_cache = g_build_filename (op->system, "walk-cache", NULL);
      /* (the walk after the operation, if it is left to one, walks the
       * same base and skips the same paths: walk_refresh_start) */
      walk = g_ptr_array_new_with_free_func (g_free);
      g_ptr_array_add (walk, g_strdup (pkgns_path ()));
      g_ptr_array_add (walk, g_strdup ("--walk-refresh"));
      for (guint i = 1; i < argv->len; i++)
        if (g_str_equal (argv->pdata[i], "--base") || g_str_equal (argv->pdata[i], "--hide"))
          {
            g_ptr_array_add (walk, g_strdup (argv->pdata[i]));
            g_ptr_array_add (walk, g_strdup (argv->pdata[++i]));
          }
        else if (g_str_equal (argv->pdata[i], "--host"))
          g_ptr_array_add (walk, g_strdup ("--host"));
      g_ptr_array_add (walk, g_strdup ("--walk-cache"));
      g_ptr_array_add (walk, g_strdup (op->walk_cache));
      g_ptr_array_add (argv, g_strdup ("--walk-cache"));
      g_ptr_array_add (argv, g_strdup (op->walk_cache));
    }
  ok = spawn_pkgns (op, argv, &options, op->dir, op->input, script, args, what, op->sandbox->id, op->progress,
                    op->user_data, cancellable, error);
  /* (the command ended before the walk beside it began: glimpse-pkgns
   * said so in the operation's directory, which only root writes) */
  if (walk != NULL)
    {
      g_autofree char *pending = g_build_filename (op->dir, "walk-pending", NULL);
      struct stat st;
      if (lstat (pending, &st) == 0 && S_ISREG (st.st_mode))
        {
          g_clear_pointer (&op->walk_refresh, g_ptr_array_unref);
          op->walk_refresh = g_steal_pointer (&walk);
        }
    }
  if (relay_fd >= 0)
    close (relay_fd);
  g_clear_pointer (&proxy, gl_pkg_proxy_free);
  if (log_fd >= 0)
    close (log_fd);
  return ok;
}

gboolean
gl_pkg_run_in_tree (const char *tree, const char *what, const char *script, const char * const *args,
                    const char * const *inputs, GlPkgProgress progress, gpointer user_data,
                    GCancellable *cancellable, GError **error)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *parent = g_path_get_dirname (tree);
  g_autofree char *scratch = g_build_filename (parent, ".hook-XXXXXX", NULL);
  g_autofree char *input = NULL;
  g_autoptr(GError) cleanup_error = NULL;
  guint32 uid, gid;
  gboolean ok;

  if (!gl_pkg_ensure_range ("/etc", &uid, &gid, error))
    return FALSE;
  /* Beside the tree (removed with it when the build fails or is killed);
   * searchable by root and the range's root only, like an operation's */
  if (g_mkdtemp_full (scratch, 0700) == NULL)
    return errno_error (error, errno, "Cannot create", scratch);
  input = g_build_filename (scratch, "input", NULL);
  ok = chown (scratch, 0, gid) == 0 && chmod (scratch, 0710) == 0;
  if (!ok)
    errno_error (error, errno, "Cannot hand over", scratch);
  else
    ok = gl_mkdir (input, 0755, error);
  for (guint i = 0; ok && inputs != NULL && inputs[i] != NULL; i++)
    {
      g_autofree char *name = g_strdup_printf ("%u", i);
      g_autofree char *dst = g_build_filename (input, name, NULL);
      g_autofree char *text = NULL;
      gsize len = 0;

      ok = g_file_get_contents (inputs[i], &text, &len, error)
           && g_file_set_contents_full (dst, text, (gssize) len, G_FILE_SET_CONTENTS_NONE, 0644, error);
    }
  if (ok)
    {
      g_ptr_array_add (argv, g_strdup (pkgns_path ()));
      g_ptr_array_add (argv, g_strdup ("--ids"));
      g_ptr_array_add (argv, g_strdup_printf ("%u:%u", uid, gid));
      g_ptr_array_add (argv, g_strdup ("--tree"));
      g_ptr_array_add (argv, g_strdup (tree));
      g_ptr_array_add (argv, g_strdup ("--op"));
      g_ptr_array_add (argv, g_strdup (scratch));
      /* (the caller's build fails, and removes the tree, on an error) */
      GlSpawnOptions options = { .output = GL_SPAWN_OUTPUT_LINES };

      ok = spawn_pkgns (NULL, argv, &options, scratch, input, script, args, what, NULL, progress, user_data,
                        cancellable, error);
    }
  if (!gl_rm_rf (scratch, NULL, &cleanup_error) && ok)
    {
      g_propagate_error (error, g_steal_pointer (&cleanup_error));
      return FALSE;
    }
  return ok;
}

/* Every entry of @old (the sandbox's first base, rootfs/, which stays
 * beneath every generation) that @new lacks gets a whiteout in @new, so
 * that the generation made of @new shows exactly @new over it.  Runs as
 * the host's root on trees of the store. */
static gboolean
hide_old_at (int new_fd, int old_fd, guint32 uid, guint32 gid, const char *shown, GError **error)
{
  DIR *d;
  struct dirent *de;
  int fd = dup (old_fd);
  gboolean ok = TRUE;

  if (fd < 0 || (d = fdopendir (fd)) == NULL)
    return errno_error (error, errno, "Cannot read", shown);
  while (ok && (de = readdir (d)) != NULL)
    {
      struct stat ost, nst;
      g_autofree char *child = NULL;
      if (g_str_equal (de->d_name, ".") || g_str_equal (de->d_name, ".."))
        continue;
      child = g_build_filename (shown, de->d_name, NULL);
      if (fstatat (new_fd, de->d_name, &nst, AT_SYMLINK_NOFOLLOW) != 0)
        {
          if (errno != ENOENT)
            ok = errno_error (error, errno, "Cannot inspect", child);
          else if (mknodat (new_fd, de->d_name, S_IFCHR | 0, makedev (0, 0)) != 0
                   || fchownat (new_fd, de->d_name, uid, gid, AT_SYMLINK_NOFOLLOW) != 0)
            ok = errno_error (error, errno, "Cannot hide the old base's", child);
        }
      else if (S_ISDIR (nst.st_mode) && fstatat (dirfd (d), de->d_name, &ost, AT_SYMLINK_NOFOLLOW) == 0
               && S_ISDIR (ost.st_mode))
        {
          int n = open_dir_at (new_fd, de->d_name), o = open_dir_at (dirfd (d), de->d_name);
          if (n < 0 || o < 0)
            ok = errno_error (error, errno, "Cannot open", child);
          else
            ok = hide_old_at (n, o, uid, gid, child, error);
          if (n >= 0)
            close (n);
          if (o >= 0)
            close (o);
        }
    }
  closedir (d);
  return ok;
}

static gboolean
hide_old_base (const char *new_tree, const char *old, guint32 uid, guint32 gid, GError **error)
{
  int n = open_dir_at (AT_FDCWD, new_tree), o;
  gboolean ok;
  if (n < 0)
    return errno_error (error, errno, "Cannot open", new_tree);
  o = open_dir_at (AT_FDCWD, old);
  if (o < 0)
    {
      close (n);
      return errno_error (error, errno, "Cannot open", old);
    }
  ok = hide_old_at (n, o, uid, gid, old, error);
  close (n);
  close (o);
  return ok;
}

/* A rebase's tree: the new base, shifted into the range (package
 * operations see it as root's), hiding what of rootfs/ it lacks, moved to
 * @tree; a copy of it (hard links) waits in the scratch as the next
 * generation's system/base-N, for reset. */
static gboolean
rebase_tree (GlPkgOp *op, const char *tree, GCancellable *cancellable, GError **error)
{
  g_autofree char *rootfs = gl_sandbox_get_rootfs (op->sandbox);
  g_autofree char *saved = g_build_filename (op->dir, "saved-base", NULL);
  g_autofree char *saved_tree = g_build_filename (saved, "tree", NULL);

  if (rootfs == NULL)
    return g_set_error (error, GL_PKG_ERROR, GL_PKG_ERROR_UNSUPPORTED,
                        "“%s” has the host as its base, which cannot be rebased", op->sandbox->id), FALSE;
  if (!shift_tree (AT_FDCWD, op->new_base, op->uid, op->gid, op->new_base, error)
      || !hide_old_base (op->new_base, rootfs, op->uid, op->gid, error)
      || !gl_mkdir (saved, 0755, error) || !gl_mkdir (saved_tree, 0755, error)
      || !gl_pkg_tree_link_copy (op->new_base, saved_tree, cancellable, error))
    return FALSE;
  if (rename (op->new_base, tree) != 0)
    return errno_error (error, errno, "Cannot move the new base to", tree);
  return TRUE;
}

/* ------------------------------------------ the base of a generation */

/* Generation N of a rebased sandbox names the bare base it lies over in
 * N/base ("G\n": system/base-G/tree, made by the rebase to generation G),
 * which reset returns to; the rename of `current` switches generation and
 * base at once.  Generations without the file (made before it existed)
 * lie over system/base/tree when there is one.  0: none recorded. */
static guint
generation_base (const char *system, guint n)
{
  return gl_sandbox_generation_base (system, n);
}

static gboolean
write_generation_base (const char *gen, guint g, GError **error)
{
  g_autofree char *path = g_build_filename (gen, "base", NULL);
  g_autofree char *text = g_strdup_printf ("%u\n", g);

  return g_file_set_contents_full (path, text, -1, G_FILE_SET_CONTENTS_DURABLE, 0644, error);
}

/* The directory (holding tree/) of generation @n's bare base, or NULL;
 * @base_gen (may be NULL): the base's number (generation_base) */
static char *
saved_base_dir (const char *system, guint n, guint *base_gen)
{
  guint g = generation_base (system, n);
  g_autofree char *dir = NULL;
  g_autofree char *tree = NULL;
  struct stat st;

  if (n == 0)
    return NULL;   /* no generation: the sandbox is its first base alone */
  if (g > 0)
    {
      g_autofree char *name = g_strdup_printf ("base-%u", g);
      dir = g_build_filename (system, name, NULL);
    }
  else
    dir = g_build_filename (system, "base", NULL);
  tree = g_build_filename (dir, "tree", NULL);
  if (lstat (tree, &st) != 0 || !S_ISDIR (st.st_mode))
    return NULL;
  if (base_gen != NULL)
    *base_gen = g;
  return g_steal_pointer (&dir);
}

/* The bases no generation left names any more (after the old generations
 * went: gl_pkg_op_reclaim); the bytes given back */
static guint64
remove_unused_bases (GlPkgOp *op)
{
  const char *system = op->system;
  guint64 freed = 0;
  g_autoptr(GHashTable) used = g_hash_table_new (NULL, NULL);
  gboolean legacy_used = FALSE;
  g_autoptr(GDir) d = g_dir_open (system, 0, NULL);
  const char *name;
  guint n;

  while (d && (name = g_dir_read_name (d)) != NULL)
    if (is_generation_name (name, &n))
      {
        guint g = generation_base (system, n);
        if (g > 0)
          g_hash_table_add (used, GUINT_TO_POINTER (g));
        else
          legacy_used = TRUE;
      }
  if (d == NULL)
    return 0;
  g_dir_rewind (d);
  while ((name = g_dir_read_name (d)) != NULL)
    if ((g_str_has_prefix (name, "base-") && is_generation_name (name + 5, &n)
         && !g_hash_table_contains (used, GUINT_TO_POINTER (n)))
        || (g_str_equal (name, "base") && !legacy_used))
      {
        g_autofree char *path = g_build_filename (system, name, NULL);
        g_autoptr(GError) error = NULL;
        guint64 size = gl_reclaim_size (path);
        g_debug ("removing %s, the base of no generation left", path);
        if (trash_move (op, path, name, NULL))
          ;   /* (counted with the trash) */
        else if (!gl_rm_rf (path, NULL, &error))
          g_debug ("%s", error->message);
        else
          freed += size;
      }
  return freed;
}

/* A rebase's bare base (the scratch's saved-base) becomes system/base-@next,
 * which generation @next will name */
static gboolean
move_saved_base (GlPkgOp *op, guint next, GError **error)
{
  g_autofree char *saved = g_build_filename (op->dir, "saved-base", NULL);
  g_autofree char *name = g_strdup_printf ("base-%u", next);
  g_autofree char *dst = g_build_filename (op->system, name, NULL);

  if (!gl_rm_rf (dst, NULL, error))
    return FALSE;
  if (rename (saved, dst) != 0)
    return errno_error (error, errno, "Cannot create", dst);
  return TRUE;
}

char *
gl_pkg_saved_base_tree (GlSandbox *sandbox)
{
  g_autofree char *system = g_build_filename (sandbox->path, "system", NULL);
  g_autofree char *dir = saved_base_dir (system, gl_pkg_current_generation (sandbox->path), NULL);

  return dir != NULL ? g_build_filename (dir, "tree", NULL) : NULL;
}

char *
gl_pkg_base_tree (GlSandbox *sandbox)
{
  char *saved = gl_pkg_saved_base_tree (sandbox);

  return saved != NULL ? saved : gl_sandbox_get_rootfs (sandbox);
}

void
gl_pkg_crash_point (const char *point)
{
  const char *at = g_getenv ("GLIMPSE_TEST_CRASH_AT");

  if (at != NULL && g_str_equal (at, point))
    kill (getpid (), SIGKILL);
}

static gboolean commit_next (GlPkgOp *op, GCancellable *cancellable, GError **error);

/* The next generation's directory, system/<next>, with its tree: a copy
 * of the current generation's tree made of hard links (gl_pkg_tree_link_copy),
 * owned by the range, not yet sealed.  Whatever was at system/<next> (left
 * by a killed operation) goes first. */
static gboolean
make_next_tree (GlPkgOp *op, GCancellable *cancellable, GError **error)
{
  g_autofree char *num = g_strdup_printf ("%u", op->next);
  g_autofree char *gen = g_build_filename (op->system, num, NULL);
  g_autofree char *tree = g_build_filename (gen, "tree", NULL);

  if (!gl_rm_rf (gen, cancellable, error) || !gl_mkdir (gen, 0755, error) || !gl_mkdir (tree, 0755, error))
    return FALSE;
  if (chown (tree, op->uid, op->gid) != 0)
    return errno_error (error, errno, "Cannot hand over", tree);
  if (op->current > 0)
    {
      g_autofree char *cur = g_strdup_printf ("%u", op->current);
      g_autofree char *old = g_build_filename (op->system, cur, "tree", NULL);
      if (!gl_pkg_tree_link_copy (old, tree, cancellable, error))
        return FALSE;
    }
  return TRUE;
}

static gpointer
prepare_next_thread (gpointer data)
{
  GlPkgOp *op = data;

  op->prep_ok = make_next_tree (op, NULL, &op->prep_error);
  return NULL;
}

/* An install's commit nearly always makes a generation, and the copy of
 * the current tree it starts from (6-18 ms on a host sandbox, a
 * directory and a link per file) needs nothing of the command: it is made
 * in a thread while the command runs, started once the command has said
 * its first line (glimpse-pkgns's walk of the base, which the command
 * waits for, has the processors until then).  The current generation's
 * tree never changes (a sealed generation), and nothing but this
 * operation, under its lock, writes system/<next>: a kill -9 meanwhile
 * leaves it to remove_abandoned (a generation above `current`), as a kill
 * during the commit does.  An operation that changed nothing, or failed,
 * removes it (prepare_next_drop). */
static void
prepare_next_start (GlPkgOp *op)
{
  if (!op->prepare_next || op->prep != NULL || op->new_base != NULL)
    return;
  op->prep_left = TRUE;
  op->prep = g_thread_new ("glimpse-next-tree", prepare_next_thread, op);
}

/* Waits for the thread; whether system/<next> is ready (else the commit
 * makes it itself) */
static gboolean
prepare_next_join (GlPkgOp *op)
{
  if (op->prep == NULL)
    return FALSE;
  g_thread_join (g_steal_pointer (&op->prep));
  if (!op->prep_ok)
    g_debug ("Preparing the next generation of %s: %s; made again", op->sandbox->id, op->prep_error->message);
  g_clear_error (&op->prep_error);
  return op->prep_ok;
}

/* system/<next>, made for a commit that does not come */
static void
prepare_next_drop (GlPkgOp *op)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *num = NULL, *gen = NULL;

  prepare_next_join (op);
  if (!op->prep_left)
    return;
  op->prep_left = FALSE;
  num = g_strdup_printf ("%u", op->next);
  gen = g_build_filename (op->system, num, NULL);
  if (!gl_rm_rf (gen, NULL, &error))
    g_debug ("%s", error->message);
}

gboolean
gl_pkg_op_commit (GlPkgOp *op, GCancellable *cancellable, GError **error)
{
  guint next = op->next;
  g_autofree char *num = NULL, *gen = NULL;
  g_autoptr(GError) cleanup_error = NULL;

  g_return_val_if_fail (op->ran, FALSE);
  /* An operation that changed nothing (an update with nothing to upgrade
   * and no new index) makes no generation: see gl_pkg_upper_changes */
  if (op->new_base == NULL)
    {
      g_autofree char *upper = g_build_filename (op->dir, "upper", NULL);
      g_autofree char *rootfs = gl_sandbox_get_rootfs (op->sandbox);
      g_autofree char *cur = g_strdup_printf ("%u", op->current);
      g_autofree char *tree = g_build_filename (op->system, cur, "tree", NULL);
      const char *lowers[] = { tree, rootfs ? rootfs : "/", NULL };

      if (!gl_pkg_upper_changes (upper, op->current > 0 ? lowers : lowers + 1, op->uid, op->gid))
        {
          g_autofree char *name = g_path_get_basename (op->dir);
          prepare_next_drop (op);
          say (op, "Nothing changed in “%s”: its system stays as it was", op->sandbox->id);
          /* Its scratch (apt's new caches among it, some MiB) goes as a
           * committed operation's does (commit_next): into the trash, its
           * remover started now and checked in gl_pkg_op_free */
          if (trash_move (op, op->dir, name, NULL))
            g_clear_pointer (&op->dir, g_free);
          trash_dispose_start (op);
          return TRUE;
        }
    }
  if (commit_next (op, cancellable, error))
    return TRUE;
  /* A generation half made (a full disk, an I/O error) goes at once, not
   * at the next operation: its space is the user's. */
  if (op->current == next)
    return FALSE;
  num = g_strdup_printf ("%u", next);
  gen = g_build_filename (op->system, num, NULL);
  if (!gl_rm_rf (gen, NULL, &cleanup_error))
    g_debug ("%s", cleanup_error->message);
  return FALSE;
}

static gboolean
commit_next (GlPkgOp *op, GCancellable *cancellable, GError **error)
{
  guint next = op->next;
  g_autofree char *num = g_strdup_printf ("%u", next);
  g_autofree char *gen = g_build_filename (op->system, num, NULL);
  g_autofree char *tree = g_build_filename (gen, "tree", NULL);
  g_autofree char *lock = g_build_filename (gen, "lock", NULL);
  g_autofree char *upper = g_build_filename (op->dir, "upper", NULL);
  g_autofree char *rootfs = gl_sandbox_get_rootfs (op->sandbox);
  /* the base the new generation lies over: a rebase's own, else the
   * current generation's */
  guint base_gen = op->new_base != NULL ? next : generation_base (op->system, op->current);
  guint n_files = 0;
  g_auto(SyncSet) ss = { 0 };
  int fd;

  g_return_val_if_fail (op->ran, FALSE);
  sync_set_init (&ss);
  writeback_start (upper);
  /* (from here on system/<next> is the commit's: removed on a failure by
   * gl_pkg_op_commit) */
  op->prep_left = FALSE;
  if (op->new_base != NULL)
    {
      if (!gl_rm_rf (gen, cancellable, error) || !gl_mkdir (gen, 0755, error))
        return FALSE;
      if (!rebase_tree (op, tree, cancellable, error))
        return FALSE;
      n_files = FSYNC_BUDGET + 1;   /* a whole tree: sync the file system once */
    }
  else if (!prepare_next_join (op) && !make_next_tree (op, cancellable, error))
    return FALSE;
  if (!merge_upper_into (upper, tree, rootfs ? rootfs : "/", &ss, cancellable, error))
    return FALSE;
  n_files = MAX (n_files, ss.n);
  if (chmod (tree, 0755) != 0)
    return errno_error (error, errno, "Cannot set the mode of", tree);
  if (!make_lock_file (lock, error))
    return FALSE;
  {
    /* (a FIFO of the old tree was not linked, one of the upper removed) */
    g_autofree char *mark = g_build_filename (gen, NO_FIFO_MARK, NULL);
    if (!g_file_set_contents_full (mark, "", 0, G_FILE_SET_CONTENTS_NONE, 0644, error))
      return FALSE;
  }
  apt_cache_keep (op, gen);
  /* The new files' data goes to disk file by file (or, for a large
   * operation, the file system is synced); the directories and links of
   * the tree are metadata, which the journal commits in order before the
   * rename of `current` (fsync of the tree forces that commit).  The
   * files, the tree and current.tmp (renamed over `current` below) are
   * synced together: their fsyncs, on threads of their own, share the
   * journal's commits. */
  fd = write_current_tmp (op->system, next, error);
  if (fd < 0)
    return FALSE;
  sync_set_add (&ss, fd, "current.tmp");
  if (n_files > FSYNC_BUDGET)
    {
      if (!sync_dir (op->system, TRUE, tree, error))
        return FALSE;
    }
  else if ((fd = open (tree, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
    return errno_error (error, errno, "Cannot write", tree);
  else
    sync_set_add (&ss, fd, tree);
  if (!sync_set_flush (&ss, error))
    return FALSE;
  gl_pkg_crash_point ("commit-tree");
  /* Everything of the new generation, its base included, is in place
   * before the one atomic step that switches to it: the rename of
   * `current`.  A crash before leaves all of it to remove_abandoned. */
  if (op->new_base != NULL)
    {
      g_autofree char *saved = g_build_filename (op->dir, "saved-base", NULL);
      if (!gl_sandbox_write_base_record (saved, op->new_release, op->new_follows, error)
          || !move_saved_base (op, next, error))
        return FALSE;
    }
  gl_pkg_crash_point ("commit-base");
  if (base_gen > 0 && !write_generation_base (gen, base_gen, error))
    return FALSE;
  gl_pkg_crash_point ("commit-record");
  if (!publish_current (op->system, error))
    return FALSE;
  gl_pkg_crash_point ("commit-current");
  op->current = next;
  /* (a rebase reclaims at its end, once the base it replaced is gone too) */
  if (op->new_base == NULL)
    {
      /* The operation's scratch is of no more use: it goes into the
       * trash with what the operation replaced, removed after the user's
       * command returns (see trash_new); else by gl_pkg_op_free, now */
      g_autofree char *name = g_path_get_basename (op->dir);
      reclaim (op);
      if (trash_move (op, op->dir, name, NULL))
        g_clear_pointer (&op->dir, g_free);
      /* (finished by gl_pkg_op_free, after the wait for the cgroups) */
      trash_dispose_start (op);
    }
  return TRUE;
}

/* ------------------------------------------------------ the operations */

gboolean
gl_pkg_name_validate (const char *name, GError **error)
{
  /* Debian/RPM/Arch/Alpine package names, with =version, /release, :arch */
  if (name[0] != '\0' && g_ascii_isalnum (name[0]) && strlen (name) < 256)
    {
      const char *p;
      for (p = name; *p; p++)
        if (!g_ascii_isalnum (*p) && !strchr ("+-._:=~/@", *p))
          break;
      if (*p == '\0')
        return TRUE;
    }
  g_set_error (error, GL_PKG_ERROR, GL_PKG_ERROR_INVALID,
               "“%s” is not a package name (letters, digits and + - . _ : = ~ / @, starting "
               "with a letter or digit)", name);
  return FALSE;
}

typedef struct {
  const char *family;
  const char *refresh, *upgrade, *install, *remove;
  const char *prelude;
} Family;

/* The commands when the profile names none.  Removing runs offline:
 * dnf without its repositories (it would refresh them), apk without the
 * network. */
static const Family families[] = {
  { "apt", "apt-get update", "apt-get -y dist-upgrade", "apt-get install -y", "apt-get remove -y",
    "APT_CONFIG=/run/glimpse-input/apt.conf; export APT_CONFIG; " },
  { "dnf", "dnf -y makecache", "dnf -y upgrade", "dnf -y install", "dnf -y --disablerepo='*' remove", "" },
  /* Arch supports no partial upgrade: installing is -Syu PKG */
  { "pacman", "pacman -Sy", "pacman -Syu --noconfirm", "pacman -Syu --noconfirm",
    "pacman -R --noconfirm", "" },
  { "apk", "apk update", "apk upgrade", "apk add", "apk del --no-network", "" },
};

/* pacman's -S option of @cmd with the operation letters @add added and
 * @drop taken out ("pacman -Syu --noconfirm", "w", "y": "pacman -Suw …");
 * a command without -S gets one. */
static char *
pacman_sync (const char *cmd, const char *add, const char *drop)
{
  g_auto(GStrv) words = g_strsplit (cmd, " ", -1);
  g_autoptr(GString) out = g_string_new (NULL);
  gboolean done = FALSE;

  for (char **w = words; *w; w++)
    {
      if (**w == '\0')
        continue;
      if (out->len)
        g_string_append_c (out, ' ');
      if (!done && g_str_has_prefix (*w, "-S") && (*w)[1] != '-')
        {
          g_string_append (out, "-S");
          for (const char *c = *w + 2; *c; c++)
            if (!strchr (drop, *c) && !strchr (add, *c))
              g_string_append_c (out, *c);
          g_string_append (out, add);
          done = TRUE;
        }
      else
        g_string_append (out, *w);
    }
  if (!done)
    g_string_append_printf (out, " -S%s", add);
  return g_strdup (out->str);
}

#define APK_CACHE "/var/cache/glimpse-apk"
/* apt's default lists directory (a sandbox whose apt.conf moved it
 * refreshes at every install: slower, still right) */
#define APT_LISTS_REL "var/lib/apt/lists"

const char *
gl_pkg_staged_cleanup (const char *family)
{
  /* (after the apply stage only: the fetch stage's downloads are its input) */
  if (g_strcmp0 (family, "apk") == 0)
    return "[ \"$GLIMPSE_STAGE\" = fetch ] || rm -rf " APK_CACHE "\n";
  return "";
}

GlPkgNetwork
gl_pkg_staged_network (const char *family)
{
  return g_strcmp0 (family, "apt") == 0 ? GL_PKG_NETWORK_UNTIL_CUT : GL_PKG_NETWORK_FETCH_FIRST;
}

char *
gl_pkg_staged_script (const char *family, const char *refresh, const char *cmd, gboolean install)
{
  const char *args = install ? " \"$@\"" : "";
  g_autofree char *fetch = NULL, *apply = NULL;

  if (g_strcmp0 (family, "dnf") == 0)
    {
      /* apply: from the cache only (dnf would refresh the metadata) */
      fetch = install ? g_strdup_printf ("%s --downloadonly%s", cmd, args)
                      : g_strdup_printf ("%s; %s --downloadonly", refresh, cmd);
      apply = g_strdup_printf ("%s -C%s", cmd, args);
    }
  else if (g_strcmp0 (family, "pacman") == 0)
    {
      /* fetch: -Syuw, the databases and every package the whole upgrade
       * needs; apply: -Su from the cache, never -y (offline) */
      g_autofree char *w = pacman_sync (cmd, "yuw", "");
      g_autofree char *u = pacman_sync (cmd, "u", "yw");
      fetch = g_strdup_printf ("%s%s", w, args);
      apply = g_strdup_printf ("%s%s", u, args);
    }
  else if (g_strcmp0 (family, "apk") == 0)
    {
      /* a cache of the operation's own: the indexes and the packages the
       * world (plus the new ones) needs, then apk from it without network */
      fetch = g_strdup_printf ("mkdir -p " APK_CACHE "; apk --cache-dir " APK_CACHE " update; "
                               "apk --cache-dir " APK_CACHE " cache %s download%s",
                               install ? "--add-dependencies" : "--upgrade", args);
      apply = g_strdup_printf ("%s --cache-dir " APK_CACHE " --no-network%s", cmd, args);
    }
  else
    {
      /* One run, with the network until apt is about to run dpkg
       * (GL_PKG_NETWORK_UNTIL_CUT): an update refreshes the indexes; an
       * install only when given @refresh: when a source has none yet (a
       * new sandbox of its own base, a repository added since the last
       * refresh: gl_pkg_apt_index_missing).  An install of an up-to-date
       * sandbox downloads no index. */
      if (!install)
        return g_strdup_printf ("%s; %s", refresh, cmd);
      if (refresh != NULL)
        return g_strdup_printf (
          "echo 'glimpse: some sources have no package index yet: refreshing the indexes first'; "
          "%s || echo 'glimpse: refreshing the indexes failed (see above); installing with the ones there are'; "
          "%s%s", refresh, cmd, args);
      return g_strdup_printf ("%s%s", cmd, args);
    }
  return g_strdup_printf ("if [ \"$GLIMPSE_STAGE\" = fetch ]; then %s; else %s; fi", fetch, apply);
}

static const Family *
find_family (GlSandbox *sandbox, GError **error)
{
  for (gsize i = 0; i < G_N_ELEMENTS (families); i++)
    if (g_strcmp0 (sandbox->family, families[i].family) == 0)
      return &families[i];
  g_set_error (error, GL_PKG_ERROR, GL_PKG_ERROR_UNSUPPORTED,
               "Sandbox “%s” has the package family “%s”, which glimpse cannot run",
               sandbox->id, sandbox->family ? sandbox->family : "(none)");
  return NULL;
}

/* The profile's commands where it still exists, else the family's. */
static GlProfile *
load_profile (GlSandbox *sandbox)
{
  g_auto(GStrv) path = gl_paths_profile_dirs ();
  g_autoptr(GError) error = NULL;
  GlProfile *p = sandbox->profile ? gl_profile_find ((const char * const *) path, sandbox->profile, &error) : NULL;
  if (p == NULL && error)
    g_debug ("%s", error->message);
  return p;
}

static gboolean
prepare_input (GlPkgOp *op, const Family *fam, GError **error)
{
  if (g_str_equal (fam->family, "apt"))
    return gl_pkg_write_apt_conf (gl_pkg_op_get_input_dir (op), error);
  return TRUE;
}

/* Whether the regular file @name is in the lists directory of the upper
 * layer @upper (-1: none) or, where @upper has no entry of that name and
 * does not @hide it, of the lower one @lower */
static gboolean
list_present (int upper, int lower, gboolean hide, const char *name)
{
  struct stat st;

  if (upper >= 0 && fstatat (upper, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
    return S_ISREG (st.st_mode);
  if (hide || lower < 0)
    return FALSE;
  return fstatat (lower, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG (st.st_mode);
}

gboolean
gl_pkg_apt_index_missing (const char *tree, const char *base, gboolean host)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) sources = gl_apt_sources_read_layers (tree, base, !host, &error);
  int upper = -1, lower = -1;
  gboolean hide = FALSE, missing = FALSE;

  if (sources == NULL)
    {
      g_debug ("The apt sources of the sandbox: %s; its indexes are refreshed", error->message);
      return TRUE;
    }
  /* (the generation's lists as the view shows them, gl_layer_open_dir: an
   * opaque directory or a whiteout on the way hides the base's; a link on
   * the way, not followed, hides them too, so every source counts as
   * without an index and they are refreshed) */
  if (tree != NULL)
    switch (gl_layer_open_dir (tree, APT_LISTS_REL, &upper, &hide))
      {
      case GL_LAYER_NONE:
      case GL_LAYER_DIR:
        break;
      case GL_LAYER_HIDES:
      case GL_LAYER_UNKNOWN:
        hide = TRUE;
        break;
      }
  if (host)
    {
      g_autofree char *path = g_build_filename (base, APT_LISTS_REL, NULL);
      lower = open (path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    }
  else
    lower = gl_tree_open_dir (base, APT_LISTS_REL, NULL);
  for (guint i = 0; !missing && i < sources->len; i++)
    {
      GlAptSource *src = sources->pdata[i];
      g_autofree char *name = NULL, *in_release = NULL, *release = NULL;

      if (!src->enabled)
        continue;
      name = gl_apt_source_index_name (src);
      in_release = g_strconcat (name, "InRelease", NULL);
      release = g_strconcat (name, "Release", NULL);
      missing = !list_present (upper, lower, hide, in_release) && !list_present (upper, lower, hide, release);
      if (missing)
        g_debug ("%s (%s) has no index yet", src->uri, in_release);
    }
  if (upper >= 0)
    close (upper);
  if (lower >= 0)
    close (lower);
  return missing;
}

/* ------------------------------------------ apt's architectures, given */

/* What a file of the view shows at @dir/@name: the generation @tree (or
 * NULL) over the base @base */
static GlViewFile
view_file (const char *tree, const char *base, const char *dir, const char *name, gsize max,
           char **contents)
{
  const char *layers[] = { tree, base };
  g_autofree char *rel = g_build_filename (dir, name, NULL);

  return gl_view_read_file (layers, G_N_ELEMENTS (layers), rel, max, contents, NULL);
}

static gboolean
is_arch_name (const char *a)
{
  if (!g_ascii_islower (a[0]) && !g_ascii_isdigit (a[0]))
    return FALSE;
  for (; *a; a++)
    if (!g_ascii_islower (*a) && !g_ascii_isdigit (*a) && *a != '-')
      return FALSE;
  return TRUE;
}

/* One stanza of a dpkg status, as status_dpkg_arch reads it */
typedef struct {
  gboolean dpkg;        /* its "Package: dpkg" line was read */
  char *arch, *status;  /* the first of these fields after it */
} DpkgStanza;

/* At the end of the stanza @s: the architecture when it is an installed
 * dpkg's, else NULL; @s is reset */
static char *
dpkg_stanza_end (DpkgStanza *s)
{
  char *arch = NULL;

  if (s->dpkg && s->arch != NULL && s->status != NULL)
    {
      g_auto(GStrv) words = g_strsplit_set (s->status, " ", -1);
      if (g_strv_length (words) == 3 && strcmp (words[2], "not-installed") != 0
          && strcmp (words[2], "config-files") != 0)
        arch = g_strstrip (g_steal_pointer (&s->arch));
    }
  g_clear_pointer (&s->arch, g_free);
  g_clear_pointer (&s->status, g_free);
  s->dpkg = FALSE;
  return arch;
}

/* The line @l (@len bytes, @nl: ended by a newline; @whole: all of it,
 * else only its start) of the stanza @s.  Returns the architecture when
 * the line ended an installed dpkg's stanza. */
static char *
dpkg_stanza_line (DpkgStanza *s, const char *l, gsize len, gboolean nl, gboolean whole)
{
  static const char key[] = "Package: dpkg", arch[] = "Architecture: ", status[] = "Status: ";

  if (len == 0 && whole)
    return dpkg_stanza_end (s);
  if (!s->dpkg)
    s->dpkg = nl && whole && len == sizeof key - 1 && memcmp (l, key, len) == 0;
  /* (a line too long to be read whole is no field of these: an empty
   * one, which nothing takes for a dpkg's architecture or status) */
  else if (s->arch == NULL && len >= sizeof arch - 1 && memcmp (l, arch, sizeof arch - 1) == 0)
    s->arch = whole ? g_strndup (l + sizeof arch - 1, len - (sizeof arch - 1)) : g_strdup ("");
  else if (s->status == NULL && len >= sizeof status - 1 && memcmp (l, status, sizeof status - 1) == 0)
    s->status = whole ? g_strndup (l + sizeof status - 1, len - (sizeof status - 1)) : g_strdup ("");
  return NULL;
}

/* The longest line status_dpkg_arch reads whole */
#define STATUS_LINE_MAX 4096

/* The architecture of the installed package "dpkg" in the dpkg status
 * read from @fd (as a string: up to a NUL byte, if any), of at most @max
 * bytes, or NULL.  Each stanza is looked at once, from its first
 * "Package: dpkg" line: a status the sandbox wrote (its apt hooks run
 * after dpkg) may hold such a line on every line and no blank line, and
 * a scan from each of them to the end of the file again took hours of
 * root's time for 8 MiB (the file may have 256).  It is read in pieces
 * into one small buffer: a copy of the whole file (1 MiB on a desktop)
 * costs a page fault per 4 KiB, several milliseconds, more than the scan. */
static char *
status_dpkg_arch (int fd, gsize max)
{
  g_autofree char *buf = g_malloc (64 * 1024);
  g_autoptr(GString) line = g_string_new (NULL);
  gboolean whole = TRUE, done = FALSE;
  DpkgStanza s = { FALSE, NULL, NULL };
  gsize total = 0;
  char *found = NULL;

  while (!done && found == NULL)
    {
      gssize n = read (fd, buf, 64 * 1024);
      const char *p = buf, *end, *nul;

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 || (total += (gsize) MAX (n, 0)) > max)
        break;
      if (n == 0)
        {
          /* (the last line, without a newline) */
          if (line->len > 0 || !whole)
            found = dpkg_stanza_line (&s, line->str, line->len, FALSE, whole);
          if (found == NULL)
            found = dpkg_stanza_end (&s);
          break;
        }
      end = buf + n;
      if ((nul = memchr (buf, '\0', (gsize) n)) != NULL)
        {
          end = nul;
          done = TRUE;
        }
      while (p < end && found == NULL)
        {
          const char *eol = memchr (p, '\n', (gsize) (end - p));
          gsize seg = (gsize) ((eol ? eol : end) - p);

          if (line->len + seg <= STATUS_LINE_MAX)
            g_string_append_len (line, p, (gssize) seg);
          else
            whole = FALSE;
          if (eol == NULL)
            break;
          found = dpkg_stanza_line (&s, line->str, line->len, TRUE, whole);
          g_string_truncate (line, 0);
          whole = TRUE;
          p = eol + 1;
        }
      if (done && found == NULL)
        {
          if (line->len > 0 || !whole)
            found = dpkg_stanza_line (&s, line->str, line->len, FALSE, whole);
          if (found == NULL)
            found = dpkg_stanza_end (&s);
        }
    }
  g_clear_pointer (&s.arch, g_free);
  g_clear_pointer (&s.status, g_free);
  if (total > max)
    g_clear_pointer (&found, g_free);
  return found;
}

/* (gl_pkg_apt_architectures: what it reads of apt.conf.d at most) */
#define APT_PARTS_MAX 256
#define APT_PARTS_MAX_BYTES (4 * 1024 * 1024)

char *
gl_pkg_apt_architectures (const char *tree, const char *base)
{
  const char *layers[] = { tree, base };
  g_autofree char *arch = NULL, *native = NULL, *own = NULL, *parts_rel = NULL;
  g_autoptr(GPtrArray) parts = NULL;
  g_autoptr(GString) list = NULL;
  g_auto(GStrv) foreign = NULL;
  int part_dirs[G_N_ELEMENTS (layers)] = { -1, -1 };
  gboolean parts_ok = TRUE;
  gsize parts_left = APT_PARTS_MAX_BYTES;

  /* apt asks dpkg only when its configuration names no architectures;
   * a configuration that may name them, or move dpkg's database or
   * dpkg, is left to apt.  Its parts are read from the directory each
   * layer has, looked up once (not from the layers' roots again for
   * each part: some 40 system calls a part); anything there that is not
   * a regular file (a link, a directory) is left to apt too. */
  parts = gl_view_dir_entries (layers, G_N_ELEMENTS (layers), "etc/apt/apt.conf.d", GL_VIEW_NO_FLAGS,
                               &parts_rel);
  if (parts == NULL)
    return NULL;
  /* (the generation's parts are the sandbox's: many of them, or hard links
   * to one large part, would have glimpse read gigabytes as root, before
   * the operation's limits apply: 20,000 links to a part of 1 MiB, a
   * minute.  More than APT_PARTS_MAX parts, or APT_PARTS_MAX_BYTES in
   * all, are left to apt) */
  if (parts->len > APT_PARTS_MAX)
    parts_ok = FALSE;
  for (guint i = 0; parts_ok && i < parts->len; i++)
    {
      const GlViewEntry *e = parts->pdata[i];
      g_autofree char *text = NULL, *lower = NULL;
      gsize max = MIN (parts_left, 1024 * 1024), len = 0;
      gboolean opaque;
      int fd;

      if (e->type != DT_REG || e->layer >= G_N_ELEMENTS (layers)
          || (part_dirs[e->layer] < 0
              && gl_layer_open_dir (layers[e->layer], parts_rel, &part_dirs[e->layer], &opaque) != GL_LAYER_DIR)
          || (fd = openat (part_dirs[e->layer], e->name, O_PATH | O_NOFOLLOW | O_CLOEXEC)) < 0
          || (fd = gl_reopen_regular (fd, max)) < 0
          || !gl_read_fd_max (fd, max, &text, &len))
        {
          parts_ok = FALSE;
          break;
        }
      parts_left -= len;
      /* (a NUL would end the search below where apt reads on: such a
       * part is left to apt) */
      if (memchr (text, '\0', len) != NULL)
        {
          parts_ok = FALSE;
          break;
        }
      lower = g_ascii_strdown (text, -1);
      /* (a target's $(NATIVE_ARCHITECTURE), $(ARCHITECTURE) name none) */
      for (char *v = lower; (v = strstr (v, "$(")) != NULL;)
        for (; *v != '\0' && *v != ')'; v++)
          *v = ' ';
      if (strstr (lower, "architecture") || strstr (lower, "admindir") || strstr (lower, "--root")
          || strstr (lower, "--instdir") || strstr (lower, "bin::dpkg") || strstr (lower, "#include"))
        parts_ok = FALSE;
    }
  for (gsize i = 0; i < G_N_ELEMENTS (part_dirs); i++)
    if (part_dirs[i] >= 0)
      close (part_dirs[i]);
  if (!parts_ok)
    return NULL;
  /* dpkg's own architecture is that of the package dpkg; its foreign ones
   * are the others of its arch file (a newer dpkg's arch-native file, which
   * changes the native one, is left to it) */
  {
    int fd = -1;
    gsize max = 256 * 1024 * 1024;

    if (gl_view_open_file (layers, G_N_ELEMENTS (layers), "var/lib/dpkg/status", max, &fd) != GL_VIEW_FILE)
      return NULL;
    native = status_dpkg_arch (fd, max);
    close (fd);
    if (native == NULL || !is_arch_name (native))
      return NULL;
  }
  if (view_file (tree, base, "var/lib/dpkg", "arch-native", 4096, &own) != GL_VIEW_ABSENT)
    return NULL;
  switch (view_file (tree, base, "var/lib/dpkg", "arch", 64 * 1024, &arch))
    {
    case GL_VIEW_UNKNOWN:
      return NULL;
    case GL_VIEW_ABSENT:
      break;
    case GL_VIEW_FILE:
      foreign = g_strsplit_set (arch, " \t\n", -1);
      break;
    }
  list = g_string_new (native);
  for (guint i = 0; foreign && foreign[i]; i++)
    {
      g_autofree char *word = g_strdup_printf (" %s ", foreign[i]);
      g_autofree char *have = g_strdup_printf (" %s ", list->str);

      if (foreign[i][0] == '\0' || strstr (have, word) != NULL)
        continue;
      if (!is_arch_name (foreign[i]))
        return NULL;
      g_string_append_printf (list, " %s", foreign[i]);
    }
  return g_string_free (g_steal_pointer (&list), FALSE);
}

/* *@cmd as @fam runs it: an apt family's with glimpse's settings on
 * apt's command line (gl_pkg_apt_command; *@owned keeps it), the others'
 * as they are */
static gboolean
family_command (const Family *fam, const char **cmd, char **owned, GError **error)
{
  if (!g_str_equal (fam->family, "apt"))
    return TRUE;
  *owned = gl_pkg_apt_command (*cmd, error);
  *cmd = *owned;
  return *owned != NULL;
}

static GlPkgOp *
begin_simple (GlSandbox *sandbox, const Family *fam, GlPkgProgress progress, gpointer user_data,
              GError **error)
{
  g_autoptr(GlPkgOp) op = gl_pkg_op_begin (sandbox, progress, user_data, error);

  if (op == NULL || !prepare_input (op, fam, error))
    return NULL;
  return g_steal_pointer (&op);
}

static gboolean
run_begun (GlPkgOp *op, const Family *fam, const char *what, const char *script,
           const char * const *args, GlPkgNetwork network, gboolean record_update,
           GCancellable *cancellable, GError **error)
{
  GlSandbox *sandbox = op->sandbox;
  g_autofree char *full = g_strconcat ("set -e; ", fam->prelude, script, "\n",
                                       gl_pkg_staged_cleanup (fam->family), NULL);

  gl_pkg_op_set_network (op, network);
  if (!gl_pkg_op_run (op, what, full, args, cancellable, error)
      || !gl_pkg_op_commit (op, cancellable, error))
    return FALSE;
  if (record_update)
    {
      g_clear_pointer (&sandbox->updated, g_date_time_unref);
      sandbox->updated = g_date_time_new_now_utc ();
      if (!gl_sandbox_save (sandbox, error))
        return FALSE;
    }
  return TRUE;
}

static gboolean
run_simple (GlSandbox *sandbox, const char *what, const char *script,
            const char * const *args, GlPkgNetwork network, gboolean record_update,
            GlPkgProgress progress, gpointer user_data,
            GCancellable *cancellable, GError **error)
{
  g_autoptr(GlPkgOp) op = NULL;
  const Family *fam = find_family (sandbox, error);

  if (fam == NULL || (op = begin_simple (sandbox, fam, progress, user_data, error)) == NULL)
    return FALSE;
  return run_begun (op, fam, what, script, args, network, record_update, cancellable, error);
}

static gboolean
validate_names (const char * const *packages, GError **error)
{
  if (packages == NULL || packages[0] == NULL)
    return g_set_error (error, GL_PKG_ERROR, GL_PKG_ERROR_INVALID, "Give at least one package"), FALSE;
  for (gsize i = 0; packages[i]; i++)
    if (!gl_pkg_name_validate (packages[i], error))
      return FALSE;
  return TRUE;
}

gboolean
gl_pkg_install (GlSandbox *sandbox, const char * const *packages, GlPkgProgress progress,
                gpointer user_data, GCancellable *cancellable, GError **error)
{
  g_autoptr(GlProfile) profile = load_profile (sandbox);
  const Family *fam = find_family (sandbox, error);
  g_autoptr(GlPkgOp) op = NULL;
  g_autofree char *list = NULL, *what = NULL, *script = NULL;
  g_autofree char *owned_install = NULL, *owned_refresh = NULL;
  const char *install, *refresh = NULL;

  if (fam == NULL || !validate_names (packages, error))
    return FALSE;
  op = begin_simple (sandbox, fam, progress, user_data, error);
  if (op == NULL)
    return FALSE;
  op->prepare_next = TRUE;
  list = g_strjoinv (" ", (char **) packages);
  what = g_strdup_printf ("installing %s into “%s”", list, sandbox->id);
  install = profile && profile->cmd_install ? profile->cmd_install : fam->install;
  if (!family_command (fam, &install, &owned_install, error))
    return FALSE;
  /* apt: the indexes refreshed first only when a source has none (read
   * here, under the operation's lock: no run of apt for it) */
  if (g_str_equal (fam->family, "apt"))
    {
      g_autofree char *rootfs = gl_sandbox_get_rootfs (sandbox);
      g_autofree char *base = rootfs != NULL ? gl_pkg_base_tree (sandbox) : g_strdup ("/");
      g_autofree char *num = g_strdup_printf ("%u", op->current);
      g_autofree char *tree = op->current > 0 ? g_build_filename (op->system, num, "tree", NULL) : NULL;

      if (gl_pkg_apt_index_missing (tree, base, rootfs == NULL))
        refresh = profile && profile->cmd_refresh ? profile->cmd_refresh : fam->refresh;
      if (refresh != NULL && !family_command (fam, &refresh, &owned_refresh, error))
        return FALSE;
    }
  script = gl_pkg_staged_script (fam->family, refresh, install, TRUE);
  return run_begun (op, fam, what, script, packages, gl_pkg_staged_network (fam->family), FALSE,
                    cancellable, error);
}

gboolean
gl_pkg_uninstall (GlSandbox *sandbox, const char * const *packages, GlPkgProgress progress,
                  gpointer user_data, GCancellable *cancellable, GError **error)
{
  const Family *fam = find_family (sandbox, error);
  g_autofree char *list = NULL, *what = NULL, *script = NULL, *owned = NULL;
  const char *remove;

  if (fam == NULL || !validate_names (packages, error))
    return FALSE;
  remove = fam->remove;
  if (!family_command (fam, &remove, &owned, error))
    return FALSE;
  list = g_strjoinv (" ", (char **) packages);
  what = g_strdup_printf ("removing %s from “%s”", list, sandbox->id);
  script = g_strdup_printf ("%s \"$@\"", remove);
  return run_simple (sandbox, what, script, packages, GL_PKG_NETWORK_NONE, FALSE, progress, user_data,
                     cancellable, error);
}

gboolean
gl_pkg_update (GlSandbox *sandbox, GlPkgProgress progress, gpointer user_data,
               GCancellable *cancellable, GError **error)
{
  g_autoptr(GlProfile) profile = load_profile (sandbox);
  const Family *fam = find_family (sandbox, error);
  g_autofree char *what = NULL, *script = NULL, *owned_upgrade = NULL, *owned_refresh = NULL;
  const char *upgrade, *refresh;

  if (fam == NULL)
    return FALSE;
  what = g_strdup_printf ("updating “%s”", sandbox->id);
  upgrade = profile && profile->cmd_upgrade ? profile->cmd_upgrade : fam->upgrade;
  refresh = profile && profile->cmd_refresh ? profile->cmd_refresh : fam->refresh;
  if (!family_command (fam, &upgrade, &owned_upgrade, error)
      || !family_command (fam, &refresh, &owned_refresh, error))
    return FALSE;
  script = gl_pkg_staged_script (fam->family, refresh, upgrade, FALSE);
  return run_simple (sandbox, what, script, NULL, gl_pkg_staged_network (fam->family), TRUE, progress,
                     user_data, cancellable, error);
}

gboolean
gl_pkg_reset (GlSandbox *sandbox, GlPkgProgress progress, gpointer user_data, gboolean *dropped,
              GError **error)
{
  g_autoptr(GlPkgOp) op = gl_pkg_op_begin (sandbox, progress, user_data, error);
  g_autofree char *current = NULL;

  if (op == NULL)
    return FALSE;
  if (dropped != NULL)
    *dropped = TRUE;
  current = g_build_filename (op->system, "current", NULL);
  {
    /* After a rebase, the base is the one it moved to: a generation of it
     * alone, lying over the same base */
    guint base_gen = 0;
    g_autofree char *saved_dir = saved_base_dir (op->system, op->current, &base_gen);
    if (saved_dir != NULL)
      {
        g_autofree char *saved = g_build_filename (saved_dir, "tree", NULL);
        guint next = op->next;
        g_autofree char *num = g_strdup_printf ("%u", next);
        g_autofree char *gen = g_build_filename (op->system, num, NULL);
        g_autofree char *tree = g_build_filename (gen, "tree", NULL);
        g_autofree char *lock = g_build_filename (gen, "lock", NULL);
        if (!gl_rm_rf (gen, NULL, error) || !gl_mkdir (gen, 0755, error) || !gl_mkdir (tree, 0755, error)
            || !gl_pkg_tree_link_copy (saved, tree, NULL, error) || !make_lock_file (lock, error)
            || !sync_dir (op->system, TRUE, tree, error))
          return FALSE;
        if (base_gen > 0 && !write_generation_base (gen, base_gen, error))
          return FALSE;
        if (!write_current (op->system, next, error))
          return FALSE;
        op->current = next;
        gl_pkg_op_reclaim (op);
        g_clear_pointer (&sandbox->repositories, g_strfreev);
        g_clear_pointer (&sandbox->repository_uris, g_strfreev);
        return gl_sandbox_save (sandbox, error);
      }
  }
  if (dropped != NULL)
    *dropped = op->current != 0 || (sandbox->repositories != NULL && sandbox->repositories[0] != NULL);
  if (unlink (current) != 0 && errno != ENOENT)
    return errno_error (error, errno, "Cannot remove", current);
  {
    int fd = open (op->system, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0)
      {
        fsync (fd);
        close (fd);
      }
  }
  {
    /* (kept as a package operation's reclaim keeps them: a view that has
     * ended but is still held, or one without the launcher's setuid bit,
     * holds a generation without its lock) */
    g_autoptr(GError) held = NULL;

    if (gl_sandbox_layers_free (op->sandbox, TRUE, &held))
      delete_old_generations (op, 0);
    else
      say (op, "The old system generations of “%s” are kept: %s; the first package "
           "operation after that reclaims them", op->sandbox->id, held->message);
  }
  trash_dispose (op);
  g_clear_pointer (&sandbox->repositories, g_strfreev);
  g_clear_pointer (&sandbox->repository_uris, g_strfreev);
  return gl_sandbox_save (sandbox, error);
}
