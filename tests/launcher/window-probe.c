/* window-probe [--signals] MS NAME: for MS milliseconds, in a tight loop,
 * try to reach every process named NAME (the launcher's program name, as
 * /proc/PID/comm shows it: a launcher, or a child of one before it has run
 * the app) that this process can see: open its
 * /proc/PID/environ and mem, follow the links in its /proc/PID/fd,
 * ptrace-seize it.  Any
 * of these that works is a hit.  With --signals (run inside a view) it
 * also signals them: a stop it can send is a hit when the stopped process
 * is not yet the user's in the view (an id of 0 in its status, or another
 * mount table than ours); it is then continued.  PID 1 (the view's) is
 * left alone.  Prints "HIT what pid" lines, then "seen N" (how many
 * distinct launcher pids it saw: none means it proved nothing).  Having
 * seen fewer than MIN_SEEN by then (a loaded machine: the launches it
 * watches came slowly), it goes on until it has, for a minute at most.  With
 * --stop (run inside a view) it only stops the first one it sees (a joining
 * launch's command before it has started), prints "STOPPED pid" and exits,
 * leaving it stopped.  Static, so that it runs in a busybox sandbox too.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_PIDS 4194304
#define MIN_SEEN 3
#define EXTRA_MS 60000

static unsigned char *state;    /* per pid: 0 unknown, 1 launcher, 2 was one */
static char own_mounts[65536];
static char comm_want[32];

static long long
now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (long long) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static ssize_t
read_file (const char *path, char *buf, size_t size)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  ssize_t n, len = 0;
  if (fd < 0)
    return -1;
  while ((size_t) len < size - 1 && (n = read (fd, buf + len, size - 1 - (size_t) len)) > 0)
    len += n;
  close (fd);
  buf[len] = '\0';
  return len;
}

static bool
is_launcher (int pid)
{
  char path[64], comm[64];
  snprintf (path, sizeof path, "/proc/%d/comm", pid);
  return read_file (path, comm, sizeof comm) > 0 && strcmp (comm, comm_want) == 0;
}

/* Waits (200 ms at most) until PID, sent SIGSTOP, is stopped. */
static bool
wait_stopped (int pid)
{
  char path[64], buf[4096];
  snprintf (path, sizeof path, "/proc/%d/stat", pid);
  for (int i = 0; i < 200; i++)
    {
      char *p;
      if (read_file (path, buf, sizeof buf) <= 0)
        return false;
      p = strrchr (buf, ')');
      if (p != NULL && (p[2] == 'T' || p[2] == 't'))
        return true;
      usleep (1000);
    }
  return false;
}

/* PID stopped by us: is it the user's, in our mount table? */
static void
inspect_stopped (int pid)
{
  char path[64], buf[4096], mounts[65536];
  const char *uid, *gid;
  wait_stopped (pid);
  if (!is_launcher (pid))
    return;     /* it had run the app: the user's */
  snprintf (path, sizeof path, "/proc/%d/status", pid);
  if (read_file (path, buf, sizeof buf) <= 0)
    return;
  uid = strstr (buf, "\nUid:");
  gid = strstr (buf, "\nGid:");
  if (uid != NULL && gid != NULL)
    {
      unsigned a[4], b[4];
      if (sscanf (uid, "\nUid: %u %u %u %u", &a[0], &a[1], &a[2], &a[3]) == 4
          && sscanf (gid, "\nGid: %u %u %u %u", &b[0], &b[1], &b[2], &b[3]) == 4)
        for (int i = 0; i < 4; i++)
          if (a[i] == 0 || b[i] == 0)
            {
              printf ("HIT stopped-as-root %d\n", pid);
              break;
            }
    }
  snprintf (path, sizeof path, "/proc/%d/mountinfo", pid);
  if (read_file (path, mounts, sizeof mounts) >= 0 && strcmp (mounts, own_mounts) != 0)
    printf ("HIT stopped-outside-the-view %d\n", pid);
  fflush (stdout);
}

/* A hit, if PID is still a launcher process now that the attempt WHAT
 * worked (a launcher's child runs the app, and may have done so since
 * the look at its name: the app is the user's to reach). */
