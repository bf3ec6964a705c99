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

/* The saved text of the shared manifest at @path (*@shared) and of a
 * sandbox's own at @sandbox_path (*@own), each with its header */
static void
read_saved (const char *path, const char *sandbox_path, char **shared, char **own)
{
  g_assert_true (g_file_get_contents (path, shared, NULL, NULL));
  g_assert_true (g_str_has_prefix (*shared, "glimpse-export-manifest 2\n"));
  g_assert_true (g_file_get_contents (sandbox_path, own, NULL, NULL));
  g_assert_true (g_str_has_prefix (*own, "glimpse-export-sandbox-manifest 1\n"));
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

      gl_manifest_add_file (m, file, "", sum);
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
    char *nl = strchr (text + strlen ("glimpse-export-manifest 2\n"), '\n');

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
    g_assert_true (g_file_set_contents (path, "glimpse-export-manifest 9\n", -1, NULL));
    none = gl_manifest_load (path, &error);
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
    g_clear_error (&error);
  }
}


static char *
sum_of (const char *text)
{
  return g_compute_checksum_for_string (G_CHECKSUM_SHA256, text, -1);
}

static void
add_record (GlManifest *m, const char *path, const char *sandbox, const char *text)
{
  g_autofree char *sum = sum_of (text);

  gl_manifest_add_file (m, path, sandbox, sum);
}

static guint
n_of (GlManifest *m, const char *sandbox)
{
  GHashTableIter iter;
  gpointer value;
  guint n = 0;

  g_hash_table_iter_init (&iter, m->files);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    if (strcmp (((GlManifestFile *) value)->sandbox, sandbox) == 0)
      n++;
  return n;
}

/* Each sandbox's files in a manifest of its own (any id one file name of
 * its own); one loaded is saved without reading or writing the others' */
