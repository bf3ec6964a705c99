/* test-exec: Exec= splitting, quoting, wrapping and expansion
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include "gl-exec.h"

typedef struct {
  const char *exec;          /* as g_key_file_get_string returns it */
  const char *argv[10];      /* expected split, NULL-terminated */
  const char *wrapped;       /* expected wrapper, launcher "/usr/bin/glimpse-launch", id "deb" */
} SplitCase;

static const SplitCase split_cases[] = {
  { "gedit %U", { "gedit", "%U", NULL }, "/usr/bin/glimpse-launch deb -- gedit %U" },
  { "firefox-esr %u", { "firefox-esr", "%u", NULL }, "/usr/bin/glimpse-launch deb -- firefox-esr %u" },
  { "libreoffice --writer %U", { "libreoffice", "--writer", "%U", NULL }, NULL },
  { "\"/opt/My App/bin/app\" --flag %F", { "/opt/My App/bin/app", "--flag", "%F", NULL },
    "/usr/bin/glimpse-launch deb -- \"/opt/My App/bin/app\" --flag %F" },
  { "sh -c \"echo \\\"hi \\$USER\\\" \\`date\\` \\\\ x\"",
    { "sh", "-c", "echo \"hi $USER\" `date` \\ x", NULL },
    "/usr/bin/glimpse-launch deb -- sh -c \"echo \\\"hi \\$USER\\\" \\`date\\` \\\\ x\"" },
  { "app --name=%c %i %k", { "app", "--name=%c", "%i", "%k", NULL },
    "/usr/bin/glimpse-launch deb -- app --name=%c %i %k" },
  /* deprecated codes go, whole arguments and inside arguments */
  { "kdeapp %d %D %n %N %v %m -caption %c %U", { "kdeapp", "-caption", "%c", "%U", NULL },
    "/usr/bin/glimpse-launch deb -- kdeapp -caption %c %U" },
  { "app --x=%d%f", { "app", "--x=%f", NULL }, NULL },
  { "printf 100%%", { "printf", "100%%", NULL }, "/usr/bin/glimpse-launch deb -- printf 100%%" },
  { "printf \"50%% off\"", { "printf", "50%% off", NULL }, "/usr/bin/glimpse-launch deb -- printf \"50%% off\"" },
  /* what GLib's launcher also accepts */
  { "env 'A=b c' app", { "env", "A=b c", "app", NULL }, "/usr/bin/glimpse-launch deb -- env \"A=b c\" app" },
  { "app arg\\ with\\ space", { "app", "arg with space", NULL }, NULL },
  { "  lots \t of   spaces  ", { "lots", "of", "spaces", NULL }, NULL },
  { "app \"\" x", { "app", "", "x", NULL }, "/usr/bin/glimpse-launch deb -- app \"\" x" },
  { "wine \"C:\\\\Program Files\\\\x.exe\"", { "wine", "C:\\Program Files\\x.exe", NULL },
    "/usr/bin/glimpse-launch deb -- wine \"C:\\\\Program Files\\\\x.exe\"" },
  { "écrire --fichier=ñ %f", { "écrire", "--fichier=ñ", "%f", NULL },
    "/usr/bin/glimpse-launch deb -- écrire --fichier=ñ %f" },
  { "app \"a;b&c|d>e<f~g*h?i#j(k)l\"", { "app", "a;b&c|d>e<f~g*h?i#j(k)l", NULL },
    "/usr/bin/glimpse-launch deb -- app \"a;b&c|d>e<f~g*h?i#j(k)l\"" },
  { "steam steam://rungameid/570", { "steam", "steam://rungameid/570", NULL }, NULL },
  { "/usr/bin/flatpak run --branch=stable --arch=x86_64 --command=gimp-2.10 --file-forwarding org.gimp.GIMP @@ %F @@",
    { "/usr/bin/flatpak", "run", "--branch=stable", "--arch=x86_64", "--command=gimp-2.10",
      "--file-forwarding", "org.gimp.GIMP", "@@", "%F", "@@" }, NULL },
};

