/* gl-apt-release-private.h: test hooks
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

/* Shorter network timeouts, so fault tests finish quickly. */
void gl_apt_http_set_timeouts_for_test (long connect_s, long stall_s);
