/* xdg-test-util.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <stdlib.h>
#include <sys/wait.h>

#include <gio/gdesktopappinfo.h>

#include "xdg-test-util.h"
#include "gl-fsutil.h"

const char tu_editor_entry[] =
  "[Desktop Entry]\n"
  "# a comment that goes\n"
  "Version=1.0\n"
  "Type=Application\n"
  "Name=Editor\n"
  "Name[de]=Bearbeiter\n"
  "Name[fr]=Éditeur\n"
  "GenericName=Text Editor\n"
  "GenericName[de]=Texteditor\n"
  "Comment=Edit text\n"
  "Comment[de]=Text bearbeiten\n"
  "Exec=env \"GREETING=hello world\" editor \"--title=a \\\\\"b\\\\\" \\\\$c \\\\\\\\d\" %F\n"
  "TryExec=editor\n"
  "Path=/srv/work\n"
  "DBusActivatable=true\n"
  "Implements=org.freedesktop.FileManager1;\n"
  "X-Ubuntu-Gettext-Domain=editor\n"
  "Icon=org.example.Editor\n"
  "Terminal=false\n"
  "Categories=Utility;TextEditor;\n"
  "MimeType=text/plain;text/x-csrc;\n"
  "Keywords=text;edit;\n"
  "Keywords[de]=Text;\n"
  "Actions=new-window;dbus-only;\n"
  "StartupNotify=true\n"
  "\n"
  "[Desktop Action new-window]\n"
  "Name=New Window\n"
  "Name[de]=Neues Fenster\n"
  "Exec=editor --new-window %U\n"
  "\n"
  "[Desktop Action dbus-only]\n"
  "Name=Activated over D-Bus\n";

void
tu_write (const char *root, const char *rel, const char *contents)
{
  g_autofree char *path = g_build_filename (root, rel, NULL);
  g_autofree char *dir = g_path_get_dirname (path);
  g_autoptr(GError) error = NULL;

  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  g_file_set_contents (path, contents, -1, &error);
  g_assert_no_error (error);
}

void
tu_write_png (const char *root, const char *rel, int size)
{
  g_autofree char *path = g_build_filename (root, rel, NULL);
  g_autofree char *dir = g_path_get_dirname (path);
  guchar png[33] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R' };
  g_autoptr(GError) error = NULL;

  png[16] = png[20] = (guchar) (size >> 24);
  png[17] = png[21] = (guchar) (size >> 16);
  png[18] = png[22] = (guchar) (size >> 8);
  png[19] = png[23] = (guchar) size;
  png[24] = 8;
  png[25] = 6;
  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  g_file_set_contents (path, (const char *) png, sizeof png, &error);
  g_assert_no_error (error);
}

void
tu_symlink (const char *root, const char *rel, const char *target)
{
  g_autofree char *path = g_build_filename (root, rel, NULL);
  g_autofree char *dir = g_path_get_dirname (path);

  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  g_assert_cmpint (symlink (target, path), ==, 0);
}

gboolean
tu_whiteout (const char *root, const char *rel)
{
  g_autofree char *path = g_build_filename (root, rel, NULL);
  g_autofree char *dir = g_path_get_dirname (path);

  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  return mknod (path, S_IFCHR | 0000, makedev (0, 0)) == 0;
}

void
tu_tree_free (TuTree *root)
{
  if (root != NULL)
    gl_rm_rf (root, NULL, NULL);
  g_free (root);
}

char *
tu_make_tree (void)
{
  g_autoptr(GError) error = NULL;
  char *root = g_dir_make_tmp ("glimpse-tree-XXXXXX", &error);
  g_autofree char *rootfs = NULL;
  g_autofree char *upper = NULL;

  g_assert_no_error (error);
  rootfs = g_build_filename (root, "rootfs", NULL);
  upper = g_build_filename (root, "system", "upper", NULL);

  tu_write (rootfs, "usr/share/applications/org.example.Editor.desktop", tu_editor_entry);
  tu_write (rootfs, "usr/share/applications/nodisplay.desktop",
            "[Desktop Entry]\nType=Application\nName=Handler\nExec=handler %u\nNoDisplay=true\n"
            "MimeType=x-scheme-handler/glimpsetest;\n");
  tu_write (rootfs, "usr/share/applications/link.desktop",
            "[Desktop Entry]\nType=Link\nName=Web\nURL=https://example.com/\n");
  tu_write (rootfs, "usr/share/applications/gone.desktop",
            "[Desktop Entry]\nType=Application\nName=Gone\nExec=gone\n");
  tu_write (rootfs, "usr/share/applications/kde4/oldapp.desktop",
            "[Desktop Entry]\nType=Application\nName=Old App\nExec=oldapp -caption %c %i %U\n"
            "Icon=breezy\nCategories=Qt;KDE;Utility;\n");
  tu_write (rootfs, "etc/xdg/mimeapps.list",
            "[Default Applications]\ntext/plain=missing.desktop;org.example.Editor.desktop;\n");
  tu_write (upper, "usr/share/applications/org.example.Viewer.desktop",
            "[Desktop Entry]\nType=Application\nName=Viewer\nExec=viewer %f\n"
            "Icon=/usr/share/pixmaps/viewer.png\nCategories=Graphics;\nMimeType=image/png;\n"
            "NotShowIn=KDE;\nStartupWMClass=ViewerWin\n");
  if (!tu_whiteout (upper, "usr/share/applications/gone.desktop"))
    g_test_message ("mknod not allowed: no whiteout in the fake tree");

  /* icons: hicolor at two sizes and scalable, a link out of the theme */
  tu_write_png (rootfs, "usr/share/icons/hicolor/48x48/apps/real-editor.png", 48);
  tu_symlink (rootfs, "usr/share/icons/hicolor/48x48/apps/org.example.Editor.png",
              "/usr/share/icons/hicolor/48x48/apps/real-editor.png");
  tu_write_png (rootfs, "usr/share/icons/hicolor/256x256/apps/org.example.Editor.png", 256);
  tu_write (rootfs, "usr/share/icons/hicolor/scalable/apps/org.example.Editor.svg",
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"16\" height=\"16\"/>\n");
  tu_write_png (rootfs, "usr/share/icons/hicolor/48x48@2/apps/org.example.Editor.png", 96);
  /* breeze layout: context first, size second */
  tu_write_png (rootfs, "usr/share/icons/breeze/apps/48/breezy.png", 48);
  tu_write (rootfs, "usr/share/icons/breeze/apps/scalable/breezy.svg", "<svg/>\n");
  /* pixmaps, through an absolute link that must stay inside the tree */
  tu_write_png (rootfs, "usr/share/viewer/real.png", 64);
  tu_symlink (rootfs, "usr/share/pixmaps/viewer.png", "/usr/share/viewer/real.png");
  tu_write_png (rootfs, "usr/share/pixmaps/oddsize.png", 100);
  tu_write (rootfs, "usr/share/pixmaps/old.xpm", "/* XPM */\n");
  return root;
}

