/* gl-export.c: desktop entries, icons, menu and directory files, manifest
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "gl-app-folders.h"
#include "gl-exec.h"
#include "gl-export-private.h"
#include "gl-export.h"
#include "gl-fm-actions.h"
#include "gl-icon.h"
#include "gl-manifest.h"

#define DE_GROUP G_KEY_FILE_DESKTOP_GROUP

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
  g_strfreev (s->launchers);
  g_strfreev (s->added);
  g_strfreev (s->removed);
  g_free (s);
}

GlExportSource *
gl_export_source_new_for_sandbox (GlSandbox *sandbox, const char *host_root,
                                  const char *config_home, GError **error)
{
  g_autoptr(GlExportSource) s = gl_export_source_new (sandbox->id, sandbox->name);
  g_autofree char *upper = gl_sandbox_get_system_upper (sandbox);
  g_autofree char *rootfs = gl_sandbox_get_rootfs (sandbox);
  const char *base = rootfs != NULL ? rootfs : host_root;
  g_autoptr(GStrvBuilder) apps = g_strv_builder_new ();

  g_strv_builder_add (apps, upper);
  if (rootfs != NULL)
    g_strv_builder_add (apps, rootfs);
  s->data_roots = g_strv_builder_end (apps);
  g_clear_pointer (&apps, g_strv_builder_unref);

  {
    g_autofree char *upper_apps = g_build_filename (upper, "usr/share/applications", NULL);
    g_autofree char *rootfs_apps = rootfs != NULL ? g_build_filename (rootfs, "usr/share/applications", NULL) : NULL;

    apps = g_strv_builder_new ();
    g_strv_builder_add (apps, upper_apps);
    if (rootfs_apps != NULL)
      g_strv_builder_add (apps, rootfs_apps);
    else
      s->exclude_apps_dir = g_build_filename (host_root, "usr/share/applications", NULL);
    s->app_dirs = g_strv_builder_end (apps);
  }

  /* icons of a host-based sandbox may come from the host's own tree */
  if (rootfs == NULL)
    {
      g_autoptr(GStrvBuilder) roots = g_strv_builder_new ();
      g_strv_builder_add (roots, upper);
      g_strv_builder_add (roots, base);
      g_strfreev (s->data_roots);
      s->data_roots = g_strv_builder_end (roots);
    }

  if (sandbox->launchers != NULL && sandbox->launchers[0] != NULL)
    s->launchers = g_strdupv (sandbox->launchers);
  if (!gl_export_user_launchers_load (config_home, sandbox->id, &s->added, &s->removed, error))
    return NULL;
  return g_steal_pointer (&s);
}

void
gl_app_free (GlApp *app)
{
  if (app == NULL)
    return;
  g_free (app->desktop_id);
  g_free (app->path);
  g_free (app->name);
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

static gboolean
dir_is_opaque (const char *dir)
{
  static const char * const names[] = { "trusted.overlay.opaque", "user.overlay.opaque", NULL };

  for (gsize i = 0; names[i] != NULL; i++)
    {
      char value[2] = { 0, 0 };

      if (getxattr (dir, names[i], value, 1) == 1 && value[0] == 'y')
        return TRUE;
    }
  return FALSE;
}

/* id -> path (NULL for a whiteout) */
static void
scan_apps_dir (const char *dir, const char *prefix, GHashTable *seen, GHashTable *layer)
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

      if (lstat (path, &st) != 0)
        continue;
      if (S_ISCHR (st.st_mode) && st.st_rdev == 0)
        {
          if (!g_hash_table_contains (seen, id) && !g_hash_table_contains (layer, id))
            g_hash_table_insert (layer, g_steal_pointer (&id), NULL);
          continue;
        }
      if (S_ISDIR (st.st_mode))
        {
          g_autofree char *sub = g_strconcat (id, "-", NULL);
          scan_apps_dir (path, sub, seen, layer);
          continue;
        }
      if (!g_str_has_suffix (name, ".desktop"))
        continue;
      if (!desktop_id_is_sane (id))
        {
          g_debug ("Skipping %s: its name cannot be exported", path);
          continue;
        }
      if (!g_hash_table_contains (seen, id) && !g_hash_table_contains (layer, id))
        g_hash_table_insert (layer, g_steal_pointer (&id), g_steal_pointer (&path));
    }
}

static gint
compare_apps (gconstpointer a, gconstpointer b)
{
  const GlApp *x = *(GlApp * const *) a;
  const GlApp *y = *(GlApp * const *) b;

  return strcmp (x->desktop_id, y->desktop_id);
}

static gboolean
strv_has (GStrv v, const char *s)
{
  return v != NULL && g_strv_contains ((const char * const *) v, s);
}

