/* notify-updates.c: sends a sandbox's updates notification through
 * gl-notify, then again with fewer updates (which must replace it), and
 * prints the server's answer — for the test against a real notification
 * daemon (test-notify-dunst.sh).
 *
 *   notify-updates ID NAME
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-notify.h"
#include "gl-updates.h"

#include <stdio.h>

static GPtrArray *
updates (guint n)
{
  GPtrArray *a = g_ptr_array_new_with_free_func ((GDestroyNotify) gl_update_free);

  for (guint i = 0; i < n; i++)
    {
      GlUpdate *u = g_new0 (GlUpdate, 1);

      u->name = g_strdup_printf ("pkg%u", i);
      u->arch = g_strdup ("amd64");
      u->installed = g_strdup ("1.0-1");
      u->candidate = g_strdup ("1.0-2");
      u->suites = g_strdup ("unstable");
      g_ptr_array_add (a, u);
    }
  return a;
}

int
main (int argc, char **argv)
{
  g_autoptr(GlNotify) n = NULL;
  g_autoptr(GPtrArray) three = updates (3);
  g_autoptr(GPtrArray) two = updates (2);
  g_autoptr(GError) error = NULL;

  if (argc != 3)
    {
      fprintf (stderr, "usage: notify-updates ID NAME\n");
      return 2;
    }
  n = gl_notify_new ("Glimpse", NULL, NULL);
  if (!gl_notify_updates (n, argv[1], argv[2], NULL, three, &error) ||
      !gl_notify_updates (n, argv[1], argv[2], NULL, two, &error))
    {
      fprintf (stderr, "notify-updates: %s\n", error->message);
      return 1;
    }
  return 0;
}
