/* test-paths.c: the locations and their tests' overrides
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-paths.h"

/* One rule for every override: set and not empty replaces the default;
 * unset or empty leaves it. */
static void
test_override (void)
{
  static const struct {
    const char *var;
    const char *(*get) (void);
    const char *fallback;
  } cases[] = {
    { "GLIMPSE_UPDATE_HELPER", gl_paths_update_helper, GL_UPDATE_HELPER },
    { "GLIMPSE_UPDATES_CHECK", gl_paths_updates_check, GL_LIBEXECDIR "/glimpse-updates-check" },
    { "GLIMPSE_PKGNS", gl_paths_pkgns, GL_LIBEXECDIR "/glimpse-pkgns" },
    { "GLIMPSE_BIN", gl_paths_glimpse, GL_BINDIR "/glimpse" },
    { "GLIMPSE_CONF", gl_paths_config_file, "/etc/glimpse/glimpse.conf" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *saved = g_strdup (g_getenv (cases[i].var));

      g_unsetenv (cases[i].var);
      g_assert_cmpstr (cases[i].get (), ==, cases[i].fallback);
      g_setenv (cases[i].var, "", TRUE);
      g_assert_cmpstr (cases[i].get (), ==, cases[i].fallback);
      g_setenv (cases[i].var, "/test/override", TRUE);
      g_assert_cmpstr (cases[i].get (), ==, "/test/override");
      if (saved != NULL)
        g_setenv (cases[i].var, saved, TRUE);
      else
        g_unsetenv (cases[i].var);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_test_add_func ("/paths/override", test_override);
  return g_test_run ();
}
