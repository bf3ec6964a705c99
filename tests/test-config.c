/* test-config.c: glimpse.conf, read in one place (gl-config.h)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <errno.h>
#include <glib/gstdio.h>

#include "gl-config.h"
#include "gl-pkg-limits.h"
#include "gl-repo.h"

static char *
write_conf (const char *text)
{
  g_autofree char *dir = g_dir_make_tmp ("gl-config-XXXXXX", NULL);
  char *path = g_build_filename (dir, "glimpse.conf", NULL);

  g_assert_true (g_file_set_contents (path, text, -1, NULL));
  return path;
}

/* No file: the defaults */
static void
test_defaults (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GlConfig) c = gl_config_load ("/nonexistent/glimpse.conf", &error);

  g_assert_no_error (error);
  g_assert_cmpuint (c->max_tasks, ==, 2048);
  g_assert_cmpuint (c->max_memory_mib, ==, 4096);
  g_assert_cmpuint (c->max_seconds, ==, 14400);
  g_assert_cmpuint (c->min_free_mib, ==, 256);
  g_assert_nonnull (c->mirrors);
  g_assert_null (c->mirrors[0]);
  g_assert_null (c->launchpad_api);
  g_assert_null (c->ppa_archive);
}

/* Every [Packages] key from the one parser; the limits' loader agrees */
static void
test_packages (void)
{
  g_autofree char *path = write_conf ("[Packages]\nMaxTasks= 64 \nMaxSeconds=0\n"
                                      "Mirrors=http://a.invalid/ ; http://b.invalid/\n"
                                      "LaunchpadAPI=http://127.0.0.1:1/devel\nPPAArchive=http://127.0.0.1:1/ppa\n");
  g_autoptr(GError) error = NULL;
  g_autoptr(GlConfig) c = gl_config_load (path, &error);
  GlPkgLimitValues v = { 0 };
  g_autofree char *dir = g_path_get_dirname (path);

  g_assert_no_error (error);
  g_assert_cmpuint (c->max_tasks, ==, 64);
  g_assert_cmpuint (c->max_seconds, ==, 0);
  g_assert_cmpuint (c->max_memory_mib, ==, 4096);
  g_assert_cmpuint (g_strv_length (c->mirrors), ==, 2);
  g_assert_cmpstr (c->mirrors[0], ==, "http://a.invalid/");
  g_assert_cmpstr (c->mirrors[1], ==, "http://b.invalid/");
  g_assert_cmpstr (c->launchpad_api, ==, "http://127.0.0.1:1/devel");
  g_assert_cmpstr (c->ppa_archive, ==, "http://127.0.0.1:1/ppa");
  g_assert_true (gl_pkg_limits_load (path, &v, &error));
  g_assert_cmpuint (v.max_tasks, ==, 64);
  g_assert_cmpuint (v.max_seconds, ==, 0);
  g_assert_cmpuint (v.min_free_mib, ==, 256);
  g_unlink (path);
  g_rmdir (dir);
}

/* A limit that is not a number is named, with the file */
static void
test_bad_limit (void)
{
  g_autofree char *path = write_conf ("[Packages]\nMaxMemoryMiB=lots\n");
  g_autoptr(GError) error = NULL;
  g_autoptr(GlConfig) c = gl_config_load (path, &error);
  g_autofree char *dir = g_path_get_dirname (path);

  g_assert_null (c);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
  g_assert_nonnull (strstr (error->message, "MaxMemoryMiB= in the [Packages] group of"));
  g_assert_nonnull (strstr (error->message, path));
  g_assert_nonnull (strstr (error->message, "“lots”, not a number"));
  g_unlink (path);
  g_rmdir (dir);
}

/* A file that is there but not a key file is an error naming it and what
 * to do, never the defaults: the administrator's limits are not lost */
