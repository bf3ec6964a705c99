/* test-updates-view.c: what the update check reads of a sandbox's view
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gl-test-tmpdir.h"
#include "gl-updates.h"

#define write_file gl_test_write_file

/* The check of the view @tree over @base: its error's message */
static char *
check_message (const char *tree, const char *base)
{
  const char *layers[] = { tree, base, NULL };
  g_autofree char *cache = g_build_filename (g_get_user_cache_dir (), "check", NULL);
  g_autofree char *index = g_build_filename (g_get_user_cache_dir (), "indexes", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) updates = gl_updates_check (layers, cache, index, NULL, NULL, &error);

  g_assert_null (updates);
  g_assert_nonnull (error);
  return g_strdup (error->message);
}

/* The check of the view @tree over @base fails, naming @what, saying @says */
static void
assert_check_fails (const char *tree, const char *base, const char *what, const char *says)
{
  g_autofree char *message = check_message (tree, base);

  g_test_message ("%s", message);
  g_assert_nonnull (strstr (message, what));
  g_assert_nonnull (strstr (message, says));
}

/* The check, as the user, reads the sandbox's apt sources, dpkg status
 * and keyrings through its view.  What a package left there that is not
 * a regular file - a FIFO, a link to /proc/self/fd/0 or /dev/stdin (on a
 * view over the host's /, the user's terminal) - or a file over 64 MiB
 * is not read: the check fails at once, naming the file, instead of
 * waiting for good.  (On the old code the first case waited: the
 * subprocess timed out; checked.) */
static void
test_not_regular (void)
{
  if (g_test_subprocess ())
    {
      g_autofree char *tmp = g_dir_make_tmp ("gl-updates-XXXXXX", NULL);
      g_autofree char *tree = g_build_filename (tmp, "tree", NULL);
      g_autofree char *base = g_build_filename (tmp, "base", NULL);
      g_autofree char *fifo = g_build_filename (tree, "etc/apt/sources.list.d/x.list", NULL);
      g_autofree char *status = g_build_filename (tree, "var/lib/dpkg/status", NULL);

      write_file (base, "etc/apt/sources.list", "deb http://a.example.invalid/debian sid main\n");
      write_file (base, "var/lib/dpkg/status", "Package: dpkg\nStatus: install ok installed\n"
                                                "Architecture: amd64\nVersion: 1\n");
      write_file (tree, "etc/apt/sources.list.d/placeholder", "");
      g_assert_cmpint (mkfifo (fifo, 0644), ==, 0);
      assert_check_fails (tree, base, "etc/apt/sources.list.d/x.list", "not a regular file");
      g_assert_cmpint (g_unlink (fifo), ==, 0);

      /* dpkg's status, larger than the bound (sparse) */
      write_file (tree, "var/lib/dpkg/status", "");
      g_assert_cmpint (truncate (status, 64 * 1024 * 1024 + 1), ==, 0);
      assert_check_fails (tree, base, "dpkg status", "at most 64 MiB");
      g_assert_cmpint (g_unlink (status), ==, 0);

      /* dpkg's status, a link to what is our stdin (a pipe no one writes) */
      g_assert_cmpint (symlink ("/proc/self/fd/0", status), ==, 0);
      assert_check_fails (tree, "/", "dpkg status", "not a regular file");
      return;
    }
  {
    /* (stdin: a pipe whose writer stays open and silent, as a terminal
     * nobody types into) */
    g_test_trap_subprocess (NULL, 20 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_INHERIT_STDIN);
    g_test_trap_assert_passed ();
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  gl_test_silent_stdin ();
  g_test_add_func ("/updates/view-not-regular", test_not_regular);
  return g_test_run ();
}
