/* test-fsutil.c: the view's resolver (gl_view_*): layers read as an
 * overlay shows them, links followed inside the view or not at all
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "gl-fsutil.h"
#include "gl-fsutil-private.h"
#include "gl-test-skip.h"
#include "gl-test-tmpdir.h"

#define write_file gl_test_write_file

/* A view: an upper layer (a system generation) over a lower one (the base) */
typedef struct {
  GlTestTmpdir *tmp;
  char *upper;
  char *lower;
  const char *layers[2];
  guint fds;     /* open at the start: the same at the end */
} View;

static guint
count_fds (void)
{
  g_autoptr(GDir) d = g_dir_open ("/proc/self/fd", 0, NULL);
  guint n = 0;

  g_assert_nonnull (d);
  while (g_dir_read_name (d) != NULL)
    n++;
  return n;
}

static void
view_setup (View *v, gconstpointer data)
{
  v->tmp = gl_test_tmpdir_new ("gl-fsutil-XXXXXX");
  v->upper = g_build_filename (v->tmp, "upper", NULL);
  v->lower = g_build_filename (v->tmp, "lower", NULL);
  g_assert_cmpint (g_mkdir (v->upper, 0755), ==, 0);
  g_assert_cmpint (g_mkdir (v->lower, 0755), ==, 0);
  v->layers[0] = v->upper;
  v->layers[1] = v->lower;
  v->fds = count_fds ();
}

static void
view_teardown (View *v, gconstpointer data)
{
  /* (no descriptor of the resolver's left open) */
  g_assert_cmpuint (count_fds (), ==, v->fds);
  g_free (v->upper);
  g_free (v->lower);
  gl_test_tmpdir_free (v->tmp);
}

/* @rel of the view, followed or not: its contents, or NULL with *@got
 * what it was */
static char *
read_view (View *v, const char *rel, GlViewFlags flags, gsize max, GlViewFile *got)
{
  char *text = NULL;

  *got = gl_view_read_file_full (v->layers, G_N_ELEMENTS (v->layers), rel, flags, max, &text, NULL);
  g_assert_true ((*got == GL_VIEW_FILE) == (text != NULL));
  return text;
}

/* What @rel of the view is, its text or "(absent)"/"(unknown)" */
static char *
view_says (View *v, const char *rel, GlViewFlags flags)
{
  GlViewFile got;
  char *text = read_view (v, rel, flags, 1024, &got);

  return text != NULL ? text : g_strdup (got == GL_VIEW_ABSENT ? "(absent)" : "(unknown)");
}

#define assert_view(v, rel, flags, want) \
  G_STMT_START { \
    g_autofree char *said_ = view_says ((v), (rel), (flags)); \
    g_assert_cmpstr (said_, ==, (want)); \
  } G_STMT_END

static void
make_link (const char *root, const char *rel, const char *target)
{
  g_autofree char *path = g_build_filename (root, rel, NULL);
  g_autofree char *dir = g_path_get_dirname (path);

  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  g_assert_cmpint (symlink (target, path), ==, 0);
}

/* A whiteout (a character device 0:0); FALSE, and the case skipped, where
 * one cannot be made */
static gboolean
make_whiteout (const char *root, const char *rel)
{
  g_autofree char *path = g_build_filename (root, rel, NULL);
  g_autofree char *dir = g_path_get_dirname (path);

  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  if (mknod (path, S_IFCHR | 0600, makedev (0, 0)) != 0)
    {
      gl_test_skip_printf ("cannot make a whiteout here (mknod: %s): run as root or on Linux >= 5.8",
                           g_strerror (errno));
      return FALSE;
    }
  return TRUE;
}

/* A link of the upper layer (apt's trusted.gpg.d) to a keyring of the
 * lower one is followed to it, absolute or relative; a link of the lower
 * layer to a file of the upper one too; not without the flag (the store
 * reads untrusted trees as root). */
