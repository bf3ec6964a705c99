/* gl-updates-run.c: "Update now" through pkexec and the update helper
 * (kept apart from gl-updates.c so the agent, which runs it, links no
 * HTTP client: the check itself runs in glimpse-updates-check)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-updates.h"

#include "gl-spawn.h"

#include <sys/wait.h>

typedef struct {
  char *sandbox_id;
  char *helper;
  char *no_polkit;   /* GL_UPDATES_RUN_NO_POLKIT: why, and what to run instead */
} RunData;

static void
run_data_free (RunData *d)
{
  g_free (d->sandbox_id);
  g_free (d->helper);
  g_free (d->no_polkit);
  g_free (d);
}

static char *
last_lines (GBytes *out, guint n)
{
  g_autofree char *text = out ? g_strndup (g_bytes_get_data (out, NULL), g_bytes_get_size (out)) : g_strdup ("");
  g_auto(GStrv) lines = g_strsplit (g_strstrip (text), "\n", -1);
  guint len = g_strv_length (lines);

  return g_strjoinv ("\n", lines + (len > n ? len - n : 0));
}

/* A polkit authority pkexec can ask: org.freedesktop.PolicyKit1 on the
 * system bus, running or activatable. */
static gboolean
polkit_available (GCancellable *cancellable, GError **error)
{
  g_autoptr(GDBusConnection) bus = g_bus_get_sync (G_BUS_TYPE_SYSTEM, cancellable, error);
  g_autoptr(GVariant) owner = NULL;
  g_autoptr(GVariant) activatable = NULL;
  g_autofree const char **names = NULL;
  gboolean has_owner = FALSE;

  if (bus == NULL)
    return FALSE;
  owner = g_dbus_connection_call_sync (bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                       "org.freedesktop.DBus", "NameHasOwner",
                                       g_variant_new ("(s)", "org.freedesktop.PolicyKit1"),
                                       G_VARIANT_TYPE ("(b)"), G_DBUS_CALL_FLAGS_NONE, 5000, cancellable, error);
  if (owner == NULL)
    return FALSE;
  g_variant_get (owner, "(b)", &has_owner);
  if (has_owner)
    return TRUE;
  activatable = g_dbus_connection_call_sync (bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                             "org.freedesktop.DBus", "ListActivatableNames", NULL,
                                             G_VARIANT_TYPE ("(as)"), G_DBUS_CALL_FLAGS_NONE, 5000,
                                             cancellable, error);
  if (activatable == NULL)
    return FALSE;
  g_variant_get (activatable, "(^a&s)", &names);
  if (g_strv_contains (names, "org.freedesktop.PolicyKit1"))
    return TRUE;
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
               "no polkit authority (org.freedesktop.PolicyKit1) on the system bus");
  return FALSE;
}

static void
run_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  RunData *d = task_data;
  const char *argv[] = { "pkexec", d->helper, d->sandbox_id, NULL };
  GlSpawnOptions opts = { .output = GL_SPAWN_OUTPUT_CAPTURE };
  g_auto(GlSpawnResult) res = { 0, NULL, NULL };
  g_autoptr(GError) error = NULL;
  g_autofree char *pkexec = g_find_program_in_path ("pkexec");
  int status;

  if (pkexec == NULL || !polkit_available (cancellable, &error))
    {
      g_autofree char *why = pkexec == NULL ? g_strdup ("polkit's pkexec is not installed")
                                            : g_strdup_printf ("polkit cannot ask for the administrator here (%s)",
                                                               error->message);

      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        {
          g_task_return_error (task, g_steal_pointer (&error));
          return;
        }
      d->no_polkit = g_strdup_printf ("%s: run “sudo glimpse update %s” in a terminal", why, d->sandbox_id);
      g_task_return_int (task, GL_UPDATES_RUN_NO_POLKIT);
      return;
    }
  if (gl_spawn_run (argv, &opts, &res, cancellable, &error))
    {
      g_task_return_int (task, GL_UPDATES_RUN_OK);
      return;
    }
  if (!g_error_matches (error, GL_SPAWN_ERROR, GL_SPAWN_ERROR_FAILED))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  status = WIFEXITED (res.wait_status) ? WEXITSTATUS (res.wait_status) : -1;
  if (status == 126 || status == 127)
    {
      g_task_return_int (task, GL_UPDATES_RUN_DISMISSED);
      return;
    }
  {
    g_autofree char *tail = last_lines (res.err && g_bytes_get_size (res.err) ? res.err : res.out, 3);

    g_task_return_new_error (task, GL_SPAWN_ERROR, GL_SPAWN_ERROR_FAILED, "%s",
                             tail[0] ? tail : error->message);
  }
}

void
gl_updates_run_update (const char          *sandbox_id,
                       const char          *helper_path,
                       GCancellable        *cancellable,
                       GAsyncReadyCallback  callback,
                       gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (NULL, cancellable, callback, user_data);
  RunData *d = g_new0 (RunData, 1);

  d->sandbox_id = g_strdup (sandbox_id);
  d->helper = g_strdup (helper_path);
  g_task_set_task_data (task, d, (GDestroyNotify) run_data_free);
  g_task_set_source_tag (task, gl_updates_run_update);
  g_task_run_in_thread (task, run_thread);
}

GlUpdatesRunResult
gl_updates_run_update_finish (GAsyncResult  *result,
                              GError       **error)
{
  GError *local = NULL;
  gssize r = g_task_propagate_int (G_TASK (result), &local);

  if (local != NULL)
    {
      g_propagate_error (error, local);
      return GL_UPDATES_RUN_FAILED;
    }
  if (r == GL_UPDATES_RUN_NO_POLKIT)
    {
      RunData *d = g_task_get_task_data (G_TASK (result));

      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, d->no_polkit);
    }
  return (GlUpdatesRunResult) r;
}
