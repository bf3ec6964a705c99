/* test-manifest.c: the export manifest's text reads back as it was written
 * (xdg/gl-manifest.c)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <glib/gstdio.h>

#include "gl-manifest.h"

static char *
manifest_path (void)
{
  return g_build_filename (g_get_user_data_dir (), "glimpse", "export-manifest", NULL);
}

/* A sandbox's line: its display name is a field of its own (a ';', a tab,
 * quotes and a backslash in it are kept), and an exported entry whose name
 * holds a ';' (a sandbox's desktop file may be called so) stays one entry,
 * not two, one of which could name a host application */
static void
test_sandbox_round_trip (void)
{
  g_autofree char *path = manifest_path ();
  const char *name = "Debian; “sid”\twith a \\ and \"quotes\";";
  const char *apps[] = { "glimpse-deb+a;b.desktop", "glimpse-deb+c.desktop", "glimpse-deb+d\\;e.desktop", NULL };
  g_autoptr(GError) error = NULL;
  GlManifestSandbox *s;

  {
    g_autoptr(GlManifest) m = gl_manifest_load (path, &error);
    g_assert_no_error (error);
    gl_manifest_set_sandbox (m, "deb", name, apps);
    g_assert_true (gl_manifest_save (m, &error));
    g_assert_no_error (error);
  }
  {
    g_autoptr(GlManifest) m = gl_manifest_load (path, &error);
    g_assert_no_error (error);
    s = g_hash_table_lookup (m->sandboxes, "deb");
    g_assert_nonnull (s);
    g_assert_cmpstr (s->name, ==, name);
    g_assert_cmpstrv (s->apps, apps);
  }
}

/* A manifest an older glimpse wrote (the entries joined with ';', nothing
 * escaped in them) reads as it always did */
static void
test_sandbox_old_text (void)
{
  g_autofree char *path = manifest_path ();
  g_autofree char *dir = g_path_get_dirname (path);
  const char *apps[] = { "glimpse-deb+a.desktop", "glimpse-deb+c.desktop", NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(GlManifest) m = NULL;
  GlManifestSandbox *s;

  g_assert_no_errno (g_mkdir_with_parents (dir, 0755));
  g_assert_true (g_file_set_contents (path, "glimpse-export-manifest 1\n"
                                      "sandbox\tdeb\tDebian; sid\tglimpse-deb+a.desktop;glimpse-deb+c.desktop;\n",
                                      -1, &error));
  m = gl_manifest_load (path, &error);
  g_assert_no_error (error);
  s = g_hash_table_lookup (m->sandboxes, "deb");
  g_assert_nonnull (s);
  g_assert_cmpstr (s->name, ==, "Debian; sid");
  g_assert_cmpstrv (s->apps, apps);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_test_add_func ("/manifest/sandbox-round-trip", test_sandbox_round_trip);
  g_test_add_func ("/manifest/sandbox-old-text", test_sandbox_old_text);
  return g_test_run ();
}