GPtrArray *
gl_export_source_list_apps (GlExportSource *source, GError **error)
{
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr(GPtrArray) apps = g_ptr_array_new_with_free_func ((GDestroyNotify) gl_app_free);
  GHashTableIter iter;
  gpointer key, value;

  for (gsize i = 0; source->app_dirs != NULL && source->app_dirs[i] != NULL; i++)
    {
      g_autoptr(GHashTable) layer = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);

      scan_apps_dir (source->app_dirs[i], "", seen, layer);
      g_hash_table_iter_init (&iter, layer);
      while (g_hash_table_iter_next (&iter, &key, &value))
        {
          g_hash_table_iter_steal (&iter);
          g_hash_table_insert (seen, key, value);
        }
      if (dir_is_opaque (source->app_dirs[i]))
        break;
    }

  g_hash_table_iter_init (&iter, seen);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      g_autoptr(GKeyFile) kf = g_key_file_new ();
      g_autoptr(GError) local_error = NULL;
      g_autoptr(GlApp) app = NULL;
      g_autofree char *type = NULL;
      g_autofree char *exec = NULL;

      if (value == NULL)
        continue;
      app = g_new0 (GlApp, 1);
      app->desktop_id = g_strdup (key);
      app->path = g_strdup (value);
      if (!g_key_file_load_from_file (kf, app->path, G_KEY_FILE_NONE, &local_error))
        {
          g_debug ("Skipping %s: %s", app->path, local_error->message);
          continue;
        }
      type = g_key_file_get_string (kf, DE_GROUP, "Type", NULL);
      exec = g_key_file_get_string (kf, DE_GROUP, "Exec", NULL);
      app->name = g_key_file_get_locale_string (kf, DE_GROUP, "Name", NULL, NULL);
      app->runnable = g_strcmp0 (type, "Application") == 0 && exec != NULL && *exec != '\0' &&
                      !g_key_file_get_boolean (kf, DE_GROUP, "Hidden", NULL);
      app->visible = app->runnable && !g_key_file_get_boolean (kf, DE_GROUP, "NoDisplay", NULL);
      if (source->exclude_apps_dir != NULL)
        {
          g_autofree char *rel = g_strdup (app->desktop_id);
          g_autofree char *host = g_build_filename (source->exclude_apps_dir, rel, NULL);
          app->on_host = g_file_test (host, G_FILE_TEST_EXISTS);
        }
      if (source->launchers != NULL)
        app->exported = strv_has (source->launchers, app->desktop_id);
      else
        app->exported = app->visible && !app->on_host;
      if (strv_has (source->added, app->desktop_id))
        app->exported = TRUE;
      if (strv_has (source->removed, app->desktop_id))
        app->exported = FALSE;
      if (!app->runnable)
        app->exported = FALSE;
      g_ptr_array_add (apps, g_steal_pointer (&app));
    }
  g_ptr_array_sort (apps, compare_apps);
  return g_steal_pointer (&apps);
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
  if (g_mkdir_with_parents (dir, 0755) != 0)
    {
      int saved = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "Cannot create %s: %s", dir, g_strerror (saved));
      return FALSE;
    }
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
  g_mkdir_with_parents (dir, 0755);
  return g_key_file_save_to_file (kf, path, error);
}

/* ---------------------------------------------------------- entry rules */

char *
gl_export_desktop_file_name (const char *sandbox_id, const char *desktop_id)
{
  return g_strdup_printf ("glimpse-%s-%s", sandbox_id, desktop_id);
}

static gboolean
key_is (const char *key, const char *base)
{
  gsize n = strlen (base);

  return strncmp (key, base, n) == 0 && (key[n] == '\0' || key[n] == '[');
}

/* Keys that would make the host run, activate or find the application
 * outside the sandbox, or rename it behind our back:
 *  - DBusActivatable: the host would activate the name on the host's bus
 *    (starting the host's copy, or failing) instead of running Exec;
 *  - Implements: the host may pick the app for D-Bus interfaces it claims;
 *  - X-DBUS-*: KDE's D-Bus start-up of the same kind;
 *  - X-Flatpak*, X-SnapInstanceName: shells treat such entries as a
 *    Flatpak/Snap app of the host;
 *  - X-GNOME-Gettext-Domain, X-Ubuntu-Gettext-Domain: a patched GLib would
 *    translate Name again from the host's catalogues, losing the suffix. */
static gboolean
key_is_dropped (const char *key)
{
  return key_is (key, "DBusActivatable") || key_is (key, "Implements") ||
         g_str_has_prefix (key, "X-DBUS-") || g_str_has_prefix (key, "X-Flatpak") ||
         key_is (key, "X-SnapInstanceName") || key_is (key, "X-GNOME-Gettext-Domain") ||
         key_is (key, "X-Ubuntu-Gettext-Domain") || key_is (key, "X-KDE-DBus-ServiceName");
}

static char *
sanitize_name (const char *s)
{
  g_autoptr(GString) out = g_string_new (NULL);

  for (const char *p = s; *p != '\0'; p++)
    g_string_append_c (out, (g_ascii_isalnum (*p) || strchr ("._-+", *p) != NULL) ? *p : '_');
  return g_string_free (g_steal_pointer (&out), FALSE);
}

