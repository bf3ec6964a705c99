/* gl-export-entry.c: one sandbox desktop entry rewritten for the host
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include "gl-exec.h"
#include "gl-export-private.h"

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

char *
gl_export_sanitize_name (const char *s)
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

