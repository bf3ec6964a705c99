/* glimpse-updates-check.c: one sandbox's update check, for the agent
 *
 *   glimpse-updates-check STORE_DIR CACHE_DIR SANDBOX_ID
 *
 * The agent (glimpse-session) runs this on its schedule, as the user, and
 * reads the result from its standard output (gl-updates-result.h): so the
 * HTTP client, its TLS stack and the indexes live only as long as a check,
 * never in the agent.  apt sandboxes are checked in C (gl-updates.h, the
 * caches under CACHE_DIR), the other families with their own tool in the
 * sandbox (gl-updates-family.h).  Exit 0 with a result written (a failed
 * check is a result), 2 on a usage error, 1 when the result cannot be
 * written.  While it runs, the apt check says on standard error which
 * address it is fetching (gl_updates_result_format_fetch): the agent names
 * it when it has to stop a check that takes too long.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-apt-release.h"
#include "gl-sandbox.h"
#include "gl-updates.h"
#include "gl-updates-family.h"
#include "gl-updates-result.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* One line, in one write: the agent reads them as they come. */
static void
report_fetch (const char *url, gboolean done, gpointer user_data)
{
  g_autofree char *line = gl_updates_result_format_fetch (url, done);
  const char *p = line;
  gsize left = strlen (line);

  while (left > 0)
    {
      ssize_t n = write (STDERR_FILENO, p, left);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return;
      p += n;
      left -= (gsize) n;
    }
}

static GBytes *
check (const char *store_dir, const char *cache_dir, const char *id)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GlSandbox) sb = gl_sandbox_load (store_dir, id, &error);
  g_autoptr(GPtrArray) updates = NULL;
  guint generation = 0;

  if (sb == NULL)
    return gl_updates_result_serialize (GL_UPDATES_RESULT_FAILED, 0, error->message, NULL);
  gl_sandbox_get_system_generation (sb, &generation, NULL);
  if (g_strcmp0 (sb->family, "apt") != 0)
    {
      if (!gl_updates_family_supported (sb->family))
        return gl_updates_result_serialize (GL_UPDATES_RESULT_UNSUPPORTED, generation, NULL, NULL);
      updates = gl_updates_family_check (id, sb->family, NULL, &error);
    }
  else
    {
      g_auto(GStrv) layers = gl_updates_sandbox_layers (sb);
      g_autofree char *cache = g_build_filename (cache_dir, "sandboxes", id, NULL);
      g_autofree char *index_cache = g_build_filename (cache_dir, "indexes", NULL);

      updates = gl_updates_check ((const char * const *) layers, cache, index_cache, NULL, NULL, &error);
    }
  if (updates == NULL)
    return gl_updates_result_serialize (g_error_matches (error, GL_UPDATES_FAMILY_ERROR,
                                                         GL_UPDATES_FAMILY_ERROR_NO_TOOL)
                                        ? GL_UPDATES_RESULT_NO_TOOL : GL_UPDATES_RESULT_FAILED,
                                        generation, error->message, NULL);
  return gl_updates_result_serialize (GL_UPDATES_RESULT_OK, generation, NULL, updates);
}

int
main (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) out = NULL;
  const guint8 *p;
  gsize left;

  if (argc == 2 && (strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0))
    {
      printf ("Usage: glimpse-updates-check STORE_DIR CACHE_DIR SANDBOX_ID\n\n"
              "Checks one sandbox for updates and writes the result to standard output;\n"
              "glimpse-session runs it on its schedule (see glimpse-session(1)). Exit\n"
              "status: 0 with a result written (a failed check is a result), 2 for a\n"
              "wrong argument, 1 when the result cannot be written. Standard error\n"
              "says which address an apt sandbox's check is fetching (\"fetching URL\",\n"
              "\"fetched URL\"), for the agent to name one that does not answer.\n");
      return 0;
    }
  if (argc != 4)
    {
      fprintf (stderr, "usage: glimpse-updates-check STORE_DIR CACHE_DIR SANDBOX_ID\n"
                       "(run by glimpse-session; see glimpse-session(1))\n");
      return 2;
    }
  if (!gl_sandbox_id_validate (argv[3], &error))
    {
      fprintf (stderr, "glimpse-updates-check: %s\n", error->message);
      return 2;
    }
  gl_apt_http_set_fetch_func (report_fetch, NULL);
  out = check (argv[1], argv[2], argv[3]);
  p = g_bytes_get_data (out, &left);
  while (left > 0)
    {
      ssize_t n = write (STDOUT_FILENO, p, left);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          fprintf (stderr, "glimpse-updates-check: cannot write the result: %s\n", g_strerror (errno));
          return 1;
        }
      p += n;
      left -= (gsize) n;
    }
  return 0;
}
