/* gl-export-defaults.c: an exported sandbox app never becomes the host's
 * default handler by accident
 *
 * GIO and xdg-mime take, when no mimeapps.list names a default for a type,
 * the first application of the highest-precedence data directory that
 * handles it — $XDG_DATA_HOME/applications, where the exports are.  So for
 * every type an exported app claims and a host application handles, with no
 * default chosen anywhere, the host's application is named the default in
 * $XDG_DATA_HOME/applications/mimeapps.list (below the user's own
 * $XDG_CONFIG_HOME/mimeapps.list, so the user's choice always wins).  A
 * type no host application handles is left alone: the sandbox's app may be
 * its default.  The manifest records each default Glimpse set; one the user
 * changed is theirs and stays.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include <unistd.h>

#include "gl-export-private.h"

#define DEFAULTS_GROUP "Default Applications"
#define MIME_CACHE_GROUP "MIME Cache"
#define MAX_SCANNED 5000

static gboolean
is_ours (const char *desktop_id)
{
  return g_str_has_prefix (desktop_id, "glimpse-");
}

/* MimeType= of the desktop entry @path into @types */
static void
add_claims (const char *path, GHashTable *types)
{
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  g_auto(GStrv) mime = NULL;

  if (!g_key_file_load_from_file (kf, path, G_KEY_FILE_NONE, NULL))
    return;
  mime = g_key_file_get_string_list (kf, G_KEY_FILE_DESKTOP_GROUP, "MimeType", NULL, NULL);
  for (gsize i = 0; mime != NULL && mime[i] != NULL; i++)
    if (*mime[i] != '\0')
      g_hash_table_add (types, g_strdup (mime[i]));
}

/* The types the exported entries claim: those of the sandboxes loaded in
 * @m by their records, the others' by their sandbox lines. */
static GHashTable *
claimed_types (GlManifest *m, const char *apps_dir)
{
  GHashTable *types = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  GHashTableIter iter;
  gpointer key, value;

  g_hash_table_iter_init (&iter, m->files);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    {
      g_autofree char *dir = g_path_get_dirname (key);

      if (g_str_has_suffix (key, ".desktop") && strcmp (dir, apps_dir) == 0)
        add_claims (key, types);
    }
  g_hash_table_iter_init (&iter, m->sandboxes);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      GlManifestSandbox *s = value;

      if (gl_manifest_sandbox_loaded (m, key))
        continue;
      for (gsize i = 0; s->apps != NULL && s->apps[i] != NULL; i++)
        {
          g_autofree char *path = g_build_filename (apps_dir, s->apps[i], NULL);

          if (g_str_has_suffix (path, ".desktop") && strchr (s->apps[i], '/') == NULL)
            add_claims (path, types);
        }
    }
  return types;
}

/* A default chosen in a mimeapps.list (not one Glimpse set). */
static void
note_chosen (const char *path, GHashTable *types, GHashTable *chosen)
{
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  GHashTableIter iter;
  gpointer key;

  if (!g_key_file_load_from_file (kf, path, G_KEY_FILE_NONE, NULL))
    return;
  g_hash_table_iter_init (&iter, types);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    {
      g_autofree char *v = g_key_file_get_string (kf, DEFAULTS_GROUP, key, NULL);
      if (v != NULL && *v != '\0')
        g_hash_table_add (chosen, g_strdup (key));
    }
}

/* The host's handlers of @types in one applications directory: from its
 * mimeinfo.cache, else from its entries.  The first directory wins. */
static void
note_handlers (const char *dir, GHashTable *types, GHashTable *handlers)
{
  g_autofree char *cache = g_build_filename (dir, "mimeinfo.cache", NULL);
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  g_autoptr(GDir) d = NULL;
  const char *name;
  guint scanned = 0;

  if (g_key_file_load_from_file (kf, cache, G_KEY_FILE_NONE, NULL))
    {
      GHashTableIter iter;
      gpointer key;

      g_hash_table_iter_init (&iter, types);
      while (g_hash_table_iter_next (&iter, &key, NULL))
        {
          g_auto(GStrv) ids = g_key_file_get_string_list (kf, MIME_CACHE_GROUP, key, NULL, NULL);

          for (gsize i = 0; ids != NULL && ids[i] != NULL; i++)
            if (!is_ours (ids[i]) && *ids[i] != '\0' && !g_hash_table_contains (handlers, key))
              g_hash_table_insert (handlers, g_strdup (key), g_strdup (ids[i]));
        }
      return;
    }
  d = g_dir_open (dir, 0, NULL);
  while (d != NULL && (name = g_dir_read_name (d)) != NULL && scanned++ < MAX_SCANNED)
    {
      g_autofree char *path = NULL;
      g_autoptr(GKeyFile) entry = g_key_file_new ();
      g_auto(GStrv) mime = NULL;

      if (!g_str_has_suffix (name, ".desktop") || is_ours (name))
        continue;
      path = g_build_filename (dir, name, NULL);
      if (!g_key_file_load_from_file (entry, path, G_KEY_FILE_NONE, NULL) ||
          g_key_file_get_boolean (entry, G_KEY_FILE_DESKTOP_GROUP, "Hidden", NULL))
        continue;
      mime = g_key_file_get_string_list (entry, G_KEY_FILE_DESKTOP_GROUP, "MimeType", NULL, NULL);
      for (gsize i = 0; mime != NULL && mime[i] != NULL; i++)
        if (g_hash_table_contains (types, mime[i]) && !g_hash_table_contains (handlers, mime[i]))
          g_hash_table_insert (handlers, g_strdup (mime[i]), g_strdup (name));
    }
}

