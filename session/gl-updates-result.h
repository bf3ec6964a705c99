/* gl-updates-result.h: one sandbox's update check, as
 * glimpse-updates-check hands it to the agent
 *
 * The check (libcurl, gpgv, the indexes; or the family's own tool) runs
 * in that short-lived helper, so the long-lived agent maps no HTTP or TLS
 * library.  The helper writes one serialized GVariant "(uusa(sssssbb))" to
 * its standard output: the outcome, the sandbox's system generation the
 * check saw, a message (the error; empty when none), the updates.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef enum {
  GL_UPDATES_RESULT_OK,           /* updates holds the pending updates (maybe none) */
  GL_UPDATES_RESULT_UNSUPPORTED,  /* no check for this sandbox's family */
  GL_UPDATES_RESULT_NO_TOOL,      /* the family's tool is not in the sandbox: the user must act */
  GL_UPDATES_RESULT_FAILED,       /* the check failed: message says how */
} GlUpdatesOutcome;

typedef struct {
  GlUpdatesOutcome  outcome;
  guint             generation;
  char             *message;    /* never NULL; "" when there is nothing to say */
  GPtrArray        *updates;    /* GlUpdate (gl-updates.h); never NULL */
} GlUpdatesResult;

void gl_updates_result_free (GlUpdatesResult *result);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GlUpdatesResult, gl_updates_result_free)

/* The result as the helper writes it.  updates and message may be NULL. */
GBytes          *gl_updates_result_serialize (GlUpdatesOutcome   outcome,
                                              guint              generation,
                                              const char        *message,
                                              GPtrArray         *updates);

/* The helper's output read back; NULL with an error when it is not one
 * (a helper that died half-way, or another program's output). */
GlUpdatesResult *gl_updates_result_parse     (GBytes            *bytes,
                                              GError           **error);

/* Where the check is, beside the result: the helper writes a line on its
 * standard error as it starts fetching an address ("glimpse-updates-check:
 * fetching URL") and one once that has ended ("… fetched URL"), so that
 * the agent can say which address a check it had to stop was stuck on.
 * Only the apt check, whose requests are its own, writes them; a family's
 * tool fetches on its own, unseen. */
char *gl_updates_result_format_fetch (const char *url,
                                      gboolean    done);

/* The address the helper's standard error ERR shows a fetch started from
 * and not ended (the last one), or NULL when none.  Its other lines are
 * appended to OTHER (when not NULL), for the caller to pass on. */
char *gl_updates_result_pending_fetch (GBytes  *err,
                                       GString *other);

G_END_DECLS
