/* gl-exec.c: splitting, quoting, wrapping and expanding Exec= lines
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include "gl-exec.h"

G_DEFINE_QUARK (gl-exec-error-quark, gl_exec_error)

static gboolean
is_deprecated_code (char c)
{
  return c != '\0' && strchr ("dDnNvm", c) != NULL;
}

static gboolean
is_field_code_char (char c)
{
  return g_ascii_isalpha (c) || c == '%';
}

/* Appends the '%' at p to cur and returns what follows: a field code
 * (kept, or dropped when deprecated) when a code letter or '%' follows,
 * else a literal percent, kept as "%%".  So every '%' in a split argument
 * starts a field code, in quotes or not, and the argument joins back to the
 * same meaning (found by tests/fuzz/fuzz-exec: "%'d'" split to "%d", which
 * the next split dropped as a deprecated code). */
static const char *
append_percent (GString *cur, const char *p, gboolean *have_arg)
{
  if (is_field_code_char (p[1]))
    {
      if (!is_deprecated_code (p[1]))
        {
          g_string_append_len (cur, p, 2);
          *have_arg = TRUE;
        }
      return p + 2;
    }
  g_string_append (cur, "%%");
  *have_arg = TRUE;
  return p + 1;
}

gboolean
gl_exec_split (const char *exec, GStrv *argv_out, GError **error)
{
  g_autoptr(GPtrArray) args = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GString) cur = g_string_new (NULL);
  gboolean have_arg = FALSE;
  const char *p = exec;

  g_return_val_if_fail (exec != NULL, FALSE);

  while (*p != '\0')
    {
      char c = *p;

      if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
        {
          if (have_arg)
            g_ptr_array_add (args, g_strdup (cur->str));
          g_string_truncate (cur, 0);
          have_arg = FALSE;
          p++;
        }
      else if (c == '"')
        {
          have_arg = TRUE;
          p++;
          while (*p != '"')
            {
              if (*p == '\0')
                {
                  g_set_error (error, GL_EXEC_ERROR, GL_EXEC_ERROR_QUOTING,
                               "Exec line “%s” has a double quote that is never closed", exec);
                  return FALSE;
                }
              if (*p == '\\' && p[1] != '\0' && strchr ("\"`$\\", p[1]) != NULL)
                {
                  g_string_append_c (cur, p[1]);
                  p += 2;
                }
              else if (*p == '%')
                p = append_percent (cur, p, &have_arg);
              else
                g_string_append_c (cur, *p++);
            }
          p++;
        }
      else if (c == '\'')
        {
          const char *end = strchr (p + 1, '\'');

          if (end == NULL)
            {
              g_set_error (error, GL_EXEC_ERROR, GL_EXEC_ERROR_QUOTING,
                           "Exec line “%s” has a single quote that is never closed", exec);
              return FALSE;
            }
          have_arg = TRUE;
          for (p++; p < end; )
            {
              if (*p == '%' && p + 1 < end)
                p = append_percent (cur, p, &have_arg);
              else if (*p == '%')
                {
                  g_string_append (cur, "%%");
                  p++;
                }
              else
                g_string_append_c (cur, *p++);
            }
          p = end + 1;
        }
      else if (c == '\\')
        {
          if (p[1] == '\0')
            {
              g_set_error (error, GL_EXEC_ERROR, GL_EXEC_ERROR_QUOTING,
                           "Exec line “%s” ends in a lone backslash", exec);
              return FALSE;
            }
          have_arg = TRUE;
          /* backslash-newline is a line continuation, as in the shell */
          if (p[1] == '%')
            g_string_append (cur, "%%");
          else if (p[1] != '\n')
            g_string_append_c (cur, p[1]);
          p += 2;
        }
      else if (c == '%')
        p = append_percent (cur, p, &have_arg);
      else
        {
          g_string_append_c (cur, c);
          have_arg = TRUE;
          p++;
        }
    }
  if (have_arg)
    g_ptr_array_add (args, g_strdup (cur->str));

  if (args->len == 0)
    {
      g_set_error (error, GL_EXEC_ERROR, GL_EXEC_ERROR_EMPTY,
                   "Exec line “%s” names no program", exec);
      return FALSE;
    }

  g_ptr_array_add (args, NULL);
  *argv_out = (GStrv) g_ptr_array_steal (args, NULL);
  return TRUE;
}

char *
gl_exec_quote_arg (const char *arg)
{
  /* the reserved characters of the specification, plus the controls */
  static const char reserved[] = " \t\n\r\"'\\><~|&;$*?#()`";
  gboolean needs_quotes = (*arg == '\0');
  g_autoptr(GString) out = NULL;

  for (const char *p = arg; *p != '\0' && !needs_quotes; p++)
    if (strchr (reserved, *p) != NULL || ((guchar) *p) < 0x20 || *p == 0x7f)
      needs_quotes = TRUE;

  if (!needs_quotes)
    return g_strdup (arg);

  out = g_string_new ("\"");
  for (const char *p = arg; *p != '\0'; p++)
    {
      if (strchr ("\"`$\\", *p) != NULL)
        g_string_append_c (out, '\\');
      g_string_append_c (out, *p);
    }
  g_string_append_c (out, '"');
  return g_string_free (g_steal_pointer (&out), FALSE);
}

