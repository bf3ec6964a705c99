/* gl-notify.c: the agent's desktop notifications (gl-notification.h)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-notify.h"
#include "gl-updates.h"

#include "gl-notification.h"

#define BODY_MAX_PACKAGES 5

struct _GlNotify {
  GHashTable         *shown;      /* sandbox id → GlNotification (a reference) */
  GlNotifyActionFunc  func;
  gpointer            user_data;
};

typedef struct {
  GlNotify *notify;
  char     *sandbox_id;
} ActionData;

static void
action_data_free (gpointer p)
{
  ActionData *d = p;

  g_free (d->sandbox_id);
  g_free (d);
}

GlNotify *
gl_notify_new (const char         *app_name,
               GlNotifyActionFunc  func,
               gpointer            user_data)
{
  GlNotify *n = g_new0 (GlNotify, 1);

  gl_notification_set_app_name (app_name);
  n->shown = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
  n->func = func;
  n->user_data = user_data;
  return n;
}

void
gl_notify_free (GlNotify *n)
{
  GHashTableIter it;
  gpointer value;

  if (n == NULL)
    return;
  /* the notifications stay on screen; only our handlers go */
  g_hash_table_iter_init (&it, n->shown);
  while (g_hash_table_iter_next (&it, NULL, &value))
    {
      gl_notification_clear_actions (value);
      g_signal_handlers_disconnect_by_data (value, n);
    }
  g_hash_table_unref (n->shown);
  g_free (n);
}

static gboolean
server_has_actions (void)
{
  return gl_notification_server_has ("actions");
}

void
gl_notify_format_updates (const char  *sandbox_id,
                          const char  *display_name,
                          GPtrArray   *updates,
                          gboolean     has_actions,
                          char       **summary,
                          char       **body)
{
  g_autoptr(GString) b = g_string_new (NULL);
  guint regular = 0, held = 0, phased = 0, listed = 0;

  for (guint i = 0; i < updates->len; i++)
    {
      const GlUpdate *u = updates->pdata[i];

      if (u->held)
        held++;
      else if (u->phased)
        phased++;
      else
        regular++;
    }
  if (regular > 0)
    *summary = g_strdup_printf (regular == 1 ? "%u update for %s" : "%u updates for %s",
                                regular, display_name);
  else
    *summary = g_strdup_printf ("Updates held back in %s", display_name);

  for (guint i = 0; i < updates->len && listed < BODY_MAX_PACKAGES; i++)
    {
      const GlUpdate *u = updates->pdata[i];

      if (u->held || u->phased)
        continue;
      /* a dnf check may not know the installed version */
      g_string_append_printf (b, "%s%s %s%s→ %s", b->len ? "\n" : "", u->name, u->installed,
                              u->installed[0] ? " " : "", u->candidate);
      listed++;
    }
  if (regular > listed)
    g_string_append_printf (b, "\nand %u more", regular - listed);
  if (held > 0 || phased > 0)
    {
      g_string_append (b, b->len ? "\n" : "");
      if (held > 0)
        g_string_append_printf (b, "%u held", held);
      if (phased > 0)
        g_string_append_printf (b, "%s%u phased (arriving gradually)", held ? ", " : "", phased);
    }
  if (!has_actions)
    g_string_append_printf (b, "\nTo update: sudo glimpse update %s", sandbox_id);
  *body = g_string_free (g_steal_pointer (&b), FALSE);
}

static void
on_closed (GlNotification *nn, gpointer user_data)
{
  GlNotify *n = user_data;
  GHashTableIter it;
  gpointer key, value;

  g_hash_table_iter_init (&it, n->shown);
  while (g_hash_table_iter_next (&it, &key, &value))
    if (value == nn)
      {
        g_signal_handlers_disconnect_by_data (nn, n);
        g_hash_table_iter_remove (&it);   /* drops our reference */
        break;
      }
}

static void
on_action (GlNotification *nn, const char *action, gpointer user_data)
{
  ActionData *d = user_data;

  if (d->notify->func == NULL)
    return;
  if (g_strcmp0 (action, "update-now") == 0)
    d->notify->func (d->sandbox_id, GL_NOTIFY_ACTION_UPDATE_NOW, d->notify->user_data);
  else if (g_strcmp0 (action, "later") == 0)
    d->notify->func (d->sandbox_id, GL_NOTIFY_ACTION_LATER, d->notify->user_data);
}

/* The sandbox's notification object, created once and then reused, so
 * that showing it again replaces it on the server. */
static GlNotification *
get_notification (GlNotify *n, const char *sandbox_id, const char *summary, const char *body,
                  const char *icon)
{
  GlNotification *nn = g_hash_table_lookup (n->shown, sandbox_id);

  if (nn == NULL)
    {
      nn = gl_notification_new (summary, body, icon);
      g_signal_connect (nn, "closed", G_CALLBACK (on_closed), n);
      g_hash_table_insert (n->shown, g_strdup (sandbox_id), nn);
    }
  else
    gl_notification_update (nn, summary, body, icon);
  gl_notification_clear_actions (nn);
  gl_notification_set_hint (nn, "desktop-entry", g_variant_new_string ("glimpse"));
  gl_notification_set_category (nn, "x-glimpse.updates");
  return nn;
}

gboolean
gl_notify_updates (GlNotify    *n,
                   const char  *sandbox_id,
                   const char  *display_name,
                   const char  *icon,
                   GPtrArray   *updates,
                   GError     **error)
{
  gboolean actions = server_has_actions ();
  g_autofree char *summary = NULL;
  g_autofree char *body = NULL;
  GlNotification *nn;

  gl_notify_format_updates (sandbox_id, display_name, updates, actions, &summary, &body);
  nn = get_notification (n, sandbox_id, summary, body, icon ? icon : "software-update-available");
  if (actions)
    {
      ActionData *d1 = g_new0 (ActionData, 1);
      ActionData *d2 = g_new0 (ActionData, 1);

      d1->notify = d2->notify = n;
      d1->sandbox_id = g_strdup (sandbox_id);
      d2->sandbox_id = g_strdup (sandbox_id);
      gl_notification_add_action (nn, "update-now", "Update now", on_action, d1, action_data_free);
      gl_notification_add_action (nn, "later", "Later", on_action, d2, action_data_free);
    }
  gl_notification_set_urgency (nn, GL_NOTIFICATION_URGENCY_NORMAL);
  return gl_notification_show (nn, error);
}

gboolean
gl_notify_message (GlNotify    *n,
                   const char  *sandbox_id,
                   const char  *icon,
                   const char  *summary,
                   const char  *body,
                   GError     **error)
{
  GlNotification *nn = get_notification (n, sandbox_id, summary, body, icon);

  return gl_notification_show (nn, error);
}

void
gl_notify_withdraw (GlNotify   *n,
                    const char *sandbox_id)
{
  GlNotification *nn = g_hash_table_lookup (n->shown, sandbox_id);

  if (nn != NULL)
    gl_notification_close (nn, NULL);
}
