/* gl-tree.c: reading files of a sandbox tree, which are hostile
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "gl-tree.h"

const char * const gl_tree_data_prefixes[] = { "usr/", "opt/", NULL };

static void
close_fd (int fd)
{
  if (fd >= 0)
    close (fd);
}
typedef int TreeFd;
G_DEFINE_AUTO_CLEANUP_FREE_FUNC (TreeFd, close_fd, -1)

/* What one resolution may cost, in components walked: each lstat walks
 * the path so far from the root.  40 links that walk 2,000 directories
 * down and back up again ("d/../d/..") cost 11 s of CPU per entry or
 * icon without it; a real icon path costs tens. */
#define RESOLVE_MAX_COST (64 * 1024)

/* The path inside @root, relative and without links, or NULL. */
static char *
resolve_rel (const char *root, const char *path)
{
  g_autoptr(GPtrArray) done = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GQueue) todo = g_queue_new ();
  g_auto(GStrv) first = g_strsplit (path, "/", -1);
  guint hops = 0;
  gsize cost = 0;

  for (gsize i = 0; first[i] != NULL; i++)
    g_queue_push_tail (todo, g_strdup (first[i]));

  while (!g_queue_is_empty (todo))
    {
      g_autofree char *comp = g_queue_pop_head (todo);
      g_autofree char *candidate = NULL;
      g_autofree char *prefix = NULL;
      struct stat st;

      if (*comp == '\0' || strcmp (comp, ".") == 0)
        continue;
      if (strcmp (comp, "..") == 0)
        {
          if (done->len > 0)
            g_ptr_array_remove_index (done, done->len - 1);
          continue;
        }

      if ((cost += done->len + 1) > RESOLVE_MAX_COST)
        {
          g_queue_free_full (g_steal_pointer (&todo), g_free);
          return NULL;
        }
      g_ptr_array_add (done, NULL);
      prefix = g_strjoinv ("/", (GStrv) done->pdata);
      g_ptr_array_remove_index (done, done->len - 1);
      candidate = g_build_filename (root, prefix, comp, NULL);
      if (lstat (candidate, &st) != 0)
        {
          g_queue_free_full (g_steal_pointer (&todo), g_free);
          return NULL;
        }
      if (S_ISLNK (st.st_mode))
        {
          g_autofree char *target = g_file_read_link (candidate, NULL);
          g_auto(GStrv) parts = NULL;

          if (target == NULL || ++hops > 40)
            {
              g_queue_free_full (g_steal_pointer (&todo), g_free);
              return NULL;
            }
          if (target[0] == '/')
            g_ptr_array_set_size (done, 0);
          parts = g_strsplit (target, "/", -1);
          for (gssize i = (gssize) g_strv_length (parts) - 1; i >= 0; i--)
            g_queue_push_head (todo, g_strdup (parts[i]));
          continue;
        }
      g_ptr_array_add (done, g_steal_pointer (&comp));
    }

  g_ptr_array_add (done, NULL);
  return g_strjoinv ("/", (GStrv) done->pdata);
}

char *
gl_tree_resolve (const char *root, const char *path)
{
  g_autofree char *rel = resolve_rel (root, path);

  return rel != NULL ? g_build_filename (root, rel, NULL) : NULL;
}

static int
open_in_root (int root_fd, const char *rel, int flags)
{
  struct open_how how = {
    .flags = (guint64) (flags | O_NOFOLLOW | O_CLOEXEC),
    .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS,
  };

  return (int) syscall (SYS_openat2, root_fd, rel, &how, sizeof how);
}

static const char *
file_kind (mode_t mode)
{
  if (S_ISFIFO (mode))
    return "a FIFO";
  if (S_ISCHR (mode) || S_ISBLK (mode))
    return "a device node";
  if (S_ISSOCK (mode))
    return "a socket";
  if (S_ISDIR (mode))
    return "a directory";
  if (S_ISLNK (mode))
    return "a symbolic link";
  return "not a regular file";
}

static gboolean
refuse (GError **error, const char *root, const char *path, const char *why)
{
  g_autofree char *shown = g_build_filename (root, path, NULL);

  g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
               "Not reading %s: %s", shown, why);
  return FALSE;
}

static gboolean
fail_errno (GError **error, int saved, const char *root, const char *path)
{
  g_autofree char *shown = g_build_filename (root, path, NULL);

  g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
               "Cannot read %s: %s", shown, g_strerror (saved));
  return FALSE;
}

/* @path without a leading "/", if it has no empty, "." or ".." component:
 * then it is where it leads unless a component is a link, which openat2
 * (RESOLVE_NO_SYMLINKS) refuses.  NULL otherwise. */
static char *
plain_rel (const char *path)
{
  g_auto(GStrv) parts = NULL;

  while (*path == '/')
    path++;
  if (*path == '\0')
    return NULL;
  parts = g_strsplit (path, "/", -1);
  for (gsize i = 0; parts[i] != NULL; i++)
    if (*parts[i] == '\0' || strcmp (parts[i], ".") == 0 || strcmp (parts[i], "..") == 0)
      return NULL;
  return g_strdup (path);
}

