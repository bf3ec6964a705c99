/* test-contract.c: the launcher (plain C) and session/ (GLib) each have
 * their own copy of the on-disk contract — the id grammar, the user layer
 * table, the lock files and sandbox.conf's Base=.  This test links both
 * halves and checks they agree on a table of samples.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "gl-changes.h"
#include "gl-store.h"

#include "gl-launch-pure.h"
#include "gl-launch-store.h"

static void
test_ids (void)
{
  g_autofree char *max = g_strnfill (64, 'a');
  g_autofree char *over = g_strnfill (65, 'a');
  g_autofree char *over_bad_end = g_strconcat (max, "/", NULL);
  const char *ids[] = {
    "debian", "debian-sid", "debian-sid-2", "a", "0", "A.b_c-d", "9lives", "x.", "x-", "x_",
    max, over, over_bad_end,
    "", ".hidden", "-x", "_x", ".", "..", ".creating-abc123",
    /* the bad character at the end, where a loop that stops one short would miss it */
    "debian/", "debian ", "debian\n", "debian\t", "debian:", "debian*", "debian\\", "debian\x7f",
    "debian\xc3\xa9", "debian\xff",
    /* … and in the middle */
    "deb/ian", "deb ian", "deb..ian/x", "d\xc3\xa9" "bian", "x/../y",
  };

  for (gsize i = 0; i < G_N_ELEMENTS (ids); i++)
    {
      gboolean launcher = gl_launch_id_is_valid (ids[i]);
      gboolean session = gl_sandbox_id_is_valid (ids[i]);
      g_autofree char *shown = g_strescape (ids[i], NULL);

      g_test_message ("id \"%s\": launcher %d, session %d", shown, launcher, session);
      g_assert_cmpint (launcher, ==, session);
    }
  /* and the table has both kinds */
  g_assert_true (gl_launch_id_is_valid (max));
  g_assert_false (gl_launch_id_is_valid (over));
  g_assert_false (gl_launch_id_is_valid ("debian/"));
  g_assert_false (gl_launch_id_is_valid (NULL));
  g_assert_false (gl_sandbox_id_is_valid (NULL));
}

static void
test_layers (void)
{
  g_auto(GStrv) session = gl_changes_layers ("/home/someone", 1234);
  guint n = 0;

  for (const GlLaunchLayer *l = gl_launch_layers; l->layer != NULL; l++, n++)
    {
      const char *want = l->path;

      if (g_str_equal (l->layer, "home"))
        want = "/home/someone";
      else if (g_str_equal (l->layer, "run-user"))
        want = "/run/user/1234";
      g_assert_nonnull (want);
      g_assert_nonnull (session[2 * n]);
      g_assert_cmpstr (session[2 * n], ==, l->layer);
      g_assert_cmpstr (session[2 * n + 1], ==, want);
    }
  g_assert_cmpuint (n, >, 0);
  g_assert_null (session[2 * n]);
}

/* sandbox.conf samples: the base the launcher would use (NULL: it refuses
 * the sandbox) must be the base session/ loads (or session/ refuses too). */
static void
test_base (void)
{
  const char *confs[] = {
    "[Sandbox]\nProfile=p\nBase=host\n",
    "[Sandbox]\nProfile=p\nBase=rootfs\n",
    "[Sandbox]\nProfile=p\nBase = host\n",
    "[Sandbox]\nProfile=p\nBase=host   \n",
    "[Sandbox]\r\nProfile=p\r\nBase=rootfs\r\n",
    "# comment\n\n[Sandbox]\nName=x\nProfile=p\nBase=rootfs\nLaunchers=\n",
    "[Sandbox]\nProfile=p\nBase=Host\n",
    "[Sandbox]\nProfile=p\nBase=\n",
    "[Sandbox]\nProfile=p\nBase=host rootfs\n",
    "[Sandbox]\nProfile=p\n",
    "[Other]\nBase=host\n[Sandbox]\nProfile=p\n",
    "[Sandbox]\nProfile=p\n[Other]\nBase=host\n",
    "[Sandbox]\nProfile=p\nBasement=host\n",
    "[Sandbox]\nProfile=p\nBase[de]=host\nBase=rootfs\n",
    "[ Sandbox ]\nProfile=p\nBase=host\n",
    "[sandbox]\nProfile=p\nBase=host\n",
    "[Sandbox]\nProfile=p\n#Base=host\nBase=rootfs\n",
    "[Sandbox]\nProfile=p\nBase=rootfs\n[Sandbox]\nName=again\n",
    "[Sandbox]\nProfile=p\nBase=host\nBase=rootfs\n",
    "[Sandbox]\nProfile=p\nBase=host\n[Sandbox]\nBase=rootfs\n",
    "[Sandbox]\nProfile=p\n  Base=host\n",
    "\xef\xbb\xbf[Sandbox]\nProfile=p\nBase=host\n",
  };

  for (gsize i = 0; i < G_N_ELEMENTS (confs); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GlSandbox) s = gl_sandbox_load_from_data ("x", "/store/x", confs[i], -1, &error);
      g_autofree char *raw = gl_launch_conf_get_base (confs[i]);
      const char *launcher = raw != NULL && (g_str_equal (raw, "host") || g_str_equal (raw, "rootfs"))
                             ? raw : NULL;
      g_autofree char *shown = g_strescape (confs[i], NULL);

      g_test_message ("\"%s\": launcher %s, session %s", shown,
                      launcher ? launcher : "(refuses)", s ? s->base : error->message);
      if (g_strcmp0 (launcher, s != NULL ? s->base : NULL) != 0)
        {
          g_test_message ("DISAGREE");
          g_test_fail ();
        }
    }
}

