/* gl-agent-actions.c: the control entries' actions, desktop-native
 *
 * No toolkit: the dialogue goes through notifications (gl-notification.h, with
 * actions) and the user's terminal.  Everything is started without waiting;
 * the agent's main loop stays free.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>
#include <unistd.h>
#include "gl-notification.h"

#include "gl-agent-actions.h"
#include "gl-paths.h"
#include "gl-changes.h"
#include "gl-store.h"
#include "gl-updates.h"

G_DEFINE_QUARK (gl-agent-actions-error-quark, gl_agent_actions_error)

struct _GlAgentActions {
  GlAgent *agent;
  GHashTable *shown;   /* GlNotification (owned) until closed */
};

typedef struct {
  GlAgentActions *self;
  char *id;
  char *name;
} ActionData;

static void
action_data_free (gpointer p)
{
  ActionData *d = p;

  g_free (d->id);
  g_free (d->name);
  g_free (d);
}

static ActionData *
action_data_new (GlAgentActions *self, const char *id, const char *name)
{
  ActionData *d = g_new0 (ActionData, 1);

  d->self = self;
  d->id = g_strdup (id);
  d->name = g_strdup (name);
  return d;
}

GlAgentActions *
gl_agent_actions_new (GlAgent *agent)
{
  GlAgentActions *self = g_new0 (GlAgentActions, 1);

  self->agent = agent;
  self->shown = g_hash_table_new_full (NULL, NULL, g_object_unref, NULL);
  return self;
}

void
gl_agent_actions_free (GlAgentActions *self)
{
  if (self == NULL)
    return;
  g_hash_table_unref (self->shown);
  g_free (self);
}

static void
on_closed (GlNotification *n, gpointer user_data)
{
  GlAgentActions *self = user_data;

  g_hash_table_remove (self->shown, n);
}

/* A notification kept until the server closes it (its actions need it). */
static GlNotification *
notification_new (GlAgentActions *self, const char *summary, const char *body, const char *icon)
{
  GlNotification *n;

  n = gl_notification_new (summary, body, icon);
  gl_notification_set_hint (n, "desktop-entry", g_variant_new_string ("glimpse"));
  g_signal_connect (n, "closed", G_CALLBACK (on_closed), self);
  g_hash_table_add (self->shown, n);
  return n;
}

/* Fails (with the reason) when no notification server shows it; an action
 * whose answer is the notification then fails with it, so that glimpse
 * control prints what the user would not see. */
static gboolean
notification_show (GlAgentActions *self, GlNotification *n, GError **error)
{
  g_autoptr(GError) local = NULL;

  if (!gl_notification_show (n, &local))
    {
      /* no notification server: the journal has it at least */
      g_message ("%s", local->message);
      g_hash_table_remove (self->shown, n);
      g_dbus_error_strip_remote_error (local);
      g_set_error (error, GL_AGENT_ACTIONS_ERROR, GL_AGENT_ACTIONS_ERROR_FAILED,
                   "no notification could be shown (%s)", local->message);
      return FALSE;
    }
  return TRUE;
}

static gboolean
notify_answer (GlAgentActions *self, const char *summary, const char *body, const char *icon,
               GError **error)
{
  return notification_show (self, notification_new (self, summary, body, icon), error);
}

static void
notify_simple (GlAgentActions *self, const char *summary, const char *body, const char *icon)
{
  notify_answer (self, summary, body, icon, NULL);
}

static const char *
glimpse_bin (GlAgentActions *self)
{
  return gl_agent_get_export_context (self->agent)->glimpse;
}

/* ------------------------------------------------------------- terminal */

static GStrv
with_prefix (const char * const *prefix, const char * const *argv)
{
  g_autoptr(GStrvBuilder) b = g_strv_builder_new ();

  g_strv_builder_addv (b, (const char **) prefix);
  g_strv_builder_addv (b, (const char **) argv);
  return g_strv_builder_end (b);
}

static GStrv
gnome_terminal_setting (const char * const *argv)
{
  const char *schema_id = "org.gnome.desktop.default-applications.terminal";
  GSettingsSchemaSource *source = g_settings_schema_source_get_default ();
  g_autoptr(GSettingsSchema) schema = source != NULL ? g_settings_schema_source_lookup (source, schema_id, TRUE) : NULL;
  g_autoptr(GSettings) settings = NULL;
  g_autofree char *exec = NULL;
  g_autofree char *arg = NULL;
  g_autofree char *path = NULL;

  if (schema == NULL)
    return NULL;
  settings = g_settings_new (schema_id);
  exec = g_settings_get_string (settings, "exec");
  arg = g_settings_get_string (settings, "exec-arg");
  if (exec == NULL || *exec == '\0' || (path = g_find_program_in_path (exec)) == NULL)
    return NULL;
  if (arg != NULL && *arg != '\0')
    return with_prefix ((const char *[]) { path, arg, NULL }, argv);
  return with_prefix ((const char *[]) { path, NULL }, argv);
}

