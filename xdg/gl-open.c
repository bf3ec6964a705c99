/* gl-open.c: "glimpse open": MIME defaults inside the sandbox tree
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include "gl-exec.h"
#include "gl-open.h"

static GlApp *
find_app (GPtrArray *apps, const char *desktop_id)
{
  for (guint i = 0; i < apps->len; i++)
    {
      GlApp *app = apps->pdata[i];
      if (app->runnable && strcmp (app->desktop_id, desktop_id) == 0)
        return app;
    }
  return NULL;
}

/* The first runnable app listed for @type in @group of @file. */
static char *
lookup_list (const char *file, const char *group, const char *type, GPtrArray *apps)
{
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  g_auto(GStrv) ids = NULL;

  if (!g_key_file_load_from_file (kf, file, G_KEY_FILE_NONE, NULL))
    return NULL;
  ids = g_key_file_get_string_list (kf, group, type, NULL, NULL);
  for (gsize i = 0; ids != NULL && ids[i] != NULL; i++)
    if (find_app (apps, ids[i]) != NULL)
      return g_strdup (ids[i]);
  return NULL;
}

static GStrv
app_mime_types (GlApp *app)
{
  g_autoptr(GKeyFile) kf = g_key_file_new ();

  if (!g_key_file_load_from_file (kf, app->path, G_KEY_FILE_NONE, NULL))
    return NULL;
  return g_key_file_get_string_list (kf, G_KEY_FILE_DESKTOP_GROUP, "MimeType", NULL, NULL);
}

char *
gl_open_find_app (GlExportSource *source, const char *user_config_dir, const char *content_type)
{
  g_autoptr(GPtrArray) apps = gl_export_source_list_apps (source, NULL);
  g_autoptr(GPtrArray) lists = g_ptr_array_new_with_free_func (g_free);
  static const char * const groups[] = { "Default Applications", "Added Associations", NULL };

  if (apps == NULL)
    return NULL;
  if (user_config_dir != NULL)
    g_ptr_array_add (lists, g_build_filename (user_config_dir, "mimeapps.list", NULL));
  for (gsize r = 0; source->data_roots != NULL && source->data_roots[r] != NULL; r++)
    {
      g_ptr_array_add (lists, g_build_filename (source->data_roots[r], "etc/xdg/mimeapps.list", NULL));
      g_ptr_array_add (lists, g_build_filename (source->data_roots[r], "usr/share/applications/mimeapps.list", NULL));
      g_ptr_array_add (lists, g_build_filename (source->data_roots[r], "usr/share/applications/defaults.list", NULL));
    }

  for (gsize g = 0; groups[g] != NULL; g++)
    for (guint i = 0; i < lists->len; i++)
      {
        char *id = lookup_list (lists->pdata[i], groups[g], content_type, apps);
        if (id != NULL)
          return id;
      }
  for (gsize d = 0; source->app_dirs != NULL && source->app_dirs[d] != NULL; d++)
    {
      g_autofree char *cache = g_build_filename (source->app_dirs[d], "mimeinfo.cache", NULL);
      char *id = lookup_list (cache, "MIME Cache", content_type, apps);
      if (id != NULL)
        return id;
    }

  /* the entries themselves: the exact type, then a parent type, exported
   * applications first */
  for (int pass = 0; pass < 4; pass++)
    for (guint i = 0; i < apps->len; i++)
      {
        GlApp *app = apps->pdata[i];
        g_auto(GStrv) types = NULL;

        if (!app->runnable || (pass % 2 == 0) != app->exported)
          continue;
        types = app_mime_types (app);
        for (gsize t = 0; types != NULL && types[t] != NULL; t++)
          if (pass < 2 ? strcmp (types[t], content_type) == 0
                       : g_content_type_is_a (content_type, types[t]))
            return g_strdup (app->desktop_id);
      }
  return NULL;
}

