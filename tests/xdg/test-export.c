/* test-export: entry rules, application lists, icons, Thunar merge, app
 * folders, MIME defaults — against a fake sandbox tree
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "gl-app-folders.h"
#include "gl-exec.h"
#include "gl-export.h"
#include "gl-export-private.h"
#include "gl-export-store.h"
#include "gl-fm-actions.h"
#include "gl-icon.h"
#include "gl-tree.h"
#include "gl-open.h"
#include "xdg-test-util.h"
#include "gl-test-skip.h"

#define DE G_KEY_FILE_DESKTOP_GROUP

static GKeyFile *
rewrite_editor (const char *icon_name)
{
  g_autoptr(GKeyFile) in = g_key_file_new ();
  g_autoptr(GError) error = NULL;
  GKeyFile *out;

  g_assert_true (g_key_file_load_from_data (in, tu_editor_entry, -1,
                                            G_KEY_FILE_KEEP_COMMENTS | G_KEY_FILE_KEEP_TRANSLATIONS, &error));
  out = gl_export_rewrite_entry (in, "org.example.Editor.desktop", "deb", "Debian “sid”",
                                 "/usr/bin/glimpse-launch", icon_name, &error);
  g_assert_no_error (error);
  g_assert_nonnull (out);
  return out;
}

static void
assert_key (GKeyFile *kf, const char *group, const char *key, const char *want)
{
  g_autofree char *v = g_key_file_get_string (kf, group, key, NULL);
  g_assert_cmpstr (v, ==, want);
}

static void
test_rewrite_rules (void)
{
  g_autoptr(GKeyFile) kf = rewrite_editor ("glimpse-deb-org.example.Editor");
  g_autofree char *data = g_key_file_to_data (kf, NULL, NULL);
  g_auto(GStrv) argv = NULL;
  g_autofree char *exec = NULL;
  const char *want_argv[] = { "/usr/bin/glimpse-launch", "deb", "--", "env", "GREETING=hello world",
                              "editor", "--title=a \"b\" $c \\d", "%F", NULL };

  /* Exec: the wrapper, the arguments exactly, the field code intact */
  exec = g_key_file_get_string (kf, DE, "Exec", NULL);
  g_assert_true (gl_exec_split (exec, &argv, NULL));
  g_assert_cmpstrv (argv, want_argv);
  assert_key (kf, "Desktop Action new-window", "Exec",
              "/usr/bin/glimpse-launch deb -- editor --new-window %U");
  /* an action without Exec is dropped with its group */
  g_assert_false (g_key_file_has_group (kf, "Desktop Action dbus-only"));
  assert_key (kf, DE, "Actions", "new-window;");

  /* names in every language */
  assert_key (kf, DE, "Name", "Editor — Debian “sid”");
  assert_key (kf, DE, "Name[de]", "Bearbeiter — Debian “sid”");
  assert_key (kf, DE, "Name[fr]", "Éditeur — Debian “sid”");
  assert_key (kf, DE, "GenericName", "Text Editor — Debian “sid”");
  assert_key (kf, DE, "GenericName[de]", "Texteditor — Debian “sid”");
  assert_key (kf, DE, "Comment[de]", "Text bearbeiten");
  assert_key (kf, "Desktop Action new-window", "Name[de]", "Neues Fenster");

  /* categories */
  assert_key (kf, DE, "Categories", "X-Glimpse;X-Glimpse-deb;");
  assert_key (kf, DE, "X-Glimpse-Categories", "Utility;TextEditor;");
  assert_key (kf, DE, "X-Glimpse-Sandbox", "deb");
  assert_key (kf, DE, "X-Glimpse-Desktop-Id", "org.example.Editor.desktop");

  /* window matching */
  assert_key (kf, DE, "StartupWMClass", "editor");   /* the program GTK and Qt name the window after */

  /* nothing that runs or finds the app outside the sandbox */
  assert_key (kf, DE, "TryExec", "/usr/bin/glimpse-launch");
  assert_key (kf, DE, "X-Glimpse-TryExec", "editor");
  g_assert_false (g_key_file_has_key (kf, DE, "Path", NULL));
  assert_key (kf, DE, "X-Glimpse-Path", "/srv/work");
  g_assert_false (g_key_file_has_key (kf, DE, "DBusActivatable", NULL));
  g_assert_false (g_key_file_has_key (kf, DE, "Implements", NULL));
  g_assert_false (g_key_file_has_key (kf, DE, "X-Ubuntu-Gettext-Domain", NULL));

  /* kept */
  assert_key (kf, DE, "MimeType", "text/plain;text/x-csrc;");
  assert_key (kf, DE, "Keywords[de]", "Text;");
  assert_key (kf, DE, "Terminal", "false");
  assert_key (kf, DE, "StartupNotify", "true");
  assert_key (kf, DE, "Icon", "glimpse-deb-org.example.Editor");
  /* no blank line inside [Desktop Entry]: the group ends where the next
   * begins */
  {
    const char *next = strstr (data, "\n[Desktop Action new-window]");
    g_autofree char *head = NULL;

    g_assert_nonnull (next);
    head = g_strndup (data, next - data);
    g_assert_true (g_str_has_prefix (head, "[Desktop Entry]\n"));
    g_assert_null (strstr (head, "\n\n"));
  }
  /* built from scratch: the original's comments do not survive (a bare CR
   * in one is a line end to pyxdg) */
  g_assert_null (strstr (data, "# a comment"));
}

static void
test_rewrite_keys_kept (void)
{
  static const char entry[] =
    "[Desktop Entry]\nType=Application\nName=V\nExec=v\nOnlyShowIn=GNOME;\nNotShowIn=KDE;\n"
    "StartupWMClass=Custom\nIcon=/opt/v.png\nX-Flatpak=org.v.V\nX-DBUS-ServiceName=org.v\n";
  g_autoptr(GKeyFile) in = g_key_file_new ();
  g_autoptr(GKeyFile) out = NULL;
  g_autoptr(GKeyFile) out2 = NULL;

  g_assert_true (g_key_file_load_from_data (in, entry, -1, G_KEY_FILE_KEEP_TRANSLATIONS, NULL));
  out = gl_export_rewrite_entry (in, "v.desktop", "x", "X", "/l", NULL, NULL);
  g_assert_nonnull (out);
  assert_key (out, DE, "OnlyShowIn", "GNOME;");
  assert_key (out, DE, "NotShowIn", "KDE;");
  assert_key (out, DE, "StartupWMClass", "Custom");
  /* an icon path that was not found points outside the sandbox: gone */
  g_assert_false (g_key_file_has_key (out, DE, "Icon", NULL));
  g_assert_false (g_key_file_has_key (out, DE, "X-Flatpak", NULL));
  g_assert_false (g_key_file_has_key (out, DE, "X-DBUS-ServiceName", NULL));
  g_assert_false (g_key_file_has_key (out, DE, "TryExec", NULL));

  /* an unresolved themed icon stays: the host's theme may have it */
  g_key_file_set_string (in, DE, "Icon", "v");
  out2 = gl_export_rewrite_entry (in, "v.desktop", "x", "X", "/l", NULL, NULL);
  assert_key (out2, DE, "Icon", "v");
}

