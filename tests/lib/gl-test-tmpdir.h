/* A scratch directory for one test case, removed when it goes out of scope:
 *
 *   g_autoptr(GlTestTmpdir) tmp = gl_test_tmpdir_new ("gl-pkg-XXXXXX");
 *   g_autofree char *base = g_build_filename (tmp, "base", NULL);
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The directory's name, a plain string (g_build_filename takes it). */
typedef char GlTestTmpdir;

/* A new directory in the test's TMPDIR (one of its own: with-tmpdir.sh),
 * named from @tmpl as g_dir_make_tmp() names it; asserts that it was made. */
GlTestTmpdir *gl_test_tmpdir_new (const char *tmpl);

/* Removes @dir and everything below it (gl_rm_rf: no link followed, no
 * mount crossed), asserts that it succeeded, and frees the name. */
void gl_test_tmpdir_free (GlTestTmpdir *dir);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (GlTestTmpdir, gl_test_tmpdir_free)

/* Writes @text to @rel under @root, making the directories on the way;
 * asserts that it worked. */
void gl_test_write_file (const char *root, const char *rel, const char *text);

/* Makes stdin a pipe whose writer stays open and silent, as a terminal
 * nobody types into (a g_test_trap_subprocess with
 * G_TEST_SUBPROCESS_INHERIT_STDIN gets it); call after g_test_init. */
void gl_test_silent_stdin (void);

G_END_DECLS
