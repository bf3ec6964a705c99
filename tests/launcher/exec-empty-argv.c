/* exec-empty-argv PROGRAM: execve PROGRAM with argc == 0 (SECURITY.md case 1).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <unistd.h>

int
main (int argc, char **argv)
{
  char *empty_argv[] = { NULL };
  char *envp[] = { "LD_PRELOAD=/nonexistent.so", NULL };
  if (argc != 2)
    {
      fprintf (stderr, "usage: exec-empty-argv PROGRAM\n");
      return 2;
    }
  execve (argv[1], empty_argv, envp);
  perror ("execve");
  return 3;
}
