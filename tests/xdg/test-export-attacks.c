/* test-export-attacks: a sandbox's desktop files and icons are hostile
 * (SECURITY.md, export, cases 31-36).  Each case plants files the way a
 * package of the sandbox could, exports, and checks the result with the
 * real consumers: GLib, xdg-open (generic mode), kioclient5, pyxdg.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <gio/gdesktopappinfo.h>

#include "gl-export-store.h"
#include "gl-test-skip.h"
#include "xdg-test-util.h"

typedef struct {
  char *root;        /* temporary: tree/, marker, record, private/ */
  char *tree;        /* the sandbox's tree (its system layer) */
  char *marker;      /* what a hostile command would create */
  char *record;      /* what the launcher (the argv recorder) ran */
  GlExportContext *ctx;
  GPtrArray *sources;
  GPtrArray *warnings;
} Fixture;

static GlExportSource *
source_for (const char *tree, const char *id)
{
  GlExportSource *s = gl_export_source_new (id, id);
  g_autofree char *apps = g_build_filename (tree, "usr/share/applications", NULL);

  s->app_dirs = g_strdupv ((GStrv) (const char *[]) { apps, NULL });
  s->data_roots = g_strdupv ((GStrv) (const char *[]) { tree, NULL });
  return s;
}

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  const char *recorder = g_getenv ("GL_TEST_RECORDER");
  g_autoptr(GError) error = NULL;

  f->root = g_dir_make_tmp ("glimpse-attacks-XXXXXX", &error);
  g_assert_no_error (error);
  f->tree = g_build_filename (f->root, "tree", NULL);
  f->marker = g_build_filename (f->root, "PWNED", NULL);
  f->record = g_build_filename (f->root, "record", NULL);
  g_setenv ("GL_TEST_RECORD", f->record, TRUE);
  f->ctx = gl_export_store_context_new ();
  g_free (f->ctx->launcher);
  f->ctx->launcher = g_strdup (recorder != NULL ? recorder : "/bin/true");
  f->ctx->app_folders = FALSE;
  f->ctx->file_managers = FALSE;
  f->sources = g_ptr_array_new_with_free_func ((GDestroyNotify) gl_export_source_free);
  g_ptr_array_add (f->sources, source_for (f->tree, "hs"));
  f->warnings = g_ptr_array_new_with_free_func ((GDestroyNotify) g_error_free);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  g_ptr_array_unref (f->warnings);
  g_ptr_array_unref (f->sources);
  gl_export_context_free (f->ctx);
  tu_tree_free (g_steal_pointer (&f->root));
  g_free (f->tree);
  g_free (f->marker);
  g_free (f->record);
}

static void
sync_ok (Fixture *f)
{
  g_autoptr(GError) error = NULL;

  g_ptr_array_set_size (f->warnings, 0);
  g_assert_true (gl_export_sync (f->ctx, f->sources, TRUE, NULL, f->warnings, &error));
  g_assert_no_error (error);
  for (guint i = 0; i < f->warnings->len; i++)
    g_test_message ("warning: %s", ((GError *) f->warnings->pdata[i])->message);
}

/* The warning that names @what and says @why. */
static void
assert_warned (Fixture *f, const char *what, const char *why)
{
  for (guint i = 0; i < f->warnings->len; i++)
    {
      const char *msg = ((GError *) f->warnings->pdata[i])->message;
      if (strstr (msg, what) != NULL && strstr (msg, why) != NULL)
        return;
    }
  g_error ("no warning about %s saying “%s”", what, why);
}

static char *
exported (Fixture *f, const char *file)
{
  return g_build_filename (f->ctx->data_home, "applications", file, NULL);
}

static gboolean
require_recorder (void)
{
  if (g_getenv ("GL_TEST_RECORDER") != NULL)
    return TRUE;
  gl_test_skip ("GL_TEST_RECORDER not set: run through meson test");
  return FALSE;
}

/* The record of one launcher run: what the launcher got, or NULL if the
 * consumer ran nothing through it. */
