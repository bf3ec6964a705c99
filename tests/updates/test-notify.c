/* test-notify.c: notifications on a private session bus, against
 * python-dbusmock's notification_daemon template (it records every call;
 * the test emits ActionInvoked as a server would), and "Update now"
 * through a pkexec recorder put first in PATH.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-notify.h"
#include "gl-updates.h"
#include "gl-test-skip.h"

#include <string.h>
#include <glib/gstdio.h>
#include "gl-notification.h"

#define MOCK_PATH "/org/freedesktop/Notifications"
#define MOCK_IFACE "org.freedesktop.DBus.Mock"

static GDBusConnection *bus;

static GVariant *
mock_call (const char *method, GVariant *args)
{
  g_autoptr(GError) error = NULL;
  GVariant *r = g_dbus_connection_call_sync (bus, "org.freedesktop.Notifications", MOCK_PATH, MOCK_IFACE,
                                             method, args, NULL, G_DBUS_CALL_FLAGS_NONE, 5000, NULL, &error);

  g_assert_no_error (error);
  return r;
}

static void
set_capabilities (const char *python_list)
{
  g_autofree char *code = g_strdup_printf ("ret = %s", python_list);

  g_variant_unref (mock_call ("AddMethod", g_variant_new ("(sssss)", "org.freedesktop.Notifications",
                                                         "GetCapabilities", "", "as", code)));
  /* the mock stays the owner of the name: what a new server would tell
   * (NameOwnerChanged), the capabilities gl-notification keeps are
   * forgotten */
  gl_notification_shutdown ();
}

/* The server advertises @python_list from now on, and has recorded no
 * call yet */
static void
server_reset (const char *python_list)
{
  set_capabilities (python_list);
  g_variant_unref (mock_call ("ClearCalls", NULL));
}

/* The summary and body of the @i-th Notify call of @calls (notify_calls) */
static void
call_texts (GPtrArray *calls, guint i, const char **summary, const char **body)
{
  g_assert_cmpuint (i, <, calls->len);
  g_variant_get (calls->pdata[i], "(&su&s&s&s^a&s@a{sv}i)", NULL, NULL, NULL, summary, body, NULL, NULL, NULL);
}

/* The Notify calls recorded so far: an array of (app, replaces, icon,
 * summary, body, actions, hints, timeout) tuples. */
static GPtrArray *
notify_calls (void)
{
  g_autoptr(GVariant) r = mock_call ("GetMethodCalls", g_variant_new ("(s)", "Notify"));
  g_autoptr(GVariant) calls = g_variant_get_child_value (r, 0);
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) g_variant_unref);

  for (gsize i = 0; i < g_variant_n_children (calls); i++)
    {
      g_autoptr(GVariant) call = g_variant_get_child_value (calls, i);
      g_autoptr(GVariant) args = g_variant_get_child_value (call, 1);
      GVariantBuilder b;

      g_variant_builder_init (&b, G_VARIANT_TYPE_TUPLE);
      for (gsize k = 0; k < g_variant_n_children (args); k++)
        {
          g_autoptr(GVariant) boxed = g_variant_get_child_value (args, k);
          g_variant_builder_add_value (&b, g_variant_get_variant (boxed));
        }
      g_ptr_array_add (out, g_variant_ref_sink (g_variant_builder_end (&b)));
    }
  return out;
}

static GPtrArray *
some_updates (guint n, gboolean with_held)
{
  GPtrArray *a = g_ptr_array_new_with_free_func ((GDestroyNotify) gl_update_free);

  for (guint i = 0; i < n; i++)
    {
      GlUpdate *u = g_new0 (GlUpdate, 1);

      u->name = g_strdup_printf ("pkg%u", i);
      u->arch = g_strdup ("amd64");
      u->installed = g_strdup ("1.0-1");
      u->candidate = g_strdup_printf ("1.0-%u", i + 2);
      u->suites = g_strdup ("unstable");
      u->held = with_held && i == 0;
      g_ptr_array_add (a, u);
    }
  return a;
}

typedef struct {
  char           *id;
  GlNotifyAction  action;
  guint           count;
} ActionSeen;

