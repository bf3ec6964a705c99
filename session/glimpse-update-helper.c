/* glimpse-update-helper.c: what "Update now" runs as root through pkexec
 *
 * Takes exactly one argument, a sandbox id, and nothing else from its
 * caller (no paths, options or URLs; pkexec has already cleaned the
 * environment): checks the id's grammar and execs `glimpse update ID`
 * from the installed bindir.  The polkit policy
 * (data/org.glimpse.update.policy) names this program.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-sandbox.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int
main (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  char *const env[] = { "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C.UTF-8", NULL };
  char *args[] = { "glimpse", "update", NULL, NULL };

  if (argc == 2 && (strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0))
    {
      printf ("Usage: glimpse-update-helper SANDBOX-ID\n\n"
              "Runs \"%s update SANDBOX-ID\" as root. The session agent's \"Update now\"\n"
              "starts it through pkexec (polkit action org.glimpse.update); it takes the id\n"
              "and nothing else. Exit status: that of glimpse update; 2 for a wrong\n"
              "argument; 1 when glimpse cannot be run.\n", GL_BINDIR "/glimpse");
      return 0;
    }
  if (argc != 2)
    {
      fprintf (stderr, "usage: glimpse-update-helper SANDBOX-ID\n");
      return 2;
    }
  if (!gl_sandbox_id_validate (argv[1], &error))
    {
      fprintf (stderr, "glimpse-update-helper: %s\n", error->message);
      return 2;
    }
  args[2] = argv[1];
  execve (GL_BINDIR "/glimpse", args, env);
  fprintf (stderr, "glimpse-update-helper: cannot run %s: %s\n", GL_BINDIR "/glimpse", strerror (errno));
  return 1;
}