char *
gl_exec_quote_literal (const char *arg)
{
  g_auto(GStrv) parts = g_strsplit (arg, "%", -1);
  g_autofree char *doubled = g_strjoinv ("%%", parts);

  return gl_exec_quote_arg (doubled);
}

char *
gl_exec_join (const char * const *argv)
{
  g_autoptr(GString) out = g_string_new (NULL);

  for (gsize i = 0; argv[i] != NULL; i++)
    {
      g_autofree char *quoted = gl_exec_quote_arg (argv[i]);

      if (i > 0)
        g_string_append_c (out, ' ');
      g_string_append (out, quoted);
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}

char *
gl_exec_wrap (const char *launcher, const char *id, const char *exec, GError **error)
{
  g_auto(GStrv) argv = NULL;
  g_autofree char *qlauncher = gl_exec_quote_literal (launcher);
  g_autofree char *qid = gl_exec_quote_literal (id);
  g_autofree char *rest = NULL;

  if (!gl_exec_split (exec, &argv, error))
    return NULL;
  rest = gl_exec_join ((const char * const *) argv);
  return g_strdup_printf ("%s %s -- %s", qlauncher, qid, rest);
}

static char *
uri_to_arg (const char *uri, gboolean want_path)
{
  if (want_path)
    {
      g_autofree char *path = g_filename_from_uri (uri, NULL, NULL);

      if (path != NULL)
        return g_steal_pointer (&path);
    }
  return g_strdup (uri);
}

GStrv
gl_exec_expand (const char * const *argv, const char * const *uris,
                const char *icon, const char *name, const char *desktop_file,
                guint *n_used)
{
  g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func (g_free);
  guint n_uris = uris != NULL ? g_strv_length ((GStrv) uris) : 0;
  guint used = 0;
  gboolean any_file_code = FALSE;

  for (gsize i = 0; argv[i] != NULL; i++)
    {
      const char *arg = argv[i];

      /* whole-argument list codes become one argument per item */
      if (strcmp (arg, "%F") == 0 || strcmp (arg, "%U") == 0)
        {
          any_file_code = TRUE;
          for (guint j = 0; j < n_uris; j++)
            g_ptr_array_add (out, uri_to_arg (uris[j], arg[1] == 'F'));
          used = n_uris;
          continue;
        }
      if (strcmp (arg, "%i") == 0)
        {
          if (icon != NULL && *icon != '\0')
            {
              g_ptr_array_add (out, g_strdup ("--icon"));
              g_ptr_array_add (out, g_strdup (icon));
            }
          continue;
        }

      {
        g_autoptr(GString) s = g_string_new (NULL);
        gboolean only_code = (arg[0] == '%' && arg[1] != '\0' && arg[2] == '\0' && arg[1] != '%');

        for (const char *p = arg; *p != '\0'; p++)
          {
            if (*p != '%' || p[1] == '\0')
              {
                g_string_append_c (s, *p);
                continue;
              }
            p++;
            switch (*p)
              {
              case '%':
                g_string_append_c (s, '%');
                break;
              case 'f':
              case 'u':
                any_file_code = TRUE;
                if (n_uris > 0)
                  {
                    g_autofree char *a = uri_to_arg (uris[0], *p == 'f');
                    g_string_append (s, a);
                    used = MAX (used, 1);
                  }
                break;
              case 'F':
              case 'U':
                any_file_code = TRUE;
                for (guint j = 0; j < n_uris; j++)
                  {
                    g_autofree char *a = uri_to_arg (uris[j], *p == 'F');
                    if (j > 0)
                      g_string_append_c (s, ' ');
                    g_string_append (s, a);
                  }
                used = n_uris;
                break;
              case 'c':
                if (name != NULL)
                  g_string_append (s, name);
                break;
              case 'k':
                if (desktop_file != NULL)
                  g_string_append (s, desktop_file);
                break;
              default:
                /* %i inside an argument, deprecated and unknown codes */
                break;
              }
          }
        if (only_code && s->len == 0)
          continue;
        g_ptr_array_add (out, g_string_free (g_steal_pointer (&s), FALSE));
      }
    }

  /* a command without file codes ignores the files rather than running
   * once per file */
  if (!any_file_code)
    used = n_uris;
  if (n_used != NULL)
    *n_used = used;

  g_ptr_array_add (out, NULL);
  return (GStrv) g_ptr_array_steal (out, NULL);
}
