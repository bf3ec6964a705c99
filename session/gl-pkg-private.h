/* gl-pkg-private.h: test hooks of the package operations
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "gl-pkg.h"

G_BEGIN_DECLS

/* Kills glimpse (SIGKILL) when $GLIMPSE_TEST_CRASH_AT is @point: the crash
 * tests stop a commit at each of its steps (tests/pkg/test-rebase-crash.sh).
 * Points: "commit-tree" (the new generation is complete), "commit-base" (a
 * rebase's bare base is in place), "commit-record" (the generation names
 * its base), "commit-current" (`current` names it), "rebase-committed" (a
 * rebase before it marks and reclaims the old base). */
void gl_pkg_crash_point (const char *point);

G_END_DECLS
