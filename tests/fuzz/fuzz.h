/* tests/fuzz: libFuzzer targets for every parser.  Each file defines
 * LLVMFuzzerTestOneInput; built with clang -fsanitize=fuzzer it is a fuzzer,
 * otherwise fuzz-main.c runs it over its corpus (a unit test).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* A property that must hold for every input: abort (a crash the fuzzer
 * keeps) with what failed. */
#define FUZZ_ASSERT(cond)                                                    \
  do {                                                                       \
    if (!(cond))                                                             \
      {                                                                      \
        fprintf (stderr, "%s:%d: property failed: %s\n", __FILE__, __LINE__, \
                 #cond);                                                     \
        abort ();                                                            \
      }                                                                      \
  } while (0)
