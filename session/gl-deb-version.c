/* gl-deb-version.c: Debian version strings — validation and ordering
 *
 * A port of the algorithm dpkg documents in deb-version(7) and implements
 * in lib/dpkg/version.c (verrevcmp); written anew, tested against
 * `dpkg --compare-versions` (tests/updates/test-deb-version.c).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-deb-version.h"

#include <string.h>

G_DEFINE_QUARK (gl-deb-version-error-quark, gl_deb_version_error)

/* The weight of one character in a non-digit run: '~' lowest, then the end
 * of the string (and digits, which end a run), then letters, then the
 * rest. */
static int
char_order (char c)
{
  if (g_ascii_isdigit (c))
    return 0;
  if (g_ascii_isalpha (c))
    return (unsigned char) c;
  if (c == '~')
    return -1;
  if (c != '\0')
    return (unsigned char) c + 256;
  return 0;
}

/* Compares the part of a before a_end with the part of b before b_end. */
static int
compare_part (const char *a, const char *a_end,
              const char *b, const char *b_end)
{
  while (a < a_end || b < b_end)
    {
      int first_diff = 0;

      while ((a < a_end && !g_ascii_isdigit (*a)) ||
             (b < b_end && !g_ascii_isdigit (*b)))
        {
          int ac = a < a_end ? char_order (*a) : 0;
          int bc = b < b_end ? char_order (*b) : 0;

          if (ac != bc)
            return ac - bc;
          if (a < a_end)
            a++;
          if (b < b_end)
            b++;
        }

      while (a < a_end && *a == '0')
        a++;
      while (b < b_end && *b == '0')
        b++;
      while (a < a_end && g_ascii_isdigit (*a) &&
             b < b_end && g_ascii_isdigit (*b))
        {
          if (first_diff == 0)
            first_diff = *a - *b;
          a++;
          b++;
        }
      if (a < a_end && g_ascii_isdigit (*a))
        return 1;
      if (b < b_end && g_ascii_isdigit (*b))
        return -1;
      if (first_diff != 0)
        return first_diff;
    }
  return 0;
}

typedef struct {
  guint64     epoch;
  const char *upstream;
  const char *upstream_end;
  const char *revision;      /* "" when there is none */
  const char *revision_end;
} Parts;

static void
split_version (const char *v, Parts *p)
{
  const char *colon, *hyphen, *end;

  while (g_ascii_isspace (*v))
    v++;
  end = v + strlen (v);
  while (end > v && g_ascii_isspace (end[-1]))
    end--;

  p->epoch = 0;
  colon = memchr (v, ':', end - v);
  if (colon != NULL)
    {
      for (const char *e = v; e < colon; e++)
        if (g_ascii_isdigit (*e) && p->epoch < G_MAXINT32)
          p->epoch = p->epoch * 10 + (guint64) (*e - '0');
      v = colon + 1;
    }
  hyphen = NULL;
  for (const char *h = end; h > v; h--)
    if (h[-1] == '-')
      {
        hyphen = h - 1;
        break;
      }
  p->upstream = v;
  if (hyphen != NULL)
    {
      p->upstream_end = hyphen;
      p->revision = hyphen + 1;
      p->revision_end = end;
    }
  else
    {
      p->upstream_end = end;
      p->revision = p->revision_end = end;
    }
}

int
gl_deb_version_compare (const char *a,
                        const char *b)
{
  Parts pa, pb;
  int r;

  g_return_val_if_fail (a != NULL && b != NULL, 0);

  split_version (a, &pa);
  split_version (b, &pb);
  if (pa.epoch != pb.epoch)
    return pa.epoch > pb.epoch ? 1 : -1;
  r = compare_part (pa.upstream, pa.upstream_end, pb.upstream, pb.upstream_end);
  if (r != 0)
    return r;
  return compare_part (pa.revision, pa.revision_end, pb.revision, pb.revision_end);
}

gboolean
gl_deb_version_check (const char  *version,
                      GError     **error)
{
  Parts p;
  const char *colon;

  g_return_val_if_fail (version != NULL, FALSE);

  if (*version == '\0')
    {
      g_set_error (error, GL_DEB_VERSION_ERROR, GL_DEB_VERSION_ERROR_INVALID,
                   "Version \"\" is empty");
      return FALSE;
    }
  for (const char *c = version; *c; c++)
    if (g_ascii_isspace (*c) || (guchar) *c >= 0x80 || g_ascii_iscntrl (*c))
      {
        g_set_error (error, GL_DEB_VERSION_ERROR, GL_DEB_VERSION_ERROR_INVALID,
                     "Version \"%s\" contains white space or a control character",
                     version);
        return FALSE;
      }
  colon = strchr (version, ':');
  if (colon != NULL)
    {
      if (colon == version)
        {
          g_set_error (error, GL_DEB_VERSION_ERROR, GL_DEB_VERSION_ERROR_INVALID,
                       "Version \"%s\" has an empty epoch", version);
          return FALSE;
        }
      for (const char *e = version; e < colon; e++)
        if (!g_ascii_isdigit (*e))
          {
            g_set_error (error, GL_DEB_VERSION_ERROR, GL_DEB_VERSION_ERROR_INVALID,
                         "Version \"%s\" has an epoch that is not a number", version);
            return FALSE;
          }
      if (colon - version > 9)
        {
          g_set_error (error, GL_DEB_VERSION_ERROR, GL_DEB_VERSION_ERROR_INVALID,
                       "Version \"%s\" has an epoch that is too big", version);
          return FALSE;
        }
    }
  split_version (version, &p);
  if (p.upstream == p.upstream_end)
    {
      g_set_error (error, GL_DEB_VERSION_ERROR, GL_DEB_VERSION_ERROR_INVALID,
                   "Version \"%s\" has an empty upstream part", version);
      return FALSE;
    }
  if (!g_ascii_isdigit (*p.upstream))
    {
      g_set_error (error, GL_DEB_VERSION_ERROR, GL_DEB_VERSION_ERROR_INVALID,
                   "Version \"%s\" does not start with a digit", version);
      return FALSE;
    }
  for (const char *c = p.upstream; c < p.upstream_end; c++)
    if (!g_ascii_isalnum (*c) && strchr (".-+~:", *c) == NULL)
      {
        g_set_error (error, GL_DEB_VERSION_ERROR, GL_DEB_VERSION_ERROR_INVALID,
                     "Version \"%s\" has the character '%c' in its upstream part",
                     version, *c);
        return FALSE;
      }
  if (p.revision != p.revision_end || (p.revision > version && p.revision[-1] == '-'))
    {
      if (p.revision == p.revision_end)
        {
          g_set_error (error, GL_DEB_VERSION_ERROR, GL_DEB_VERSION_ERROR_INVALID,
                       "Version \"%s\" has an empty revision after '-'", version);
          return FALSE;
        }
      for (const char *c = p.revision; c < p.revision_end; c++)
        if (!g_ascii_isalnum (*c) && strchr (".+~", *c) == NULL)
          {
            g_set_error (error, GL_DEB_VERSION_ERROR, GL_DEB_VERSION_ERROR_INVALID,
                         "Version \"%s\" has the character '%c' in its revision",
                         version, *c);
            return FALSE;
          }
    }
  return TRUE;
}
