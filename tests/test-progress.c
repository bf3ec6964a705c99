/* test-progress.c: the command line's download progress bar
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "glimpse-progress.h"

static void
test_progress_plain (void)
{
  if (!g_test_subprocess ())
    {
      g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
      g_test_trap_assert_passed ();
      g_test_trap_assert_stderr ("blob: 25% (250 bytes of 1000 bytes)\n"
                                 "blob: 50% (500 bytes of 1000 bytes)\n"
                                 "blob: 100% (1000 bytes of 1000 bytes)\n");
      return;
    }

  {
    g_autoptr(GlCliProgress) p = gl_cli_progress_new ("blob", FALSE);

    gl_cli_progress_update (0, 1000, p);
    gl_cli_progress_update (50, 1000, p);
    gl_cli_progress_update (250, 1000, p);
    gl_cli_progress_update (260, 1000, p);
    gl_cli_progress_update (500, 1000, p);
    gl_cli_progress_update (1000, 1000, p);
    gl_cli_progress_update (1000, 1000, p);
  }
}

static void
test_progress_terminal (void)
{
  if (!g_test_subprocess ())
    {
      g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
      g_test_trap_assert_passed ();
      g_test_trap_assert_stderr ("\rblob [#*-]  50% 500 bytes of 1000 bytes\033[K*"
                                 "\rblob [#*]* 100% 1000 bytes of 1000 bytes*\033[K\n");
      return;
    }

  {
    g_autoptr(GlCliProgress) p = gl_cli_progress_new ("blob", TRUE);

    gl_cli_progress_update (500, 1000, p);
    /* rate-limited: not drawn */
    gl_cli_progress_update (600, 1000, p);
    gl_cli_progress_update (1000, 1000, p);
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/progress/plain", test_progress_plain);
  g_test_add_func ("/progress/terminal", test_progress_terminal);
  return g_test_run ();
}
