/* The one skip policy of the C tests (tests/lib/skip.sh for the scripts).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Whether every case is required here: CI=true or GLIMPSE_TESTS_REQUIRE_ALL=1. */
gboolean gl_test_required (void);

/* Instead of g_test_skip(): the current test case cannot run here, for
 * @reason (say what to install or how to run).  Where every case is
 * required this is a failure (g_test_fail) instead of a skip.  The caller
 * returns afterwards, as after g_test_skip(). */
void gl_test_skip (const char *reason);

G_GNUC_PRINTF (1, 2)
void gl_test_skip_printf (const char *format, ...);

G_END_DECLS
