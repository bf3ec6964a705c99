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

/* Whether an enabled source of an apt sandbox's view, the generation @tree
 * (NULL: none yet) over the base @base (the host's / when @host, read as
 * it is; else a tree read without following links), has neither InRelease
 * nor Release in apt's default lists directory (as the same layers show
 * it); TRUE too when the sources cannot be read.  No run of apt. */
gboolean gl_pkg_apt_index_missing (const char *tree, const char *base, gboolean host);

/* The architectures an apt sandbox's apt would get from its dpkg, as
 * "native foreign…" (the view as gl_pkg_apt_index_missing's, both layers
 * read without following links): the Architecture of the installed
 * package dpkg in var/lib/dpkg/status, then the others of var/lib/dpkg/arch.
 * NULL when apt must ask dpkg itself: a file of etc/apt/apt.conf.d that
 * may name architectures or move dpkg or its database, a dpkg arch-native
 * file, anything unreadable or malformed.  No run of apt or dpkg. */
char *gl_pkg_apt_architectures (const char *tree, const char *base);

G_END_DECLS
