/* LD_PRELOAD into glimpse (root, in a test): no trash can be made (the
 * mkdir of system/.trash-XXXXXX fails with ENOSPC, as on a full file
 * system), and glimpse stops itself (SIGSTOP) at its first removal of a
 * file at or under $GL_STOP_UNDER, once, before that removal.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int
mkdir (const char *path, mode_t mode)
{
  static int (*real) (const char *, mode_t);

  if (strstr (path, "/.trash-") != NULL)
    {
      errno = ENOSPC;
      return -1;
    }
  if (real == NULL)
    real = (int (*) (const char *, mode_t)) dlsym (RTLD_NEXT, "mkdir");
  return real (path, mode);
}

int
unlinkat (int dfd, const char *name, int flags)
{
  static int (*real) (int, const char *, int);
  static int stopped;
  const char *under = getenv ("GL_STOP_UNDER");

  if (real == NULL)
    real = (int (*) (int, const char *, int)) dlsym (RTLD_NEXT, "unlinkat");
  if (!stopped && under != NULL && *under == '/')
    {
      char link[64], path[8192];
      size_t len = strlen (under);
      ssize_t n = 0;

      if (dfd != AT_FDCWD && name[0] != '/')
        {
          snprintf (link, sizeof link, "/proc/self/fd/%d", dfd);
          n = readlink (link, path, 4096);
        }
      if (n >= 0)
        {
          path[n] = '\0';
          snprintf (path + n, sizeof path - (size_t) n, "%s%s", n > 0 ? "/" : "", name);
          if (strncmp (path, under, len) == 0 && (path[len] == '\0' || path[len] == '/'))
            {
              stopped = 1;
              raise (SIGSTOP);
            }
        }
    }
  return real (dfd, name, flags);
}