static gboolean
keyfile_is_empty (GKeyFile *kf)
{
  g_auto(GStrv) groups = g_key_file_get_groups (kf, NULL);

  for (gsize i = 0; groups[i] != NULL; i++)
    {
      g_auto(GStrv) keys = g_key_file_get_keys (kf, groups[i], NULL, NULL);
      if (keys != NULL && keys[0] != NULL)
        return FALSE;
    }
  return TRUE;
}

void
gl_export_defaults_sync (GlExportContext *ctx, GlManifest *m, GlExportStats *stats, GPtrArray *warnings)
{
  g_autofree char *apps_dir = g_build_filename (ctx->data_home, "applications", NULL);
  g_autofree char *path = g_build_filename (apps_dir, "mimeapps.list", NULL);
  g_autofree char *user_list = g_build_filename (ctx->config_home, "mimeapps.list", NULL);
  g_autoptr(GHashTable) types = claimed_types (m, apps_dir);
  g_autoptr(GHashTable) chosen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GHashTable) handlers = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr(GKeyFile) list = g_key_file_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *before = NULL;
  g_autofree char *after = NULL;
  const char *created = g_hash_table_lookup (m->merged, path);
  gboolean existed;
  GHashTableIter iter;
  gpointer key, value;

  existed = g_key_file_load_from_file (list, path, G_KEY_FILE_KEEP_COMMENTS | G_KEY_FILE_KEEP_TRANSLATIONS, NULL);
  if (!existed && g_hash_table_size (m->defaults) == 0 && g_hash_table_size (types) == 0)
    return;
  before = existed ? g_key_file_to_data (list, NULL, NULL) : NULL;

  /* ours from the last sync go (they are set again below if still needed);
   * one the user changed is theirs */
  g_hash_table_iter_init (&iter, m->defaults);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      g_autofree char *v = g_key_file_get_string (list, DEFAULTS_GROUP, key, NULL);

      if (g_strcmp0 (v, value) == 0)
        g_key_file_remove_key (list, DEFAULTS_GROUP, key, NULL);
      g_hash_table_iter_remove (&iter);
    }

  /* defaults chosen anywhere: the user's, the system's, what is left here */
  note_chosen (user_list, types, chosen);
  for (const char * const *d = g_get_system_config_dirs (); *d != NULL; d++)
    {
      g_autofree char *p = g_build_filename (*d, "mimeapps.list", NULL);
      note_chosen (p, types, chosen);
    }
  {
    g_autofree char *left = g_key_file_to_data (list, NULL, NULL);
    g_autoptr(GKeyFile) mine = g_key_file_new ();
    g_hash_table_iter_init (&iter, types);
    if (g_key_file_load_from_data (mine, left, -1, G_KEY_FILE_NONE, NULL))
      while (g_hash_table_iter_next (&iter, &key, NULL))
        if (g_key_file_has_key (mine, DEFAULTS_GROUP, key, NULL))
          g_hash_table_add (chosen, g_strdup (key));
  }
  for (const char * const *d = g_get_system_data_dirs (); *d != NULL; d++)
    {
      g_autofree char *p = g_build_filename (*d, "applications", "mimeapps.list", NULL);
      note_chosen (p, types, chosen);
    }

  /* the host's handlers, in the order GIO and xdg-mime look */
  note_handlers (apps_dir, types, handlers);
  for (const char * const *d = g_get_system_data_dirs (); *d != NULL; d++)
    {
      g_autofree char *dir = g_build_filename (*d, "applications", NULL);
      note_handlers (dir, types, handlers);
    }

  g_hash_table_iter_init (&iter, handlers);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      if (g_hash_table_contains (chosen, key))
        continue;
      g_key_file_set_string (list, DEFAULTS_GROUP, key, value);
      g_hash_table_insert (m->defaults, g_strdup (key), g_strdup (value));
    }

  if (keyfile_is_empty (list) && (!existed || g_strcmp0 (created, "1") == 0))
    {
      if (existed && unlink (path) == 0)
        stats->removed++;
      g_hash_table_remove (m->merged, path);
      return;
    }
  after = g_key_file_to_data (list, NULL, NULL);
  if (g_strcmp0 (before, after) == 0)
    {
      stats->unchanged++;
      return;
    }
  if (!gl_mkdir_with_parents (apps_dir, 0755, &error) ||
      !g_file_set_contents_full (path, after, -1, G_FILE_SET_CONTENTS_CONSISTENT, 0644, &error))
    {
      g_prefix_error (&error, "Cannot keep the host's default applications: ");
      gl_export_add_warning (warnings, stats, error);
      return;
    }
  stats->written++;
  if (created == NULL)
    g_hash_table_insert (m->merged, g_strdup (path), g_strdup (existed ? "0" : "1"));
}
