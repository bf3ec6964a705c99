/* Desktop entries from a sandbox, rewritten for the host (gl_export_rewrite_entry).
 * Properties: the result is a valid key file; every group's Exec runs
 * the launcher with the sandbox's id and "--" first.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "gl-exec.h"
#include "gl-export.h"
#include "fuzz.h"

#define LAUNCHER "/usr/bin/glimpse-launch"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autoptr(GKeyFile) in = g_key_file_new ();
  g_autoptr(GKeyFile) out = NULL;
  g_autoptr(GKeyFile) reread = g_key_file_new ();
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) groups = NULL;
  g_autofree char *text = NULL;
  gsize len = 0;

  if (size > 65536)
    return 0;
  if (!g_key_file_load_from_data (in, (const char *) data, size,
                                  G_KEY_FILE_KEEP_COMMENTS | G_KEY_FILE_KEEP_TRANSLATIONS, NULL))
    return 0;
  out = gl_export_rewrite_entry (in, "org.example.App.desktop", "sb-1", "Sandbox",
                                 LAUNCHER, NULL, &error);
  if (out == NULL)
    {
      FUZZ_ASSERT (error != NULL);
      return 0;
    }

  text = g_key_file_to_data (out, &len, NULL);
  FUZZ_ASSERT (g_key_file_load_from_data (reread, text, len, G_KEY_FILE_NONE, NULL));

  groups = g_key_file_get_groups (reread, NULL);
  for (gsize i = 0; groups[i] != NULL; i++)
    {
      g_autofree char *exec = g_key_file_get_string (reread, groups[i], "Exec", NULL);
      g_auto(GStrv) argv = NULL;

      if (exec == NULL)
        {
          FUZZ_ASSERT (strcmp (groups[i], G_KEY_FILE_DESKTOP_GROUP) != 0);
          continue;
        }
      FUZZ_ASSERT (gl_exec_split (exec, &argv, NULL));
      FUZZ_ASSERT (g_strv_length (argv) >= 4);
      FUZZ_ASSERT (strcmp (argv[0], LAUNCHER) == 0 && strcmp (argv[1], "sb-1") == 0 &&
                   strcmp (argv[2], "--") == 0);
    }
  return 0;
}