static void
test_per_sandbox (void)
{
  g_autofree char *path = manifest_path ();
  const char *ids[] = { "deb", "b\tc", ".hidden", "../x", "a%41", "fed.42", NULL };
  g_autoptr(GError) error = NULL;
  g_autofree char *deb = gl_manifest_sandbox_path (path, "deb");
  g_autofree char *other = gl_manifest_sandbox_path (path, "fed.42");
  g_autofree char *text = NULL, *own_text = NULL;
  struct stat before, after;

  {
    g_autoptr(GlManifest) m = gl_manifest_load (path, &error);

    g_assert_no_error (error);
    for (gsize i = 0; ids[i] != NULL; i++)
      for (guint j = 0; j < 3; j++)
        {
          g_autofree char *file = g_strdup_printf ("/apps/glimpse-%s+%u.desktop", ids[i], j);
          add_record (m, file, ids[i], file);
        }
    add_record (m, "/menus/glimpse.menu", "", "menu");
    g_assert_true (gl_manifest_save (m, &error));
    g_assert_no_error (error);
  }
  read_saved (path, deb, &text, &own_text);
  g_assert_nonnull (strstr (text, "/menus/glimpse.menu"));
  g_assert_null (strstr (text, "/apps/"));
  g_assert_nonnull (strstr (own_text, "/apps/glimpse-deb+2.desktop"));
  g_assert_null (strstr (own_text, "fed.42"));
  for (gsize i = 0; ids[i] != NULL; i++)
    {
      g_autofree char *own = gl_manifest_sandbox_path (path, ids[i]);
      g_autofree char *dir = g_path_get_dirname (own);
      g_autofree char *expected_dir = g_strconcat (path, ".d", NULL);

      g_assert_cmpstr (dir, ==, expected_dir);
      g_assert_true (g_file_test (own, G_FILE_TEST_IS_REGULAR));
    }

  /* the shared part only, then one sandbox */
  g_assert_cmpint (stat (other, &before), ==, 0);
  {
    g_autoptr(GlManifest) m = gl_manifest_load_shared (path, &error);

    g_assert_no_error (error);
    g_assert_cmpuint (g_hash_table_size (m->files), ==, 1);
    g_assert_true (gl_manifest_load_sandbox (m, "deb", &error));
    g_assert_no_error (error);
    g_assert_true (gl_manifest_sandbox_loaded (m, "deb"));
    g_assert_false (gl_manifest_sandbox_loaded (m, "fed.42"));
    g_assert_cmpuint (n_of (m, "deb"), ==, 3);
    g_assert_cmpuint (g_hash_table_size (m->files), ==, 4);
    g_hash_table_remove (m->files, "/apps/glimpse-deb+0.desktop");
    g_assert_true (gl_manifest_save (m, &error));
    g_assert_no_error (error);
  }
  g_assert_cmpint (stat (other, &after), ==, 0);
  g_assert_cmpuint (before.st_ino, ==, after.st_ino);
  {
    g_autoptr(GlManifest) m = gl_manifest_load (path, &error);

    g_assert_no_error (error);
    for (gsize i = 0; ids[i] != NULL; i++)
      g_assert_cmpuint (n_of (m, ids[i]), ==, strcmp (ids[i], "deb") == 0 ? 2 : 3);
    g_assert_cmpstr (((GlManifestFile *) g_hash_table_lookup (m->files, "/apps/glimpse-b\tc+1.desktop"))->sandbox,
                     ==, "b\tc");

    /* a sandbox with no record left: no manifest of it */
    g_hash_table_remove (m->files, "/apps/glimpse-deb+1.desktop");
    g_hash_table_remove (m->files, "/apps/glimpse-deb+2.desktop");
    g_assert_true (gl_manifest_save (m, &error));
    g_assert_false (g_file_test (deb, G_FILE_TEST_EXISTS));
  }
  /* a record added to a sandbox not loaded: saved with its others */
  {
    g_autoptr(GlManifest) m = gl_manifest_load_shared (path, &error);
    g_autoptr(GlManifest) back = NULL;

    add_record (m, "/apps/glimpse-fed.42+new.desktop", "fed.42", "new");
    g_assert_true (gl_manifest_save (m, &error));
    g_assert_no_error (error);
    back = gl_manifest_load (path, &error);
    g_assert_cmpuint (n_of (back, "fed.42"), ==, 4);
  }
}

/* A manifest of version 1 (every sandbox's files in one file) moves into
 * the sandboxes' own on the next save, losing nothing; a save killed after
 * writing them and before replacing the old file leaves both, read as one */
