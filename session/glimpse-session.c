/* glimpse-session.c: the per-session agent
 *
 * options → main loop → own org.glimpse.Session1 on the session bus →
 * export every sandbox and watch the store → quit on SIGTERM/SIGINT or when
 * the name is lost (another agent started with --replace).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <locale.h>
#include <stdlib.h>
#include <unistd.h>
#include <glib-unix.h>

#include "gl-agent.h"
#include "gl-agent-actions.h"
#include "gl-session-dbus.h"
#include "gl-export-store.h"
#include "gl-paths.h"
#include "gl-updates-schedule.h"

#define BUS_NAME "org.glimpse.Session1"
#define OBJECT_PATH "/org/glimpse/Session1"

typedef struct {
  GMainLoop *loop;
  GlAgent *agent;
  GlAgentActions *actions;
  GlDBusSession1 *skeleton;
  GlUpdatesSchedule *updates;
  gboolean acquired;
  int status;
} Session;

static GVariant *
sandbox_to_variant (GlAgentSandbox *s)
{
  GVariantBuilder props;
  GHashTableIter iter;
  gpointer key, value;

  g_variant_builder_init (&props, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&props, "{sv}", "name", g_variant_new_string (s->name));
  g_variant_builder_add (&props, "{sv}", "export-state",
                         g_variant_new_string (gl_agent_export_state_to_string (s->export_state)));
  g_variant_builder_add (&props, "{sv}", "apps", g_variant_new_uint32 (s->n_apps));
  if (s->error != NULL)
    g_variant_builder_add (&props, "{sv}", "error", g_variant_new_string (s->error));
  g_variant_builder_add (&props, "{sv}", "synced", g_variant_new_int64 (s->synced));
  g_hash_table_iter_init (&iter, s->properties);
  while (g_hash_table_iter_next (&iter, &key, &value))
    g_variant_builder_add (&props, "{sv}", key, value);
  return g_variant_new ("(s@a{sv})", s->id, g_variant_builder_end (&props));
}

static gboolean
handle_list_sandboxes (GlDBusSession1 *skeleton, GDBusMethodInvocation *invocation, gpointer user_data)
{
  Session *session = user_data;
  GPtrArray *list = gl_agent_list (session->agent);
  GVariantBuilder b;

  g_variant_builder_init (&b, G_VARIANT_TYPE ("a(sa{sv})"));
  for (guint i = 0; i < list->len; i++)
    g_variant_builder_add_value (&b, sandbox_to_variant (list->pdata[i]));
  gl_dbus_session1_complete_list_sandboxes (skeleton, invocation, g_variant_builder_end (&b));
  return TRUE;
}

static gboolean
handle_refresh (GlDBusSession1 *skeleton, GDBusMethodInvocation *invocation,
                const char * const *ids, gpointer user_data)
{
  Session *session = user_data;
  g_autoptr(GError) error = NULL;

  if (!gl_agent_refresh (session->agent, ids, &error))
    {
      g_dbus_method_invocation_return_gerror (invocation, error);
      return TRUE;
    }
  gl_dbus_session1_complete_refresh (skeleton, invocation);
  return TRUE;
}

static gboolean
handle_action (GlDBusSession1 *skeleton, GDBusMethodInvocation *invocation,
               const char *id, const char *action, gpointer user_data)
{
  Session *session = user_data;
  g_autoptr(GError) error = NULL;

  if (!gl_agent_actions_run (session->actions, id, action, &error))
    {
      /* as GIO errors, which the caller's GDBus decodes: glimpse control
       * exits 3 for an unknown sandbox and 2 for an unknown action */
      if (g_error_matches (error, GL_AGENT_ACTIONS_ERROR, GL_AGENT_ACTIONS_ERROR_UNKNOWN_SANDBOX))
        g_dbus_method_invocation_return_error_literal (invocation, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                                                       error->message);
      else if (g_error_matches (error, GL_AGENT_ACTIONS_ERROR, GL_AGENT_ACTIONS_ERROR_UNKNOWN_ACTION))
        g_dbus_method_invocation_return_error_literal (invocation, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                                                       error->message);
      else
        g_dbus_method_invocation_return_gerror (invocation, error);
      return TRUE;
    }
  gl_dbus_session1_complete_action (skeleton, invocation);
  return TRUE;
}

