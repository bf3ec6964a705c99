/* hold-view-init LAUNCHER_PID GO_FILE [built]: run as root.  Traces the
 * launcher LAUNCHER_PID (started, and waiting for the view lock) until it
 * has started a view's PID 1, then lets it go; lets that PID 1 run until
 * it is about to read the launcher's last word (a read on its sync
 * socket, descriptor 64 or above: the view is built, the launcher told
 * so), and holds it there - as a loaded machine may leave it unscheduled
 * - until GO_FILE exists; then lets it go.  With "built": holds it
 * earlier, as soon as it has turned off its parent-death signal (the
 * view is built, its launcher still waits to be told so): a launcher
 * killed then leaves the view mounted until PID 1 is let go.  Prints
 * "held PID" once holding, then "released" or "killed SIG" (ended while
 * held).  Exits 0 when released, 1 when PID 1 ended while held, 3
 * (printing "cannot trace: WHY") where no process may trace another, not
 * even root (Yama's ptrace_scope 3), 2 on any other failure.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* True if PID is the first process of a PID namespace of its own (its
 * last NSpid is 1). */
static bool
is_ns_init (pid_t pid)
{
  char path[64], line[256];
  bool init = false;
  FILE *f;
  snprintf (path, sizeof path, "/proc/%d/status", (int) pid);
  if ((f = fopen (path, "re")) == NULL)
    return false;
  while (fgets (line, sizeof line, f) != NULL)
    if (strncmp (line, "NSpid:", 6) == 0)
      {
        size_t n = strcspn (line, "\n");
        line[n] = '\0';
        init = n >= 2 && strcmp (line + n - 2, "\t1") == 0;
      }
  fclose (f);
  return init;
}

static bool
is_socket (pid_t pid, unsigned long long fd)
{
  char path[64], link[64];
  ssize_t n;
  snprintf (path, sizeof path, "/proc/%d/fd/%llu", (int) pid, fd);
  n = readlink (path, link, sizeof link - 1);
  return n > 0 && (link[n] = '\0', strncmp (link, "socket:", 7) == 0);
}

/* Yama's kernel.yama.ptrace_scope, or -1 without Yama */
static int
yama_ptrace_scope (void)
{
  FILE *f = fopen ("/proc/sys/kernel/yama/ptrace_scope", "re");
  int scope = -1;

  if (f != NULL)
    {
      if (fscanf (f, "%d", &scope) != 1)
        scope = -1;
      fclose (f);
    }
  return scope;
}

/* Resumes PID from the stop ST with REQUEST, passing on the signal of a
 * signal-delivery stop (not that of an event stop). */
static void
resume (enum __ptrace_request request, pid_t pid, int st)
{
  long sig = (st >> 16) != 0 ? 0 : WSTOPSIG (st);
  (void) ptrace (request, pid, NULL, (void *) sig);
}

