/* test-export-integration: a whole export of a fake sandbox, checked by the
 * real tools: desktop-file-validate, a real menu implementation (pyxdg),
 * GIO's own launching code, update-desktop-database; re-export and removal.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gio/gdesktopappinfo.h>

#include "gl-exec.h"
#include "gl-export-store.h"
#include "gl-manifest.h"
#include "xdg-test-util.h"
#include "gl-test-skip.h"

typedef struct {
  char *root;
  GlExportContext *ctx;
  GPtrArray *sources;
  char *record;
} Fixture;

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  const char *recorder = g_getenv ("GL_TEST_RECORDER");

  f->root = tu_make_tree ();
  f->ctx = gl_export_store_context_new ();
  g_free (f->ctx->launcher);
  f->ctx->launcher = g_strdup (recorder != NULL ? recorder : "/bin/true");
  g_free (f->ctx->glimpse);
  f->ctx->glimpse = g_strdup ("/usr/bin/glimpse");
  f->ctx->app_folders = FALSE;
  /* Caja without caja-actions unless a test says otherwise */
  f->ctx->caja_scripts = TRUE;
  f->sources = g_ptr_array_new_with_free_func ((GDestroyNotify) gl_export_source_free);
  g_ptr_array_add (f->sources, tu_source (f->root, "deb", "Debian “sid”"));
  f->record = g_build_filename (f->root, "record", NULL);
  g_setenv ("GL_TEST_RECORD", f->record, TRUE);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  g_ptr_array_unref (f->sources);
  gl_export_context_free (f->ctx);
  tu_tree_free (f->root);
  g_free (f->record);
}

static GlExportStats
sync_ok (Fixture *f, gboolean complete)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func ((GDestroyNotify) g_error_free);
  GlExportStats stats = { 0, };

  g_assert_true (gl_export_sync (f->ctx, f->sources, complete, &stats, warnings, &error));
  g_assert_no_error (error);
  for (guint i = 0; i < warnings->len; i++)
    g_test_message ("warning: %s", ((GError *) warnings->pdata[i])->message);
  return stats;
}

static char *
data_path (Fixture *f, const char *rel)
{
  return g_build_filename (f->ctx->data_home, rel, NULL);
}

static void
test_exported_files (Fixture *f, gconstpointer data)
{
  GlExportStats stats = sync_ok (f, TRUE);
  static const char * const files[] = {
    "applications/glimpse-deb+org.example.Editor.desktop",
    "applications/glimpse-deb+org.example.Viewer.desktop",
    "applications/glimpse-deb+kde4-oldapp.desktop",
    "applications/mimeinfo.cache",
    "desktop-directories/glimpse.directory",
    "desktop-directories/glimpse-deb.directory",
    "icons/hicolor/48x48/apps/glimpse-deb+org.example.Editor.png",
    "icons/hicolor/256x256/apps/glimpse-deb+org.example.Editor.png",
    "icons/hicolor/scalable/apps/glimpse-deb+org.example.Editor.svg",
    "icons/hicolor/64x64/apps/glimpse-deb+viewer.png",
    "icons/hicolor/48x48/apps/glimpse-deb+breezy.png",
    "nautilus/scripts/Glimpse/Open in Debian “sid”",
    "nemo/scripts/Glimpse/Open in Debian “sid”",
    "kio/servicemenus/glimpse-deb.desktop",
    "file-manager/actions/glimpse-deb.desktop",
    "file-manager/actions/glimpse.desktop",
    "glimpse/export-manifest",
  };
  static const char * const not_files[] = {
    "applications/glimpse-deb+nodisplay.desktop",
    "applications/glimpse-deb+link.desktop",
    "applications/glimpse-deb+gone.desktop",
    "nemo/actions/glimpse-deb.nemo_action",
  };
  g_autofree char *caja = g_build_filename (f->ctx->config_home, "caja/scripts/Glimpse/Open in Debian “sid”", NULL);
  g_autofree char *menu = g_build_filename (f->ctx->config_home, "menus/applications-merged/glimpse.menu", NULL);
  g_autofree char *uca = g_build_filename (f->ctx->config_home, "Thunar/uca.xml", NULL);
  struct stat st;

  g_assert_cmpuint (stats.skipped, ==, 0);
  for (gsize i = 0; i < G_N_ELEMENTS (files); i++)
    {
      g_autofree char *p = data_path (f, files[i]);
      g_test_message ("expect %s", files[i]);
      g_assert_true (g_file_test (p, G_FILE_TEST_IS_REGULAR));
    }
  for (gsize i = 0; i < G_N_ELEMENTS (not_files); i++)
    {
      g_autofree char *p = data_path (f, not_files[i]);
      g_assert_false (g_file_test (p, G_FILE_TEST_EXISTS));
    }
  g_assert_true (g_file_test (caja, G_FILE_TEST_IS_EXECUTABLE));
  g_assert_true (g_file_test (menu, G_FILE_TEST_IS_REGULAR));
  g_assert_true (g_file_test (uca, G_FILE_TEST_IS_REGULAR));
  {
    g_autofree char *kio = data_path (f, "kio/servicemenus/glimpse-deb.desktop");
    g_assert_cmpint (stat (kio, &st), ==, 0);
    g_assert_cmpint (st.st_mode & 0777, ==, 0755);
  }

  /* update-desktop-database ran: Open With finds the sandbox's editor */
  {
    g_autofree char *cache = data_path (f, "applications/mimeinfo.cache");
    g_autofree char *text = NULL;
    g_assert_true (g_file_get_contents (cache, &text, NULL, NULL));
    g_assert_nonnull (strstr (text, "text/plain=glimpse-deb+org.example.Editor.desktop;"));
  }
}

static void
test_validate (Fixture *f, gconstpointer data)
{
  g_autofree char *tool = g_find_program_in_path ("desktop-file-validate");
  static const char * const dirs[] = { "applications", "desktop-directories", NULL };

  if (tool == NULL)
    {
      gl_test_skip ("desktop-file-validate is not installed (apt install desktop-file-utils)");
      return;
    }
  sync_ok (f, TRUE);
  for (gsize d = 0; dirs[d] != NULL; d++)
    {
      g_autofree char *dir = data_path (f, dirs[d]);
      g_autoptr(GDir) gd = g_dir_open (dir, 0, NULL);
      const char *name;
      guint n = 0;

      g_assert_nonnull (gd);
      while ((name = g_dir_read_name (gd)) != NULL)
        {
          g_autofree char *path = g_build_filename (dir, name, NULL);
          g_autofree char *out = NULL;
          const char *argv[] = { tool, path, NULL };
          int status;

          if (!g_str_has_suffix (name, ".desktop") && !g_str_has_suffix (name, ".directory"))
            continue;
          tu_run (argv, &out, &status);
          g_test_message ("%s: %s", name, out);
          g_assert_cmpint (status, ==, 0);
          g_assert_null (strstr (out, "error:"));
          g_assert_null (strstr (out, "warning:"));
          n++;
        }
      g_assert_cmpuint (n, >, 0);
    }
}

static const char host_menu[] =
  "<!DOCTYPE Menu PUBLIC \"-//freedesktop//DTD Menu 1.0//EN\"\n"
  " \"http://www.freedesktop.org/standards/menu-spec/menu-1.0.dtd\">\n"
  "<Menu>\n"
  "  <Name>Applications</Name>\n"
  "  <DefaultAppDirs/>\n"
  "  <DefaultDirectoryDirs/>\n"
  "  <DefaultMergeDirs/>\n"
  "  <Menu><Name>Accessories</Name><Include><Category>Utility</Category></Include></Menu>\n"
  "  <Menu><Name>Graphics</Name><Include><Category>Graphics</Category></Include></Menu>\n"
  "  <Menu><Name>Other</Name><OnlyUnallocated/><Include><All/></Include></Menu>\n"
  "</Menu>\n";

static void
test_menu_tree (Fixture *f, gconstpointer data)
{
  const char *python = g_getenv ("GL_TEST_PYTHON");
  g_autofree char *script = g_test_build_filename (G_TEST_DIST, "menu-tree.py", NULL);
  const char *config_dir = g_get_system_config_dirs ()[0];
  g_autofree char *out = NULL;
  g_auto(GStrv) lines = NULL;
  guint glimpse_entries = 0;
  int status;

  if (python == NULL)
    {
      gl_test_skip ("no python3 with pyxdg (apt install python3-xdg)");
      return;
    }
  tu_write (config_dir, "menus/applications.menu", host_menu);
  /* the user's own entry, which must stay where it is */
  tu_write (f->ctx->data_home, "applications/mine.desktop",
            "[Desktop Entry]\nType=Application\nName=Mine\nExec=mine\nCategories=Utility;\n");
  sync_ok (f, TRUE);

  {
    /* named explicitly: distributions patch pyxdg's default menu name */
    g_autofree char *menu_file = g_build_filename (config_dir, "menus", "applications.menu", NULL);
    const char *argv[] = { python, script, menu_file, NULL };
    tu_run (argv, &out, &status);
  }
  g_test_message ("menu:\n%s", out);
  g_assert_cmpint (status, ==, 0);
  lines = g_strsplit (out, "\n", -1);
  for (gsize i = 0; lines[i] != NULL; i++)
    {
      if (strstr (lines[i], "glimpse-") == NULL)
        continue;
      /* the sandbox's apps, under Glimpse › its name, nowhere else */
      g_assert_true (g_str_has_prefix (lines[i], "Glimpse/Debian “sid”\tglimpse-deb+"));
      glimpse_entries++;
    }
  g_assert_cmpuint (glimpse_entries, ==, 3);
  g_assert_nonnull (strstr (out, "Glimpse/Debian “sid”\tglimpse-deb+org.example.Editor.desktop\n"));
  g_assert_nonnull (strstr (out, "Glimpse/Debian “sid”\tglimpse-deb+org.example.Viewer.desktop\n"));
  g_assert_nonnull (strstr (out, "Glimpse/Debian “sid”\tglimpse-deb+kde4-oldapp.desktop\n"));
  g_assert_nonnull (strstr (out, "Accessories\tmine.desktop\n"));
}

