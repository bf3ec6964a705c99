/* argv-recorder: stands in for glimpse-launch in the tests.  Appends one
 * record to $GL_TEST_RECORD: the number of arguments, then each argument,
 * every field NUL-terminated (so any byte but NUL round-trips).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void
write_all (int fd, const char *buf, size_t len)
{
  while (len > 0)
    {
      ssize_t n = write (fd, buf, len);
      if (n <= 0)
        exit (3);
      buf += n;
      len -= (size_t) n;
    }
}

int
main (int argc, char **argv)
{
  const char *path = getenv ("GL_TEST_RECORD");
  char count[32];
  char *buf = NULL;
  size_t size = 0;
  FILE *mem;
  int fd;

  if (path == NULL)
    return 2;
  /* build the record first and write it at once: runs may be concurrent */
  mem = open_memstream (&buf, &size);
  if (mem == NULL)
    return 3;
  snprintf (count, sizeof count, "%d", argc - 1);
  fwrite (count, 1, strlen (count) + 1, mem);
  for (int i = 1; i < argc; i++)
    fwrite (argv[i], 1, strlen (argv[i]) + 1, mem);
  fclose (mem);

  fd = open (path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0)
    return 3;
  write_all (fd, buf, size);
  close (fd);
  free (buf);
  return 0;
}