static void
test_rewrite_rejects (void)
{
  static const struct { const char *entry; int code; } cases[] = {
    { "[Desktop Entry]\nType=Link\nName=L\nURL=https://x/\n", GL_EXPORT_ERROR_NOT_APPLICATION },
    { "[Desktop Entry]\nType=Application\nName=H\nExec=h\nHidden=true\n", GL_EXPORT_ERROR_NOT_APPLICATION },
    { "[Desktop Entry]\nType=Application\nName=D\nDBusActivatable=true\n", GL_EXPORT_ERROR_NO_EXEC },
    { "[Desktop Entry]\nType=Application\nName=Q\nExec=q \"open\n", GL_EXEC_ERROR_QUOTING },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GKeyFile) in = g_key_file_new ();
      g_autoptr(GKeyFile) out = NULL;
      g_autoptr(GError) error = NULL;

      g_assert_true (g_key_file_load_from_data (in, cases[i].entry, -1, G_KEY_FILE_NONE, NULL));
      out = gl_export_rewrite_entry (in, "bad.desktop", "x", "X", "/l", NULL, &error);
      g_assert_null (out);
      g_assert_nonnull (error);
      g_assert_cmpint (error->code, ==, cases[i].code);
      g_assert_nonnull (strstr (error->message, "bad.desktop"));
    }
}

static GlApp *
find (GPtrArray *apps, const char *id)
{
  for (guint i = 0; i < apps->len; i++)
    if (strcmp (((GlApp *) apps->pdata[i])->desktop_id, id) == 0)
      return apps->pdata[i];
  return NULL;
}

static void
test_list_apps (void)
{
  g_autoptr(TuTree) root = tu_make_tree ();
  g_autoptr(GlExportSource) s = tu_source (root, "deb", "Debian");
  g_autoptr(GPtrArray) apps = gl_export_source_list_apps (s, NULL);
  g_autofree char *gone_wh = g_build_filename (root, "system/upper/usr/share/applications/gone.desktop", NULL);
  gboolean have_whiteout = g_file_test (gone_wh, G_FILE_TEST_EXISTS);
  GlApp *a;

  g_assert_nonnull (apps);
  /* no launcher list: every visible application */
  g_assert_true ((a = find (apps, "org.example.Editor.desktop")) && a->exported && a->visible);
  g_assert_true ((a = find (apps, "org.example.Viewer.desktop")) && a->exported);
  g_assert_true ((a = find (apps, "kde4-oldapp.desktop")) && a->exported);
  g_assert_true ((a = find (apps, "nodisplay.desktop")) && !a->exported && a->runnable && !a->visible);
  g_assert_true ((a = find (apps, "link.desktop")) && !a->exported && !a->runnable);
  if (have_whiteout)
    g_assert_null (find (apps, "gone.desktop"));
  else
    gl_test_skip ("mknod of a whiteout is not permitted here (run as root): hidden entries not checked");
  g_clear_pointer (&apps, g_ptr_array_unref);

  /* the admin's list, then the user's choice on top */
  s->launchers = g_strsplit ("org.example.Viewer.desktop;nodisplay.desktop;link.desktop", ";", -1);
  s->added = g_strsplit ("kde4-oldapp.desktop", ";", -1);
  s->removed = g_strsplit ("org.example.Viewer.desktop", ";", -1);
  apps = gl_export_source_list_apps (s, NULL);
  g_assert_false (find (apps, "org.example.Editor.desktop")->exported);
  g_assert_false (find (apps, "org.example.Viewer.desktop")->exported);
  g_assert_true (find (apps, "nodisplay.desktop")->exported);   /* chosen: for Open With */
  g_assert_false (find (apps, "link.desktop")->exported);       /* cannot be run */
  g_assert_true (find (apps, "kde4-oldapp.desktop")->exported);
  g_clear_pointer (&apps, g_ptr_array_unref);

  /* what the sandbox's own packages installed (Viewer, in the system layer)
   * is exported whatever the default among the base's apps; then the
   * admin's sets, then the user's own over them */
  g_clear_pointer (&s->added, g_strfreev);
  g_clear_pointer (&s->removed, g_strfreev);
  g_strfreev (s->launchers);
  s->launchers = g_strsplit ("org.example.Editor.desktop", ";", -1);
  s->system_apps_dir = g_build_filename (root, "system/upper/usr/share/applications", NULL);
  apps = gl_export_source_list_apps (s, NULL);
  g_assert_true ((a = find (apps, "org.example.Viewer.desktop")) && a->own && a->exported);
  g_assert_true ((a = find (apps, "org.example.Editor.desktop")) && !a->own && a->exported);
  g_assert_false (find (apps, "kde4-oldapp.desktop")->exported);
  g_assert_false (find (apps, "nodisplay.desktop")->exported);
  g_clear_pointer (&apps, g_ptr_array_unref);

  /* an upgrade of an app the base ships follows the default list: an
   * update does not put every upgraded app into the menu */
  {
    g_autofree char *upgraded = g_build_filename (root, "system/upper/usr/share/applications/"
                                                  "org.example.Editor.desktop", NULL);

    tu_write (root, "system/upper/usr/share/applications/org.example.Editor.desktop", tu_editor_entry);
    g_strfreev (s->launchers);
    s->launchers = g_strsplit ("kde4-oldapp.desktop", ";", -1);
    apps = gl_export_source_list_apps (s, NULL);
    g_assert_true ((a = find (apps, "org.example.Editor.desktop")) && a->own && !a->exported);
    g_assert_true ((a = find (apps, "org.example.Viewer.desktop")) && a->own && a->exported);
    g_assert_true (find (apps, "kde4-oldapp.desktop")->exported);
    g_clear_pointer (&apps, g_ptr_array_unref);
    g_assert_cmpint (unlink (upgraded), ==, 0);
    g_strfreev (s->launchers);
    s->launchers = g_strsplit ("org.example.Editor.desktop", ";", -1);
  }

  s->admin_hidden = g_strsplit ("org.example.Viewer.desktop;org.example.Editor.desktop", ";", -1);
  s->admin_added = g_strsplit ("kde4-oldapp.desktop", ";", -1);
  apps = gl_export_source_list_apps (s, NULL);
  g_assert_false (find (apps, "org.example.Viewer.desktop")->exported);
  g_assert_false (find (apps, "org.example.Editor.desktop")->exported);
  g_assert_true (find (apps, "kde4-oldapp.desktop")->exported);
  g_clear_pointer (&apps, g_ptr_array_unref);

  s->added = g_strsplit ("org.example.Viewer.desktop", ";", -1);
  s->removed = g_strsplit ("kde4-oldapp.desktop", ";", -1);
  apps = gl_export_source_list_apps (s, NULL);
  g_assert_true (find (apps, "org.example.Viewer.desktop")->exported);
  g_assert_false (find (apps, "org.example.Editor.desktop")->exported);
  g_assert_false (find (apps, "kde4-oldapp.desktop")->exported);
  g_clear_pointer (&apps, g_ptr_array_unref);

  /* Base=host: only what the system layer has; an app the host has too
   * (a newer version the sandbox installed) is exported as well */
  {
    g_autoptr(GlExportSource) h = gl_export_source_new ("h", "Host+");
    g_autofree char *host = g_build_filename (root, "host", NULL);
    g_autofree char *upper_apps = g_build_filename (root, "system/upper/usr/share/applications", NULL);
    const char *dirs[] = { upper_apps, NULL };

    tu_write (host, "usr/share/applications/org.example.Viewer.desktop",
              "[Desktop Entry]\nType=Application\nName=Viewer\nExec=viewer\n");
    tu_write (root, "system/upper/usr/share/applications/new.desktop",
              "[Desktop Entry]\nType=Application\nName=New\nExec=new\n");
    h->app_dirs = g_strdupv ((GStrv) dirs);
    h->exclude_apps_dir = g_build_filename (host, "usr/share/applications", NULL);
    apps = gl_export_source_list_apps (h, NULL);
    g_assert_true (find (apps, "org.example.Viewer.desktop")->on_host);
    g_assert_true (find (apps, "org.example.Viewer.desktop")->exported);
    g_assert_true (find (apps, "new.desktop")->exported);
    g_assert_null (find (apps, "org.example.Editor.desktop"));
    g_clear_pointer (&apps, g_ptr_array_unref);

    /* with a default list: a newer version of an app the host has follows
     * it; what the host does not have is exported */
    h->launchers = g_strsplit ("other.desktop", ";", -1);
    h->system_apps_dir = g_strdup (upper_apps);
    apps = gl_export_source_list_apps (h, NULL);
    g_assert_true ((a = find (apps, "org.example.Viewer.desktop")) && a->own && !a->exported);
    g_assert_true ((a = find (apps, "new.desktop")) && a->own && a->exported);
  }
}

