/* glimpse-launch: process support (no GLib): die(), allocation that dies on
 * failure, cleanup attributes.  SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#define GL_NORETURN __attribute__((noreturn))
#define GL_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* Exit codes (documented in glimpse-launch(1) and --help). */
#define GL_EXIT_LAUNCHER 125  /* usage, validation or set-up error */
#define GL_EXIT_NOEXEC   126  /* command found but not executable */
#define GL_EXIT_NOTFOUND 127  /* command not found inside the sandbox */
/* From the view's first process to the launcher (which exits with
 * GL_EXIT_LAUNCHER): a writable layer is still in use by an earlier view
 * of the user that something outside keeps.  Also the exit status of
 * --held when a view uses the layer. */
#define GL_EXIT_VIEW_HELD 124

/* Where die() sends its message: -1 = stderr and gl_die_hook (the top-level
 * process); >= 0 = a pipe to the waiting parent (child processes), which
 * prints and reports it. */
extern int gl_error_fd;
/* Run by die() in the top-level process before exiting: reports the error
 * visibly after dropping privileges.  NULL in children. */
extern void (*gl_die_hook) (const char *message);

void die (const char *fmt, ...) GL_PRINTF (1, 2) GL_NORETURN;
void die_with_error (const char *fmt, ...) GL_PRINTF (1, 2) GL_NORETURN;
void die_status (int status, const char *fmt, ...) GL_PRINTF (2, 3) GL_NORETURN;
void die_oom (void) GL_NORETURN;

void *xmalloc (size_t size);
void *xcalloc (size_t n, size_t size);
void *xrealloc (void *ptr, size_t size);
char *xstrdup (const char *s);
char *xasprintf (const char *fmt, ...) GL_PRINTF (1, 2);

/* Write all of buf, retrying on EINTR and short writes.  0 or -1. */
int gl_write_all (int fd, const void *buf, size_t len);

static inline void
gl_cleanup_freep (void *p)
{
  void **pp = (void **) p;
  free (*pp);
}

static inline void
gl_cleanup_closep (int *fdp)
{
  if (*fdp >= 0)
    {
      int errsv = errno;
      close (*fdp);
      errno = errsv;
    }
}

static inline void
gl_cleanup_strvp (char ***p)
{
  if (*p != NULL)
    {
      for (char **s = *p; *s != NULL; s++)
        free (*s);
      free (*p);
    }
}

#define cleanup_free __attribute__((cleanup(gl_cleanup_freep)))
#define cleanup_fd __attribute__((cleanup(gl_cleanup_closep)))
#define cleanup_strv __attribute__((cleanup(gl_cleanup_strvp)))

static inline void *
gl_steal_pointer (void *pp)
{
  void **ptr = (void **) pp;
  void *ref = *ptr;
  *ptr = NULL;
  return ref;
}
#define steal_pointer(pp) ((__typeof__ (*(pp))) gl_steal_pointer (pp))

static inline int
gl_steal_fd (int *fdp)
{
  int fd = *fdp;
  *fdp = -1;
  return fd;
}
#define steal_fd(fdp) gl_steal_fd (fdp)