static const char * const awkward[] = {
  "with space.txt", "dq\"uote.txt", "sq'uote.txt", "dollar$HOME.txt", "back\\slash.txt",
  "tick`id`.txt", "naïve ünïcødé 日本.txt", "percent%f%%.txt", "semi;amp&pipe|.txt",
  "new\nline.txt", "-starts-with-dash.txt", "*?[glob].txt",
};

static void
test_gio_launch (Fixture *f, gconstpointer data)
{
  g_autofree char *editor = data_path (f, "applications/glimpse-deb+org.example.Editor.desktop");
  g_autofree char *viewer = data_path (f, "applications/glimpse-deb+org.example.Viewer.desktop");
  g_autofree char *files_dir = g_build_filename (f->root, "files", NULL);
  g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) runs = NULL;
  GList *uris = NULL;

  if (g_getenv ("GL_TEST_RECORDER") == NULL)
    {
      gl_test_skip ("GL_TEST_RECORDER not set: run through meson test");
      return;
    }
  sync_ok (f, TRUE);
  g_assert_cmpint (g_mkdir_with_parents (files_dir, 0755), ==, 0);
  for (gsize i = 0; i < G_N_ELEMENTS (awkward); i++)
    {
      char *path = g_build_filename (files_dir, awkward[i], NULL);
      tu_write (files_dir, awkward[i], "x");
      g_ptr_array_add (paths, path);
      uris = g_list_append (uris, g_filename_to_uri (path, NULL, NULL));
    }

  /* %F: one run with every file */
  tu_launch_and_wait (editor, uris);
  runs = tu_read_records (f->record);
  g_assert_cmpuint (runs->len, ==, 1);
  {
    g_autoptr(GStrvBuilder) b = g_strv_builder_new ();
    g_auto(GStrv) want = NULL;

    g_strv_builder_add_many (b, "deb", "--", "env", "GREETING=hello world", "editor",
                             "--title=a \"b\" $c \\d", NULL);
    for (guint i = 0; i < paths->len; i++)
      g_strv_builder_add (b, paths->pdata[i]);
    want = g_strv_builder_end (b);
    g_assert_cmpstrv (runs->pdata[0], want);
  }
  g_clear_pointer (&runs, g_ptr_array_unref);
  unlink (f->record);

  /* %f: GIO runs once per file */
  tu_launch_and_wait (viewer, uris);
  runs = tu_read_records (f->record);
  g_assert_cmpuint (runs->len, ==, paths->len);
  for (guint i = 0; i < runs->len; i++)
    {
      const char *want[] = { "deb", "--", "viewer", paths->pdata[i], NULL };
      g_auto(GStrv) got = g_strdupv (runs->pdata[i]);
      gboolean found = FALSE;

      /* the runs are concurrent: any order */
      for (guint j = 0; j < runs->len && !found; j++)
        found = g_strv_equal ((const char * const *) runs->pdata[j], want);
      g_assert_true (found);
      (void) got;
    }
  g_clear_pointer (&runs, g_ptr_array_unref);
  unlink (f->record);

  /* a desktop action, with %U */
  {
    g_autoptr(GDesktopAppInfo) info = g_desktop_app_info_new_from_filename (editor);
    const char *want[] = { "deb", "--", "editor", "--new-window", NULL };

    g_desktop_app_info_launch_action (info, "new-window", NULL);
    /* no pid to wait on here */
    runs = tu_wait_records (f->record);
    g_assert_cmpuint (runs->len, ==, 1);
    g_assert_cmpstrv (runs->pdata[0], want);
  }
  g_list_free_full (uris, g_free);
}

