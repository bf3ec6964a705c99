/* gl-fsutil.c: file-system helpers
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-fsutil.h"
#include "gl-fsutil-private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static gboolean
set_errno_error (GError **error, int saved_errno, const char *what, const char *path)
{
  g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
               "%s %s: %s", what, path, g_strerror (saved_errno));
  return FALSE;
}

/* Where an entry lies: its mount, and whether it is the root of one. */
typedef struct {
  guint64 mnt_id;      /* 0 when the kernel does not say (before Linux 5.8) */
  dev_t dev;
  gboolean mount_root; /* STATX_ATTR_MOUNT_ROOT, where the kernel says so */
  mode_t mode;
  guint32 nlink;
  guint64 blocks;      /* (512 bytes) */
} Place;

static gboolean
place_at (int dfd, const char *name, Place *place)
{
  struct statx stx;

  if (statx (dfd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT,
             STATX_TYPE | STATX_MNT_ID | STATX_NLINK | STATX_BLOCKS, &stx) != 0)
    return FALSE;
  place->nlink = (stx.stx_mask & STATX_NLINK) ? stx.stx_nlink : 1;
  place->blocks = (stx.stx_mask & STATX_BLOCKS) ? stx.stx_blocks : 0;
  place->mnt_id = (stx.stx_mask & STATX_MNT_ID) ? stx.stx_mnt_id : 0;
  place->dev = makedev (stx.stx_dev_major, stx.stx_dev_minor);
  place->mount_root = (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
                      (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
  place->mode = stx.stx_mode;
  return TRUE;
}

/* Another mount than the tree's: a bind mount of the same file system
 * has another mount id though the same st_dev. */
static gboolean
is_other_mount (const Place *top, const Place *here)
{
  if (top->mnt_id != 0 && here->mnt_id != 0)
    return here->mnt_id != top->mnt_id;
  return here->dev != top->dev || here->mount_root;
}

static void (*before_chmod_hook) (int dfd, const char *name);

void
gl_rm_rf_set_before_chmod_hook (void (*hook) (int dfd, const char *name))
{
  before_chmod_hook = hook;
}

/* Makes NAME in DFD, a directory its owner may not read (overlayfs leaves
 * work/work at mode 0), readable by its owner (0700) -- never through a
 * link, and never anything but a directory, though NAME may have been
 * swapped since it was looked at: it is opened O_PATH | O_NOFOLLOW |
 * O_DIRECTORY (a link or a file there is refused) and the mode set on what
 * was opened, through /proc/self/fd (fchmod takes no O_PATH descriptor).
 * That is what glibc's fchmodat (…, AT_SYMLINK_NOFOLLOW) does where it
 * has no fchmodat2 (glibc 2.36: a link EOPNOTSUPP), save that it would
 * chmod a regular file swapped in (a hard link to a file of someone
 * else's).  Plain fchmodat follows a link. */
static gboolean
chmod_dir_nofollow (int dfd, const char *name, mode_t mode)
{
  char path[64];
  int fd, saved;
  gboolean ok;

  if (before_chmod_hook != NULL)
    before_chmod_hook (dfd, name);
  fd = openat (dfd, name, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return FALSE;
  g_snprintf (path, sizeof path, "/proc/self/fd/%d", fd);
  ok = chmod (path, mode) == 0;
  saved = errno;
  close (fd);
  errno = saved;
  return ok;
}

/* A directory being removed, on the way down from the tree's top: its
 * name in its parent, what it is (checked on the way back up through
 * ".."), its size, and where its listing stopped to go down. */
typedef struct {
  char *name;
  dev_t dev;
  ino_t ino;
  guint64 blocks;
  long pos;
  gboolean has_pos;
} RmLevel;

static void
rm_level_clear (gpointer p)
{
  g_free (((RmLevel *) p)->name);
}

/* @shown (the tree's path) and the names of @levels after the top, and @name */
static char *
rm_shown (const char *shown, GArray *levels, const char *name)
{
  g_autoptr(GString) s = g_string_new (shown);

  for (guint i = 1; i < levels->len; i++)
    g_string_append_printf (s, "/%s", g_array_index (levels, RmLevel, i).name);
  if (name != NULL)
    g_string_append_printf (s, "/%s", name);
  return g_string_free (g_steal_pointer (&s), FALSE);
}

/* Opens the directory @name of @dfd to remove what it holds: in @top's
 * mount (unless it is the top), checked again on what was opened. */
static int
rm_open_dir (int dfd, const char *name, const Place *top, gboolean is_top, struct stat *st,
             const char *tree, GArray *levels, GError **error)
{
  g_autofree char *shown = NULL;
  Place opened;
  int fd = openat (dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

  /* overlayfs leaves work/work at mode 0; its owner may still delete it */
  if (fd < 0 && errno == EACCES && chmod_dir_nofollow (dfd, name, 0700))
    fd = openat (dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    {
      int saved = errno;

      shown = is_top ? g_strdup (tree) : rm_shown (tree, levels, name);
      return set_errno_error (error, saved, "Cannot open", shown), -1;
    }
  /* (checked again on what was opened: it may have been swapped meanwhile) */
  if (!place_at (fd, ".", &opened) || fstat (fd, st) != 0)
    {
      int saved = errno;

      close (fd);
      shown = is_top ? g_strdup (tree) : rm_shown (tree, levels, name);
      return set_errno_error (error, saved, "Cannot inspect", shown), -1;
    }
  if (!is_top && is_other_mount (top, &opened))
    {
      close (fd);
      shown = rm_shown (tree, levels, name);
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_BUSY,
                   "%s is a mount point; unmount it and try again", shown);
      return -1;
    }
  return fd;
}

/* Removes @path: a directory a level at a time, holding one directory
 * open whatever the depth (a tree a sandbox made may be thousands of
 * directories deep: one descriptor per level ran out of descriptors at
 * 1024, and the paths of the levels took memory as the square of the
 * depth).  A directory is left for its first subdirectory and listed on
 * from there when it is back (from the start again when that finds it
 * not empty); the way back up is through "..", checked to be the
 * directory the way down came through. */
static gboolean
rm_rf_at (int dfd, const char *path, const char *shown, guint64 *freed,
          GCancellable *cancellable, GError **error)
{
  g_autoptr(GArray) levels = g_array_new (FALSE, TRUE, sizeof (RmLevel));
  Place top;
  struct stat st;
  int cur;

  g_array_set_clear_func (levels, rm_level_clear);
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return FALSE;
  if (!place_at (dfd, path, &top))
    return errno == ENOENT || set_errno_error (error, errno, "Cannot inspect", shown);
  if (!S_ISDIR (top.mode))
    {
      if (unlinkat (dfd, path, 0) != 0)
        return errno == ENOENT || set_errno_error (error, errno, "Cannot remove", shown);
      if (freed != NULL && !(S_ISREG (top.mode) && top.nlink > 1))
        *freed += top.blocks * 512;
      return TRUE;
    }
  if ((cur = rm_open_dir (dfd, path, &top, TRUE, &st, shown, levels, error)) < 0)
    return FALSE;
  g_array_append_val (levels, ((RmLevel) { NULL, st.st_dev, st.st_ino, top.blocks, 0, FALSE }));

  for (;;)
    {
      RmLevel *lv = &g_array_index (levels, RmLevel, levels->len - 1);
      gboolean from_pos = lv->has_pos, down = FALSE;
      DIR *d = fdopendir (cur);
      struct dirent *de;
      int up;

      if (d == NULL)
        {
          int saved = errno;
          g_autofree char *here = rm_shown (shown, levels, NULL);

          close (cur);
          return set_errno_error (error, saved, "Cannot read", here);
        }
      if (lv->has_pos)
        seekdir (d, lv->pos);
      lv->has_pos = FALSE;
      for (;;)
        {
          while (!down && (de = readdir (d)) != NULL)
            {
              Place here;
              g_autofree char *child = NULL;

              if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
                continue;
              if (g_cancellable_set_error_if_cancelled (cancellable, error))
                {
                  closedir (d);
                  return FALSE;
                }
              if (!place_at (dirfd (d), de->d_name, &here))
                {
                  int saved = errno;

                  if (saved == ENOENT)
                    continue;
                  child = rm_shown (shown, levels, de->d_name);
                  closedir (d);
                  return set_errno_error (error, saved, "Cannot inspect", child);
                }
              if (is_other_mount (&top, &here))
                {
                  child = rm_shown (shown, levels, de->d_name);
                  closedir (d);
                  g_set_error (error, G_IO_ERROR, G_IO_ERROR_BUSY,
                               "%s is a mount point; unmount it and try again", child);
                  return FALSE;
                }
              if (!S_ISDIR (here.mode))
                {
                  if (unlinkat (dirfd (d), de->d_name, 0) != 0 && errno != ENOENT)
                    {
                      int saved = errno;

                      child = rm_shown (shown, levels, de->d_name);
                      closedir (d);
                      return set_errno_error (error, saved, "Cannot remove", child);
                    }
                  /* (a file another path still links to frees nothing) */
                  if (freed != NULL && !(S_ISREG (here.mode) && here.nlink > 1))
                    *freed += here.blocks * 512;
                  continue;
                }
              if ((cur = rm_open_dir (dirfd (d), de->d_name, &top, FALSE, &st, shown, levels, error)) < 0)
                {
                  closedir (d);
                  return FALSE;
                }
              lv->pos = telldir (d);
              lv->has_pos = TRUE;
              g_array_append_val (levels, ((RmLevel) { g_strdup (de->d_name), st.st_dev, st.st_ino,
                                                       here.blocks, 0, FALSE }));
              down = TRUE;
            }
          if (down || !from_pos)
            break;
          /* (listed on from where it stopped: once more from the start) */
          from_pos = FALSE;
          rewinddir (d);
        }
      if (down)
        {
          closedir (d);
          continue;
        }
      /* empty: removed from its parent */
      if (levels->len == 1)
        {
          closedir (d);
          if (unlinkat (dfd, path, AT_REMOVEDIR) != 0)
            return errno == ENOENT || set_errno_error (error, errno, "Cannot remove", shown);
          if (freed != NULL)
            *freed += top.blocks * 512;
          return TRUE;
        }
      up = openat (dirfd (d), "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      closedir (d);
      {
        RmLevel *parent = &g_array_index (levels, RmLevel, levels->len - 2);
        g_autofree char *here = NULL;

        if (up < 0 || fstat (up, &st) != 0 || st.st_dev != parent->dev || st.st_ino != parent->ino)
          {
            if (up >= 0)
              close (up);
            here = rm_shown (shown, levels, NULL);
            g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                         "Cannot remove %s: it was moved while it was removed", here);
            return FALSE;
          }
        if (unlinkat (up, lv->name, AT_REMOVEDIR) != 0 && errno != ENOENT)
          {
            int saved = errno;

            close (up);
            here = rm_shown (shown, levels, NULL);
            return set_errno_error (error, saved, "Cannot remove", here);
          }
      }
      if (freed != NULL)
        *freed += lv->blocks * 512;
      g_array_set_size (levels, levels->len - 1);
      cur = up;
    }
}

gboolean
gl_rm_rf (const char *path, GCancellable *cancellable, GError **error)
{
  return rm_rf_at (AT_FDCWD, path, path, NULL, cancellable, error);
}

gboolean
gl_rm_rf_freed (const char *path, guint64 *freed, GCancellable *cancellable, GError **error)
{
  return rm_rf_at (AT_FDCWD, path, path, freed, cancellable, error);
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

guint
gl_keyfile_count_key (const char *data, gsize length, const char *group, const char *key)
{
  const char *end = data + (length == (gsize) -1 ? strlen (data) : length);
  gsize group_len = strlen (group), key_len = strlen (key);
  gboolean in_group = FALSE;
  guint count = 0;

  for (const char *p = data; p < end;)
    {
      const char *eol = memchr (p, '\n', (size_t) (end - p));
      const char *s = p, *stop = eol ? eol : end;

      while (s < stop && g_ascii_isspace (*s))
        s++;
      while (stop > s && g_ascii_isspace (stop[-1]))
        stop--;
      if (s < stop && *s == '[')
        in_group = (gsize) (stop - s) == group_len + 2 && stop[-1] == ']' &&
                   strncmp (s + 1, group, group_len) == 0;
      else if (in_group && (gsize) (stop - s) > key_len && strncmp (s, key, key_len) == 0)
        {
          const char *q = s + key_len;
          while (q < stop && (*q == ' ' || *q == '\t'))
            q++;
          if (q < stop && *q == '=')
            count++;
        }
      p = eol ? eol + 1 : end;
    }
  return count;
}

/* @rel of the tree @root, opened (@flags: O_PATH, perhaps O_DIRECTORY;
 * openat2 takes no other flag with it) without following any link and
 * without leaving the tree. */
static int
tree_open (const char *root, const char *rel, int flags, GError **error)
{
  struct open_how how = {
    .flags = (guint64) (flags | O_CLOEXEC),
    .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
  };
  int rootfd = open (root, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  int fd, errsv;

  if (rootfd < 0)
    {
      errsv = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv), "Cannot open %s: %s", root,
                   g_strerror (errsv));
      return -1;
    }
  fd = (int) syscall (SYS_openat2, rootfd, rel, &how, sizeof how);
  errsv = errno;
  close (rootfd);
  if (fd < 0)
    {
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv), "Cannot open %s of %s: %s%s",
                   rel, root, g_strerror (errsv), errsv == ELOOP ? " (a link, which is not followed)" : "");
      return -1;
    }
  return fd;
}

#define TREE_FILE_MAX (1024 * 1024)


int
gl_tree_open_file (const char *root, const char *rel, GError **error)
{
  int fd = tree_open (root, rel, O_PATH, error);
  int errsv;

  if (fd < 0)
    return -1;
  fd = gl_reopen_regular (fd, G_MAXSIZE);
  errsv = errno;
  if (fd < 0 && errsv == EINVAL)
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                 "%s of %s is not a regular file", rel, root);
  else if (fd < 0)
    g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv), "Cannot read %s of %s: %s",
                 rel, root, g_strerror (errsv));
  return fd;
}