GKeyFile *
gl_export_rewrite_entry (GKeyFile *entry, const char *desktop_id,
                         const char *sandbox_id, const char *sandbox_name,
                         const char *launcher, const char *icon_name,
                         GError **error)
{
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  g_autofree char *data = NULL;
  gsize len = 0;
  g_autofree char *type = NULL;
  g_autofree char *exec = NULL;
  g_autofree char *wrapped = NULL;
  g_autofree char *categories = NULL;
  g_autofree char *suffix = g_strdup_printf (" (%s)", sandbox_name);
  g_auto(GStrv) keys = NULL;
  g_auto(GStrv) groups = NULL;
  g_autoptr(GPtrArray) dropped_actions = g_ptr_array_new_with_free_func (g_free);

  data = g_key_file_to_data (entry, &len, NULL);
  if (!g_key_file_load_from_data (kf, data, len,
                                  G_KEY_FILE_KEEP_COMMENTS | G_KEY_FILE_KEEP_TRANSLATIONS, error))
    return NULL;

  type = g_key_file_get_string (kf, DE_GROUP, "Type", NULL);
  if (g_strcmp0 (type, "Application") != 0 || g_key_file_get_boolean (kf, DE_GROUP, "Hidden", NULL))
    {
      g_set_error (error, GL_EXPORT_ERROR, GL_EXPORT_ERROR_NOT_APPLICATION,
                   "%s is not an application entry (Type=%s%s), nothing to export",
                   desktop_id, type != NULL ? type : "", type != NULL && g_key_file_get_boolean (kf, DE_GROUP, "Hidden", NULL) ? ", Hidden" : "");
      return NULL;
    }
  exec = g_key_file_get_string (kf, DE_GROUP, "Exec", NULL);
  if (exec == NULL || *exec == '\0')
    {
      g_set_error (error, GL_EXPORT_ERROR, GL_EXPORT_ERROR_NO_EXEC,
                   "%s has no Exec line (D-Bus activation only), so the launcher cannot start it",
                   desktop_id);
      return NULL;
    }

  /* Exec: the wrapper, original arguments and field codes intact */
  wrapped = gl_exec_wrap (launcher, sandbox_id, exec, error);
  if (wrapped == NULL)
    {
      g_prefix_error (error, "Cannot export %s: ", desktop_id);
      return NULL;
    }
  g_key_file_set_string (kf, DE_GROUP, "Exec", wrapped);

  /* every other group with an Exec: desktop actions, Unity shortcut groups */
  groups = g_key_file_get_groups (kf, NULL);
  for (gsize i = 0; groups[i] != NULL; i++)
    {
      g_autofree char *aexec = NULL;
      g_autofree char *awrapped = NULL;
      g_autoptr(GError) local_error = NULL;

      if (strcmp (groups[i], DE_GROUP) == 0)
        continue;
      aexec = g_key_file_get_string (kf, groups[i], "Exec", NULL);
      if (aexec != NULL && *aexec != '\0')
        awrapped = gl_exec_wrap (launcher, sandbox_id, aexec, &local_error);
      if (awrapped != NULL)
        {
          g_key_file_set_string (kf, groups[i], "Exec", awrapped);
          continue;
        }
      /* an action without a usable Exec would be activated over D-Bus on
       * the host: drop it */
      g_debug ("%s: dropping group [%s]: %s", desktop_id, groups[i],
               local_error != NULL ? local_error->message : "no Exec");
      g_key_file_remove_group (kf, groups[i], NULL);
      if (g_str_has_prefix (groups[i], "Desktop Action "))
        g_ptr_array_add (dropped_actions, g_strdup (groups[i] + strlen ("Desktop Action ")));
    }
  if (dropped_actions->len > 0)
    {
      g_auto(GStrv) actions = g_key_file_get_string_list (kf, DE_GROUP, "Actions", NULL, NULL);
      g_autoptr(GPtrArray) kept = g_ptr_array_new ();

      for (gsize i = 0; actions != NULL && actions[i] != NULL; i++)
        if (!g_ptr_array_find_with_equal_func (dropped_actions, actions[i], g_str_equal, NULL))
          g_ptr_array_add (kept, actions[i]);
      if (kept->len == 0)
        g_key_file_remove_key (kf, DE_GROUP, "Actions", NULL);
      else
        g_key_file_set_string_list (kf, DE_GROUP, "Actions",
                                    (const char * const *) kept->pdata, kept->len);
    }

  keys = g_key_file_get_keys (kf, DE_GROUP, NULL, NULL);
  for (gsize i = 0; keys[i] != NULL; i++)
    {
      /* the sandbox's name on every translation of the names */
      if (key_is (keys[i], "Name") || key_is (keys[i], "GenericName") ||
          key_is (keys[i], "X-GNOME-FullName"))
        {
          g_autofree char *v = g_key_file_get_string (kf, DE_GROUP, keys[i], NULL);
          g_autofree char *nv = g_strconcat (v != NULL ? v : "", suffix, NULL);

          g_key_file_set_string (kf, DE_GROUP, keys[i], nv);
        }
      else if (key_is_dropped (keys[i]))
        g_key_file_remove_key (kf, DE_GROUP, keys[i], NULL);
    }

  /* Categories: only ours, so the entry shows in Glimpse › sandbox and
   * nowhere else; the original kept for reference */
  categories = g_key_file_get_string (kf, DE_GROUP, "Categories", NULL);
  if (categories != NULL)
    g_key_file_set_string (kf, DE_GROUP, "X-Glimpse-Categories", categories);
  {
    g_autofree char *ours = g_strdup_printf ("X-Glimpse;X-Glimpse-%s;", sandbox_id);
    g_key_file_set_string (kf, DE_GROUP, "Categories", ours);
  }
  g_key_file_set_string (kf, DE_GROUP, "X-Glimpse-Sandbox", sandbox_id);
  g_key_file_set_string (kf, DE_GROUP, "X-Glimpse-Desktop-Id", desktop_id);

  /* the window's class still matches this launcher although the file is
   * renamed: docks match by StartupWMClass, else by desktop file name */
  if (!g_key_file_has_key (kf, DE_GROUP, "StartupWMClass", NULL))
    {
      g_autofree char *wmclass = g_strndup (desktop_id, strlen (desktop_id) - strlen (".desktop"));
      g_key_file_set_string (kf, DE_GROUP, "StartupWMClass", wmclass);
    }

  /* TryExec names a program in the sandbox, which the host does not have:
   * it would hide the entry.  Point it at the launcher instead, so the entry
   * disappears only if Glimpse itself is uninstalled. */
  if (g_key_file_has_key (kf, DE_GROUP, "TryExec", NULL))
    {
      g_autofree char *tryexec = g_key_file_get_string (kf, DE_GROUP, "TryExec", NULL);
      g_key_file_set_string (kf, DE_GROUP, "X-Glimpse-TryExec", tryexec != NULL ? tryexec : "");
      g_key_file_set_string (kf, DE_GROUP, "TryExec", launcher);
    }

  /* Path is a directory in the sandbox's view; the host would chdir there
   * before running the launcher and fail when the host lacks it.  The
   * launcher keeps the working directory. */
  if (g_key_file_has_key (kf, DE_GROUP, "Path", NULL))
    {
      g_autofree char *path = g_key_file_get_string (kf, DE_GROUP, "Path", NULL);
      g_key_file_set_string (kf, DE_GROUP, "X-Glimpse-Path", path != NULL ? path : "");
      g_key_file_remove_key (kf, DE_GROUP, "Path", NULL);
    }

  /* Icon: the exported copy; an unresolved themed name stays (the host's
   * theme may have it), an unresolved path goes (it points outside) */
  {
    g_autofree char *icon = g_key_file_get_string (kf, DE_GROUP, "Icon", NULL);

    if (icon_name != NULL)
      g_key_file_set_string (kf, DE_GROUP, "Icon", icon_name);
    else if (icon != NULL && icon[0] == '/')
      g_key_file_remove_key (kf, DE_GROUP, "Icon", NULL);
  }
  /* MimeType, OnlyShowIn, NotShowIn, Terminal, Keywords, Actions: kept */
  return g_steal_pointer (&kf);
}