static void
assert_ran_wrapped (Fixture *f, const char *consumer, const char * const *want)
{
  g_autoptr(GPtrArray) runs = tu_wait_records (f->record);

  g_test_message ("%s ran the launcher with %u argument(s)", consumer,
                  g_strv_length (runs->pdata[0]));
  g_assert_cmpuint (runs->len, ==, 1);
  g_assert_cmpstrv (runs->pdata[0], want);
  g_assert_false (g_file_test (f->marker, G_FILE_TEST_EXISTS));
  unlink (f->record);
}

/* 31: two Exec keys (xdg-open takes the first, GLib the last), a localized
 * Exec (KDE reads it), TerminalOptions (KIO puts it before the command),
 * X-KDE-SubstituteUID/Username (kdesu): only the wrapped Exec survives, in
 * every consumer. */
static void
test_duplicate_and_localized_exec (Fixture *f, gconstpointer data)
{
  g_autofree char *entry = g_strdup_printf (
    "[Desktop Entry]\n"
    "Type=Application\n"
    "Name=HS demo\n"
    "Exec=touch %s %%u\n"
    "Exec=true %%u\n"
    "Exec[en_US]=touch %s\n"
    "Exec[C]=touch %s\n"
    "TryExec[en_US]=touch\n"
    "Path[en_US]=/tmp\n"
    "Terminal=false\n"
    "TerminalOptions=-e touch %s --\n"
    "X-KDE-SubstituteUID=true\n"
    "X-KDE-Username=root\n"
    "MimeType=x-scheme-handler/hsdemo;\n"
    "Actions=a;\n"
    "\n"
    "[Desktop Action a]\n"
    "Name=A\n"
    "Exec=touch %s\n"
    "Exec=true\n"
    "Exec[en_US]=touch %s\n",
    f->marker, f->marker, f->marker, f->marker, f->marker, f->marker);
  g_autofree char *path = NULL;
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;
  const char *want[] = { "hs", "--", "true", "hsdemo://x", NULL };
  guint execs = 0;

  if (!require_recorder ())
    return;
  tu_write (f->tree, "usr/share/applications/hsdemo.desktop", entry);
  sync_ok (f);
  path = exported (f, "glimpse-hs+hsdemo.desktop");
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  g_test_message ("%s", text);

  /* the file itself: one Exec per group, the launcher's; nothing else that
   * runs */
  lines = g_strsplit (text, "\n", -1);
  for (gsize i = 0; lines[i] != NULL; i++)
    {
      if (g_str_has_prefix (lines[i], "Exec"))
        {
          g_assert_true (g_str_has_prefix (lines[i], "Exec="));
          g_assert_true (g_str_has_prefix (lines[i] + 5, f->ctx->launcher));
          execs++;
        }
      g_assert_false (g_str_has_prefix (lines[i], "TerminalOptions"));
      g_assert_false (g_str_has_prefix (lines[i], "X-KDE-"));
      g_assert_false (g_str_has_prefix (lines[i], "TryExec["));
      g_assert_false (g_str_has_prefix (lines[i], "Path"));
    }
  g_assert_cmpuint (execs, ==, 2);   /* the entry's and the action's */

  /* GLib */
  {
    g_autoptr(GDesktopAppInfo) info = g_desktop_app_info_new_from_filename (path);
    GList *uris = g_list_append (NULL, (gpointer) "hsdemo://x");

    tu_launch_and_wait (path, uris);
    g_list_free (uris);
    assert_ran_wrapped (f, "GLib", want);
    g_desktop_app_info_launch_action (info, "a", NULL);
    assert_ran_wrapped (f, "GLib (action)", (const char * const[]) { "hs", "--", "true", NULL });
  }

  /* pyxdg: getExec() is what dex and other pyxdg launchers run */
  {
    const char *python = g_getenv ("GL_TEST_PYTHON");
    const char *argv[] = { python, "-c",
                           "import sys, xdg.DesktopEntry as d\n"
                           "print(d.DesktopEntry(sys.argv[1]).getExec())\n", path, NULL };
    g_autofree char *out = NULL;
    g_autofree char *want_exec = g_strdup_printf ("%s hs -- true %%u\n", f->ctx->launcher);
    int status;

    if (python == NULL)
      {
        gl_test_skip ("no python3 with pyxdg (apt install python3-xdg)");
        return;
      }
    tu_run (argv, &out, &status);
    g_assert_cmpint (status, ==, 0);
    g_assert_cmpstr (out, ==, want_exec);
  }

  /* xdg-open in generic mode (no desktop named): it finds the handler of
   * x-scheme-handler/hsdemo and runs the first Exec line it reads */
  {
    g_autofree char *xdg_open = g_find_program_in_path ("xdg-open");
    const char *argv[] = { "timeout", "30", "xdg-open", "hsdemo://x", NULL };
    const char *env[] = { "XDG_CURRENT_DESKTOP", "DESKTOP_SESSION", "KDE_FULL_SESSION",
                          "GNOME_DESKTOP_SESSION_ID", "MATE_DESKTOP_SESSION_ID", "XDG_SESSION_DESKTOP",
                          "BROWSER", "DISPLAY=:glimpse-test", NULL };
    int status;

    if (xdg_open == NULL)
      {
        gl_test_skip ("xdg-open is not installed (apt install xdg-utils)");
        return;
      }
    tu_run_env (argv, env, NULL, &status);
    g_assert_cmpint (status, ==, 0);
    assert_ran_wrapped (f, "xdg-open", want);
  }

  /* KDE's KIO: kioclient5 exec reads the localized keys (without a URL:
   * with one it waits for KIO workers that need a KDE session) */
  {
    g_autofree char *kioclient = g_find_program_in_path ("kioclient5");
    const char *argv[] = { "timeout", "30", "kioclient5", "exec", path, NULL };
    /* KIO finds its workers and the MIME database under /usr/share */
    g_autofree char *dirs = g_strjoinv (":", (GStrv) g_get_system_data_dirs ());
    g_autofree char *data_dirs = g_strdup_printf ("XDG_DATA_DIRS=%s:/usr/share", dirs);
    const char *env[] = { "QT_QPA_PLATFORM=offscreen", "LANG=en_US.UTF-8", "LANGUAGE=en_US",
                          "LC_ALL=en_US.UTF-8", "XDG_RUNTIME_DIR", data_dirs, NULL };
    int status;

    if (kioclient == NULL)
      {
        gl_test_skip ("kioclient5 is not installed (apt install kde-cli-tools)");
        return;
      }
    tu_run_env (argv, env, NULL, &status);
    g_assert_cmpint (status, ==, 0);
    assert_ran_wrapped (f, "kioclient5", (const char * const[]) { "hs", "--", "true", NULL });
  }
}