/* A system layer's applications directory made opaque (removed and made
 * again by a package operation) hides the base's below it, as the view
 * does; without the mark both show */
static void
test_list_apps_opaque (void)
{
  g_autoptr(TuTree) root = tu_make_tree ();
  g_autoptr(GlExportSource) s = tu_source (root, "deb", "Debian");
  g_autofree char *upper_apps = g_build_filename (root, "system/upper/usr/share/applications", NULL);
  g_autoptr(GPtrArray) apps = gl_export_source_list_apps (s, NULL);

  g_assert_nonnull (find (apps, "org.example.Editor.desktop"));
  g_assert_nonnull (find (apps, "org.example.Viewer.desktop"));
  g_clear_pointer (&apps, g_ptr_array_unref);
  if (setxattr (upper_apps, "user.overlay.opaque", "y", 1, 0) != 0)
    {
      gl_test_skip ("no user xattrs on this file system (user.overlay.opaque): opaque directories not checked");
      return;
    }
  apps = gl_export_source_list_apps (s, NULL);
  g_assert_null (find (apps, "org.example.Editor.desktop"));
  g_assert_nonnull (find (apps, "org.example.Viewer.desktop"));
  g_clear_pointer (&apps, g_ptr_array_unref);

  /* (any other value is not the mark) */
  g_assert_cmpint (setxattr (upper_apps, "user.overlay.opaque", "n", 1, 0), ==, 0);
  apps = gl_export_source_list_apps (s, NULL);
  g_assert_nonnull (find (apps, "org.example.Editor.desktop"));
}

/* What the system layer has above its applications directory hides the
 * base's applications as the view does: usr/share removed and made again
 * (opaque), or the applications directory removed (a whiteout) or replaced
 * by a file or a link.  The export listed the base's apps in each case
 * (and followed the link on the host side). */
static void
test_list_apps_hidden_above (void)
{
  enum { OPAQUE_PARENT, WHITEOUT, REG_FILE, SYMLINK, N_CASES };

  for (int c = 0; c < N_CASES; c++)
    {
      g_autoptr(TuTree) root = tu_make_tree ();
      g_autoptr(GlExportSource) s = tu_source (root, "deb", "Debian");
      g_autofree char *share = g_build_filename (root, "system/upper/usr/share", NULL);
      g_autofree char *upper_apps = g_build_filename (share, "applications", NULL);
      g_autoptr(GPtrArray) apps = NULL;

      g_test_message ("case %d", c);
      if (c == OPAQUE_PARENT)
        {
          if (setxattr (share, "user.overlay.opaque", "y", 1, 0) != 0)
            {
              gl_test_skip ("no user xattrs on this file system (user.overlay.opaque): not checked");
              continue;
            }
        }
      else
        {
          g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", upper_apps);
          g_assert_cmpint (system (cmd), ==, 0);
          if (c == WHITEOUT && mknod (upper_apps, S_IFCHR | 0600, 0) != 0)
            {
              gl_test_skip ("cannot make a whiteout (a character device 0:0) here: not checked");
              continue;
            }
          if (c == REG_FILE)
            g_assert_true (g_file_set_contents (upper_apps, "", 0, NULL));
          /* (a link to a directory of the host with an entry in it: the
           * view resolves it inside the sandbox, the host side does not
           * follow it) */
          if (c == SYMLINK)
            {
              g_autofree char *host_apps = g_build_filename (root, "rootfs/usr/share/applications", NULL);
              g_assert_cmpint (symlink (host_apps, upper_apps), ==, 0);
            }
        }
      apps = gl_export_source_list_apps (s, NULL);
      g_assert_null (find (apps, "org.example.Editor.desktop"));
      if (c == OPAQUE_PARENT)
        g_assert_nonnull (find (apps, "org.example.Viewer.desktop"));
    }
}

static void
test_root_resolve (void)
{
  g_autoptr(TuTree) root = tu_make_tree ();
  g_autofree char *rootfs = g_build_filename (root, "rootfs", NULL);
  g_autofree char *got = gl_tree_resolve (rootfs, "/usr/share/pixmaps/viewer.png");
  g_autofree char *want = g_build_filename (rootfs, "usr/share/viewer/real.png", NULL);
  g_autofree char *escape = NULL;
  g_autofree char *abs_escape = NULL;

  g_assert_cmpstr (got, ==, want);
  /* .. and absolute links never leave the root */
  tu_symlink (rootfs, "usr/share/pixmaps/evil.png", "../../../../../../../../etc/passwd");
  tu_symlink (rootfs, "usr/share/pixmaps/evil2.png", "/etc/hostname");
  escape = gl_tree_resolve (rootfs, "usr/share/pixmaps/evil.png");
  abs_escape = gl_tree_resolve (rootfs, "usr/share/pixmaps/evil2.png");
  g_assert_null (escape);       /* rootfs/etc/passwd does not exist */
  g_assert_null (abs_escape);
  tu_symlink (rootfs, "usr/share/pixmaps/loop.png", "loop.png");
  g_assert_null (gl_tree_resolve (rootfs, "usr/share/pixmaps/loop.png"));
}

/* Links that walk deep down and back up again ("d/../d/..", each
 * lookup walking from the root) are refused at once, not followed for
 * seconds per entry or icon */