/* --------------------------------------------------------------- context */

GlExportContext *
gl_export_context_new (void)
{
  GlExportContext *ctx = g_new0 (GlExportContext, 1);
  const char *launcher = g_getenv ("GLIMPSE_LAUNCHER");
  const char *bin = g_getenv ("GLIMPSE_BIN");

  ctx->data_home = g_strdup (g_get_user_data_dir ());
  ctx->config_home = g_strdup (g_get_user_config_dir ());
  ctx->launcher = g_strdup (launcher != NULL && *launcher != '\0' ? launcher : GL_LAUNCHER_PATH);
  ctx->glimpse = (bin != NULL && *bin != '\0') ? g_strdup (bin) : g_build_filename (GL_BINDIR, "glimpse", NULL);
  ctx->run_tools = TRUE;
  ctx->app_folders = TRUE;
  ctx->file_managers = TRUE;
  return ctx;
}

void
gl_export_context_free (GlExportContext *ctx)
{
  if (ctx == NULL)
    return;
  g_free (ctx->data_home);
  g_free (ctx->config_home);
  g_free (ctx->launcher);
  g_free (ctx->glimpse);
  g_free (ctx);
}

char *
gl_export_manifest_path (GlExportContext *ctx)
{
  return g_build_filename (ctx->data_home, "glimpse", "export-manifest", NULL);
}

/* ------------------------------------------------------------------ plan */

static void
plan_file_free (GlPlanFile *f)
{
  g_free (f->path);
  g_free (f->sandbox);
  g_bytes_unref (f->contents);
  g_free (f);
}

GHashTable *
gl_plan_new (void)
{
  return g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) plan_file_free);
}

void
gl_plan_add_bytes (GHashTable *plan, const char *path, const char *sandbox, GBytes *bytes, int mode)
{
  GlPlanFile *f = g_new0 (GlPlanFile, 1);

  f->path = g_strdup (path);
  f->sandbox = g_strdup (sandbox);
  f->contents = g_bytes_ref (bytes);
  f->mode = mode;
  g_hash_table_replace (plan, f->path, f);
}

void
gl_plan_add (GHashTable *plan, const char *path, const char *sandbox,
             const char *data, gssize len, int mode)
{
  g_autoptr(GBytes) bytes = g_bytes_new (data, len < 0 ? strlen (data) : (gsize) len);
  gl_plan_add_bytes (plan, path, sandbox, bytes, mode);
}

static char *
directory_file (const char *name, const char *icon)
{
  g_autoptr(GKeyFile) kf = g_key_file_new ();

  g_key_file_set_comment (kf, NULL, NULL, " Written by glimpse export; it is replaced on the next export.", NULL);
  g_key_file_set_string (kf, DE_GROUP, "Version", "1.0");
  g_key_file_set_string (kf, DE_GROUP, "Type", "Directory");
  g_key_file_set_string (kf, DE_GROUP, "Name", name);
  g_key_file_set_string (kf, DE_GROUP, "Icon", icon);
  return g_key_file_to_data (kf, NULL, NULL);
}

static char *
menu_file (const GlExportedSandbox *sandboxes, guint n)
{
  g_autoptr(GString) out = g_string_new (
    "<!DOCTYPE Menu PUBLIC \"-//freedesktop//DTD Menu 1.0//EN\"\n"
    " \"http://www.freedesktop.org/standards/menu-spec/menu-1.0.dtd\">\n"
    "<!-- Written by glimpse export; it is replaced on the next export. -->\n"
    "<Menu>\n"
    "  <Name>Applications</Name>\n"
    "  <Menu>\n"
    "    <Name>Glimpse</Name>\n"
    "    <Directory>glimpse.directory</Directory>\n");

  for (guint i = 0; i < n; i++)
    {
      g_autofree char *id = g_markup_escape_text (sandboxes[i].id, -1);

      g_string_append_printf (out,
                              "    <Menu>\n"
                              "      <Name>glimpse-%s</Name>\n"
                              "      <Directory>glimpse-%s.directory</Directory>\n"
                              "      <Include>\n"
                              "        <Category>X-Glimpse-%s</Category>\n"
                              "      </Include>\n"
                              "    </Menu>\n", id, id, id);
    }
  g_string_append (out, "  </Menu>\n</Menu>\n");
  return g_string_free (g_steal_pointer (&out), FALSE);
}

typedef struct {
  char *id;
  char *name;
  GPtrArray *apps;   /* exported desktop file names */
} SandboxResult;

static void
sandbox_result_free (SandboxResult *r)
{
  g_free (r->id);
  g_free (r->name);
  g_ptr_array_unref (r->apps);
  g_free (r);
}

static void
add_warning (GPtrArray *warnings, GlExportStats *stats, GError *error)
{
  g_debug ("%s", error->message);
  stats->skipped++;
  if (warnings != NULL)
    g_ptr_array_add (warnings, g_error_copy (error));
}

