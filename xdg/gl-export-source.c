/* gl-export-source.c: where a sandbox's applications come from — the
 * applications directories of its layers, and the choice of which are
 * exported (the admin's list, the user's additions and removals)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gl-export-private.h"
#include "gl-overlay.h"
#include "gl-tree.h"

G_DEFINE_QUARK (gl-export-error-quark, gl_export_error)

/* ---------------------------------------------------------------- sources */

GlExportSource *
gl_export_source_new (const char *id, const char *name)
{
  GlExportSource *s = g_new0 (GlExportSource, 1);

  s->id = g_strdup (id);
  s->name = g_strdup (name != NULL ? name : id);
  return s;
}

void
gl_export_source_free (GlExportSource *s)
{
  if (s == NULL)
    return;
  g_free (s->id);
  g_free (s->name);
  g_strfreev (s->app_dirs);
  g_free (s->exclude_apps_dir);
  g_strfreev (s->data_roots);
  g_free (s->system_apps_dir);
  g_strfreev (s->launchers);
  g_strfreev (s->admin_added);
  g_strfreev (s->admin_hidden);
  g_strfreev (s->added);
  g_strfreev (s->removed);
  g_strfreev (s->watched_roots);
  g_strfreev (s->changed_dirs);
  g_free (s);
}


void
gl_app_free (GlApp *app)
{
  if (app == NULL)
    return;
  g_free (app->desktop_id);
  g_free (app->path);
  g_free (app->name);
  g_free (app->icon);
  if (app->entry != NULL)
    g_key_file_unref (app->entry);
  g_free (app);
}

/* Desktop ids become file names in the user's directories and lines of the
 * manifest: printable, no white space, no slashes. */
static gboolean
desktop_id_is_sane (const char *id)
{
  if (!g_str_has_suffix (id, ".desktop") || !g_utf8_validate (id, -1, NULL) || id[0] == '.')
    return FALSE;
  for (const char *p = id; *p != '\0'; p++)
    if ((guchar) *p <= 0x20 || *p == 0x7f || *p == '/' || *p == '\\')
      return FALSE;
  return TRUE;
}

/* What the layer of the applications directory @dir shows there, as
 * overlayfs reads the layer: walked from the layer's root (one of @source's
 * data_roots) a component at a time without following links. */
typedef enum {
  LAYER_DIR,        /* a directory: scanned; the layers below show too */
  LAYER_DIR_OPAQUE, /* a directory that is, or is under, an opaque one: below hidden */
  LAYER_NONE,       /* nothing: the layers below show */
  LAYER_STOP,       /* a whiteout, file or link at it or above: nothing of it or below */
} LayerApps;

