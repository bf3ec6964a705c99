/* Exec= values: splitting, joining, quoting, wrapping, expansion.
 * Properties: split(join(split(x))) == split(x); wrap(x) splits to
 * launcher, id, "--", then exactly split(x); any argument without '%'
 * survives join and split unchanged; a control character is quoted.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "gl-exec.h"
#include "fuzz.h"

#define LAUNCHER "/usr/bin/glimpse-launch"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autofree char *exec = g_strndup ((const char *) data, size);
  g_auto(GStrv) argv = NULL;
  g_autoptr(GError) error = NULL;

  if (size > 8192)
    return 0;

  /* any one argument (no field codes in it) is quoted so it comes back */
  if (strchr (exec, '%') == NULL)
    {
      const char *two[] = { "prog", exec, NULL };
      g_autofree char *joined = gl_exec_join (two);
      g_auto(GStrv) back = NULL;
      g_autoptr(GError) e = NULL;

      FUZZ_ASSERT (gl_exec_split (joined, &back, &e));
      FUZZ_ASSERT (g_strv_equal ((const char * const *) back, two));
    }
  /* a control character forces double quotes (consumers that read a
   * key file line by line, or a terminal, must not see it bare) */
  {
    g_autofree char *q = gl_exec_quote_arg (exec);
    gboolean has_control = FALSE;

    for (const char *p = exec; *p != '\0'; p++)
      if ((guchar) *p < 0x20 || *p == 0x7f)
        has_control = TRUE;
    if (has_control)
      FUZZ_ASSERT (q[0] == '"');
  }

  if (!gl_exec_split (exec, &argv, &error))
    {
      FUZZ_ASSERT (error != NULL && error->domain == GL_EXEC_ERROR);
      return 0;
    }
  FUZZ_ASSERT (argv != NULL && argv[0] != NULL);

  {
    g_autofree char *joined = gl_exec_join ((const char * const *) argv);
    g_auto(GStrv) again = NULL;
    g_autoptr(GError) e = NULL;

    FUZZ_ASSERT (gl_exec_split (joined, &again, &e));
    FUZZ_ASSERT (g_strv_equal ((const char * const *) again, (const char * const *) argv));
  }

  {
    g_autoptr(GError) e = NULL;
    g_autofree char *wrapped = gl_exec_wrap (LAUNCHER, "sb-1", exec, &e);
    g_auto(GStrv) w = NULL;
    g_autoptr(GError) e2 = NULL;

    FUZZ_ASSERT (wrapped != NULL);
    FUZZ_ASSERT (gl_exec_split (wrapped, &w, &e2));
    FUZZ_ASSERT (g_strv_length (w) >= 4);
    FUZZ_ASSERT (strcmp (w[0], LAUNCHER) == 0 && strcmp (w[1], "sb-1") == 0 &&
                 strcmp (w[2], "--") == 0);
    FUZZ_ASSERT (g_strv_equal ((const char * const *) w + 3, (const char * const *) argv));
  }

  {
    const char *uris[] = { "file:///tmp/a%20b", "https://example.org/x?y=1", NULL };
    guint n_used = 0;
    g_auto(GStrv) expanded = gl_exec_expand ((const char * const *) argv, uris,
                                             "icon", "Name", "/x.desktop", &n_used);

    FUZZ_ASSERT (expanded != NULL);
    FUZZ_ASSERT (n_used <= 2);
  }
  return 0;
}
