/* glimpse-updates-cmds.c: glimpse updates [--check] [ID…] — what the
 * session agent knows of each sandbox's pending updates; --check asks it
 * to check now (over D-Bus) and prints the result
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "gl-session-dbus.h"
#include "glimpse-cli.h"
#include "glimpse-updates-cmds.h"

#define BUS_NAME "org.glimpse.Session1"
#define OBJECT_PATH "/org/glimpse/Session1"

static char *
format_time (gint64 usec)
{
  g_autoptr(GDateTime) t = usec > 0 ? g_date_time_new_from_unix_local (usec / G_USEC_PER_SEC) : NULL;

  return t != NULL ? g_date_time_format (t, "%Y-%m-%d %H:%M") : g_strdup ("never");
}

/* Prints one sandbox; FALSE when its last check failed. */
static gboolean
print_sandbox (const char *id, GVariant *props)
{
  const char *name = id, *state = NULL, *err = NULL;
  gint64 checked = 0;
  g_autoptr(GVariant) updates = NULL;
  g_autofree char *when = NULL;
  guint regular = 0;

  g_variant_lookup (props, "name", "&s", &name);
  g_variant_lookup (props, "update-state", "&s", &state);
  g_variant_lookup (props, "update-error", "&s", &err);
  g_variant_lookup (props, "update-checked", "x", &checked);
  updates = g_variant_lookup_value (props, "updates", G_VARIANT_TYPE ("a(sssssbb)"));
  when = format_time (checked);

  if (state == NULL)
    {
      g_print ("%s (%s): not checked yet\n", id, name);
      return TRUE;
    }
  if (g_str_equal (state, "unsupported"))
    {
      g_print ("%s (%s): update checks cover apt, dnf, pacman and apk sandboxes only\n", id, name);
      return TRUE;
    }
  if (updates != NULL)
    for (gsize i = 0; i < g_variant_n_children (updates); i++)
      {
        gboolean held, phased;

        g_variant_get_child (updates, i, "(&s&s&s&s&sbb)", NULL, NULL, NULL, NULL, NULL, &held, &phased);
        regular += !held && !phased;
      }
  if (g_str_equal (state, "checking"))
    g_print ("%s (%s): checking now\n", id, name);
  else if (updates == NULL && err != NULL)
    /* no check has succeeded yet: nothing is known to be up to date */
    g_print ("%s (%s): never checked successfully (last tried %s)\n", id, name, when);
  else if (updates == NULL || g_variant_n_children (updates) == 0)
    g_print ("%s (%s): up to date (checked %s)\n", id, name, when);
  else
    g_print ("%s (%s): %u update%s (checked %s)\n", id, name, regular, regular == 1 ? "" : "s", when);
  if (err != NULL)
    g_print ("  the last check failed: %s\n", err);
  for (gsize i = 0; updates != NULL && i < g_variant_n_children (updates); i++)
    {
      const char *pkg, *arch, *installed, *candidate, *suites;
      gboolean held, phased;

      g_variant_get_child (updates, i, "(&s&s&s&s&sbb)", &pkg, &arch, &installed, &candidate, &suites,
                           &held, &phased);
      /* dnf, pacman and apk checks may not know the architecture, the
       * installed version or the repository */
      g_print ("  %s%s%s %s → %s%s%s%s%s\n", pkg, arch[0] ? ":" : "", arch, installed[0] ? installed : "?",
               candidate, suites[0] ? " (" : "", suites, suites[0] ? ")" : "",
               held ? " [held]" : phased ? " [phased]" : "");
    }
  if (regular > 0)
    g_print ("  to update: sudo glimpse update %s\n", id);
  return err == NULL;
}

int
gl_cmd_updates (int argc, char **argv)
{
  gboolean check = FALSE;
  GOptionEntry entries[] = {
    { "check", 'c', 0, G_OPTION_ARG_NONE, &check, "Ask the session agent to check now, then show the result", NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) context =
    gl_cli_context_new ("[--check] [ID…]",
                        "Show the package updates the session agent found for each sandbox\n"
                        "(or the ones named); --check checks now.");
  g_autoptr(GError) error = NULL;
  g_autoptr(GlDBusSession1) proxy = NULL;
  g_autoptr(GVariant) list = NULL;
  g_autoptr(GHashTable) wanted = g_hash_table_new (g_str_hash, g_str_equal);
  GVariantIter iter;
  const char *id;
  GVariant *props;
  int status = GL_EXIT_OK;
  guint shown = 0;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!gl_cli_parse (context, &argc, &argv, &status))
    return status;
  for (int i = 1; i < argc; i++)
    g_hash_table_add (wanted, argv[i]);

  /* --check may start the agent (D-Bus activation); showing does not */
  proxy = gl_dbus_session1_proxy_new_for_bus_sync (G_BUS_TYPE_SESSION,
                                                   G_DBUS_PROXY_FLAGS_DO_NOT_LOAD_PROPERTIES |
                                                   G_DBUS_PROXY_FLAGS_DO_NOT_CONNECT_SIGNALS |
                                                   (check ? 0 : G_DBUS_PROXY_FLAGS_DO_NOT_AUTO_START),
                                                   BUS_NAME, OBJECT_PATH, NULL, &error);
  if (proxy != NULL && check)
    {
      g_dbus_proxy_set_default_timeout (G_DBUS_PROXY (proxy), 30 * 60 * 1000);
      gl_dbus_session1_call_check_updates_sync (proxy, (const char * const *) argv + 1, NULL, &error);
    }
  if (proxy != NULL && error == NULL)
    gl_dbus_session1_call_list_sandboxes_sync (proxy, &list, NULL, &error);
  if (error != NULL)
    {
      if (g_error_matches (error, G_DBUS_ERROR, G_DBUS_ERROR_SERVICE_UNKNOWN) ||
          g_error_matches (error, G_DBUS_ERROR, G_DBUS_ERROR_NAME_HAS_NO_OWNER))
        {
          g_printerr ("glimpse: the session agent is not running, so nothing has been checked.\n"
                      "Start it with “systemctl --user start glimpse-session”, or ask it to check now\n"
                      "with “glimpse updates --check” (D-Bus starts it).\n");
          return GL_EXIT_NOT_FOUND;
        }
      g_dbus_error_strip_remote_error (error);
      g_prefix_error (&error, "Cannot ask the session agent: ");
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND))
        {
          g_printerr ("glimpse: %s\n", error->message);
          return GL_EXIT_NOT_FOUND;
        }
      return gl_cli_fail (error);
    }

  g_variant_iter_init (&iter, list);
  while (g_variant_iter_next (&iter, "(&s@a{sv})", &id, &props))
    {
      g_autoptr(GVariant) p = props;

      if (g_hash_table_size (wanted) > 0 && !g_hash_table_contains (wanted, id))
        continue;
      if (!print_sandbox (id, p) && check)
        status = GL_EXIT_FAILED;
      shown++;
      g_hash_table_remove (wanted, id);
    }
  if (g_hash_table_size (wanted) > 0)
    {
      GHashTableIter it;
      gpointer key;

      g_hash_table_iter_init (&it, wanted);
      while (g_hash_table_iter_next (&it, &key, NULL))
        g_printerr ("glimpse: no sandbox \"%s\" (glimpse list shows them)\n", (const char *) key);
      return GL_EXIT_NOT_FOUND;
    }
  if (shown == 0)
    g_print ("No sandboxes.\n");
  return status;
}