/* The icon of one entry: its files are planned, the exported name returned
 * (NULL: none found). */
static char *
plan_icon (GHashTable *plan, GlExportContext *ctx, GlExportSource *source,
           GlIconIndex *index, const char *icon)
{
  g_autoptr(GPtrArray) files = gl_icon_index_resolve (index, icon);
  g_autofree char *base = NULL;
  g_autofree char *clean = NULL;
  g_autofree char *exported = NULL;

  if (files->len == 0)
    return NULL;
  base = g_path_get_basename (icon);
  for (const char *e = ".png\0.svg\0.xpm\0"; *e != '\0'; e += strlen (e) + 1)
    if (g_str_has_suffix (base, e) && strlen (base) > strlen (e))
      base[strlen (base) - strlen (e)] = '\0';
  clean = sanitize_name (base);
  exported = g_strdup_printf ("glimpse-%s-%s", source->id, clean);

  for (guint i = 0; i < files->len; i++)
    {
      GlIconFile *f = files->pdata[i];
      g_autofree char *file = g_strdup_printf ("%s.%s", exported, f->ext);
      g_autofree char *dest = f->size_dir != NULL
        ? g_build_filename (ctx->data_home, "icons", "hicolor", f->size_dir, "apps", file, NULL)
        : g_build_filename (ctx->data_home, "icons", file, NULL);
      g_autoptr(GMappedFile) mf = g_mapped_file_new (f->path, FALSE, NULL);
      g_autoptr(GBytes) bytes = NULL;

      if (mf == NULL)
        continue;
      bytes = g_mapped_file_get_bytes (mf);
      gl_plan_add_bytes (plan, dest, source->id, bytes, 0644);
    }
  return g_steal_pointer (&exported);
}

static SandboxResult *
plan_sandbox (GHashTable *plan, GlExportContext *ctx, GlExportSource *source,
              GlExportStats *stats, GPtrArray *warnings)
{
  SandboxResult *r = g_new0 (SandboxResult, 1);
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GPtrArray) apps = gl_export_source_list_apps (source, &local_error);
  g_autofree char *apps_dir = g_build_filename (ctx->data_home, "applications", NULL);
  const char *no_roots[] = { NULL };
  g_autoptr(GlIconIndex) icons = gl_icon_index_new (source->data_roots != NULL
                                                    ? (const char * const *) source->data_roots : no_roots);

  r->id = g_strdup (source->id);
  r->name = g_strdup (source->name);
  r->apps = g_ptr_array_new_with_free_func (g_free);

  for (guint i = 0; apps != NULL && i < apps->len; i++)
    {
      GlApp *app = apps->pdata[i];
      g_autoptr(GKeyFile) kf = g_key_file_new ();
      g_autoptr(GKeyFile) out = NULL;
      g_autoptr(GError) error = NULL;
      g_autofree char *icon = NULL;
      g_autofree char *icon_name = NULL;
      g_autofree char *file = NULL;
      g_autofree char *dest = NULL;
      g_autofree char *data = NULL;
      gsize len;

      if (!app->exported)
        continue;
      if (!g_key_file_load_from_file (kf, app->path,
                                      G_KEY_FILE_KEEP_COMMENTS | G_KEY_FILE_KEEP_TRANSLATIONS, &error))
        {
          g_prefix_error (&error, "Not exporting %s of sandbox %s: ", app->path, source->id);
          add_warning (warnings, stats, error);
          continue;
        }
      icon = g_key_file_get_string (kf, DE_GROUP, "Icon", NULL);
      if (icon != NULL)
        icon_name = plan_icon (plan, ctx, source, icons, icon);
      out = gl_export_rewrite_entry (kf, app->desktop_id, source->id, source->name,
                                     ctx->launcher, icon_name, &error);
      if (out == NULL)
        {
          g_prefix_error (&error, "Not exporting %s of sandbox %s: ", app->desktop_id, source->id);
          add_warning (warnings, stats, error);
          continue;
        }
      file = gl_export_desktop_file_name (source->id, app->desktop_id);
      dest = g_build_filename (apps_dir, file, NULL);
      data = g_key_file_to_data (out, &len, NULL);
      gl_plan_add (plan, dest, source->id, data, len, 0644);
      g_ptr_array_add (r->apps, g_steal_pointer (&file));
    }

  {
    g_autofree char *dir_name = g_strdup_printf ("glimpse-%s.directory", source->id);
    g_autofree char *dest = g_build_filename (ctx->data_home, "desktop-directories", dir_name, NULL);
    g_autofree char *contents = directory_file (source->name, "folder");

    gl_plan_add (plan, dest, source->id, contents, -1, 0644);
  }
  if (ctx->file_managers)
    gl_fm_actions_plan (plan, ctx, source->id, source->name);
  return r;
}

/* ----------------------------------------------------------------- apply */

static gboolean
ensure_dir (GlManifest *m, const char *dir, GError **error)
{
  g_autofree char *parent = NULL;

  if (g_file_test (dir, G_FILE_TEST_IS_DIR))
    return TRUE;
  parent = g_path_get_dirname (dir);
  if (strcmp (parent, dir) != 0 && !ensure_dir (m, parent, error))
    return FALSE;
  if (mkdir (dir, 0755) != 0 && errno != EEXIST)
    {
      int saved = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "Cannot create the directory %s: %s", dir, g_strerror (saved));
      return FALSE;
    }
  g_hash_table_add (m->dirs, g_strdup (dir));
  return TRUE;
}