GlExportSource *
tu_source (const char *root, const char *id, const char *name)
{
  GlExportSource *s = gl_export_source_new (id, name);
  g_autofree char *rootfs = g_build_filename (root, "rootfs", NULL);
  g_autofree char *upper = g_build_filename (root, "system", "upper", NULL);
  g_autofree char *a1 = g_build_filename (upper, "usr/share/applications", NULL);
  g_autofree char *a2 = g_build_filename (rootfs, "usr/share/applications", NULL);
  const char *apps[] = { a1, a2, NULL };
  const char *roots[] = { upper, rootfs, NULL };

  s->app_dirs = g_strdupv ((GStrv) apps);
  s->data_roots = g_strdupv ((GStrv) roots);
  return s;
}

static void
snapshot_walk (const char *base, const char *rel, GPtrArray *lines)
{
  g_autofree char *path = g_build_filename (base, rel, NULL);
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *crel = *rel ? g_build_filename (rel, name, NULL) : g_strdup (name);
      g_autofree char *cpath = g_build_filename (base, crel, NULL);
      g_autofree char *sum = NULL;
      struct stat st;

      g_assert_cmpint (lstat (cpath, &st), ==, 0);
      if (S_ISREG (st.st_mode))
        {
          g_autofree char *data = NULL;
          gsize len;
          g_assert_true (g_file_get_contents (cpath, &data, &len, NULL));
          sum = g_compute_checksum_for_data (G_CHECKSUM_SHA256, (const guchar *) data, len);
        }
      else if (S_ISLNK (st.st_mode))
        sum = g_file_read_link (cpath, NULL);
      g_ptr_array_add (lines, g_strdup_printf ("%s %o %s", crel, st.st_mode, sum ? sum : "-"));
      if (S_ISDIR (st.st_mode))
        snapshot_walk (base, crel, lines);
    }
}