GStrv
gl_agent_terminal_argv (const char * const *argv)
{
  static const char * const known[][2] = {
    { "x-terminal-emulator", "-e" }, { "gnome-terminal", "--" }, { "kgx", "--" },
    { "konsole", "-e" }, { "xfce4-terminal", "-x" }, { "mate-terminal", "-x" },
    { "lxterminal", "-e" }, { "qterminal", "-e" }, { "tilix", "-e" }, { "alacritty", "-e" },
    { "kitty", NULL }, { "foot", NULL }, { "xterm", "-e" },
  };
  const char *env = g_getenv ("GLIMPSE_TERMINAL");
  g_autofree char *path = NULL;
  GStrv result;

  if (env != NULL && *env != '\0')
    return with_prefix ((const char *[]) { env, "-e", NULL }, argv);
  if ((path = g_find_program_in_path ("xdg-terminal-exec")) != NULL)
    return with_prefix ((const char *[]) { path, NULL }, argv);
  if ((result = gnome_terminal_setting (argv)) != NULL)
    return result;
  for (gsize i = 0; i < G_N_ELEMENTS (known); i++)
    {
      g_autofree char *p = g_find_program_in_path (known[i][0]);

      if (p != NULL)
        return with_prefix ((const char *[]) { p, known[i][1], NULL }, argv);
    }
  return NULL;
}

static gboolean
spawn_detached (const char * const *argv, GError **error)
{
  g_autoptr(GSubprocess) p = g_subprocess_newv (argv, G_SUBPROCESS_FLAGS_STDIN_INHERIT, error);

  if (p == NULL)
    return FALSE;
  /* reaped by GLib's child watch */
  g_subprocess_wait_async (p, NULL, NULL, NULL);
  return TRUE;
}

static gboolean
in_terminal (const char * const *argv, GError **error)
{
  g_auto(GStrv) term = gl_agent_terminal_argv (argv);

  if (term == NULL)
    {
      g_set_error (error, GL_AGENT_ACTIONS_ERROR, GL_AGENT_ACTIONS_ERROR_NO_TERMINAL,
                   "No terminal emulator found; install one (e.g. xterm) or set GLIMPSE_TERMINAL");
      return FALSE;
    }
  return spawn_detached ((const char * const *) term, error);
}

/* sh -c SCRIPT that waits for Enter before the terminal closes */
static gboolean
in_terminal_and_wait (const char *script, const char *arg0, const char *arg1, GError **error)
{
  g_autofree char *full = g_strconcat (script, "; printf '\\nPress Enter to close. '; read x", NULL);

  return in_terminal ((const char *[]) { "/bin/sh", "-c", full, arg0, arg1, NULL }, error);
}

/* -------------------------------------------------------------- actions */

static gboolean
action_terminal (GlAgentActions *self, GlAgentSandbox *s, GError **error)
{
  /* the host's $SHELL may not exist in the sandbox */
  return in_terminal ((const char *[]) {
                        glimpse_bin (self), "run", s->id, "--", "/bin/sh", "-c",
                        "if [ -n \"$SHELL\" ] && [ -x \"$SHELL\" ]; then exec \"$SHELL\"; else exec /bin/sh; fi",
                        NULL }, error);
}

static void
on_update_done (GObject *object, GAsyncResult *result, gpointer user_data)
{
  ActionData *d = user_data;
  g_autoptr(GError) error = NULL;
  g_autofree char *summary = NULL;

  switch (gl_updates_run_update_finish (result, &error))
    {
    case GL_UPDATES_RUN_OK:
      summary = g_strdup_printf ("%s is up to date", d->name);
      notify_simple (d->self, summary, NULL, "software-update-available");
      break;
    case GL_UPDATES_RUN_DISMISSED:
      break;   /* the user said no to the administrator's password */
    case GL_UPDATES_RUN_NO_POLKIT:
      /* pkexec is there but no polkit answers: sudo in a terminal */
      {
        g_autoptr(GError) term_error = NULL;

        if (!in_terminal_and_wait ("sudo \"$0\" update \"$1\"", glimpse_bin (d->self), d->id, &term_error))
          notify_simple (d->self, error->message, term_error->message, "dialog-error");
      }
      break;
    case GL_UPDATES_RUN_FAILED:
    default:
      summary = g_strdup_printf ("Updating %s failed", d->name);
      notify_simple (d->self, summary, error != NULL ? error->message : NULL, "dialog-error");
      break;
    }
  action_data_free (d);
}

