/* The one skip policy of the C tests.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "gl-test-skip.h"

gboolean
gl_test_required (void)
{
  return g_strcmp0 (g_getenv ("CI"), "true") == 0 ||
         g_strcmp0 (g_getenv ("GLIMPSE_TESTS_REQUIRE_ALL"), "1") == 0;
}

void
gl_test_skip (const char *reason)
{
  if (gl_test_required ())
    g_test_fail_printf ("a required case cannot run (CI=true or GLIMPSE_TESTS_REQUIRE_ALL=1): %s",
                        reason);
  else
    g_test_skip (reason);
}

void
gl_test_skip_printf (const char *format, ...)
{
  g_autofree char *reason = NULL;
  va_list ap;

  va_start (ap, format);
  reason = g_strdup_vprintf (format, ap);
  va_end (ap);
  gl_test_skip (reason);
}
