/* gl-agent.h: the session agent's state — every sandbox's menu kept live
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

#include "gl-export-store.h"

G_BEGIN_DECLS

typedef enum {
  GL_AGENT_EXPORT_PENDING,   /* a change waits for the next export */
  GL_AGENT_EXPORT_EXPORTED,  /* its applications are in the menu */
  GL_AGENT_EXPORT_HIDDEN,    /* the user took it out (glimpse unexport) */
  GL_AGENT_EXPORT_BROKEN,    /* sandbox.conf cannot be read; exports left as they were */
} GlAgentExportState;

const char *gl_agent_export_state_to_string (GlAgentExportState state);

/* What the agent knows of one sandbox. */
typedef struct {
  char *id;
  char *name;
  GlAgentExportState export_state;
  guint n_apps;        /* exported applications */
  char *error;         /* the last problem exporting it, or NULL */
  gint64 synced;       /* g_get_real_time () of the last export, 0: never */
  /* State other parts of the agent publish for the sandbox (the update
   * checker: "update-state", …): key -> GVariant, shown over D-Bus as is.
   * Set it with gl_agent_set_sandbox_property (). */
  GHashTable *properties;
} GlAgentSandbox;

#define GL_TYPE_AGENT (gl_agent_get_type ())
G_DECLARE_FINAL_TYPE (GlAgent, gl_agent, GL, AGENT, GObject)

/* @ctx: where and how to export (taken).  Nothing happens before
 * gl_agent_start (). */
GlAgent        *gl_agent_new (const char *store_dir, const char *host_root, GlExportContext *ctx);
/* Watches the store, then exports every sandbox once (removing the exports
 * of sandboxes that went while no agent ran, and repairing what a crash
 * left half-done).  Fails only when the store cannot be watched. */
gboolean        gl_agent_start (GlAgent *agent, GError **error);

/* Exports these sandboxes again now; NULL or empty: every sandbox, as at
 * start.  Per-sandbox problems end up in their state. */
gboolean        gl_agent_refresh (GlAgent *agent, const char * const *ids, GError **error);

/* Every sandbox known, sorted by id (borrowed; valid until the next
 * main-loop iteration). */
GPtrArray      *gl_agent_list (GlAgent *agent);
GlAgentSandbox *gl_agent_lookup (GlAgent *agent, const char *id);
/* Publishes @value (floating refs are sunk; NULL removes it) as property
 * @key of sandbox @id and emits "changed". */
void            gl_agent_set_sandbox_property (GlAgent *agent, const char *id,
                                               const char *key, GVariant *value);

const char     *gl_agent_get_store_dir (GlAgent *agent);
GlExportContext *gl_agent_get_export_context (GlAgent *agent);

/* Test and debugging aids */
guint           gl_agent_get_n_watches (GlAgent *agent);
/* The debounce: an export starts @quiet_ms after the last event, and no later
 * than @max_ms after the first of a burst. */
void            gl_agent_set_debounce (GlAgent *agent, guint quiet_ms, guint max_ms);

/* Signal "changed" (GStrv ids): sandboxes whose state changed. */

G_END_DECLS
