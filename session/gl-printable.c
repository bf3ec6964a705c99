/* gl-printable.c: text of a sandbox's, made safe to show on a terminal
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-printable.h"

#include <string.h>

/* TEXT of the sandbox's (output of its package manager and maintainer
 * scripts, names and values from its files) as it may be shown on the
 * host's root's terminal: a hostile maintainer script writes what it
 * likes, and an escape sequence would drive that terminal (retitle or
 * clear it, write its clipboard, make it type a report back as input).
 * Every control character but a tab, C0 or C1 (U+0080…U+009F), and every
 * byte that is not UTF-8, is shown as "?". */
char *
gl_printable (const char *text)
{
  GString *s;

  if (text == NULL)
    return g_strdup ("");
  s = g_string_sized_new (strlen (text));
  for (const char *p = text; *p; )
    {
      gunichar c = g_utf8_get_char_validated (p, -1);
      if (c == (gunichar) -1 || c == (gunichar) -2)
        {
          g_string_append_c (s, '?');
          p++;
          continue;
        }
      if ((c < 0x20 && c != '\t') || (c >= 0x7f && c < 0xa0))
        g_string_append_c (s, '?');
      else
        g_string_append_len (s, p, g_utf8_next_char (p) - p);
      p = g_utf8_next_char (p);
    }
  return g_string_free (s, FALSE);
}