/* 31: a bare CR inside a kept value is a line end to pyxdg (and others):
 * "Comment=hello<CR>Exec=..." would be a second Exec.  Such an entry is not
 * exported; nor is one with a control character in its name. */
static void
test_control_characters (Fixture *f, gconstpointer data)
{
  g_autofree char *cr = g_strdup_printf ("[Desktop Entry]\nType=Application\nName=CR\n"
                                         "Comment=hello\rExec=touch %s\nExec=true\n", f->marker);
  g_autofree char *cr_path = NULL;

  tu_write (f->tree, "usr/share/applications/cr.desktop", cr);
  tu_write (f->tree, "usr/share/applications/tab.desktop",
            "[Desktop Entry]\nType=Application\nName=Tab\\tName\nExec=true\n");
  tu_write (f->tree, "usr/share/applications/fine.desktop",
            "[Desktop Entry]\nType=Application\nName=Fine\nExec=true\n");
  sync_ok (f);
  cr_path = exported (f, "glimpse-hs+cr.desktop");
  g_assert_false (g_file_test (cr_path, G_FILE_TEST_EXISTS));
  assert_warned (f, "cr.desktop", "control character (0x0d)");
  assert_warned (f, "tab.desktop", "control character (0x09)");
  {
    g_autofree char *fine = exported (f, "glimpse-hs+fine.desktop");
    g_assert_true (g_file_test (fine, G_FILE_TEST_EXISTS));
  }
}

static gboolean
alarm_fired (gpointer data)
{
  g_error ("the export hung");
  return G_SOURCE_REMOVE;
}

/* 32, 34: a FIFO, a device node, links out of the tree and /proc/self as
 * entries or icons are skipped with a warning, never followed, never waited
 * on; nothing of the user's private files is copied out. */