GBytes *
gl_tree_read (const char *root, const char *path, const char * const *under,
              gsize max, guint *mode, GError **error)
{
  struct stat st;
  GBytes *bytes = gl_tree_read_stat (root, path, under, max, &st, error);

  if (bytes != NULL && mode != NULL)
    *mode = st.st_mode & 07777;
  return bytes;
}

GBytes *
gl_tree_read_stat (const char *root, const char *path, const char * const *under,
                   gsize max, struct stat *st_out, GError **error)
{
  g_autofree char *rel = NULL;
  g_autofree char *buf = NULL;
  g_auto(TreeFd) root_fd = -1;
  g_auto(TreeFd) pfd = -1;
  g_auto(TreeFd) fd = -1;
  gboolean allowed = under == NULL;
  struct stat st, st2;
  gsize len = 0;
  gsize cap;

  /* the common case costs one openat2: a plain path without links is
   * opened as it is; only a path with a link in it is resolved component by
   * component first (and opened the same way afterwards) */
  rel = plain_rel (path);
  if (rel != NULL)
    {
      root_fd = open (root, O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (root_fd >= 0)
        pfd = open_in_root (root_fd, rel, O_PATH);
      /* O_NOFOLLOW gives the last component itself if it is a link: that
       * one is resolved inside the tree like any other */
      if (pfd >= 0 && (fstat (pfd, &st) != 0 || S_ISLNK (st.st_mode)))
        close (g_steal_fd (&pfd));
      if (pfd < 0)
        {
          g_clear_pointer (&rel, g_free);
          if (root_fd >= 0)
            close (g_steal_fd (&root_fd));
        }
    }
  if (rel == NULL)
    rel = resolve_rel (root, path);
  if (rel == NULL)
    {
      fail_errno (error, ENOENT, root, path);
      return NULL;
    }
  for (gsize i = 0; under != NULL && under[i] != NULL && !allowed; i++)
    allowed = g_str_has_prefix (rel, under[i]);
  if (!allowed || *rel == '\0')
    {
      g_autofree char *why = g_strdup_printf ("it leads to /%s, outside the places a sandbox keeps "
                                              "applications and icons", rel);
      refuse (error, root, path, why);
      return NULL;
    }

  if (root_fd < 0)
    root_fd = open (root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root_fd < 0)
    {
      fail_errno (error, errno, root, "");
      return NULL;
    }
  /* first without opening the file: a device is never opened */
  if (pfd < 0)
    pfd = open_in_root (root_fd, rel, O_PATH);
  if (pfd < 0)
    {
      fail_errno (error, errno, root, rel);
      return NULL;
    }
  if (fstat (pfd, &st) != 0)
    {
      fail_errno (error, errno, root, rel);
      return NULL;
    }
  if (!S_ISREG (st.st_mode))
    {
      refuse (error, root, rel, file_kind (st.st_mode));
      return NULL;
    }
  if ((st.st_mode & S_IROTH) == 0)
    {
      refuse (error, root, rel, "it is not readable by everyone (a private file is never exported)");
      return NULL;
    }
  if ((guint64) st.st_size > max)
    {
      g_autofree char *why = g_strdup_printf ("it is %" G_GUINT64_FORMAT " bytes, more than the "
                                              "%" G_GSIZE_FORMAT " allowed", (guint64) st.st_size, max);
      refuse (error, root, rel, why);
      return NULL;
    }

  fd = open_in_root (root_fd, rel, O_RDONLY | O_NONBLOCK | O_NOCTTY);
  if (fd < 0)
    {
      fail_errno (error, errno, root, rel);
      return NULL;
    }
  if (fstat (fd, &st2) != 0 || st2.st_dev != st.st_dev || st2.st_ino != st.st_ino ||
      !S_ISREG (st2.st_mode))
    {
      refuse (error, root, rel, "it changed while it was read");
      return NULL;
    }

  /* room for what fstat says, and one byte to see it grow (then up to
   * the cap): not the cap for every small file */
  cap = MIN ((gsize) st2.st_size, max) + 1;
  buf = g_malloc (cap);
  while (len <= max)
    {
      gssize n;

      if (len == cap)
        {
          cap = max + 1;
          buf = g_realloc (buf, cap);
        }
      n = read (fd, buf + len, cap - len);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          fail_errno (error, errno, root, rel);
          return NULL;
        }
      if (n == 0)
        break;
      len += (gsize) n;
    }
  if (len > max)
    {
      refuse (error, root, rel, "it grew past the size allowed while it was read");
      return NULL;
    }
  if (st_out != NULL)
    *st_out = st2;
  if (len + 1 == cap)
    return g_bytes_new_take (g_steal_pointer (&buf), len);
  return g_bytes_new_take (g_realloc (g_steal_pointer (&buf), len > 0 ? len : 1), len);
}
