/* Checksum lists (SHA256SUMS, .sha256, BSD style): the first line of the
 * input is the file name looked for, the rest the list.
 * Property: a sum found is 64 lower-case hex digits; none found is an error.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "gl-download.h"
#include "fuzz.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autofree char *text = g_strndup ((const char *) data, size);
  char *nl = strchr (text, '\n');
  const char *name = text, *list = "";
  g_autoptr(GError) error = NULL;
  g_autofree char *sum = NULL;

  if (size > 65536)
    return 0;
  if (nl != NULL)
    {
      *nl = '\0';
      list = nl + 1;
    }
  sum = gl_checksum_find_in_list (list, name, &error);
  FUZZ_ASSERT ((sum == NULL) != (error == NULL));
  if (sum != NULL)
    {
      FUZZ_ASSERT (gl_checksum_is_sha256 (sum));
      for (const char *p = sum; *p; p++)
        FUZZ_ASSERT (!g_ascii_isupper (*p));
    }
  FUZZ_ASSERT (gl_checksum_is_sha256 (text) == (strlen (text) == 64 && strspn (text, "0123456789abcdefABCDEF") == 64));
  return 0;
}
