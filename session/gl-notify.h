/* gl-notify.h: the agent's desktop notifications (over D-Bus, gl-notification.h) — pending
 * updates per sandbox, and the outcome of an update
 *
 * One notification per sandbox, replaced rather than stacked; "Update
 * now" / "Later" actions when the notification server advertises
 * "actions", otherwise the body names the command to run.  Each
 * GlNotification is kept referenced until the server closes it, so
 * its action callbacks stay alive.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef enum {
  GL_NOTIFY_ACTION_UPDATE_NOW,
  GL_NOTIFY_ACTION_LATER,
} GlNotifyAction;

typedef void (*GlNotifyActionFunc) (const char     *sandbox_id,
                                    GlNotifyAction  action,
                                    gpointer        user_data);

typedef struct _GlNotify GlNotify;

/* app_name: as the notification server shows it ("Glimpse"). */
GlNotify *gl_notify_new   (const char          *app_name,
                           GlNotifyActionFunc   func,
                           gpointer             user_data);
void      gl_notify_free  (GlNotify            *notify);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GlNotify, gl_notify_free)

/* Shows, or replaces, the sandbox's notification about updates: a
 * GPtrArray of GlUpdate.  display_name names the sandbox ("Debian
 * unstable"); icon (nullable) is an icon name or path. */
gboolean  gl_notify_updates (GlNotify    *notify,
                             const char  *sandbox_id,
                             const char  *display_name,
                             const char  *icon,
                             GPtrArray   *updates,
                             GError     **error);

/* Shows, or replaces, the sandbox's notification with a plain message
 * (the outcome of an update, an error the user must act on). */
gboolean  gl_notify_message (GlNotify    *notify,
                             const char  *sandbox_id,
                             const char  *icon,
                             const char  *summary,
                             const char  *body,
                             GError     **error);

/* Closes the sandbox's notification, if one is shown. */
void      gl_notify_withdraw (GlNotify   *notify,
                              const char *sandbox_id);

/* The texts of an updates notification (exposed for tests):
 * has_actions FALSE puts the command into the body. */
void      gl_notify_format_updates (const char  *sandbox_id,
                                    const char  *display_name,
                                    GPtrArray   *updates,
                                    gboolean     has_actions,
                                    char       **summary,
                                    char       **body);

G_END_DECLS