static void
test_root_resolve_cost (void)
{
  if (g_test_subprocess ())
    {
      g_autoptr(TuTree) root = tu_make_tree ();
      g_autofree char *rootfs = g_build_filename (root, "rootfs", NULL);
      g_autoptr(GString) deep = g_string_new ("usr/share/deep");
      g_autofree char *want = NULL;
      g_autofree char *got = NULL;

      for (guint i = 0; i < 200; i++)
        g_string_append (deep, "/d");
      want = g_strconcat (deep->str, "/real.png", NULL);
      tu_write (rootfs, want, "png");
      g_string_append (deep, "/d/placeholder");
      tu_write (rootfs, deep->str, "");
      g_string_truncate (deep, deep->len - strlen ("/d/placeholder"));
      for (guint k = 1; k <= 39; k++)
        {
          g_autofree char *rel = g_strdup_printf ("%s/L%u", deep->str, k);
          g_autoptr(GString) target = g_string_new (NULL);

          while (target->len < 4000)
            g_string_append (target, "d/../");
          if (k < 39)
            g_string_append_printf (target, "L%u", k + 1);
          else
            g_string_append (target, "real.png");
          tu_symlink (rootfs, rel, target->str);
        }
      /* a link down the same 200 directories (and up and down once) is
       * followed; the chain is not */
      {
        g_autofree char *sane = g_strdup_printf ("/usr/share/deep/../%s", want + strlen ("usr/share/"));

        tu_symlink (rootfs, "usr/share/pixmaps/sane.png", sane);
      }
      got = gl_tree_resolve (rootfs, "usr/share/pixmaps/sane.png");
      g_clear_pointer (&want, g_free);
      want = g_strdup_printf ("%s/%s/real.png", rootfs, deep->str);
      g_assert_cmpstr (got, ==, want);
      g_string_append (deep, "/L1");
      g_assert_null (gl_tree_resolve (rootfs, deep->str));
      return;
    }
  g_test_trap_subprocess (NULL, 20 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

static char *
describe_icons (GPtrArray *files, const char *root)
{
  g_autoptr(GString) s = g_string_new (NULL);

  for (guint i = 0; i < files->len; i++)
    {
      GlIconFile *f = files->pdata[i];
      g_string_append_printf (s, "%s%s:%s", i ? " " : "", f->size_dir ? f->size_dir : "-",
                              f->path + strlen (root) + 1);
    }
  return g_string_free (g_steal_pointer (&s), FALSE);
}

static void
test_icons (void)
{
  g_autoptr(TuTree) root = tu_make_tree ();
  g_autofree char *rootfs = g_build_filename (root, "rootfs", NULL);
  g_autofree char *upper = g_build_filename (root, "system", "upper", NULL);
  const char *roots[] = { upper, rootfs, NULL };
  static const struct { const char *icon, *want; } cases[] = {
    /* every size of the theme (the host picks the best); @2 ignored; the
     * link inside the theme followed within the tree */
    { "org.example.Editor", "256x256:rootfs/usr/share/icons/hicolor/256x256/apps/org.example.Editor.png "
                            "48x48:rootfs/usr/share/icons/hicolor/48x48/apps/real-editor.png "
                            "scalable:rootfs/usr/share/icons/hicolor/scalable/apps/org.example.Editor.svg" },
    { "org.example.Editor.png", "256x256:rootfs/usr/share/icons/hicolor/256x256/apps/org.example.Editor.png "
                                "48x48:rootfs/usr/share/icons/hicolor/48x48/apps/real-editor.png "
                                "scalable:rootfs/usr/share/icons/hicolor/scalable/apps/org.example.Editor.svg" },
    /* another theme, context/size layout */
    { "breezy", "48x48:rootfs/usr/share/icons/breeze/apps/48/breezy.png "
                "scalable:rootfs/usr/share/icons/breeze/apps/scalable/breezy.svg" },
    /* absolute path through an absolute link */
    { "/usr/share/pixmaps/viewer.png", "64x64:rootfs/usr/share/viewer/real.png" },
    { "viewer", "64x64:rootfs/usr/share/viewer/real.png" },
    /* a size hicolor does not have: unthemed */
    { "oddsize", "-:rootfs/usr/share/pixmaps/oddsize.png" },
    { "old", "-:rootfs/usr/share/pixmaps/old.xpm" },
    { "missing", "" },
    { "/no/such.png", "" },
    { "../escape", "" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GPtrArray) files = gl_icon_resolve (roots, cases[i].icon);
      g_autofree char *got = describe_icons (files, root);
      g_autoptr(GlIconIndex) index = gl_icon_index_new (roots);
      g_autoptr(GPtrArray) ifiles = gl_icon_index_resolve (index, cases[i].icon);
      g_autofree char *igot = describe_icons (ifiles, root);

      g_test_message ("Icon=%s", cases[i].icon);
      g_assert_cmpstr (got, ==, cases[i].want);
      g_assert_cmpstr (igot, ==, cases[i].want);   /* the index finds the same */
    }

  /* the layers as the sandbox's view merges them: the upper layer's size
   * beside the lower's, its file over the lower's of the same name */
  tu_write_png (upper, "usr/share/icons/hicolor/32x32/apps/org.example.Editor.png", 32);
  tu_write_png (upper, "usr/share/icons/hicolor/256x256/apps/org.example.Editor.png", 256);
  {
    g_autoptr(GPtrArray) files = gl_icon_resolve (roots, "org.example.Editor");
    g_autofree char *got = describe_icons (files, root);
    g_autoptr(GlIconIndex) index = gl_icon_index_new (roots);
    g_autoptr(GPtrArray) ifiles = gl_icon_index_resolve (index, "org.example.Editor");
    g_autofree char *igot = describe_icons (ifiles, root);
    g_assert_cmpstr (got, ==, "256x256:system/upper/usr/share/icons/hicolor/256x256/apps/org.example.Editor.png "
                              "32x32:system/upper/usr/share/icons/hicolor/32x32/apps/org.example.Editor.png "
                              "48x48:rootfs/usr/share/icons/hicolor/48x48/apps/real-editor.png "
                              "scalable:rootfs/usr/share/icons/hicolor/scalable/apps/org.example.Editor.svg");
    g_assert_cmpstr (igot, ==, got);
  }
  g_assert_cmpint (gl_icon_png_size (cases[0].icon), ==, 0);
}

/* @icon of the view over @roots is @want, by both lookups */
static void
icon_want (const char * const *roots, const char *root, const char *icon, const char *want)
{
  g_autoptr(GPtrArray) files = gl_icon_resolve (roots, icon);
  g_autofree char *got = describe_icons (files, root);
  g_autoptr(GlIconIndex) index = gl_icon_index_new (roots);
  g_autoptr(GPtrArray) ifiles = gl_icon_index_resolve (index, icon);
  g_autofree char *igot = describe_icons (ifiles, root);

  g_test_message ("Icon=%s", icon);
  g_assert_cmpstr (got, ==, want);
  g_assert_cmpstr (igot, ==, want);
}

/* The themes are listed as the sandbox's view shows them, not layer by
 * layer by host path: a theme directory of the system layer that is a link
 * out of that layer's tree hides the base's directory of that name (the
 * base stands for the host's / of a sandbox over the host) and is followed
 * inside the view; a whiteout hides what is below it. */
static void
test_icons_view (void)
{
  g_autoptr(TuTree) root = tu_make_tree ();
  g_autofree char *rootfs = g_build_filename (root, "rootfs", NULL);
  g_autofree char *upper = g_build_filename (root, "system", "upper", NULL);
  g_autofree char *outside = g_build_filename (root, "outside", NULL);
  const char *roots[] = { upper, rootfs, NULL };

  icon_want (roots, root, "breezy", "48x48:rootfs/usr/share/icons/breeze/apps/48/breezy.png "
                                    "scalable:rootfs/usr/share/icons/breeze/apps/scalable/breezy.svg");
  /* breeze of the system layer: a link to a directory out of the tree (on
   * the host, with an icon of its own), which the view does not have */
  tu_write_png (outside, "apps/48/outsider.png", 48);
  tu_write_png (outside, "apps/48/breezy.png", 48);
  tu_symlink (upper, "usr/share/icons/breeze", outside);
  icon_want (roots, root, "breezy", "");
  icon_want (roots, root, "outsider", "");
  /* ...and one the view has, in the base: followed there */
  {
    g_autofree char *link = g_build_filename (upper, "usr/share/icons/breeze", NULL);
    g_assert_no_errno (unlink (link));
  }
  tu_write_png (rootfs, "usr/share/lookalike/apps/48/lookalike.png", 48);
  tu_symlink (upper, "usr/share/icons/breeze", "/usr/share/lookalike");
  icon_want (roots, root, "breezy", "");
  icon_want (roots, root, "lookalike", "48x48:rootfs/usr/share/lookalike/apps/48/lookalike.png");

  /* a whiteout of the system layer hides the base's file */
  if (!tu_whiteout (upper, "usr/share/pixmaps/old.xpm"))
    {
      g_test_skip ("mknod of a whiteout (char 0/0) is not allowed here");
      return;
    }
  icon_want (roots, root, "old", "");
  g_assert_true (tu_whiteout (upper, "usr/share/icons/hicolor/256x256"));
  icon_want (roots, root, "org.example.Editor", "48x48:rootfs/usr/share/icons/hicolor/48x48/apps/real-editor.png "
                                                "scalable:rootfs/usr/share/icons/hicolor/scalable/apps/org.example.Editor.svg");
}

static const char user_uca[] =
  "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
  "<actions>\n"
  "<!-- my own, <action> in a comment -->\n"
  "<action>\n"
  "\t<icon>utilities-terminal</icon>\n"
  "\t<name>Open Terminal Here</name>\n"
  "\t<unique-id>1234567890123456-1</unique-id>\n"
  "\t<command>exo-open --working-directory %f --launch TerminalEmulator</command>\n"
  "\t<description>Example &amp; more</description>\n"
  "\t<patterns>*</patterns>\n"
  "\t<startup-notify/>\n"
  "\t<directories/>\n"
  "</action>\n"
  "<action>\n"
  "\t<icon></icon>\n"
  "\t<name>Zip</name>\n"
  "\t<unique-id>1234567890123456-2</unique-id>\n"
  "\t<command>zip -r %n.zip %N</command>\n"
  "\t<patterns>*</patterns>\n"
  "\t<other-files/>\n"
  "</action>\n"
  "</actions>\n";

static void
test_thunar_merge (void)
{
  const char *apps[] = { NULL };
  GlExportedSandbox two[] = { { "deb", "Debian <sid> & co", apps }, { "fed", "Fedora's", apps } };
  g_autoptr(GError) error = NULL;
  g_autofree char *merged = gl_fm_thunar_merge ("uca.xml", user_uca, two, 2, "/usr/bin/glimpse", &error);
  g_autofree char *again = NULL;
  g_autofree char *one = NULL;
  g_autofree char *none = NULL;
  g_autofree char *fresh = NULL;
  g_autofree char *bad = NULL;

  g_assert_no_error (error);
  /* the user's actions byte for byte, ours before </actions> */
  g_assert_true (g_str_has_prefix (merged, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<actions>\n<!-- my own"));
  g_assert_nonnull (strstr (merged, "<unique-id>1234567890123456-1</unique-id>"));
  g_assert_nonnull (strstr (merged, "<unique-id>glimpse-deb</unique-id>"));
  g_assert_nonnull (strstr (merged, "<name>Open in Debian &lt;sid&gt; &amp; co</name>"));
  g_assert_nonnull (strstr (merged, "<command>&apos;/usr/bin/glimpse&apos; open &apos;fed&apos; -- %F</command>"));
  g_assert_nonnull (strstr (merged, "<submenu>Glimpse</submenu>"));
  g_assert_true (strstr (merged, "glimpse-deb") < strstr (merged, "glimpse-fed"));
  g_assert_true (g_str_has_suffix (merged, "</action>\n</actions>\n"));

  /* stable, and removing one or all gives back exactly the rest */
  again = gl_fm_thunar_merge ("uca.xml", merged, two, 2, "/usr/bin/glimpse", NULL);
  g_assert_cmpstr (again, ==, merged);
  one = gl_fm_thunar_merge ("uca.xml", merged, &two[1], 1, "/usr/bin/glimpse", NULL);
  g_assert_null (strstr (one, "glimpse-deb"));
  g_assert_nonnull (strstr (one, "glimpse-fed"));
  none = gl_fm_thunar_merge ("uca.xml", one, NULL, 0, "/usr/bin/glimpse", NULL);
  g_assert_cmpstr (none, ==, user_uca);

  /* a new file */
  fresh = gl_fm_thunar_merge ("uca.xml", NULL, two, 1, "/usr/bin/glimpse", NULL);
  g_assert_true (g_str_has_prefix (fresh, "<?xml"));
  g_assert_nonnull (strstr (fresh, "glimpse-deb"));

  /* a broken file is never rewritten */
  bad = gl_fm_thunar_merge ("/home/u/.config/Thunar/uca.xml", "<actions><action>", two, 1, "/g", &error);
  g_assert_null (bad);
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "/home/u/.config/Thunar/uca.xml"));
}

static void
test_app_folders (void)
{
  g_autoptr(GSettings) folders = NULL;
  g_auto(GStrv) children = NULL;
  const char *user_children[] = { "Utilities", "YaST", NULL };
  const char *apps_a[] = { "glimpse-a-x.desktop", NULL };
  const char *apps_b[] = { "glimpse-b-y.desktop", "glimpse-b-z.desktop", NULL };
  GlExportedSandbox both[] = { { "a", "Alpha", apps_a }, { "b", "Beta", apps_b } };
  const char *removed[] = { "a", NULL };

  if (!gl_app_folders_available ())
    {
      gl_test_skip ("org.gnome.desktop.app-folders schema not compiled for the tests (install gsettings-desktop-schemas)");
      return;
    }
  folders = g_settings_new ("org.gnome.desktop.app-folders");
  g_settings_set_strv (folders, "folder-children", user_children);

  gl_app_folders_sync (both, 2, NULL);
  children = g_settings_get_strv (folders, "folder-children");
  {
    const char *want[] = { "Utilities", "YaST", "glimpse-a", "glimpse-b", NULL };
    g_assert_cmpstrv (children, want);
  }
  {
    g_autoptr(GSettings) b = g_settings_new_with_path ("org.gnome.desktop.app-folders.folder",
                                                       "/org/gnome/desktop/app-folders/folders/glimpse-b/");
    g_autofree char *name = g_settings_get_string (b, "name");
    g_auto(GStrv) apps = g_settings_get_strv (b, "apps");
    g_assert_cmpstr (name, ==, "Glimpse: Beta");
    g_assert_cmpstrv (apps, apps_b);
  }

  /* the user reorders; a sync keeps their order */
  {
    const char *reordered[] = { "glimpse-b", "Utilities", "glimpse-a", "YaST", NULL };
    g_settings_set_strv (folders, "folder-children", reordered);
    gl_app_folders_sync (both, 2, NULL);
    g_clear_pointer (&children, g_strfreev);
    children = g_settings_get_strv (folders, "folder-children");
    g_assert_cmpstrv (children, reordered);
  }

  /* removal takes only ours */
  gl_app_folders_sync (&both[1], 1, removed);
  g_clear_pointer (&children, g_strfreev);
  children = g_settings_get_strv (folders, "folder-children");
  {
    const char *want[] = { "glimpse-b", "Utilities", "YaST", NULL };
    g_assert_cmpstrv (children, want);
  }
  {
    g_autoptr(GSettings) a = g_settings_new_with_path ("org.gnome.desktop.app-folders.folder",
                                                       "/org/gnome/desktop/app-folders/folders/glimpse-a/");
    g_autofree char *name = g_settings_get_string (a, "name");
    g_assert_cmpstr (name, ==, "");
  }
}

static void
test_open_find (void)
{
  g_autoptr(TuTree) root = tu_make_tree ();
  g_autoptr(GlExportSource) s = tu_source (root, "deb", "Debian");
  g_autofree char *a = NULL, *b = NULL, *c = NULL, *d = NULL, *e = NULL;
  g_autofree char *user = g_build_filename (root, "user-config", NULL);

  /* mimeapps.list default (skipping the missing app) */
  a = gl_open_find_app (s, NULL, "text/plain");
  g_assert_cmpstr (a, ==, "org.example.Editor.desktop");
  /* the entries' own MimeType */
  b = gl_open_find_app (s, NULL, "image/png");
  g_assert_cmpstr (b, ==, "org.example.Viewer.desktop");
  /* a hidden handler still handles */
  c = gl_open_find_app (s, NULL, "x-scheme-handler/glimpsetest");
  g_assert_cmpstr (c, ==, "nodisplay.desktop");
  d = gl_open_find_app (s, NULL, "application/x-nothing-handles-this");
  g_assert_null (d);
  /* the user's own choice inside the sandbox wins */
  tu_write (user, "mimeapps.list", "[Default Applications]\ntext/plain=kde4-oldapp.desktop;\n");
  e = gl_open_find_app (s, user, "text/plain");
  g_assert_cmpstr (e, ==, "kde4-oldapp.desktop");

  {
    const char *uris[] = { "file:///tmp/a%20b.png", "file:///tmp/c.png", NULL };
    g_autoptr(GPtrArray) cmds = gl_open_commands (s, "/l", "org.example.Viewer.desktop", uris, NULL);
    const char *want0[] = { "/l", "deb", "--", "viewer", "/tmp/a b.png", NULL };
    const char *want1[] = { "/l", "deb", "--", "viewer", "/tmp/c.png", NULL };

    g_assert_cmpuint (cmds->len, ==, 2);
    g_assert_cmpstrv (cmds->pdata[0], want0);
    g_assert_cmpstrv (cmds->pdata[1], want1);
  }
  {
    const char *uris[] = { "file:///tmp/x", NULL };
    g_autoptr(GPtrArray) cmds = gl_open_commands (s, "/l", "kde4-oldapp.desktop", uris, NULL);
    const char *want[] = { "/l", "deb", "--", "oldapp", "-caption", "Old App", "--icon", "breezy",
                           "file:///tmp/x", NULL };
    g_assert_cmpuint (cmds->len, ==, 1);
    g_assert_cmpstrv (cmds->pdata[0], want);
  }
  {
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) cmds = gl_open_commands (s, "/l", "nope.desktop", NULL, &error);
    g_assert_null (cmds);
    g_assert_error (error, GL_EXPORT_ERROR, GL_EXPORT_ERROR_NOT_FOUND);
  }
}

/* ------------------------------------------------ the export fingerprint */

typedef struct {
  char *store;
  char *sandbox;
  char *rootfs;
  GlExportContext *ctx;
} Fp;

static gint64
ctime_ns (const char *path)
{
  struct stat st;

  g_assert_cmpint (lstat (path, &st), ==, 0);
  return (gint64) st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec;
}

static gint64
stamp_clock_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_REALTIME_COARSE, &ts);
  return (gint64) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Until the clock files are stamped with is well past @path's ctime: an
 * export then records its fingerprint (not "racy"), and a change made
 * afterwards gets another ctime. */
