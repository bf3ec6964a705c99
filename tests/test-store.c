/* test-store.c: ids, allocation, sandbox.conf round trip, listing, locks;
 * the fsutil reads and writes in a tree being built
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "gl-fsutil-private.h"
#include "gl-reclaim.h"
#include "gl-sandbox-private.h"
#include "gl-store.h"
#include "gl-test-skip.h"
#include "gl-test-tmpdir.h"

static void
test_id_valid (void)
{
  const char *good[] = { "a", "debian-sid", "debian-sid-2", "A.b_c-d", "0", NULL };
  const char *bad[] = { "", "..", ".", "../x", "a/b", "x,lowerdir=/root", "-a", "_a", ".hidden",
                        "a b", "é", "a\nb", "a:b",
                        /* the bad character last */
                        "a/", "x,", "a:", "ab ", "ab\n", "a.b/", NULL };
  g_autofree char *long_ok = g_strnfill (64, 'a');
  g_autofree char *long_bad = g_strnfill (65, 'a');
  g_autofree char *huge = g_strnfill (4096, 'a');

  for (guint i = 0; good[i]; i++)
    g_assert_true (gl_sandbox_id_is_valid (good[i]));
  for (guint i = 0; bad[i]; i++)
    {
      g_autoptr(GError) error = NULL;
      g_assert_false (gl_sandbox_id_is_valid (bad[i]));
      g_assert_false (gl_sandbox_id_validate (bad[i], &error));
      g_assert_error (error, GL_STORE_ERROR, GL_STORE_ERROR_INVALID_ID);
    }
  g_assert_false (gl_sandbox_id_is_valid (NULL));
  g_assert_true (gl_sandbox_id_is_valid (long_ok));
  g_assert_false (gl_sandbox_id_is_valid (long_bad));
  g_assert_false (gl_sandbox_id_is_valid (huge));
}

static char *
make_store (void)
{
  char *store = g_build_filename (g_get_user_cache_dir (), "store", NULL);

  g_assert_cmpint (g_mkdir_with_parents (store, 0755), ==, 0);
  return store;
}

