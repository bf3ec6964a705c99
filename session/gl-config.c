/* gl-config.c: the administrator's settings (see gl-config.h)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-config.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

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

/* The contents of @path, or NULL with errno (g_file_get_contents' error
 * would name @path inside the message that names it already) */
static char *
read_all (const char *path, gsize *length)
{
  g_autoptr(GString) s = g_string_new (NULL);
  int fd = open (path, O_RDONLY | O_CLOEXEC);

  if (fd < 0)
    return NULL;
  for (;;)
    {
      char buf[8192];
      ssize_t n = read (fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int saved = errno;
          close (fd);
          errno = saved;
          return NULL;
        }
      if (n == 0)
        break;
      g_string_append_len (s, buf, n);
    }
  close (fd);
  *length = s->len;
  return g_string_free (g_steal_pointer (&s), FALSE);
}

GlConfig *
gl_config_load (const char *path, GError **error)
{
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  g_autoptr(GlConfig) c = g_new0 (GlConfig, 1);
  g_autoptr(GError) load_error = NULL;
  gsize length = 0;
  g_autofree char *data = read_all (path, &length);
  int saved = errno;
  gboolean loaded = data != NULL;

  /* no file is the defaults; one that is there but cannot be read or
   * parsed is the administrator's settings lost, never the defaults */
  if (!loaded && saved != ENOENT)
    {
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "Cannot read the settings in %s: %s (make it a file glimpse can read, or "
                   "remove it to use the defaults)", path, g_strerror (saved));
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
