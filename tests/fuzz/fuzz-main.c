/* The driver of a fuzz target when not built with libFuzzer: runs the
 * target once on every file named, or on every file in a directory named,
 * so the gcc build replays each corpus as a regression test.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int n_run;

static int
run_file (const char *path)
{
  FILE *f = fopen (path, "rb");
  uint8_t *buf = NULL;
  size_t len = 0, cap = 0, n;

  if (f == NULL)
    {
      fprintf (stderr, "fuzz-main: cannot open %s: %s\n", path, strerror (errno));
      return 1;
    }
  do
    {
      if (len == cap)
        {
          cap = cap ? cap * 2 : 4096;
          buf = realloc (buf, cap);
          if (buf == NULL)
            abort ();
        }
      n = fread (buf + len, 1, cap - len, f);
      len += n;
    }
  while (n > 0);
  fclose (f);
  /* a copy of exactly the input's size, so ASan sees reads past its end */
  {
    uint8_t *exact = malloc (len ? len : 1);
    if (exact == NULL)
      abort ();
    memcpy (exact, buf, len);
    free (buf);
    LLVMFuzzerTestOneInput (exact, len);
    free (exact);
  }
  n_run++;
  return 0;
}

static int
run_path (const char *path)
{
  struct stat st;
  DIR *d;
  struct dirent *e;
  int ret = 0;

  if (stat (path, &st) != 0)
    {
      fprintf (stderr, "fuzz-main: %s: %s\n", path, strerror (errno));
      return 1;
    }
  if (!S_ISDIR (st.st_mode))
    return run_file (path);
  d = opendir (path);
  if (d == NULL)
    {
      fprintf (stderr, "fuzz-main: cannot open %s: %s\n", path, strerror (errno));
      return 1;
    }
  while ((e = readdir (d)) != NULL)
    {
      char *child;

      if (e->d_name[0] == '.')
        continue;
      if (asprintf (&child, "%s/%s", path, e->d_name) < 0)
        abort ();
      ret |= run_path (child);
      free (child);
    }
  closedir (d);
  return ret;
}

int
main (int argc, char **argv)
{
  int ret = 0;

  if (argc < 2)
    {
      fprintf (stderr, "usage: %s FILE-OR-CORPUS-DIR...\n", argv[0]);
      return 2;
    }
  for (int i = 1; i < argc; i++)
    ret |= run_path (argv[i]);
  if (n_run == 0)
    {
      fprintf (stderr, "fuzz-main: no input found\n");
      return 1;
    }
  printf ("%s: %d inputs, no crash, every property held\n", argv[0], n_run);
  return ret;
}