static void
test_reexport (Fixture *f, gconstpointer data)
{
  GlExportStats first = sync_ok (f, TRUE);
  GlExportStats again;
  GlExportSource *s = f->sources->pdata[0];
  g_autofree char *viewer = data_path (f, "applications/glimpse-deb+org.example.Viewer.desktop");
  g_autofree char *viewer_icon = data_path (f, "icons/hicolor/64x64/apps/glimpse-deb+viewer.png");
  g_autofree char *editor = data_path (f, "applications/glimpse-deb+org.example.Editor.desktop");
  struct stat st1, st2;

  g_assert_cmpuint (first.written, >, 10);
  g_assert_cmpint (stat (editor, &st1), ==, 0);
  again = sync_ok (f, TRUE);
  g_assert_cmpuint (again.written, ==, 0);
  g_assert_cmpuint (again.removed, ==, 0);
  g_assert_cmpuint (again.unchanged, ==, first.written);
  g_assert_cmpint (stat (editor, &st2), ==, 0);
  g_assert_cmpint (st1.st_ino, ==, st2.st_ino);   /* not rewritten */

  /* the user takes the viewer out: its entry and icon go, nothing else */
  s->removed = g_strsplit ("org.example.Viewer.desktop", ";", -1);
  again = sync_ok (f, TRUE);
  g_assert_false (g_file_test (viewer, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (viewer_icon, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (editor, G_FILE_TEST_EXISTS));
  g_assert_cmpuint (again.removed, ==, 2);
  g_assert_cmpuint (again.written, ==, 0);   /* the menu lists categories, not entries */

  /* a crash after writing but before recording: the rerun adopts it */
  {
    g_autofree char *manifest = gl_export_manifest_path (f->ctx);
    unlink (manifest);
    again = sync_ok (f, TRUE);
    g_assert_cmpuint (again.skipped, ==, 0);
    g_assert_cmpuint (again.written, ==, 0);
  }
}

static void
test_conflicts (Fixture *f, gconstpointer data)
{
  g_autofree char *editor = data_path (f, "applications/glimpse-deb+org.example.Editor.desktop");
  g_autofree char *text = NULL;
  g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func ((GDestroyNotify) g_error_free);
  GlExportStats stats;

  /* a file Glimpse did not write is never overwritten */
  tu_write (f->ctx->data_home, "applications/glimpse-deb+org.example.Editor.desktop", "mine\n");
  g_assert_true (gl_export_sync (f->ctx, f->sources, TRUE, &stats, warnings, NULL));
  g_assert_cmpuint (stats.skipped, ==, 1);
  g_assert_cmpuint (warnings->len, ==, 1);
  g_assert_nonnull (strstr (((GError *) warnings->pdata[0])->message, editor));
  g_assert_true (g_file_get_contents (editor, &text, NULL, NULL));
  g_assert_cmpstr (text, ==, "mine\n");
  /* nor removed */
  g_assert_true (gl_export_unexport (f->ctx, "deb", NULL));
  g_clear_pointer (&text, g_free);
  g_assert_true (g_file_get_contents (editor, &text, NULL, NULL));
  g_assert_cmpstr (text, ==, "mine\n");
}

static void
test_removal (Fixture *f, gconstpointer data)
{
  g_autofree char *before_data = NULL, *before_config = NULL;
  g_autofree char *after_data = NULL, *after_config = NULL;
  g_autofree char *kio_deb = data_path (f, "kio/servicemenus/glimpse-deb.desktop");
  g_autofree char *uca = NULL;
  static const char user_uca[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<actions>\n<action>\n\t<icon>x</icon>\n"
    "\t<name>Mine</name>\n\t<unique-id>1-1</unique-id>\n\t<command>mine %f</command>\n"
    "\t<patterns>*</patterns>\n\t<other-files/>\n</action>\n</actions>\n";

  /* what the user has before */
  tu_write (f->ctx->config_home, "Thunar/uca.xml", user_uca);
  tu_write (f->ctx->data_home, "applications/mine.desktop",
            "[Desktop Entry]\nType=Application\nName=Mine\nExec=mine\nMimeType=text/plain;\n");
  tu_write (f->ctx->data_home, "nautilus/scripts/My script", "#!/bin/sh\n");
  before_data = tu_snapshot (f->ctx->data_home);
  before_config = tu_snapshot (f->ctx->config_home);

  /* a second sandbox, so the shared files carry both */
  g_ptr_array_add (f->sources, tu_source (f->root, "other", "Other"));
  sync_ok (f, TRUE);
  uca = g_build_filename (f->ctx->config_home, "Thunar/uca.xml", NULL);
  {
    g_autofree char *text = NULL;
    g_assert_true (g_file_get_contents (uca, &text, NULL, NULL));
    g_assert_true (g_str_has_prefix (text, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<actions>\n<action>\n\t<icon>x</icon>"));
    g_assert_nonnull (strstr (text, "glimpse-deb"));
    g_assert_nonnull (strstr (text, "glimpse-other"));
  }

  /* unexport one: the other's stay whole */
  g_assert_true (gl_export_unexport (f->ctx, "deb", NULL));
  g_assert_false (g_file_test (kio_deb, G_FILE_TEST_EXISTS));
  {
    g_autofree char *o = data_path (f, "kio/servicemenus/glimpse-other.desktop");
    g_autofree char *e = data_path (f, "applications/glimpse-other+org.example.Editor.desktop");
    g_autofree char *menu = g_build_filename (f->ctx->config_home, "menus/applications-merged/glimpse.menu", NULL);
    g_autofree char *text = NULL;
    g_assert_true (g_file_test (o, G_FILE_TEST_EXISTS));
    g_assert_true (g_file_test (e, G_FILE_TEST_EXISTS));
    g_assert_true (g_file_get_contents (menu, &text, NULL, NULL));
    g_assert_null (strstr (text, "X-Glimpse-deb<"));
    g_assert_nonnull (strstr (text, "X-Glimpse-other<"));
  }

  /* a sandbox gone from the store: a complete sync with nothing left */
  g_ptr_array_set_size (f->sources, 0);
  sync_ok (f, TRUE);

  after_data = tu_snapshot (f->ctx->data_home);
  after_config = tu_snapshot (f->ctx->config_home);
  g_assert_cmpstr (after_data, ==, before_data);
  g_assert_cmpstr (after_config, ==, before_config);
}

static void
test_removal_fresh (Fixture *f, gconstpointer data)
{
  /* from nothing back to nothing: no directory, cache or manifest left */
  g_autofree char *before_data = tu_snapshot (f->ctx->data_home);
  g_autofree char *before_config = tu_snapshot (f->ctx->config_home);
  g_autofree char *after_data = NULL, *after_config = NULL;
  g_autofree char *user_edit = data_path (f, "file-manager/actions/glimpse-deb.desktop");

  sync_ok (f, TRUE);
  g_assert_true (gl_export_store_remove_sandbox ("deb", NULL) || TRUE);
  g_assert_true (gl_export_unexport (f->ctx, "deb", NULL));
  after_data = tu_snapshot (f->ctx->data_home);
  after_config = tu_snapshot (f->ctx->config_home);
  g_assert_cmpstr (after_data, ==, before_data);
  g_assert_cmpstr (after_config, ==, before_config);

  /* a file the user changed after Glimpse wrote it is theirs: it stays */
  sync_ok (f, TRUE);
  tu_write (f->ctx->data_home, "file-manager/actions/glimpse-deb.desktop", "[Desktop Entry]\nName=edited\n");
  g_assert_true (gl_export_unexport (f->ctx, "deb", NULL));
  g_assert_true (g_file_test (user_edit, G_FILE_TEST_EXISTS));
}

/* "Open in" from each file manager reaches glimpse open with the names */
static void
test_fm_actions (Fixture *f, gconstpointer data)
{
  g_autofree char *nautilus = data_path (f, "nautilus/scripts/Glimpse/Open in Debian “sid”");
  g_autofree char *nemo_script = data_path (f, "nemo/scripts/Glimpse/Open in Debian “sid”");
  g_autofree char *caja = g_build_filename (f->ctx->config_home, "caja/scripts/Glimpse/Open in Debian “sid”", NULL);
  g_autofree char *uca = g_build_filename (f->ctx->config_home, "Thunar/uca.xml", NULL);
  g_autofree char *kio = data_path (f, "kio/servicemenus/glimpse-deb.desktop");
  g_autofree char *pcman = data_path (f, "file-manager/actions/glimpse-deb.desktop");
  g_autoptr(GStrvBuilder) wb = g_strv_builder_new ();
  g_auto(GStrv) want = NULL;
  const char *scripts[] = { nautilus, nemo_script, caja, NULL };

  if (g_getenv ("GL_TEST_RECORDER") == NULL)
    {
      gl_test_skip ("GL_TEST_RECORDER not set: run through meson test");
      return;
    }
  /* glimpse itself replaced by the recorder */
  g_free (f->ctx->glimpse);
  f->ctx->glimpse = g_strdup (f->ctx->launcher);
  sync_ok (f, TRUE);
  g_strv_builder_add_many (wb, "open", "deb", "--", NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (awkward); i++)
    g_strv_builder_add (wb, awkward[i]);
  want = g_strv_builder_end (wb);

  /* scripts: the names as arguments */
  for (gsize s = 0; scripts[s] != NULL; s++)
    {
      g_autoptr(GPtrArray) argv = g_ptr_array_new ();
      g_autoptr(GPtrArray) runs = NULL;
      int status;

      g_ptr_array_add (argv, (gpointer) scripts[s]);
      for (gsize i = 0; i < G_N_ELEMENTS (awkward); i++)
        g_ptr_array_add (argv, (gpointer) awkward[i]);
      g_ptr_array_add (argv, NULL);
      unlink (f->record);
      tu_run ((const char * const *) argv->pdata, NULL, &status);
      g_assert_cmpint (status, ==, 0);
      runs = tu_read_records (f->record);
      g_assert_cmpuint (runs->len, ==, 1);
      g_assert_cmpstrv (runs->pdata[0], want);
    }

  /* Thunar: %F becomes the shell-quoted names, the line is split like a shell */
  {
    g_autofree char *xml = NULL;
    const char *start, *end;
    g_autofree char *escaped = NULL;
    g_autofree char *command = NULL;
    g_autoptr(GString) line = g_string_new (NULL);
    g_auto(GStrv) argv = NULL;
    const char *cmd_argv[] = { NULL };

    g_assert_true (g_file_get_contents (uca, &xml, NULL, NULL));
    start = strstr (strstr (xml, "glimpse-deb"), "<command>") + strlen ("<command>");
    end = strstr (start, "</command>");
    escaped = g_strndup (start, end - start);
    /* un-escape the XML the simple way: our command has only &apos; */
    {
      g_auto(GStrv) parts = g_strsplit (escaped, "&apos;", -1);
      command = g_strjoinv ("'", parts);
    }
    for (const char *p = command; *p; p++)
      {
        if (p[0] == '%' && p[1] == 'F')
          {
            for (gsize i = 0; i < G_N_ELEMENTS (awkward); i++)
              {
                g_autofree char *q = g_shell_quote (awkward[i]);
                g_string_append_printf (line, "%s%s", i ? " " : "", q);
              }
            p++;
          }
        else
          g_string_append_c (line, *p);
      }
    g_assert_true (g_shell_parse_argv (line->str, NULL, &argv, NULL));
    g_assert_cmpstr (argv[0], ==, f->ctx->glimpse);
    g_assert_cmpstrv (argv + 1, want);
    (void) cmd_argv;
  }

  /* Dolphin and PCManFM-Qt: desktop-entry Exec lines with %F */
  {
    const char *files[] = { kio, pcman, NULL };
    const char *groups[] = { "Desktop Action open", "X-Action-Profile glimpse", NULL };

    for (gsize i = 0; files[i] != NULL; i++)
      {
        g_autoptr(GKeyFile) kf = g_key_file_new ();
        g_autofree char *exec = NULL;
        g_auto(GStrv) split = NULL;
        g_auto(GStrv) expanded = NULL;
        g_autoptr(GPtrArray) uris = g_ptr_array_new_with_free_func (g_free);

        for (gsize j = 0; j < G_N_ELEMENTS (awkward); j++)
          {
            g_autofree char *p = g_build_filename ("/tmp", awkward[j], NULL);
            g_ptr_array_add (uris, g_filename_to_uri (p, NULL, NULL));
          }
        g_ptr_array_add (uris, NULL);
        g_assert_true (g_key_file_load_from_file (kf, files[i], G_KEY_FILE_NONE, NULL));
        exec = g_key_file_get_string (kf, groups[i], "Exec", NULL);
        g_assert_true (gl_exec_split (exec, &split, NULL));
        expanded = gl_exec_expand ((const char * const *) split, (const char * const *) uris->pdata,
                                   NULL, NULL, NULL, NULL);
        g_assert_cmpstr (expanded[0], ==, f->ctx->glimpse);
        g_assert_cmpstr (expanded[4], ==, "/tmp/with space.txt");
        g_assert_cmpuint (g_strv_length (expanded), ==, 4 + G_N_ELEMENTS (awkward));
      }
  }
}

/* A file @rel (under $XDG_DATA_HOME) an older export wrote for @sandbox,
 * recorded in the manifest as that export left it */
static void
plant_recorded (Fixture *f, const char *rel, const char *sandbox, const char *contents)
{
  g_autoptr(GBytes) bytes = g_bytes_new_static (contents, strlen (contents));
  g_autofree char *sum = gl_checksum_bytes (bytes);
  g_autofree char *manifest_path = gl_export_manifest_path (f->ctx);
  g_autofree char *path = data_path (f, rel);
  g_autoptr(GlManifest) m = gl_manifest_load (manifest_path, NULL);

  tu_write (f->ctx->data_home, rel, contents);
  gl_manifest_add_file (m, path, sandbox, sum);
  g_assert_true (gl_manifest_save (m, NULL));
}

/* Each file manager shows each sandbox once (issue 11, defect 2): Nemo
 * only its script (Scripts > Glimpse), not also a .nemo_action; Caja its
 * script only without caja-actions, which shows the FileManager-Actions
 * files; those are grouped in one "Glimpse" menu (Type=Menu, ItemsList=),
 * checked with caja-actions' own parser. */
static void
test_fm_one_entry (Fixture *f, gconstpointer data)
{
  g_autofree char *caja = g_build_filename (f->ctx->config_home, "caja/scripts/Glimpse/Open in Debian “sid”", NULL);
  g_autofree char *nemo_action = data_path (f, "nemo/actions/glimpse-deb.nemo_action");
  g_autofree char *nemo_dir = data_path (f, "nemo");
  g_autofree char *snapshot = NULL;
  g_autofree char *print = g_find_program_in_path ("caja-actions-print");

  g_ptr_array_add (f->sources, tu_source (f->root, "other", "Other"));

  /* an older export left a .nemo_action: the next export removes it */
  plant_recorded (f, "nemo/actions/glimpse-deb.nemo_action", "deb",
                  "[Nemo Action]\nName=Open in Debian\nExec=/usr/bin/glimpse open deb -- %F\n");

  /* Caja without caja-actions: its script */
  sync_ok (f, TRUE);
  g_assert_false (g_file_test (nemo_action, G_FILE_TEST_EXISTS));
  snapshot = tu_snapshot (nemo_dir);
  g_test_message ("nemo:\n%s", snapshot);
  g_assert_nonnull (strstr (snapshot, "scripts/Glimpse/Open in Debian “sid”"));
  g_assert_nonnull (strstr (snapshot, "scripts/Glimpse/Open in Other"));
  g_assert_null (strstr (snapshot, ".nemo_action"));
  g_assert_true (g_file_test (caja, G_FILE_TEST_IS_EXECUTABLE));

  /* caja-actions installed: the script goes, the actions stay */
  f->ctx->caja_scripts = FALSE;
  sync_ok (f, TRUE);
  g_assert_false (g_file_test (caja, G_FILE_TEST_EXISTS));

  if (print == NULL)
    {
      gl_test_skip ("caja-actions-print is not installed (apt install caja-actions)");
      return;
    }
  {
    g_autofree char *env_data = g_strdup_printf ("XDG_DATA_HOME=%s", f->ctx->data_home);
    g_autofree char *env_config = g_strdup_printf ("XDG_CONFIG_HOME=%s", f->ctx->config_home);
    const char *env[] = { env_data, env_config, "XDG_DATA_DIRS=/nonexistent", NULL };
    const char *menu_argv[] = { "timeout", "30", print, "-i", "glimpse", NULL };
    const char *deb_argv[] = { "timeout", "30", print, "-i", "glimpse-deb", NULL };
    g_autofree char *menu = NULL;
    g_autofree char *deb = NULL;
    int status;

    /* the first run sets up the user's caja-actions.conf (the order of the
     * top-level items) and builds the tree before it; Caja's menu is the
     * tree of every later load */
    tu_run_env (menu_argv, env, NULL, &status);
    g_assert_cmpint (status, ==, 0);
    tu_run_env (menu_argv, env, &menu, &status);
    g_test_message ("caja-actions-print -i glimpse:\n%s", menu);
    g_assert_cmpint (status, ==, 0);
    g_assert_nonnull (strstr (menu, "Type=Menu\n"));
    g_assert_nonnull (strstr (menu, "Name[C]=Glimpse\n"));
    /* the items the parser attached to the menu: both sandboxes' actions */
    g_assert_nonnull (strstr (menu, "\nItemsList=glimpse-deb;glimpse-other;\n"));
    tu_run_env (deb_argv, env, &deb, &status);
    g_test_message ("caja-actions-print -i glimpse-deb:\n%s", deb);
    g_assert_cmpint (status, ==, 0);
    g_assert_nonnull (strstr (deb, "Type=Action\n"));
    g_assert_nonnull (strstr (deb, "Exec=/usr/bin/glimpse open deb -- %F\n"));
  }

  /* one sandbox left: the menu lists it alone; none left: the menu goes */
  g_ptr_array_remove_index (f->sources, 1);
  sync_ok (f, TRUE);
  {
    g_autofree char *menu_file = data_path (f, "file-manager/actions/glimpse.desktop");
    g_autofree char *text = NULL;

    g_assert_true (g_file_get_contents (menu_file, &text, NULL, NULL));
    g_assert_nonnull (strstr (text, "\nItemsList=glimpse-deb;\n"));
    g_ptr_array_set_size (f->sources, 0);
    sync_ok (f, TRUE);
    g_assert_false (g_file_test (menu_file, G_FILE_TEST_EXISTS));
  }
}

/* Two sandboxes of one display name (glimpse create --display-name, glimpse
 * rename) each get their own entry in every file manager: their scripts,
 * named by what the user sees, carry the id; an older export's script of
 * the bare name goes.  The shared files count once in a sync of both.
 * With one of them left, its script has the bare name again. */
static void
test_fm_same_name (Fixture *f, gconstpointer data)
{
  static const char * const dirs[] = { "nautilus/scripts/Glimpse", "nemo/scripts/Glimpse" };
  static const char * const per_id[] = { "kio/servicemenus", "file-manager/actions" };
  static const char * const ids[] = { "a", "b" };
  g_autofree char *old = data_path (f, "nemo/scripts/Glimpse/Open in Test");
  g_autofree char *uca = g_build_filename (f->ctx->config_home, "Thunar/uca.xml", NULL);
  g_autofree char *text = NULL;
  GlExportStats stats, one_a, one_b;

  g_ptr_array_set_size (f->sources, 0);
  g_ptr_array_add (f->sources, tu_source (f->root, "a", "Test"));
  g_ptr_array_add (f->sources, tu_source (f->root, "b", "Test"));

  /* what an export before the ids were in the names left for "a" */
  plant_recorded (f, "nemo/scripts/Glimpse/Open in Test", "a",
                  "#!/bin/sh\nexec /usr/bin/glimpse open a -- \"$@\"\n");

  stats = sync_ok (f, TRUE);
  g_assert_cmpuint (stats.skipped, ==, 0);
  g_assert_false (g_file_test (old, G_FILE_TEST_EXISTS));
  for (gsize i = 0; i < G_N_ELEMENTS (ids); i++)
    {
      g_autofree char *caja = g_strdup_printf ("%s/caja/scripts/Glimpse/Open in Test [%s]",
                                               f->ctx->config_home, ids[i]);
      g_autofree char *action = g_strdup_printf ("<unique-id>glimpse-%s</unique-id>", ids[i]);
      g_autofree char *title = g_strdup_printf ("<name>Open in Test [%s]</name>", ids[i]);
      g_autofree char *kio_rel = g_strdup_printf ("kio/servicemenus/glimpse-%s.desktop", ids[i]);
      g_autofree char *kio = data_path (f, kio_rel);
      g_autofree char *kio_text = NULL;
      g_autofree char *kio_name = g_strdup_printf ("\nName=Open in Test [%s]\n", ids[i]);

      g_assert_true (g_file_test (caja, G_FILE_TEST_IS_EXECUTABLE));
      for (gsize d = 0; d < G_N_ELEMENTS (dirs); d++)
        {
          g_autofree char *rel = g_strdup_printf ("%s/Open in Test [%s]", dirs[d], ids[i]);
          g_autofree char *p = data_path (f, rel);
          g_autofree char *script = NULL;
          g_autofree char *want = g_strdup_printf ("open '%s' --", ids[i]);

          g_assert_true (g_file_get_contents (p, &script, NULL, NULL));
          g_assert_nonnull (strstr (script, want));
          g_assert_nonnull (strstr (script, "# Open in Test:"));
        }
      for (gsize k = 0; k < G_N_ELEMENTS (per_id); k++)
        {
          g_autofree char *rel = g_strdup_printf ("%s/glimpse-%s.desktop", per_id[k], ids[i]);
          g_autofree char *p = data_path (f, rel);
          g_assert_true (g_file_test (p, G_FILE_TEST_IS_REGULAR));
        }
      g_clear_pointer (&text, g_free);
      g_assert_true (g_file_get_contents (uca, &text, NULL, NULL));
      g_assert_nonnull (strstr (text, action));
      /* the other file managers tell them apart the same way */
      g_assert_nonnull (strstr (text, title));
      g_assert_true (g_file_get_contents (kio, &kio_text, NULL, NULL));
      g_assert_nonnull (strstr (kio_text, kio_name));
    }

  /* nothing skipped, so a second sync has nothing to do; the shared files
   * (menu, its directory file, the FileManager-Actions menu, uca.xml) once */
  stats = sync_ok (f, FALSE);
  g_assert_cmpuint (stats.skipped, ==, 0);
  g_assert_cmpuint (stats.written, ==, 0);
  {
    GPtrArray *both = f->sources;

    f->sources = g_ptr_array_new_with_free_func ((GDestroyNotify) gl_export_source_free);
    g_ptr_array_add (f->sources, tu_source (f->root, "a", "Test"));
    one_a = sync_ok (f, FALSE);
    g_ptr_array_set_size (f->sources, 0);
    g_ptr_array_add (f->sources, tu_source (f->root, "b", "Test"));
    one_b = sync_ok (f, FALSE);
    g_ptr_array_unref (f->sources);
    f->sources = both;
  }
  g_assert_cmpuint (one_a.written + one_b.written, ==, 0);
  g_assert_cmpuint (stats.unchanged, ==, one_a.unchanged + one_b.unchanged - 4);

  /* "a" goes: "b" keeps every entry, its scripts under the bare name */
  g_ptr_array_remove_index (f->sources, 0);
  stats = sync_ok (f, TRUE);
  g_assert_cmpuint (stats.skipped, ==, 0);
  for (gsize k = 0; k < G_N_ELEMENTS (dirs) + G_N_ELEMENTS (per_id); k++)
    {
      g_autofree char *rel_a = k < G_N_ELEMENTS (dirs)
        ? g_strdup_printf ("%s/Open in Test [a]", dirs[k])
        : g_strdup_printf ("%s/glimpse-a.desktop", per_id[k - G_N_ELEMENTS (dirs)]);
      g_autofree char *rel_b = k < G_N_ELEMENTS (dirs)
        ? g_strdup_printf ("%s/Open in Test", dirs[k])
        : g_strdup_printf ("%s/glimpse-b.desktop", per_id[k - G_N_ELEMENTS (dirs)]);
      g_autofree char *pa = data_path (f, rel_a);
      g_autofree char *pb = data_path (f, rel_b);
      g_autofree char *contents = NULL;

      g_assert_false (g_file_test (pa, G_FILE_TEST_EXISTS));
      g_assert_true (g_file_get_contents (pb, &contents, NULL, NULL));
      g_assert_nonnull (strstr (contents, k < G_N_ELEMENTS (dirs) ? "open 'b' --" : "open b --"));
    }
  g_clear_pointer (&text, g_free);
  g_assert_true (g_file_get_contents (uca, &text, NULL, NULL));
  g_assert_null (strstr (text, "<unique-id>glimpse-a</unique-id>"));
  g_assert_nonnull (strstr (text, "<unique-id>glimpse-b</unique-id>"));
  g_assert_nonnull (strstr (text, "<name>Open in Test</name>"));
}

/* A source icon rewritten in place (same size) is exported again; an
 * exported icon the user changed is theirs (the manifest's record of what
 * Glimpse left lets a run skip reading unchanged files, never changed ones). */
static void
test_unchanged_not_read (Fixture *f, gconstpointer data)
{
  g_autofree char *exported = data_path (f, "icons/hicolor/256x256/apps/glimpse-deb+org.example.Editor.png");
  g_autofree char *source = g_build_filename (f->root, "rootfs/usr/share/icons/hicolor/256x256/apps/org.example.Editor.png", NULL);
  g_autofree char *before = NULL, *after = NULL, *src = NULL;
  gsize len;
  GlExportStats stats;

  sync_ok (f, TRUE);
  stats = sync_ok (f, TRUE);
  g_assert_cmpuint (stats.written, ==, 0);
  g_assert_true (g_file_get_contents (exported, &before, &len, NULL));

  /* the same size, other bytes, the same mtime: ctime and the contents differ */
  g_assert_true (g_file_get_contents (source, &src, &len, NULL));
  src[len - 1] ^= 0x55;
  {
    struct stat st;
    struct timespec times[2];
    FILE *out;

    g_assert_cmpint (stat (source, &st), ==, 0);
    out = fopen (source, "r+");
    g_assert_nonnull (out);
    g_assert_cmpuint (fwrite (src, 1, len, out), ==, len);
    fclose (out);
    times[0] = st.st_atim;
    times[1] = st.st_mtim;
    g_assert_cmpint (utimensat (AT_FDCWD, source, times, 0), ==, 0);
  }
  stats = sync_ok (f, TRUE);
  g_assert_cmpuint (stats.written, ==, 1);
  g_assert_true (g_file_get_contents (exported, &after, NULL, NULL));
  g_assert_true (memcmp (after, src, len) == 0);

  /* the user's own version of the exported icon stays */
  tu_write (f->ctx->data_home, "icons/hicolor/256x256/apps/glimpse-deb+org.example.Editor.png", "mine");
  stats = sync_ok (f, TRUE);
  g_assert_cmpuint (stats.skipped, ==, 1);
  g_clear_pointer (&after, g_free);
  g_assert_true (g_file_get_contents (exported, &after, NULL, NULL));
  g_assert_cmpstr (after, ==, "mine");
}

/* The export state is locked: a second export waits for the first (the
 * agent and "glimpse export" never both rewrite the manifest). */
typedef struct {
  GlExportContext *ctx;
  GPtrArray *sources;
  gint done;
  gboolean ok;
} LockedRun;

static gpointer
locked_run (gpointer data)
{
  LockedRun *r = data;

  r->ok = gl_export_sync (r->ctx, r->sources, TRUE, NULL, NULL, NULL);
  g_atomic_int_set (&r->done, 1);
  return NULL;
}

/* TRUE when /proc/locks shows a process waiting for a flock on @ino */
static gboolean
flock_waiter (guint64 ino)
{
  g_autofree char *locks = NULL;
  g_autofree char *needle = g_strdup_printf (":%" G_GUINT64_FORMAT " ", ino);
  g_auto(GStrv) lines = NULL;

  if (!g_file_get_contents ("/proc/locks", &locks, NULL, NULL))
    return FALSE;
  lines = g_strsplit (locks, "\n", -1);
  for (gsize i = 0; lines[i] != NULL; i++)
    if (strstr (lines[i], "-> FLOCK") != NULL && strstr (lines[i], needle) != NULL)
      return TRUE;
  return FALSE;
}

static void
test_export_lock (Fixture *f, gconstpointer data)
{
  g_autofree char *manifest = gl_export_manifest_path (f->ctx);
  g_autofree char *dir = g_path_get_dirname (manifest);
  LockedRun r = { f->ctx, f->sources, 0, FALSE };
  g_autoptr(GThread) thread = NULL;
  struct stat st;
  int fd;
  gint64 deadline = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;

  sync_ok (f, TRUE);
  fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (fstat (fd, &st), ==, 0);
  g_assert_cmpint (flock (fd, LOCK_EX), ==, 0);

  thread = g_thread_new ("export", locked_run, &r);
  while (!flock_waiter ((guint64) st.st_ino))
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_assert_false (g_atomic_int_get (&r.done));
      g_usleep (1000);
    }
  /* waiting for us, not done */
  g_assert_false (g_atomic_int_get (&r.done));
  close (fd);
  g_thread_join (g_steal_pointer (&thread));
  g_assert_true (r.ok);
}

/* kill -9 between creating a temporary file and renaming it leaves
 * <file>.XXXXXX: the next complete export removes ours if older than the
 * run, and nothing else */
static void
test_temporaries (Fixture *f, gconstpointer data)
{
  static const char * const ours[] = {
    "applications/glimpse-deb+org.example.Editor.desktop.Ab3dEf",
    "icons/hicolor/256x256/apps/glimpse-deb+org.example.Editor.png.XyZ123",
    /* a save of a manifest killed before its rename */
    "glimpse/export-manifest.Qw3rty",
    "glimpse/export-manifest.d/deb.manifest.aBc123",
  };
  static const char * const theirs[] = {
    "applications/mine.desktop.Ab3dEf",
    "applications/glimpse-deb+org.example.Editor.desktop.backup",
    "applications/glimpse-deb+org.example.Editor.desktop.Ab3d",
  };
  g_autofree char *fresh = data_path (f, "applications/glimpse-deb+org.example.Viewer.desktop.Qw12er");

  sync_ok (f, TRUE);
  for (gsize i = 0; i < G_N_ELEMENTS (ours); i++)
    {
      g_autofree char *p = data_path (f, ours[i]);
      struct timespec old[2] = { { 1000000000, 0 }, { 1000000000, 0 } };

      tu_write (f->ctx->data_home, ours[i], "[Desktop Entry]\n");
      g_assert_cmpint (utimensat (AT_FDCWD, p, old, 0), ==, 0);
    }
  for (gsize i = 0; i < G_N_ELEMENTS (theirs); i++)
    tu_write (f->ctx->data_home, theirs[i], "x");
  /* one made "during" the run: newer than its start */
  tu_write (f->ctx->data_home, "applications/glimpse-deb+org.example.Viewer.desktop.Qw12er", "x");
  {
    struct timespec later[2] = { { time (NULL) + 3600, 0 }, { time (NULL) + 3600, 0 } };
    g_assert_cmpint (utimensat (AT_FDCWD, fresh, later, 0), ==, 0);
  }

  sync_ok (f, TRUE);
  for (gsize i = 0; i < G_N_ELEMENTS (ours); i++)
    {
      g_autofree char *p = data_path (f, ours[i]);
      g_assert_false (g_file_test (p, G_FILE_TEST_EXISTS));
    }
  for (gsize i = 0; i < G_N_ELEMENTS (theirs); i++)
    {
      g_autofree char *p = data_path (f, theirs[i]);
      g_assert_true (g_file_test (p, G_FILE_TEST_EXISTS));
    }
  g_assert_true (g_file_test (fresh, G_FILE_TEST_EXISTS));
}

/* The control entries are glimpse-ID+.terminal / +.control now; the names
 * of older versions (glimpse-ID--terminal, --control) go */
static void
test_control_names (Fixture *f, gconstpointer data)
{
  g_autofree char *manifest_path = gl_export_manifest_path (f->ctx);
  static const char * const old[] = {
    "applications/glimpse-deb--terminal.desktop",
    "applications/glimpse-deb--control.desktop",
  };

  ((GlExportSource *) f->sources->pdata[0])->control_entries = TRUE;
  {
    g_autoptr(GlManifest) m = gl_manifest_load (manifest_path, NULL);
    static const char text[] = "[Desktop Entry]\nType=Application\nName=Old\nExec=glimpse control deb terminal\n";
    g_autoptr(GBytes) bytes = g_bytes_new_static (text, strlen (text));
    g_autofree char *sum = gl_checksum_bytes (bytes);
    const char *apps[] = { "glimpse-deb--terminal.desktop", "glimpse-deb--control.desktop", NULL };

    for (gsize i = 0; i < G_N_ELEMENTS (old); i++)
      {
        g_autofree char *p = data_path (f, old[i]);
        tu_write (f->ctx->data_home, old[i], text);
        gl_manifest_add_file (m, p, "deb", sum);
      }
    gl_manifest_set_sandbox (m, "deb", "Debian “sid”", apps);
    g_assert_true (gl_manifest_save (m, NULL));
  }

  sync_ok (f, TRUE);
  for (gsize i = 0; i < G_N_ELEMENTS (old); i++)
    {
      g_autofree char *p = data_path (f, old[i]);
      g_assert_false (g_file_test (p, G_FILE_TEST_EXISTS));
    }
  {
    g_autofree char *t = data_path (f, "applications/glimpse-deb+.terminal.desktop");
    g_autofree char *c = data_path (f, "applications/glimpse-deb+.control.desktop");
    g_autoptr(GlManifest) m = gl_manifest_load (manifest_path, NULL);
    GlManifestSandbox *s = g_hash_table_lookup (m->sandboxes, "deb");

    g_assert_true (g_file_test (t, G_FILE_TEST_IS_REGULAR));
    g_assert_true (g_file_test (c, G_FILE_TEST_IS_REGULAR));
    g_assert_true (gl_export_is_control_entry ("glimpse-deb+.terminal.desktop"));
    g_assert_true (g_strv_contains ((const char * const *) s->apps, "glimpse-deb+.control.desktop"));
    g_assert_false (g_strv_contains ((const char * const *) s->apps, "glimpse-deb--control.desktop"));
  }
}

/* A run killed after recording its intent in the manifest's journal and
 * writing a file, before saving the manifest: the next run loads the
 * journal, knows the file as Glimpse's (no conflict) and puts it right;
 * the journal goes with the next save. */
static void
test_intent_journal (Fixture *f, gconstpointer data)
{
  g_autofree char *manifest_path = gl_export_manifest_path (f->ctx);
  g_autofree char *intent = gl_manifest_intent_path (manifest_path);
  g_autofree char *entry = data_path (f, "applications/glimpse-deb+org.example.Editor.desktop");
  g_autofree char *planned = NULL;
  g_autofree char *now = NULL;
  static const char text[] = "[Desktop Entry]\nType=Application\nName=Half-way\nExec=true\n";
  GlExportStats stats;

  sync_ok (f, TRUE);
  g_assert_true (g_file_get_contents (entry, &planned, NULL, NULL));
  g_assert_false (g_file_test (intent, G_FILE_TEST_EXISTS));
  {
    g_autoptr(GlManifest) m = gl_manifest_load (manifest_path, NULL);
    g_autoptr(GBytes) bytes = g_bytes_new_static (text, strlen (text));
    g_autofree char *sum = gl_checksum_bytes (bytes);
    g_autoptr(GHashTable) paths = g_hash_table_new (g_str_hash, g_str_equal);

    g_assert_nonnull (m);
    gl_manifest_add_file (m, entry, "deb", sum);
    g_hash_table_add (paths, entry);
    g_assert_true (gl_manifest_save_intent (m, paths, NULL));
    g_assert_true (g_file_set_contents (entry, text, -1, NULL));
  }
  g_assert_true (g_file_test (intent, G_FILE_TEST_EXISTS));

  stats = sync_ok (f, TRUE);
  g_assert_cmpuint (stats.skipped, ==, 0);
  g_assert_true (g_file_get_contents (entry, &now, NULL, NULL));
  g_assert_cmpstr (now, ==, planned);
  g_assert_false (g_file_test (intent, G_FILE_TEST_EXISTS));
}

/* The stat key of @path with its size field (the second) made @size:
 * the record of a file as it was before the data of a write was lost */
static char *
key_with_size (const char *path, goffset size)
{
  g_autofree char *key = gl_manifest_stat_key (path);
  g_auto(GStrv) fields = g_strsplit (key, ":", -1);

  g_assert_cmpuint (g_strv_length (fields), ==, 5);
  g_free (fields[1]);
  fields[1] = g_strdup_printf ("%" G_GINT64_FORMAT, (gint64) size);
  return g_strjoinv (":", fields);
}

/* What a power cut can leave of files exported without being synced
 * (only the manifest and its journal are): missing, empty, or cut short
 * with the inode and ctime the manifest recorded.  The next complete sync
 * writes each again, as Glimpse's; a stale one goes; a file the user
 * changed is still left alone. */
static void
test_power_cut (Fixture *f, gconstpointer data)
{
  g_autofree char *manifest_path = gl_export_manifest_path (f->ctx);
  g_autofree char *editor = data_path (f, "applications/glimpse-deb+org.example.Editor.desktop");
  g_autofree char *oldapp = data_path (f, "applications/glimpse-deb+kde4-oldapp.desktop");
  g_autofree char *icon = data_path (f, "icons/hicolor/256x256/apps/glimpse-deb+org.example.Editor.png");
  g_autofree char *dir = data_path (f, "desktop-directories/glimpse-deb.directory");
  g_autofree char *viewer = data_path (f, "applications/glimpse-deb+org.example.Viewer.desktop");
  g_autofree char *editor_text = NULL, *oldapp_text = NULL, *icon_text = NULL, *dir_text = NULL;
  g_autofree char *text = NULL;
  gsize icon_len = 0;
  GlExportStats stats;
  GlExportSource *s = f->sources->pdata[0];

  sync_ok (f, TRUE);
  g_assert_true (g_file_get_contents (editor, &editor_text, NULL, NULL));
  g_assert_true (g_file_get_contents (oldapp, &oldapp_text, NULL, NULL));
  g_assert_true (g_file_get_contents (icon, &icon_text, &icon_len, NULL));
  g_assert_true (g_file_get_contents (dir, &dir_text, NULL, NULL));
  g_assert_cmpuint (icon_len, >, 2);

  /* the entry empty, the directory file gone; the icon cut short, its
   * record naming the inode and ctime it has (the ctime of the rename,
   * which reached the disk) and the size the write gave it */
  g_assert_cmpint (truncate (editor, 0), ==, 0);
  g_assert_cmpint (unlink (dir), ==, 0);
  g_assert_cmpint (truncate (icon, (off_t) icon_len / 2), ==, 0);
  {
    g_autoptr(GlManifest) m = gl_manifest_load (manifest_path, NULL);
    GlManifestFile *mf = g_hash_table_lookup (m->files, icon);

    g_assert_nonnull (mf);
    g_free (mf->stat);
    mf->stat = key_with_size (icon, (goffset) icon_len);
    g_assert_true (gl_manifest_save (m, NULL));
  }
  /* a run cut off after its journal: the entry it names, new to the
   * manifest, is empty */
  {
    g_autoptr(GlManifest) m = gl_manifest_load (manifest_path, NULL);
    g_autoptr(GHashTable) paths = g_hash_table_new (g_str_hash, g_str_equal);
    g_autoptr(GBytes) bytes = g_bytes_new (oldapp_text, strlen (oldapp_text));
    g_autofree char *sum = gl_checksum_bytes (bytes);

    g_assert_true (g_hash_table_remove (m->files, oldapp));
    g_assert_true (gl_manifest_save (m, NULL));
    gl_manifest_add_file (m, oldapp, "deb", sum);
    g_hash_table_add (paths, oldapp);
    g_assert_true (gl_manifest_save_intent (m, paths, NULL));
    g_assert_cmpint (truncate (oldapp, 0), ==, 0);
  }

  stats = sync_ok (f, TRUE);
  g_assert_cmpuint (stats.skipped, ==, 0);
  g_assert_cmpuint (stats.written, ==, 4);
  g_assert_true (g_file_get_contents (editor, &text, NULL, NULL));
  g_assert_cmpstr (text, ==, editor_text);
  g_clear_pointer (&text, g_free);
  g_assert_true (g_file_get_contents (oldapp, &text, NULL, NULL));
  g_assert_cmpstr (text, ==, oldapp_text);
  g_clear_pointer (&text, g_free);
  g_assert_true (g_file_get_contents (dir, &text, NULL, NULL));
  g_assert_cmpstr (text, ==, dir_text);
  g_clear_pointer (&text, g_free);
  {
    gsize len = 0;
    g_assert_true (g_file_get_contents (icon, &text, &len, NULL));
    g_assert_cmpmem (text, len, icon_text, icon_len);
    g_clear_pointer (&text, g_free);
  }

  /* an entry lost so, of an application no longer exported, goes */
  g_assert_cmpint (truncate (viewer, 0), ==, 0);
  s->removed = g_strsplit ("org.example.Viewer.desktop", ";", -1);
  stats = sync_ok (f, TRUE);
  g_assert_cmpuint (stats.skipped, ==, 0);
  g_assert_false (g_file_test (viewer, G_FILE_TEST_EXISTS));

  /* the user's change is theirs: kept, however short */
  g_assert_true (g_file_set_contents (editor, "x", -1, NULL));
  stats = sync_ok (f, TRUE);
  g_assert_cmpuint (stats.skipped, ==, 1);
  g_assert_true (g_file_get_contents (editor, &text, NULL, NULL));
  g_assert_cmpstr (text, ==, "x");
}

/* A sandbox's manifest that is not one Glimpse wrote: a sync of that
 * sandbox (or of all) fails with an error naming it, and removes or
 * changes nothing; the other sandboxes sync as before */
static void
test_sandbox_manifest_corrupt (Fixture *f, gconstpointer data)
{
  g_autofree char *manifest_path = gl_export_manifest_path (f->ctx);
  g_autofree char *deb = gl_manifest_sandbox_path (manifest_path, "deb");
  g_autofree char *entry = data_path (f, "applications/glimpse-deb+org.example.Editor.desktop");
  g_autofree char *other_entry = NULL;
  g_autofree char *before = NULL;
  g_autofree char *snapshot = NULL;
  g_autofree char *after = NULL;
  g_autoptr(GPtrArray) other = g_ptr_array_new ();
  g_autoptr(GPtrArray) only_deb = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;
  GlExportStats stats = { 0, };

  g_ptr_array_add (f->sources, tu_source (f->root, "other", "Other"));
  g_ptr_array_add (only_deb, f->sources->pdata[0]);
  g_ptr_array_add (other, f->sources->pdata[1]);
  sync_ok (f, TRUE);
  g_assert_true (g_file_test (entry, G_FILE_TEST_IS_REGULAR));
  g_assert_true (g_file_test (deb, G_FILE_TEST_IS_REGULAR));
  g_assert_true (g_file_set_contents (deb, "not a manifest\n", -1, NULL));
  snapshot = tu_snapshot (f->ctx->data_home);

  /* the sandbox's own sync, a complete one: the error, nothing touched */
  g_assert_false (gl_export_sync (f->ctx, only_deb, FALSE, &stats, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
  g_assert_nonnull (strstr (error->message, deb));
  g_assert_nonnull (strstr (error->message, "move it away"));
  g_clear_error (&error);
  g_assert_false (gl_export_sync (f->ctx, f->sources, TRUE, &stats, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
  g_clear_error (&error);
  g_assert_false (gl_export_unexport (f->ctx, "deb", &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
  g_clear_error (&error);
  after = tu_snapshot (f->ctx->data_home);
  g_assert_cmpstr (after, ==, snapshot);

  /* the other sandbox's: as ever */
  g_assert_true (gl_export_sync (f->ctx, other, FALSE, &stats, NULL, &error));
  g_assert_no_error (error);
  other_entry = data_path (f, "applications/glimpse-other+org.example.Editor.desktop");
  g_assert_true (g_file_test (other_entry, G_FILE_TEST_IS_REGULAR));
  g_assert_true (g_file_get_contents (deb, &before, NULL, NULL));
  g_assert_cmpstr (before, ==, "not a manifest\n");
  g_assert_true (g_file_test (entry, G_FILE_TEST_IS_REGULAR));
}

/* the commands, against a fake store (GLIMPSE_SANDBOX_DIR) */
static void
test_cli (Fixture *f, gconstpointer data)
{
  const char *glimpse = g_getenv ("GL_TEST_GLIMPSE");
  g_autofree char *store = g_build_filename (f->root, "store", NULL);
  g_autofree char *sb = g_build_filename (store, "deb", NULL);
  g_autofree char *file = NULL;
  g_autofree char *out = NULL;
  g_autofree char *editor = data_path (f, "applications/glimpse-deb+org.example.Editor.desktop");
  g_autoptr(GPtrArray) runs = NULL;
  int status;

  if (glimpse == NULL)
    {
      gl_test_skip ("GL_TEST_GLIMPSE not set: run through meson test");
      return;
    }
  g_assert_cmpint (g_mkdir_with_parents (sb, 0755), ==, 0);
  tu_write (sb, "sandbox.conf", "[Sandbox]\nProfile=debian\nName=Debian sid\nBase=rootfs\nFamily=apt\n"
                                "Created=2026-01-01T00:00:00Z\nUpdated=2026-01-01T00:00:00Z\n");
  {
    g_autofree char *from = g_build_filename (f->root, "rootfs", NULL);
    g_autofree char *to = g_build_filename (sb, "rootfs", NULL);
    g_autofree char *from_up = g_build_filename (f->root, "system", "upper", NULL);
    g_autofree char *gen = g_build_filename (sb, "system", "1", NULL);
    g_autofree char *to_up = g_build_filename (gen, "tree", NULL);
    g_assert_cmpint (rename (from, to), ==, 0);
    /* the system layer, generation 1: what the sandbox's packages installed */
    g_assert_cmpint (g_mkdir_with_parents (gen, 0755), ==, 0);
    g_assert_cmpint (rename (from_up, to_up), ==, 0);
    tu_write (sb, "system/current", "1\n");
  }
  g_setenv ("GLIMPSE_SANDBOX_DIR", store, TRUE);
  g_setenv ("GLIMPSE_LAUNCHER", f->ctx->launcher, TRUE);

  {
    const char *argv[] = { glimpse, "export", NULL };
    tu_run (argv, &out, &status);
    g_assert_cmpint (status, ==, 0);
    g_assert_true (g_file_test (editor, G_FILE_TEST_EXISTS));
  }
  {
    const char *argv[] = { glimpse, "apps", "deb", NULL };
    g_clear_pointer (&out, g_free);
    tu_run (argv, &out, &status);
    g_assert_cmpint (status, ==, 0);
    g_assert_nonnull (strstr (out, "* org.example.Editor.desktop\tEditor\n"));
    g_assert_nonnull (strstr (out, "  nodisplay.desktop\tHandler (hidden)\n"));
  }
  if (geteuid () == 0)
    {
      /* the admin's choice, in sandbox.conf for every user */
      g_autofree char *conf = g_build_filename (sb, "sandbox.conf", NULL);
      g_autofree char *viewer = data_path (f, "applications/glimpse-deb+org.example.Viewer.desktop");
      g_autofree char *oldapp = data_path (f, "applications/glimpse-deb+kde4-oldapp.desktop");
      g_autofree char *fresh = data_path (f, "applications/glimpse-deb+new.desktop");
      g_autofree char *text = NULL;
      const char *hide[] = { glimpse, "remove-launcher", "deb", "org.example.Editor.desktop",
                             "kde4-oldapp.desktop", "org.example.Viewer.desktop", NULL };
      const char *show[] = { glimpse, "add-launcher", "deb", "org.example.Viewer.desktop", NULL };
      const char *sync[] = { glimpse, "export", NULL };

      /* taking out every app that was exported hides them all (an empty
       * Launchers= is every app: it once left them all in) */
      tu_run (hide, NULL, &status);
      g_assert_cmpint (status, ==, 0);
      tu_run (sync, NULL, &status);
      g_assert_cmpint (status, ==, 0);
      g_assert_false (g_file_test (editor, G_FILE_TEST_EXISTS));
      g_assert_false (g_file_test (viewer, G_FILE_TEST_EXISTS));
      g_assert_false (g_file_test (oldapp, G_FILE_TEST_EXISTS));

      /* adding one back is no allow-list: an app the sandbox's packages
       * install later is exported, the hidden ones stay hidden */
      tu_run (show, NULL, &status);
      g_assert_cmpint (status, ==, 0);
      tu_write (sb, "system/1/tree/usr/share/applications/new.desktop",
                "[Desktop Entry]\nType=Application\nName=New\nExec=new\n");
      tu_run (sync, NULL, &status);
      g_assert_cmpint (status, ==, 0);
      g_assert_true (g_file_test (viewer, G_FILE_TEST_EXISTS));
      g_assert_true (g_file_test (fresh, G_FILE_TEST_EXISTS));
      g_assert_false (g_file_test (editor, G_FILE_TEST_EXISTS));
      g_assert_false (g_file_test (oldapp, G_FILE_TEST_EXISTS));
      g_assert_true (g_file_get_contents (conf, &text, NULL, NULL));
      g_assert_nonnull (strstr (text, "\nLaunchers=\n"));
      g_assert_nonnull (strstr (text, "\nAddedLaunchers=org.example.Viewer.desktop;\n"));
      g_assert_nonnull (strstr (text, "\nHiddenLaunchers=org.example.Editor.desktop;kde4-oldapp.desktop;\n"));

      /* the user's own choice still goes over the admin's */
      {
        const char *added[] = { "org.example.Editor.desktop", NULL };
        const char *removed[] = { "org.example.Viewer.desktop", NULL };
        g_autoptr(GError) error = NULL;

        g_assert_true (gl_export_user_launchers_save (g_get_user_config_dir (), "deb", added, removed, &error));
        g_assert_no_error (error);
      }
      tu_run (sync, NULL, &status);
      g_assert_cmpint (status, ==, 0);
      g_assert_true (g_file_test (editor, G_FILE_TEST_EXISTS));
      g_assert_false (g_file_test (viewer, G_FILE_TEST_EXISTS));
      g_assert_true (g_file_test (fresh, G_FILE_TEST_EXISTS));
    }
  else
    {
      /* the user's own choice */
      const char *argv[] = { glimpse, "remove-launcher", "deb", "org.example.Viewer.desktop", NULL };
      g_autofree char *viewer = data_path (f, "applications/glimpse-deb+org.example.Viewer.desktop");
      tu_run (argv, NULL, &status);
      g_assert_cmpint (status, ==, 0);
      g_assert_false (g_file_test (viewer, G_FILE_TEST_EXISTS));
    }

  /* open: the sandbox's default for text/plain, the file's exact path */
  tu_write (f->root, "a file's \"name\" $x.txt", "hello\n");
  file = g_build_filename (f->root, "a file's \"name\" $x.txt", NULL);
  {
    const char *argv[] = { glimpse, "open", "deb", "--", file, NULL };
    const char *want[] = { "deb", "--", "env", "GREETING=hello world", "editor", "--title=a \"b\" $c \\d", file, NULL };
    tu_run (argv, NULL, &status);
    g_assert_cmpint (status, ==, 0);
    runs = tu_read_records (f->record);
    g_assert_cmpuint (runs->len, ==, 1);
    g_assert_cmpstrv (runs->pdata[0], want);
  }
  {
    const char *argv[] = { glimpse, "open", "nosuch", "x", NULL };
    tu_run (argv, NULL, &status);
    g_assert_cmpint (status, ==, 3);
  }
  {
    const char *argv[] = { glimpse, "unexport", "deb", NULL };
    tu_run (argv, NULL, &status);
    g_assert_cmpint (status, ==, 0);
    g_assert_false (g_file_test (editor, G_FILE_TEST_EXISTS));
  }
  {
    /* unexport sticks until "export ID" */
    const char *argv[] = { glimpse, "export", NULL };
    const char *argv2[] = { glimpse, "export", "deb", NULL };
    tu_run (argv, NULL, &status);
    g_assert_false (g_file_test (editor, G_FILE_TEST_EXISTS));
    tu_run (argv2, NULL, &status);
    g_assert_cmpint (status, ==, 0);
    g_assert_true (g_file_test (editor, G_FILE_TEST_EXISTS));
  }
  {
    /* a sandbox of the host: of two apps the host has too, the one its
     * packages hid (NoDisplay) is "(hidden)", which is why it is not in
     * the menu; it read "(the host has it too)" like the one exported */
    g_autofree char *hosty = g_build_filename (store, "hosty", NULL);
    g_autofree char *host_root = g_build_filename (f->root, "host-root", NULL);
    const char *argv[] = { glimpse, "apps", "hosty", NULL };
#define ENTRY "[Desktop Entry]\nType=Application\nName=%s\nExec=%s\n%s"

    tu_write (hosty, "sandbox.conf", "[Sandbox]\nProfile=host\nName=Host\nBase=host\nFamily=apt\n"
                                     "Created=2026-01-01T00:00:00Z\nUpdated=2026-01-01T00:00:00Z\n");
    tu_write (hosty, "system/current", "1\n");
    {
      g_autofree char *both = g_strdup_printf (ENTRY, "Both", "both", "");
      g_autofree char *quiet = g_strdup_printf (ENTRY, "Quiet", "quiet", "NoDisplay=true\n");
#undef ENTRY

      tu_write (hosty, "system/1/tree/usr/share/applications/both.desktop", both);
      tu_write (hosty, "system/1/tree/usr/share/applications/quiet.desktop", quiet);
      tu_write (host_root, "usr/share/applications/both.desktop", both);
      tu_write (host_root, "usr/share/applications/quiet.desktop", quiet);
    }
    g_setenv ("GLIMPSE_HOST_ROOT", host_root, TRUE);
    g_clear_pointer (&out, g_free);
    tu_run (argv, &out, &status);
    g_unsetenv ("GLIMPSE_HOST_ROOT");
    g_assert_cmpint (status, ==, 0);
    g_test_message ("%s", out);
    g_assert_nonnull (strstr (out, "* both.desktop\tBoth (the host has it too)\n"));
    g_assert_nonnull (strstr (out, "  quiet.desktop\tQuiet (hidden)\n"));
  }
}

/* The default of a type as GIO (gio mime) and xdg-utils (xdg-mime) see it. */
static void
assert_default (const char *type, const char *want)
{
  const char *gio[] = { "gio", "mime", type, NULL };
  const char *xdg_mime[] = { "xdg-mime", "query", "default", type, NULL };
  g_autofree char *out = NULL;
  g_autofree char *out2 = NULL;
  g_autofree char *line = g_strdup_printf ("Default application for “%s”: %s\n", type, want);
  g_autofree char *want_nl = g_strdup_printf ("%s\n", want);
  int status;

  tu_run (gio, &out, &status);
  g_test_message ("gio mime %s:\n%s", type, out);
  g_assert_nonnull (strstr (out, line));
  tu_run (xdg_mime, &out2, &status);
  g_assert_cmpstr (out2, ==, want_nl);
}

/* Issue 11 (1): exporting never makes a sandbox app the default for a
 * type a host app handles; it still shows in "Open With"; it may be the
 * default of a type only it handles; the user's choice wins; unexport
 * leaves nothing. */
static void
test_default_handler (Fixture *f, gconstpointer data)
{
  const char *data_dir = g_get_system_data_dirs ()[0];
  g_autofree char *host_apps = g_build_filename (data_dir, "applications", NULL);
  g_autofree char *list = data_path (f, "applications/mimeapps.list");
  const char *gio_plain[] = { "gio", "mime", "text/plain", NULL };
  g_autofree char *out = NULL;
  g_autofree char *xdg_mime = g_find_program_in_path ("xdg-mime");
  int status;

  if (xdg_mime == NULL)
    {
      gl_test_skip ("xdg-mime is not installed (apt install xdg-utils)");
      return;
    }
  tu_write (data_dir, "applications/host-editor.desktop",
            "[Desktop Entry]\nType=Application\nName=Host editor\nExec=true %F\nMimeType=text/plain;\n");
  {
    const char *udd[] = { "update-desktop-database", "-q", host_apps, NULL };
    tu_run (udd, NULL, &status);
  }
  assert_default ("text/plain", "host-editor.desktop");

  sync_ok (f, TRUE);
  assert_default ("text/plain", "host-editor.desktop");
  /* in "Open With" */
  tu_run (gio_plain, &out, &status);
  g_assert_nonnull (strstr (out, "glimpse-deb+org.example.Editor.desktop"));
  /* a type no host app handles: the sandbox's app may be its default */
  assert_default ("text/x-csrc", "glimpse-deb+org.example.Editor.desktop");

  /* the user chooses the sandbox's app: that stays, also after a sync */
  {
    const char *set[] = { "gio", "mime", "text/plain", "glimpse-deb+org.example.Editor.desktop", NULL };
    tu_run (set, NULL, &status);
    g_assert_cmpint (status, ==, 0);
  }
  sync_ok (f, TRUE);
  assert_default ("text/plain", "glimpse-deb+org.example.Editor.desktop");

  /* unexport: Glimpse's own default goes with its file */
  g_assert_true (gl_export_unexport (f->ctx, "deb", NULL));
  g_assert_false (g_file_test (list, G_FILE_TEST_EXISTS));
}

/* Issue 11 (4): the exported StartupWMClass is what a real GTK app's window
 * says it is (WM_CLASS instance, read with xprop under Xvfb). */
static void
test_wm_class (Fixture *f, gconstpointer data)
{
  static const char entry[] =
    "[Desktop Entry]\nType=Application\nName=Zen\nExec=zenity --info --title=glimpse-wmclass --text=hi\n";
  g_autofree char *xvfb = g_find_program_in_path ("Xvfb");
  g_autofree char *zenity = g_find_program_in_path ("zenity");
  g_autofree char *xprop = g_find_program_in_path ("xprop");
  g_autoptr(GKeyFile) in = g_key_file_new ();
  g_autoptr(GKeyFile) out = NULL;
  g_autofree char *wmclass = NULL;
  g_autofree char *display = NULL;
  g_autofree char *want = NULL;
  g_autoptr(GError) error = NULL;
  GPid xvfb_pid = 0, app_pid = 0;
  int fds[2];
  char buf[32] = { 0 };
  gboolean found = FALSE;

  if (xvfb == NULL || zenity == NULL || xprop == NULL)
    {
      gl_test_skip ("needs Xvfb, zenity and xprop (apt install xvfb zenity x11-utils)");
      return;
    }
  g_assert_true (g_key_file_load_from_data (in, entry, -1, G_KEY_FILE_NONE, NULL));
  out = gl_export_rewrite_entry (in, "org.example.Zen.desktop", "deb", "Deb", "/l", NULL, &error);
  g_assert_no_error (error);
  wmclass = g_key_file_get_string (out, G_KEY_FILE_DESKTOP_GROUP, "StartupWMClass", NULL);
  g_assert_cmpstr (wmclass, ==, "zenity");

  /* a private X server; it writes its display number to the pipe */
  g_assert_cmpint (pipe (fds), ==, 0);
  {
    g_autofree char *fd_arg = g_strdup_printf ("%d", fds[1]);
    const char *argv[] = { xvfb, "-displayfd", fd_arg, "-nolisten", "tcp", "-screen", "0", "640x480x24", NULL };
    g_assert_true (g_spawn_async (NULL, (char **) argv, NULL,
                                  G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_LEAVE_DESCRIPTORS_OPEN |
                                  G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL,
                                  NULL, NULL, &xvfb_pid, &error));
    g_assert_no_error (error);
  }
  close (fds[1]);
  g_assert_cmpint (read (fds[0], buf, sizeof buf - 1), >, 0);
  close (fds[0]);
  display = g_strdup_printf (":%d", atoi (buf));
  {
    const char *argv[] = { zenity, "--info", "--title=glimpse-wmclass", "--text=hi", NULL };
    g_auto(GStrv) envp = g_environ_setenv (g_get_environ (), "DISPLAY", display, TRUE);
    envp = g_environ_unsetenv (envp, "WAYLAND_DISPLAY");
    envp = g_environ_unsetenv (envp, "G_DEBUG");   /* the tests' fatal-criticals is not the app's */
    /* GTK needs the real MIME database and pixbuf loaders */
    envp = g_environ_setenv (envp, "XDG_DATA_DIRS", "/usr/local/share:/usr/share", TRUE);
    envp = g_environ_setenv (envp, "NO_AT_BRIDGE", "1", TRUE);
    g_assert_true (g_spawn_async (NULL, (char **) argv, envp,
                                  G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL,
                                  NULL, NULL, &app_pid, &error));
    g_assert_no_error (error);
  }
  want = g_strdup_printf ("WM_CLASS(STRING) = \"%s\", ", wmclass);
  for (int i = 0; i < 200 && !found; i++)
    {
      g_autofree char *prop = NULL;
      g_autofree char *disp_env = g_strdup_printf ("DISPLAY=%s", display);
      const char *argv[] = { xprop, "-name", "glimpse-wmclass", "WM_CLASS", NULL };
      const char *env[] = { disp_env, NULL };
      int status;

      tu_run_env (argv, env, &prop, &status);
      if (status == 0 && prop != NULL && strstr (prop, "WM_CLASS") != NULL)
        {
          g_test_message ("%s", prop);
          g_assert_true (g_str_has_prefix (prop, want));
          found = TRUE;
        }
      else
        g_usleep (100000);
    }
  kill (app_pid, SIGTERM);
  kill (xvfb_pid, SIGTERM);
  waitpid (app_pid, NULL, 0);
  waitpid (xvfb_pid, NULL, 0);
  g_spawn_close_pid (app_pid);
  g_spawn_close_pid (xvfb_pid);
  g_assert_true (found);
}

int
main (int argc, char **argv)
{
  g_setenv ("GSETTINGS_BACKEND", "memory", TRUE);
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_setup, fn, fixture_teardown)
  ADD ("/integration/exported-files", test_exported_files);
  ADD ("/integration/desktop-file-validate", test_validate);
  ADD ("/integration/menu-tree", test_menu_tree);
  ADD ("/integration/gio-launch", test_gio_launch);
  ADD ("/integration/reexport", test_reexport);
  ADD ("/integration/conflicts", test_conflicts);
  ADD ("/integration/removal", test_removal);
  ADD ("/integration/removal-fresh", test_removal_fresh);
  ADD ("/integration/cli", test_cli);
  ADD ("/integration/file-manager-actions", test_fm_actions);
  ADD ("/integration/file-manager-one-entry", test_fm_one_entry);
  ADD ("/integration/file-manager-same-name", test_fm_same_name);
  ADD ("/integration/unchanged-not-read", test_unchanged_not_read);
  ADD ("/integration/export-lock", test_export_lock);
  ADD ("/integration/temporaries", test_temporaries);
  ADD ("/integration/control-names", test_control_names);
  ADD ("/integration/intent-journal", test_intent_journal);
  ADD ("/integration/power-cut", test_power_cut);
  ADD ("/integration/sandbox-manifest-corrupt", test_sandbox_manifest_corrupt);
  ADD ("/integration/default-handler", test_default_handler);
  ADD ("/integration/wm-class", test_wm_class);
  return g_test_run ();
}