static gint
cmp_str (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

char *
tu_snapshot (const char *dir)
{
  g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func (g_free);

  snapshot_walk (dir, "", lines);
  g_ptr_array_sort (lines, cmp_str);
  g_ptr_array_add (lines, NULL);
  return g_strjoinv ("\n", (GStrv) lines->pdata);
}

void
tu_run (const char * const *argv, char **out, int *status)
{
  tu_run_env (argv, NULL, out, status);
}

void
tu_run_env (const char * const *argv, const char * const *extra_env, char **out, int *status)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *err = NULL;
  g_autofree char *discard = NULL;
  int wait_status = 0;
  g_auto(GStrv) envp = g_get_environ ();
  g_autofree char *data_dirs = g_strjoinv (":", (GStrv) g_get_system_data_dirs ());
  g_autofree char *config_dirs = g_strjoinv (":", (GStrv) g_get_system_config_dirs ());

  /* the isolated directories, for tools that read the environment */
  envp = g_environ_setenv (envp, "XDG_DATA_HOME", g_get_user_data_dir (), TRUE);
  envp = g_environ_setenv (envp, "XDG_CONFIG_HOME", g_get_user_config_dir (), TRUE);
  envp = g_environ_setenv (envp, "XDG_DATA_DIRS", data_dirs, TRUE);
  envp = g_environ_setenv (envp, "XDG_CONFIG_DIRS", config_dirs, TRUE);
  envp = g_environ_setenv (envp, "HOME", g_get_home_dir (), TRUE);
  for (gsize i = 0; extra_env != NULL && extra_env[i] != NULL; i++)
    {
      g_auto(GStrv) kv = g_strsplit (extra_env[i], "=", 2);
      envp = kv[1] != NULL ? g_environ_setenv (envp, kv[0], kv[1], TRUE) : g_environ_unsetenv (envp, kv[0]);
    }
  g_assert_true (g_spawn_sync (NULL, (char **) argv, envp, G_SPAWN_SEARCH_PATH,
                               NULL, NULL, out != NULL ? out : &discard, &err, &wait_status, &error));
  g_assert_no_error (error);
  if (err != NULL && *err != '\0')
    g_test_message ("%s: %s", argv[0], err);
  *status = WIFEXITED (wait_status) ? WEXITSTATUS (wait_status) : -1;
}

/* the records of the argv recorder: one GStrv per run */
GPtrArray *
tu_read_records (const char *path)
{
  g_autofree char *data = NULL;
  gsize len = 0;
  GPtrArray *runs = g_ptr_array_new_with_free_func ((GDestroyNotify) g_strfreev);
  gsize pos = 0;

  if (!g_file_get_contents (path, &data, &len, NULL))
    return runs;
  while (pos < len)
    {
      int n = atoi (data + pos);
      g_autoptr(GStrvBuilder) b = g_strv_builder_new ();

      pos += strlen (data + pos) + 1;
      for (int i = 0; i < n; i++)
        {
          g_strv_builder_add (b, data + pos);
          pos += strlen (data + pos) + 1;
        }
      g_ptr_array_add (runs, g_strv_builder_end (b));
    }
  return runs;
}

static void
child_exited (GPid pid, int status, gpointer user_data)
{
  guint *pending = user_data;
  g_spawn_close_pid (pid);
  (*pending)--;
}

static void
got_pid (GDesktopAppInfo *info, GPid pid, gpointer user_data)
{
  guint *pending = user_data;
  (*pending)++;
  g_child_watch_add (pid, child_exited, pending);
}

gboolean
tu_timed_out (gpointer user_data)
{
  g_assert_not_reached ();
  return G_SOURCE_REMOVE;
}

void
tu_launch_and_wait (const char *desktop_file, GList *uris)
{
  g_autoptr(GDesktopAppInfo) info = g_desktop_app_info_new_from_filename (desktop_file);
  g_autoptr(GError) error = NULL;
  guint pending = 0;
  guint timeout;

  g_assert_nonnull (info);
  g_assert_true (g_desktop_app_info_launch_uris_as_manager (info, uris, NULL, G_SPAWN_DO_NOT_REAP_CHILD,
                                                            NULL, NULL, got_pid, &pending, &error));
  g_assert_no_error (error);
  timeout = g_timeout_add_seconds (20, tu_timed_out, NULL);
  while (pending > 0)
    g_main_context_iteration (NULL, TRUE);
  g_source_remove (timeout);
}


GPtrArray *
tu_wait_records (const char *path)
{
  guint timeout = g_timeout_add_seconds (20, tu_timed_out, NULL);
  GPtrArray *runs;

  /* the file is created before the record is written into it */
  while ((runs = tu_read_records (path))->len == 0)
    {
      g_ptr_array_unref (runs);
      g_main_context_iteration (NULL, FALSE);
      g_usleep (10000);
    }
  g_source_remove (timeout);
  return runs;
}