static void
wait_stamp_after (const char *path)
{
  gint64 until = ctime_ns (path) + 200 * G_GINT64_CONSTANT (1000000);
  gint64 deadline = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;

  while (stamp_clock_ns () <= until)
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_usleep (2000);
    }
}

static char *
fp_exported (Fp *fp, const char *desktop_id)
{
  g_autofree char *file = gl_export_desktop_file_name ("fp", desktop_id);
  g_autofree char *path = g_build_filename (fp->ctx->data_home, "applications", file, NULL);
  char *data = NULL;

  if (!g_file_get_contents (path, &data, NULL, NULL))
    return NULL;
  return data;
}

/* A sync after the change at @changed: never taken from the cache, and
 * one more sync right after it is (nothing changed in between). */
static void
fp_sync (Fp *fp, const char *changed)
{
  g_autoptr(GError) error = NULL;
  guint hits = gl_export_cache_n_hits (fp->ctx->cache);
  GlExportStats stats = { 0, };

  wait_stamp_after (changed);
  g_assert_true (gl_export_store_sync_sandbox (fp->ctx, fp->store, "fp", "/", &stats, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (gl_export_cache_n_hits (fp->ctx->cache), ==, hits);
  g_assert_cmpuint (stats.skipped, ==, 0);
  g_assert_true (gl_export_store_sync_sandbox (fp->ctx, fp->store, "fp", "/", &stats, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (gl_export_cache_n_hits (fp->ctx->cache), ==, hits + 1);
  g_assert_cmpuint (stats.written, ==, 0);
}

static void
write_in_place (const char *path, const char *data, gsize len)
{
  int fd = open (path, O_WRONLY | O_CLOEXEC);

  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (pwrite (fd, data, len, 0), ==, (gssize) len);
  close (fd);
}

static const char fp_entry[] =
  "[Desktop Entry]\nType=Application\nName=Alpha\nExec=alpha\nIcon=alpha\n";

static void
test_fingerprint (void)
{
  g_autofree char *tmp = g_dir_make_tmp ("glimpse-fp-XXXXXX", NULL);
  Fp fp = { 0, };
  g_autofree char *conf = NULL;
  g_autofree char *a = NULL;
  g_autofree char *b = NULL;
  g_autofree char *apps_dir = NULL;
  g_autofree char *icon = NULL;
  g_autofree char *icon_out = NULL;
  g_autofree char *icon_file = gl_export_icon_name ("fp", "alpha");
  g_autofree char *icon_png = g_strconcat (icon_file, ".png", NULL);
  g_autofree char *current = NULL;
  g_autofree char *text = NULL;
  g_autofree char *before = NULL;
  g_autofree char *after = NULL;
  gsize before_len = 0, after_len = 0;
  struct stat st;

  g_assert_nonnull (tmp);
  fp.store = g_build_filename (tmp, "store", NULL);
  fp.sandbox = g_build_filename (fp.store, "fp", NULL);
  fp.rootfs = g_build_filename (fp.sandbox, "rootfs", NULL);
  conf = g_build_filename (fp.sandbox, "sandbox.conf", NULL);
  a = g_build_filename (fp.rootfs, "usr/share/applications/alpha.desktop", NULL);
  b = g_build_filename (fp.rootfs, "usr/share/applications/beta.desktop", NULL);
  apps_dir = g_path_get_dirname (b);
  icon = g_build_filename (fp.rootfs, "usr/share/icons/hicolor/48x48/apps/alpha.png", NULL);
  current = g_build_filename (fp.sandbox, "system", "current", NULL);

  tu_write (fp.sandbox, "sandbox.conf", "[Sandbox]\nProfile=x\nName=FP\nBase=rootfs\nFamily=apt\n");
  tu_write (fp.rootfs, "usr/share/applications/alpha.desktop", fp_entry);
  tu_write (fp.rootfs, "usr/share/applications/hidden.desktop",
            "[Desktop Entry]\nType=Application\nName=Hidden\nExec=hidden\nNoDisplay=true\n");
  tu_write_png (fp.rootfs, "usr/share/icons/hicolor/48x48/apps/alpha.png", 48);
  tu_write (fp.sandbox, "system/1/tree/usr/share/applications/.keep", "");
  tu_write (fp.sandbox, "system/current", "1\n");

  fp.ctx = gl_export_context_new ("/usr/bin/glimpse-launch", "/usr/bin/glimpse");
  fp.ctx->app_folders = FALSE;
  fp.ctx->cache = gl_export_cache_new ();
  icon_out = g_build_filename (fp.ctx->data_home, "icons/hicolor/48x48/apps", icon_png, NULL);

  fp_sync (&fp, current);
  text = fp_exported (&fp, "alpha.desktop");
  g_assert_nonnull (strstr (text, "Name=Alpha"));
  g_assert_null (fp_exported (&fp, "hidden.desktop"));
  g_clear_pointer (&text, g_free);

  /* a new application file */
  tu_write (fp.rootfs, "usr/share/applications/beta.desktop",
            "[Desktop Entry]\nType=Application\nName=Beta\nExec=beta\n");
  fp_sync (&fp, b);
  text = fp_exported (&fp, "beta.desktop");
  g_assert_nonnull (text);
  g_clear_pointer (&text, g_free);

  /* an entry edited in place: same inode, same size, the same mtime put
   * back; only its ctime tells */
  g_assert_cmpint (stat (a, &st), ==, 0);
  write_in_place (a, "[Desktop Entry]\nType=Application\nName=Alphb", strlen ("[Desktop Entry]\nType=Application\nName=Alphb"));
  {
    struct timespec times[2] = { st.st_atim, st.st_mtim };
    struct stat now;

    g_assert_cmpint (utimensat (AT_FDCWD, a, times, 0), ==, 0);
    g_assert_cmpint (stat (a, &now), ==, 0);
    g_assert_cmpint (now.st_size, ==, st.st_size);
    g_assert_cmpint (now.st_ino, ==, st.st_ino);
    g_assert_cmpint (now.st_mtim.tv_sec, ==, st.st_mtim.tv_sec);
    g_assert_cmpint (now.st_mtim.tv_nsec, ==, st.st_mtim.tv_nsec);
  }
  fp_sync (&fp, a);
  text = fp_exported (&fp, "alpha.desktop");
  g_assert_nonnull (strstr (text, "Name=Alphb"));
  g_clear_pointer (&text, g_free);

  /* a removed file */
  g_assert_cmpint (unlink (b), ==, 0);
  fp_sync (&fp, apps_dir);
  g_assert_null (fp_exported (&fp, "beta.desktop"));

  /* an icon replaced in place, same size */
  g_assert_true (g_file_get_contents (icon_out, &before, &before_len, NULL));
  write_in_place (icon, "\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x30\0\0\0\x30\x10\x02",
                  26);
  fp_sync (&fp, icon);
  g_assert_true (g_file_get_contents (icon_out, &after, &after_len, NULL));
  g_assert_cmpuint (before_len, ==, after_len);
  g_assert_true (memcmp (before, after, after_len) != 0);

  /* an exported icon and entry removed by someone: the next run over the
   * sandbox (after another change) sees their directories changed, looks
   * at their files and writes them again */
  g_assert_cmpint (unlink (icon_out), ==, 0);
  {
    g_autofree char *file = gl_export_desktop_file_name ("fp", "alpha.desktop");
    g_autofree char *path = g_build_filename (fp.ctx->data_home, "applications", file, NULL);

    g_assert_cmpint (unlink (path), ==, 0);
  }
  tu_write (fp.rootfs, "usr/share/applications/beta.desktop",
            "[Desktop Entry]\nType=Application\nName=Beta\nExec=beta\n");
  fp_sync (&fp, b);
  g_assert_true (g_file_test (icon_out, G_FILE_TEST_IS_REGULAR));
  text = fp_exported (&fp, "alpha.desktop");
  g_assert_nonnull (text);
  g_clear_pointer (&text, g_free);
  g_assert_cmpint (unlink (b), ==, 0);
  fp_sync (&fp, apps_dir);

  /* sandbox.conf names its launchers: the hidden app is exported */
  tu_write (fp.sandbox, "sandbox.conf",
            "[Sandbox]\nProfile=x\nName=FP\nBase=rootfs\nFamily=apt\nLaunchers=alpha.desktop;hidden.desktop;\n");
  fp_sync (&fp, conf);
  text = fp_exported (&fp, "hidden.desktop");
  g_assert_nonnull (text);
  g_clear_pointer (&text, g_free);

  /* the system generation switched: its applications come in */
  tu_write (fp.sandbox, "system/2/tree/usr/share/applications/gamma.desktop",
            "[Desktop Entry]\nType=Application\nName=Gamma\nExec=gamma\n");
  tu_write (fp.sandbox, "sandbox.conf",
            "[Sandbox]\nProfile=x\nName=FP\nBase=rootfs\nFamily=apt\n");
  fp_sync (&fp, conf);
  g_assert_null (fp_exported (&fp, "gamma.desktop"));
  tu_write (fp.sandbox, "system/current", "2\n");
  fp_sync (&fp, current);
  text = fp_exported (&fp, "gamma.desktop");
  g_assert_nonnull (text);
  g_clear_pointer (&text, g_free);

  /* the exports changed by someone else (glimpse export, no cache): the
   * cache forgets what it knew */
  {
    g_autoptr(GlExportContext) other = gl_export_context_new ("/usr/bin/glimpse-launch", "/usr/bin/glimpse");
    g_autoptr(GError) error = NULL;
    guint hits = gl_export_cache_n_hits (fp.ctx->cache);

    other->app_folders = FALSE;
    g_assert_true (gl_export_unexport (other, "fp", &error));
    g_assert_no_error (error);
    /* not a complete sync, yet the directories it emptied went, up to
     * the icons directory Glimpse made */
    {
      g_autofree char *icons = g_build_filename (fp.ctx->data_home, "icons", NULL);

      g_assert_false (g_file_test (icons, G_FILE_TEST_EXISTS));
    }
    g_assert_true (gl_export_store_sync_sandbox (fp.ctx, fp.store, "fp", "/", NULL, NULL, &error));
    g_assert_no_error (error);
    g_assert_cmpuint (gl_export_cache_n_hits (fp.ctx->cache), ==, hits);
    text = fp_exported (&fp, "gamma.desktop");
    g_assert_nonnull (text);
    g_clear_pointer (&text, g_free);
  }

  gl_export_context_free (fp.ctx);
  {
    const char *rm[] = { "rm", "-rf", tmp, NULL };
    g_spawn_sync (NULL, (char **) rm, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, NULL, NULL);
  }
  g_free (fp.store);
  g_free (fp.sandbox);
  g_free (fp.rootfs);
}

/* A sync of sandbox "fp" as the session agent makes it after its watches
 * saw files change only in @changed (NULL: anything may have changed),
 * once the clock is past @stamp's change */
static void
cd_sync (Fp *fp, const char *stamp, const char * const *changed)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GlSandbox) sb = gl_sandbox_load (fp->store, "fp", &error);
  g_autoptr(GPtrArray) sources = g_ptr_array_new_with_free_func ((GDestroyNotify) gl_export_source_free);
  GlExportSource *source;
  GlExportStats stats = { 0, };

  g_assert_no_error (error);
  source = gl_export_store_source_new (sb, "/", fp->ctx->config_home, &error);
  g_assert_no_error (error);
  source->watched_roots = g_strdupv (source->data_roots);
  source->changed_dirs = changed != NULL ? g_strdupv ((GStrv) changed) : NULL;
  g_ptr_array_add (sources, source);
  wait_stamp_after (stamp);
  g_assert_true (gl_export_sync (fp->ctx, sources, FALSE, &stats, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (stats.skipped, ==, 0);
}

static char *
cd_icon (Fp *fp)
{
  g_autofree char *name = gl_export_icon_name ("fp", "beta");
  g_autofree char *file = g_strconcat (name, ".png", NULL);
  g_autofree char *path = g_build_filename (fp->ctx->data_home, "icons/hicolor/48x48/apps", file, NULL);
  char *data = NULL;
  gsize len = 0;

  if (!g_file_get_contents (path, &data, &len, NULL))
    return NULL;
  /* the PNG's bytes, printable */
  {
    char *hex = g_compute_checksum_for_data (G_CHECKSUM_SHA256, (const guchar *) data, len);
    g_free (data);
    return hex;
  }
}

/* @file of the directory @dir written with @contents (NULL: removed), then
 * a sync told that @dir changed */
static void
cd_change (Fp *fp, const char *dir, const char *file, const char *contents)
{
  g_autofree char *path = g_build_filename (dir, file, NULL);

  if (contents != NULL)
    tu_write (dir, file, contents);
  else
    g_assert_cmpint (unlink (path), ==, 0);
  cd_sync (fp, contents != NULL ? path : dir, (const char *[]) { dir, NULL });
}

static void
cd_assert_name (Fp *fp, const char *desktop_id, const char *name)
{
  g_autofree char *text = fp_exported (fp, desktop_id);
  g_autofree char *line = g_strdup_printf ("\nName=%s — ", name);

  g_assert_nonnull (text);
  g_assert_nonnull (strstr (text, line));
}

/* A sync told which watched directories changed walks those only: a
 * change in each kind of place is seen, through the layer that wins */
static void
test_changed_dirs (void)
{
  g_autofree char *tmp = g_dir_make_tmp ("glimpse-cd-XXXXXX", NULL);
  Fp fp = { 0, };
  g_autofree char *tree = NULL;
  g_autofree char *current = NULL;
  g_autofree char *root_apps = NULL;
  g_autofree char *tree_apps = NULL;
  g_autofree char *icon_dir = NULL;
  g_autofree char *icon = NULL;
  g_autofree char *before = NULL;
  g_autofree char *after = NULL;
  const char *none[] = { NULL };

  g_assert_nonnull (tmp);
  fp.store = g_build_filename (tmp, "store", NULL);
  fp.sandbox = g_build_filename (fp.store, "fp", NULL);
  fp.rootfs = g_build_filename (fp.sandbox, "rootfs", NULL);
  tree = g_build_filename (fp.sandbox, "system/1/tree", NULL);
  current = g_build_filename (fp.sandbox, "system", "current", NULL);
  root_apps = g_build_filename (fp.rootfs, "usr/share/applications", NULL);
  tree_apps = g_build_filename (tree, "usr/share/applications", NULL);
  icon_dir = g_build_filename (fp.rootfs, "usr/share/icons/hicolor/48x48/apps", NULL);
  icon = g_build_filename (icon_dir, "beta.png", NULL);

  tu_write (fp.sandbox, "sandbox.conf", "[Sandbox]\nProfile=x\nName=CD\nBase=rootfs\nFamily=apt\n");
  tu_write (fp.rootfs, "usr/share/applications/alpha.desktop",
            "[Desktop Entry]\nType=Application\nName=Alpha base\nExec=alpha\n");
  tu_write (fp.rootfs, "usr/share/applications/beta.desktop",
            "[Desktop Entry]\nType=Application\nName=Beta\nExec=beta\nIcon=beta\n");
  tu_write_png (fp.rootfs, "usr/share/icons/hicolor/48x48/apps/beta.png", 48);
  tu_write (tree, "usr/share/applications/alpha.desktop",
            "[Desktop Entry]\nType=Application\nName=Alpha system\nExec=alpha\n");
  tu_write (fp.sandbox, "system/current", "1\n");

  fp.ctx = gl_export_context_new ("/usr/bin/glimpse-launch", "/usr/bin/glimpse");
  fp.ctx->app_folders = FALSE;
  fp.ctx->cache = gl_export_cache_new ();

  cd_sync (&fp, current, NULL);
  cd_assert_name (&fp, "alpha.desktop", "Alpha system");
  before = cd_icon (&fp);
  g_assert_nonnull (before);

  /* a change the watcher did not report is not looked for (the places
   * are taken as the last sync found them); the next full sync sees it */
  tu_write (fp.rootfs, "usr/share/icons/hicolor/48x48/apps/beta.png", "\x89PNG\r\n\x1a\n not the same");
  cd_sync (&fp, icon, none);
  after = cd_icon (&fp);
  g_assert_cmpstr (after, ==, before);
  g_clear_pointer (&after, g_free);
  cd_sync (&fp, icon, NULL);
  after = cd_icon (&fp);
  g_assert_cmpstr (after, !=, before);
  g_clear_pointer (&before, g_free);
  before = g_steal_pointer (&after);

  /* an icon file with a second name outside the watched places, written
   * through that name: no watch sees it, so its part is always walked */
  {
    g_autofree char *other = g_build_filename (tmp, "beta-link.png", NULL);
    const char written[] = "\x89PNG\r\n\x1a\n written through the link";

    g_assert_cmpint (link (icon, other), ==, 0);
    cd_sync (&fp, icon, NULL);
    write_in_place (other, written, sizeof written - 1);
    cd_sync (&fp, icon, none);
    after = cd_icon (&fp);
    g_assert_cmpstr (after, !=, before);
    g_clear_pointer (&before, g_free);
    before = g_steal_pointer (&after);
    g_assert_cmpint (unlink (other), ==, 0);
  }

  /* an icon changed, nothing else */
  tu_write_png (fp.rootfs, "usr/share/icons/hicolor/48x48/apps/beta.png", 48);
  cd_sync (&fp, icon, (const char *[]) { icon_dir, NULL });
  after = cd_icon (&fp);
  g_assert_cmpstr (after, !=, before);
  g_clear_pointer (&after, g_free);

  /* the base's entry changed where the system layer's shadows it: still
   * the system layer's; then the system layer's changed */
  cd_change (&fp, root_apps, "alpha.desktop", "[Desktop Entry]\nType=Application\nName=Alpha base 2\nExec=alpha\n");
  cd_assert_name (&fp, "alpha.desktop", "Alpha system");
  cd_change (&fp, tree_apps, "alpha.desktop", "[Desktop Entry]\nType=Application\nName=Alpha system 2\nExec=alpha\n");
  cd_assert_name (&fp, "alpha.desktop", "Alpha system 2");
  /* an entry removed from the system layer: the base's shows again */
  cd_change (&fp, tree_apps, "alpha.desktop", NULL);
  cd_assert_name (&fp, "alpha.desktop", "Alpha base 2");
  /* an entry removed: its export and its icon go */
  cd_change (&fp, root_apps, "beta.desktop", NULL);
  g_assert_null (fp_exported (&fp, "beta.desktop"));
  g_assert_null (cd_icon (&fp));

  gl_export_context_free (fp.ctx);
  {
    const char *rm[] = { "rm", "-rf", tmp, NULL };
    g_spawn_sync (NULL, (char **) rm, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, NULL, NULL);
  }
  g_free (fp.store);
  g_free (fp.sandbox);
  g_free (fp.rootfs);
}

int
main (int argc, char **argv)
{
  const char *schemas = g_getenv ("GL_TEST_SCHEMA_DIR");

  if (schemas != NULL)
    g_setenv ("GSETTINGS_SCHEMA_DIR", schemas, TRUE);
  g_setenv ("GSETTINGS_BACKEND", "memory", TRUE);
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_test_add_func ("/export/rewrite-rules", test_rewrite_rules);
  g_test_add_func ("/export/rewrite-keys-kept", test_rewrite_keys_kept);
  g_test_add_func ("/export/rewrite-rejects", test_rewrite_rejects);
  g_test_add_func ("/export/list-apps", test_list_apps);
  g_test_add_func ("/export/list-apps-opaque", test_list_apps_opaque);
  g_test_add_func ("/export/list-apps-hidden-above", test_list_apps_hidden_above);
  g_test_add_func ("/export/root-resolve", test_root_resolve);
  g_test_add_func ("/export/root-resolve-cost", test_root_resolve_cost);
  g_test_add_func ("/export/icons", test_icons);
  g_test_add_func ("/export/icons-view", test_icons_view);
  g_test_add_func ("/export/thunar-merge", test_thunar_merge);
  g_test_add_func ("/export/app-folders", test_app_folders);
  g_test_add_func ("/export/open-find", test_open_find);
  g_test_add_func ("/export/fingerprint", test_fingerprint);
  g_test_add_func ("/export/changed-dirs", test_changed_dirs);
  return g_test_run ();
}
