/* test-spawn.c: gl-spawn runs real processes: output, status, process
 * groups, cancellation, signal forwarding, and nothing left running when
 * its caller is killed with SIGKILL.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <errno.h>
#include <pwd.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include <glib-unix.h>

#include "gl-spawn.h"
#include "gl-test-skip.h"

static char *
bytes_str (GBytes *bytes)
{
  gsize len = 0;
  const char *data = g_bytes_get_data (bytes, &len);

  return g_strndup (data != NULL ? data : "", len);
}

static void
test_capture (void)
{
  const char *argv[] = { "sh", "-c", "echo out; echo err >&2; echo $FOO", NULL };
  const char *setenv[] = { "FOO", "bar", NULL };
  GlSpawnOptions options = { .output = GL_SPAWN_OUTPUT_CAPTURE, .setenv = setenv };
  g_auto(GlSpawnResult) result = { 0 };
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL, *err = NULL;

  g_assert_true (gl_spawn_run (argv, &options, &result, NULL, &error));
  g_assert_no_error (error);
  out = bytes_str (result.out);
  err = bytes_str (result.err);
  g_assert_cmpstr (out, ==, "out\nbar\n");
  g_assert_cmpstr (err, ==, "err\n");
}

static void
test_status (void)
{
  const char *argv[] = { "sh", "-c", "echo why >&2; exit 3", NULL };
  const char *missing[] = { "/nonexistent/program", NULL };
  GlSpawnOptions options = { .output = GL_SPAWN_OUTPUT_CAPTURE };
  g_auto(GlSpawnResult) result = { 0 };
  g_autoptr(GError) error = NULL;
  g_autofree char *err = NULL;

  g_assert_false (gl_spawn_run (argv, &options, &result, NULL, &error));
  g_assert_error (error, GL_SPAWN_ERROR, GL_SPAWN_ERROR_FAILED);
  g_assert_nonnull (strstr (error->message, "exit status 3"));
  g_assert_nonnull (strstr (error->message, "sh -c"));
  g_assert_true (WIFEXITED (result.wait_status));
  g_assert_cmpint (WEXITSTATUS (result.wait_status), ==, 3);
  err = bytes_str (result.err);
  g_assert_cmpstr (err, ==, "why\n");
  g_clear_error (&error);

  g_assert_false (gl_spawn_run (missing, NULL, NULL, NULL, &error));
  g_assert_error (error, G_SPAWN_ERROR, G_SPAWN_ERROR_NOENT);
  g_assert_nonnull (strstr (error->message, "/nonexistent/program"));
}

static void
collect_line (const char *line, gpointer user_data)
{
  g_ptr_array_add (user_data, g_strdup (line));
}

static void
test_lines (void)
{
  /* stdout and stderr merged, in order; the last line has no newline */
  const char *argv[] = { "sh", "-c", "echo one; echo two >&2; printf 'thr\\377e'", NULL };
  g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func (g_free);
  GlSpawnOptions options = { .output = GL_SPAWN_OUTPUT_LINES, .line_func = collect_line, .line_data = lines };
  g_autoptr(GError) error = NULL;

  g_assert_true (gl_spawn_run (argv, &options, NULL, NULL, &error));
  g_assert_cmpuint (lines->len, ==, 3);
  g_assert_cmpstr (lines->pdata[0], ==, "one");
  g_assert_cmpstr (lines->pdata[1], ==, "two");
  g_assert_true (g_utf8_validate (lines->pdata[2], -1, NULL));
  g_assert_true (g_str_has_prefix (lines->pdata[2], "thr"));
}

/* A line without end (a hostile package's postinst writes one to the
 * operation's output, read by root's glimpse): passed on in pieces of
 * GL_SPAWN_LINE_MAX bytes, not kept whole; nothing of it is lost */
