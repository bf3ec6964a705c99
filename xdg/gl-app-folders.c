/* gl-app-folders.c: GNOME Shell app folders, through GSettings
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include "gl-app-folders.h"

#define FOLDERS_SCHEMA "org.gnome.desktop.app-folders"
#define FOLDER_SCHEMA  "org.gnome.desktop.app-folders.folder"
#define FOLDERS_PATH   "/org/gnome/desktop/app-folders/folders/"

gboolean
gl_app_folders_available (void)
{
  GSettingsSchemaSource *source = g_settings_schema_source_get_default ();
  g_autoptr(GSettingsSchema) a = NULL;
  g_autoptr(GSettingsSchema) b = NULL;

  if (source == NULL)
    return FALSE;
  /* dconf writes through the session bus: without one (a text console,
   * sudo) there is no GNOME Shell to show folders, and every write would
   * only warn.  The keyfile backend (tests) needs no bus. */
  if (g_getenv ("DBUS_SESSION_BUS_ADDRESS") == NULL &&
      g_strcmp0 (g_getenv ("GSETTINGS_BACKEND"), "keyfile") != 0 &&
      g_strcmp0 (g_getenv ("GSETTINGS_BACKEND"), "memory") != 0)
    {
      g_debug ("No session bus: GNOME app folders left alone");
      return FALSE;
    }
  a = g_settings_schema_source_lookup (source, FOLDERS_SCHEMA, TRUE);
  b = g_settings_schema_source_lookup (source, FOLDER_SCHEMA, TRUE);
  return a != NULL && b != NULL;
}

static GSettings *
folder_settings (const char *folder_id)
{
  g_autofree char *path = g_strdup_printf (FOLDERS_PATH "%s/", folder_id);
  return g_settings_new_with_path (FOLDER_SCHEMA, path);
}

void
gl_app_folders_sync (const GlExportedSandbox *sandboxes, guint n_sandboxes,
                     const char * const *removed_ids)
{
  g_autoptr(GSettings) folders = NULL;
  g_auto(GStrv) children = NULL;
  g_autoptr(GPtrArray) next = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GHashTable) gone = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  if (!gl_app_folders_available ())
    return;

  folders = g_settings_new (FOLDERS_SCHEMA);
  children = g_settings_get_strv (folders, "folder-children");

  for (gsize i = 0; removed_ids != NULL && removed_ids[i] != NULL; i++)
    g_hash_table_add (gone, g_strdup_printf ("glimpse-%s", removed_ids[i]));

  /* the user's order stays; only ours leave or join at the end */
  for (gsize i = 0; children[i] != NULL; i++)
    if (!g_hash_table_contains (gone, children[i]))
      g_ptr_array_add (next, g_strdup (children[i]));
  for (guint i = 0; i < n_sandboxes; i++)
    {
      g_autofree char *fid = g_strdup_printf ("glimpse-%s", sandboxes[i].id);
      g_autoptr(GSettings) folder = folder_settings (fid);
      g_autofree char *name = g_strdup_printf ("Glimpse: %s", sandboxes[i].name);
      const char *none[] = { NULL };
      g_autofree char *cur_name = g_settings_get_string (folder, "name");
      g_auto(GStrv) cur_apps = g_settings_get_strv (folder, "apps");
      const char * const *apps = sandboxes[i].apps != NULL ? sandboxes[i].apps : none;
      gboolean same = g_strv_equal ((const char * const *) cur_apps, apps);

      if (!g_ptr_array_find_with_equal_func (next, fid, g_str_equal, NULL))
        g_ptr_array_add (next, g_strdup (fid));
      if (g_strcmp0 (cur_name, name) != 0)
        g_settings_set_string (folder, "name", name);
      if (!same)
        g_settings_set_strv (folder, "apps", apps);
    }
  {
    GHashTableIter iter;
    gpointer key;

    g_hash_table_iter_init (&iter, gone);
    while (g_hash_table_iter_next (&iter, &key, NULL))
      {
        g_autoptr(GSettings) folder = folder_settings (key);
        g_settings_reset (folder, "name");
        g_settings_reset (folder, "apps");
      }
  }
  g_ptr_array_add (next, NULL);
  if (!g_strv_equal ((const char * const *) children, (const char * const *) next->pdata))
    g_settings_set_strv (folders, "folder-children", (const char * const *) next->pdata);
  g_settings_sync ();
}
