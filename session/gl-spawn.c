/* gl-spawn.c: running a subprocess — the one way Glimpse does it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <glib-unix.h>

G_DEFINE_QUARK (gl-spawn-error-quark, gl_spawn_error)

#define DEFAULT_KILL_DELAY_MS 5000

void
gl_spawn_result_clear (GlSpawnResult *result)
{
  g_clear_pointer (&result->out, g_bytes_unref);
  g_clear_pointer (&result->err, g_bytes_unref);
}

/* ---- in the child, between fork and exec: async-signal-safe only ---- */

typedef struct {
  pid_t parent;
  gboolean as_user;
  uid_t uid;
  gid_t gid;
  const gid_t *groups;
  gsize n_groups;
  char **cgroup_procs;   /* <cgroup>/cgroup.procs of GlSpawnOptions.cgroups */
  int watch_fd;          /* the watchdog's pipe, or -1 */
} ChildSetup;

static void
child_setup (gpointer user_data)
{
  const ChildSetup *c = user_data;
  sigset_t none;

  /* Worker threads block every signal; the program must get them. */
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  signal (SIGPIPE, SIG_DFL);
  if (setpgid (0, 0) != 0)
    _exit (127);
  /* The watchdog learns our group from us, before anything runs in it:
   * whenever the caller dies from here on, the watchdog kills the group. */
  if (c->watch_fd >= 0)
    {
      pid_t self = getpid ();
      if (write (c->watch_fd, &self, sizeof self) != (ssize_t) sizeof self)
        _exit (127);
    }
  for (gsize i = 0; c->cgroup_procs != NULL && c->cgroup_procs[i] != NULL; i++)
    {
      int fd = open (c->cgroup_procs[i], O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
      if (fd < 0 || write (fd, "0\n", 2) != 2)
        _exit (127);
      close (fd);
    }
  if (c->as_user &&
      (setgroups (c->n_groups, c->groups) != 0 || setgid (c->gid) != 0 || setuid (c->uid) != 0))
    _exit (127);
  /* after the switch of user, which clears the parent-death signal */
  if (prctl (PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid () != c->parent)
    _exit (127);
}

/* The watchdog: a process of ours that outlives us only to kill the
 * child's group when we die without saying we are done (kill -9).  It
 * holds nothing but the read end of a pipe whose write end only we hold
 * (and the child, until it runs its program).
 * Started before the child, so that no kill -9 of ours can come between
 * the child's start and the watchdog's: the child tells it its group
 * through the pipe (child_setup), before it runs anything.  Returns its
 * pid and the write end, or -1 (then there is no watchdog, and
 * PR_SET_PDEATHSIG alone stops the child). */
static pid_t
start_watchdog (int *done_fd)
{
  int p[2];
  pid_t pid;

  if (pipe2 (p, O_CLOEXEC) != 0)
    return -1;
  pid = fork ();
  if (pid == 0)
    {
      struct sigaction ignore = { .sa_handler = SIG_IGN };
      pid_t group;
      size_t got = 0;
      char c;
      ssize_t n;

      /* (async-signal-safe from here on: we are a fork of a threaded program) */
      sigaction (SIGINT, &ignore, NULL);
      sigaction (SIGTERM, &ignore, NULL);
      sigaction (SIGHUP, &ignore, NULL);
      if (dup2 (p[0], 0) < 0)
        _exit (1);
      close_range (1, ~0U, 0);
      while (got < sizeof group)
        {
          n = read (0, (char *) &group + got, sizeof group - got);
          if (n < 0 && errno == EINTR)
            continue;
          if (n <= 0)
            _exit (0);
          got += (size_t) n;
        }
      do
        n = read (0, &c, 1);
      while (n < 0 && errno == EINTR);
      if (n <= 0 && group > 1)
        kill (-group, SIGKILL);
      _exit (0);
    }
  close (p[0]);
  if (pid < 0)
    {
      close (p[1]);
      return -1;
    }
  *done_fd = p[1];
  return pid;
}

/* Lets the watchdog PID go: we are done. */
static void
stop_watchdog (pid_t pid, int done_fd)
{
  if (pid < 0)
    return;
  if (write (done_fd, "", 1) != 1)
    g_debug ("Cannot tell the watchdog %d we are done: %s", (int) pid, g_strerror (errno));
  close (done_fd);
  while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
    ;
}

/* ---- the parent ---- */

typedef struct {
  const GlSpawnOptions *options;
  GPid pid;
  gboolean exited;
  int wait_status;
  guint open_pipes;
  GByteArray *out;
  GByteArray *err;
  GByteArray *partial;      /* GL_SPAWN_OUTPUT_LINES: the line so far */
  GByteArray *extra_partial; /* the same for options->extra_lines_fd */
  gboolean cancelled;
  gboolean timed_out;
  GSource *kill_timer;
} Run;

static void
emit_line (Run *run, const char *data, gsize len)
{
  g_autofree char *line = g_utf8_make_valid (data, (gssize) len);

  if (run->options->line_func != NULL)
    run->options->line_func (line, run->options->line_data);
  else
    g_debug ("%s", line);
}

/* The lines in DATA (LEN bytes) after PARTIAL, to emit_line.  A line is
 * kept whole up to GL_SPAWN_LINE_MAX bytes and passed on in pieces beyond:
 * the child's output is a sandbox's (a hostile package's postinst), and a
 * line without end, kept whole and searched again from its start for a
 * newline at every read, grew our memory with no bound (the package's
 * limits are not ours) and took time growing with its square.  Each byte
 * is looked at once. */
static void
take_lines (Run *run, GByteArray *partial, const guint8 *data, gsize len)
{
  while (len > 0)
    {
      const guint8 *nl;
      gsize n, take;

      if (partial->len == GL_SPAWN_LINE_MAX && data[0] != '\n')
        {
          emit_line (run, (const char *) partial->data, partial->len);
          g_byte_array_set_size (partial, 0);
        }
      nl = memchr (data, '\n', len);
      n = nl != NULL ? (gsize) (nl - data) : len;
      take = MIN (n, GL_SPAWN_LINE_MAX - partial->len);
      g_byte_array_append (partial, data, (guint) take);
      data += take;
      len -= take;
      if (len > 0 && data[0] == '\n')
        {
          emit_line (run, (const char *) partial->data, partial->len);
          g_byte_array_set_size (partial, 0);
          data++;
          len--;
        }
    }
}

static void
take_output (Run *run, GByteArray *into, const guint8 *data, gsize len)
{
  if (run->options->output != GL_SPAWN_OUTPUT_LINES)
    {
      g_byte_array_append (into, data, (guint) len);
      return;
    }
  take_lines (run, run->partial, data, len);
}

typedef struct {
  Run *run;
  GByteArray *into;
} PipeWatch;

/* options->extra_lines_fd: whatever it holds now (it is non-blocking) */
static gboolean
read_extra (int fd, GIOCondition condition, gpointer user_data)
{
  Run *run = user_data;
  guint8 buf[4096];
  ssize_t n;

  while ((n = read (fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0)
      take_lines (run, run->extra_partial, buf, (gsize) n);
  return n == 0 ? G_SOURCE_REMOVE : G_SOURCE_CONTINUE;
}

static gboolean
on_pipe (int fd, GIOCondition condition, gpointer user_data)
{
  PipeWatch *w = user_data;
  guint8 buf[16384];
  ssize_t n;

  do
    n = read (fd, buf, sizeof buf);
  while (n < 0 && errno == EINTR);
  if (n > 0)
    {
      take_output (w->run, w->into, buf, (gsize) n);
      return G_SOURCE_CONTINUE;
    }
  if (n < 0 && errno == EAGAIN)
    return G_SOURCE_CONTINUE;
  close (fd);
  w->run->open_pipes--;
  return G_SOURCE_REMOVE;
}

static void
watch_pipe (Run *run, GMainContext *context, int fd, GByteArray *into)
{
  g_autoptr(GSource) source = g_unix_fd_source_new (fd, G_IO_IN | G_IO_HUP | G_IO_ERR);
  PipeWatch *w = g_new0 (PipeWatch, 1);

  w->run = run;
  w->into = into;
  g_unix_set_fd_nonblocking (fd, TRUE, NULL);
  g_source_set_callback (source, G_SOURCE_FUNC (on_pipe), w, g_free);
  g_source_attach (source, context);
  run->open_pipes++;
}

static void
on_child_exit (GPid pid, gint wait_status, gpointer user_data)
{
  Run *run = user_data;

  run->exited = TRUE;
  run->wait_status = wait_status;
  /* What the child left running in its group goes with it: a stray
   * background process must not outlive the run (it would hold our pipes
   * open, keeping us waiting, or work on in a tree being discarded).
   * ESRCH, nothing left, is the common case. */
  kill (-pid, SIGKILL);
}

static gboolean
on_kill_timer (gpointer user_data)
{
  Run *run = user_data;

  g_debug ("Process group %d still runs; killing it", (int) run->pid);
  kill (-run->pid, SIGKILL);
  run->kill_timer = NULL;
  return G_SOURCE_REMOVE;
}

static gboolean
on_cancelled (GCancellable *cancellable, gpointer user_data)
{
  Run *run = user_data;

  if (run->cancelled || run->exited)
    return G_SOURCE_REMOVE;
  run->cancelled = TRUE;
  g_debug ("Cancelled: stopping process group %d", (int) run->pid);
  kill (-run->pid, SIGTERM);
  run->kill_timer = g_timeout_source_new (run->options->kill_delay_ms > 0
                                          ? run->options->kill_delay_ms : DEFAULT_KILL_DELAY_MS);
  g_source_set_callback (run->kill_timer, on_kill_timer, run, NULL);
  g_source_attach (run->kill_timer, g_main_context_get_thread_default ());
  g_source_unref (run->kill_timer);
  return G_SOURCE_REMOVE;
}

static gboolean
on_timeout (gpointer user_data)
{
  Run *run = user_data;

  if (!run->cancelled && !run->exited)
    {
      run->timed_out = TRUE;
      on_cancelled (NULL, run);
    }
  return G_SOURCE_REMOVE;
}

typedef struct {
  Run *run;
  int signum;
} Forward;

static gboolean
on_signal (gpointer user_data)
{
  Forward *f = user_data;

  if (f->run->pid > 0 && !f->run->exited)
    kill (-f->run->pid, f->signum);
  return G_SOURCE_CONTINUE;
}

static GSource *
forward_signal (Run *run, GMainContext *context, int signum)
{
  GSource *source = g_unix_signal_source_new (signum);
  Forward *f = g_new0 (Forward, 1);

  f->run = run;
  f->signum = signum;
  g_source_set_callback (source, on_signal, f, g_free);
  g_source_attach (source, context);
  return source;
}

static char *
describe_status (int wait_status)
{
  if (WIFEXITED (wait_status))
    return g_strdup_printf ("exit status %d", WEXITSTATUS (wait_status));
  if (WIFSIGNALED (wait_status))
    return g_strdup_printf ("killed by signal %d, %s", WTERMSIG (wait_status),
                            g_strsignal (WTERMSIG (wait_status)));
  return g_strdup_printf ("wait status %d", wait_status);
}

gboolean
gl_spawn_run (const char * const    *argv,
              const GlSpawnOptions  *options,
              GlSpawnResult         *result,
              GCancellable          *cancellable,
              GError               **error)
{
  static const GlSpawnOptions defaults = { 0 };
  g_autoptr(GMainContext) context = g_main_context_new ();
  g_autoptr(GByteArray) out = g_byte_array_new ();
  g_autoptr(GByteArray) err = g_byte_array_new ();
  g_autoptr(GByteArray) partial = g_byte_array_new ();
  g_autoptr(GByteArray) extra_partial = g_byte_array_new ();
  g_autoptr(GSource) extra_source = NULL;
  int extra_fd = options && options->output == GL_SPAWN_OUTPUT_LINES && options->extra_lines_fd > 0
                 ? options->extra_lines_fd : -1;
  g_auto(GStrv) env = NULL;
  g_autoptr(GSource) child_watch = NULL;
  g_autoptr(GSource) cancel_source = NULL;
  g_autoptr(GSource) timeout_source = NULL;
  g_autoptr(GSource) sigint = NULL;
  g_autoptr(GSource) sigterm = NULL;
  g_autofree char *shown = NULL;
  g_autofree char *status = NULL;
  g_auto(GStrv) cgroup_procs = NULL;
  GSpawnFlags flags = G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_CLOEXEC_PIPES | G_SPAWN_STDIN_FROM_DEV_NULL;
  ChildSetup setup = { 0 };
  Run run = { 0 };
  int out_fd = -1, err_fd = -1, merged[2] = { -1, -1 };
  int done_fd = -1;
  pid_t watchdog;

  g_return_val_if_fail (argv != NULL && argv[0] != NULL, FALSE);

  if (options == NULL)
    options = &defaults;
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return FALSE;

  env = options->envp != NULL ? g_strdupv ((char **) options->envp) : g_get_environ ();
  for (gsize i = 0; options->setenv != NULL && options->setenv[i] != NULL; i += 2)
    env = g_environ_setenv (env, options->setenv[i], options->setenv[i + 1], TRUE);
  if (strchr (argv[0], '/') == NULL)
    flags |= G_SPAWN_SEARCH_PATH;

  setup.parent = getpid ();
  setup.as_user = options->as_user;
  setup.uid = options->uid;
  setup.gid = options->gid;
  setup.groups = options->groups;
  setup.n_groups = options->n_groups;
  if (options->cgroups != NULL)
    {
      guint n = g_strv_length ((char **) options->cgroups);
      cgroup_procs = g_new0 (char *, n + 1);
      for (guint i = 0; i < n; i++)
        cgroup_procs[i] = g_build_filename (options->cgroups[i], "cgroup.procs", NULL);
      setup.cgroup_procs = cgroup_procs;
    }

  if (options->output == GL_SPAWN_OUTPUT_LINES && !g_unix_open_pipe (merged, FD_CLOEXEC, error))
    return FALSE;

  /* Before the child exists, so a signal it provokes at once is ours to
   * forward, not our death. */
  if (!options->no_signal_forward)
    {
      sigint = forward_signal (&run, context, SIGINT);
      sigterm = forward_signal (&run, context, SIGTERM);
    }

  shown = g_strjoinv (" ", (char **) argv);
  watchdog = start_watchdog (&done_fd);
  setup.watch_fd = watchdog >= 0 ? done_fd : -1;
  if (!g_spawn_async_with_pipes_and_fds (options->cwd, argv, (const char * const *) env, flags,
                                         child_setup, &setup,
                                         -1, merged[1], merged[1],
                                         options->pass_fd_as > 0 ? &options->pass_fd : NULL,
                                         options->pass_fd_as > 0 ? &options->pass_fd_as : NULL,
                                         options->pass_fd_as > 0 ? 1 : 0,
                                         &run.pid, NULL,
                                         options->output == GL_SPAWN_OUTPUT_CAPTURE ? &out_fd : NULL,
                                         options->output == GL_SPAWN_OUTPUT_CAPTURE ? &err_fd : NULL,
                                         error))
    {
      if (merged[0] >= 0)
        {
          close (merged[0]);
          close (merged[1]);
        }
      if (sigint != NULL)
        {
          g_source_destroy (sigint);
          g_source_destroy (sigterm);
        }
      stop_watchdog (watchdog, done_fd);
      g_prefix_error (error, "Cannot run %s: ", argv[0]);
      return FALSE;
    }

  run.options = options;
  run.out = out;
  run.err = err;
  run.partial = partial;
  run.extra_partial = extra_partial;
  g_main_context_push_thread_default (context);
  if (extra_fd >= 0)
    {
      g_unix_set_fd_nonblocking (extra_fd, TRUE, NULL);
      extra_source = g_unix_fd_source_new (extra_fd, G_IO_IN | G_IO_HUP | G_IO_ERR);
      g_source_set_callback (extra_source, G_SOURCE_FUNC (read_extra), &run, NULL);
      g_source_attach (extra_source, context);
    }
  if (merged[0] >= 0)
    {
      close (merged[1]);
      watch_pipe (&run, context, merged[0], out);
    }
  if (out_fd >= 0)
    watch_pipe (&run, context, out_fd, out);
  if (err_fd >= 0)
    watch_pipe (&run, context, err_fd, err);
  child_watch = g_child_watch_source_new (run.pid);
  g_source_set_callback (child_watch, G_SOURCE_FUNC (on_child_exit), &run, NULL);
  g_source_attach (child_watch, context);
  if (cancellable != NULL)
    {
      cancel_source = g_cancellable_source_new (cancellable);
      g_source_set_callback (cancel_source, G_SOURCE_FUNC (on_cancelled), &run, NULL);
      g_source_attach (cancel_source, context);
    }
  if (options->timeout_ms > 0)
    {
      timeout_source = g_timeout_source_new (options->timeout_ms);
      g_source_set_callback (timeout_source, on_timeout, &run, NULL);
      g_source_attach (timeout_source, context);
    }
  while (!run.exited || run.open_pipes > 0)
    g_main_context_iteration (context, TRUE);

  if (run.kill_timer != NULL)
    g_source_destroy (run.kill_timer);
  if (sigint != NULL)
    {
      g_source_destroy (sigint);
      g_source_destroy (sigterm);
    }
  if (cancel_source != NULL)
    g_source_destroy (cancel_source);
  if (timeout_source != NULL)
    g_source_destroy (timeout_source);
  g_source_destroy (child_watch);
  if (extra_source != NULL)
    {
      g_source_destroy (extra_source);
      read_extra (extra_fd, G_IO_IN, &run);
      if (extra_partial->len > 0)
        emit_line (&run, (const char *) extra_partial->data, extra_partial->len);
    }
  g_main_context_pop_thread_default (context);
  /* what the child left running in its group goes with it when stopped */
  if (run.cancelled)
    kill (-run.pid, SIGKILL);
  stop_watchdog (watchdog, done_fd);
  g_spawn_close_pid (run.pid);

  if (partial->len > 0)
    emit_line (&run, (const char *) partial->data, partial->len);
  if (result != NULL)
    {
      result->wait_status = run.wait_status;
      if (options->output == GL_SPAWN_OUTPUT_CAPTURE)
        {
          result->out = g_byte_array_free_to_bytes (g_steal_pointer (&out));
          result->err = g_byte_array_free_to_bytes (g_steal_pointer (&err));
        }
    }

  if (run.timed_out)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT,
                   "“%s” did not end within %u s (stopped?), and was ended", shown,
                   (options->timeout_ms + 999) / 1000);
      return FALSE;
    }
  if (run.cancelled)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "“%s” was stopped", shown);
      return FALSE;
    }
  if (WIFEXITED (run.wait_status) && WEXITSTATUS (run.wait_status) == 0)
    return TRUE;
  status = describe_status (run.wait_status);
  g_set_error (error, GL_SPAWN_ERROR, GL_SPAWN_ERROR_FAILED, "“%s” failed (%s)", shown, status);
  return FALSE;
}

