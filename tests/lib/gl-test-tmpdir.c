/* A scratch directory for one test case (gl-test-tmpdir.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "gl-test-tmpdir.h"

#include "gl-fsutil.h"

#include <unistd.h>

GlTestTmpdir *
gl_test_tmpdir_new (const char *tmpl)
{
  g_autoptr(GError) error = NULL;
  char *dir = g_dir_make_tmp (tmpl, &error);

  g_assert_no_error (error);
  return dir;
}

void
gl_test_tmpdir_free (GlTestTmpdir *dir)
{
  g_autoptr(GError) error = NULL;

  if (dir == NULL)
    return;
  g_assert_true (gl_rm_rf (dir, NULL, &error));
  g_assert_no_error (error);
  g_free (dir);
}

void
gl_test_write_file (const char *root, const char *rel, const char *text)
{
  g_autofree char *p = g_build_filename (root, rel, NULL);
  g_autofree char *dir = g_path_get_dirname (p);

  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  g_assert_true (g_file_set_contents (p, text, -1, NULL));
}

void
gl_test_silent_stdin (void)
{
  int p[2];

  /* (a subprocess already has it, inherited) */
  if (g_test_subprocess ())
    return;
  g_assert_cmpint (pipe (p), ==, 0);
  g_assert_cmpint (dup2 (p[0], 0), ==, 0);
}