static void
test_unparsable (void)
{
  g_autofree char *path = write_conf ("[Packages]\nMaxTasks=64\nthis line is no setting\n");
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *where = g_strconcat (path, ":3", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GlConfig) c = gl_config_load (path, &error);
  GlPkgLimitValues v = { 0 };

  g_assert_null (c);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
  g_assert_nonnull (strstr (error->message, where));
  g_assert_nonnull (strstr (error->message, "this line is no setting"));
  g_assert_nonnull (strstr (error->message, "correct that line, or remove the file"));
  g_clear_error (&error);
  /* the package operations' limits read it: they refuse too */
  g_assert_false (gl_pkg_limits_load (path, &v, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
  g_unlink (path);
  g_rmdir (dir);
}

/* A glimpse.conf that cannot be read (here a directory) is an error too */
static void
test_unreadable (void)
{
  g_autofree char *dir = g_dir_make_tmp ("gl-config-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "glimpse.conf", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GlConfig) c = NULL;

  g_assert_no_errno (g_mkdir (path, 0700));
  c = gl_config_load (path, &error);
  g_assert_null (c);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_IS_DIRECTORY);
  /* the path once, in glimpse's words (not again inside GLib's "Error
   * reading file “…”"), the reason, and what to do */
  {
    g_autofree char *said = g_strdup_printf ("Cannot read the settings in %s: %s (make it a file", path,
                                             g_strerror (EISDIR));
    const char *first = strstr (error->message, path);
    if (strstr (error->message, said) == NULL || strstr (first + strlen (path), path) != NULL)
      g_error ("“%s” does not say “%s…” naming the path once", error->message, said);
  }
  g_rmdir (path);
  g_rmdir (dir);
}

/* ppa: looks where glimpse.conf says; a glimpse.conf it cannot parse is
 * an error, not Launchpad's public address */
static void
test_launchpad_api (void)
{
  g_autofree char *good = write_conf ("[Packages]\nLaunchpadAPI=http://127.0.0.1:1/devel\n");
  g_autofree char *bad = write_conf ("[Packages\nLaunchpadAPI=http://127.0.0.1:1/devel\n");
  g_autoptr(GError) error = NULL;
  g_autofree char *api = NULL;

  g_unsetenv ("GLIMPSE_LAUNCHPAD_API");
  g_setenv ("GLIMPSE_CONF", good, TRUE);
  api = gl_repo_launchpad_api (&error);
  g_assert_no_error (error);
  g_assert_cmpstr (api, ==, "http://127.0.0.1:1/devel");
  g_clear_pointer (&api, g_free);
  g_setenv ("GLIMPSE_CONF", bad, TRUE);
  api = gl_repo_launchpad_api (&error);
  g_assert_null (api);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
  g_assert_nonnull (strstr (error->message, bad));
  g_clear_error (&error);
  /* the environment's address wins without reading the file */
  g_setenv ("GLIMPSE_LAUNCHPAD_API", "http://127.0.0.1:2/devel", TRUE);
  api = gl_repo_launchpad_api (&error);
  g_assert_no_error (error);
  g_assert_cmpstr (api, ==, "http://127.0.0.1:2/devel");
  g_unsetenv ("GLIMPSE_LAUNCHPAD_API");
  g_unsetenv ("GLIMPSE_CONF");
  {
    const char *confs[] = { good, bad };
    for (gsize i = 0; i < G_N_ELEMENTS (confs); i++)
      {
        g_autofree char *dir = g_path_get_dirname (confs[i]);
        g_unlink (confs[i]);
        g_rmdir (dir);
      }
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_test_add_func ("/config/defaults", test_defaults);
  g_test_add_func ("/config/packages", test_packages);
  g_test_add_func ("/config/bad-limit", test_bad_limit);
  g_test_add_func ("/config/unparsable", test_unparsable);
  g_test_add_func ("/config/unreadable", test_unreadable);
  g_test_add_func ("/config/launchpad-api", test_launchpad_api);
  return g_test_run ();
}
