/* The test HTTP server (tests/http-server.py) from a C test.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* Starts http-server.py on 127.0.0.1 serving @root; *@base gets
 * "http://127.0.0.1:PORT".  The server exits when the returned process's
 * stdin closes (g_subprocess_force_exit it in the teardown). */
GSubprocess *gl_test_http_start (const char *root, char **base);

G_END_DECLS