static void
test_long_line (void)
{
  const char *argv[] = { "sh", "-c", "head -c 8388608 /dev/zero | tr '\\000' x; printf '\\nend\\n'", NULL };
  g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func (g_free);
  GlSpawnOptions options = { .output = GL_SPAWN_OUTPUT_LINES, .line_func = collect_line, .line_data = lines };
  g_autoptr(GError) error = NULL;

  g_assert_true (gl_spawn_run (argv, &options, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (lines->len, ==, 8388608 / GL_SPAWN_LINE_MAX + 1);
  for (guint i = 0; i + 1 < lines->len; i++)
    {
      const char *l = lines->pdata[i];
      g_assert_cmpuint (strlen (l), ==, GL_SPAWN_LINE_MAX);
      g_assert_cmpuint (strspn (l, "x"), ==, GL_SPAWN_LINE_MAX);
    }
  g_assert_cmpstr (lines->pdata[lines->len - 1], ==, "end");
}

/* A descriptor handed to the child at a number of our choice; lines of a
 * pipe of ours between the child's, the child's end of the run not held
 * up by that pipe staying open. */
static void
test_pass_fd_and_extra_lines (void)
{
  const char *argv[] = { "sh", "-c", "echo child; read -r word <&7; echo \"got $word\"", NULL };
  g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func (g_free);
  GlSpawnOptions options = { .output = GL_SPAWN_OUTPUT_LINES, .line_func = collect_line, .line_data = lines };
  g_autoptr(GError) error = NULL;
  int given[2], extra[2];

  g_assert_true (g_unix_open_pipe (given, FD_CLOEXEC, NULL));
  g_assert_true (g_unix_open_pipe (extra, FD_CLOEXEC, NULL));
  g_assert_cmpint (write (given[1], "word\n", 5), ==, 5);
  g_assert_cmpint (write (extra[1], "ours\n", 5), ==, 5);
  options.pass_fd = given[0];
  options.pass_fd_as = 7;
  options.extra_lines_fd = extra[0];
  g_assert_true (gl_spawn_run (argv, &options, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (lines->len, ==, 3);
  g_assert_true (g_ptr_array_find_with_equal_func (lines, "ours", g_str_equal, NULL));
  g_assert_true (g_ptr_array_find_with_equal_func (lines, "child", g_str_equal, NULL));
  g_assert_true (g_ptr_array_find_with_equal_func (lines, "got word", g_str_equal, NULL));
  close (given[0]);
  close (given[1]);
  close (extra[0]);
  close (extra[1]);
}

/* The child leads its own process group; stdin is /dev/null. */
static void
test_group (void)
{
  const char *argv[] = { "sh", "-c", "echo $$ $(cut -d' ' -f5 /proc/$$/stat); readlink /proc/$$/fd/0", NULL };
  GlSpawnOptions options = { .output = GL_SPAWN_OUTPUT_CAPTURE };
  g_auto(GlSpawnResult) result = { 0 };
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  g_auto(GStrv) lines = NULL;
  g_auto(GStrv) ids = NULL;

  g_assert_true (gl_spawn_run (argv, &options, &result, NULL, &error));
  out = bytes_str (result.out);
  lines = g_strsplit (out, "\n", -1);
  ids = g_strsplit (lines[0], " ", -1);
  g_assert_cmpstr (ids[0], ==, ids[1]);
  g_assert_cmpstr (ids[0], !=, "");
  g_assert_cmpstr (lines[1], ==, "/dev/null");
}

static gboolean
pid_gone (pid_t pid)
{
  g_autofree char *stat = g_strdup_printf ("/proc/%d/stat", (int) pid);
  g_autofree char *text = NULL;
  const char *close;

  if (!g_file_get_contents (stat, &text, NULL, NULL))
    return TRUE;
  close = strrchr (text, ')');
  return close != NULL && close[1] == ' ' && (close[2] == 'Z' || close[2] == 'X');
}

/* Polls (a process that is not our child has no event to wait on) until
 * @pid is gone, at most 10 s. */
static gboolean
wait_gone (pid_t pid)
{
  gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;

  while (!pid_gone (pid))
    {
      if (g_get_monotonic_time () > deadline)
        return FALSE;
      g_usleep (10000);
    }
  return TRUE;
}

/* Waits until @path holds @lines lines; returns them. */
static GStrv
wait_lines (const char *path, guint lines)
{
  gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;

  for (;;)
    {
      g_autofree char *text = NULL;

      if (g_file_get_contents (path, &text, NULL, NULL))
        {
          g_auto(GStrv) parts = g_strsplit (g_strstrip (text), "\n", -1);
          if (g_strv_length (parts) >= lines && text[0] != '\0')
            return g_steal_pointer (&parts);
        }
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_usleep (10000);
    }
}

static gboolean
cancel_when_ready (gpointer user_data)
{
  GCancellable *cancellable = user_data;

  g_cancellable_cancel (cancellable);
  return G_SOURCE_REMOVE;
}

static gpointer
cancel_thread (gpointer user_data)
{
  const char *pids = g_object_get_data (user_data, "pids");

  g_strfreev (wait_lines (pids, 2));   /* both children have started */
  cancel_when_ready (user_data);
  return NULL;
}

/* Cancelling stops the child even when it ignores SIGTERM (SIGKILL after
 * the delay), and its own children with it. */
static void
test_cancel (void)
{
  g_autofree char *pids = g_build_filename (g_get_user_runtime_dir (), "pids", NULL);
  g_autofree char *script = g_strdup_printf ("trap '' TERM; sleep 60 & echo $$ >%s; echo $! >>%s; wait; wait",
                                             pids, pids);
  const char *argv[] = { "sh", "-c", script, NULL };
  GlSpawnOptions options = { .kill_delay_ms = 200 };
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(GThread) thread = NULL;
  g_auto(GStrv) lines = NULL;
  gint64 start = g_get_monotonic_time ();

  g_object_set_data (G_OBJECT (cancellable), "pids", pids);
  thread = g_thread_new ("cancel", cancel_thread, cancellable);
  g_assert_false (gl_spawn_run (argv, &options, NULL, cancellable, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_thread_join (g_steal_pointer (&thread));
  g_assert_cmpint (g_get_monotonic_time () - start, <, 30 * G_USEC_PER_SEC);
  lines = wait_lines (pids, 2);
  g_assert_true (wait_gone (atoi (lines[0])));
  g_assert_true (wait_gone (atoi (lines[1])));
}

/* A child that does not end in time - here one that stopped itself, as a
 * user may stop a setuid child run as them (glimpse-launch --held, which
 * root's remove and reclaim wait for) - is ended, and the run fails with
 * G_IO_ERROR_TIMED_OUT instead of waiting for good. */
static void
test_timeout (void)
{
  const char *argv[] = { "sh", "-c", "kill -STOP $$; echo continued", NULL };
  GlSpawnOptions options = { .output = GL_SPAWN_OUTPUT_CAPTURE, .kill_delay_ms = 200,
                             .timeout_ms = 300 };
  g_auto(GlSpawnResult) result = { 0 };
  g_autoptr(GError) error = NULL;
  gint64 start = g_get_monotonic_time ();

  g_assert_false (gl_spawn_run (argv, &options, &result, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT);
  g_assert_cmpint (g_get_monotonic_time () - start, <, 30 * G_USEC_PER_SEC);
  g_assert_true (WIFSIGNALED (result.wait_status));
  g_clear_error (&error);

  /* (one that ends in time is not affected) */
  {
    const char *quick[] = { "true", NULL };
    g_assert_true (gl_spawn_run (quick, &options, NULL, NULL, &error));
    g_assert_no_error (error);
  }
}

/* A SIGTERM we get while the child runs goes to the child's group. */
static void
test_forward (void)
{
  const char *argv[] = { "sh", "-c", "trap 'echo got-term; exit 7' TERM; kill -TERM $PPID; sleep 60 & wait", NULL };
  g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func (g_free);
  GlSpawnOptions options = { .output = GL_SPAWN_OUTPUT_LINES, .line_func = collect_line, .line_data = lines };
  g_auto(GlSpawnResult) result = { 0 };
  g_autoptr(GError) error = NULL;

  g_assert_false (gl_spawn_run (argv, &options, &result, NULL, &error));
  g_assert_error (error, GL_SPAWN_ERROR, GL_SPAWN_ERROR_FAILED);
  g_assert_cmpint (WEXITSTATUS (result.wait_status), ==, 7);
  g_assert_cmpuint (lines->len, ==, 1);
  g_assert_cmpstr (lines->pdata[0], ==, "got-term");
}

/* kill -9 of the program that runs the child leaves nothing running: the
 * child (PR_SET_PDEATHSIG) nor the child's own children (the watchdog). */
static void
test_killed_caller (void)
{
  g_autofree char *pids = g_build_filename (g_get_user_runtime_dir (), "orphans", NULL);
  g_autofree char *script = g_strdup_printf ("sleep 60 & echo $$ >%s; echo $! >>%s; wait", pids, pids);
  const char *argv[] = { "sh", "-c", script, NULL };
  g_auto(GStrv) lines = NULL;
  int status;
  pid_t caller;

  caller = fork ();
  g_assert_cmpint (caller, >=, 0);
  if (caller == 0)
    {
      gl_spawn_run (argv, NULL, NULL, NULL, NULL);
      _exit (0);
    }
  lines = wait_lines (pids, 2);
  g_assert_cmpint (kill (caller, SIGKILL), ==, 0);
  g_assert_cmpint (waitpid (caller, &status, 0), ==, caller);
  g_assert_true (wait_gone (atoi (lines[0])));
  g_assert_true (wait_gone (atoi (lines[1])));
}

/* A child that exits leaving a background process behind: the run ends
 * with the child, and the stray process goes with it (it held our output
 * pipe, so the run used to wait for it). */
static void
test_stray (void)
{
  g_autofree char *pids = g_build_filename (g_get_user_runtime_dir (), "stray", NULL);
  g_autofree char *script = g_strdup_printf ("sleep 60 & echo $! >%s", pids);
  const char *argv[] = { "sh", "-c", script, NULL };
  GlSpawnOptions options = { .output = GL_SPAWN_OUTPUT_CAPTURE };
  g_auto(GlSpawnResult) result = { 0 };
  g_autoptr(GError) error = NULL;
  g_autofree char *contents = NULL;
  gint64 start = g_get_monotonic_time ();

  g_assert_true (gl_spawn_run (argv, &options, &result, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (g_get_monotonic_time () - start, <, 30 * G_USEC_PER_SEC);
  g_assert_true (g_file_get_contents (pids, &contents, NULL, NULL));
  g_assert_true (wait_gone (atoi (contents)));
}

static void
test_as_user (void)
{
  const char *argv[] = { "sh", "-c", "id -u; id -g; id -G", NULL };
  GlSpawnOptions options = { .output = GL_SPAWN_OUTPUT_CAPTURE, .as_user = TRUE };
  g_auto(GlSpawnResult) result = { 0 };
  g_autoptr(GError) error = NULL;
  g_autofree gid_t *groups = NULL;
  g_autofree char *out = NULL;
  g_autofree char *want = NULL;
  struct passwd *pw;

  if (geteuid () != 0)
    {
      gl_test_skip ("needs root to change user");
      return;
    }
  pw = getpwnam ("nobody");
  if (pw == NULL)
    {
      gl_test_skip ("no user nobody to run as");
      return;
    }
  groups = gl_spawn_get_groups (pw->pw_name, pw->pw_gid, &options.n_groups, &error);
  g_assert_no_error (error);
  options.uid = pw->pw_uid;
  options.gid = pw->pw_gid;
  options.groups = groups;
  g_assert_true (gl_spawn_run (argv, &options, &result, NULL, &error));
  g_assert_no_error (error);
  out = bytes_str (result.out);
  /* only the user's own groups: none of root's is kept */
  want = g_strdup_printf ("%u\n%u\n%u\n", (unsigned) pw->pw_uid, (unsigned) pw->pw_gid, (unsigned) pw->pw_gid);
  g_assert_cmpstr (out, ==, want);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/spawn/capture", test_capture);
  g_test_add_func ("/spawn/status", test_status);
  g_test_add_func ("/spawn/lines", test_lines);
  g_test_add_func ("/spawn/long-line", test_long_line);
  g_test_add_func ("/spawn/pass-fd-and-extra-lines", test_pass_fd_and_extra_lines);
  g_test_add_func ("/spawn/group", test_group);
  g_test_add_func ("/spawn/cancel", test_cancel);
  g_test_add_func ("/spawn/timeout", test_timeout);
  g_test_add_func ("/spawn/forward", test_forward);
  g_test_add_func ("/spawn/killed-caller", test_killed_caller);
  g_test_add_func ("/spawn/stray", test_stray);
  g_test_add_func ("/spawn/as-user", test_as_user);
  return g_test_run ();
}
