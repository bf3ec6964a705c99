/* Debian versions: the input is two versions, one a line.
 * Properties: compare is antisymmetric and reflexive; a version that
 * check() accepts has no white space and is not empty.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "gl-deb-version.h"
#include "fuzz.h"

static int
sign (int x)
{
  return (x > 0) - (x < 0);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autofree char *text = g_strndup ((const char *) data, size);
  char *nl = strchr (text, '\n');
  const char *a = text, *b = "";

  if (size > 4096)
    return 0;
  if (nl != NULL)
    {
      *nl = '\0';
      b = nl + 1;
    }
  FUZZ_ASSERT (gl_deb_version_compare (a, a) == 0);
  FUZZ_ASSERT (sign (gl_deb_version_compare (a, b)) == -sign (gl_deb_version_compare (b, a)));
  {
    g_autoptr(GError) error = NULL;
    gboolean ok = gl_deb_version_check (a, &error);

    FUZZ_ASSERT (ok == (error == NULL));
    if (ok)
      FUZZ_ASSERT (*a != '\0' && strpbrk (a, " \t\r\n") == NULL);
  }
  return 0;
}