static void
test_link_to_lower (View *v, gconstpointer data)
{
  write_file (v->lower, "usr/share/keyrings/debian.gpg", "lower key");
  make_link (v->upper, "etc/apt/trusted.gpg.d/debian.gpg", "/usr/share/keyrings/debian.gpg");
  make_link (v->upper, "etc/apt/trusted.gpg.d/rel.gpg", "../../../usr/share/keyrings/debian.gpg");
  write_file (v->upper, "usr/share/keyrings/new.gpg", "upper key");
  make_link (v->lower, "etc/apt/trusted.gpg.d/new.gpg", "/usr/share/keyrings/new.gpg");
  /* a directory on the way that is a link */
  make_link (v->lower, "etc/keys", "../usr/share/keyrings");

  assert_view (v, "etc/apt/trusted.gpg.d/debian.gpg", GL_VIEW_FOLLOW_LINKS, "lower key");
  assert_view (v, "/etc/apt/trusted.gpg.d/rel.gpg", GL_VIEW_FOLLOW_LINKS, "lower key");
  assert_view (v, "etc/apt/trusted.gpg.d/new.gpg", GL_VIEW_FOLLOW_LINKS, "upper key");
  assert_view (v, "etc/keys/new.gpg", GL_VIEW_FOLLOW_LINKS, "upper key");
  /* (".." after a link: from where the link led) */
  assert_view (v, "etc/keys/../keyrings/debian.gpg", GL_VIEW_FOLLOW_LINKS, "lower key");
  assert_view (v, "etc/keys/../../../etc/keys/debian.gpg", GL_VIEW_FOLLOW_LINKS, "lower key");

  assert_view (v, "etc/apt/trusted.gpg.d/debian.gpg", GL_VIEW_NO_FLAGS, "(unknown)");
  assert_view (v, "etc/keys/new.gpg", GL_VIEW_NO_FLAGS, "(unknown)");
  assert_view (v, "etc/apt/../keys", GL_VIEW_NO_FLAGS, "(unknown)");
  assert_view (v, "usr/share/keyrings/debian.gpg", GL_VIEW_NO_FLAGS, "lower key");

  /* the directory's names, through the link, from both layers */
  {
    g_autoptr(GHashTable) names = gl_view_dir_names_full (v->layers, 2, "etc/keys", GL_VIEW_FOLLOW_LINKS);

    g_assert_nonnull (names);
    g_assert_cmpuint (g_hash_table_size (names), ==, 2);
    g_assert_true (g_hash_table_contains (names, "debian.gpg"));
    g_assert_true (g_hash_table_contains (names, "new.gpg"));
    g_assert_null (gl_view_dir_names (v->layers, 2, "etc/keys"));
  }
}

/* A loop of links, or a chain longer than 40, is refused, at once */
static void
test_link_loop (View *v, gconstpointer data)
{
  make_link (v->upper, "etc/a", "b");
  make_link (v->lower, "etc/b", "/etc/a");
  make_link (v->upper, "etc/self", "self");
  make_link (v->upper, "etc/dir", "dir/x");
  write_file (v->lower, "chain/41", "end");
  for (guint i = 0; i <= 40; i++)
    {
      g_autofree char *rel = g_strdup_printf ("chain/%u", i);
      g_autofree char *target = g_strdup_printf ("%u", i + 1);

      make_link (v->upper, rel, target);
    }

  assert_view (v, "etc/a", GL_VIEW_FOLLOW_LINKS, "(unknown)");
  assert_view (v, "etc/self", GL_VIEW_FOLLOW_LINKS, "(unknown)");
  assert_view (v, "etc/dir", GL_VIEW_FOLLOW_LINKS, "(unknown)");
  g_assert_null (gl_view_dir_names_full (v->layers, 2, "etc/a", GL_VIEW_FOLLOW_LINKS));
  /* 40 links are followed, 41 are not */
  assert_view (v, "chain/1", GL_VIEW_FOLLOW_LINKS, "end");
  assert_view (v, "chain/0", GL_VIEW_FOLLOW_LINKS, "(unknown)");
}

/* An absolute link is taken from the view's root, a ".." stops there: a
 * link never reaches the host's files */
