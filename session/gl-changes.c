/* gl-changes.c: what a user's layer of a sandbox holds, and purging it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-changes.h"

#include <errno.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "gl-fsutil.h"

void
gl_change_free (GlChange *change)
{
  if (change == NULL)
    return;
  g_free (change->layer);
  g_free (change->path);
  g_free (change);
}

const char *
gl_change_kind_to_string (GlChangeKind kind)
{
  switch (kind)
    {
    case GL_CHANGE_ADDED:
      return "added";
    case GL_CHANGE_MODIFIED:
      return "modified";
    case GL_CHANGE_DELETED:
      return "deleted";
    case GL_CHANGE_REPLACED:
      return "replaced";
    default:
      g_assert_not_reached ();
    }
}

GStrv
gl_changes_layers (const char *home, uid_t uid)
{
  g_autoptr(GStrvBuilder) b = g_strv_builder_new ();
  g_autofree char *run_user = g_strdup_printf ("/run/user/%u", (unsigned) uid);

  /* Same table as the launcher's (launcher/glimpse-launch.c). */
  g_strv_builder_add_many (b, "home", home, "tmp", "/tmp", "var-tmp", "/var/tmp",
                           "run-user", run_user, "dev-shm", "/dev/shm", "media", "/media",
                           "run-media", "/run/media", "mnt", "/mnt", NULL);
  return g_strv_builder_end (b);
}

static gboolean
is_opaque (const char *path)
{
  char value[4] = { 0 };
  ssize_t n = lgetxattr (path, "user.overlay.opaque", value, sizeof value - 1);

  if (n < 0)
    n = lgetxattr (path, "trusted.overlay.opaque", value, sizeof value - 1);
  return n > 0 && value[0] == 'y';
}

/* Is @inside (an absolute path) at or below @filter? */
static gboolean
path_under (const char *inside, const char *filter)
{
  gsize n;

  if (filter == NULL)
    return TRUE;
  n = strlen (filter);
  while (n > 1 && filter[n - 1] == '/')
    n--;
  return strncmp (inside, filter, n) == 0 && (inside[n] == '\0' || inside[n] == '/' || n == 1);
}

/* Does the subtree at @inside contain @filter (so it must be walked)? */
static gboolean
may_contain (const char *inside, const char *filter)
{
  return filter == NULL || path_under (filter, inside) || path_under (inside, filter);
}

static void
walk (const char *upper, const char *rel, const char *layer, const char *host_dir,
      const char *host_root, const char *filter, GPtrArray *out)
{
  g_autofree char *dir = g_build_filename (upper, rel, NULL);
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *child_rel = g_build_filename (rel, name, NULL);
      g_autofree char *child = g_build_filename (upper, child_rel, NULL);
      g_autofree char *inside = g_build_filename (host_dir, child_rel, NULL);
      g_autofree char *on_host = g_build_filename (host_root, inside, NULL);
      struct stat st, host_st;
      gboolean on_host_exists;
      GlChange *c;

      if (lstat (child, &st) != 0 || !may_contain (inside, filter))
        continue;
      on_host_exists = lstat (on_host, &host_st) == 0;

      if (path_under (inside, filter))
        {
          c = g_new0 (GlChange, 1);
          c->layer = g_strdup (layer);
          c->path = g_strdup (inside);
          c->is_dir = S_ISDIR (st.st_mode);
          if (gl_overlay_is_whiteout (&st))
            c->kind = GL_CHANGE_DELETED;
          else if (S_ISDIR (st.st_mode) && on_host_exists && is_opaque (child))
            c->kind = GL_CHANGE_REPLACED;
          else if (on_host_exists)
            c->kind = GL_CHANGE_MODIFIED;
          else
            c->kind = GL_CHANGE_ADDED;

          /* A directory that only holds changes further down is not itself a change. */
          if (!(c->kind == GL_CHANGE_MODIFIED && c->is_dir && S_ISDIR (host_st.st_mode) &&
                st.st_mode == host_st.st_mode && st.st_uid == host_st.st_uid))
            g_ptr_array_add (out, c);
          else
            gl_change_free (c);
        }
      if (S_ISDIR (st.st_mode))
        walk (upper, child_rel, layer, host_dir, host_root, filter, out);
    }
}

static gint
compare_changes (gconstpointer a, gconstpointer b)
{
  const GlChange *ca = *(const GlChange * const *) a;
  const GlChange *cb = *(const GlChange * const *) b;

  return g_strcmp0 (ca->path, cb->path);
}

GPtrArray *
gl_changes_list (const char *user_dir, const char *home, uid_t uid,
                 const char *host_root, const char *filter, GError **error)
{
  g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func ((GDestroyNotify) gl_change_free);
  g_auto(GStrv) layers = gl_changes_layers (home, uid);

  if (filter != NULL && !g_path_is_absolute (filter))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "“%s” is not an absolute path", filter);
      return NULL;
    }
  if (!g_file_test (user_dir, G_FILE_TEST_IS_DIR))
    return g_steal_pointer (&out);  /* never launched: no changes */

  for (guint i = 0; layers[i] != NULL; i += 2)
    {
      g_autofree char *upper = g_build_filename (user_dir, layers[i], "upper", NULL);

      if (!may_contain (layers[i + 1], filter))
        continue;
      if (access (upper, R_OK | X_OK) != 0 && errno == EACCES)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                       "Cannot read %s: %s; a user's layer is readable by that user and root only",
                       upper, g_strerror (EACCES));
          return NULL;
        }
      walk (upper, "", layers[i], layers[i + 1], host_root, filter, out);
    }
  g_ptr_array_sort (out, compare_changes);
  return g_steal_pointer (&out);
}

gboolean
gl_changes_purge (const char *user_dir, const char *home, uid_t uid,
                  const char *filter, GCancellable *cancellable, GError **error)
{
  g_auto(GStrv) layers = gl_changes_layers (home, uid);

  if (filter != NULL && !g_path_is_absolute (filter))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "“%s” is not an absolute path", filter);
      return FALSE;
    }

  for (guint i = 0; layers[i] != NULL; i += 2)
    {
      g_autofree char *layer = g_build_filename (user_dir, layers[i], NULL);
      g_autofree char *upper = g_build_filename (layer, "upper", NULL);
      g_autofree char *work = g_build_filename (layer, "work", NULL);

      if (filter == NULL || path_under (layers[i + 1], filter))
        {
          /* The whole layer: the launcher makes it anew. */
          if (!gl_rm_rf (layer, cancellable, error))
            return FALSE;
        }
      else if (path_under (filter, layers[i + 1]))
        {
          const char *rel = filter + strlen (layers[i + 1]);
          g_autofree char *target = g_build_filename (upper, rel, NULL);

          if (!gl_rm_rf (target, cancellable, error))
            return FALSE;
          /* overlayfs' scratch space is only in use while mounted */
          if (!gl_rm_rf (work, cancellable, error))
            return FALSE;
        }
    }
  /* All of it: the mount points the launcher made for you in a layer of
   * their own (users/<uid>/mountpoints, made anew at the next launch) go
   * too, with whatever was done to them (a link put there, an opaque mark
   * over a base that has changed since) */
  if (filter == NULL)
    {
      g_autofree char *mountpoints = g_build_filename (user_dir, "mountpoints", NULL);

      if (!gl_rm_rf (mountpoints, cancellable, error))
        return FALSE;
    }
  return TRUE;
}
