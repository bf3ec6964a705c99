/* gl-checksum.c: SHA-256 checksum lists and file hashing
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-checksum.h"

#include <string.h>
#include <gio/gunixinputstream.h>

G_DEFINE_QUARK (gl-checksum-error-quark, gl_checksum_error)

static gboolean
is_sha256_hex (const char *s, gsize len)
{
  gsize i;

  if (len != 64)
    return FALSE;
  for (i = 0; i < len; i++)
    if (!g_ascii_isxdigit (s[i]))
      return FALSE;
  return TRUE;
}

gboolean
gl_checksum_is_sha256 (const char *s)
{
  return is_sha256_hex (s, strlen (s));
}

/* Parses one line into (name, sum) pointing into line, which it modifies. */
static gboolean
parse_checksum_line (char *line, const char **name_out, const char **sum_out)
{
  char *p = g_strstrip (line);

  /* dash-escaped lines of PGP clear-signed lists */
  if (g_str_has_prefix (p, "- "))
    p += 2;
  /* GNU marks lines with escaped names with a backslash */
  if (*p == '\\')
    p++;

  if (g_str_has_prefix (p, "SHA256 (") || g_str_has_prefix (p, "SHA256("))
    {
      char *name = strchr (p, '(') + 1;
      char *close = g_strrstr (name, ")");
      char *sum;

      if (close == NULL)
        return FALSE;
      sum = close + 1;
      while (*sum == ' ' || *sum == '\t')
        sum++;
      if (*sum != '=')
        return FALSE;
      sum++;
      while (*sum == ' ' || *sum == '\t')
        sum++;
      if (!is_sha256_hex (sum, strlen (sum)))
        return FALSE;
      *close = '\0';
      *name_out = name;
      *sum_out = sum;
      return TRUE;
    }

  if (strlen (p) > 65 && is_sha256_hex (p, 64) && (p[64] == ' ' || p[64] == '\t'))
    {
      char *name = p + 65;

      while (*name == ' ' || *name == '\t')
        name++;
      if (*name == '*')
        name++;
      if (*name == '\0')
        return FALSE;
      p[64] = '\0';
      *name_out = name;
      *sum_out = p;
      return TRUE;
    }

  return FALSE;
}

GStrv
gl_checksum_list_names (const char *list_text)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  g_auto(GStrv) lines = g_strsplit (list_text, "\n", -1);

  for (gsize i = 0; lines[i] != NULL; i++)
    {
      const char *name = NULL;
      const char *sum = NULL;

      if (!parse_checksum_line (lines[i], &name, &sum))
        continue;
      if (g_str_has_prefix (name, "./"))
        name += 2;
      g_strv_builder_add (builder, name);
    }
  return g_strv_builder_end (builder);
}

gchar *
gl_checksum_find_in_list (const char  *list_text,
                          const char  *filename,
                          GError     **error)
{
  g_auto(GStrv) lines = NULL;
  g_autofree char *exact = NULL;
  g_autofree char *by_basename = NULL;
  gboolean exact_conflict = FALSE;
  gboolean basename_conflict = FALSE;
  gsize i;

  g_return_val_if_fail (list_text != NULL, NULL);
  g_return_val_if_fail (filename != NULL, NULL);

  lines = g_strsplit (list_text, "\n", -1);
  for (i = 0; lines[i] != NULL; i++)
    {
      const char *name = NULL;
      const char *sum = NULL;
      g_autofree char *base = NULL;

      if (!parse_checksum_line (lines[i], &name, &sum))
        continue;

      if (g_str_has_prefix (name, "./"))
        name += 2;

      if (g_str_equal (name, filename))
        {
          if (exact == NULL)
            exact = g_ascii_strdown (sum, -1);
          else if (g_ascii_strcasecmp (exact, sum) != 0)
            exact_conflict = TRUE;
          continue;
        }

      base = g_path_get_basename (name);
      if (g_str_equal (base, filename))
        {
          if (by_basename == NULL)
            by_basename = g_ascii_strdown (sum, -1);
          else if (g_ascii_strcasecmp (by_basename, sum) != 0)
            basename_conflict = TRUE;
        }
    }

  if (exact_conflict || (exact == NULL && basename_conflict))
    {
      g_set_error (error, GL_CHECKSUM_ERROR, GL_CHECKSUM_ERROR_NOT_LISTED,
                   "The checksum list has different SHA-256 sums for “%s”; "
                   "the profile's checksum source is ambiguous", filename);
      return NULL;
    }
  if (exact != NULL)
    return g_steal_pointer (&exact);
  if (by_basename != NULL)
    return g_steal_pointer (&by_basename);

  g_set_error (error, GL_CHECKSUM_ERROR, GL_CHECKSUM_ERROR_NOT_LISTED,
               "No SHA-256 checksum for “%s” in the checksum list; the profile's "
               "download URL or checksum source may be out of date", filename);
  return NULL;
}

static gchar *
stream_sha256 (GInputStream  *in,
               const char    *name,
               GCancellable  *cancellable,
               GError       **error)
{
  g_autoptr(GChecksum) checksum = g_checksum_new (G_CHECKSUM_SHA256);
  g_autofree guint8 *buf = g_malloc (256 * 1024);

  for (;;)
    {
      gssize n = g_input_stream_read (in, buf, 256 * 1024, cancellable, error);

      if (n < 0)
        {
          g_prefix_error (error, "Cannot read %s: ", name);
          return NULL;
        }
      if (n == 0)
        break;
      g_checksum_update (checksum, buf, n);
    }

  return g_strdup (g_checksum_get_string (checksum));
}

gchar *
gl_checksum_file_sha256 (const char    *path,
                         GCancellable  *cancellable,
                         GError       **error)
{
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(GFileInputStream) in = g_file_read (file, cancellable, error);

  if (in == NULL)
    return NULL;
  return stream_sha256 (G_INPUT_STREAM (in), path, cancellable, error);
}

gchar *
gl_checksum_fd_sha256 (int            fd,
                       const char    *name,
                       GCancellable  *cancellable,
                       GError       **error)
{
  g_autoptr(GInputStream) in = g_unix_input_stream_new (fd, FALSE);

  return stream_sha256 (in, name, cancellable, error);
}
