/* apt's sources: the input read as a one-line sources.list and as a
 * deb822 .sources file.
 * Properties: a parse fails with an error or succeeds without one; every
 * source has a URI, a suite, components (empty for a flat repository, whose
 * suite ends in '/') and where it came from.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "gl-apt-sources.h"
#include "fuzz.h"

static void
check (GPtrArray *sources, GError *error)
{
  FUZZ_ASSERT ((sources == NULL) != (error == NULL));
  for (guint i = 0; sources != NULL && i < sources->len; i++)
    {
      GlAptSource *s = sources->pdata[i];

      FUZZ_ASSERT (s->uri != NULL && *s->uri != '\0');
      FUZZ_ASSERT (s->suite != NULL && *s->suite != '\0');
      FUZZ_ASSERT (s->components != NULL && s->where != NULL);
      if (g_str_has_suffix (s->suite, "/"))
        FUZZ_ASSERT (s->components[0] == NULL);
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autofree char *text = g_strndup ((const char *) data, size);

  if (size > 65536)
    return 0;
  {
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) s = gl_apt_sources_parse_one_line ("fuzz.list", text, &error);
    check (s, error);
  }
  {
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) s = gl_apt_sources_parse_deb822 ("fuzz.sources", text, &error);
    check (s, error);
  }
  return 0;
}
