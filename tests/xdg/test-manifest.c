/* test-manifest.c: the export manifest's text reads back as it was written
 * (xdg/gl-manifest.c)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include <sys/stat.h>

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

/* The manifest is read and written a chunk at a time: a text of many
 * chunks, with lines across their ends and names that need escaping,
 * round-trips; an unchanged one is not written again; a NUL ends it. */
static void
test_streamed (void)
{
  g_autofree char *path = manifest_path ();
  g_autoptr(GlManifest) m = gl_manifest_load (path, NULL);
  g_autoptr(GlManifest) back = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  gsize len = 0;
  struct stat before, after;
  const char *apps[] = { "glimpse-a-x.desktop", "glimpse-a-y.desktop", NULL };

  g_assert_nonnull (m);
  for (guint i = 0; i < 3000; i++)
    {
      g_autofree char *file = g_strdup_printf ("/home/u/.local/share/applications/%s%u\t\n\\.desktop",
                                               i % 7 == 0 ? "esc " : "glimpse-a-", i);
      g_autofree char *sum = g_compute_checksum_for_data (G_CHECKSUM_SHA256, (const guchar *) file, strlen (file));
      GlManifestFile *mf;

      gl_manifest_add_file (m, file, i % 2 ? "a" : "b\tc", sum);
      mf = g_hash_table_lookup (m->files, file);
      mf->stat = g_strdup_printf ("%u:1:2.000000003:4.000000005:100644", i);
      mf->source = i % 3 ? g_strdup_printf ("/src/%u\t%u:1:2.0:4.0:100644", i, i) : NULL;
    }
  gl_manifest_set_sandbox (m, "a", "Sandbox “a”\twith a tab", apps);
  g_hash_table_add (m->dirs, g_strdup ("/home/u/.local/share/desktop-directories"));
  g_hash_table_insert (m->merged, g_strdup ("/home/u/.config/Thunar/uca.xml"), g_strdup ("1"));
  g_hash_table_insert (m->defaults, g_strdup ("text/plain"), g_strdup ("org.gnome.TextEditor.desktop"));
  g_assert_true (gl_manifest_save (m, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (path, &text, &len, NULL));
  g_assert_cmpuint (len, >, 4 * 64 * 1024);

  back = gl_manifest_load (path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (g_hash_table_size (back->files), ==, 3000);
  {
    GHashTableIter iter;
    gpointer value;

    g_hash_table_iter_init (&iter, m->files);
    while (g_hash_table_iter_next (&iter, NULL, &value))
      {
        GlManifestFile *mf = value;
        GlManifestFile *bf = g_hash_table_lookup (back->files, mf->path);

        g_assert_nonnull (bf);
        g_assert_cmpstr (bf->sandbox, ==, mf->sandbox);
        g_assert_true (g_strv_equal ((const char * const *) bf->checksums, (const char * const *) mf->checksums));
        g_assert_cmpstr (bf->stat, ==, mf->stat);
        g_assert_cmpstr (bf->source, ==, mf->source);
      }
  }
  g_assert_cmpstr (((GlManifestSandbox *) g_hash_table_lookup (back->sandboxes, "a"))->name, ==,
                   "Sandbox “a”\twith a tab");
  g_assert_true (g_hash_table_contains (back->dirs, "/home/u/.local/share/desktop-directories"));
  g_assert_cmpstr (g_hash_table_lookup (back->merged, "/home/u/.config/Thunar/uca.xml"), ==, "1");
  g_assert_cmpstr (g_hash_table_lookup (back->defaults, "text/plain"), ==, "org.gnome.TextEditor.desktop");

  /* the same text: not written again (the same inode) */
  g_assert_cmpint (stat (path, &before), ==, 0);
  g_assert_true (gl_manifest_save (back, &error));
  g_assert_cmpint (stat (path, &after), ==, 0);
  g_assert_cmpuint (before.st_ino, ==, after.st_ino);

  /* one line changed at the end, or the file longer than the text: written */
  {
    GlManifestFile *last = g_hash_table_lookup (back->files, "/home/u/.local/share/applications/glimpse-a-999\t\n\\.desktop");
    g_autoptr(GlManifest) again = NULL;

    g_assert_nonnull (last);
    g_free (last->stat);
    last->stat = g_strdup ("changed");
    g_assert_true (gl_manifest_save (back, &error));
    g_assert_cmpint (stat (path, &after), ==, 0);
    g_assert_cmpuint (before.st_ino, !=, after.st_ino);
    again = gl_manifest_load (path, &error);
    g_assert_no_error (error);
    last = g_hash_table_lookup (again->files, "/home/u/.local/share/applications/glimpse-a-999\t\n\\.desktop");
    g_assert_cmpstr (last->stat, ==, "changed");

    /* longer on disk than the text */
    g_assert_true (g_file_set_contents (path, text, len, NULL));
    g_free (last->stat);
    last->stat = g_strdup ("changed again");
    g_hash_table_remove_all (again->files);
    g_assert_true (gl_manifest_save (again, &error));
    g_assert_no_error (error);
    g_clear_pointer (&again, gl_manifest_free);
    again = gl_manifest_load (path, &error);
    g_assert_cmpuint (g_hash_table_size (again->files), ==, 0);
  }

  /* a NUL ends the text */
  {
    g_autoptr(GlManifest) cut = NULL;
    char *nl = strchr (text + strlen ("glimpse-export-manifest 1\n"), '\n');

    nl[1] = '\0';
    g_assert_true (g_file_set_contents (path, text, len, NULL));
    cut = gl_manifest_load (path, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (g_hash_table_size (cut->sandboxes), ==, 1);
    g_assert_cmpuint (g_hash_table_size (cut->files), ==, 0);
  }

  /* an empty file, or another file's text, is not a manifest */
  {
    g_autoptr(GlManifest) none = NULL;

    g_assert_true (g_file_set_contents (path, "", 0, NULL));
    none = gl_manifest_load (path, &error);
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
    g_assert_null (none);
    g_clear_error (&error);
    g_assert_true (g_file_set_contents (path, "glimpse-export-manifest 2\n", -1, NULL));
    none = gl_manifest_load (path, &error);
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
    g_clear_error (&error);
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_test_add_func ("/manifest/sandbox-round-trip", test_sandbox_round_trip);
  g_test_add_func ("/manifest/sandbox-old-text", test_sandbox_old_text);
  g_test_add_func ("/manifest/streamed", test_streamed);
  return g_test_run ();
}
