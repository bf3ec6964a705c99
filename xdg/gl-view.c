/* gl-view.c: the view an overlay mount would show over layers, read from
 * the layers without mounting it (see gl-view.h)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-view.h"
#include "gl-view-private.h"
#include "gl-overlay.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The file @pathfd (an O_PATH descriptor, which it takes) opened for
 * reading when it is a regular file of at most @max bytes, else -1 with
 * errno set: EINVAL when it is not a regular file, EFBIG when it is
 * larger.  A FIFO or device is never opened: the reopening goes through
 * the descriptor's /proc link, which names the file found, not a path to
 * resolve again. */
int
gl_reopen_regular (int pathfd, gsize max)
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

/* Reads the open file @fd (which it closes), of at most @max bytes even
 * if it grows while it is read; FALSE with errno (EFBIG when larger). */
gboolean
gl_read_fd_max (int fd, gsize max, char **contents, gsize *length)
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
view_step (ViewDir *d, const char *name, gboolean open_file, gsize max, int *fd, char **target,
           gsize *layer)
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
      if (pathfd < 0 || (*fd = gl_reopen_regular (pathfd, max)) < 0)
        {
          g_debug ("%s: %s", name, errno == EINVAL ? "not a regular file" : g_strerror (errno));
          return STEP_UNKNOWN;
        }
      *layer = top;
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
 * without, a directory, left in @dir.  A file's layer and its path there
 * (no link, no "..") in @layer and @layer_rel, when they are not NULL. */
static GlViewFile
view_walk (const char * const *layers, gsize n_layers, const char *rel, GlViewFlags flags,
           gsize max, int *fd, ViewDir *dir, gsize *layer, char **layer_rel)
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
          gsize top = 0;

          switch (view_step (dir, c, fd != NULL && i == last, max, fd, &target, &top))
            {
            case STEP_DIR:
              g_string_append_c (done, '/');
              g_string_append (done, c);
              continue;
            case STEP_FILE:
              if ((flags & GL_VIEW_LINKS_INTO_USR) != 0 && links > 0 &&
                  !g_str_equal (done->str, "/usr") && !g_str_has_prefix (done->str, "/usr/"))
                {
                  g_debug ("%s: a link leads to %s/%s, not into /usr", rel, done->str, c);
                  if (fd != NULL && *fd >= 0)
                    close (*fd);
                  if (fd != NULL)
                    *fd = -1;
                  return GL_VIEW_UNKNOWN;
                }
              if (layer != NULL)
                *layer = top;
              if (layer_rel != NULL)
                *layer_rel = done->len > 0 ? g_strconcat (done->str + 1, "/", c, NULL) : g_strdup (c);
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
        {
          /* a directory: the end of the walk when one was asked for */
          if (fd != NULL)
            return GL_VIEW_UNKNOWN;
          if (layer_rel != NULL)
            *layer_rel = g_strdup (done->len > 0 ? done->str + 1 : "");
          return GL_VIEW_FILE;
        }
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
  return view_walk (layers, n_layers, rel, flags, max, fd, &dir, NULL, NULL);
}

GlViewFile
gl_view_locate_file (const char * const *layers, gsize n_layers, const char *rel,
                     gsize *layer, char **layer_rel)
{
  g_auto(ViewDir) dir = { 0 };
  g_autofree char *found = NULL;
  int fd = -1;
  GlViewFile got = view_walk (layers, n_layers, rel, GL_VIEW_FOLLOW_LINKS, G_MAXSIZE, &fd, &dir,
                              layer, &found);

  if (fd >= 0)
    close (fd);
  if (got == GL_VIEW_FILE)
    *layer_rel = g_steal_pointer (&found);
  return got;
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

  if (got != GL_VIEW_FILE || gl_read_fd_max (fd, max, contents, length))
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

void
gl_view_entry_free (GlViewEntry *entry)
{
  g_free (entry->name);
  g_free (entry);
}

GPtrArray *
gl_view_dir_entries (const char * const *layers, gsize n_layers, const char *rel, GlViewFlags flags,
                     char **dir_rel)
{
  g_autoptr(GPtrArray) entries = g_ptr_array_new_with_free_func ((GDestroyNotify) gl_view_entry_free);
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_auto(ViewDir) dir = { 0 };
  g_autofree char *walked = NULL;

  switch (view_walk (layers, n_layers, rel, flags, 0, NULL, &dir, NULL, &walked))
    {
    case GL_VIEW_ABSENT:
      return g_steal_pointer (&entries);
    case GL_VIEW_UNKNOWN:
      return NULL;
    case GL_VIEW_FILE:
      break;
    }
  /* top first: a name shows from the top layer that has it (a whiteout:
   * from none) */
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
          unsigned char type = e->d_type;
          GlViewEntry *entry;

          if (g_str_equal (e->d_name, ".") || g_str_equal (e->d_name, "..")
              || !g_hash_table_add (seen, g_strdup (e->d_name)))
            continue;
          /* (a whiteout is a character device: other kinds need no look) */
          if (type == DT_CHR || type == DT_UNKNOWN)
            {
              if (fstatat (dirfd (d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
                type = DT_UNKNOWN;
              else if (gl_overlay_is_whiteout (&st))
                continue;
              else
                type = IFTODT (st.st_mode);
            }
          entry = g_new0 (GlViewEntry, 1);
          entry->name = g_strdup (e->d_name);
          entry->layer = i;
          entry->type = type;
          g_ptr_array_add (entries, entry);
        }
      closedir (d);
    }
  if (dir_rel != NULL)
    *dir_rel = g_steal_pointer (&walked);
  return g_steal_pointer (&entries);
}

GHashTable *
gl_view_dir_names_full (const char * const *layers, gsize n_layers, const char *rel, GlViewFlags flags)
{
  g_autoptr(GPtrArray) entries = gl_view_dir_entries (layers, n_layers, rel, flags, NULL);
  GHashTable *names;

  if (entries == NULL)
    return NULL;
  names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < entries->len; i++)
    {
      GlViewEntry *entry = entries->pdata[i];

      g_hash_table_add (names, g_steal_pointer (&entry->name));
    }
  return names;
}

GHashTable *
gl_view_dir_names (const char * const *layers, gsize n_layers, const char *rel)
{
  return gl_view_dir_names_full (layers, n_layers, rel, GL_VIEW_NO_FLAGS);
}
