/* gl-spawn.h: running a subprocess — the one way Glimpse does it
 *
 * Every child runs in its own process group with PR_SET_PDEATHSIG, so it
 * never outlives the thread that started it; a watchdog process kills the
 * whole group (the child's own children too, e.g. debootstrap's dpkg) if
 * Glimpse dies without reaping it (kill -9).  SIGINT and SIGTERM that
 * Glimpse receives while the child runs are forwarded to its group (which
 * the terminal no longer signals); cancelling sends SIGTERM, then SIGKILL
 * after a grace period.  Between fork and exec the child makes only
 * async-signal-safe calls: the groups of a user to run as are looked up
 * before (gl_spawn_get_groups()).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>
#include <sys/types.h>

G_BEGIN_DECLS

#define GL_SPAWN_ERROR (gl_spawn_error_quark ())

typedef enum {
  GL_SPAWN_ERROR_FAILED,     /* it ran and exited with a status other than 0, or was killed */
} GlSpawnError;

GQuark gl_spawn_error_quark (void);

typedef enum {
  GL_SPAWN_OUTPUT_INHERIT,   /* the child writes where we do (programs only) */
  GL_SPAWN_OUTPUT_CAPTURE,   /* stdout and stderr collected into the result */
  GL_SPAWN_OUTPUT_LINES,     /* stdout and stderr merged, handed over line by line */
} GlSpawnOutput;

/* A line of the child's output, without its newline (valid UTF-8); one
 * longer than GL_SPAWN_LINE_MAX bytes comes in pieces of that size. */
#define GL_SPAWN_LINE_MAX (64 * 1024)
typedef void (*GlSpawnLineFunc) (const char *line, gpointer user_data);

typedef struct {
  GlSpawnOutput output;
  GlSpawnLineFunc line_func;      /* GL_SPAWN_OUTPUT_LINES (NULL: g_debug them) */
  gpointer line_data;
  const char * const *envp;       /* the whole environment; NULL: ours */
  const char * const *setenv;     /* NAME, VALUE, … NULL pairs set over envp */
  const char *cwd;                /* NULL: ours */
  /* Run as this user (when @as_user): groups from gl_spawn_get_groups() */
  gboolean as_user;
  uid_t uid;
  gid_t gid;
  const gid_t *groups;
  gsize n_groups;
  guint kill_delay_ms;            /* cancelled: SIGTERM, this long, SIGKILL; 0: 5 s */
  /* A descriptor of ours the child gets as @pass_fd_as (both 0: none) */
  int pass_fd;
  int pass_fd_as;
  /* GL_SPAWN_OUTPUT_LINES: the read end of a pipe of ours whose lines go
   * to line_func too, between the child's lines (-1 or 0: none).  It does
   * not keep the run waiting: what it holds when the child ends is read
   * then.  The caller closes it. */
  int extra_lines_fd;
  /* cgroup directories the child joins (cgroup.procs) before anything
   * else, as the caller (root) may: all it forks is counted there (NULL:
   * none; the child does not run when it cannot join) */
  const char * const *cgroups;
  /* SIGINT and SIGTERM of ours are not forwarded to the child: the caller
   * handles them by cancelling @cancellable (which stops the child), so
   * that it knows of the interruption before the child's output about it
   * arrives (glimpse create says it in one line) */
  gboolean no_signal_forward;
  /* Stopped (as by cancelling: SIGTERM, kill_delay_ms, SIGKILL) when it
   * has not ended after this long, failing with G_IO_ERROR_TIMED_OUT
   * (0: no limit).  For a child that someone else can stop: a setuid one
   * run as a user, whose real uid lets that user send it SIGSTOP. */
  guint timeout_ms;
} GlSpawnOptions;

typedef struct {
  int wait_status;                /* as from waitpid() */
  GBytes *out;                    /* GL_SPAWN_OUTPUT_CAPTURE: stdout */
  GBytes *err;                    /* GL_SPAWN_OUTPUT_CAPTURE: stderr */
} GlSpawnResult;

void gl_spawn_result_clear (GlSpawnResult *result);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (GlSpawnResult, gl_spawn_result_clear)

/* Runs @argv (argv[0] looked up in PATH when it has no '/') and waits for
 * it.  TRUE when it exited with status 0.  Otherwise FALSE with
 * G_IO_ERROR_CANCELLED (it was stopped), GL_SPAWN_ERROR_FAILED (a message
 * naming the command and its status; @result is filled in all the same)
 * or a G_SPAWN_ERROR (it could not be started).  @options and @result may
 * be NULL. */
gboolean gl_spawn_run (const char * const    *argv,
                       const GlSpawnOptions  *options,
                       GlSpawnResult         *result,
                       GCancellable          *cancellable,
                       GError               **error);

/* A short cache tool (update-desktop-database): @argv[0] looked up in
 * PATH, run with stdin and output on /dev/null, waited for.  Spawned with
 * posix_spawn (no fork of the caller's address space, so a long-lived
 * caller such as the agent pays no copy-on-write faults afterwards) and
 * without the watchdog and signal forwarding of gl_spawn_run(): for tools
 * that finish on their own in a moment.  FALSE with @error when it cannot
 * be run or does not exit with 0. */
gboolean gl_spawn_tool (const char * const  *argv,
                        GError             **error);

/* The supplementary groups of @user (primary group @gid), for
 * GlSpawnOptions.groups: free with g_free. */
gid_t *gl_spawn_get_groups (const char *user, gid_t gid, gsize *n_groups, GError **error);

G_END_DECLS
