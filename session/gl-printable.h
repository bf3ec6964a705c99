/* gl-printable.h: text of a sandbox's, made safe to show on a terminal
 *
 * Its own module, depending on GLib only: the session agent shows such text
 * (process names in gl-sandbox.c) and must not link the package operations
 * and, through them, the HTTP client and its TLS stack.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* TEXT of the sandbox's, safe to show on a terminal: its control
 * characters (but tabs) and bytes that are not UTF-8 as "?" */
char *gl_printable (const char *text);

G_END_DECLS