static void
hit (int pid, const char *what)
{
  if (is_launcher (pid))
    printf ("HIT %s %d\n", what, pid);
}

static void
probe (int pid, bool signals)
{
  char path[64];
  int fd;
  DIR *d;

  snprintf (path, sizeof path, "/proc/%d/environ", pid);
  if ((fd = open (path, O_RDONLY | O_CLOEXEC)) >= 0)
    {
      hit (pid, "environ");
      close (fd);
    }
  snprintf (path, sizeof path, "/proc/%d/mem", pid);
  if ((fd = open (path, O_RDONLY | O_CLOEXEC)) >= 0)
    {
      hit (pid, "mem");
      close (fd);
    }
  /* (Listing /proc/PID/fd is not reaching anything: while a launcher
   * changes its effective uid to yours, fs.suid_dumpable=1 makes its
   * /proc entries yours for a moment, and the kernel lets the owner list
   * the descriptor numbers.  Following one of them is checked like
   * tracing, against all its ids.) */
  snprintf (path, sizeof path, "/proc/%d/fd", pid);
  if ((d = opendir (path)) != NULL)
    {
      struct dirent *e;
      char target[256];
      while ((e = readdir (d)) != NULL)
        if (e->d_name[0] != '.' && readlinkat (dirfd (d), e->d_name, target, sizeof target) >= 0)
          {
            hit (pid, "fd");
            break;
          }
      closedir (d);
    }
  if (ptrace (PTRACE_SEIZE, pid, NULL, NULL) == 0)
    {
      int st;
      hit (pid, "ptrace");
      if (ptrace (PTRACE_INTERRUPT, pid, NULL, NULL) == 0
          && waitpid (pid, &st, __WALL) == pid)
        (void) ptrace (PTRACE_DETACH, pid, NULL, NULL);
    }
  if (signals && kill (pid, SIGSTOP) == 0)
    {
      inspect_stopped (pid);
      kill (pid, SIGCONT);
    }
  fflush (stdout);
}

int
main (int argc, char **argv)
{
  bool stop = argc > 1 && strcmp (argv[1], "--stop") == 0;
  bool signals = stop || (argc > 1 && strcmp (argv[1], "--signals") == 0);
  long long end;
  unsigned seen = 0;

  if (argc != 3 + signals)
    {
      fprintf (stderr, "usage: window-probe [--signals|--stop] MS NAME\n");
      return 2;
    }
  /* (comm: the first 15 bytes of the name, and a newline) */
  snprintf (comm_want, sizeof comm_want, "%.15s\n", argv[2 + signals]);
  end = now_ms () + atoll (argv[1 + signals]);
  state = calloc (MAX_PIDS, 1);
  if (state == NULL || read_file ("/proc/self/mountinfo", own_mounts, sizeof own_mounts) <= 0)
    return 2;
  setvbuf (stdout, NULL, _IOLBF, 0);
  while (now_ms () < end
         || (!stop && seen < MIN_SEEN && now_ms () < end + EXTRA_MS))
    {
      DIR *d = opendir ("/proc");
      struct dirent *e;
      if (d == NULL)
        return 2;
      while ((e = readdir (d)) != NULL)
        {
          int pid = atoi (e->d_name);
          if (pid <= 1 || pid >= MAX_PIDS || pid == getpid () || state[pid] == 2)
            continue;
          if (!is_launcher (pid))
            {
              /* no longer a launcher: it has run the app (any other
               * process may still run a launcher, and is looked at again) */
              if (state[pid] == 1)
                state[pid] = 2;
              continue;
            }
          /* A stop takes effect on the way back to user space: one sent
           * while the command was already in exec (its launch no longer
           * waiting for it) stops the app, no longer named NAME; that
           * one is continued, and the next is tried. */
          if (stop && kill (pid, SIGSTOP) == 0)
            {
              if (wait_stopped (pid) && is_launcher (pid))
                {
                  printf ("STOPPED %d\n", pid);
                  return 0;
                }
              kill (pid, SIGCONT);
              state[pid] = 2;
              continue;
            }
          if (state[pid] == 0)
            seen++;
          state[pid] = 1;
          probe (pid, signals);
        }
      closedir (d);
    }
  printf ("seen %u\n", seen);
  return 0;
}
