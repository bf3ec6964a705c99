/* gl-reclaim.c: giving back the disk space of what no view uses any more
 * (see gl-reclaim.h)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-reclaim.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gl-fsutil.h"
#include "gl-pkg.h"

static gboolean
errno_error (GError **error, int errsv, const char *what, const char *path)
{
  g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv), "%s %s: %s", what, path,
               g_strerror (errsv));
  return FALSE;
}

/* @linked (or NULL): the files of more than one link met so far, inode ->
 * links met; see gl_reclaim_size_whole.  @skip (or NULL): the name of the
 * directories left out at @depth 2 (see gl_reclaim_size_whole_but) */
static guint64
size_at (int dfd, const char *name, dev_t dev, GHashTable *linked, const char *skip, guint depth)
{
  struct stat st;
  guint64 total;
  int fd;
  DIR *d;
  struct dirent *de;

  if (fstatat (dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_dev != dev)
    return 0;
  if (!S_ISDIR (st.st_mode))
    {
      gpointer key = GSIZE_TO_POINTER ((gsize) st.st_ino), met;
      if (!S_ISREG (st.st_mode) || st.st_nlink <= 1)
        return (guint64) st.st_blocks * 512;
      if (linked == NULL)
        return 0;
      /* (counted at its last link met: then no other path links to it) */
      met = GUINT_TO_POINTER (GPOINTER_TO_UINT (g_hash_table_lookup (linked, key)) + 1);
      g_hash_table_insert (linked, key, met);
      return GPOINTER_TO_UINT (met) == st.st_nlink ? (guint64) st.st_blocks * 512 : 0;
    }
  total = (guint64) st.st_blocks * 512;
  fd = openat (dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 || (d = fdopendir (fd)) == NULL)
    {
      if (fd >= 0)
        close (fd);
      return total;
    }
  while ((de = readdir (d)) != NULL)
    if (!g_str_equal (de->d_name, ".") && !g_str_equal (de->d_name, "..")
        && !(depth == 1 && skip != NULL && g_str_equal (de->d_name, skip)))
      total += size_at (dirfd (d), de->d_name, dev, linked, skip, depth + 1);
  closedir (d);
  return total;
}

guint64
gl_reclaim_size (const char *path)
{
  struct stat st;
  if (lstat (path, &st) != 0)
    return 0;
  return size_at (AT_FDCWD, path, st.st_dev, NULL, NULL, 0);
}

guint64
gl_reclaim_size_whole (const char *path)
{
  return gl_reclaim_size_whole_but (path, NULL);
}

guint64
gl_reclaim_size_whole_but (const char *path, const char *skip)
{
  g_autoptr(GHashTable) linked = g_hash_table_new (g_direct_hash, g_direct_equal);
  struct stat st;
  if (lstat (path, &st) != 0)
    return 0;
  return size_at (AT_FDCWD, path, st.st_dev, linked, skip, 0);
}

static guint
read_number (const char *system, const char *name)
{
  g_autofree char *path = g_build_filename (system, name, NULL);
  g_autofree char *text = NULL;
  guint64 v = 0;
  if (!g_file_get_contents (path, &text, NULL, NULL)
      || !g_ascii_string_to_unsigned (g_strstrip (text), 10, 1, G_MAXUINT32, &v, NULL))
    return 0;
  return (guint) v;
}

static gboolean
write_number (const char *system, const char *name, guint n, GError **error)
{
  g_autofree char *path = g_build_filename (system, name, NULL);
  g_autofree char *text = g_strdup_printf ("%u\n", n);
  return g_file_set_contents_full (path, text, -1, G_FILE_SET_CONTENTS_CONSISTENT, 0644, error);
}

gboolean
gl_reclaim_mark_rebased (const char *system, guint generation, GError **error)
{
  return write_number (system, "rebased", generation, error);
}

/* The oldest generation left in @system (0: none) */
static guint
oldest_generation (const char *system)
{
  g_autoptr(GDir) d = g_dir_open (system, 0, NULL);
  const char *name;
  guint oldest = 0;
  while (d && (name = g_dir_read_name (d)) != NULL)
    {
      guint64 v;
      if (g_ascii_string_to_unsigned (name, 10, 1, G_MAXUINT32, &v, NULL) && (oldest == 0 || v < oldest))
        oldest = (guint) v;
    }
  return oldest;
}

/* Whether the tree at @dfd holds anything but directories */
static gboolean
has_files_at (int dfd)
{
  int fd = dup (dfd);
  DIR *d;
  struct dirent *de;
  gboolean found = FALSE;

  if (fd < 0 || (d = fdopendir (fd)) == NULL)
    {
      if (fd >= 0)
        close (fd);
      return TRUE;   /* (cannot tell: as if it had) */
    }
  while (!found && (de = readdir (d)) != NULL)
    {
      struct stat st;
      int sub;
      if (g_str_equal (de->d_name, ".") || g_str_equal (de->d_name, ".."))
        continue;
      if (fstatat (dirfd (d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR (st.st_mode))
        found = TRUE;
      else if ((sub = openat (dirfd (d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
        found = TRUE;
      else
        {
          found = has_files_at (sub);
          close (sub);
        }
    }
  closedir (d);
  return found;
}

/* @dst (new) gets the directories of @src (owners and modes), nothing else */
static gboolean
skeleton_at (int src, int dst, const char *shown, GError **error)
{
  int fd = dup (src);
  DIR *d;
  struct dirent *de;
  gboolean ok = TRUE;

  if (fd < 0 || (d = fdopendir (fd)) == NULL)
    {
      if (fd >= 0)
        close (fd);
      return errno_error (error, errno, "Cannot read", shown);
    }
  while (ok && (de = readdir (d)) != NULL)
    {
      struct stat st;
      g_autofree char *child = NULL;
      int s, t;
      if (g_str_equal (de->d_name, ".") || g_str_equal (de->d_name, "..")
          || fstatat (dirfd (d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR (st.st_mode))
        continue;
      child = g_build_filename (shown, de->d_name, NULL);
      if (mkdirat (dst, de->d_name, 0700) != 0
          || fchownat (dst, de->d_name, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW) != 0
          || fchmodat (dst, de->d_name, st.st_mode & 07777, 0) != 0)
        {
          ok = errno_error (error, errno, "Cannot copy the directory", child);
          break;
        }
      s = openat (dirfd (d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      t = openat (dst, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (s < 0 || t < 0)
        ok = errno_error (error, errno, "Cannot open", child);
      else
        ok = skeleton_at (s, t, child, error);
      if (s >= 0)
        close (s);
      if (t >= 0)
        close (t);
    }
  closedir (d);
  return ok;
}

gboolean
gl_reclaim_old_base (GlSandbox *sandbox, guint64 *freed, gboolean *in_use, GError **error)
{
  g_autofree char *system = g_build_filename (sandbox->path, "system", NULL);
  g_autofree char *rootfs = g_build_filename (sandbox->path, "rootfs", NULL);
  g_autofree char *saved = gl_pkg_saved_base_tree (sandbox);
  g_autofree char *tmp = NULL, *skel = NULL;
  g_autoptr(GArray) locks = NULL;
  g_autoptr(GError) local = NULL;
  guint rebased = read_number (system, "rebased");
  guint oldest;
  struct stat rst;
  gboolean ok;

  *freed = 0;
  *in_use = FALSE;
  if (rebased == 0 || read_number (system, "reclaimed") >= rebased
      || saved == NULL
      || lstat (rootfs, &rst) != 0 || !S_ISDIR (rst.st_mode))
    return TRUE;
  oldest = oldest_generation (system);
  if (oldest == 0 || oldest < rebased)
    {
      *in_use = oldest != 0;
      return TRUE;
    }
  {
    /* (a skeleton already: an earlier rebase's reclaim) */
    int fd = open (rootfs, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    gboolean files = fd < 0 || has_files_at (fd);
    if (fd >= 0)
      close (fd);
    if (!files)
      return write_number (system, "reclaimed", rebased, error);
  }

  /* the skeleton first, outside the moment the sandbox is locked */
  tmp = g_build_filename (system, ".op-base-XXXXXX", NULL);
  if (g_mkdtemp_full (tmp, 0700) == NULL)
    return errno_error (error, errno, "Cannot create", tmp);
  skel = g_build_filename (tmp, "rootfs", NULL);
  {
    int s = open (rootfs, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), t = -1;
    ok = s >= 0 && mkdir (skel, 0700) == 0 && chown (skel, rst.st_uid, rst.st_gid) == 0
         && chmod (skel, rst.st_mode & 07777) == 0
         && (t = open (skel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0;
    if (!ok)
      errno_error (error, errno, "Cannot prepare", skel);
    else
      ok = skeleton_at (s, t, rootfs, error);
    if (s >= 0)
      close (s);
    if (t >= 0)
      close (t);
  }
  /* no view at all: rootfs/ is a layer of each */
  if (ok)
    {
      locks = gl_sandbox_lock_exclusive (sandbox, &local);
      if (locks == NULL)
        {
          g_debug ("%s", local->message);
          *in_use = TRUE;
        }
      else if (renameat2 (AT_FDCWD, skel, AT_FDCWD, rootfs, RENAME_EXCHANGE) != 0)
        ok = errno_error (error, errno, "Cannot replace", rootfs);
      else
        ok = write_number (system, "reclaimed", rebased, error);
      g_clear_pointer (&locks, g_array_unref);
    }
  if (ok && !*in_use)
    *freed = gl_reclaim_size (skel);
  /* (the old base, or the unused skeleton; a kill leaves it to the next
   * operation, which removes every .op-*) */
  {
    g_autoptr(GError) rm_error = NULL;
    if (!gl_rm_rf (tmp, NULL, &rm_error))
      g_debug ("%s", rm_error->message);
  }
  return ok;
}