/* The lock protocol: what the launcher holds while an app runs is what
 * session/ finds in use, and what session/ takes keeps the launcher out. */
static void
test_locks (void)
{
  g_autofree char *store = g_build_filename (g_get_user_cache_dir (), "store", NULL);
  g_autofree char *uid = g_strdup_printf ("%u", (unsigned) getuid ());
  g_autofree char *user_dir = g_build_filename (store, "lk", "users", uid, NULL);
  g_autofree char *conf = g_build_filename (store, "lk", "sandbox.conf", NULL);
  g_autofree char *sandbox_lock = g_build_filename (store, "lk", "lock", NULL);
  g_autoptr(GlSandbox) s = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GArray) held = NULL;
  GlLaunchSandbox sb = GL_LAUNCH_SANDBOX_INIT;
  int fd;

  g_assert_cmpint (g_mkdir_with_parents (user_dir, 0755), ==, 0);
  g_assert_true (g_file_set_contents (conf, "[Sandbox]\nProfile=p\nBase=host\n", -1, NULL));
  g_assert_true (g_file_set_contents (sandbox_lock, "", 0, NULL));
  s = gl_sandbox_load (store, "lk", &error);
  g_assert_no_error (error);

  /* an app runs: the launcher's own code takes the user's lock */
  sb.id = "lk";
  sb.userdir_fd = open (user_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  g_assert_cmpint (sb.userdir_fd, >=, 0);
  gl_launch_store_lock_user (&sb, getuid ());
  g_assert_cmpint (sb.user_lock_fd, >=, 0);

  g_assert_true (gl_sandbox_is_in_use (s));
  g_assert_cmpint (gl_sandbox_lock_user (s, getuid (), &error), ==, -1);
  g_assert_error (error, GL_STORE_ERROR, GL_STORE_ERROR_IN_USE);
  g_clear_error (&error);
  g_assert_null (gl_sandbox_lock_exclusive (s, &error));
  g_assert_error (error, GL_STORE_ERROR, GL_STORE_ERROR_IN_USE);
  g_clear_error (&error);

  /* the app ends */
  close (sb.user_lock_fd);
  sb.user_lock_fd = -1;
  g_assert_false (gl_sandbox_is_in_use (s));

  /* the administrator's lock keeps the launcher's shared locks out: the
   * sandbox's lock (taken by the privileged launcher) and the user's */
  held = gl_sandbox_lock_exclusive (s, &error);
  g_assert_no_error (error);
  fd = open (sandbox_lock, O_RDONLY | O_CLOEXEC);
  g_assert_cmpint (flock (fd, LOCK_SH | LOCK_NB), ==, -1);
  close (fd);
  {
    g_autofree char *user_lock = g_build_filename (user_dir, "lock", NULL);
    fd = open (user_lock, O_RDONLY | O_CLOEXEC);
    g_assert_cmpint (flock (fd, LOCK_SH | LOCK_NB), ==, -1);
    close (fd);
  }
  g_clear_pointer (&held, g_array_unref);
  close (sb.userdir_fd);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/contract/ids", test_ids);
  g_test_add_func ("/contract/layers", test_layers);
  g_test_add_func ("/contract/base", test_base);
  g_test_add_func ("/contract/locks", test_locks);
  return g_test_run ();
}