static void
on_action (const char *id, GlNotifyAction action, gpointer user_data)
{
  ActionSeen *seen = user_data;

  g_free (seen->id);
  seen->id = g_strdup (id);
  seen->action = action;
  seen->count++;
}

static void
wait_for (gboolean *flag, guint *counter, guint target)
{
  gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;

  while ((flag ? !*flag : *counter < target) && g_get_monotonic_time () < deadline)
    if (!g_main_context_iteration (NULL, FALSE))
      g_usleep (1000);
  g_assert_true (flag ? *flag : *counter >= target);
}

static void
test_actions_and_replace (void)
{
  g_autoptr(GlNotify) n = NULL;
  g_autoptr(GPtrArray) ups = some_updates (7, TRUE);
  g_autoptr(GPtrArray) calls = NULL;
  g_autoptr(GError) error = NULL;
  ActionSeen seen = { NULL, 0, 0 };
  const char *summary, *body, *app, *icon;
  g_autofree const char **actions = NULL;
  guint32 replaces;
  g_autoptr(GVariant) hints = NULL;
  g_autoptr(GVariant) entry = NULL;
  guint32 first_id;

  server_reset ("['actions', 'body']");
  n = gl_notify_new ("Glimpse", on_action, &seen);

  g_assert_true (gl_notify_updates (n, "sid", "Debian unstable", NULL, ups, &error));
  g_assert_no_error (error);
  calls = notify_calls ();
  g_assert_cmpuint (calls->len, ==, 1);
  g_variant_get (calls->pdata[0], "(&su&s&s&s^a&s@a{sv}i)", &app, &replaces, &icon, &summary, &body,
                 &actions, &hints, NULL);
  g_assert_cmpstr (app, ==, "Glimpse");
  g_assert_cmpuint (replaces, ==, 0);
  g_assert_cmpstr (summary, ==, "6 updates for Debian unstable");
  /* the first five regular ones, old → new; the rest counted; held apart */
  g_assert_nonnull (strstr (body, "pkg1 1.0-1 → 1.0-3"));
  g_assert_null (strstr (body, "pkg0 "));
  g_assert_nonnull (strstr (body, "and 1 more"));
  g_assert_nonnull (strstr (body, "1 held"));
  g_assert_null (strstr (body, "sudo glimpse update"));
  g_assert_cmpuint (g_strv_length ((char **) actions), ==, 4);
  g_assert_cmpstr (actions[0], ==, "update-now");
  g_assert_cmpstr (actions[1], ==, "Update now");
  g_assert_cmpstr (actions[2], ==, "later");
  g_assert_cmpstr (actions[3], ==, "Later");
  entry = g_variant_lookup_value (hints, "desktop-entry", G_VARIANT_TYPE_STRING);
  g_assert_nonnull (entry);

  /* the id the server gave: the mock numbers from 1 */
  first_id = 1;

  /* again for the same sandbox: replaces, does not stack */
  g_clear_pointer (&ups, g_ptr_array_unref);
  ups = some_updates (2, FALSE);
  g_assert_true (gl_notify_updates (n, "sid", "Debian unstable", NULL, ups, &error));
  g_clear_pointer (&calls, g_ptr_array_unref);
  calls = notify_calls ();
  g_assert_cmpuint (calls->len, ==, 2);
  g_variant_get (calls->pdata[1], "(&su&s&s&s^a&s@a{sv}i)", NULL, &replaces, NULL, &summary, NULL,
                 NULL, NULL, NULL);
  g_assert_cmpuint (replaces, ==, first_id);
  g_assert_cmpstr (summary, ==, "2 updates for Debian unstable");

  /* another sandbox: a notification of its own */
  g_assert_true (gl_notify_updates (n, "stable", "Debian stable", NULL, ups, &error));
  g_clear_pointer (&calls, g_ptr_array_unref);
  calls = notify_calls ();
  g_variant_get (calls->pdata[2], "(&su&s&s&s^a&s@a{sv}i)", NULL, &replaces, NULL, NULL, NULL,
                 NULL, NULL, NULL);
  g_assert_cmpuint (replaces, ==, 0);

  /* the server says "Update now" was clicked on the first one */
  g_variant_unref (mock_call ("EmitSignal",
                              g_variant_new ("(sss@av)", "org.freedesktop.Notifications", "ActionInvoked", "us",
                                             g_variant_new_parsed ("[<%u>, <'update-now'>]", first_id))));
  wait_for (NULL, &seen.count, 1);
  g_assert_cmpstr (seen.id, ==, "sid");
  g_assert_cmpint (seen.action, ==, GL_NOTIFY_ACTION_UPDATE_NOW);
  g_variant_unref (mock_call ("EmitSignal",
                              g_variant_new ("(sss@av)", "org.freedesktop.Notifications", "ActionInvoked", "us",
                                             g_variant_new_parsed ("[<%u>, <'later'>]", (guint32) 2))));   /* the mock hands out 1, then 2 */
  wait_for (NULL, &seen.count, 2);
  g_assert_cmpstr (seen.id, ==, "stable");
  g_assert_cmpint (seen.action, ==, GL_NOTIFY_ACTION_LATER);
  g_free (seen.id);
}