static gboolean
write_file (GlManifest *m, const char *path, GBytes *contents, int mode, GError **error)
{
  g_autofree char *dir = g_path_get_dirname (path);
  gsize len;
  const char *data = g_bytes_get_data (contents, &len);

  if (!ensure_dir (m, dir, error))
    return FALSE;
  if (!g_file_set_contents_full (path, data, len, G_FILE_SET_CONTENTS_CONSISTENT, mode, error))
    return FALSE;
  /* the umask may have masked the mode */
  if (chmod (path, mode) != 0)
    {
      int saved = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "Cannot set the mode of %s: %s", path, g_strerror (saved));
      return FALSE;
    }
  return TRUE;
}

static gboolean
run_tool (const char *tool, const char * const *args)
{
  g_autofree char *prog = g_find_program_in_path (tool);
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;
  int status = 0;

  if (prog == NULL)
    {
      g_debug ("%s is not installed, skipping it", tool);
      return FALSE;
    }
  g_ptr_array_add (argv, prog);
  for (gsize i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (char *) args[i]);
  g_ptr_array_add (argv, NULL);
  if (!g_spawn_sync (NULL, (char **) argv->pdata, NULL,
                     G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL,
                     NULL, NULL, NULL, NULL, &status, &error) ||
      !g_spawn_check_wait_status (status, &error))
    {
      g_debug ("%s failed: %s", tool, error->message);
      return FALSE;
    }
  return TRUE;
}

static gint
compare_length_desc (gconstpointer a, gconstpointer b)
{
  return (int) strlen (b) - (int) strlen (a);
}

static void
sync_thunar (GlExportContext *ctx, GlManifest *m, const GlExportedSandbox *sandboxes,
             guint n, GlExportStats *stats, GPtrArray *warnings)
{
  g_autofree char *path = gl_fm_thunar_path (ctx);
  g_autofree char *existing = NULL;
  g_autofree char *merged = NULL;
  g_autoptr(GError) error = NULL;
  const char *created = g_hash_table_lookup (m->merged, path);
  gboolean we_created;

  if (!g_file_get_contents (path, &existing, NULL, NULL))
    {
      g_clear_pointer (&existing, g_free);
      if (n == 0)
        {
          g_hash_table_remove (m->merged, path);
          return;
        }
      /* Thunar reads only the first uca.xml: start from the system's, as
       * Thunar itself does, so its default actions stay */
      existing = gl_fm_thunar_system_default ();
      created = "1";
    }
  we_created = g_strcmp0 (created, "1") == 0;

  merged = gl_fm_thunar_merge (path, existing, sandboxes, n, ctx->glimpse, &error);
  if (merged == NULL)
    {
      add_warning (warnings, stats, error);
      return;
    }

  if (n == 0 && we_created)
    {
      g_autofree char *def = gl_fm_thunar_system_default ();
      g_autofree char *empty = gl_fm_thunar_merge (path, def, NULL, 0, ctx->glimpse, NULL);

      if (g_strcmp0 (merged, empty) == 0)
        {
          if (unlink (path) == 0 || errno == ENOENT)
            stats->removed++;
          g_hash_table_remove (m->merged, path);
          return;
        }
    }

  if (g_strcmp0 (merged, existing) != 0 || !g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_autoptr(GBytes) bytes = g_bytes_new (merged, strlen (merged));

      if (!write_file (m, path, bytes, 0644, &error))
        {
          add_warning (warnings, stats, error);
          return;
        }
      stats->written++;
    }
  else
    stats->unchanged++;

  if (n == 0)
    g_hash_table_remove (m->merged, path);
  else
    g_hash_table_insert (m->merged, g_strdup (path), g_strdup (we_created ? "1" : "0"));
}