static void
test_link_escape (View *v, gconstpointer data)
{
  g_autofree char *outside = g_build_filename (v->tmp, "host-secret", NULL);

  write_file (v->tmp, "host-secret", "host");
  write_file (v->lower, "etc/hostname", "view");
  /* the host's path of a file outside the view */
  make_link (v->upper, "etc/abs", outside);
  make_link (v->upper, "etc/host", "/etc/hostname");
  /* more ".." than it takes to leave the layer */
  make_link (v->upper, "etc/rel", "../../../../../../../../../../../../../../../etc/hostname");
  make_link (v->upper, "etc/up", "../../../../../../../../../../../../../../../host-secret");
  make_link (v->upper, "etc/root", "../../../../../../..");

  assert_view (v, "etc/abs", GL_VIEW_FOLLOW_LINKS, "(absent)");
  assert_view (v, "etc/host", GL_VIEW_FOLLOW_LINKS, "view");
  assert_view (v, "etc/rel", GL_VIEW_FOLLOW_LINKS, "view");
  assert_view (v, "etc/up", GL_VIEW_FOLLOW_LINKS, "(absent)");
  assert_view (v, "../../../../host-secret", GL_VIEW_FOLLOW_LINKS, "(absent)");
  assert_view (v, "etc/root/etc/hostname", GL_VIEW_FOLLOW_LINKS, "view");
  assert_view (v, "etc/root/../host-secret", GL_VIEW_FOLLOW_LINKS, "(absent)");
}

/* A whiteout on the link's target hides the lower layer's file, and so
 * do a whiteout of the link and an opaque directory on the target's way */
static void
test_link_whiteout (View *v, gconstpointer data)
{
  g_autofree char *dir = g_build_filename (v->upper, "opaque", NULL);

  write_file (v->lower, "usr/share/keyrings/gone.gpg", "deleted key");
  write_file (v->lower, "usr/share/keyrings/kept.gpg", "kept key");
  write_file (v->lower, "opaque/key.gpg", "hidden key");
  make_link (v->upper, "etc/apt/trusted.gpg.d/gone.gpg", "/usr/share/keyrings/gone.gpg");
  make_link (v->lower, "etc/apt/trusted.gpg.d/kept.gpg", "/usr/share/keyrings/kept.gpg");
  make_link (v->lower, "etc/apt/trusted.gpg.d/hidden.gpg", "../../../opaque/key.gpg");
  assert_view (v, "etc/apt/trusted.gpg.d/gone.gpg", GL_VIEW_FOLLOW_LINKS, "deleted key");
  assert_view (v, "etc/apt/trusted.gpg.d/kept.gpg", GL_VIEW_FOLLOW_LINKS, "kept key");
  assert_view (v, "etc/apt/trusted.gpg.d/hidden.gpg", GL_VIEW_FOLLOW_LINKS, "hidden key");

  g_assert_cmpint (g_mkdir (dir, 0755), ==, 0);
  if (setxattr (dir, "user.overlay.opaque", "y", 1, 0) == 0)
    assert_view (v, "etc/apt/trusted.gpg.d/hidden.gpg", GL_VIEW_FOLLOW_LINKS, "(absent)");
  else
    g_test_message ("no user xattrs here (%s): the opaque directory not checked", g_strerror (errno));

  if (!make_whiteout (v->upper, "usr/share/keyrings/gone.gpg")
      || !make_whiteout (v->upper, "etc/apt/trusted.gpg.d/kept.gpg"))
    return;
  assert_view (v, "etc/apt/trusted.gpg.d/gone.gpg", GL_VIEW_FOLLOW_LINKS, "(absent)");
  assert_view (v, "usr/share/keyrings/gone.gpg", GL_VIEW_NO_FLAGS, "(absent)");
  assert_view (v, "etc/apt/trusted.gpg.d/kept.gpg", GL_VIEW_FOLLOW_LINKS, "(absent)");
  assert_view (v, "usr/share/keyrings/kept.gpg", GL_VIEW_FOLLOW_LINKS, "kept key");
  {
    g_autoptr(GHashTable) names = gl_view_dir_names_full (v->layers, 2, "etc/apt/trusted.gpg.d",
                                                          GL_VIEW_FOLLOW_LINKS);

    g_assert_nonnull (names);
    g_assert_true (g_hash_table_contains (names, "gone.gpg"));
    g_assert_false (g_hash_table_contains (names, "kept.gpg"));
  }
}

/* A FIFO (nobody writes it) and a file over the bound are refused at
 * once, directly or at the end of a link, and so is a link to our stdin
 * on a view over the host's / (the view's /proc/self/fd/0 is ours) */
