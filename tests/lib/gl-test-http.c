/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "gl-test-http.h"

GSubprocess *
gl_test_http_start (const char *root, char **base)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GDataInputStream) out = NULL;
  g_autofree char *script = g_test_build_filename (G_TEST_DIST, "http-server.py", NULL);
  g_autofree char *line = NULL;
  GSubprocess *server;

  /* stdin is a pipe: the server exits when we go away */
  server = g_subprocess_new (G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE,
                             &error, "python3", script, root, NULL);
  g_assert_no_error (error);
  out = g_data_input_stream_new (g_subprocess_get_stdout_pipe (server));
  line = g_data_input_stream_read_line_utf8 (out, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (line);
  *base = g_strdup_printf ("http://127.0.0.1:%s", line);
  return server;
}

void
gl_test_http_stop (GSubprocess **server)
{
  g_subprocess_force_exit (*server);
  g_subprocess_wait (*server, NULL, NULL);
  g_clear_object (server);
}