static void
test_no_actions (void)
{
  g_autoptr(GlNotify) n = NULL;
  g_autoptr(GPtrArray) ups = some_updates (1, FALSE);
  g_autoptr(GPtrArray) calls = NULL;
  g_autoptr(GError) error = NULL;
  const char *summary, *body;
  g_autofree const char **actions = NULL;

  server_reset ("['body']");
  n = gl_notify_new ("Glimpse", NULL, NULL);
  g_assert_true (gl_notify_updates (n, "sid", "Debian unstable", NULL, ups, &error));
  calls = notify_calls ();
  g_assert_cmpuint (calls->len, ==, 1);
  g_variant_get (calls->pdata[0], "(&su&s&s&s^a&s@a{sv}i)", NULL, NULL, NULL, &summary, &body,
                 &actions, NULL, NULL);
  g_assert_cmpstr (summary, ==, "1 update for Debian unstable");
  g_assert_cmpuint (g_strv_length ((char **) actions), ==, 0);
  g_assert_nonnull (strstr (body, "sudo glimpse update sid"));
}

/* A body is plain text holding names and messages from sandboxes: a
 * server that reads markup in bodies gets "<b>&" escaped (shown, not
 * bold), one that does not gets it as it is; a summary is never markup */
static void
test_body_markup (void)
{
  g_autoptr(GPtrArray) ups = some_updates (1, FALSE);
  g_autoptr(GlNotify) n = gl_notify_new ("Glimpse", NULL, NULL);
  g_autoptr(GPtrArray) calls = NULL;
  g_autoptr(GError) error = NULL;
  const char *summary, *body;

  g_free (((GlUpdate *) ups->pdata[0])->name);
  ((GlUpdate *) ups->pdata[0])->name = g_strdup ("pkg<b>&");
  server_reset ("['actions', 'body', 'body-markup']");
  g_assert_true (gl_notify_message (n, "sid", "dialog-error", "Updating <b>& failed",
                                    "the sandbox <b>& said: E: 'x' & \"y\"", &error));
  g_assert_no_error (error);
  g_assert_true (gl_notify_updates (n, "other", "Other <b>&", NULL, ups, &error));
  g_assert_no_error (error);
  calls = notify_calls ();
  g_assert_cmpuint (calls->len, ==, 2);
  call_texts (calls, 0, &summary, &body);
  g_assert_cmpstr (summary, ==, "Updating <b>& failed");
  g_assert_cmpstr (body, ==, "the sandbox &lt;b&gt;&amp; said: E: &apos;x&apos; &amp; &quot;y&quot;");
  call_texts (calls, 1, &summary, &body);
  g_assert_cmpstr (summary, ==, "1 update for Other <b>&");
  g_assert_nonnull (strstr (body, "pkg&lt;b&gt;&amp; 1.0-1 → 1.0-2"));
  g_assert_null (strstr (body, "<b>"));

  server_reset ("['actions', 'body']");
  g_assert_true (gl_notify_message (n, "sid", "dialog-error", "Updating <b>& failed", "the sandbox <b>& said",
                                    &error));
  g_assert_no_error (error);
  g_clear_pointer (&calls, g_ptr_array_unref);
  calls = notify_calls ();
  g_assert_cmpuint (calls->len, ==, 1);
  call_texts (calls, 0, &summary, &body);
  g_assert_cmpstr (body, ==, "the sandbox <b>& said");
}

