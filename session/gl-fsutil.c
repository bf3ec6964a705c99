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

/* The file @pathfd (an O_PATH descriptor, which it takes) opened for
 * reading when it is a regular file of at most @max bytes, else -1 with
 * errno set: EINVAL when it is not a regular file, EFBIG when it is
 * larger.  A FIFO or device is never opened: the reopening goes through
 * the descriptor's /proc link, which names the file found, not a path to
 * resolve again. */
static int
reopen_regular (int pathfd, gsize max)
{
  char proc[64];
  struct stat st;
  int fd = -1, errsv;

  if (fstat (pathfd, &st) != 0)
    errsv = errno;
  else if (!S_ISREG (st.st_mode))
    errsv = EINVAL;
  else if ((guint64) st.st_size > max)
    errsv = EFBIG;
  else
    {
      g_snprintf (proc, sizeof proc, "/proc/self/fd/%d", pathfd);
      fd = open (proc, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
      errsv = errno;
    }
  close (pathfd);
  errno = errsv;
  return fd;
}

int
gl_tree_open_file (const char *root, const char *rel, GError **error)
{
  int fd = tree_open (root, rel, O_PATH, error);
  int errsv;

  if (fd < 0)
    return -1;
  fd = reopen_regular (fd, G_MAXSIZE);
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

/* Reads the open file @fd (which it closes), of at most @max bytes even
 * if it grows while it is read; FALSE with errno (EFBIG when larger). */
static gboolean
read_fd_max (int fd, gsize max, char **contents, gsize *length)
{
  g_autofree char *data = NULL;
  struct stat st = { 0 };
  gsize got = 0;
  gsize room;

  if (fstat (fd, &st) != 0 || (guint64) st.st_size > max)
    {
      int errsv = (guint64) st.st_size > max ? EFBIG : errno;

      close (fd);
      errno = errsv;
      return FALSE;
    }
  room = MIN ((gsize) st.st_size, max) + 1;
  data = g_malloc (room);
  for (;;)
    {
      gssize n;

      if (got == room)
        {
          room = MIN (room * 2, max + 1);
          data = g_realloc (data, room);
        }
      n = read (fd, data + got, room - got);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int errsv = errno;
          close (fd);
          errno = errsv;
          return FALSE;
        }
      if (n == 0 || (got += (gsize) n) > max)
        break;
    }
  close (fd);
  if (got > max)
    {
      errno = EFBIG;
      return FALSE;
    }
  data = g_realloc (data, got + 1);
  data[got] = '\0';
  if (length != NULL)
    *length = got;
  *contents = g_steal_pointer (&data);
  return TRUE;
}

gboolean
gl_tree_read_file_max (const char *root, const char *rel, gsize max, char **contents, gsize *length,
                       GError **error)
{
  int fd = gl_tree_open_file (root, rel, error);
  int errsv;

  if (fd < 0)
    return FALSE;
  if (read_fd_max (fd, max, contents, length))
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

/* ------------------------------------------------ an overlay's view */

GlLayerDir
gl_layer_open_dir (const char *root, const char *rel, int *fd, gboolean *opaque)
{
  g_auto(GStrv) parts = g_strsplit (rel, "/", -1);
  int cur = open (root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

  *opaque = FALSE;
  if (cur < 0)
    return errno == ENOENT ? GL_LAYER_NONE : GL_LAYER_UNKNOWN;
  for (char **p = parts; *p; p++)
    {
      struct stat st;
      int next;

      if (**p == '\0' || g_str_equal (*p, "."))
        continue;
      if (g_str_equal (*p, "..") || fstatat (cur, *p, &st, AT_SYMLINK_NOFOLLOW) != 0)
        {
          GlLayerDir r = g_str_equal (*p, "..") || errno != ENOENT ? GL_LAYER_UNKNOWN
                       : *opaque ? GL_LAYER_HIDES : GL_LAYER_NONE;
          close (cur);
          return r;
        }
      if (!S_ISDIR (st.st_mode))
        {
          close (cur);
          return S_ISLNK (st.st_mode) ? GL_LAYER_UNKNOWN : GL_LAYER_HIDES;
        }
      next = openat (cur, *p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      close (cur);
      if (next < 0)
        return GL_LAYER_UNKNOWN;
      cur = next;
      *opaque = *opaque || gl_overlay_dir_is_opaque (cur);
    }
  *fd = cur;
  return GL_LAYER_DIR;
}

/* ------------------------------------------------ the view's resolver */

/* (as the kernel's MAXSYMLINKS) */
#define VIEW_MAX_LINKS 40
/* What one walk may cost, links followed: the path it walks (links
 * substituted) at most PATH_MAX long, and at most this many components
 * looked up, each ".." counted (it walks again from the root).  Without
 * them, links full of ".." (40 of 4 KiB) cost minutes of CPU. */
#define VIEW_MAX_STEPS 4096

static void (*before_open_hook) (int dfd, const char *name);

void
gl_view_set_before_open_hook (void (*hook) (int dfd, const char *name))
{
  before_open_hook = hook;
}

/* A directory of the view: per layer (top first), that layer's directory
 * there, opened (O_RDONLY, for its xattrs and entries), or -1 where the
 * layer has none or is hidden below. */
typedef struct {
  gsize n;
  int *fds;
} ViewDir;

static void
close_fds (int *fds, gsize n)
{
  for (gsize i = 0; fds != NULL && i < n; i++)
    if (fds[i] >= 0)
      close (fds[i]);
}

static void
view_dir_clear (ViewDir *d)
{
  close_fds (d->fds, d->n);
  g_clear_pointer (&d->fds, g_free);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (ViewDir, view_dir_clear)

static int
open_dir_at (int dfd, const char *name)
{
  return openat (dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
}

/* The view's root: each layer's (a missing one is none) */
static gboolean
view_dir_root (ViewDir *d, const char * const *layers, gsize n_layers)
{
  view_dir_clear (d);
  d->n = n_layers;
  d->fds = g_new (int, n_layers);
  for (gsize i = 0; i < n_layers; i++)
    d->fds[i] = -1;
  for (gsize i = 0; i < n_layers; i++)
    if (layers[i] != NULL && (d->fds[i] = open_dir_at (AT_FDCWD, layers[i])) < 0 && errno != ENOENT)
      return FALSE;
  return TRUE;
}

typedef enum {
  STEP_DIR,      /* @d is now the directory */
  STEP_FILE,     /* the regular file, opened in *fd */
  STEP_LINK,     /* a symbolic link: its target in *target */
  STEP_ABSENT,
  STEP_UNKNOWN,
} ViewStep;

/* @name in the directory @d of the view, as overlayfs shows it: the top
 * layer that has it gives it (a whiteout: nothing); a directory merges
 * the layers below down to an opaque one or to one where a non-directory
 * (whiteout, file, link) stops it.  When @open_file, a regular file is
 * opened (at most @max bytes), anything else that is not a link is
 * STEP_UNKNOWN; else a non-directory is nothing to walk into. */
static ViewStep
view_step (ViewDir *d, const char *name, gboolean open_file, gsize max, int *fd, char **target)
{
  g_autofree int *sub = NULL;
  struct stat st;
  gsize top;

  for (top = 0; top < d->n; top++)
    {
      if (d->fds[top] < 0)
        continue;
      if (fstatat (d->fds[top], name, &st, AT_SYMLINK_NOFOLLOW) == 0)
        break;
      if (errno != ENOENT)
        return STEP_UNKNOWN;
    }
  if (top == d->n || gl_overlay_is_whiteout (&st))
    return STEP_ABSENT;
  if (S_ISLNK (st.st_mode))
    {
      char buf[PATH_MAX];
      ssize_t n = readlinkat (d->fds[top], name, buf, sizeof buf);

      if (n <= 0 || (gsize) n >= sizeof buf)
        return STEP_UNKNOWN;
      *target = g_strndup (buf, (gsize) n);
      return STEP_LINK;
    }
  if (open_file)
    {
      int pathfd;

      if (!S_ISREG (st.st_mode))
        return STEP_UNKNOWN;
      if (before_open_hook != NULL)
        before_open_hook (d->fds[top], name);
      /* (what is opened is checked again: it is what is read) */
      pathfd = openat (d->fds[top], name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
      if (pathfd < 0 || (*fd = reopen_regular (pathfd, max)) < 0)
        {
          g_debug ("%s: %s", name, errno == EINVAL ? "not a regular file" : g_strerror (errno));
          return STEP_UNKNOWN;
        }
      return STEP_FILE;
    }
  if (!S_ISDIR (st.st_mode))
    return STEP_ABSENT;
  sub = g_new (int, d->n);
  for (gsize i = 0; i < d->n; i++)
    sub[i] = -1;
  for (gsize i = top; i < d->n; i++)
    {
      int found = 0;

      if (d->fds[i] < 0)
        continue;
      if (i > top)
        found = fstatat (d->fds[i], name, &st, AT_SYMLINK_NOFOLLOW);
      if (found != 0 && errno == ENOENT)
        continue;
      /* a whiteout, a file or a link stops the merge: nothing below shows */
      if (found == 0 && !S_ISDIR (st.st_mode))
        break;
      if (found != 0 || (sub[i] = open_dir_at (d->fds[i], name)) < 0)
        {
          close_fds (sub, d->n);
          return STEP_UNKNOWN;
        }
      if (gl_overlay_dir_is_opaque (sub[i]))
        break;
    }
  close_fds (d->fds, d->n);
  g_free (d->fds);
  d->fds = g_steal_pointer (&sub);
  return STEP_DIR;
}

/* The components of @parts from @i on, "/"-joined after @prefix */
static char *
join_rest (const char *prefix, char **parts, guint i)
{
  g_autoptr(GString) s = g_string_new (prefix);

  for (; parts[i] != NULL; i++)
    {
      g_string_append_c (s, '/');
      g_string_append (s, parts[i]);
    }
  return g_string_free (g_steal_pointer (&s), FALSE);
}

/* Walks @rel of the view a component at a time from its root, each
 * component looked up with view_step.  With GL_VIEW_FOLLOW_LINKS, a link
 * is followed as the view would follow it (at most VIEW_MAX_LINKS): its
 * target is looked up afresh from the view's root (an absolute one) or
 * from the link's directory, ".." stops at the view's root; otherwise a
 * link or ".." is GL_VIEW_UNKNOWN.  GL_VIEW_FILE when what is there was
 * found as asked: with @fd, a regular file opened for reading in *@fd;
 * without, a directory, left in @dir. */
static GlViewFile
view_walk (const char * const *layers, gsize n_layers, const char *rel, GlViewFlags flags,
           gsize max, int *fd, ViewDir *dir)
{
  g_autofree char *path = g_strdup (rel);
  gboolean follow = (flags & GL_VIEW_FOLLOW_LINKS) != 0;
  guint links = 0, steps = 0;

  for (;;)
    {
      g_auto(GStrv) parts = g_strsplit (path, "/", -1);
      g_autoptr(GString) done = g_string_new (NULL);   /* the walk so far: no link, no ".." */
      g_autofree char *next = NULL;
      guint last = 0;

      if (strlen (path) >= PATH_MAX)
        {
          g_debug ("%s: a path of more than %d bytes, links followed", rel, PATH_MAX);
          return GL_VIEW_UNKNOWN;
        }
      if (!view_dir_root (dir, layers, n_layers))
        return GL_VIEW_UNKNOWN;
      for (guint i = 0; parts[i] != NULL; i++)
        if (parts[i][0] != '\0' && !g_str_equal (parts[i], "."))
          last = i;
      for (guint i = 0; next == NULL && parts[i] != NULL; i++)
        {
          const char *c = parts[i];
          g_autofree char *target = NULL;

          if (c[0] == '\0' || g_str_equal (c, "."))
            continue;
          if (++steps > VIEW_MAX_STEPS)
            {
              g_debug ("%s: more than %d components looked up", rel, VIEW_MAX_STEPS);
              return GL_VIEW_UNKNOWN;
            }
          if (g_str_equal (c, ".."))
            {
              char *slash = strrchr (done->str, '/');

              if (!follow)
                return GL_VIEW_UNKNOWN;
              g_string_truncate (done, slash ? (gsize) (slash - done->str) : 0);
              next = join_rest (done->str, parts, i + 1);
              break;
            }
          switch (view_step (dir, c, fd != NULL && i == last, max, fd, &target))
            {
            case STEP_DIR:
              g_string_append_c (done, '/');
              g_string_append (done, c);
              continue;
            case STEP_FILE:
              return GL_VIEW_FILE;
            case STEP_LINK:
              if (!follow)
                return GL_VIEW_UNKNOWN;
              if (++links > VIEW_MAX_LINKS)
                {
                  g_debug ("%s: more than %d links", rel, VIEW_MAX_LINKS);
                  return GL_VIEW_UNKNOWN;
                }
              {
                g_autofree char *base = g_strconcat (target[0] == '/' ? "" : done->str, "/", target, NULL);

                next = join_rest (base, parts, i + 1);
              }
              break;
            case STEP_ABSENT:
              return GL_VIEW_ABSENT;
            case STEP_UNKNOWN:
              return GL_VIEW_UNKNOWN;
            }
        }
      if (next == NULL)
        /* a directory: the end of the walk when one was asked for */
        return fd == NULL ? GL_VIEW_FILE : GL_VIEW_UNKNOWN;
      g_free (path);
      path = g_steal_pointer (&next);
    }
}

GlViewFile
gl_view_open_file_full (const char * const *layers, gsize n_layers, const char *rel, GlViewFlags flags,
                        gsize max, int *fd)
{
  g_auto(ViewDir) dir = { 0 };

  *fd = -1;
  return view_walk (layers, n_layers, rel, flags, max, fd, &dir);
}

GlViewFile
gl_view_open_file (const char * const *layers, gsize n_layers, const char *rel, gsize max, int *fd)
{
  return gl_view_open_file_full (layers, n_layers, rel, GL_VIEW_NO_FLAGS, max, fd);
}

GlViewFile
gl_view_read_file_full (const char * const *layers, gsize n_layers, const char *rel, GlViewFlags flags,
                        gsize max, char **contents, gsize *length)
{
  int fd = -1;
  GlViewFile got = gl_view_open_file_full (layers, n_layers, rel, flags, max, &fd);

  if (got != GL_VIEW_FILE || read_fd_max (fd, max, contents, length))
    return got;
  g_debug ("Cannot read %s of the view: %s", rel, g_strerror (errno));
  return GL_VIEW_UNKNOWN;
}

GlViewFile
gl_view_read_file (const char * const *layers, gsize n_layers, const char *rel, gsize max,
                   char **contents, gsize *length)
{
  return gl_view_read_file_full (layers, n_layers, rel, GL_VIEW_NO_FLAGS, max, contents, length);
}

GHashTable *
gl_view_dir_names_full (const char * const *layers, gsize n_layers, const char *rel, GlViewFlags flags)
{
  g_autoptr(GHashTable) names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GHashTable) gone = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_auto(ViewDir) dir = { 0 };

  switch (view_walk (layers, n_layers, rel, flags, 0, NULL, &dir))
    {
    case GL_VIEW_ABSENT:
      return g_steal_pointer (&names);
    case GL_VIEW_UNKNOWN:
      return NULL;
    case GL_VIEW_FILE:
      break;
    }
  /* top first: a name shows from the top layer that has it */
  for (gsize i = 0; i < dir.n; i++)
    {
      DIR *d;
      struct dirent *e;

      if (dir.fds[i] < 0)
        continue;
      if ((d = fdopendir (dir.fds[i])) == NULL)
        return NULL;
      dir.fds[i] = -1;
      while ((e = readdir (d)) != NULL)
        {
          struct stat st;

          if (g_str_equal (e->d_name, ".") || g_str_equal (e->d_name, "..")
              || g_hash_table_contains (names, e->d_name) || g_hash_table_contains (gone, e->d_name))
            continue;
          if (fstatat (dirfd (d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && gl_overlay_is_whiteout (&st))
            g_hash_table_add (gone, g_strdup (e->d_name));
          else
            g_hash_table_add (names, g_strdup (e->d_name));
        }
      closedir (d);
    }
  return g_steal_pointer (&names);
}

GHashTable *
gl_view_dir_names (const char * const *layers, gsize n_layers, const char *rel)
{
  return gl_view_dir_names_full (layers, n_layers, rel, GL_VIEW_NO_FLAGS);
}
