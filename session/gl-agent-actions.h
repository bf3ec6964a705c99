/* gl-agent-actions.h: what the control entries of a sandbox's submenu do
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "gl-agent.h"

G_BEGIN_DECLS

#define GL_AGENT_ACTIONS_ERROR (gl_agent_actions_error_quark ())
GQuark gl_agent_actions_error_quark (void);

typedef enum {
  GL_AGENT_ACTIONS_ERROR_UNKNOWN_ACTION,
  GL_AGENT_ACTIONS_ERROR_UNKNOWN_SANDBOX,
  GL_AGENT_ACTIONS_ERROR_NO_TERMINAL,
  GL_AGENT_ACTIONS_ERROR_FAILED,
} GlAgentActionsError;

typedef struct _GlAgentActions GlAgentActions;

GlAgentActions *gl_agent_actions_new (GlAgent *agent);
void            gl_agent_actions_free (GlAgentActions *actions);

/* Runs @action for sandbox @id, without waiting for what it starts:
 *   "terminal"      the user's terminal emulator with their shell inside
 *                   (glimpse run ID);
 *   "update"        glimpse update ID through pkexec (a terminal with sudo
 *                   where there is no pkexec);
 *   "show-changes"  a notification with the counts of the user's changes and
 *                   a button opening them (glimpse changes ID) in a terminal;
 *   "purge"         asks first (a notification with Purge / Cancel), then
 *                   glimpse purge ID --yes, and says how it went;
 *   "hide"          takes the sandbox out of the menu (as glimpse unexport).
 * Errors: an unknown action or sandbox, no terminal emulator. */
gboolean        gl_agent_actions_run (GlAgentActions *actions, const char *id, const char *action,
                                      GError **error);

/* The terminal command line running @argv, or NULL: $GLIMPSE_TERMINAL
 * (a program taking the command after "-e"), xdg-terminal-exec, GNOME's
 * default terminal setting, x-terminal-emulator, then common terminals. */
GStrv           gl_agent_terminal_argv (const char * const *argv);

G_END_DECLS