static void
on_check_updates_done (GObject *source, GAsyncResult *res, gpointer user_data)
{
  GDBusMethodInvocation *invocation = user_data;
  Session *session = g_object_get_data (G_OBJECT (invocation), "glimpse-session");
  g_autoptr(GError) error = NULL;

  if (!gl_updates_schedule_check_finish (session->updates, res, &error))
    g_dbus_method_invocation_return_gerror (invocation, error);
  else
    gl_dbus_session1_complete_check_updates (session->skeleton, invocation);
  g_object_unref (invocation);
}

static gboolean
handle_check_updates (GlDBusSession1 *skeleton, GDBusMethodInvocation *invocation,
                      const char * const *ids, gpointer user_data)
{
  Session *session = user_data;

  for (guint i = 0; ids[i] != NULL; i++)
    if (gl_agent_lookup (session->agent, ids[i]) == NULL)
      {
        g_dbus_method_invocation_return_error (invocation, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                                               "No sandbox \"%s\" (glimpse list shows them)", ids[i]);
        return TRUE;
      }
  g_object_set_data (G_OBJECT (invocation), "glimpse-session", session);
  gl_updates_schedule_check (session->updates, ids, on_check_updates_done, g_object_ref (invocation));
  return TRUE;
}

static void
on_agent_changed (GlAgent *agent, GStrv ids, gpointer user_data)
{
  Session *session = user_data;

  gl_dbus_session1_emit_sandboxes_changed (session->skeleton, (const char * const *) ids);
}

static void
on_bus_acquired (GDBusConnection *connection, const char *name, gpointer user_data)
{
  Session *session = user_data;
  g_autoptr(GError) error = NULL;

  if (!g_dbus_interface_skeleton_export (G_DBUS_INTERFACE_SKELETON (session->skeleton),
                                         connection, OBJECT_PATH, &error))
    {
      g_printerr ("glimpse-session: cannot export %s on the session bus: %s\n", OBJECT_PATH, error->message);
      session->status = EXIT_FAILURE;
      g_main_loop_quit (session->loop);
    }
}

static void
on_name_acquired (GDBusConnection *connection, const char *name, gpointer user_data)
{
  Session *session = user_data;
  g_autoptr(GError) error = NULL;

  g_debug ("Owning %s; exporting the sandboxes of %s", name, gl_agent_get_store_dir (session->agent));
  session->acquired = TRUE;
  if (!gl_agent_start (session->agent, &error))
    {
      g_printerr ("glimpse-session: %s\n", error->message);
      session->status = EXIT_FAILURE;
      g_main_loop_quit (session->loop);
      return;
    }
  gl_updates_schedule_start (session->updates);
}

static void
on_name_lost (GDBusConnection *connection, const char *name, gpointer user_data)
{
  Session *session = user_data;

  if (connection == NULL)
    {
      g_printerr ("glimpse-session: cannot connect to the session bus; it runs inside a desktop session\n");
      session->status = EXIT_FAILURE;
    }
  else if (session->acquired)
    g_debug ("%s was taken over by another agent; quitting", name);
  else
    g_debug ("Another agent owns %s (use --replace to take over); quitting", name);
  g_main_loop_quit (session->loop);
}

static gboolean
on_signal (gpointer user_data)
{
  Session *session = user_data;

  g_debug ("Terminated; quitting");
  g_main_loop_quit (session->loop);
  return G_SOURCE_CONTINUE;
}

#define REEXEC_MARK "GLIMPSE_SESSION_PLAIN_MALLOC"

/* GLib before 2.76 keeps every small block it ever handed out (GSlice's
 * magazines and slabs) for its own reuse: after a start-up export of 10
 * sandboxes of 300 apps that was 2 MB of the agent's resident memory that
 * malloc could never give back.  G_SLICE=always-malloc turns that off, but
 * GLib reads it when it is loaded, before main: so the agent starts itself
 * again (the same process) with it set, once, unless the user set G_SLICE.
 * The agent's children get the environment it was started with. */
static void
use_plain_malloc (char **argv)
{
  g_autofree char *self = NULL;

  if (g_getenv (REEXEC_MARK) != NULL)
    {
      g_unsetenv (REEXEC_MARK);
      g_unsetenv ("G_SLICE");
      return;
    }
  if (glib_check_version (2, 76, 0) == NULL || g_getenv ("G_SLICE") != NULL ||
      (self = g_file_read_link ("/proc/self/exe", NULL)) == NULL)
    return;
  g_setenv ("G_SLICE", "always-malloc", TRUE);
  g_setenv (REEXEC_MARK, "1", TRUE);
  /* by its path, not /proc/self/exe: the process keeps its name */
  execv (self, argv);
  /* not started again: as GLib chose */
  g_unsetenv (REEXEC_MARK);
  g_unsetenv ("G_SLICE");
}