static void
test_split_table (void)
{
  for (gsize i = 0; i < G_N_ELEMENTS (split_cases); i++)
    {
      const SplitCase *c = &split_cases[i];
      g_auto(GStrv) argv = NULL;
      g_autoptr(GError) error = NULL;

      g_test_message ("Exec=%s", c->exec);
      g_assert_true (gl_exec_split (c->exec, &argv, &error));
      g_assert_no_error (error);
      g_assert_cmpstrv (argv, c->argv);
      if (c->wrapped != NULL)
        {
          g_autofree char *wrapped = gl_exec_wrap ("/usr/bin/glimpse-launch", "deb", c->exec, &error);
          g_assert_no_error (error);
          g_assert_cmpstr (wrapped, ==, c->wrapped);
        }
    }
}

static void
test_split_errors (void)
{
  static const char * const bad[] = { "app \"unterminated", "app 'x", "app \\", "", "   ", "%d %v", NULL };

  for (gsize i = 0; bad[i] != NULL; i++)
    {
      g_auto(GStrv) argv = NULL;
      g_autoptr(GError) error = NULL;
      g_autofree char *wrapped = NULL;
      int want;

      g_assert_false (gl_exec_split (bad[i], &argv, &error));
      want = strchr (bad[i], 'a') != NULL ? GL_EXEC_ERROR_QUOTING : GL_EXEC_ERROR_EMPTY;

      g_assert_error (error, GL_EXEC_ERROR, want);
      g_clear_error (&error);
      wrapped = gl_exec_wrap ("/l", "x", bad[i], &error);
      g_assert_null (wrapped);
      g_assert_nonnull (error);
      g_assert_true (strstr (error->message, bad[i]) != NULL);
    }
}

static void
test_round_trip (void)
{
  static const char * const nasty[] = {
    "plain", "with space", "tab\there", "new\nline", "dq\"x", "sq'x", "back\\slash",
    "\\\\double", "tick`x`", "$HOME", "${x}", "a;b", "a&b|c", "<in>", "~user", "*?#",
    "(paren)", "ünïcödé", "日本語", "", " ", "\"", "\\", "%f", "--name=%c", "100%%", "%%f",
    "end\\", "=", "-", "--", "'", "a\"b'c`d$e\\f",
  };
  g_autoptr(GPtrArray) all = g_ptr_array_new ();

  for (gsize i = 0; i < G_N_ELEMENTS (nasty); i++)
    {
      const char *one[] = { "prog", nasty[i], NULL };
      g_autofree char *joined = gl_exec_join (one);
      g_auto(GStrv) back = NULL;
      g_autoptr(GError) error = NULL;

      g_assert_true (gl_exec_split (joined, &back, &error));
      g_assert_no_error (error);
      g_assert_cmpstrv (back, one);
      g_ptr_array_add (all, (gpointer) nasty[i]);
    }
  g_ptr_array_add (all, NULL);
  {
    g_autofree char *joined = gl_exec_join ((const char * const *) all->pdata);
    g_auto(GStrv) back = NULL;

    g_assert_true (gl_exec_split (joined, &back, NULL));
    g_assert_cmpstrv (back, (const char * const *) all->pdata);
  }

  /* the key-file level escaping on top (\s \n \t \r \\) round-trips too */
  {
    const char *argv[] = { "prog", "new\nline", "tab\tx", "cr\rx", " lead", "back\\slash", NULL };
    g_autofree char *joined = gl_exec_join (argv);
    g_autoptr(GKeyFile) kf = g_key_file_new ();
    g_autofree char *data = NULL;
    g_autoptr(GKeyFile) kf2 = g_key_file_new ();
    g_autofree char *value = NULL;
    g_auto(GStrv) back = NULL;

    g_key_file_set_string (kf, "Desktop Entry", "Exec", joined);
    data = g_key_file_to_data (kf, NULL, NULL);
    g_assert_true (g_key_file_load_from_data (kf2, data, -1, G_KEY_FILE_NONE, NULL));
    value = g_key_file_get_string (kf2, "Desktop Entry", "Exec", NULL);
    g_assert_true (gl_exec_split (value, &back, NULL));
    g_assert_cmpstrv (back, argv);
  }
}

