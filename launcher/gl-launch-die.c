/* glimpse-launch: process support (no GLib): die(), allocation that dies on
 * failure, cleanup attributes.  SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include "gl-launch-die.h"

#include <stdio.h>
#include <string.h>

int gl_error_fd = -1;
void (*gl_die_hook) (const char *message) = NULL;

static GL_NORETURN GL_PRINTF (3, 0) void
die_va (int status, int errsv, const char *fmt, va_list ap)
{
  char msg[2048];
  int n = vsnprintf (msg, sizeof msg, fmt, ap);

  if (n < 0)
    n = 0;
  if (errsv != 0 && (size_t) n < sizeof msg)
    snprintf (msg + n, sizeof msg - (size_t) n, ": %s", strerror (errsv));

  if (gl_error_fd >= 0)
    {
      /* Child: the waiting parent prints it and reports it. */
      char line[2100];
      int len = snprintf (line, sizeof line, "glimpse-launch: %s\n", msg);
      if (len > 0)
        (void) gl_write_all (gl_error_fd, line,
                             (size_t) len < sizeof line ? (size_t) len : sizeof line - 1);
      _exit (status);
    }

  fprintf (stderr, "glimpse-launch: %s\n", msg);
  fflush (stderr);
  if (gl_die_hook != NULL)
    gl_die_hook (msg);
  _exit (status);
}

void
die (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  die_va (GL_EXIT_LAUNCHER, 0, fmt, ap);
}

void
die_with_error (const char *fmt, ...)
{
  int errsv = errno;
  va_list ap;
  va_start (ap, fmt);
  die_va (GL_EXIT_LAUNCHER, errsv, fmt, ap);
}

void
die_status (int status, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  die_va (status, 0, fmt, ap);
}

void
die_oom (void)
{
  static const char msg[] = "glimpse-launch: out of memory\n";
  (void) gl_write_all (gl_error_fd >= 0 ? gl_error_fd : 2, msg, sizeof msg - 1);
  _exit (GL_EXIT_LAUNCHER);
}

void *
xmalloc (size_t size)
{
  void *p = malloc (size ? size : 1);
  if (p == NULL)
    die_oom ();
  return p;
}

void *
xcalloc (size_t n, size_t size)
{
  void *p = calloc (n ? n : 1, size ? size : 1);
  if (p == NULL)
    die_oom ();
  return p;
}

void *
xrealloc (void *ptr, size_t size)
{
  void *p = realloc (ptr, size ? size : 1);
  if (p == NULL)
    die_oom ();
  return p;
}

char *
xstrdup (const char *s)
{
  char *p = strdup (s);
  if (p == NULL)
    die_oom ();
  return p;
}

char *
xasprintf (const char *fmt, ...)
{
  char *p = NULL;
  va_list ap;
  va_start (ap, fmt);
  if (vasprintf (&p, fmt, ap) < 0)
    die_oom ();
  va_end (ap);
  return p;
}

int
gl_write_all (int fd, const void *buf, size_t len)
{
  const char *p = buf;
  while (len > 0)
    {
      ssize_t n = write (fd, p, len);
      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          return -1;
        }
      p += n;
      len -= (size_t) n;
    }
  return 0;
}