static void
test_allocate (void)
{
  g_autofree char *store_dir = make_store ();
  g_autoptr(GlStore) store = gl_store_new (store_dir);
  g_autofree char *a = NULL, *b = NULL, *c = NULL;
  g_autofree char *pa = NULL, *pb = NULL;
  g_autoptr(GError) error = NULL;

  a = gl_store_allocate_id (store, "debian", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (a, ==, "debian");
  pa = g_build_filename (store_dir, a, NULL);
  g_assert_cmpint (g_mkdir (pa, 0755), ==, 0);

  b = gl_store_allocate_id (store, "debian", &error);
  g_assert_cmpstr (b, ==, "debian-2");
  pb = g_build_filename (store_dir, b, NULL);
  /* a dangling symlink takes the name as well */
  g_assert_cmpint (symlink ("/nonexistent", pb), ==, 0);

  c = gl_store_allocate_id (store, "debian", &error);
  g_assert_cmpstr (c, ==, "debian-3");

  g_assert_null (gl_store_allocate_id (store, "../x", &error));
  g_assert_error (error, GL_STORE_ERROR, GL_STORE_ERROR_INVALID_ID);
}

static GlSandbox *
sample (const char *store, const char *id)
{
  GlSandbox *s = g_new0 (GlSandbox, 1);

  s->id = g_strdup (id);
  s->path = g_build_filename (store, id, NULL);
  s->profile = g_strdup ("debian-unstable");
  s->name = g_strdup ("Debian unstable; with “quotes” and = signs");
  s->base = g_strdup (GL_BASE_ROOTFS);
  s->family = g_strdup ("apt");
  s->launchers = g_strdupv ((char *[]) { "org.gnome.TextEditor.desktop", "firefox.desktop", NULL });
  s->added_launchers = g_strdupv ((char *[]) { "org.gnome.Maps.desktop", NULL });
  s->hidden_launchers = g_strdupv ((char *[]) { "firefox.desktop", "htop.desktop", NULL });
  s->repositories = g_strdupv ((char *[]) { "deb http://example.invalid/ppa sid main", NULL });
  s->created = g_date_time_new_utc (2026, 12, 1, 10, 0, 0);
  s->updated = g_date_time_new_utc (2026, 12, 2, 11, 30, 15);
  return s;
}

static void
test_roundtrip (void)
{
  g_autofree char *store = make_store ();
  g_autoptr(GlSandbox) s = sample (store, "sid");
  g_autoptr(GlSandbox) back = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_cmpint (g_mkdir (s->path, 0755), ==, 0);
  g_assert_true (gl_sandbox_save (s, &error));
  g_assert_no_error (error);

  back = gl_sandbox_load (store, "sid", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (back->id, ==, "sid");
  g_assert_cmpstr (back->path, ==, s->path);
  g_assert_cmpstr (back->profile, ==, s->profile);
  g_assert_cmpstr (back->name, ==, s->name);
  g_assert_cmpstr (back->base, ==, s->base);
  g_assert_cmpstr (back->family, ==, s->family);
  g_assert_cmpstrv (back->launchers, s->launchers);
  g_assert_cmpstrv (back->added_launchers, s->added_launchers);
  g_assert_cmpstrv (back->hidden_launchers, s->hidden_launchers);
  g_assert_cmpstrv (back->repositories, s->repositories);
  g_assert_true (g_date_time_equal (back->created, s->created));
  g_assert_true (g_date_time_equal (back->updated, s->updated));

  {
    /* a sandbox.conf from before the admin's sets: none, and none written */
    g_autoptr(GlSandbox) old = gl_sandbox_load_from_data ("x", "/store/x",
      "[Sandbox]\nProfile=host\nBase=host\nLaunchers=a.desktop;\n", -1, &error);
    g_autofree char *data = NULL;

    g_assert_no_error (error);
    g_assert_null (old->added_launchers);
    g_assert_null (old->hidden_launchers);
    data = gl_sandbox_to_data (old, NULL);
    g_assert_null (strstr (data, "AddedLaunchers"));
    g_assert_null (strstr (data, "HiddenLaunchers"));
    g_assert_nonnull (strstr (data, "Launchers=a.desktop;\n"));
  }
  {
    g_autofree char *rootfs = gl_sandbox_get_rootfs (back);
    g_autofree char *want = g_build_filename (s->path, "rootfs", NULL);
    g_autofree char *user = gl_sandbox_get_user_dir (back, 1000);
    g_autofree char *want_user = g_build_filename (s->path, "users", "1000", NULL);
    g_assert_cmpstr (rootfs, ==, want);
    g_assert_cmpstr (user, ==, want_user);
  }
}

static void
test_malformed_conf (void)
{
  const struct { const char *text; const char *expect; } cases[] = {
    { "not a keyfile", "sandbox.conf:1:" },
    { "[Sandbox]\nProfile=host\nBase host\n", "sandbox.conf:3:" },
    { "[Sandbox]\nBase=host\n", "Profile" },
    { "[Sandbox]\nProfile=host\n", "Base" },
    { "[Sandbox]\nProfile=host\nBase=iso\n", "“iso”" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GlSandbox) s = gl_sandbox_load_from_data ("x", "/store/x", cases[i].text, -1, &error);
      g_assert_null (s);
      g_assert_error (error, GL_STORE_ERROR, GL_STORE_ERROR_MALFORMED);
      g_assert_nonnull (strstr (error->message, "/store/x/sandbox.conf"));
      g_assert_nonnull (strstr (error->message, cases[i].expect));
    }
}

static void
test_list (void)
{
  g_autofree char *store = make_store ();
  g_autoptr(GlSandbox) b = sample (store, "bbb");
  g_autoptr(GlSandbox) a = sample (store, "aaa");
  g_autofree char *broken = g_build_filename (store, "broken", NULL);
  g_autofree char *broken_conf = g_build_filename (broken, "sandbox.conf", NULL);
  g_autofree char *tmp = g_build_filename (store, ".creating-123", NULL);
  g_autoptr(GPtrArray) errors = g_ptr_array_new_with_free_func ((GDestroyNotify) g_error_free);
  g_autoptr(GPtrArray) list = NULL;
  g_autoptr(GlStore) st = gl_store_new (store);
  g_autoptr(GError) error = NULL;

  for (GlSandbox **s = (GlSandbox *[]) { a, b, NULL }; *s; s++)
    {
      g_assert_cmpint (g_mkdir ((*s)->path, 0755), ==, 0);
      g_assert_true (gl_sandbox_save (*s, NULL));
    }
  g_assert_cmpint (g_mkdir (broken, 0755), ==, 0);
  g_assert_true (g_file_set_contents (broken_conf, "[Sandbox]\n", -1, NULL));
  g_assert_cmpint (g_mkdir (tmp, 0700), ==, 0);

  list = gl_store_list (st, errors, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (list->len, ==, 2);
  g_assert_cmpstr (((GlSandbox *) list->pdata[0])->id, ==, "aaa");
  g_assert_cmpstr (((GlSandbox *) list->pdata[1])->id, ==, "bbb");
  g_assert_cmpuint (errors->len, ==, 1);

  /* no store at all: no sandboxes, no error */
  g_clear_pointer (&list, g_ptr_array_unref);
  g_clear_object (&st);
  st = gl_store_new ("/nonexistent/store");
  list = gl_store_list (st, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (list->len, ==, 0);

  g_assert_null (gl_sandbox_load (store, "missing", &error));
  g_assert_error (error, GL_STORE_ERROR, GL_STORE_ERROR_NOT_FOUND);
}

/* Holds LOCK shared, as a launch does; the sandbox is then in use and the
 * administrator's lock is refused. */
static int
hold_shared (GlSandbox *s, const char *lock)
{
  g_autoptr(GError) error = NULL;
  int holder = open (lock, O_RDONLY | O_CLOEXEC);

  g_assert_cmpint (flock (holder, LOCK_SH), ==, 0);
  g_assert_true (gl_sandbox_is_in_use (s));
  g_assert_null (gl_sandbox_lock_exclusive (s, &error));
  g_assert_error (error, GL_STORE_ERROR, GL_STORE_ERROR_IN_USE);
  return holder;
}

static void
test_lock (void)
{
  g_autofree char *store = make_store ();
  g_autoptr(GlSandbox) s = sample (store, "locked");
  g_autofree char *lock = g_build_filename (s->path, "lock", NULL);
  g_autofree char *users = g_build_filename (s->path, "users", NULL);
  g_autofree char *user_dir = gl_sandbox_get_user_dir (s, getuid ());
  g_autofree char *user_lock = g_build_filename (user_dir, "lock", NULL);
  g_autoptr(GError) error = NULL;
  GArray *locks;
  int holder, fd;

  g_assert_cmpint (g_mkdir (s->path, 0755), ==, 0);
  g_assert_cmpint (g_mkdir (users, 0755), ==, 0);
  g_assert_cmpint (g_mkdir (user_dir, 0700), ==, 0);
  g_assert_true (g_file_set_contents (lock, "", 0, NULL));
  g_assert_false (gl_sandbox_is_in_use (s));

  /* what the setuid launcher does while an app runs */
  holder = hold_shared (s, lock);
  close (holder);
  g_assert_false (gl_sandbox_is_in_use (s));

  /* a purge: the user's lock is made, taken and given back */
  fd = gl_sandbox_lock_user (s, getuid (), &error);
  g_assert_no_error (error);
  g_assert_cmpint (fd, >=, 0);
  g_assert_true (g_file_test (user_lock, G_FILE_TEST_IS_REGULAR));
  close (fd);

  /* the user's lock (every launch takes it, setuid or not) */
  holder = hold_shared (s, user_lock);
  g_assert_cmpint (gl_sandbox_lock_user (s, getuid (), &error), ==, -1);
  g_assert_error (error, GL_STORE_ERROR, GL_STORE_ERROR_IN_USE);
  g_clear_error (&error);
  close (holder);

  g_assert_false (gl_sandbox_is_in_use (s));
  locks = gl_sandbox_lock_exclusive (s, &error);
  g_assert_no_error (error);
  g_assert_nonnull (locks);
  g_assert_cmpuint (locks->len, ==, 2);
  /* held: the launcher's shared lock is refused meanwhile */
  holder = open (user_lock, O_RDONLY | O_CLOEXEC);
  g_assert_cmpint (flock (holder, LOCK_SH | LOCK_NB), ==, -1);
  close (holder);
  g_array_unref (locks);
  g_assert_false (gl_sandbox_is_in_use (s));
}

static void
test_rm_rf (void)
{
  g_autofree char *base = g_build_filename (g_get_user_cache_dir (), "rmrf", NULL);
  g_autofree char *keep = g_build_filename (g_get_user_cache_dir (), "keep", NULL);
  g_autofree char *keep_file = g_build_filename (keep, "precious", NULL);
  g_autofree char *deep = g_build_filename (base, "a", "b", "c", NULL);
  g_autofree char *link = g_build_filename (base, "a", "link-to-keep", NULL);
  g_autofree char *f = g_build_filename (deep, "file", NULL);
  g_autoptr(GError) error = NULL;

  g_assert_cmpint (g_mkdir_with_parents (deep, 0755), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (keep, 0755), ==, 0);
  g_assert_true (g_file_set_contents (f, "x", -1, NULL));
  g_assert_true (g_file_set_contents (keep_file, "x", -1, NULL));
  g_assert_cmpint (symlink (keep, link), ==, 0);
  g_assert_cmpint (chmod (deep, 0500), ==, 0);  /* as root this still goes */

  if (geteuid () != 0)
    g_assert_cmpint (chmod (deep, 0755), ==, 0);
  g_assert_true (gl_rm_rf (base, NULL, &error));
  g_assert_no_error (error);
  g_assert_false (g_file_test (base, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (keep_file, G_FILE_TEST_EXISTS));  /* the link was not followed */
  g_assert_true (gl_rm_rf (base, NULL, &error));  /* missing: fine */
}

/* The link gl_rm_rf finds where it had found a directory (below) */
static const char *swap_target;
static gboolean swapped;

/* (the hook before gl_rm_rf's chmod) the directory NAME swapped for a
 * link to swap_target, once, as its owner could between two calls */
static void
swap_for_link (int dfd, const char *name)
{
  g_autofree char *moved = g_strconcat (name, "-moved", NULL);

  swapped = TRUE;
  gl_rm_rf_set_before_chmod_hook (NULL);
  g_assert_cmpint (renameat (dfd, name, dfd, moved), ==, 0);
  g_assert_cmpint (symlinkat (swap_target, dfd, name), ==, 0);
}

/* A directory its owner may not read (overlayfs's work/work, mode 0) is
 * made readable and removed; where a link has taken its place by the time
 * it is made readable, the link is not followed: what it points to keeps
 * its mode.  As an ordinary user (root reads such a directory anyway): in
 * a subprocess, as nobody where the test runs as root. */
static void
test_rm_rf_unreadable (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *top = NULL, *tree = NULL, *dir = NULL, *file = NULL, *outside = NULL;
  struct stat st;

  if (!g_test_subprocess ())
    {
      g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
      g_test_trap_assert_passed ();
      return;
    }
  if (geteuid () == 0)
    {
      /* (in /tmp: the test's TMPDIR is root's alone) */
      top = g_build_filename ("/tmp", "gl-rm-rf-XXXXXX", NULL);
      g_assert_nonnull (g_mkdtemp (top));
      if (chown (top, 65534, 65534) != 0 || setgroups (0, NULL) != 0
          || setresgid (65534, 65534, 65534) != 0 || setresuid (65534, 65534, 65534) != 0)
        {
          g_assert_cmpint (rmdir (top), ==, 0);
          g_test_skip ("cannot become nobody (65534)");
          return;
        }
    }
  else
    {
      top = g_dir_make_tmp ("gl-rm-rf-XXXXXX", &error);
      g_assert_no_error (error);
    }
  tree = g_build_filename (top, "tree", NULL);
  dir = g_build_filename (tree, "work", NULL);
  file = g_build_filename (dir, "file", NULL);
  outside = g_build_filename (top, "outside", NULL);

  /* a directory of mode 0 goes */
  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  g_assert_true (g_file_set_contents (file, "x", -1, NULL));
  g_assert_cmpint (chmod (dir, 0), ==, 0);
  g_assert_true (gl_rm_rf (tree, NULL, &error));
  g_assert_no_error (error);
  g_assert_false (g_file_test (tree, G_FILE_TEST_EXISTS));

  /* swapped for a link to a file of the user's: not followed */
  g_assert_true (g_file_set_contents (outside, "mine", -1, NULL));
  g_assert_cmpint (chmod (outside, 0600), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  g_assert_cmpint (chmod (dir, 0), ==, 0);
  swap_target = "../outside";
  gl_rm_rf_set_before_chmod_hook (swap_for_link);
  (void) gl_rm_rf (tree, NULL, &error);   /* (it may fail: the tree changed under it) */
  g_clear_error (&error);
  g_assert_true (swapped);   /* the swap was made */
  g_assert_cmpint (lstat (outside, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 07777, ==, 0600);

  g_assert_true (gl_rm_rf (top, NULL, &error));
  g_assert_no_error (error);
}

/* gl_rm_rf_freed counts what gl_reclaim_size would have: the tree's
 * directories and files, but not a file that a path outside still links
 * to (an old generation's files linked into the next one). */
static void
test_rm_rf_freed (void)
{
  g_autofree char *base = g_build_filename (g_get_user_cache_dir (), "rmrf-freed", NULL);
  g_autofree char *deep = g_build_filename (base, "a", "b", NULL);
  g_autofree char *own = g_build_filename (deep, "own", NULL);
  g_autofree char *shared = g_build_filename (deep, "shared", NULL);
  g_autofree char *outside = g_build_filename (g_get_user_cache_dir (), "rmrf-freed-link", NULL);
  g_autofree char *big = g_strnfill (64 * 1024, 'x');
  g_autoptr(GError) error = NULL;
  guint64 want, freed = 0;

  g_assert_cmpint (g_mkdir_with_parents (deep, 0755), ==, 0);
  g_assert_true (g_file_set_contents (own, big, -1, NULL));
  g_assert_true (g_file_set_contents (shared, big, -1, NULL));
  g_assert_cmpint (link (shared, outside), ==, 0);
  want = gl_reclaim_size (base);
  g_assert_cmpuint (want, >=, 64 * 1024);
  g_assert_cmpuint (want, <, 2 * 64 * 1024);   /* the shared file: nothing */
  g_assert_true (gl_rm_rf_freed (base, &freed, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (freed, ==, want);
  g_assert_false (g_file_test (base, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (outside, G_FILE_TEST_EXISTS));
  g_assert_cmpint (unlink (outside), ==, 0);
}

/* A tree a sandbox made thousands of directories deep (more than the
 * descriptors a process may open) is removed, with a file at each level,
 * and what it freed is counted as gl_reclaim_size counts it */
static void
test_rm_rf_deep (void)
{
  if (g_test_subprocess ())
    {
      g_autofree char *base = g_build_filename (g_get_user_cache_dir (), "deep", NULL);
      g_autoptr(GError) error = NULL;
      struct rlimit lim;
      guint64 want, freed = 0;
      int fd;

      g_assert_cmpint (g_mkdir_with_parents (base, 0755), ==, 0);
      fd = open (base, O_PATH | O_DIRECTORY | O_CLOEXEC);
      for (guint i = 0; i < 1000; i++)
        {
          int sub, f;

          g_assert_cmpint (mkdirat (fd, "d", 0755), ==, 0);
          g_assert_cmpint (f = openat (fd, "f", O_WRONLY | O_CREAT | O_CLOEXEC, 0644), >=, 0);
          g_assert_cmpint (write (f, "x", 1), ==, 1);
          close (f);
          g_assert_cmpint (mkdirat (fd, "e", 0755), ==, 0);
          g_assert_cmpint (sub = openat (fd, "d", O_PATH | O_DIRECTORY | O_CLOEXEC), >=, 0);
          close (fd);
          fd = sub;
        }
      close (fd);
      want = gl_reclaim_size (base);
      g_assert_cmpint (getrlimit (RLIMIT_NOFILE, &lim), ==, 0);
      lim.rlim_cur = 256;
      g_assert_cmpint (setrlimit (RLIMIT_NOFILE, &lim), ==, 0);
      g_assert_true (gl_rm_rf_freed (base, &freed, NULL, &error));
      g_assert_no_error (error);
      g_assert_false (g_file_test (base, G_FILE_TEST_EXISTS));
      g_assert_cmpuint (freed, ==, want);
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_test_trap_assert_passed ();
}

/* A bind mount of a directory of the same file system inside a tree being
 * removed: st_dev is the same, the mount is another; removal stops there
 * and the bound directory's files survive. */
static void
test_rm_rf_bind (void)
{
  g_autofree char *base = g_build_filename (g_get_user_cache_dir (), "bindtree", NULL);
  g_autofree char *keep = g_build_filename (g_get_user_cache_dir (), "bound", NULL);
  g_autofree char *keep_file = g_build_filename (keep, "precious", NULL);
  g_autofree char *point = g_build_filename (base, "sub", "point", NULL);
  g_autofree char *other = g_build_filename (base, "zz-file", NULL);
  g_autoptr(GError) error = NULL;
  struct stat a, b;

  if (geteuid () != 0)
    {
      gl_test_skip ("needs root to bind-mount in a private mount namespace");
      return;
    }
  if (!g_test_subprocess ())
    {
      g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
      g_test_trap_assert_passed ();
      return;
    }
  if (unshare (CLONE_NEWNS) != 0 || mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
    {
      gl_test_skip_printf ("cannot make a private mount namespace: %s", g_strerror (errno));
      return;
    }

  g_assert_cmpint (g_mkdir_with_parents (point, 0755), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (keep, 0755), ==, 0);
  g_assert_true (g_file_set_contents (keep_file, "x", -1, NULL));
  g_assert_true (g_file_set_contents (other, "x", -1, NULL));
  g_assert_cmpint (mount (keep, point, NULL, MS_BIND, NULL), ==, 0);
  g_assert_cmpint (stat (keep, &a), ==, 0);
  g_assert_cmpint (stat (point, &b), ==, 0);
  g_assert_cmpuint (a.st_dev, ==, b.st_dev);   /* what st_dev alone cannot tell */

  g_assert_false (gl_rm_rf (base, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_BUSY);
  g_assert_nonnull (strstr (error->message, point));
  g_assert_true (g_file_test (keep_file, G_FILE_TEST_EXISTS));
  g_clear_error (&error);

  g_assert_cmpint (umount (point), ==, 0);
  g_assert_true (gl_rm_rf (base, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_test (keep_file, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (base, G_FILE_TEST_EXISTS));
}

/* The generations contract: system/current names system/<N>/tree. */
static void
test_system_generation (void)
{
  g_autofree char *store = make_store ();
  g_autoptr(GlSandbox) s = sample (store, "gen");
  g_autofree char *system = g_build_filename (s->path, "system", NULL);
  g_autofree char *current = g_build_filename (system, "current", NULL);
  g_autofree char *tree = NULL;
  g_autofree char *expected = g_build_filename (s->path, "system", "12", "tree", NULL);
  g_autoptr(GError) error = NULL;
  guint n = 99;
  const char *bad[] = { "", "0\n", "012\n", "12", "-1\n", "x\n", "12\n3\n", "99999999999\n", "1000000001\n", NULL };

  g_assert_cmpint (g_mkdir_with_parents (system, 0755), ==, 0);
  /* none: the base only */
  g_assert_true (gl_sandbox_get_system_generation (s, &n, &error));
  g_assert_cmpuint (n, ==, 0);
  g_assert_null (gl_sandbox_get_system_tree (s));

  g_assert_true (g_file_set_contents (current, "12\n", -1, NULL));
  g_assert_true (gl_sandbox_get_system_generation (s, &n, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (n, ==, 12);
  tree = gl_sandbox_get_system_tree (s);
  g_assert_cmpstr (tree, ==, expected);

  for (guint i = 0; bad[i] != NULL; i++)
    {
      g_autofree char *none = NULL;

      g_assert_true (g_file_set_contents (current, bad[i], -1, NULL));
      g_assert_false (gl_sandbox_get_system_generation (s, &n, &error));
      g_assert_error (error, GL_STORE_ERROR, GL_STORE_ERROR_MALFORMED);
      g_assert_nonnull (strstr (error->message, current));
      g_clear_error (&error);
      none = gl_sandbox_get_system_tree (s);
      g_assert_null (none);
    }
}

/* A rebased sandbox's generation shares its files with its base by hard
 * links: its size counts each file once, as du does (it counted them
 * twice, "Size: 251.3 MiB" for 130 MiB on disk) */
static void
test_size_links (void)
{
  g_autofree char *store = make_store ();
  g_autoptr(GlSandbox) s = sample (store, "size");
  g_autofree char *base = g_build_filename (s->path, "system", "base-2", "tree", NULL);
  g_autofree char *gen = g_build_filename (s->path, "system", "2", "tree", NULL);
  g_autofree char *file = g_build_filename (base, "big", NULL);
  g_autofree char *second = g_build_filename (gen, "big", NULL);
  g_autofree char *data = g_malloc0 (1 << 20);
  guint64 once, twice;

  g_assert_cmpint (g_mkdir_with_parents (base, 0755), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (gen, 0755), ==, 0);
  for (gsize i = 0; i < (1 << 20); i++)
    data[i] = (char) (i * 7 + 1);
  g_assert_true (g_file_set_contents (file, data, 1 << 20, NULL));
  once = gl_sandbox_get_size (s);
  g_assert_cmpuint (once, >=, 1 << 20);
  g_assert_cmpint (link (file, second), ==, 0);
  twice = gl_sandbox_get_size (s);
  /* (the second name adds no more than its directory entry) */
  g_assert_cmpuint (twice, <, once + 64 * 1024);
}

/* After a rebase the base is the one the current generation names, not
 * the rootfs/ the sandbox was created with ("glimpse info" showed that) */
static void
test_base_tree (void)
{
  g_autofree char *store = make_store ();
  g_autoptr(GlSandbox) s = sample (store, "based");
  g_autofree char *system = g_build_filename (s->path, "system", NULL);
  g_autofree char *rootfs = g_build_filename (s->path, "rootfs", NULL);
  g_autofree char *rebased = g_build_filename (system, "base-3", "tree", NULL);
  g_autofree char *gen = g_build_filename (system, "3", NULL);
  g_autofree char *gen_base = g_build_filename (gen, "base", NULL);
  g_autofree char *current = g_build_filename (system, "current", NULL);
  g_autofree char *a = NULL, *b = NULL, *c = NULL, *d = NULL;
  g_autoptr(GlSandbox) host = sample (store, "host-based");

  g_assert_cmpint (g_mkdir_with_parents (rootfs, 0755), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (rebased, 0755), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (gen, 0755), ==, 0);
  a = gl_sandbox_get_base_tree (s);
  g_assert_cmpstr (a, ==, rootfs);
  g_assert_true (g_file_set_contents (current, "3\n", -1, NULL));
  b = gl_sandbox_get_base_tree (s);
  g_assert_cmpstr (b, ==, rootfs);
  g_assert_true (g_file_set_contents (gen_base, "3\n", -1, NULL));
  c = gl_sandbox_get_base_tree (s);
  g_assert_cmpstr (c, ==, rebased);

  g_free (host->base);
  host->base = g_strdup (GL_BASE_HOST);
  d = gl_sandbox_get_base_tree (host);
  g_assert_null (d);
}

static void
test_watch_dirs (void)
{
  g_autofree char *store = make_store ();
  g_autoptr(GlSandbox) s = sample (store, "watch");
  g_autofree char *current = g_build_filename (s->path, "system", "current", NULL);
  g_autofree char *system = g_build_filename (s->path, "system", NULL);
  g_autofree char *apps = g_build_filename (s->path, "system", "3", "tree", "usr", "share", "applications", NULL);
  g_autofree char *rootfs_apps = g_build_filename (s->path, "rootfs", "usr", "share", "applications", NULL);
  g_auto(GStrv) before = NULL;
  g_auto(GStrv) after = NULL;

  before = gl_sandbox_get_watch_dirs (s);
  g_assert_cmpstr (before[0], ==, s->path);
  g_assert_cmpstr (before[1], ==, system);
  g_assert_true (g_strv_contains ((const char * const *) before, rootfs_apps));
  g_assert_false (g_strv_contains ((const char * const *) before, apps));

  g_assert_cmpint (g_mkdir_with_parents (system, 0755), ==, 0);
  g_assert_true (g_file_set_contents (current, "3\n", -1, NULL));
  after = gl_sandbox_get_watch_dirs (s);
  g_assert_true (g_strv_contains ((const char * const *) after, apps));
}

/* A work directory is the store's business while its creator holds it,
 * and rubbish once the creator is gone (as after kill -9). */
static void
test_abandoned (void)
{
  g_autofree char *store_dir = make_store ();
  g_autoptr(GlStore) store = gl_store_new (store_dir);
  g_autofree char *creating = NULL;
  g_autofree char *removing = NULL;
  g_autofree char *inside = NULL;
  g_autoptr(GError) error = NULL;
  int held, dropped;

  held = gl_store_make_work_dir (store, "creating", &creating, &error);
  g_assert_no_error (error);
  g_assert_cmpint (held, >=, 0);
  g_assert_true (g_str_has_prefix (creating, store_dir));
  dropped = gl_store_make_work_dir (store, "removing", &removing, &error);
  g_assert_cmpint (dropped, >=, 0);
  inside = g_build_filename (removing, "half", "done", NULL);
  g_assert_cmpint (g_mkdir_with_parents (inside, 0755), ==, 0);
  close (dropped);

  g_assert_cmpuint (gl_store_clean_abandoned (store, NULL), ==, 1);
  g_assert_true (g_file_test (creating, G_FILE_TEST_IS_DIR));
  g_assert_false (g_file_test (removing, G_FILE_TEST_EXISTS));

  close (held);
  g_assert_cmpuint (gl_store_clean_abandoned (store, NULL), ==, 1);
  g_assert_false (g_file_test (creating, G_FILE_TEST_EXISTS));
}

static void
test_remove (void)
{
  g_autofree char *store_dir = make_store ();
  g_autoptr(GlStore) store = gl_store_new (store_dir);
  g_autoptr(GlSandbox) s = sample (store_dir, "doomed");
  g_autoptr(GlSandbox) back = NULL;
  g_autoptr(GPtrArray) list = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *lock = g_build_filename (s->path, "lock", NULL);

  g_assert_cmpint (g_mkdir (s->path, 0755), ==, 0);
  g_assert_true (gl_sandbox_save (s, NULL));
  g_assert_true (g_file_set_contents (lock, "", 0, NULL));
  back = gl_store_load (store, "doomed", &error);
  g_assert_no_error (error);
  g_assert_true (gl_sandbox_remove (back, FALSE, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_false (g_file_test (s->path, G_FILE_TEST_EXISTS));
  list = gl_store_list (store, NULL, &error);
  g_assert_cmpuint (list->len, ==, 0);
  {
    g_autoptr(GDir) d = g_dir_open (store_dir, 0, NULL);
    const char *name;
    while ((name = g_dir_read_name (d)) != NULL)
      g_assert_false (g_str_has_prefix (name, ".removing-"));
  }
}

/* A child process that runs @prepare (FALSE: it exits at once), tells the
 * test it is ready and lives until the test closes *@release */
static pid_t
start_holder (gboolean (*prepare) (gconstpointer data), gconstpointer data, int *release)
{
  int ready[2], rel[2];
  pid_t pid;
  char c;

  g_assert_cmpint (pipe2 (ready, O_CLOEXEC), ==, 0);
  g_assert_cmpint (pipe2 (rel, O_CLOEXEC), ==, 0);
  pid = fork ();
  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      close (ready[0]);
      close (rel[1]);
      if (!prepare (data))
        _exit (1);
      (void) !write (ready[1], "r", 1);
      (void) !read (rel[0], &c, 1);   /* until the test closes its end */
      _exit (0);
    }
  close (ready[1]);
  close (rel[0]);
  g_assert_cmpint (read (ready[0], &c, 1), ==, 1);
  close (ready[0]);
  *release = rel[1];
  return pid;
}

static gboolean
take_lock (gconstpointer path)
{
  int fd = open (path, O_RDWR | O_CLOEXEC);

  return fd >= 0 && flock (fd, LOCK_EX) == 0;
}

static gboolean
become_uid (gconstpointer data)
{
  uid_t uid = GPOINTER_TO_UINT (data);

  return setgroups (0, NULL) == 0 && setresgid (uid, uid, uid) == 0 && setresuid (uid, uid, uid) == 0;
}

static void
count_line (const char *line, gpointer user_data)
{
  GPtrArray *lines = user_data;

  g_ptr_array_add (lines, g_strdup (line));
}

/* A saved sandbox ID of STORE with a trash TRASH (system/TRASH, its lock
 * file made), loaded back from the store; *TRASH_LOCK: that lock's path */
static GlSandbox *
sample_with_trash (GlStore *store, const char *store_dir, const char *id, const char *trash,
                   char **trash_lock)
{
  g_autoptr(GlSandbox) s = sample (store_dir, id);
  g_autoptr(GError) error = NULL;
  g_autofree char *lock = g_build_filename (s->path, "lock", NULL);
  g_autofree char *dir = g_build_filename (s->path, "system", trash, NULL);
  GlSandbox *back;

  *trash_lock = g_build_filename (dir, "lock", NULL);
  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  g_assert_true (gl_sandbox_save (s, NULL));
  g_assert_true (g_file_set_contents (lock, "", 0, NULL));
  g_assert_true (g_file_set_contents (*trash_lock, "", 0, NULL));
  back = gl_store_load (store, id, &error);
  g_assert_no_error (error);
  return back;
}

/* A trash (system/.trash-*) whose removal still runs, its lock held by
 * another process: remove waits a bounded time, saying for what, then
 * fails naming the trash and the process (it used to wait for good) */
static void
test_remove_trash_busy (void)
{
  g_autofree char *store_dir = make_store ();
  g_autoptr(GlStore) store = gl_store_new (store_dir);
  g_autofree char *trash_lock = NULL;
  g_autoptr(GlSandbox) back = sample_with_trash (store, store_dir, "trashy", ".trash-abc123", &trash_lock);
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *pid_str = NULL;
  int release;
  pid_t pid;

  pid = start_holder (take_lock, trash_lock, &release);

  gl_sandbox_set_trash_wait_for_tests (300);
  g_assert_false (gl_sandbox_remove (back, FALSE, count_line, lines, NULL, &error));
  g_assert_error (error, GL_STORE_ERROR, GL_STORE_ERROR_IN_USE);
  pid_str = g_strdup_printf ("process %d", (int) pid);
  g_assert_nonnull (strstr (error->message, ".trash-abc123"));
  g_assert_nonnull (strstr (error->message, pid_str));
  g_assert_nonnull (strstr (error->message, "kill"));
  g_assert_cmpuint (lines->len, ==, 1);
  g_assert_nonnull (strstr (lines->pdata[0], "Waiting for the removal"));
  g_assert_nonnull (strstr (lines->pdata[0], pid_str));
  g_assert_true (g_file_test (trash_lock, G_FILE_TEST_IS_REGULAR));
  g_clear_error (&error);

  /* the removal ended: remove goes ahead, without a word */
  close (release);
  g_assert_cmpint (waitpid (pid, NULL, 0), ==, pid);
  g_ptr_array_set_size (lines, 0);
  g_assert_true (gl_sandbox_remove (back, FALSE, count_line, lines, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (lines->len, ==, 0);
  g_assert_false (g_file_test (back->path, G_FILE_TEST_EXISTS));
  gl_sandbox_set_trash_wait_for_tests (60000);
}

/* The trash's lock taken by one process and handed on to another, as
 * glimpse hands its locks to the detached glimpse-remove-trash and ends:
 * the messages name the process that holds it now.  /proc/locks names
 * the one that took it, which is gone (in a PID namespace as 0: "process
 * 0 … end it (kill 0)"). */
static void
test_remove_trash_handed_on (void)
{
  g_autofree char *store_dir = make_store ();
  g_autoptr(GlStore) store = gl_store_new (store_dir);
  g_autofree char *trash_lock = NULL;
  g_autoptr(GlSandbox) back = sample_with_trash (store, store_dir, "handed", ".trash-def456", &trash_lock);
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *pid_str = NULL;
  int ready[2], rel[2];
  pid_t taker, holder = 0;

  g_assert_cmpint (pipe2 (ready, O_CLOEXEC), ==, 0);
  g_assert_cmpint (pipe2 (rel, O_CLOEXEC), ==, 0);
  taker = fork ();
  g_assert_cmpint (taker, >=, 0);
  if (taker == 0)
    {
      int fd = open (trash_lock, O_RDWR | O_CLOEXEC);
      pid_t pid;
      char c;

      close (ready[0]);
      close (rel[1]);
      if (fd < 0 || flock (fd, LOCK_EX) != 0)
        _exit (1);
      pid = fork ();
      if (pid == 0)
        {
          pid_t me = getpid ();

          (void) !write (ready[1], &me, sizeof me);
          (void) !read (rel[0], &c, 1);   /* until the test closes its end */
          _exit (0);
        }
      _exit (pid > 0 ? 0 : 1);
    }
  close (ready[1]);
  close (rel[0]);
  g_assert_cmpint (read (ready[0], &holder, sizeof holder), ==, sizeof holder);
  close (ready[0]);
  g_assert_cmpint (waitpid (taker, NULL, 0), ==, taker);

  gl_sandbox_set_trash_wait_for_tests (300);
  g_assert_false (gl_sandbox_remove (back, FALSE, count_line, lines, NULL, &error));
  g_assert_error (error, GL_STORE_ERROR, GL_STORE_ERROR_IN_USE);
  pid_str = g_strdup_printf ("process %d;", (int) holder);
  g_assert_nonnull (strstr (error->message, pid_str));
  g_assert_null (strstr (error->message, "kill 0"));
  g_assert_cmpuint (lines->len, ==, 1);
  g_clear_pointer (&pid_str, g_free);
  pid_str = g_strdup_printf ("process %d)", (int) holder);
  g_assert_nonnull (strstr (lines->pdata[0], pid_str));
  g_clear_error (&error);

  /* the removal ended: remove goes ahead (the holder is not the test's
   * child: it ends when its end of the pipe closes) */
  close (rel[1]);
  gl_sandbox_set_trash_wait_for_tests (10000);
  g_assert_true (gl_sandbox_remove (back, FALSE, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_false (g_file_test (back->path, G_FILE_TEST_EXISTS));
  gl_sandbox_set_trash_wait_for_tests (60000);
}

/* A uid the password database does not know */
static uid_t
unknown_uid (void)
{
  uid_t uid = 3999999000u;

  while (getpwuid (uid) != NULL)
    uid++;
  return uid;
}

/* A sandbox with root's record of a view of UID (users/.views/UID) and
 * UID's layer */
static GlSandbox *
sample_viewed (GlStore *store, const char *store_dir, const char *id, uid_t uid)
{
  g_autoptr(GlSandbox) s = sample (store_dir, id);
  g_autofree char *uid_str = g_strdup_printf ("%u", (unsigned) uid);
  g_autofree char *lock = g_build_filename (s->path, "lock", NULL);
  g_autofree char *views = g_build_filename (s->path, "users", ".views", NULL);
  g_autofree char *record = g_build_filename (views, uid_str, NULL);
  g_autofree char *layer = g_build_filename (s->path, "users", uid_str, NULL);

  g_assert_cmpint (g_mkdir_with_parents (views, 0755), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (layer, 0755), ==, 0);
  g_assert_true (gl_sandbox_save (s, NULL));
  g_assert_true (g_file_set_contents (lock, "", 0, NULL));
  g_assert_true (g_file_set_contents (record, "", 0, NULL));
  return gl_store_load (store, id, NULL);
}

/* A user with a record of a view who is gone from the password database
 * (the launcher cannot be asked as them): remove goes ahead while no
 * process of that uid runs, and refuses, naming it, while one does. */
static void
test_remove_unknown_user (void)
{
  g_autofree char *store_dir = make_store ();
  g_autoptr(GlStore) store = gl_store_new (store_dir);
  uid_t uid = unknown_uid ();
  g_autoptr(GlSandbox) gone = sample_viewed (store, store_dir, "gone", uid);
  g_autoptr(GlSandbox) held = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *pid_str = NULL;
  int release;
  pid_t pid;

  g_assert_true (gl_sandbox_remove (gone, FALSE, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_false (g_file_test (gone->path, G_FILE_TEST_EXISTS));

  if (geteuid () != 0)
    {
      gl_test_skip ("needs root to run a process as a uid without a user");
      return;
    }
  held = sample_viewed (store, store_dir, "held", uid);
  pid = start_holder (become_uid, GUINT_TO_POINTER (uid), &release);

  pid_str = g_strdup_printf ("process %d (", (int) pid);
  g_assert_false (gl_sandbox_remove (held, FALSE, NULL, NULL, NULL, &error));
  g_assert_error (error, GL_STORE_ERROR, GL_STORE_ERROR_IN_USE);
  g_assert_nonnull (strstr (error->message, pid_str));
  g_assert_true (g_file_test (held->path, G_FILE_TEST_IS_DIR));
  g_clear_error (&error);

  close (release);
  g_assert_cmpint (waitpid (pid, NULL, 0), ==, pid);
  g_assert_true (gl_sandbox_remove (held, FALSE, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
}

/* glimpse's own reads and writes in a tree being built follow none of its
 * links (they could name host files) and read no FIFO (it would hang) */
static void
test_tree_files (void)
{
  g_autoptr(GlTestTmpdir) tmp = gl_test_tmpdir_new ("gl-tree-XXXXXX");
  g_autofree char *root = g_build_filename (tmp, "root", NULL);
  g_autofree char *outside = g_build_filename (tmp, "outside", NULL);
  g_autofree char *target = g_build_filename (outside, "target", NULL);
  g_autofree char *p = NULL;
  g_autofree char *text = NULL;
  g_autoptr(GError) error = NULL;
  gsize len = 0;

  g_assert_cmpint (g_mkdir_with_parents (outside, 0755), ==, 0);
  g_assert_true (g_file_set_contents (target, "host's", -1, NULL));
  p = g_build_filename (root, "etc", NULL);
  g_assert_cmpint (g_mkdir_with_parents (p, 0755), ==, 0);
  g_free (p);
  p = g_build_filename (root, "etc", "plain", NULL);
  g_assert_true (g_file_set_contents (p, "nameserver 1\n", -1, NULL));
  g_free (p);
  p = g_build_filename (root, "etc", "link", NULL);
  g_assert_cmpint (symlink (target, p), ==, 0);
  g_free (p);
  p = g_build_filename (root, "etc", "fifo", NULL);
  g_assert_cmpint (mkfifo (p, 0644), ==, 0);
  g_free (p);
  p = g_build_filename (root, "dirlink", NULL);
  g_assert_cmpint (symlink (outside, p), ==, 0);

  g_assert_true (gl_tree_read_file (root, "etc/plain", &text, &len, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (text, ==, "nameserver 1\n");
  g_clear_pointer (&text, g_free);
  g_assert_false (gl_tree_read_file (root, "etc/link", &text, NULL, &error));
  g_clear_error (&error);
  g_assert_false (gl_tree_read_file (root, "dirlink/target", &text, NULL, &error));
  g_clear_error (&error);
  g_assert_false (gl_tree_read_file (root, "etc/fifo", &text, NULL, &error));
  g_clear_error (&error);
  g_assert_false (gl_tree_read_file (root, "../outside/target", &text, NULL, &error));
  g_clear_error (&error);

  /* a link in the way: refused; the link itself: replaced, never followed */
  g_assert_false (gl_tree_write_file (root, "dirlink/target", "tree's", -1, 0644, &error));
  g_clear_error (&error);
  g_assert_true (gl_tree_write_file (root, "etc/link", "tree's", -1, 0644, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (target, &text, NULL, NULL));
  g_assert_cmpstr (text, ==, "host's");
  g_clear_pointer (&text, g_free);
  g_assert_true (gl_tree_read_file (root, "etc/link", &text, NULL, &error));
  g_assert_cmpstr (text, ==, "tree's");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/fsutil/tree-files", test_tree_files);

  g_test_add_func ("/store/id/valid", test_id_valid);
  g_test_add_func ("/store/id/allocate", test_allocate);
  g_test_add_func ("/store/conf/roundtrip", test_roundtrip);
  g_test_add_func ("/store/conf/malformed", test_malformed_conf);
  g_test_add_func ("/store/list", test_list);
  g_test_add_func ("/store/lock", test_lock);
  g_test_add_func ("/store/rm-rf", test_rm_rf);
  g_test_add_func ("/store/rm-rf-freed", test_rm_rf_freed);
  g_test_add_func ("/store/rm-rf-unreadable", test_rm_rf_unreadable);
  g_test_add_func ("/store/rm-rf-deep", test_rm_rf_deep);
  g_test_add_func ("/store/rm-rf-bind", test_rm_rf_bind);
  g_test_add_func ("/store/system-generation", test_system_generation);
  g_test_add_func ("/store/size-links", test_size_links);
  g_test_add_func ("/store/base-tree", test_base_tree);
  g_test_add_func ("/store/watch-dirs", test_watch_dirs);
  g_test_add_func ("/store/abandoned", test_abandoned);
  g_test_add_func ("/store/remove", test_remove);
  g_test_add_func ("/store/remove-trash-busy", test_remove_trash_busy);
  g_test_add_func ("/store/remove-trash-handed-on", test_remove_trash_handed_on);
  g_test_add_func ("/store/remove-unknown-user", test_remove_unknown_user);
  return g_test_run ();
}
