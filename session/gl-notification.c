/* gl-notification.c: one desktop notification over D-Bus
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-notification.h"

#define NOTIFY_NAME  "org.freedesktop.Notifications"
#define NOTIFY_PATH  "/org/freedesktop/Notifications"
#define NOTIFY_IFACE "org.freedesktop.Notifications"

typedef struct {
  char                    *action;
  char                    *label;
  GlNotificationActionFunc func;
  gpointer                 user_data;
  GDestroyNotify           free_func;
} Action;

struct _GlNotification {
  GObject     parent;
  guint32     id;         /* the server's, 0 until shown */
  char       *summary;
  char       *body;
  char       *icon;
  GHashTable *hints;      /* key → GVariant */
  GPtrArray  *actions;    /* Action */
};

G_DEFINE_TYPE (GlNotification, gl_notification, G_TYPE_OBJECT)

enum { SIGNAL_CLOSED, N_SIGNALS };
static guint signals[N_SIGNALS];

/* The connection, its subscriptions, and the notifications shown (id →
 * GlNotification, not referenced: a notification leaves on finalize). */
static GDBusConnection *bus;
static guint action_sub, closed_sub, owner_sub;
static GHashTable *shown;
static char *app_name;
/* The server's capabilities, asked once per server: forgotten when the
 * name changes owner (another server started, or the same restarted) */
static GStrv capabilities;

static void
action_free (Action *a)
{
  if (a->free_func != NULL)
    a->free_func (a->user_data);
  g_free (a->action);
  g_free (a->label);
  g_free (a);
}

static void
forget (GlNotification *n)
{
  if (n->id != 0 && shown != NULL && g_hash_table_lookup (shown, GUINT_TO_POINTER (n->id)) == n)
    g_hash_table_remove (shown, GUINT_TO_POINTER (n->id));
  n->id = 0;
}

static void
on_signal (GDBusConnection *connection, const char *sender, const char *path, const char *iface,
           const char *signal, GVariant *params, gpointer data)
{
  g_autoptr(GlNotification) n = NULL;
  guint32 id = 0;
  const char *action = NULL;

  if (g_strcmp0 (signal, "ActionInvoked") == 0 && g_variant_is_of_type (params, G_VARIANT_TYPE ("(us)")))
    g_variant_get (params, "(u&s)", &id, &action);
  else if (g_strcmp0 (signal, "NotificationClosed") == 0 && g_variant_is_of_type (params, G_VARIANT_TYPE ("(uu)")))
    g_variant_get (params, "(uu)", &id, NULL);
  else
    return;
  if (shown == NULL || (n = g_hash_table_lookup (shown, GUINT_TO_POINTER (id))) == NULL)
    return;
  g_object_ref (n);   /* a callback may drop the owner's reference */
  if (action != NULL)
    {
      for (guint i = 0; i < n->actions->len; i++)
        {
          Action *a = n->actions->pdata[i];

          if (g_strcmp0 (a->action, action) == 0)
            {
              a->func (n, action, a->user_data);
              break;
            }
        }
      return;
    }
  forget (n);
  g_signal_emit (n, signals[SIGNAL_CLOSED], 0);
}

static void
on_owner_changed (GDBusConnection *connection, const char *sender, const char *path, const char *iface,
                  const char *signal, GVariant *params, gpointer data)
{
  g_clear_pointer (&capabilities, g_strfreev);
}

static GDBusConnection *
get_bus (GError **error)
{
  if (bus != NULL)
    return bus;
  bus = g_bus_get_sync (G_BUS_TYPE_SESSION, NULL, error);
  if (bus == NULL)
    return NULL;
  shown = g_hash_table_new (NULL, NULL);
  action_sub = g_dbus_connection_signal_subscribe (bus, NOTIFY_NAME, NOTIFY_IFACE, "ActionInvoked", NOTIFY_PATH,
                                                   NULL, G_DBUS_SIGNAL_FLAGS_NONE, on_signal, NULL, NULL);
  closed_sub = g_dbus_connection_signal_subscribe (bus, NOTIFY_NAME, NOTIFY_IFACE, "NotificationClosed",
                                                   NOTIFY_PATH, NULL, G_DBUS_SIGNAL_FLAGS_NONE, on_signal, NULL,
                                                   NULL);
  owner_sub = g_dbus_connection_signal_subscribe (bus, "org.freedesktop.DBus", "org.freedesktop.DBus",
                                                  "NameOwnerChanged", "/org/freedesktop/DBus", NOTIFY_NAME,
                                                  G_DBUS_SIGNAL_FLAGS_NONE, on_owner_changed, NULL, NULL);
  return bus;
}

void
gl_notification_set_app_name (const char *name)
{
  g_free (app_name);
  app_name = g_strdup (name);
}

void
gl_notification_shutdown (void)
{
  if (bus == NULL)
    return;
  g_dbus_connection_signal_unsubscribe (bus, action_sub);
  g_dbus_connection_signal_unsubscribe (bus, closed_sub);
  g_dbus_connection_signal_unsubscribe (bus, owner_sub);
  g_clear_pointer (&capabilities, g_strfreev);
  g_clear_pointer (&shown, g_hash_table_unref);
  g_clear_object (&bus);
}