int
gl_tree_open_dir (const char *root, const char *rel, GError **error)
{
  return tree_open (root, rel, O_RDONLY | O_DIRECTORY, error);
}

gboolean
gl_tree_read_file (const char *root, const char *rel, char **contents, gsize *length, GError **error)
{
  return gl_tree_read_file_max (root, rel, TREE_FILE_MAX, contents, length, error);
}

static void
set_too_big_error (GError **error, const char *root, const char *rel, gsize max)
{
  g_autofree char *size = max % (1024 * 1024) == 0
                           ? g_strdup_printf ("%" G_GSIZE_FORMAT " MiB", max / (1024 * 1024))
                           : g_format_size_full (max, G_FORMAT_SIZE_IEC_UNITS);

  g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
               "%s of %s is not a regular file of at most %s", rel, root, size);
}


gboolean
gl_tree_read_file_max (const char *root, const char *rel, gsize max, char **contents, gsize *length,
                       GError **error)
{
  int fd = gl_tree_open_file (root, rel, error);
  int errsv;

  if (fd < 0)
    return FALSE;
  if (gl_read_fd_max (fd, max, contents, length))
    return TRUE;
  errsv = errno;
  if (errsv == EFBIG)
    set_too_big_error (error, root, rel, max);
  else
    g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv), "Cannot read %s of %s: %s",
                 rel, root, g_strerror (errsv));
  return FALSE;
}

gboolean
gl_tree_write_file (const char *root, const char *rel, const char *contents, gssize length,
                    int mode, GError **error)
{
  g_autofree char *dir = g_path_get_dirname (rel);
  g_autofree char *name = g_path_get_basename (rel);
  gsize len = length < 0 ? strlen (contents) : (gsize) length;
  int dfd = tree_open (root, dir, O_PATH | O_DIRECTORY, error);
  int fd, errsv;

  if (dfd < 0)
    return FALSE;
  if (unlinkat (dfd, name, 0) != 0 && errno != ENOENT)
    {
      errsv = errno;
      close (dfd);
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv), "Cannot replace %s of %s: %s",
                   rel, root, g_strerror (errsv));
      return FALSE;
    }
  fd = openat (dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  errsv = errno;
  close (dfd);
  if (fd < 0 || write (fd, contents, len) != (gssize) len || fchmod (fd, (mode_t) mode) != 0
      || fsync (fd) != 0)
    {
      if (fd >= 0)
        errsv = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv), "Cannot write %s of %s: %s",
                   rel, root, g_strerror (errsv));
      if (fd >= 0)
        close (fd);
      return FALSE;
    }
  close (fd);
  return TRUE;
}