/* The privileged path: pkexec of the fixed update helper (polkit asks for
 * the administrator) on a desktop; a terminal with sudo otherwise. */
static gboolean
action_update (GlAgentActions *self, GlAgentSandbox *s, GError **error)
{
  g_autofree char *pkexec = g_find_program_in_path ("pkexec");

  if (pkexec == NULL || (g_getenv ("DISPLAY") == NULL && g_getenv ("WAYLAND_DISPLAY") == NULL))
    return in_terminal_and_wait ("sudo \"$0\" update \"$1\"", glimpse_bin (self), s->id, error);
  gl_updates_run_update (s->id, gl_paths_update_helper (), NULL,
                         on_update_done, action_data_new (self, s->id, s->name));
  return TRUE;
}

static void
on_show_changes (GlNotification *n, const char *action, gpointer user_data)
{
  ActionData *d = user_data;
  g_autoptr(GError) error = NULL;

  if (!in_terminal_and_wait ("\"$0\" changes \"$1\"", glimpse_bin (d->self), d->id, &error))
    notify_simple (d->self, "Glimpse", error->message, "dialog-error");
}

static GPtrArray *
list_changes (GlAgentActions *self, const char *id, GError **error)
{
  g_autoptr(GlSandbox) sb = gl_sandbox_load (gl_agent_get_store_dir (self->agent), id, error);
  g_autofree char *user_dir = NULL;

  if (sb == NULL)
    return NULL;
  user_dir = gl_sandbox_get_user_dir (sb, getuid ());
  if (!g_file_test (user_dir, G_FILE_TEST_IS_DIR))
    return g_ptr_array_new ();
  return gl_changes_list (user_dir, g_get_home_dir (), getuid (), "/", NULL, error);
}

static char *
describe_changes (GPtrArray *changes)
{
  guint n[4] = { 0, };

  for (guint i = 0; i < changes->len; i++)
    {
      GlChange *c = changes->pdata[i];
      if ((guint) c->kind < G_N_ELEMENTS (n))
        n[c->kind]++;
    }
  if (changes->len == 0)
    return g_strdup ("Apps of this sandbox have not changed any of your files.");
  return g_strdup_printf ("%u added, %u modified, %u deleted, %u replaced folders — "
                          "kept in the sandbox; your own files are untouched.",
                          n[GL_CHANGE_ADDED], n[GL_CHANGE_MODIFIED], n[GL_CHANGE_DELETED],
                          n[GL_CHANGE_REPLACED]);
}

static gboolean
action_show_changes (GlAgentActions *self, GlAgentSandbox *s, GError **error)
{
  g_autoptr(GPtrArray) changes = list_changes (self, s->id, error);
  g_autofree char *summary = NULL;
  g_autofree char *body = NULL;
  GlNotification *n;

  if (changes == NULL)
    return FALSE;
  summary = g_strdup_printf ("Your changes in %s", s->name);
  body = describe_changes (changes);
  n = notification_new (self, summary, body, "document-open-recent");
  if (changes->len > 0)
    gl_notification_add_action (n, "show", "Show them", on_show_changes,
                                    action_data_new (self, s->id, s->name), action_data_free);
  if (!notification_show (self, n, error))
    {
      g_prefix_error (error, "%s: %s — but ", summary, body);
      return FALSE;
    }
  return TRUE;
}

static void
on_purge_done (GObject *object, GAsyncResult *result, gpointer user_data)
{
  ActionData *d = user_data;
  GSubprocess *p = G_SUBPROCESS (object);
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autofree char *summary = NULL;
  gboolean ok = g_subprocess_communicate_utf8_finish (p, result, &out, &err, &error) &&
                g_subprocess_get_if_exited (p) && g_subprocess_get_exit_status (p) == 0;

  if (ok)
    {
      summary = g_strdup_printf ("Your changes in %s are purged", d->name);
      notify_simple (d->self, summary, NULL, "edit-clear");
    }
  else
    {
      summary = g_strdup_printf ("Nothing purged in %s", d->name);
      notify_simple (d->self, summary,
                     error != NULL ? error->message : (err != NULL ? g_strstrip (err) : NULL),
                     "dialog-error");
    }
  action_data_free (d);
}