gboolean
gl_notification_server_has (const char *capability)
{
  if (get_bus (NULL) == NULL)
    return FALSE;
  /* a blocking round trip per notification only the first time */
  if (capabilities == NULL)
    {
      g_autoptr(GVariant) r = g_dbus_connection_call_sync (bus, NOTIFY_NAME, NOTIFY_PATH, NOTIFY_IFACE,
                                                           "GetCapabilities", NULL, G_VARIANT_TYPE ("(as)"),
                                                           G_DBUS_CALL_FLAGS_NONE, -1, NULL, NULL);

      if (r == NULL)
        return FALSE;   /* no server (yet): asked again next time */
      g_variant_get (r, "(^as)", &capabilities);
    }
  return g_strv_contains ((const char * const *) capabilities, capability);
}

static void
gl_notification_finalize (GObject *object)
{
  GlNotification *n = GL_NOTIFICATION (object);

  forget (n);
  g_free (n->summary);
  g_free (n->body);
  g_free (n->icon);
  g_hash_table_unref (n->hints);
  g_ptr_array_unref (n->actions);
  G_OBJECT_CLASS (gl_notification_parent_class)->finalize (object);
}

static void
gl_notification_class_init (GlNotificationClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = gl_notification_finalize;
  signals[SIGNAL_CLOSED] = g_signal_new ("closed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                         NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void
gl_notification_init (GlNotification *n)
{
  n->hints = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_variant_unref);
  n->actions = g_ptr_array_new_with_free_func ((GDestroyNotify) action_free);
}

GlNotification *
gl_notification_new (const char *summary, const char *body, const char *icon)
{
  GlNotification *n = g_object_new (GL_TYPE_NOTIFICATION, NULL);

  gl_notification_update (n, summary, body, icon);
  return n;
}

void
gl_notification_update (GlNotification *n, const char *summary, const char *body, const char *icon)
{
  g_free (n->summary);
  g_free (n->body);
  g_free (n->icon);
  n->summary = g_strdup (summary);
  n->body = g_strdup (body);
  n->icon = g_strdup (icon);
}

void
gl_notification_set_hint (GlNotification *n, const char *key, GVariant *value)
{
  g_hash_table_insert (n->hints, g_strdup (key), g_variant_ref_sink (value));
}

void
gl_notification_set_category (GlNotification *n, const char *category)
{
  gl_notification_set_hint (n, "category", g_variant_new_string (category));
}

void
gl_notification_set_urgency (GlNotification *n, GlNotificationUrgency urgency)
{
  gl_notification_set_hint (n, "urgency", g_variant_new_byte ((guchar) urgency));
}

void
gl_notification_add_action (GlNotification          *n,
                            const char              *action,
                            const char              *label,
                            GlNotificationActionFunc func,
                            gpointer                 user_data,
                            GDestroyNotify           free_func)
{
  Action *a = g_new0 (Action, 1);

  a->action = g_strdup (action);
  a->label = g_strdup (label);
  a->func = func;
  a->user_data = user_data;
  a->free_func = free_func;
  g_ptr_array_add (n->actions, a);
}

void
gl_notification_clear_actions (GlNotification *n)
{
  g_ptr_array_set_size (n->actions, 0);
}

gboolean
gl_notification_show (GlNotification *n, GError **error)
{
  g_autoptr(GVariant) r = NULL;
  GVariantBuilder actions, hints;
  GHashTableIter it;
  gpointer key, value;
  guint32 id = 0;
  const char *body = n->body != NULL ? n->body : "";
  g_autofree char *escaped = NULL;

  if (get_bus (error) == NULL)
    return FALSE;
  /* The body is plain text, and holds what sandboxes and users named
   * (packages, sandboxes, their messages); a server that reads markup in
   * bodies gets it escaped, so a "<" or "&" in it is shown as it is. */
  if (*body != '\0' && gl_notification_server_has ("body-markup"))
    body = escaped = g_markup_escape_text (body, -1);
  g_variant_builder_init (&actions, G_VARIANT_TYPE_STRING_ARRAY);
  for (guint i = 0; i < n->actions->len; i++)
    {
      Action *a = n->actions->pdata[i];

      g_variant_builder_add (&actions, "s", a->action);
      g_variant_builder_add (&actions, "s", a->label);
    }
  g_variant_builder_init (&hints, G_VARIANT_TYPE_VARDICT);
  g_hash_table_iter_init (&it, n->hints);
  while (g_hash_table_iter_next (&it, &key, &value))
    g_variant_builder_add (&hints, "{sv}", key, value);
  r = g_dbus_connection_call_sync (bus, NOTIFY_NAME, NOTIFY_PATH, NOTIFY_IFACE, "Notify",
                                   g_variant_new ("(susssasa{sv}i)", app_name != NULL ? app_name : "Glimpse",
                                                  n->id, n->icon != NULL ? n->icon : "",
                                                  n->summary != NULL ? n->summary : "",
                                                  body, &actions, &hints, -1),
                                   G_VARIANT_TYPE ("(u)"), G_DBUS_CALL_FLAGS_NONE, -1, NULL, error);
  if (r == NULL)
    return FALSE;
  g_variant_get (r, "(u)", &id);
  if (id != n->id)
    {
      forget (n);
      n->id = id;
    }
  if (id != 0)
    g_hash_table_insert (shown, GUINT_TO_POINTER (id), n);
  return TRUE;
}

gboolean
gl_notification_close (GlNotification *n, GError **error)
{
  g_autoptr(GVariant) r = NULL;

  if (n->id == 0)
    return TRUE;
  if (get_bus (error) == NULL)
    return FALSE;
  r = g_dbus_connection_call_sync (bus, NOTIFY_NAME, NOTIFY_PATH, NOTIFY_IFACE, "CloseNotification",
                                   g_variant_new ("(u)", n->id), NULL, G_DBUS_CALL_FLAGS_NONE, -1, NULL, error);
  return r != NULL;
}