static LayerApps
layer_apps (GlExportSource *source, const char *dir)
{
  const char *root = NULL;
  const char *rel = NULL;
  g_auto(GStrv) parts = NULL;
  LayerApps what = LAYER_DIR;
  int dfd;

  for (gsize i = 0; rel == NULL && source->data_roots != NULL && source->data_roots[i] != NULL; i++)
    {
      gsize n = strlen (source->data_roots[i]);

      if (strncmp (dir, source->data_roots[i], n) == 0 && dir[n] == '/')
        root = source->data_roots[i], rel = dir + n + 1;
    }
  if (rel == NULL)
    {
      root = dir;   /* (under no root: the directory's own mark only) */
      rel = "";
    }
  dfd = open (root, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
  if (dfd < 0)
    return LAYER_NONE;
  if (rel[0] == '\0' && gl_overlay_dir_is_opaque (dfd))
    what = LAYER_DIR_OPAQUE;
  parts = g_strsplit (rel, "/", -1);
  for (guint i = 0; parts[i] != NULL; i++)
    {
      struct stat st;
      int sub;

      if (parts[i][0] == '\0' || g_str_equal (parts[i], "."))
        continue;
      if (fstatat (dfd, parts[i], &st, AT_SYMLINK_NOFOLLOW) != 0)
        {
          what = what == LAYER_DIR_OPAQUE ? LAYER_STOP : LAYER_NONE;
          break;
        }
      if (!S_ISDIR (st.st_mode))
        {
          what = LAYER_STOP;
          break;
        }
      sub = openat (dfd, parts[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
      close (dfd);
      dfd = sub;
      if (dfd < 0)
        return LAYER_NONE;
      if (gl_overlay_dir_is_opaque (dfd))
        what = LAYER_DIR_OPAQUE;
    }
  close (dfd);
  return what;
}

/* One scan of a sandbox's applications directories. */
typedef struct {
  GHashTable *seen;     /* id -> path (NULL for a whiteout), of the layers above */
  GHashTable *layer;    /* the same, of the layer being scanned */
  guint entries;        /* desktop files taken so far */
  gboolean capped;
  GlExportCache *cache; /* the run's stats (gl_export_cache_lstat), or NULL */
  GHashTable *shadowed; /* ids a layer above has too (set), or NULL: not wanted */
} Scan;

/* id -> path (NULL for a whiteout) */
static void
scan_apps_dir (Scan *scan, const char *dir, const char *prefix, guint depth)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  if (d == NULL)
    return;
  while ((name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);
      g_autofree char *id = g_strconcat (prefix, name, NULL);
      struct stat st;

      if (!gl_export_cache_lstat (scan->cache, path, &st))
        continue;
      if (gl_overlay_is_whiteout (&st))
        {
          if (!g_hash_table_contains (scan->seen, id) && !g_hash_table_contains (scan->layer, id))
            g_hash_table_insert (scan->layer, g_steal_pointer (&id), NULL);
          continue;
        }
      if (S_ISDIR (st.st_mode))
        {
          g_autofree char *sub = g_strconcat (id, "-", NULL);
          if (depth < 8)
            scan_apps_dir (scan, path, sub, depth + 1);
          continue;
        }
      if (!g_str_has_suffix (name, ".desktop"))
        continue;
      if (!desktop_id_is_sane (id))
        {
          g_debug ("Skipping %s: its name cannot be exported", path);
          continue;
        }
      if (g_hash_table_contains (scan->seen, id))
        {
          if (scan->shadowed != NULL)
            g_hash_table_add (scan->shadowed, g_steal_pointer (&id));
          continue;
        }
      if (g_hash_table_contains (scan->layer, id))
        continue;
      if (scan->entries >= GL_EXPORT_MAX_APPS)
        {
          scan->capped = TRUE;
          return;
        }
      scan->entries++;
      g_hash_table_insert (scan->layer, g_steal_pointer (&id), g_steal_pointer (&path));
    }
}

static gint
compare_apps (gconstpointer a, gconstpointer b)
{
  const GlApp *x = *(GlApp * const *) a;
  const GlApp *y = *(GlApp * const *) b;

  return strcmp (x->desktop_id, y->desktop_id);
}

/* The tree @path lies in: the data root it starts with (a sandbox's entries
 * are read inside its tree, under usr/ or opt/), else its own directory. */
static const char *
root_of (GlExportSource *source, const char *path, const char * const **under)
{
  for (gsize i = 0; source->data_roots != NULL && source->data_roots[i] != NULL; i++)
    {
      const char *root = source->data_roots[i];
      gsize n = strlen (root);

      if (strncmp (path, root, n) == 0 && (path[n] == '/' || (n > 0 && root[n - 1] == '/')))
        {
          *under = gl_tree_data_prefixes;
          return root;
        }
    }
  *under = NULL;
  return NULL;
}

/* Reads one entry inside its tree: never a FIFO, a device, a link out of
 * the tree or a private file, never more than GL_TREE_MAX_ENTRY bytes. */
GKeyFile *
gl_export_source_load_entry (GlExportSource *source, const char *path, GError **error)
{
  const char * const *under = NULL;
  const char *root = root_of (source, path, &under);
  g_autofree char *dir = root == NULL ? g_path_get_dirname (path) : NULL;
  g_autofree char *base = root == NULL ? g_path_get_basename (path) : NULL;
  g_autoptr(GBytes) bytes = root != NULL
    ? gl_tree_read (root, path + strlen (root), under, GL_TREE_MAX_ENTRY, NULL, error)
    : gl_tree_read (dir, base, NULL, GL_TREE_MAX_ENTRY, NULL, error);
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  gsize len = 0;
  const char *data;

  if (bytes == NULL)
    return NULL;
  data = g_bytes_get_data (bytes, &len);
  if (memchr (data, '\0', len) != NULL)
    {
      g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_PARSE,
                   "%s holds a NUL byte, it is not a desktop entry", path);
      return NULL;
    }
  if (!g_key_file_load_from_data (kf, data, len, G_KEY_FILE_KEEP_TRANSLATIONS, error))
    {
      g_prefix_error (error, "%s: ", path);
      return NULL;
    }
  return g_steal_pointer (&kf);
}

static void
scan_warning (GPtrArray *warnings, GError *error)
{
  g_debug ("%s", error->message);
  if (warnings != NULL)
    g_ptr_array_add (warnings, g_error_copy (error));
}

/* What the scan needs of an entry: read, or known from its memo in @old
 * (a copy goes to @fresh) */
static gboolean
scan_entry (GlExportSource *source, GlApp *app, GlAppMemos *old, GlAppMemos *fresh,
            GlExportCache *cache, GError **error)
{
  struct stat st;
  GlAppMemo memo;
  gboolean memoize = FALSE;
  g_autofree char *type = NULL;
  g_autofree char *exec = NULL;
  GKeyFile *kf;

  /* a link may lead elsewhere without its own stat changing: read */
  if (fresh != NULL && gl_export_cache_lstat (cache, app->path, &st) && S_ISREG (st.st_mode))
    {
      GlAppMemo *known = gl_app_memos_lookup (old, app->path);

      if (known != NULL && gl_app_memo_matches (known, &st))
        {
          gl_app_memos_add (fresh, app->path, known);
          app->name = g_strdup (known->name);
          app->icon = g_strdup (known->icon);
          app->runnable = known->runnable;
          app->visible = known->visible;
          return TRUE;
        }
      memoize = gl_app_memo_init (cache, &memo, &st);
    }

  app->entry = gl_export_source_load_entry (source, app->path, error);
  if (app->entry == NULL)
    return FALSE;
  kf = app->entry;
  type = g_key_file_get_string (kf, DE_GROUP, "Type", NULL);
  exec = g_key_file_get_string (kf, DE_GROUP, "Exec", NULL);
  app->name = g_key_file_get_locale_string (kf, DE_GROUP, "Name", NULL, NULL);
  app->icon = g_key_file_get_string (kf, DE_GROUP, "Icon", NULL);
  app->runnable = g_strcmp0 (type, "Application") == 0 && exec != NULL && *exec != '\0' &&
                  !g_key_file_get_boolean (kf, DE_GROUP, "Hidden", NULL);
  app->visible = app->runnable && !g_key_file_get_boolean (kf, DE_GROUP, "NoDisplay", NULL);
  if (memoize)
    {
      memo.name = app->name;
      memo.icon = app->icon;
      memo.runnable = app->runnable;
      memo.visible = app->visible;
      gl_app_memos_add (fresh, app->path, &memo);
    }
  /* the export's plan reads it again, one entry at a time: not every
   * entry of the sandbox held at once until then */
  if (fresh != NULL)
    g_clear_pointer (&app->entry, g_key_file_unref);
  return TRUE;
}

GPtrArray *
gl_export_source_scan (GlExportSource *source, GPtrArray *warnings)
{
  return gl_export_source_scan_memo (source, NULL, warnings);
}

GPtrArray *
gl_export_source_scan_memo (GlExportSource *source, GlExportCache *cache, GPtrArray *warnings)
{
  GlAppMemos *old = cache != NULL ? gl_export_cache_apps (cache, source->id) : NULL;
  GlAppMemos *fresh = cache != NULL ? gl_app_memos_new () : NULL;
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr(GPtrArray) apps = g_ptr_array_new_with_free_func ((GDestroyNotify) gl_app_free);
  /* with a default list: which of the system layer's apps the base ships */
  g_autoptr(GHashTable) shadowed = source->launchers != NULL && source->system_apps_dir != NULL
    ? g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL) : NULL;
  Scan scan = { seen, NULL, 0, FALSE, cache, shadowed };
  GHashTableIter iter;
  gpointer key, value;

  for (gsize i = 0; source->app_dirs != NULL && source->app_dirs[i] != NULL; i++)
    {
      g_autoptr(GHashTable) layer = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
      LayerApps what = layer_apps (source, source->app_dirs[i]);

      if (what == LAYER_STOP)
        break;
      scan.layer = layer;
      if (what != LAYER_NONE)
        scan_apps_dir (&scan, source->app_dirs[i], "", 0);
      g_hash_table_iter_init (&iter, layer);
      while (g_hash_table_iter_next (&iter, &key, &value))
        {
          g_hash_table_iter_steal (&iter);
          g_hash_table_insert (seen, key, value);
        }
      if (scan.capped || what == LAYER_DIR_OPAQUE)
        break;
    }
  if (scan.capped)
    {
      g_autoptr(GError) capped = g_error_new (GL_EXPORT_ERROR, GL_EXPORT_ERROR_TOO_MANY,
                                              "Sandbox %s has more than %u applications: only %u of them are "
                                              "considered for the menu (the rest would flood the desktop's "
                                              "menus and MIME lookups)",
                                              source->id, GL_EXPORT_MAX_APPS, GL_EXPORT_MAX_APPS);
      scan_warning (warnings, capped);
    }

  g_hash_table_iter_init (&iter, seen);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      g_autoptr(GError) local_error = NULL;
      g_autoptr(GlApp) app = NULL;

      if (value == NULL)
        continue;
      app = g_new0 (GlApp, 1);
      app->desktop_id = g_strdup (key);
      app->path = g_strdup (value);
      if (!scan_entry (source, app, old, fresh, cache, &local_error))
        {
          g_prefix_error (&local_error, "Skipping %s of sandbox %s: ", app->desktop_id, source->id);
          scan_warning (warnings, local_error);
          continue;
        }
      if (source->exclude_apps_dir != NULL)
        {
          g_autofree char *host = g_build_filename (source->exclude_apps_dir, app->desktop_id, NULL);
          app->on_host = g_file_test (host, G_FILE_TEST_EXISTS);
        }
      if (source->system_apps_dir != NULL)
        {
          gsize n = strlen (source->system_apps_dir);
          app->own = strncmp (app->path, source->system_apps_dir, n) == 0 && app->path[n] == '/';
        }
      /* With no default list, every visible app.  A host sandbox has only
       * what its own packages installed or upgraded (its system layer); a
       * newer version of an app the host has too is the point of it, so it
       * is exported as well, its name carrying the sandbox's.
       * With a default list (the profile's Launchers=, a choice among the
       * base's apps): the apps listed, and every visible one the sandbox's
       * packages brought that the base does not ship - what they were
       * installed for.  An upgrade of an app the base ships (or the host
       * has) follows the list, so "glimpse update" does not fill the menu. */
      if (source->launchers != NULL)
        app->exported = (app->own && app->visible && !app->on_host &&
                         !g_hash_table_contains (shadowed, app->desktop_id)) ||
                        g_strv_contains ((const char * const *) source->launchers, app->desktop_id);
      else
        app->exported = app->visible;
      /* then the admin's choice, then the user's own */
      if (source->admin_added != NULL && g_strv_contains ((const char * const *) source->admin_added, app->desktop_id))
        app->exported = TRUE;
      if (source->admin_hidden != NULL && g_strv_contains ((const char * const *) source->admin_hidden, app->desktop_id))
        app->exported = FALSE;
      if (source->added != NULL && g_strv_contains ((const char * const *) source->added, app->desktop_id))
        app->exported = TRUE;
      if (source->removed != NULL && g_strv_contains ((const char * const *) source->removed, app->desktop_id))
        app->exported = FALSE;
      if (!app->runnable)
        app->exported = FALSE;
      g_ptr_array_add (apps, g_steal_pointer (&app));
    }
  g_ptr_array_sort (apps, compare_apps);
  /* the memos of entries gone go with the old table */
  if (cache != NULL)
    gl_export_cache_set_apps (cache, source->id, fresh);
  return g_steal_pointer (&apps);
}

