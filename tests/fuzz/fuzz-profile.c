/* Profiles (keyfiles) and sandbox.conf, as the session parses them.
 * Property: a parse either fails with an error or gives a complete object;
 * a parsed sandbox.conf written back parses to the same text.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "gl-profile.h"
#include "gl-sandbox.h"
#include "fuzz.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size > 65536)
    return 0;

  {
    g_autoptr(GError) error = NULL;
    g_autoptr(GlProfile) p = gl_profile_load_from_data ("fuzz", "/fuzz/fuzz.profile",
                                                        (const char *) data, size, &error);
    FUZZ_ASSERT ((p == NULL) != (error == NULL));
    if (p != NULL)
      {
        g_autofree char *e = gl_profile_expand (p, "{arch}/{uname_arch}/x");
        FUZZ_ASSERT (e != NULL);
      }
  }

  {
    g_autoptr(GError) error = NULL;
    GlSandbox *s = gl_sandbox_load_from_data ("fuzz", "/fuzz", (const char *) data, size, &error);

    FUZZ_ASSERT ((s == NULL) != (error == NULL));
    if (s != NULL)
      {
        gsize len1 = 0, len2 = 0;
        g_autofree char *d1 = gl_sandbox_to_data (s, &len1);
        GlSandbox *s2 = NULL;
        g_autofree char *d2 = NULL;
        g_autoptr(GError) e2 = NULL;

        FUZZ_ASSERT (d1 != NULL);
        s2 = gl_sandbox_load_from_data ("fuzz", "/fuzz", d1, len1, &e2);
        FUZZ_ASSERT (s2 != NULL);
        d2 = gl_sandbox_to_data (s2, &len2);
        FUZZ_ASSERT (len1 == len2 && memcmp (d1, d2, len1) == 0);
        gl_sandbox_free (s2);
        gl_sandbox_free (s);
      }
  }
  return 0;
}
