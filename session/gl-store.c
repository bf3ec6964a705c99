/* gl-store.c: the sandbox store, a directory of sandboxes
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-store.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "gl-fsutil.h"
#include "gl-paths.h"

G_DEFINE_QUARK (gl-store-error-quark, gl_store_error)

struct _GlStore {
  GObject parent_instance;
  char *dir;
};

G_DEFINE_TYPE (GlStore, gl_store, G_TYPE_OBJECT)

static void
gl_store_finalize (GObject *object)
{
  GlStore *self = GL_STORE (object);

  g_free (self->dir);
  G_OBJECT_CLASS (gl_store_parent_class)->finalize (object);
}

static void
gl_store_class_init (GlStoreClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = gl_store_finalize;
}

static void
gl_store_init (GlStore *self)
{
}

GlStore *
gl_store_new (const char *dir)
{
  GlStore *self;

  g_return_val_if_fail (dir != NULL, NULL);
  self = g_object_new (GL_TYPE_STORE, NULL);
  self->dir = g_strdup (dir);
  return self;
}

GlStore *
gl_store_new_default (void)
{
  return gl_store_new (gl_paths_store_dir ());
}

const char *
gl_store_get_dir (GlStore *self)
{
  g_return_val_if_fail (GL_IS_STORE (self), NULL);
  return self->dir;
}

gboolean
gl_store_ensure (GlStore *self, GError **error)
{
  return gl_mkdir_with_parents (self->dir, 0755, error);
}

char *
gl_store_allocate_id (GlStore *self, const char *base, GError **error)
{
  if (!gl_sandbox_id_validate (base, error))
    return NULL;

  for (guint n = 1; n < 10000; n++)
    {
      g_autofree char *id = n == 1 ? g_strdup (base) : g_strdup_printf ("%s-%u", base, n);
      g_autofree char *path = NULL;

      if (!gl_sandbox_id_is_valid (id))
        break;
      path = g_build_filename (self->dir, id, NULL);
      if (!g_file_test (path, G_FILE_TEST_EXISTS) &&
          !g_file_test (path, G_FILE_TEST_IS_SYMLINK))
        return g_steal_pointer (&id);
    }

  g_set_error (error, GL_STORE_ERROR, GL_STORE_ERROR_EXISTS,
               "No free sandbox name based on “%s” in %s; choose one with --name", base, self->dir);
  return NULL;
}

GlSandbox *
gl_store_load (GlStore *self, const char *id, GError **error)
{
  return gl_sandbox_load (self->dir, id, error);
}

static gint
compare_sandboxes (gconstpointer a, gconstpointer b)
{
  const GlSandbox *sa = *(const GlSandbox * const *) a;
  const GlSandbox *sb = *(const GlSandbox * const *) b;

  return g_strcmp0 (sa->id, sb->id);
}

GPtrArray *
gl_store_list (GlStore *self, GPtrArray *errors, GError **error)
{
  g_autoptr(GPtrArray) result = g_ptr_array_new_with_free_func ((GDestroyNotify) gl_sandbox_free);
  g_autoptr(GDir) dir = NULL;
  g_autoptr(GError) local_error = NULL;
  const char *name;

  if (geteuid () == 0)
    gl_store_clean_abandoned (self, NULL);

  dir = g_dir_open (self->dir, 0, &local_error);
  if (dir == NULL)
    {
      if (g_error_matches (local_error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        return g_steal_pointer (&result);  /* no store yet: no sandboxes */
      g_set_error (error, G_IO_ERROR, g_io_error_from_file_error (local_error->code),
                   "Cannot list sandboxes in %s: %s", self->dir, local_error->message);
      return NULL;
    }

  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autoptr(GError) sandbox_error = NULL;
      GlSandbox *sandbox;

      /* Work in progress (.creating-…, .removing-…) starts with '.' */
      if (!gl_sandbox_id_is_valid (name))
        continue;
      sandbox = gl_sandbox_load (self->dir, name, &sandbox_error);
      if (sandbox == NULL)
        {
          g_debug ("Skipping %s: %s", name, sandbox_error->message);
          if (errors != NULL)
            g_ptr_array_add (errors, g_steal_pointer (&sandbox_error));
          continue;
        }
      g_ptr_array_add (result, sandbox);
    }

  g_ptr_array_sort (result, compare_sandboxes);
  return g_steal_pointer (&result);
}

/* Opens the directory @path and takes an exclusive flock on it without
 * waiting; then checks that @path still names the directory locked (it
 * may have been removed or renamed meanwhile).  -1 with errno otherwise
 * (EWOULDBLOCK: someone holds it; ESTALE: it moved). */
static int
lock_dir (const char *path)
{
  struct stat by_fd, by_path;
  int fd = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  int saved;

  if (fd < 0)
    return -1;
  if (flock (fd, LOCK_EX | LOCK_NB) != 0)
    saved = errno;
  else if (fstat (fd, &by_fd) != 0 || lstat (path, &by_path) != 0)
    saved = errno;
  else if (by_fd.st_dev != by_path.st_dev || by_fd.st_ino != by_path.st_ino)
    saved = ESTALE;
  else
    return fd;
  close (fd);
  errno = saved;
  return -1;
}

int
gl_store_make_work_dir (GlStore *self, const char *prefix, char **path, GError **error)
{
  g_autofree char *name = g_strdup_printf (".%s-XXXXXX", prefix);
  int saved = 0;

  /* A cleaner may take a new directory in the instant between mkdtemp and
   * flock, taking it for abandoned; then make another one. */
  for (guint attempt = 0; attempt < 10; attempt++)
    {
      g_autofree char *tmp = g_build_filename (self->dir, name, NULL);
      int fd;

      if (g_mkdtemp_full (tmp, 0700) == NULL)
        {
          saved = errno;
          break;
        }
      fd = lock_dir (tmp);
      if (fd >= 0)
        {
          *path = g_steal_pointer (&tmp);
          return fd;
        }
      saved = errno;
      g_debug ("Cannot lock %s (%s); trying another", tmp, g_strerror (saved));
    }
  g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
               "Cannot create a work directory in %s: %s", self->dir, g_strerror (saved));
  return -1;
}

int
gl_store_lock_work_dir (GlStore *self, const char *path, GError **error)
{
  int fd = lock_dir (path);

  if (fd < 0)
    {
      int saved = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "Cannot lock %s: %s", path,
                   saved == EWOULDBLOCK ? "another operation works on it; try again later"
                                        : g_strerror (saved));
    }
  return fd;
}

guint
gl_store_clean_abandoned (GlStore *self, GCancellable *cancellable)
{
  g_autoptr(GDir) dir = g_dir_open (self->dir, 0, NULL);
  guint removed = 0;
  const char *name;

  if (dir == NULL)
    return 0;
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = NULL;
      g_autoptr(GError) error = NULL;
      int fd;

      if (!g_str_has_prefix (name, ".creating-") && !g_str_has_prefix (name, ".removing-"))
        continue;
      path = g_build_filename (self->dir, name, NULL);
      fd = lock_dir (path);
      if (fd < 0)
        {
          g_debug ("Leaving %s: %s", path, errno == EWOULDBLOCK ? "in use" : g_strerror (errno));
          continue;
        }
      if (gl_rm_rf (path, cancellable, &error))
        {
          g_debug ("Removed %s, left by an interrupted operation", path);
          removed++;
        }
      else
        g_debug ("Cannot remove %s: %s", path, error->message);
      close (fd);
    }
  return removed;
}
