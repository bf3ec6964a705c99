/* gl-notification.h: one desktop notification, spoken directly over
 * D-Bus (org.freedesktop.Notifications, Desktop Notifications
 * Specification 1.2)
 *
 * The agent used libnotify, which drags gdk-pixbuf and the PNG and JPEG
 * libraries into a process that never draws an image.  This is the part of
 * it the agent needs: Notify (replacing the notification it showed before),
 * CloseNotification, GetCapabilities, and the ActionInvoked and
 * NotificationClosed signals.  A notification is kept referenced by its
 * owner until "closed" (its action callbacks live as long as it does).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define GL_TYPE_NOTIFICATION (gl_notification_get_type ())
G_DECLARE_FINAL_TYPE (GlNotification, gl_notification, GL, NOTIFICATION, GObject)

typedef enum {
  GL_NOTIFICATION_URGENCY_LOW,
  GL_NOTIFICATION_URGENCY_NORMAL,
  GL_NOTIFICATION_URGENCY_CRITICAL,
} GlNotificationUrgency;

typedef void (*GlNotificationActionFunc) (GlNotification *notification,
                                          const char     *action,
                                          gpointer        user_data);

/* The name the server shows (the "app_name" of Notify); "Glimpse" unless set. */
void            gl_notification_set_app_name (const char *app_name);

/* TRUE if the notification server advertises @capability ("actions"). */
gboolean        gl_notification_server_has   (const char *capability);

/* Drops the connection and the signal subscriptions (tests, at exit). */
void            gl_notification_shutdown     (void);

/* @summary and @body are plain text: the body is escaped for a server
 * that reads markup in it ("body-markup"). */
GlNotification *gl_notification_new          (const char *summary,
                                              const char *body,
                                              const char *icon);
void            gl_notification_update       (GlNotification *n,
                                              const char     *summary,
                                              const char     *body,
                                              const char     *icon);
/* @value may be floating. */
void            gl_notification_set_hint     (GlNotification *n,
                                              const char     *key,
                                              GVariant       *value);
void            gl_notification_set_category (GlNotification *n,
                                              const char     *category);
void            gl_notification_set_urgency  (GlNotification *n,
                                              GlNotificationUrgency urgency);
void            gl_notification_add_action   (GlNotification          *n,
                                              const char              *action,
                                              const char              *label,
                                              GlNotificationActionFunc func,
                                              gpointer                 user_data,
                                              GDestroyNotify           free_func);
void            gl_notification_clear_actions (GlNotification *n);
/* Shows it, or replaces it where it was shown. */
gboolean        gl_notification_show         (GlNotification  *n,
                                              GError         **error);
gboolean        gl_notification_close        (GlNotification  *n,
                                              GError         **error);

G_END_DECLS