gid_t *
gl_spawn_get_groups (const char *user, gid_t gid, gsize *n_groups, GError **error)
{
  int n = 32;

  for (guint attempt = 0; attempt < 8; attempt++)
    {
      g_autofree gid_t *groups = g_new0 (gid_t, n);
      int got = n;

      if (getgrouplist (user, gid, groups, &got) >= 0)
        {
          *n_groups = (gsize) got;
          return g_steal_pointer (&groups);
        }
      n = got > n ? got : n * 2;
    }
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
               "Cannot look up the groups of user %s", user);
  return NULL;
}

gboolean
gl_spawn_tool (const char * const  *argv,
               GError             **error)
{
  g_autofree char *prog = strchr (argv[0], '/') != NULL ? g_strdup (argv[0]) : g_find_program_in_path (argv[0]);
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  sigset_t none, all;
  pid_t pid;
  int rc, wait_status;

  if (prog == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "%s is not installed", argv[0]);
      return FALSE;
    }
  posix_spawn_file_actions_init (&actions);
  posix_spawn_file_actions_addopen (&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen (&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2 (&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawnattr_init (&attr);
  sigemptyset (&none);
  sigfillset (&all);
  posix_spawnattr_setsigmask (&attr, &none);
  posix_spawnattr_setsigdefault (&attr, &all);
  posix_spawnattr_setflags (&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  rc = posix_spawn (&pid, prog, &actions, &attr, (char * const *) argv, environ);
  posix_spawnattr_destroy (&attr);
  posix_spawn_file_actions_destroy (&actions);
  if (rc != 0)
    {
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (rc), "Cannot run %s: %s", prog, g_strerror (rc));
      return FALSE;
    }
  while (waitpid (pid, &wait_status, 0) < 0)
    if (errno != EINTR)
      {
        int saved = errno;
        g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "Cannot wait for %s: %s", prog,
                     g_strerror (saved));
        return FALSE;
      }
  if (!WIFEXITED (wait_status) || WEXITSTATUS (wait_status) != 0)
    {
      g_autofree char *status = describe_status (wait_status);

      g_set_error (error, GL_SPAWN_ERROR, GL_SPAWN_ERROR_FAILED, "%s failed (%s)", prog, status);
      return FALSE;
    }
  return TRUE;
}
