/* updates-check.c: runs gl_updates_check() on a view given as layers and
 * prints the result, one update a line — the tests' and the benchmark's
 * way into the library.
 *
 *   updates-check [--timeout S] CACHE_DIR INDEX_CACHE_DIR LAYER...
 *   updates-check --family FAMILY SANDBOX_ID
 *
 * The second form runs gl_updates_family_check() (the family's own tool
 * in the sandbox, through $GLIMPSE_LAUNCHER); its error's code is printed
 * too ("error-code: no-tool").
 * stdout: "NAME ARCH INSTALLED CANDIDATE SUITES held|- phased|-"
 * stderr: "stats: requests=N releases=N unchanged=N indexes=N downloads=N"
 * Exit 0, or 1 with the error on stderr.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-updates.h"
#include "gl-updates-family.h"
#include "gl-apt-release-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
main (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) updates = NULL;
  GlUpdatesStats stats;
  int i = 1;

  if (argc == 4 && strcmp (argv[1], "--family") == 0)
    {
      updates = gl_updates_family_check (argv[3], argv[2], NULL, &error);
      if (updates == NULL)
        {
          fprintf (stderr, "error: %s\n", error->message);
          if (g_error_matches (error, GL_UPDATES_FAMILY_ERROR, GL_UPDATES_FAMILY_ERROR_NO_TOOL))
            fprintf (stderr, "error-code: no-tool\n");
          return 1;
        }
      for (guint k = 0; k < updates->len; k++)
        {
          const GlUpdate *u = updates->pdata[k];

          printf ("%s %s %s %s %s\n", u->name, u->arch[0] ? u->arch : "-", u->installed[0] ? u->installed : "-",
                  u->candidate, u->suites[0] ? u->suites : "-");
        }
      return 0;
    }
  if (argc > 2 && strcmp (argv[1], "--timeout") == 0)
    {
      long t = strtol (argv[2], NULL, 10);

      gl_apt_http_set_timeouts_for_test (t, t);
      i = 3;
    }
  if (argc - i < 3)
    {
      fprintf (stderr, "usage: updates-check [--timeout S] CACHE_DIR INDEX_CACHE_DIR LAYER...\n");
      return 2;
    }
  updates = gl_updates_check ((const char * const *) argv + i + 2, argv[i], argv[i + 1],
                              &stats, NULL, &error);
  fprintf (stderr, "stats: requests=%u releases=%u unchanged=%u indexes=%u downloads=%u\n",
           stats.requests, stats.releases, stats.unchanged, stats.indexes, stats.downloads);
  if (updates == NULL)
    {
      fprintf (stderr, "error: %s\n", error->message);
      return 1;
    }
  for (guint k = 0; k < updates->len; k++)
    {
      const GlUpdate *u = updates->pdata[k];

      printf ("%s %s %s %s %s %s %s\n", u->name, u->arch, u->installed, u->candidate,
              u->suites, u->held ? "held" : "-", u->phased ? "phased" : "-");
    }
  return 0;
}
