/* The test HTTP server (tests/http-server.py) from a C test.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* Starts http-server.py on 127.0.0.1 serving @root; *@base gets
 * "http://127.0.0.1:PORT".  The server exits when the returned process's
 * stdin closes; gl_test_http_stop () it in the teardown. */
GSubprocess *gl_test_http_start (const char *root, char **base);

/* Ends the server *@server started, waits for it and clears *@server. */
void gl_test_http_stop (GSubprocess **server);

G_END_DECLS