GPtrArray *
gl_export_source_list_apps (GlExportSource *source, GError **error)
{
  return gl_export_source_scan (source, NULL);
}

/* ------------------------------------------------------ the user's choice */

char *
gl_export_user_launchers_path (const char *config_home, const char *id)
{
  g_autofree char *file = g_strconcat (id, ".conf", NULL);
  return g_build_filename (config_home, "glimpse", "launchers", file, NULL);
}

gboolean
gl_export_user_launchers_load (const char *config_home, const char *id,
                               GStrv *added, GStrv *removed, GError **error)
{
  g_autofree char *path = gl_export_user_launchers_path (config_home, id);
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  g_autoptr(GError) local_error = NULL;

  *added = NULL;
  *removed = NULL;
  if (!g_key_file_load_from_file (kf, path, G_KEY_FILE_NONE, &local_error))
    {
      if (g_error_matches (local_error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        return TRUE;
      g_set_error (error, GL_EXPORT_ERROR, GL_EXPORT_ERROR_FAILED,
                   "Cannot read your launcher choice %s: %s; fix or delete the file",
                   path, local_error->message);
      return FALSE;
    }
  *added = g_key_file_get_string_list (kf, "Launchers", "Added", NULL, NULL);
  *removed = g_key_file_get_string_list (kf, "Launchers", "Removed", NULL, NULL);
  return TRUE;
}

gboolean
gl_export_user_launchers_save (const char *config_home, const char *id,
                               const char * const *added, const char * const *removed,
                               GError **error)
{
  g_autofree char *path = gl_export_user_launchers_path (config_home, id);
  g_autofree char *dir = g_path_get_dirname (path);
  g_autoptr(GKeyFile) kf = g_key_file_new ();

  /* keep whatever else is in there (Disabled=) */
  g_key_file_load_from_file (kf, path, G_KEY_FILE_KEEP_COMMENTS, NULL);
  g_key_file_set_comment (kf, NULL, NULL,
                          " Your own choice of the applications of this sandbox shown in the menu\n"
                          " (glimpse add-launcher / remove-launcher).", NULL);
  g_key_file_set_string_list (kf, "Launchers", "Added", added != NULL ? added : (const char *[]) { NULL },
                              added != NULL ? g_strv_length ((GStrv) added) : 0);
  g_key_file_set_string_list (kf, "Launchers", "Removed", removed != NULL ? removed : (const char *[]) { NULL },
                              removed != NULL ? g_strv_length ((GStrv) removed) : 0);
  if (!gl_mkdir_with_parents (dir, 0755, error))
    return FALSE;
  return g_key_file_save_to_file (kf, path, error);
}

gboolean
gl_export_user_disabled (const char *config_home, const char *id)
{
  g_autofree char *path = gl_export_user_launchers_path (config_home, id);
  g_autoptr(GKeyFile) kf = g_key_file_new ();

  return g_key_file_load_from_file (kf, path, G_KEY_FILE_NONE, NULL) &&
         g_key_file_get_boolean (kf, "Launchers", "Disabled", NULL);
}

gboolean
gl_export_user_set_disabled (const char *config_home, const char *id, gboolean disabled, GError **error)
{
  g_autofree char *path = gl_export_user_launchers_path (config_home, id);
  g_autofree char *dir = g_path_get_dirname (path);
  g_autoptr(GKeyFile) kf = g_key_file_new ();

  if (!g_key_file_load_from_file (kf, path, G_KEY_FILE_KEEP_COMMENTS, NULL) && !disabled)
    return TRUE;
  if (!disabled && !g_key_file_has_key (kf, "Launchers", "Disabled", NULL))
    return TRUE;
  if (disabled)
    g_key_file_set_boolean (kf, "Launchers", "Disabled", TRUE);
  else
    g_key_file_remove_key (kf, "Launchers", "Disabled", NULL);
  if (!gl_mkdir_with_parents (dir, 0755, error))
    return FALSE;
  return g_key_file_save_to_file (kf, path, error);
}