static void
test_quote_literal (void)
{
  g_autofree char *a = gl_exec_quote_literal ("/opt/gl 100%/launch");
  g_autofree char *b = gl_exec_quote_literal ("/usr/bin/glimpse-launch");
  g_autofree char *w = gl_exec_wrap ("/opt/my launcher/gl$", "deb-2", "app %f", NULL);

  g_assert_cmpstr (a, ==, "\"/opt/gl 100%%/launch\"");
  g_assert_cmpstr (b, ==, "/usr/bin/glimpse-launch");
  g_assert_cmpstr (w, ==, "\"/opt/my launcher/gl\\$\" deb-2 -- app %f");
}

static void
test_expand (void)
{
  const char *uris[] = { "file:///tmp/a%20b", "file:///tmp/c%22d", "http://example.com/x?y=1", NULL };
  guint used = 99;

  {
    const char *argv[] = { "app", "--name=%c", "%i", "%k", "%F", "100%%", NULL };
    const char *want[] = { "app", "--name=Nom", "--icon", "ic", "/usr/share/applications/a.desktop",
                           "/tmp/a b", "/tmp/c\"d", "http://example.com/x?y=1", "100%", NULL };
    g_auto(GStrv) out = gl_exec_expand (argv, uris, "ic", "Nom", "/usr/share/applications/a.desktop", &used);
    g_assert_cmpstrv (out, want);
    g_assert_cmpuint (used, ==, 3);
  }
  {
    const char *argv[] = { "app", "%U", NULL };
    const char *want[] = { "app", "file:///tmp/a%20b", "file:///tmp/c%22d", "http://example.com/x?y=1", NULL };
    g_auto(GStrv) out = gl_exec_expand (argv, uris, NULL, NULL, NULL, &used);
    g_assert_cmpstrv (out, want);
  }
  {
    const char *argv[] = { "app", "%f", NULL };
    const char *want[] = { "app", "/tmp/a b", NULL };
    g_auto(GStrv) out = gl_exec_expand (argv, uris, NULL, NULL, NULL, &used);
    g_assert_cmpstrv (out, want);
    g_assert_cmpuint (used, ==, 1);
  }
  {
    const char *argv[] = { "app", "--file=%u", NULL };
    const char *want[] = { "app", "--file=file:///tmp/a%20b", NULL };
    g_auto(GStrv) out = gl_exec_expand (argv, uris, NULL, NULL, NULL, &used);
    g_assert_cmpstrv (out, want);
    g_assert_cmpuint (used, ==, 1);
  }
  {
    /* no files: the code vanishes, the %i without an icon too */
    const char *none[] = { NULL };
    const char *argv[] = { "app", "%f", "%i", "--x=%f", NULL };
    const char *want[] = { "app", "--x=", NULL };
    g_auto(GStrv) out = gl_exec_expand (argv, none, NULL, NULL, NULL, &used);
    g_assert_cmpstrv (out, want);
    g_assert_cmpuint (used, ==, 0);
  }
  {
    /* no file code: the files are ignored, not run once each */
    const char *argv[] = { "app", "--new", NULL };
    const char *want[] = { "app", "--new", NULL };
    g_auto(GStrv) out = gl_exec_expand (argv, uris, NULL, NULL, NULL, &used);
    g_assert_cmpstrv (out, want);
    g_assert_cmpuint (used, ==, 3);
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_test_add_func ("/exec/split-table", test_split_table);
  g_test_add_func ("/exec/split-errors", test_split_errors);
  g_test_add_func ("/exec/round-trip", test_round_trip);
  g_test_add_func ("/exec/quote-literal", test_quote_literal);
  g_test_add_func ("/exec/expand", test_expand);
  return g_test_run ();
}