int
main (int argc, char **argv)
{
  pid_t launcher, init = 0;
  bool tracing_launcher = true, at_built, pdeath_off = false;
  int st;

  if (argc != 3 && !(argc == 4 && strcmp (argv[3], "built") == 0))
    {
      fprintf (stderr, "usage: hold-view-init LAUNCHER_PID GO_FILE [built]\n");
      return 2;
    }
  at_built = argc == 4;
  setvbuf (stdout, NULL, _IOLBF, 0);
  launcher = (pid_t) atoi (argv[1]);
  if (ptrace (PTRACE_SEIZE, launcher, NULL,
              (void *) (PTRACE_O_TRACEFORK | PTRACE_O_TRACECLONE | PTRACE_O_TRACEVFORK)) != 0)
    {
      int errsv = errno;
      /* (only there: root may trace anything anywhere else) */
      if (errsv == EPERM && yama_ptrace_scope () == 3)
        {
          printf ("cannot trace: kernel.yama.ptrace_scope is 3, where no process may trace "
                  "another, not even root's (PTRACE_SEIZE: %s)\n", strerror (errsv));
          return 3;
        }
      fprintf (stderr, "hold-view-init: PTRACE_SEIZE: %s\n", strerror (errsv));
      return 2;
    }
  printf ("seized %d\n", (int) launcher);

  /* The launcher, until it has started PID 1 (its children before that,
   * traced with it, are let go at once). */
  while (init == 0 || tracing_launcher)
    {
      pid_t w = waitpid (-1, &st, __WALL);
      if (w < 0)
        return 2;
      if (w == launcher && !WIFSTOPPED (st))
        return 2;
      if (!WIFSTOPPED (st))
        continue;
      if (w != launcher)
        {
          if (is_ns_init (w))
            init = w;   /* its first stop: held until the launcher is let go */
          else
            (void) ptrace (PTRACE_DETACH, w, NULL, NULL);
          continue;
        }
      if ((st >> 16) == PTRACE_EVENT_FORK || (st >> 16) == PTRACE_EVENT_CLONE
          || (st >> 16) == PTRACE_EVENT_VFORK)
        {
          unsigned long child = 0;
          (void) ptrace (PTRACE_GETEVENTMSG, launcher, NULL, &child);
          if (is_ns_init ((pid_t) child))
            {
              (void) ptrace (PTRACE_DETACH, launcher, NULL, NULL);
              tracing_launcher = false;
              if (init == 0)
                {
                  /* (its first stop is on the way) */
                  while (waitpid ((pid_t) child, &st, __WALL) != (pid_t) child)
                    if (errno != EINTR)
                      return 2;
                  init = (pid_t) child;
                }
              continue;
            }
          (void) ptrace (PTRACE_CONT, launcher, NULL, NULL);
        }
      else
        resume (PTRACE_CONT, launcher, st);
    }
  if (ptrace (PTRACE_SETOPTIONS, init, NULL, (void *) PTRACE_O_TRACESYSGOOD) != 0
      || ptrace (PTRACE_SYSCALL, init, NULL, NULL) != 0)
    return 2;

  /* PID 1, one system call after the other, up to that read (or the
   * return of its prctl (PR_SET_PDEATHSIG, 0)). */
  for (;;)
    {
      struct __ptrace_syscall_info info;
      if (waitpid (init, &st, __WALL) != init)
        return 2;
      if (WIFEXITED (st) || WIFSIGNALED (st))
        {
          printf ("ended before the read\n");
          return 2;
        }
      if (WSTOPSIG (st) == (SIGTRAP | 0x80))
        {
          if (ptrace (PTRACE_GET_SYSCALL_INFO, init, (void *) sizeof info, &info) <= 0)
            return 2;
          if (at_built && pdeath_off && info.op == PTRACE_SYSCALL_INFO_EXIT)
            break;
          if (at_built && info.op == PTRACE_SYSCALL_INFO_ENTRY && info.entry.nr == SYS_prctl
              && info.entry.args[0] == PR_SET_PDEATHSIG && info.entry.args[1] == 0)
            pdeath_off = true;
          if (!at_built && info.op == PTRACE_SYSCALL_INFO_ENTRY && info.entry.nr == SYS_read
              && info.entry.args[0] >= 64 && is_socket (init, info.entry.args[0]))
            break;
          (void) ptrace (PTRACE_SYSCALL, init, NULL, NULL);
        }
      else
        resume (PTRACE_SYSCALL, init, st);
    }
  printf ("held %d\n", (int) init);

  /* Held (stopped at the entry of that read, or the return of that prctl)
   * until GO_FILE exists. */
  while (access (argv[2], F_OK) != 0)
    {
      pid_t w = waitpid (init, &st, __WALL | WNOHANG);
      if (w == init && (WIFEXITED (st) || WIFSIGNALED (st)))
        {
          printf ("killed %d\n", WIFSIGNALED (st) ? WTERMSIG (st) : 0);
          return 1;
        }
      usleep (10000);
    }
  if (ptrace (PTRACE_DETACH, init, NULL, NULL) != 0)
    {
      printf ("killed (gone when let go)\n");
      return 1;
    }
  printf ("released\n");
  return 0;
}
