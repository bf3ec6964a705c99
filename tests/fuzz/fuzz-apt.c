/* Repository metadata: a Release text and a Packages index (the same
 * input read as both), and ASCII-armored keys.
 * Properties: a parse fails with an error or succeeds without one; the
 * streaming Packages parser gives the same entries fed whole or in pieces
 * of every size the input's first byte picks; every entry has a name,
 * architecture and version, and a phased percentage of at most 100.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "gl-apt-index.h"
#include "gl-apt-release.h"
#include "fuzz.h"

static GlAptIndex *
parse_packages (const char *text, gsize size, gsize piece, gboolean *ok)
{
  g_autoptr(GlAptIndex) index = gl_apt_index_new ();
  g_autoptr(GlAptIndexParser) parser = gl_apt_index_parser_new (index, "fuzz/Packages");
  g_autoptr(GError) error = NULL;

  *ok = TRUE;
  for (gsize off = 0; off < size && *ok; off += piece)
    *ok = gl_apt_index_parser_feed (parser, text + off, MIN (piece, size - off), &error);
  if (*ok)
    *ok = gl_apt_index_parser_finish (parser, &error);
  FUZZ_ASSERT (*ok == (error == NULL));
  return g_steal_pointer (&index);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  const char *text = (const char *) data;

  if (size > 65536)
    return 0;

  {
    g_autoptr(GError) error = NULL;
    g_autoptr(GlAptRelease) r = gl_apt_release_parse (text, size, "fuzz/Release", &error);

    FUZZ_ASSERT ((r == NULL) != (error == NULL));
    if (r != NULL)
      FUZZ_ASSERT (r->architectures != NULL && r->components != NULL && r->files != NULL);
  }

  {
    gboolean ok_whole, ok_pieces;
    gsize piece = size > 0 ? (gsize) (data[0] % 17) + 1 : 1;
    g_autoptr(GlAptIndex) whole = parse_packages (text, size, MAX (size, 1), &ok_whole);
    g_autoptr(GlAptIndex) pieces = parse_packages (text, size, piece, &ok_pieces);

    FUZZ_ASSERT (ok_whole == ok_pieces);
    if (ok_whole)
      {
        guint n = gl_apt_index_get_size (whole);

        FUZZ_ASSERT (n == gl_apt_index_get_size (pieces));
        for (guint i = 0; i < n; i++)
          {
            const GlAptIndexEntry *a = gl_apt_index_get (whole, i);
            const GlAptIndexEntry *b = gl_apt_index_get (pieces, i);

            FUZZ_ASSERT (a->name != NULL && a->arch != NULL && a->version != NULL);
            FUZZ_ASSERT (a->phased <= 100);
            FUZZ_ASSERT (strcmp (a->name, b->name) == 0 && strcmp (a->arch, b->arch) == 0 &&
                         strcmp (a->version, b->version) == 0 && a->phased == b->phased);
          }
      }
  }

  {
    g_autofree char *s = g_strndup (text, size);
    g_autoptr(GError) error = NULL;
    g_autoptr(GBytes) key = gl_apt_dearmor (s, strlen (s), &error);

    FUZZ_ASSERT ((key == NULL) != (error == NULL));
  }
  return 0;
}