static gboolean
export_sync (GlExportContext *ctx, GPtrArray *sources, gboolean complete,
             const char * const *remove_ids,
             GlExportStats *stats_out, GPtrArray *warnings, GError **error)
{
  g_autofree char *manifest_path = gl_export_manifest_path (ctx);
  g_autoptr(GlManifest) m = gl_manifest_load (manifest_path, error);
  g_autoptr(GHashTable) plan = gl_plan_new ();
  g_autoptr(GPtrArray) results = g_ptr_array_new_with_free_func ((GDestroyNotify) sandbox_result_free);
  g_autoptr(GHashTable) source_ids = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GArray) final = g_array_new (FALSE, TRUE, sizeof (GlExportedSandbox));
  g_autoptr(GPtrArray) gone = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GHashTable) write_set = g_hash_table_new (g_str_hash, g_str_equal);
  g_autofree char *apps_dir = g_build_filename (ctx->data_home, "applications", NULL);
  g_autofree char *mimecache = g_build_filename (apps_dir, "mimeinfo.cache", NULL);
  g_autofree char *icons_dir = g_build_filename (ctx->data_home, "icons", "hicolor", NULL);
  g_autofree char *thunar_path = gl_fm_thunar_path (ctx);
  GlExportStats stats = { 0, };
  gboolean desktop_changed = FALSE, icons_changed = FALSE;
  GHashTableIter iter;
  gpointer key, value;
  GList *sorted;

  if (m == NULL)
    return FALSE;

  /* what is wanted */
  for (guint i = 0; i < sources->len; i++)
    {
      GlExportSource *source = sources->pdata[i];

      g_hash_table_add (source_ids, source->id);
      g_ptr_array_add (results, plan_sandbox (plan, ctx, source, &stats, warnings));
    }

  sorted = g_list_sort (g_hash_table_get_keys (m->sandboxes), (GCompareFunc) strcmp);
  for (GList *l = sorted; l != NULL; l = l->next)
    if (!g_hash_table_contains (source_ids, l->data))
      {
        GlManifestSandbox *s = g_hash_table_lookup (m->sandboxes, l->data);
        if (complete || (remove_ids != NULL && g_strv_contains (remove_ids, s->id)))
          g_ptr_array_add (gone, g_strdup (s->id));
        else
          {
            GlExportedSandbox e = { s->id, s->name, (const char * const *) s->apps };
            g_array_append_val (final, e);
          }
      }
  g_list_free (sorted);
  for (guint i = 0; i < results->len; i++)
    {
      SandboxResult *r = results->pdata[i];
      GlExportedSandbox e = { r->id, r->name, NULL };

      g_ptr_array_add (r->apps, NULL);
      e.apps = (const char * const *) r->apps->pdata;
      g_array_append_val (final, e);
    }
  {
    /* shared files, sorted by id so the output is stable */
    GlExportedSandbox *fs = (GlExportedSandbox *) (void *) final->data;
    for (guint i = 1; i < final->len; i++)
      for (guint j = i; j > 0 && strcmp (fs[j - 1].id, fs[j].id) > 0; j--)
        {
          GlExportedSandbox t = fs[j];
          fs[j] = fs[j - 1];
          fs[j - 1] = t;
        }
    if (final->len > 0)
      {
        g_autofree char *menu = menu_file (fs, final->len);
        g_autofree char *menu_path = g_build_filename (ctx->config_home, "menus", "applications-merged",
                                                       "glimpse.menu", NULL);
        g_autofree char *dir = directory_file ("Glimpse", "folder");
        g_autofree char *dir_path = g_build_filename (ctx->data_home, "desktop-directories",
                                                      "glimpse.directory", NULL);
        gl_plan_add (plan, menu_path, "", menu, -1, 0644);
        gl_plan_add (plan, dir_path, "", dir, -1, 0644);
      }
  }

  /* classify: unchanged, to write, or in the way (a file Glimpse did not
   * write, or one the user changed since: it is theirs now) */
  g_hash_table_iter_init (&iter, plan);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      GlPlanFile *f = value;
      g_autofree char *want = gl_checksum_bytes (f->contents);
      g_autofree char *have = gl_checksum_file (f->path);
      GlManifestFile *mf = g_hash_table_lookup (m->files, f->path);

      if (have != NULL && strcmp (have, want) == 0)
        {
          struct stat st;
          /* adopt it (a crash between writing and recording), fix the mode */
          if (stat (f->path, &st) == 0 && (int) (st.st_mode & 07777) != f->mode)
            chmod (f->path, f->mode);
          stats.unchanged++;
          continue;
        }
      if (have != NULL && (mf == NULL || !gl_manifest_file_matches (mf, have)))
        {
          g_autoptr(GError) conflict = g_error_new (GL_EXPORT_ERROR, GL_EXPORT_ERROR_CONFLICT,
                                                     "Not overwriting %s: Glimpse did not write it (or it was changed since); "
                                                     "move it away to let Glimpse export it", f->path);
          add_warning (warnings, &stats, conflict);
          g_hash_table_iter_remove (&iter);
          continue;
        }
      g_hash_table_add (write_set, f->path);
      /* intent: both the old and the new contents are ours while we write */
      gl_manifest_add_file (m, f->path, f->sandbox, want);
    }
  if (g_hash_table_size (write_set) > 0 && !gl_manifest_save (m, error))
    return FALSE;

  g_hash_table_iter_init (&iter, write_set);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    {
      GlPlanFile *f = g_hash_table_lookup (plan, key);
      g_autoptr(GError) werr = NULL;

      if (!write_file (m, f->path, f->contents, f->mode, &werr))
        {
          add_warning (warnings, &stats, werr);
          continue;
        }
      stats.written++;
      if (g_str_has_suffix (f->path, ".desktop") && g_str_has_prefix (f->path, apps_dir))
        desktop_changed = TRUE;
      if (g_str_has_prefix (f->path, icons_dir))
        icons_changed = TRUE;
    }

  /* remove what is no longer exported, if it is still what Glimpse wrote */
  g_hash_table_iter_init (&iter, m->files);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      GlManifestFile *mf = value;
      GlPlanFile *f = g_hash_table_lookup (plan, mf->path);
      g_autofree char *have = NULL;

      if (f != NULL)
        {
          /* keep only the current checksum */
          g_autofree char *want = gl_checksum_bytes (f->contents);
          g_strfreev (mf->checksums);
          mf->checksums = g_new0 (char *, 2);
          mf->checksums[0] = g_steal_pointer (&want);
          g_free (mf->sandbox);
          mf->sandbox = g_strdup (f->sandbox);
          continue;
        }
      if (!complete && *mf->sandbox != '\0' && !g_hash_table_contains (source_ids, mf->sandbox) &&
          !(remove_ids != NULL && g_strv_contains (remove_ids, mf->sandbox)))
        continue;   /* another sandbox's, not being synced */
      have = gl_checksum_file (mf->path);
      if (have == NULL)
        {
          g_hash_table_iter_remove (&iter);
          continue;
        }
      if (!gl_manifest_file_matches (mf, have))
        {
          g_debug ("Leaving %s: changed since Glimpse wrote it", mf->path);
          g_hash_table_iter_remove (&iter);
          continue;
        }
      if (unlink (mf->path) != 0 && errno != ENOENT)
        {
          int saved = errno;
          g_autoptr(GError) rerr = g_error_new (G_IO_ERROR, g_io_error_from_errno (saved),
                                                "Cannot remove %s: %s", mf->path, g_strerror (saved));
          add_warning (warnings, &stats, rerr);
          continue;
        }
      stats.removed++;
      if (g_str_has_suffix (mf->path, ".desktop") && g_str_has_prefix (mf->path, apps_dir))
        desktop_changed = TRUE;
      if (g_str_has_prefix (mf->path, icons_dir))
        icons_changed = TRUE;
      g_hash_table_iter_remove (&iter);
    }

  /* sandboxes in the manifest */
  for (guint i = 0; i < gone->len; i++)
    g_hash_table_remove (m->sandboxes, gone->pdata[i]);
  for (guint i = 0; i < results->len; i++)
    {
      SandboxResult *r = results->pdata[i];
      gl_manifest_set_sandbox (m, r->id, r->name, (const char * const *) r->apps->pdata);
    }

  if (ctx->file_managers || g_hash_table_contains (m->merged, thunar_path))
    sync_thunar (ctx, m, ctx->file_managers ? (GlExportedSandbox *) (void *) final->data : NULL,
                 ctx->file_managers ? final->len : 0, &stats, warnings);

  if (ctx->app_folders && gl_app_folders_available ())
    {
      g_ptr_array_add (gone, NULL);
      gl_app_folders_sync ((GlExportedSandbox *) (void *) final->data, final->len,
                           (const char * const *) gone->pdata);
      g_ptr_array_remove_index (gone, gone->len - 1);
    }

  /* the tools' caches */
  if (desktop_changed && ctx->run_tools)
    {
      gboolean had_cache = g_file_test (mimecache, G_FILE_TEST_EXISTS);
      gboolean ours_left = FALSE;

      g_hash_table_iter_init (&iter, m->files);
      while (!ours_left && g_hash_table_iter_next (&iter, &key, NULL))
        if (g_str_has_prefix (key, apps_dir) && g_str_has_suffix (key, ".desktop"))
          ours_left = TRUE;

      /* the cache exists because of Glimpse: with the last entry it goes
       * (GIO reads the entries of a directory without one), else refresh */
      if (!ours_left && g_strcmp0 (g_hash_table_lookup (m->merged, mimecache), "1") == 0)
        {
          if (unlink (mimecache) == 0)
            stats.removed++;
          g_hash_table_remove (m->merged, mimecache);
        }
      else if (run_tool ("update-desktop-database", (const char *[]) { "-q", apps_dir, NULL }) &&
               !had_cache && ours_left)
        g_hash_table_insert (m->merged, g_strdup (mimecache), g_strdup ("1"));
    }
  if (icons_changed && ctx->run_tools)
    {
      /* refresh a cache that exists; never create one: a cache in the
       * user's hicolor would hide icons others add there later */
      g_autofree char *cache = g_build_filename (icons_dir, "icon-theme.cache", NULL);
      if (g_file_test (cache, G_FILE_TEST_EXISTS))
        run_tool ("gtk-update-icon-cache", (const char *[]) { "-q", "-t", "-f", icons_dir, NULL });
    }

  /* directories Glimpse created and emptied again, deepest first */
  sorted = g_list_sort (g_hash_table_get_keys (m->dirs), compare_length_desc);
  for (GList *l = sorted; l != NULL; l = l->next)
    {
      const char *dir = l->data;

      if (rmdir (dir) == 0 || errno == ENOENT)
        g_hash_table_remove (m->dirs, dir);
    }
  g_list_free (sorted);

  if (g_hash_table_size (m->files) == 0 && g_hash_table_size (m->sandboxes) == 0 &&
      g_hash_table_size (m->merged) == 0 && g_hash_table_size (m->dirs) == 0)
    {
      g_autofree char *mdir = g_path_get_dirname (manifest_path);
      unlink (manifest_path);
      rmdir (mdir);
    }
  else if (!gl_manifest_save (m, error))
    return FALSE;

  if (stats_out != NULL)
    *stats_out = stats;
  return TRUE;
}