static void
test_not_regular (View *v, gconstpointer data)
{
  if (g_test_subprocess ())
    {
      g_autofree char *fifo = g_build_filename (v->lower, "var/fifo", NULL);
      const char *host[] = { v->upper, "/" };
      GlViewFile got;
      char *text;
      int fd = -1;

      write_file (v->lower, "var/placeholder", "");
      g_assert_cmpint (mkfifo (fifo, 0644), ==, 0);
      make_link (v->upper, "etc/fifo", "/var/fifo");
      write_file (v->upper, "var/big", "0123456789abcdefX");
      write_file (v->upper, "var/fits", "0123456789abcdef");
      make_link (v->upper, "etc/big", "../var/big");
      make_link (v->upper, "etc/stdin", "/proc/self/fd/0");

      assert_view (v, "var/fifo", GL_VIEW_FOLLOW_LINKS, "(unknown)");
      assert_view (v, "etc/fifo", GL_VIEW_FOLLOW_LINKS, "(unknown)");
      assert_view (v, "var/fifo", GL_VIEW_NO_FLAGS, "(unknown)");
      g_assert_cmpint (gl_view_open_file_full (v->layers, 2, "etc/fifo", GL_VIEW_FOLLOW_LINKS, 16, &fd),
                       ==, GL_VIEW_UNKNOWN);
      g_assert_cmpint (fd, ==, -1);

      text = read_view (v, "var/fits", GL_VIEW_FOLLOW_LINKS, 16, &got);
      g_assert_cmpstr (text, ==, "0123456789abcdef");
      g_free (text);
      g_assert_null (read_view (v, "etc/big", GL_VIEW_FOLLOW_LINKS, 16, &got));
      g_assert_cmpint (got, ==, GL_VIEW_UNKNOWN);
      g_assert_null (read_view (v, "var/big", GL_VIEW_NO_FLAGS, 16, &got));
      g_assert_cmpint (got, ==, GL_VIEW_UNKNOWN);

      g_assert_cmpint (gl_view_open_file_full (host, 2, "etc/stdin", GL_VIEW_FOLLOW_LINKS, 1024, &fd),
                       !=, GL_VIEW_FILE);
      g_assert_cmpint (gl_view_open_file_full (host, 2, "dev/stdin", GL_VIEW_FOLLOW_LINKS, 1024, &fd),
                       !=, GL_VIEW_FILE);
      return;
    }
  /* (stdin: a pipe whose writer stays open and silent) */
  g_test_trap_subprocess (NULL, 20 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_INHERIT_STDIN);
  g_test_trap_assert_passed ();
}

/* Links full of ".." (each walks again from the root) cost a bounded
 * walk: 40 links of 4 KiB, each leading on through the next, are
 * refused at once (they took minutes of CPU); one long link within the
 * bounds is still followed */