static void
on_purge_confirmed (GlNotification *n, const char *action, gpointer user_data)
{
  ActionData *d = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) p =
    g_subprocess_newv ((const char *[]) { glimpse_bin (d->self), "purge", d->id, "--yes", NULL },
                       G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE, &error);

  if (p == NULL)
    {
      notify_simple (d->self, "Glimpse", error->message, "dialog-error");
      return;
    }
  g_subprocess_communicate_utf8_async (p, NULL, NULL, on_purge_done,
                                       action_data_new (d->self, d->id, d->name));
}

static void
on_cancel (GlNotification *n, const char *action, gpointer user_data)
{
  gl_notification_close (n, NULL);
}

static gboolean
action_purge (GlAgentActions *self, GlAgentSandbox *s, GError **error)
{
  g_autoptr(GPtrArray) changes = list_changes (self, s->id, error);
  g_autofree char *summary = NULL;
  g_autofree char *body = NULL;
  g_autofree char *desc = NULL;
  g_autoptr(GError) local = NULL;
  GlNotification *n;

  if (changes == NULL)
    return FALSE;
  if (changes->len == 0)
    {
      summary = g_strdup_printf ("Nothing to purge in %s", s->name);
      if (!notify_answer (self, summary, "Apps of this sandbox have not changed any of your files.",
                          "edit-clear", error))
        {
          g_prefix_error (error, "%s — but ", summary);
          return FALSE;
        }
      return TRUE;
    }
  summary = g_strdup_printf ("Purge your changes in %s?", s->name);
  desc = describe_changes (changes);
  body = g_strdup_printf ("%s Purging drops them for good; apps of the sandbox must be closed.", desc);
  n = notification_new (self, summary, body, "dialog-warning");
  gl_notification_set_urgency (n, GL_NOTIFICATION_URGENCY_CRITICAL);
  gl_notification_add_action (n, "purge", "Purge", on_purge_confirmed,
                                  action_data_new (self, s->id, s->name), action_data_free);
  gl_notification_add_action (n, "cancel", "Cancel", on_cancel, NULL, NULL);
  if (!notification_show (self, n, &local))
    {
      g_set_error (error, GL_AGENT_ACTIONS_ERROR, GL_AGENT_ACTIONS_ERROR_FAILED,
                   "Nothing purged in %s: cannot ask in a notification, %s; "
                   "“glimpse purge %s” asks in a terminal", s->name, local->message, s->id);
      return FALSE;
    }
  return TRUE;
}

static gboolean
action_hide (GlAgentActions *self, GlAgentSandbox *s, GError **error)
{
  GlExportContext *ctx = gl_agent_get_export_context (self->agent);
  const char *ids[] = { s->id, NULL };
  g_autofree char *summary = NULL;
  g_autofree char *body = NULL;
  g_autofree char *id = g_strdup (s->id);

  if (!gl_export_user_set_disabled (ctx->config_home, s->id, TRUE, error))
    return FALSE;
  summary = g_strdup_printf ("%s is hidden from the menu", s->name);
  if (!gl_agent_refresh (self->agent, ids, error))
    return FALSE;
  body = g_strdup_printf ("“glimpse export %s” shows it again.", id);
  notify_simple (self, summary, body, "view-conceal");
  return TRUE;
}

gboolean
gl_agent_actions_run (GlAgentActions *self, const char *id, const char *action, GError **error)
{
  static const struct {
    const char *name;
    gboolean (*run) (GlAgentActions *, GlAgentSandbox *, GError **);
  } actions[] = {
    { "terminal", action_terminal },
    { "update", action_update },
    { "show-changes", action_show_changes },
    { "purge", action_purge },
    { "hide", action_hide },
  };
  GlAgentSandbox *s = gl_agent_lookup (self->agent, id);

  for (gsize i = 0; i < G_N_ELEMENTS (actions); i++)
    if (strcmp (action, actions[i].name) == 0)
      {
        if (s == NULL)
          {
            g_set_error (error, GL_AGENT_ACTIONS_ERROR, GL_AGENT_ACTIONS_ERROR_UNKNOWN_SANDBOX,
                         "No sandbox “%s”; “glimpse list” shows the sandboxes there are", id);
            return FALSE;
          }
        g_debug ("Action %s on %s", action, id);
        if (!actions[i].run (self, s, error))
          {
            /* a menu click has no terminal to print to */
            notify_simple (self, "Glimpse", (*error)->message, "dialog-error");
            return FALSE;
          }
        return TRUE;
      }
  g_set_error (error, GL_AGENT_ACTIONS_ERROR, GL_AGENT_ACTIONS_ERROR_UNKNOWN_ACTION,
               "Unknown action “%s”; the actions are terminal, update, show-changes, purge, hide",
               action);
  return FALSE;
}