static void
test_special_files (Fixture *f, gconstpointer data)
{
  g_autofree char *fifo = g_build_filename (f->tree, "usr/share/applications/fifo.desktop", NULL);
  g_autofree char *dev = g_build_filename (f->tree, "usr/share/applications/dev.desktop", NULL);
  g_autofree char *private_dir = g_build_filename (f->root, "private", NULL);
  g_autofree char *secret = g_build_filename (private_dir, "secret.desktop", NULL);
  g_autofree char *secret_icon = g_build_filename (private_dir, "q.svg", NULL);
  g_autofree char *out_link = g_strdup_printf ("../../../../../../../../../../../../%s", secret);
  g_autofree char *snapshot = NULL;
  g_autofree char *cwd = g_get_current_dir ();
  g_autoptr(GlExportSource) host = NULL;
  gboolean have_dev;
  guint alarm;

  /* the user's private files */
  tu_write (private_dir, "secret.desktop",
            "[Desktop Entry]\nType=Application\nName=Secret\nComment=password=hunter2\nExec=true\n");
  tu_write (private_dir, "q.svg", "<svg><!-- password=hunter2 --></svg>\n");
  g_assert_cmpint (chmod (secret, 0600), ==, 0);
  g_assert_cmpint (chmod (secret_icon, 0600), ==, 0);
  g_assert_cmpint (chmod (private_dir, 0700), ==, 0);

  tu_write (f->tree, "usr/share/applications/keep.desktop",
            "[Desktop Entry]\nType=Application\nName=Keep\nExec=true\n");
  g_assert_cmpint (mkfifo (fifo, 0644), ==, 0);
  have_dev = mknod (dev, S_IFCHR | 0644, makedev (1, 3)) == 0;   /* /dev/null; needs root */
  tu_symlink (f->tree, "usr/share/applications/up.desktop", out_link);
  tu_symlink (f->tree, "usr/share/applications/abs.desktop", secret);
  tu_symlink (f->tree, "usr/share/applications/self.desktop", "/proc/self/root/etc/hostname");
  /* icons: through /proc/self/cwd, out of the tree, a FIFO */
  tu_write (f->tree, "usr/share/applications/icons.desktop",
            "[Desktop Entry]\nType=Application\nName=Icons\nExec=true\n"
            "Icon=/proc/self/cwd/private/q.svg\n");
  tu_write (f->tree, "usr/share/applications/icon-link.desktop",
            "[Desktop Entry]\nType=Application\nName=Icon link\nExec=true\nIcon=evil\n");
  tu_symlink (f->tree, "usr/share/icons/hicolor/scalable/apps/evil.svg", secret_icon);
  {
    g_autofree char *ififo = g_build_filename (f->tree, "usr/share/pixmaps/fifo.png", NULL);
    tu_write (f->tree, "usr/share/applications/icon-fifo.desktop",
              "[Desktop Entry]\nType=Application\nName=Icon FIFO\nExec=true\n"
              "Icon=/usr/share/pixmaps/fifo.png\n");
    tu_write (f->tree, "usr/share/pixmaps/.keep", "");
    g_assert_cmpint (mkfifo (ififo, 0644), ==, 0);
  }
  /* a sandbox of the host: its base is "/", so /proc and the home are in
   * its tree; the export runs in the private directory's parent */
  host = source_for (f->tree, "host");
  g_strfreev (host->data_roots);
  host->data_roots = g_strdupv ((GStrv) (const char *[]) { f->tree, "/", NULL });
  g_ptr_array_add (f->sources, g_steal_pointer (&host));
  g_assert_cmpint (chdir (f->root), ==, 0);

  alarm = g_timeout_add_seconds (30, alarm_fired, NULL);
  sync_ok (f);
  g_source_remove (alarm);
  g_assert_cmpint (chdir (cwd), ==, 0);

  assert_warned (f, "fifo.desktop", "a FIFO");
  if (have_dev)
    assert_warned (f, "dev.desktop", "a device node");
  else
    g_test_message ("mknod not allowed here: no device-node case");
  assert_warned (f, "up.desktop", "No such file");
  assert_warned (f, "abs.desktop", "No such file");
  assert_warned (f, "self.desktop", "No such file");
  {
    g_autofree char *keep = exported (f, "glimpse-hs+keep.desktop");
    g_assert_true (g_file_test (keep, G_FILE_TEST_EXISTS));
  }

  /* nothing of the private files anywhere in the user's directories, and
   * the icons that lead there or to a FIFO are not exported */
  snapshot = tu_snapshot (f->ctx->data_home);
  g_test_message ("%s", snapshot);
  {
    g_autofree char *all = NULL;
    const char *grep[] = { "grep", "-r", "-l", "hunter2", f->ctx->data_home, NULL };
    int status;

    tu_run (grep, &all, &status);
    g_assert_cmpint (status, ==, 1);   /* nothing found */
  }
  assert_warned (f, "/proc/self/cwd/private/q.svg", "outside the places");
  g_assert_null (strstr (snapshot, "q.svg"));
  g_assert_null (strstr (snapshot, "evil."));
  g_assert_null (strstr (snapshot, "fifo.png"));
}