static void
test_link_dotdots (View *v, gconstpointer data)
{
  if (g_test_subprocess ())
    {
      g_autoptr(GString) sane = g_string_new (NULL);

      write_file (v->lower, "etc/hostname", "view");
      write_file (v->upper, "d/placeholder", "");
      for (guint k = 1; k <= 40; k++)
        {
          g_autofree char *rel = g_strdup_printf ("L%u", k);
          g_autoptr(GString) target = g_string_new (NULL);

          if (k < 40)
            g_string_append_printf (target, "L%u", k + 1);
          else
            g_string_append (target, "d");
          while (target->len + 3 < 4000)
            g_string_append (target, "/..");
          make_link (v->upper, rel, target->str);
        }
      make_link (v->upper, "etc/apt/sources.list", "/L1");
      assert_view (v, "etc/apt/sources.list", GL_VIEW_FOLLOW_LINKS, "(unknown)");
      g_assert_null (gl_view_dir_names_full (v->layers, 2, "L1", GL_VIEW_FOLLOW_LINKS));

      /* each short enough, but walking 600 directories down and up
       * again (each ".." walking down again) */
      {
        g_autoptr(GString) deep = g_string_new (NULL);

        for (guint i = 0; i < 600; i++)
          g_string_append (deep, "d/");
        g_string_append (deep, "f");
        write_file (v->lower, deep->str, "");
      }
      for (guint k = 1; k <= 40; k++)
        {
          g_autofree char *rel = g_strdup_printf ("M%u", k);
          g_autoptr(GString) target = g_string_new (NULL);

          for (guint i = 0; i < 600; i++)
            g_string_append (target, "d/");
          for (guint i = 0; i < 600; i++)
            g_string_append (target, "../");
          if (k < 40)
            g_string_append_printf (target, "M%u", k + 1);
          else
            g_string_append (target, "etc/hostname");
          make_link (v->upper, rel, target->str);
        }
      assert_view (v, "M1", GL_VIEW_FOLLOW_LINKS, "(unknown)");

      for (guint i = 0; i < 1000; i++)
        g_string_append (sane, "../");
      g_string_append (sane, "etc/hostname");
      make_link (v->upper, "etc/sane", sane->str);
      assert_view (v, "etc/sane", GL_VIEW_FOLLOW_LINKS, "view");
      return;
    }
  g_test_trap_subprocess (NULL, 20 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

static char *swap_to;

/* Puts a link to swap_to where the resolver found a regular file */
static void
swap_for_link (int dfd, const char *name)
{
  g_assert_cmpint (unlinkat (dfd, name, 0), ==, 0);
  g_assert_cmpint (symlinkat (swap_to, dfd, name), ==, 0);
}

/* What is read is what the resolver opened: a file swapped for a link
 * after it was opened is still read as it was; swapped between being
 * found and being opened, it is not read at all (neither is the link's
 * target) */
static void
test_swap (View *v, gconstpointer data)
{
  g_autofree char *file = g_build_filename (v->upper, "etc/apt/sources.list", NULL);
  g_autofree char *other = g_build_filename (v->tmp, "other", NULL);
  g_autofree char *text = NULL;
  char buf[64];
  gssize n;
  int fd = -1;

  write_file (v->upper, "etc/apt/sources.list", "deb http://deb.debian.org/debian sid main\n");
  write_file (v->tmp, "other", "deb http://attacker.example/ sid main\n");
  write_file (v->lower, "etc/apt/other", "deb http://lower.example/ sid main\n");

  g_assert_cmpint (gl_view_open_file_full (v->layers, 2, "etc/apt/sources.list", GL_VIEW_FOLLOW_LINKS,
                                           1024, &fd), ==, GL_VIEW_FILE);
  g_assert_cmpint (g_unlink (file), ==, 0);
  g_assert_cmpint (symlink (other, file), ==, 0);
  n = read (fd, buf, sizeof buf - 1);
  g_assert_cmpint (n, >, 0);
  buf[n] = '\0';
  g_assert_cmpstr (buf, ==, "deb http://deb.debian.org/debian sid main\n");
  close (fd);

  /* the host's file, and a file of the view */
  g_assert_cmpint (g_unlink (file), ==, 0);
  write_file (v->upper, "etc/apt/sources.list", "deb http://deb.debian.org/debian sid main\n");
  gl_view_set_before_open_hook (swap_for_link);
  for (guint i = 0; i < 2; i++)
    {
      GlViewFile got;

      g_free (swap_to);
      swap_to = g_strdup (i == 0 ? other : "other");
      g_assert_null (read_view (v, "etc/apt/sources.list", GL_VIEW_FOLLOW_LINKS, 1024, &got));
      g_assert_cmpint (got, ==, GL_VIEW_UNKNOWN);
      g_assert_cmpint (g_unlink (file), ==, 0);
      write_file (v->upper, "etc/apt/sources.list", "deb http://deb.debian.org/debian sid main\n");
    }
  gl_view_set_before_open_hook (NULL);
  g_clear_pointer (&swap_to, g_free);
  /* (and, left alone, it reads) */
  text = view_says (v, "etc/apt/sources.list", GL_VIEW_FOLLOW_LINKS);
  g_assert_cmpstr (text, ==, "deb http://deb.debian.org/debian sid main\n");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  gl_test_silent_stdin ();
#define ADD(path, func) g_test_add ((path), View, NULL, view_setup, (func), view_teardown)
  ADD ("/fsutil/view/link-to-lower", test_link_to_lower);
  ADD ("/fsutil/view/link-loop", test_link_loop);
  ADD ("/fsutil/view/link-escape", test_link_escape);
  ADD ("/fsutil/view/link-whiteout", test_link_whiteout);
  ADD ("/fsutil/view/not-regular", test_not_regular);
  ADD ("/fsutil/view/link-dotdots", test_link_dotdots);
  ADD ("/fsutil/view/swap", test_swap);
#undef ADD
  return g_test_run ();
}