static void
test_migration (void)
{
  g_autofree char *path = manifest_path ();
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *deb = gl_manifest_sandbox_path (path, "deb");
  g_autofree char *s1 = sum_of ("one");
  g_autofree char *s2 = sum_of ("two");
  g_autofree char *s3 = sum_of ("three");
  g_autofree char *v1 = g_strdup_printf ("glimpse-export-manifest 1\n"
                                         "sandbox\tdeb\tDebian\tglimpse-deb+a.desktop\n"
                                         "sandbox\tfed\tFedora\tglimpse-fed+b.desktop\n"
                                         "dir\t/apps\n"
                                         "file\t/apps/glimpse-deb+a.desktop\tdeb\t%s\n"
                                         "cache\t/apps/glimpse-deb+a.desktop\t1:2:3.000000004:5.000000006:100644\t\n"
                                         "file\t/apps/glimpse-fed+b.desktop\tfed\t%s\n"
                                         "file\t/menus/glimpse.menu\t\t%s\n", s1, s2, s3);
  g_autofree char *text = NULL, *own_text = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_no_errno (g_mkdir_with_parents (dir, 0755));
  g_assert_true (g_file_set_contents (path, v1, -1, NULL));
  {
    /* even a load for one sandbox's sync holds every record of the old file */
    g_autoptr(GlManifest) m = gl_manifest_load_shared (path, &error);

    g_assert_no_error (error);
    g_assert_cmpuint (g_hash_table_size (m->files), ==, 3);
    g_assert_true (gl_manifest_sandbox_loaded (m, "deb"));
    g_assert_true (gl_manifest_sandbox_loaded (m, "fed"));
    g_assert_true (gl_manifest_save (m, &error));
    g_assert_no_error (error);
  }
  read_saved (path, deb, &text, &own_text);
  g_assert_null (strstr (text, "glimpse-deb+a.desktop\tdeb"));
  g_assert_nonnull (strstr (text, "sandbox\tdeb\tDebian\tglimpse-deb+a.desktop\n"));
  g_assert_nonnull (strstr (text, "dir\t/apps\n"));
  g_assert_nonnull (strstr (own_text, s1));
  g_assert_nonnull (strstr (own_text, "cache\t/apps/glimpse-deb+a.desktop\t1:2:3.000000004:5.000000006:100644\t\n"));
  g_assert_null (strstr (own_text, "fed"));
  {
    g_autoptr(GlManifest) m = gl_manifest_load (path, &error);
    GlManifestFile *a;

    g_assert_no_error (error);
    g_assert_cmpuint (g_hash_table_size (m->files), ==, 3);
    a = g_hash_table_lookup (m->files, "/apps/glimpse-deb+a.desktop");
    g_assert_cmpstr (a->sandbox, ==, "deb");
    g_assert_cmpstr (a->stat, ==, "1:2:3.000000004:5.000000006:100644");
    g_assert_cmpstr (((GlManifestFile *) g_hash_table_lookup (m->files, "/menus/glimpse.menu"))->sandbox, ==, "");
  }

  /* killed between the sandboxes' files (one with a newer record) and the
   * shared one: the old file is still whole, and both are read */
  {
    g_autoptr(GlManifest) m = NULL;
    g_autoptr(GlManifest) after = NULL;
    g_autofree char *newer = g_strdup_printf ("glimpse-export-sandbox-manifest 1\n"
                                              "file\t/apps/glimpse-deb+a.desktop\tdeb\t%s\n"
                                              "file\t/apps/glimpse-deb+c.desktop\tdeb\t%s\n", s2, s3);

    g_assert_true (g_file_set_contents (path, v1, -1, NULL));
    g_assert_true (g_file_set_contents (deb, newer, -1, NULL));
    m = gl_manifest_load_shared (path, &error);
    g_assert_no_error (error);
    g_assert_true (gl_manifest_file_matches (g_hash_table_lookup (m->files, "/apps/glimpse-deb+a.desktop"), s1));
    g_assert_true (gl_manifest_file_matches (g_hash_table_lookup (m->files, "/apps/glimpse-deb+a.desktop"), s2));
    g_assert_nonnull (g_hash_table_lookup (m->files, "/apps/glimpse-deb+c.desktop"));
    g_assert_nonnull (g_hash_table_lookup (m->files, "/apps/glimpse-fed+b.desktop"));
    g_assert_true (gl_manifest_save (m, &error));
    after = gl_manifest_load (path, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (g_hash_table_size (after->files), ==, 4);
  }
}

/* A sandbox's manifest that is not one Glimpse wrote: a clear error that
 * names it and what to do, nothing of it or the others changed; the
 * others' records still load */
static void
test_corrupt_sandbox (void)
{
  g_autofree char *path = manifest_path ();
  g_autofree char *deb = gl_manifest_sandbox_path (path, "deb");
  g_autofree char *text = NULL;
  g_autoptr(GError) error = NULL;

  {
    g_autoptr(GlManifest) m = gl_manifest_load (path, &error);

    g_assert_no_error (error);
    add_record (m, "/apps/glimpse-deb+a.desktop", "deb", "a");
    add_record (m, "/apps/glimpse-fed+b.desktop", "fed", "b");
    g_assert_true (gl_manifest_save (m, &error));
  }
  g_assert_true (g_file_set_contents (deb, "garbage\nfile\t/home/u/precious\tdeb\tx\n", -1, NULL));
  {
    g_autoptr(GlManifest) m = gl_manifest_load_shared (path, &error);
    g_autoptr(GlManifest) all = NULL;

    g_assert_no_error (error);
    g_assert_false (gl_manifest_load_sandbox (m, "deb", &error));
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
    g_assert_nonnull (strstr (error->message, deb));
    g_assert_nonnull (strstr (error->message, "sandbox deb"));
    g_assert_nonnull (strstr (error->message, "move it away"));
    g_clear_error (&error);
    g_assert_false (gl_manifest_sandbox_loaded (m, "deb"));
    g_assert_cmpuint (g_hash_table_size (m->files), ==, 0);
    g_assert_true (gl_manifest_load_sandbox (m, "fed", &error));
    g_assert_cmpuint (g_hash_table_size (m->files), ==, 1);

    all = gl_manifest_load (path, &error);
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
    g_assert_null (all);
    g_clear_error (&error);
  }
  g_assert_true (g_file_get_contents (deb, &text, NULL, NULL));
  g_assert_cmpstr (text, ==, "garbage\nfile\t/home/u/precious\tdeb\tx\n");
  g_clear_pointer (&text, g_free);

  /* an empty one is not one either */
  g_assert_true (g_file_set_contents (deb, "", 0, NULL));
  {
    g_autoptr(GlManifest) m = gl_manifest_load_shared (path, &error);

    g_assert_false (gl_manifest_load_sandbox (m, "deb", &error));
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
  }
}

/* A journal a killed run left names files of a sandbox: its records are
 * loaded with the shared part, so the next save keeps them all */
static void
test_journal_sandbox (void)
{
  g_autofree char *path = manifest_path ();
  g_autofree char *s1 = sum_of ("one");
  g_autofree char *s2 = sum_of ("two");
  g_autoptr(GError) error = NULL;

  {
    g_autoptr(GlManifest) m = gl_manifest_load (path, &error);
    g_autoptr(GHashTable) paths = g_hash_table_new (g_str_hash, g_str_equal);

    add_record (m, "/apps/glimpse-deb+a.desktop", "deb", "one");
    add_record (m, "/apps/glimpse-deb+b.desktop", "deb", "b");
    g_assert_true (gl_manifest_save (m, &error));
    add_record (m, "/apps/glimpse-deb+a.desktop", "deb", "two");
    g_hash_table_add (paths, "/apps/glimpse-deb+a.desktop");
    g_assert_true (gl_manifest_save_intent (m, paths, &error));
    g_assert_no_error (error);
  }
  {
    g_autoptr(GlManifest) m = gl_manifest_load_shared (path, &error);
    GlManifestFile *a;

    g_assert_no_error (error);
    g_assert_true (m->had_intent);
    g_assert_true (gl_manifest_sandbox_loaded (m, "deb"));
    g_assert_cmpuint (n_of (m, "deb"), ==, 2);
    a = g_hash_table_lookup (m->files, "/apps/glimpse-deb+a.desktop");
    g_assert_true (gl_manifest_file_matches (a, s1));
    g_assert_true (gl_manifest_file_matches (a, s2));
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_test_add_func ("/manifest/sandbox-round-trip", test_sandbox_round_trip);
  g_test_add_func ("/manifest/sandbox-old-text", test_sandbox_old_text);
  g_test_add_func ("/manifest/streamed", test_streamed);
  g_test_add_func ("/manifest/per-sandbox", test_per_sandbox);
  g_test_add_func ("/manifest/migration", test_migration);
  g_test_add_func ("/manifest/corrupt-sandbox", test_corrupt_sandbox);
  g_test_add_func ("/manifest/journal-sandbox", test_journal_sandbox);
  return g_test_run ();
}