char *
gl_open_content_type (const char *uri)
{
  g_autofree char *scheme = g_uri_parse_scheme (uri);
  g_autoptr(GFile) file = NULL;
  g_autoptr(GFileInfo) info = NULL;
  g_autofree char *path = NULL;

  if (scheme != NULL && g_ascii_strcasecmp (scheme, "file") != 0)
    {
      g_autofree char *lower = g_ascii_strdown (scheme, -1);
      return g_strconcat ("x-scheme-handler/", lower, NULL);
    }
  file = g_file_new_for_uri (uri);
  info = g_file_query_info (file, G_FILE_ATTRIBUTE_STANDARD_CONTENT_TYPE, G_FILE_QUERY_INFO_NONE, NULL, NULL);
  if (info != NULL && g_file_info_get_content_type (info) != NULL)
    return g_strdup (g_file_info_get_content_type (info));
  path = g_file_get_path (file);
  return g_content_type_guess (path, NULL, 0, NULL);
}

/* The entry's path as the sandbox sees it, for %k */
static char *
path_in_sandbox (GlExportSource *source, const char *path)
{
  for (gsize r = 0; source->data_roots != NULL && source->data_roots[r] != NULL; r++)
    {
      const char *root = source->data_roots[r];
      gsize n = strlen (root);

      if (strncmp (path, root, n) == 0 && path[n] == '/')
        return g_strdup (path + n);
    }
  return g_strdup (path);
}

GPtrArray *
gl_open_commands (GlExportSource *source, const char *launcher, const char *desktop_id,
                  const char * const *uris, GError **error)
{
  g_autoptr(GPtrArray) apps = gl_export_source_list_apps (source, error);
  g_autoptr(GPtrArray) commands = g_ptr_array_new_with_free_func ((GDestroyNotify) g_strfreev);
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  g_autofree char *exec = NULL;
  g_autofree char *name = NULL;
  g_autofree char *icon = NULL;
  g_autofree char *k = NULL;
  g_auto(GStrv) argv = NULL;
  const char * const none[] = { NULL };
  const char * const *rest = uris != NULL ? uris : none;
  GlApp *app;

  if (apps == NULL)
    return NULL;
  app = find_app (apps, desktop_id);
  if (app == NULL)
    {
      g_set_error (error, GL_EXPORT_ERROR, GL_EXPORT_ERROR_NOT_FOUND,
                   "Sandbox %s has no application %s; “glimpse apps %s” lists them",
                   source->id, desktop_id, source->id);
      return NULL;
    }
  if (!g_key_file_load_from_file (kf, app->path, G_KEY_FILE_NONE, error))
    {
      g_prefix_error (error, "Cannot read %s: ", app->path);
      return NULL;
    }
  exec = g_key_file_get_string (kf, G_KEY_FILE_DESKTOP_GROUP, "Exec", error);
  if (exec == NULL || !gl_exec_split (exec, &argv, error))
    {
      g_prefix_error (error, "Cannot run %s of sandbox %s: ", desktop_id, source->id);
      return NULL;
    }
  name = g_key_file_get_locale_string (kf, G_KEY_FILE_DESKTOP_GROUP, "Name", NULL, NULL);
  icon = g_key_file_get_string (kf, G_KEY_FILE_DESKTOP_GROUP, "Icon", NULL);
  k = path_in_sandbox (source, app->path);

  do
    {
      guint used = 0;
      g_auto(GStrv) expanded = gl_exec_expand ((const char * const *) argv, rest, icon, name, k, &used);
      g_autoptr(GStrvBuilder) b = g_strv_builder_new ();

      g_strv_builder_add_many (b, launcher, source->id, "--", NULL);
      g_strv_builder_addv (b, (const char **) expanded);
      g_ptr_array_add (commands, g_strv_builder_end (b));
      if (used == 0)
        break;
      rest += used;
    }
  while (*rest != NULL);

  return g_steal_pointer (&commands);
}
