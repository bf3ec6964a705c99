/* glimpse-agent-cmds.c: glimpse status, and glimpse control (what the
 * control entries of the menu run): the command line side of the session
 * agent's D-Bus interface
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "gl-session-dbus.h"
#include "glimpse-agent-cmds.h"
#include "glimpse-cli.h"

#define BUS_NAME "org.glimpse.Session1"
#define OBJECT_PATH "/org/glimpse/Session1"

static const char not_running[] =
  "The Glimpse session agent is not running, so sandbox menus are not kept up to date.\n"
  "Start it with “systemctl --user start glimpse-session”, or run “%s &”;\n"
  "it starts by itself with the next graphical login. “glimpse export” updates the menu once.\n";

static GlDBusSession1 *
connect_agent (gboolean autostart, GError **error)
{
  return gl_dbus_session1_proxy_new_for_bus_sync (G_BUS_TYPE_SESSION,
                                                  G_DBUS_PROXY_FLAGS_DO_NOT_LOAD_PROPERTIES |
                                                  G_DBUS_PROXY_FLAGS_DO_NOT_CONNECT_SIGNALS |
                                                  (autostart ? 0 : G_DBUS_PROXY_FLAGS_DO_NOT_AUTO_START),
                                                  BUS_NAME, OBJECT_PATH, NULL, error);
}

static gboolean
is_not_running (const GError *error)
{
  return g_error_matches (error, G_DBUS_ERROR, G_DBUS_ERROR_SERVICE_UNKNOWN) ||
         g_error_matches (error, G_DBUS_ERROR, G_DBUS_ERROR_NAME_HAS_NO_OWNER) ||
         g_error_matches (error, G_DBUS_ERROR, G_DBUS_ERROR_UNKNOWN_METHOD) ||
         g_error_matches (error, G_DBUS_ERROR, G_DBUS_ERROR_UNKNOWN_OBJECT);
}

static char *
format_time (gint64 usec)
{
  g_autoptr(GDateTime) t = NULL;

  if (usec <= 0)
    return g_strdup ("never");
  t = g_date_time_new_from_unix_local (usec / G_USEC_PER_SEC);
  return t != NULL ? g_date_time_format (t, "%Y-%m-%d %H:%M:%S") : g_strdup ("?");
}

int
gl_cmd_status (int argc, char **argv)
{
  g_autoptr(GOptionContext) context =
    gl_cli_context_new ("", "Show what the session agent knows: each sandbox's menu and its state.");
  g_autoptr(GError) error = NULL;
  g_autoptr(GlDBusSession1) proxy = NULL;
  g_autoptr(GVariant) list = NULL;
  g_autofree char *owner = NULL;
  GVariantIter iter;
  const char *id;
  GVariant *props;
  int status = GL_EXIT_OK;

  if (!gl_cli_parse (context, &argc, &argv, &status))
    return status;
  if (argc > 1)
    return gl_cli_usage ("status", "no arguments expected");

  proxy = connect_agent (FALSE, &error);
  if (proxy == NULL)
    {
      g_printerr (not_running, GL_LIBEXECDIR "/glimpse-session");
      g_printerr ("(No session bus: %s)\n", error->message);
      return GL_EXIT_NOT_FOUND;
    }
  /* a bus, but nobody owns the agent's name (never started, or killed):
   * a call would fail with GDBus's own words about the proxy's flags */
  owner = g_dbus_proxy_get_name_owner (G_DBUS_PROXY (proxy));
  if (owner == NULL)
    {
      g_printerr (not_running, GL_LIBEXECDIR "/glimpse-session");
      return GL_EXIT_NOT_FOUND;
    }
  if (!gl_dbus_session1_call_list_sandboxes_sync (proxy, &list, NULL, &error))
    {
      if (is_not_running (error))
        {
          g_printerr (not_running, GL_LIBEXECDIR "/glimpse-session");
          return GL_EXIT_NOT_FOUND;
        }
      g_dbus_error_strip_remote_error (error);
      g_prefix_error (&error, "Cannot ask the session agent: ");
      return gl_cli_fail (error);
    }

  g_print ("The session agent is running; it keeps the menu in step with %zu sandbox%s.\n",
           g_variant_n_children (list), g_variant_n_children (list) == 1 ? "" : "es");
  g_variant_iter_init (&iter, list);
  while (g_variant_iter_next (&iter, "(&s@a{sv})", &id, &props))
    {
      g_autoptr(GVariant) p = props;
      const char *name = id, *state = "?", *err = NULL;
      guint32 apps = 0;
      gint64 synced = 0;
      g_autofree char *when = NULL;
      GVariantIter piter;
      const char *key;
      GVariant *value;

      g_variant_lookup (p, "name", "&s", &name);
      g_variant_lookup (p, "export-state", "&s", &state);
      g_variant_lookup (p, "apps", "u", &apps);
      g_variant_lookup (p, "synced", "x", &synced);
      g_variant_lookup (p, "error", "&s", &err);
      when = format_time (synced);
      g_print ("\n%s (%s)\n  menu: %s, %u application%s, exported %s\n", id, name, state, apps,
               apps == 1 ? "" : "s", when);
      if (err != NULL)
        g_print ("  problem: %s\n", err);
      /* what other parts of the agent publish (updates, …) */
      g_variant_iter_init (&piter, p);
      while (g_variant_iter_next (&piter, "{&sv}", &key, &value))
        {
          g_autoptr(GVariant) v = value;
          if (!g_str_equal (key, "name") && !g_str_equal (key, "export-state") &&
              !g_str_equal (key, "apps") && !g_str_equal (key, "synced") && !g_str_equal (key, "error"))
            {
              g_autofree char *text = g_variant_is_of_type (v, G_VARIANT_TYPE_STRING)
                ? g_variant_dup_string (v, NULL)
                : g_str_equal (key, "updates") && g_variant_is_container (v)
                ? g_strdup_printf ("%zu (glimpse updates %s lists them)", g_variant_n_children (v), id)
                : g_str_equal (key, "update-checked") && g_variant_is_of_type (v, G_VARIANT_TYPE_INT64)
                ? format_time (g_variant_get_int64 (v))
                : g_variant_print (v, FALSE);
              g_print ("  %s: %s\n", key, text);
            }
        }
    }
  return GL_EXIT_OK;
}