gboolean
gl_export_sync (GlExportContext *ctx, GPtrArray *sources, gboolean complete,
                GlExportStats *stats_out, GPtrArray *warnings, GError **error)
{
  return export_sync (ctx, sources, complete, NULL, stats_out, warnings, error);
}

gboolean
gl_export_unexport (GlExportContext *ctx, const char *id, GError **error)
{
  g_autoptr(GPtrArray) none = g_ptr_array_new ();
  const char *remove_ids[] = { id, NULL };

  return export_sync (ctx, none, FALSE, remove_ids, NULL, NULL, error);
}

gboolean
gl_export_remove_sandbox (const char *id, GError **error)
{
  g_autoptr(GlExportContext) ctx = NULL;

  if (geteuid () == 0)
    {
      g_debug ("Running as root: the exports of %s are removed by each user's next sync", id);
      return TRUE;
    }
  ctx = gl_export_context_new ();
  return gl_export_unexport (ctx, id, error);
}

gboolean
gl_export_sync_store (GlExportContext *ctx, const char *store_dir, const char *host_root,
                      GlExportStats *stats, GPtrArray *warnings, GError **error)
{
  g_autoptr(GPtrArray) errors = g_ptr_array_new_with_free_func ((GDestroyNotify) g_error_free);
  g_autoptr(GlStore) store = gl_store_new (store_dir);
  g_autoptr(GPtrArray) all = gl_store_list (store, errors, error);
  g_autoptr(GPtrArray) sources = g_ptr_array_new_with_free_func ((GDestroyNotify) gl_export_source_free);

  if (all == NULL)
    return FALSE;
  for (guint i = 0; i < errors->len; i++)
    if (warnings != NULL)
      g_ptr_array_add (warnings, g_error_copy (errors->pdata[i]));
  for (guint i = 0; i < all->len; i++)
    {
      GlSandbox *sb = all->pdata[i];
      g_autoptr(GError) local_error = NULL;
      GlExportSource *source;

      if (gl_export_user_disabled (ctx->config_home, sb->id))
        continue;
      source = gl_export_source_new_for_sandbox (sb, host_root, ctx->config_home, &local_error);
      if (source == NULL)
        {
          /* a broken choice file must not take the other sandboxes down */
          if (warnings != NULL)
            g_ptr_array_add (warnings, g_steal_pointer (&local_error));
          continue;
        }
      g_ptr_array_add (sources, source);
    }
  return gl_export_sync (ctx, sources, TRUE, stats, warnings, error);
}
