/* gl-config.c: the administrator's settings (see gl-config.h)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-config.h"

#include "gl-fsutil.h"
#include "gl-paths.h"

static const struct {
  const char *key;
  gsize offset;
  guint64 fallback;
} limits[] = {
  { "MaxTasks", G_STRUCT_OFFSET (GlConfig, max_tasks), 2048 },
  { "MaxMemoryMiB", G_STRUCT_OFFSET (GlConfig, max_memory_mib), 4096 },
  { "MaxSeconds", G_STRUCT_OFFSET (GlConfig, max_seconds), 14400 },
  { "MinFreeMiB", G_STRUCT_OFFSET (GlConfig, min_free_mib), 256 },
};

GlConfig *
gl_config_load (const char *path, GError **error)
{
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  g_autoptr(GlConfig) c = g_new0 (GlConfig, 1);
  g_autoptr(GError) load_error = NULL;
  g_autofree char *data = NULL;
  gsize length = 0;
  gboolean loaded = g_file_get_contents (path, &data, &length, &load_error);

  /* no file is the defaults; one that is there but cannot be read or
   * parsed is the administrator's settings lost, never the defaults */
  if (!loaded && !g_error_matches (load_error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
    {
      g_set_error (error, G_IO_ERROR, g_io_error_from_file_error (load_error->code),
                   "Cannot read the settings: %s (make it a file glimpse can read, or remove "
                   "it to use the defaults)", load_error->message);
      return NULL;
    }
  if (loaded && !g_key_file_load_from_data (kf, data, length, G_KEY_FILE_NONE, &load_error))
    {
      guint line = gl_keyfile_bad_line (data, length);
      g_autofree char *where = line ? g_strdup_printf ("%s:%u", path, line) : g_strdup (path);
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "Cannot read the settings in %s: %s (correct that line, or remove the file to "
                   "use the defaults)", where, load_error->message);
      return NULL;
    }
  c->path = g_strdup (path);
  for (gsize i = 0; i < G_N_ELEMENTS (limits); i++)
    {
      guint64 *v = G_STRUCT_MEMBER_P (c, limits[i].offset);
      g_autofree char *text = loaded ? g_key_file_get_string (kf, "Packages", limits[i].key, NULL) : NULL;

      *v = limits[i].fallback;
      if (text == NULL)
        continue;
      g_strstrip (text);
      if (!g_ascii_string_to_unsigned (text, 10, 0, G_MAXUINT32, v, NULL))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                       "%s= in the [Packages] group of %s is “%s”, not a number (0 turns the "
                       "limit off)", limits[i].key, path, text);
          return NULL;
        }
    }
  c->mirrors = loaded ? g_key_file_get_string_list (kf, "Packages", "Mirrors", NULL, NULL) : NULL;
  if (c->mirrors == NULL)
    c->mirrors = g_new0 (char *, 1);
  for (char **m = c->mirrors; *m; m++)
    g_strstrip (*m);
  if (loaded)
    {
      c->launchpad_api = g_key_file_get_string (kf, "Packages", "LaunchpadAPI", NULL);
      c->ppa_archive = g_key_file_get_string (kf, "Packages", "PPAArchive", NULL);
    }
  return g_steal_pointer (&c);
}

GlConfig *
gl_config_load_default (GError **error)
{
  return gl_config_load (gl_paths_config_file (), error);
}

void
gl_config_free (GlConfig *c)
{
  if (c == NULL)
    return;
  g_free (c->path);
  g_strfreev (c->mirrors);
  g_free (c->launchpad_api);
  g_free (c->ppa_archive);
  g_free (c);
}