/* glimpse control ID ACTION: what the control entries of a sandbox's
 * submenu run.  The agent is started through D-Bus activation if needed. */
int
gl_cmd_control (int argc, char **argv)
{
  g_autoptr(GOptionContext) context =
    gl_cli_context_new ("ID ACTION",
                        "Ask the session agent to act on a sandbox: terminal, update, show-changes, "
                        "purge (asks first), hide.");
  g_autoptr(GError) error = NULL;
  g_autoptr(GlDBusSession1) proxy = NULL;
  int status = GL_EXIT_OK;

  if (!gl_cli_parse (context, &argc, &argv, &status))
    return status;
  if (argc != 3)
    return gl_cli_usage ("control", "give a sandbox id and an action");
  proxy = connect_agent (TRUE, &error);
  if (proxy == NULL || !gl_dbus_session1_call_action_sync (proxy, argv[1], argv[2], NULL, &error))
    {
      if (is_not_running (error))
        {
          g_printerr (not_running, GL_LIBEXECDIR "/glimpse-session");
          return GL_EXIT_NOT_FOUND;
        }
      g_dbus_error_strip_remote_error (error);
      status = gl_cli_fail (error);
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND))
        return GL_EXIT_NOT_FOUND;      /* no such sandbox */
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT))
        return GL_EXIT_USAGE;          /* no such action */
      return status;
    }
  return GL_EXIT_OK;
}