int
main (int argc, char **argv)
{
  gboolean replace = FALSE, verbose = FALSE, version = FALSE;
  GOptionEntry entries[] = {
    { "replace", 'r', 0, G_OPTION_ARG_NONE, &replace, "Replace a running agent", NULL },
    { "verbose", 'v', 0, G_OPTION_ARG_NONE, &verbose, "Say what the agent does", NULL },
    { "version", 0, 0, G_OPTION_ARG_NONE, &version, "Show the version and exit", NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new (NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GMainLoop) loop = NULL;
  g_autoptr(GlAgent) agent = NULL;
  g_autoptr(GlDBusSession1) skeleton = NULL;
  Session session = { 0, };
  guint owner, sigterm, sigint;

  use_plain_malloc (argv);
  setlocale (LC_ALL, "");
  g_option_context_add_main_entries (context, entries, NULL);
  g_option_context_set_summary (context,
    "The Glimpse session agent: keeps every sandbox's applications in the\n"
    "menu while sandboxes come, change and go, checks the sandboxes for\n"
    "package updates and says so. Started with the desktop session.");
  g_option_context_set_description (context, "See glimpse-session(1).");
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("glimpse-session: %s\nTry “glimpse-session --help”.\n", error->message);
      return 2;
    }
  if (version)
    {
      g_print ("glimpse-session %s\n", PACKAGE_VERSION);
      return EXIT_SUCCESS;
    }
  if (argc > 1)
    {
      g_printerr ("glimpse-session: unexpected argument “%s”\n", argv[1]);
      return 2;
    }
  /* our own debug messages, not those of every library */
  if (verbose && g_getenv ("G_MESSAGES_DEBUG") == NULL)
    g_setenv ("G_MESSAGES_DEBUG", "glimpse glimpse-xdg", TRUE);

  loop = g_main_loop_new (NULL, FALSE);
  agent = gl_agent_new (gl_paths_store_dir (), gl_export_store_host_root (), gl_export_store_context_new ());
  skeleton = gl_dbus_session1_skeleton_new ();
  session.loop = loop;
  session.agent = agent;
  session.skeleton = skeleton;
  session.actions = gl_agent_actions_new (agent);
  gl_dbus_session1_set_version (skeleton, PACKAGE_VERSION);
  gl_dbus_session1_set_store_directory (skeleton, gl_paths_store_dir ());
  g_signal_connect (skeleton, "handle-list-sandboxes", G_CALLBACK (handle_list_sandboxes), &session);
  g_signal_connect (skeleton, "handle-refresh", G_CALLBACK (handle_refresh), &session);
  g_signal_connect (skeleton, "handle-action", G_CALLBACK (handle_action), &session);
  g_signal_connect (skeleton, "handle-check-updates", G_CALLBACK (handle_check_updates), &session);
  {
    g_autofree char *conf = g_build_filename (g_get_user_config_dir (), "glimpse", "updates.conf", NULL);
    g_autofree char *cache = g_build_filename (g_get_user_cache_dir (), "glimpse", "updates", NULL);

    session.updates = gl_updates_schedule_new (agent, conf, cache);
  }
  g_signal_connect (agent, "changed", G_CALLBACK (on_agent_changed), &session);

  sigterm = g_unix_signal_add (SIGTERM, on_signal, &session);
  sigint = g_unix_signal_add (SIGINT, on_signal, &session);
  owner = g_bus_own_name (G_BUS_TYPE_SESSION, BUS_NAME,
                          G_BUS_NAME_OWNER_FLAGS_ALLOW_REPLACEMENT |
                          (replace ? G_BUS_NAME_OWNER_FLAGS_REPLACE : 0),
                          on_bus_acquired, on_name_acquired, on_name_lost, &session, NULL);
  g_main_loop_run (loop);

  g_bus_unown_name (owner);
  g_source_remove (sigterm);
  g_source_remove (sigint);
  if (g_dbus_interface_skeleton_get_connection (G_DBUS_INTERFACE_SKELETON (skeleton)) != NULL)
    g_dbus_interface_skeleton_unexport (G_DBUS_INTERFACE_SKELETON (skeleton));
  g_clear_pointer (&session.updates, gl_updates_schedule_free);
  g_clear_pointer (&session.actions, gl_agent_actions_free);
  return session.status;
}
