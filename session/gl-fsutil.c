/* gl-fsutil.c: file-system helpers
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-fsutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static gboolean
set_errno_error (GError **error, int saved_errno, const char *what, const char *path)
{
  g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
               "%s %s: %s", what, path, g_strerror (saved_errno));
  return FALSE;
}

static gboolean
rm_rf_at (int dfd, const char *name, const char *shown, dev_t dev,
          GCancellable *cancellable, GError **error)
{
  struct stat st;
  int fd;
  DIR *d;
  struct dirent *de;
  gboolean ok = TRUE;

  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return FALSE;
  if (fstatat (dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
    {
      if (errno == ENOENT)
        return TRUE;
      return set_errno_error (error, errno, "Cannot inspect", shown);
    }
  if (!S_ISDIR (st.st_mode))
    {
      if (unlinkat (dfd, name, 0) != 0 && errno != ENOENT)
        return set_errno_error (error, errno, "Cannot remove", shown);
      return TRUE;
    }
  if (st.st_dev != dev)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_BUSY,
                   "%s is a mount point; unmount it and try again", shown);
      return FALSE;
    }

  fd = openat (dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  /* overlayfs leaves work/work at mode 0; its owner may still delete it */
  if (fd < 0 && errno == EACCES && fchmodat (dfd, name, 0700, 0) == 0)
    fd = openat (dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return set_errno_error (error, errno, "Cannot open", shown);
  d = fdopendir (fd);
  if (d == NULL)
    {
      int saved = errno;
      close (fd);
      return set_errno_error (error, saved, "Cannot read", shown);
    }
  while (ok && (de = readdir (d)) != NULL)
    {
      g_autofree char *child = NULL;

      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      child = g_build_filename (shown, de->d_name, NULL);
      ok = rm_rf_at (dirfd (d), de->d_name, child, dev, cancellable, error);
    }
  closedir (d);
  if (!ok)
    return FALSE;
  if (unlinkat (dfd, name, AT_REMOVEDIR) != 0 && errno != ENOENT)
    return set_errno_error (error, errno, "Cannot remove", shown);
  return TRUE;
}

gboolean
gl_rm_rf (const char *path, GCancellable *cancellable, GError **error)
{
  struct stat st;

  if (lstat (path, &st) != 0)
    {
      if (errno == ENOENT)
        return TRUE;
      return set_errno_error (error, errno, "Cannot inspect", path);
    }
  return rm_rf_at (AT_FDCWD, path, path, st.st_dev, cancellable, error);
}

gboolean
gl_mkdir (const char *path, int mode, GError **error)
{
  if (mkdir (path, mode) != 0)
    return set_errno_error (error, errno, "Cannot create directory", path);
  /* umask must not weaken or strengthen what the layout promises */
  if (chmod (path, mode) != 0)
    return set_errno_error (error, errno, "Cannot set the mode of", path);
  return TRUE;
}

char *
gl_format_size (guint64 bytes)
{
  return g_format_size_full (bytes, G_FORMAT_SIZE_IEC_UNITS);
}

guint
gl_keyfile_bad_line (const char *data, gsize length)
{
  const char *end = data + (length == (gsize) -1 ? strlen (data) : length);
  guint line = 1;

  for (const char *p = data; p < end; line++)
    {
      const char *eol = memchr (p, '\n', (size_t) (end - p));
      const char *stop = eol ? eol : end;
      const char *s = p;

      while (s < stop && g_ascii_isspace (*s))
        s++;
      if (s < stop && *s != '#' && !(*s == '[' && stop[-1 - (stop[-1] == '\r')] == ']')
          && memchr (s, '=', (size_t) (stop - s)) == NULL)
        return line;
      if (s < stop && *s == '[' && memchr (s, ']', (size_t) (stop - s)) == NULL)
        return line;
      p = eol ? eol + 1 : end;
    }
  return 0;
}