/* --- "Update now" through a pkexec recorder --- */

static void
run_done (GObject *source, GAsyncResult *res, gpointer user_data)
{
  GAsyncResult **out = user_data;

  *out = g_object_ref (res);
}

static GlUpdatesRunResult
run_with_status (const char *dir, int status, const char *say, char **message)
{
  g_autofree char *st = g_strdup_printf ("%d", status);
  GAsyncResult *res = NULL;
  g_autoptr(GError) error = NULL;
  GlUpdatesRunResult r;

  g_setenv ("PKEXEC_TEST_STATUS", st, TRUE);
  g_setenv ("PKEXEC_TEST_SAY", say, TRUE);
  gl_updates_run_update ("sid", "/usr/libexec/glimpse-update-helper", NULL, run_done, &res);
  while (res == NULL)
    g_main_context_iteration (NULL, TRUE);
  r = gl_updates_run_update_finish (res, &error);
  *message = error ? g_strdup (error->message) : NULL;
  g_object_unref (res);
  return r;
}

static gboolean
name_owned (const char *name)
{
  gboolean owned = FALSE;
  g_autoptr(GVariant) r = g_dbus_connection_call_sync (bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                                       "org.freedesktop.DBus", "NameHasOwner",
                                                       g_variant_new ("(s)", name),
                                                       G_VARIANT_TYPE ("(b)"), 0, -1, NULL, NULL);

  if (r != NULL)
    g_variant_get (r, "(b)", &owned);
  return owned;
}

static void
wait_name (const char *name, gboolean owned)
{
  gint64 deadline = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;

  while (name_owned (name) != owned && g_get_monotonic_time () < deadline)
    g_usleep (50 * 1000);
  g_assert_true (name_owned (name) == owned);
}

static void
test_update_now (void)
{
  g_autofree char *dir = g_dir_make_tmp ("test-notify-XXXXXX", NULL);
  g_autofree char *pkexec = g_build_filename (dir, "pkexec", NULL);
  g_autofree char *record = g_build_filename (dir, "record", NULL);
  g_autofree char *path = g_strdup_printf ("%s:%s", dir, g_getenv ("PATH"));
  g_autofree char *script = g_strdup_printf ("#!/bin/sh\n"
                                             "printf '%%s\\n' \"$*\" >> '%s'\n"
                                             "[ -n \"$PKEXEC_TEST_SAY\" ] && printf '%%s\\n' \"$PKEXEC_TEST_SAY\" >&2\n"
                                             "exit $PKEXEC_TEST_STATUS\n", record);
  g_autofree char *recorded = NULL;
  g_autoptr(GSubprocess) polkit = NULL;
  g_autoptr(GError) error = NULL;
  char *msg = NULL;

  g_assert_true (g_file_set_contents (pkexec, script, -1, NULL));
  g_assert_cmpint (g_chmod (pkexec, 0755), ==, 0);
  g_setenv ("PATH", path, TRUE);

  /* the test bus is the system bus too (main() set it); no polkit
   * authority on it yet: pkexec is not run, the message says what to run */
  g_assert_cmpint (run_with_status (dir, 0, "", &msg), ==, GL_UPDATES_RUN_NO_POLKIT);
  g_assert_nonnull (strstr (msg, "run “sudo glimpse update sid” in a terminal"));
  g_clear_pointer (&msg, g_free);
  g_assert_false (g_file_test (record, G_FILE_TEST_EXISTS));

  /* polkit's authority: python-dbusmock's polkitd */
  polkit = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE, &error, "/usr/bin/python3", "-m", "dbusmock",
                             "--system", "--template", "polkitd", NULL);
  g_assert_no_error (error);
  wait_name ("org.freedesktop.PolicyKit1", TRUE);

  g_assert_cmpint (run_with_status (dir, 0, "", &msg), ==, GL_UPDATES_RUN_OK);
  g_assert_null (msg);
  g_assert_cmpint (run_with_status (dir, 126, "", &msg), ==, GL_UPDATES_RUN_DISMISSED);
  g_assert_null (msg);
  g_assert_cmpint (run_with_status (dir, 127, "", &msg), ==, GL_UPDATES_RUN_DISMISSED);
  g_assert_null (msg);
  g_assert_cmpint (run_with_status (dir, 1, "E: dpkg was interrupted", &msg), ==, GL_UPDATES_RUN_FAILED);
  g_assert_nonnull (strstr (msg, "dpkg was interrupted"));
  g_free (msg);

  /* exactly the helper and the id, nothing else, every time */
  g_assert_true (g_file_get_contents (record, &recorded, NULL, NULL));
  g_assert_cmpstr (recorded, ==,
                   "/usr/libexec/glimpse-update-helper sid\n/usr/libexec/glimpse-update-helper sid\n"
                   "/usr/libexec/glimpse-update-helper sid\n/usr/libexec/glimpse-update-helper sid\n");
  g_subprocess_force_exit (polkit);
  g_subprocess_wait (polkit, NULL, NULL);
  g_unlink (pkexec);
  g_unlink (record);
  g_rmdir (dir);
}

