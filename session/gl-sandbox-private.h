/* gl-sandbox-private.h: test hooks of the sandbox store
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "gl-sandbox.h"

G_BEGIN_DECLS

/* How long gl_sandbox_remove waits for the removal of what package
 * operations replaced before it gives up (60 s unless set). */
void gl_sandbox_set_trash_wait_for_tests (guint ms);

G_END_DECLS
