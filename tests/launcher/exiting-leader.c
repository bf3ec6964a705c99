/* exiting-leader SECONDS [FILE]: a process whose main thread (the thread
 * group's leader) exits at once, while another thread lives SECONDS more,
 * then creates FILE (if given) and ends the process.  Meanwhile /proc shows
 * the leader as a zombie (state Z, PF_EXITING) with "Threads: 2": exiting,
 * not done - unlike a plain zombie, whose threads are all gone.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char **args;

static void *
last_thread (void *unused)
{
  (void) unused;
  sleep ((unsigned) atoi (args[1]));
  if (args[2] != NULL)
    close (open (args[2], O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
  exit (0);
}

int
main (int argc, char **argv)
{
  pthread_t t;
  if (argc < 2 || argc > 3)
    {
      fprintf (stderr, "usage: exiting-leader SECONDS [FILE]\n");
      return 2;
    }
  args = argv;
  if (pthread_create (&t, NULL, last_thread, NULL) != 0)
    {
      fprintf (stderr, "exiting-leader: cannot start a thread\n");
      return 3;
    }
  pthread_exit (NULL);
}