/* 33: a 2 GiB sparse icon, a 1 GiB desktop file, more entries than the cap:
 * refused quickly, one warning for the flood; nothing large written. */
static void
test_caps (Fixture *f, gconstpointer data)
{
  static const struct { const char *rel; goffset size; } sparse[] = {
    { "usr/share/icons/hicolor/256x256/apps/big.png", G_GOFFSET_CONSTANT (2) << 30 },
    { "usr/share/icons/hicolor/scalable/apps/big.svg", G_GOFFSET_CONSTANT (2) << 30 },
    { "usr/share/applications/huge.desktop", G_GOFFSET_CONSTANT (1) << 30 },
  };
  g_autofree char *snapshot = NULL;
  guint flood = 0;

  tu_write (f->tree, "usr/share/applications/big.desktop",
            "[Desktop Entry]\nType=Application\nName=Big\nExec=true\nIcon=big\n");
  for (gsize i = 0; i < G_N_ELEMENTS (sparse); i++)
    {
      g_autofree char *path = g_build_filename (f->tree, sparse[i].rel, NULL);
      g_autofree char *dir = g_path_get_dirname (path);
      int fd;

      g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
      fd = open (path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
      g_assert_cmpint (fd, >=, 0);
      /* a PNG header, then holes */
      g_assert_cmpint (write (fd, "\x89PNG\r\n\x1a\n", 8), ==, 8);
      g_assert_cmpint (ftruncate (fd, sparse[i].size), ==, 0);
      close (fd);
    }
  for (guint i = 0; i < GL_EXPORT_MAX_APPS + 10; i++)
    {
      g_autofree char *rel = g_strdup_printf ("usr/share/applications/flood/app%05u.desktop", i);
      tu_write (f->tree, rel, "[Desktop Entry]\nType=Application\nName=Flood\nExec=true\nNoDisplay=true\n");
    }

  sync_ok (f);
  assert_warned (f, "big.png", "more than the 1048576 allowed");
  assert_warned (f, "big.svg", "more than the 262144 allowed");
  assert_warned (f, "huge.desktop", "more than the 65536 allowed");
  for (guint i = 0; i < f->warnings->len; i++)
    if (g_error_matches (f->warnings->pdata[i], GL_EXPORT_ERROR, GL_EXPORT_ERROR_TOO_MANY))
      flood++;
  g_assert_cmpuint (flood, ==, 1);
  assert_warned (f, "Sandbox hs", "more than 2000 applications");

  snapshot = tu_snapshot (f->ctx->data_home);
  g_assert_null (strstr (snapshot, "big.png"));
  g_assert_null (strstr (snapshot, "big.svg"));
  {
    g_autofree char *big = exported (f, "glimpse-hs+big.desktop");
    g_assert_true (g_file_test (big, G_FILE_TEST_EXISTS));
  }
}

/* 34: no exported file is more readable than its source. */
static void
test_modes (Fixture *f, gconstpointer data)
{
  g_autofree char *closed = g_build_filename (f->tree, "usr/share/icons/hicolor/48x48/apps/closed.png", NULL);
  g_autofree char *closed_entry = g_build_filename (f->tree, "usr/share/applications/closed.desktop", NULL);
  g_autofree char *open_icon = NULL;
  struct stat st;

  tu_write (f->tree, "usr/share/applications/icon.desktop",
            "[Desktop Entry]\nType=Application\nName=I\nExec=true\nIcon=closed\n");
  tu_write (f->tree, "usr/share/applications/closed.desktop",
            "[Desktop Entry]\nType=Application\nName=Closed\nComment=password=hunter2\nExec=true\n");
  tu_write_png (f->tree, "usr/share/icons/hicolor/48x48/apps/closed.png", 48);
  tu_write_png (f->tree, "usr/share/icons/hicolor/32x32/apps/closed.png", 32);
  g_assert_cmpint (chmod (closed, 0600), ==, 0);
  g_assert_cmpint (chmod (closed_entry, 0640), ==, 0);
  sync_ok (f);
  assert_warned (f, "closed.png", "not readable by everyone");
  assert_warned (f, "closed.desktop", "not readable by everyone");
  {
    g_autofree char *e = exported (f, "glimpse-hs+closed.desktop");
    g_autofree char *hidden = g_build_filename (f->ctx->data_home, "icons/hicolor/48x48/apps/glimpse-hs+closed.png", NULL);
    g_assert_false (g_file_test (e, G_FILE_TEST_EXISTS));
    g_assert_false (g_file_test (hidden, G_FILE_TEST_EXISTS));
  }
  open_icon = g_build_filename (f->ctx->data_home, "icons/hicolor/32x32/apps/glimpse-hs+closed.png", NULL);
  g_assert_cmpint (stat (open_icon, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 07777, ==, 0644);
}

/* 35: "hs-a" + "b-x.desktop" and "hs-a-b" + "x.desktop" are two names; the
 * manifest says whose each is; two icon names that sanitize alike collide
 * visibly instead of overwriting each other. */
static void
test_names (Fixture *f, gconstpointer data)
{
  g_autofree char *tree_b = g_build_filename (f->root, "tree-b", NULL);
  g_autofree char *manifest = gl_export_manifest_path (f->ctx);
  g_autofree char *text = NULL;
  g_autofree char *a = NULL;
  g_autofree char *b = NULL;

  g_ptr_array_set_size (f->sources, 0);
  g_ptr_array_add (f->sources, source_for (f->tree, "hs-a"));
  g_ptr_array_add (f->sources, source_for (tree_b, "hs-a-b"));
  tu_write (f->tree, "usr/share/applications/b-x.desktop",
            "[Desktop Entry]\nType=Application\nName=A\nExec=a\nIcon=b-x\n");
  tu_write (tree_b, "usr/share/applications/x.desktop",
            "[Desktop Entry]\nType=Application\nName=B\nExec=b\nIcon=x\n");
  tu_write_png (f->tree, "usr/share/icons/hicolor/48x48/apps/b-x.png", 48);
  tu_write_png (tree_b, "usr/share/icons/hicolor/48x48/apps/x.png", 48);
  /* two icons whose names sanitize alike, with different contents */
  tu_write (f->tree, "usr/share/applications/one.desktop",
            "[Desktop Entry]\nType=Application\nName=One\nExec=one\nIcon=a b\n");
  tu_write (f->tree, "usr/share/applications/two.desktop",
            "[Desktop Entry]\nType=Application\nName=Two\nExec=two\nIcon=a_b\n");
  tu_write (f->tree, "usr/share/icons/hicolor/scalable/apps/a b.svg", "<svg>one</svg>\n");
  tu_write (f->tree, "usr/share/icons/hicolor/scalable/apps/a_b.svg", "<svg>two</svg>\n");
  sync_ok (f);

  a = exported (f, "glimpse-hs-a+b-x.desktop");
  b = exported (f, "glimpse-hs-a-b+x.desktop");
  g_assert_true (g_file_test (a, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (b, G_FILE_TEST_EXISTS));
  {
    g_autofree char *ta = NULL;
    g_autofree char *tb = NULL;
    g_assert_true (g_file_get_contents (a, &ta, NULL, NULL));
    g_assert_true (g_file_get_contents (b, &tb, NULL, NULL));
    g_assert_nonnull (strstr (ta, "X-Glimpse-Sandbox=hs-a\n"));
    g_assert_nonnull (strstr (tb, "X-Glimpse-Sandbox=hs-a-b\n"));
    g_assert_nonnull (strstr (ta, "Icon=glimpse-hs-a+b-x\n"));
    g_assert_nonnull (strstr (tb, "Icon=glimpse-hs-a-b+x\n"));
  }
  g_assert_true (g_file_get_contents (manifest, &text, NULL, NULL));
  g_assert_nonnull (strstr (text, "sandbox\ths-a\ths-a\tglimpse-hs-a+b-x.desktop;"));
  g_assert_nonnull (strstr (text, "sandbox\ths-a-b\ths-a-b\tglimpse-hs-a-b+x.desktop\n"));
  assert_warned (f, "a_b", "exported already");

  /* unexporting one leaves the other's whole */
  g_assert_true (gl_export_unexport (f->ctx, "hs-a", NULL));
  g_assert_false (g_file_test (a, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (b, G_FILE_TEST_EXISTS));
  tu_tree_free (g_steal_pointer (&tree_b));
}

/* 36: claims on the web, mail and file schemes, directories and every type
 * never make the sandbox's app a handler of them; a type of its own it
 * keeps.  Checked with gio mime and xdg-mime, with a host app handling the
 * web and directories. */
static void
test_mime_claims (Fixture *f, gconstpointer data)
{
  const char *data_dir = g_get_system_data_dirs ()[0];
  static const char * const denied[] = {
    "x-scheme-handler/https", "x-scheme-handler/http", "x-scheme-handler/mailto",
    "x-scheme-handler/file", "inode/directory",
  };
  g_autofree char *path = NULL;
  g_autofree char *text = NULL;

  tu_write (data_dir, "applications/host-browser.desktop",
            "[Desktop Entry]\nType=Application\nName=Host browser\nExec=true %u\n"
            "MimeType=x-scheme-handler/https;x-scheme-handler/http;x-scheme-handler/mailto;"
            "x-scheme-handler/file;inode/directory;\n");
  {
    g_autofree char *dir = g_build_filename (data_dir, "applications", NULL);
    const char *argv[] = { "update-desktop-database", "-q", dir, NULL };
    int status;
    tu_run (argv, NULL, &status);
  }
  tu_write (f->tree, "usr/share/applications/grabby.desktop",
            "[Desktop Entry]\nType=Application\nName=Grabby\nExec=grabby %u\n"
            "MimeType=x-scheme-handler/https;x-scheme-handler/http;X-Scheme-Handler/MailTo;"
            "x-scheme-handler/file;inode/directory;inode/mount-point;*/*;text/*;all/all;"
            "application/x-grabby;x-scheme-handler/grabby;\n");
  sync_ok (f);
  path = exported (f, "glimpse-hs+grabby.desktop");
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  g_assert_nonnull (strstr (text, "\nMimeType=application/x-grabby;x-scheme-handler/grabby;\n"));

  for (gsize i = 0; i < G_N_ELEMENTS (denied); i++)
    {
      const char *gio[] = { "gio", "mime", denied[i], NULL };
      const char *xdg_mime[] = { "xdg-mime", "query", "default", denied[i], NULL };
      g_autofree char *out = NULL;
      g_autofree char *out2 = NULL;
      int status;

      tu_run (gio, &out, &status);
      g_test_message ("gio mime %s:\n%s", denied[i], out);
      g_assert_cmpint (status, ==, 0);
      g_assert_nonnull (strstr (out, "host-browser.desktop"));
      g_assert_null (strstr (out, "glimpse-"));
      tu_run (xdg_mime, &out2, &status);
      g_assert_cmpstr (out2, ==, "host-browser.desktop\n");
    }
  /* its own scheme: the only handler there is */
  {
    const char *gio[] = { "gio", "mime", "x-scheme-handler/grabby", NULL };
    g_autofree char *out = NULL;
    int status;

    tu_run (gio, &out, &status);
    g_assert_nonnull (strstr (out, "glimpse-hs+grabby.desktop"));
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_setup, fn, fixture_teardown)
  ADD ("/export-attacks/31-duplicate-and-localized-exec", test_duplicate_and_localized_exec);
  ADD ("/export-attacks/31-control-characters", test_control_characters);
  ADD ("/export-attacks/32-34-special-files", test_special_files);
  ADD ("/export-attacks/33-caps", test_caps);
  ADD ("/export-attacks/34-modes", test_modes);
  ADD ("/export-attacks/35-names", test_names);
  ADD ("/export-attacks/36-mime-claims", test_mime_claims);
#undef ADD
  return g_test_run ();
}
