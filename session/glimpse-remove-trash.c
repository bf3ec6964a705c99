/* glimpse-remove-trash.c: removes what a package operation replaced
 *
 * An internal helper, not a command: glimpse (gl-pkg.c, trash_dispose)
 * starts it detached, in a process of its own, to remove a trash
 * (<sandbox>/system/.trash-XXXXXX) after the operation has returned.
 * glimpse forks it from a process with threads, where the child may make
 * only async-signal-safe calls until it execs (a lock another thread
 * held at the fork would never be released); so the child only arranges
 * its descriptors and execs this, which removes the trash with the same
 * gl_rm_rf as everywhere else (never into another mount, never through
 * a link, unreadable directories and any depth).
 *
 *   glimpse-remove-trash FD DIR
 *
 * FD is the trash's own lock (DIR/lock), held; the locks of the
 * generations in it are inherited too, and all are held until this ends.
 * Everything in DIR but its lock goes first, then DIR with the lock, so a
 * lock that can still be opened is always a held one.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-fsutil.h"
#include "gl-sandbox.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* Whether @fd is a lock taken on @dir's lock file */
static gboolean
holds_lock (int fd, const char *dir)
{
  g_autofree char *lock = g_build_filename (dir, "lock", NULL);
  struct stat held, named;

  return fstat (fd, &held) == 0 && lstat (lock, &named) == 0 && S_ISREG (named.st_mode)
         && held.st_dev == named.st_dev && held.st_ino == named.st_ino
         && flock (fd, LOCK_EX | LOCK_NB) == 0;
}

int
main (int argc, char **argv)
{
  g_autofree char *base = NULL;
  g_autoptr(GDir) d = NULL;
  g_autoptr(GError) error = NULL;
  const char *name;
  guint64 fd;
  int status = 0;

  if (argc != 3 || !g_ascii_string_to_unsigned (argv[1], 10, 3, G_MAXINT, &fd, NULL))
    {
      fprintf (stderr, "glimpse-remove-trash: an internal helper of glimpse, not to be run by hand\n");
      return 2;
    }
  base = g_path_get_basename (argv[2]);
  if (!g_str_has_prefix (base, GL_SANDBOX_TRASH_PREFIX) || !holds_lock ((int) fd, argv[2]))
    {
      fprintf (stderr, "glimpse-remove-trash: %s is not a trash whose lock is held on descriptor %s\n",
               argv[2], argv[1]);
      return 2;
    }
  d = g_dir_open (argv[2], 0, &error);
  if (d == NULL)
    {
      fprintf (stderr, "glimpse-remove-trash: %s\n", error->message);
      return 1;
    }
  while ((name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *item = NULL;

      if (g_str_equal (name, "lock"))
        continue;
      item = g_build_filename (argv[2], name, NULL);
      if (!gl_rm_rf (item, NULL, &error))
        {
          fprintf (stderr, "glimpse-remove-trash: %s\n", error->message);
          g_clear_error (&error);
          status = 1;
        }
    }
  g_clear_pointer (&d, g_dir_close);
  /* (what could not go stays, with the lock, for the next operation) */
  if (status == 0 && !gl_rm_rf (argv[2], NULL, &error))
    {
      fprintf (stderr, "glimpse-remove-trash: %s\n", error->message);
      status = 1;
    }
  return status;
}