static void
skip_no_dbusmock (void)
{
  gl_test_skip ("python3-dbusmock is not installed (apt-get install python3-dbusmock): "
               "no notification server to test against");
}

int
main (int argc, char **argv)
{
  g_autoptr(GTestDBus) dbus = NULL;
  g_autoptr(GSubprocess) mock = NULL;
  g_autoptr(GError) error = NULL;
  const char *python = "/usr/bin/python3";
  int status;
  const char *probe[] = { python, "-c", "import dbusmock", NULL };
  gint64 deadline;
  gboolean owned = FALSE;

  g_test_init (&argc, &argv, NULL);

  if (!g_spawn_sync (NULL, (char **) probe, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, NULL, NULL,
                     &status, NULL) || !g_spawn_check_wait_status (status, NULL))
    {
      g_test_add_func ("/notify/update-now", skip_no_dbusmock);
      g_test_add_func ("/notify/actions-and-replace", skip_no_dbusmock);
      g_test_add_func ("/notify/no-actions", skip_no_dbusmock);
      g_test_add_func ("/notify/body-markup", skip_no_dbusmock);
      return g_test_run ();
    }
  g_test_add_func ("/notify/update-now", test_update_now);
  g_test_add_func ("/notify/actions-and-replace", test_actions_and_replace);
  g_test_add_func ("/notify/no-actions", test_no_actions);
  g_test_add_func ("/notify/body-markup", test_body_markup);

  dbus = g_test_dbus_new (G_TEST_DBUS_NONE);
  g_test_dbus_up (dbus);
  /* where "Update now" looks for polkit's authority */
  g_setenv ("DBUS_SYSTEM_BUS_ADDRESS", g_test_dbus_get_bus_address (dbus), TRUE);
  bus = g_bus_get_sync (G_BUS_TYPE_SESSION, NULL, &error);
  g_assert_no_error (error);
  mock = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE, &error, python, "-m", "dbusmock", "--session",
                           "--template", "notification_daemon", NULL);
  g_assert_no_error (error);
  deadline = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;
  while (!owned && g_get_monotonic_time () < deadline)
    {
      g_autoptr(GVariant) r = g_dbus_connection_call_sync (bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                                           "org.freedesktop.DBus", "NameHasOwner",
                                                           g_variant_new ("(s)", "org.freedesktop.Notifications"),
                                                           G_VARIANT_TYPE ("(b)"), 0, -1, NULL, NULL);
      if (r != NULL)
        g_variant_get (r, "(b)", &owned);
      if (!owned)
        g_usleep (50 * 1000);
    }
  g_assert_true (owned);

  status = g_test_run ();

  g_subprocess_force_exit (mock);
  g_subprocess_wait (mock, NULL, NULL);
  g_object_unref (bus);
  gl_notification_shutdown ();   /* drops the connection to the bus */
  g_test_dbus_down (dbus);
  return status;
}
