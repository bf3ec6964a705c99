/* gl-export-entry.c: one sandbox desktop entry rewritten for the host
 *
 * The entry comes from a sandbox and is hostile (SECURITY.md, export).  The
 * exported entry is built from scratch: only the keys below, each written
 * once from its final value through g_key_file_set_*(), so every value is
 * escaped again and no duplicate, localized Exec, TerminalOptions, comment
 * or unknown key of the original survives.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include "gl-exec.h"
#include "gl-export-private.h"

/* '+' never occurs in a sandbox id (letters, digits, '.', '_', '-'), so
 * "glimpse-ID+NAME" names one sandbox and one name only: sandbox "hs-a"
 * with "b-x.desktop" and sandbox "hs-a-b" with "x.desktop" no longer meet. */
char *
gl_export_desktop_file_name (const char *sandbox_id, const char *desktop_id)
{
  return g_strdup_printf ("glimpse-%s+%s", sandbox_id, desktop_id);
}

char *
gl_export_icon_name (const char *sandbox_id, const char *icon)
{
  g_autofree char *clean = gl_export_sanitize_name (icon);

  return g_strdup_printf ("glimpse-%s+%s", sandbox_id, clean);
}

char *
gl_export_sanitize_name (const char *s)
{
  g_autoptr(GString) out = g_string_new (NULL);

  for (const char *p = s; *p != '\0'; p++)
    g_string_append_c (out, (g_ascii_isalnum (*p) || strchr ("._-+", *p) != NULL) ? *p : '_');
  return g_string_free (g_steal_pointer (&out), FALSE);
}

/* The keys with translations that are kept, and those that get the
 * sandbox's name. */
static const char * const localized_keys[] = {
  "Name", "GenericName", "X-GNOME-FullName", "Comment", "Keywords", NULL
};
static const char * const named_keys[] = { "Name", "GenericName", "X-GNOME-FullName", NULL };
static const char * const boolean_keys[] = {
  "Terminal", "StartupNotify", "NoDisplay", "PrefersNonDefaultGPU", "SingleMainWindow", NULL
};

/* MIME types a sandbox app never claims on the host: the web, mail and
 * file schemes, directories, and wildcards.  A user may still choose the
 * app for them ("Open With" › other application). */
static const char * const denied_schemes[] = {
  "http", "https", "file", "mailto", "ftp", "ftps", "sftp", "ssh", "smb", "nfs", "dav", "davs",
  "webcal", "webcals", "tel", "sms", "sip", "irc", "ircs", "magnet", "data", "javascript",
  "about", "chrome", "resource", "trash", "recent", "computer", "network", "x-github-client",
  NULL
};

gboolean
gl_export_mime_type_allowed (const char *type)
{
  const char *slash = strchr (type, '/');

  if (slash == NULL || slash == type || slash[1] == '\0' || strchr (slash + 1, '/') != NULL)
    return FALSE;
  for (const char *p = type; *p != '\0'; p++)
    if (!g_ascii_isalnum (*p) && strchr ("/.+-_", *p) == NULL)
      return FALSE;   /* also every wildcard */
  if (g_str_has_prefix (type, "inode/") || g_ascii_strncasecmp (type, "all/", 4) == 0)
    return FALSE;
  if (g_ascii_strncasecmp (type, "x-scheme-handler/", 17) == 0)
    for (gsize i = 0; denied_schemes[i] != NULL; i++)
      if (g_ascii_strcasecmp (type + 17, denied_schemes[i]) == 0)
        return FALSE;
  return TRUE;
}

/* "Name[de_DE@euro]" -> "Name", "de_DE@euro"; FALSE if @key is not one of
 * @bases with a well-formed locale (or none). */
static gboolean
split_localized (const char *key, const char * const *bases, const char **base, const char **locale_start)
{
  const char *bracket = strchr (key, '[');
  gsize n = bracket != NULL ? (gsize) (bracket - key) : strlen (key);

  *locale_start = NULL;
  for (gsize i = 0; bases[i] != NULL; i++)
    if (strlen (bases[i]) == n && strncmp (key, bases[i], n) == 0)
      {
        *base = bases[i];
        if (bracket == NULL)
          return TRUE;
        if (bracket[1] == ']' || !g_str_has_suffix (bracket, "]"))
          return FALSE;
        for (const char *p = bracket + 1; p[1] != '\0'; p++)
          if (!g_ascii_isalnum (*p) && strchr ("_@.-", *p) == NULL)
            return FALSE;
        *locale_start = bracket;
        return TRUE;
      }
  return FALSE;
}

/* A value the host's desktop reads back as it is: valid UTF-8 and no
 * control character (a bare CR is a line end to some parsers, e.g. pyxdg's). */
static gboolean
check_value (const char *desktop_id, const char *group, const char *key,
             const char *value, GError **error)
{
  if (!g_utf8_validate (value, -1, NULL))
    {
      g_set_error (error, GL_EXPORT_ERROR, GL_EXPORT_ERROR_UNSAFE,
                   "%s: [%s] %s is not valid UTF-8", desktop_id, group, key);
      return FALSE;
    }
  for (const char *p = value; *p != '\0'; p++)
    if ((guchar) *p < 0x20 || *p == 0x7f)
      {
        g_set_error (error, GL_EXPORT_ERROR, GL_EXPORT_ERROR_UNSAFE,
                     "%s: [%s] %s holds a control character (0x%02x), which a desktop could "
                     "read as a line break; not exported", desktop_id, group, key, (guchar) *p);
        return FALSE;
      }
  return TRUE;
}

/* The value of @key as GLib reads it (the last of duplicates), checked;
 * NULL if absent.  FALSE only for a value that must not be exported. */
static gboolean
get_checked (GKeyFile *in, const char *desktop_id, const char *group, const char *key,
             char **value, GError **error)
{
  g_autofree char *raw = g_key_file_get_value (in, group, key, NULL);
  g_autofree char *v = NULL;

  *value = NULL;
  if (raw == NULL)
    return TRUE;
  if (!check_value (desktop_id, group, key, raw, error))
    return FALSE;
  v = g_key_file_get_string (in, group, key, NULL);
  if (v == NULL)
    return TRUE;   /* a bad escape: dropped */
  if (!check_value (desktop_id, group, key, v, error))
    return FALSE;
  *value = g_steal_pointer (&v);
  return TRUE;
}

/* Names and their translations, with @suffix on those that name the app. */
static gboolean
copy_localized (GKeyFile *in, GKeyFile *out, const char *desktop_id, const char *group,
                const char * const *bases, const char *suffix, GError **error)
{
  g_auto(GStrv) keys = g_key_file_get_keys (in, group, NULL, NULL);

  for (gsize b = 0; bases[b] != NULL; b++)
    for (gsize i = 0; keys != NULL && keys[i] != NULL; i++)
      {
        const char *base = NULL;
        const char *locale = NULL;
        g_autofree char *value = NULL;

        if (!split_localized (keys[i], bases, &base, &locale) || strcmp (base, bases[b]) != 0)
          continue;
        if (!get_checked (in, desktop_id, group, keys[i], &value, error))
          return FALSE;
        if (value == NULL)
          continue;
        if (suffix != NULL && g_strv_contains (named_keys, base))
          {
            char *named = g_strconcat (value, suffix, NULL);
            g_free (value);
            value = named;
          }
        g_key_file_set_string (out, group, keys[i], value);
      }
  return TRUE;
}

/* A list of plain words (desktop names, action ids). */
static GStrv
word_list (GKeyFile *in, const char *group, const char *key)
{
  g_auto(GStrv) items = g_key_file_get_string_list (in, group, key, NULL, NULL);
  g_autoptr(GStrvBuilder) kept = g_strv_builder_new ();
  g_autoptr(GPtrArray) seen = g_ptr_array_new ();

  for (gsize i = 0; items != NULL && items[i] != NULL; i++)
    {
      gboolean ok = items[i][0] != '\0';

      for (const char *p = items[i]; ok && *p != '\0'; p++)
        ok = g_ascii_isalnum (*p) || strchr ("-_.", *p) != NULL;
      if (ok && !g_ptr_array_find_with_equal_func (seen, items[i], g_str_equal, NULL))
        {
          g_ptr_array_add (seen, items[i]);
          g_strv_builder_add (kept, items[i]);
        }
    }
  return g_strv_builder_end (kept);
}

static void
set_list (GKeyFile *out, const char *group, const char *key, GStrv list)
{
  if (list != NULL && list[0] != NULL)
    g_key_file_set_string_list (out, group, key, (const char * const *) list, g_strv_length (list));
}

/* A themed icon name, never a path (it would point outside the sandbox). */
static gboolean
icon_is_themed_name (const char *icon)
{
  return icon != NULL && *icon != '\0' && strchr (icon, '/') == NULL && icon[0] != '.';
}

/* The desktop actions that have an Exec the launcher can run; the others
 * would be activated over D-Bus on the host, and go. */
static gboolean
copy_actions (GKeyFile *in, GKeyFile *out, const char *desktop_id, const char *sandbox_id,
              const char *launcher, GError **error)
{
  g_auto(GStrv) actions = word_list (in, DE_GROUP, "Actions");
  g_autoptr(GStrvBuilder) kept = g_strv_builder_new ();
  g_auto(GStrv) kept_list = NULL;

  for (gsize i = 0; actions[i] != NULL; i++)
    {
      g_autofree char *group = g_strconcat ("Desktop Action ", actions[i], NULL);
      g_autofree char *exec = NULL;
      g_autofree char *wrapped = NULL;
      g_autofree char *icon = NULL;
      g_autoptr(GError) local_error = NULL;

      if (!g_key_file_has_group (in, group))
        continue;
      if (!get_checked (in, desktop_id, group, "Exec", &exec, error) ||
          !get_checked (in, desktop_id, group, "Icon", &icon, error))
        return FALSE;
      if (exec != NULL && *exec != '\0')
        wrapped = gl_exec_wrap (launcher, sandbox_id, exec, &local_error);
      if (wrapped == NULL)
        {
          g_debug ("%s: dropping group [%s]: %s", desktop_id, group,
                   local_error != NULL ? local_error->message : "no Exec");
          continue;
        }
      if (!copy_localized (in, out, desktop_id, group, (const char * const[]) { "Name", NULL }, NULL, error))
        return FALSE;
      if (icon_is_themed_name (icon))
        g_key_file_set_string (out, group, "Icon", icon);
      g_key_file_set_string (out, group, "Exec", wrapped);
      g_strv_builder_add (kept, actions[i]);
    }
  kept_list = g_strv_builder_end (kept);
  set_list (out, DE_GROUP, "Actions", kept_list);
  return TRUE;
}

/* The base name of the program an Exec line runs, past "env" and its
 * VAR=value assignments; NULL if there is none. */
static char *
exec_program_name (const char *exec)
{
  g_auto(GStrv) argv = NULL;
  gsize i = 0;

  if (!gl_exec_split (exec, &argv, NULL) || argv[0] == NULL)
    return NULL;
  if (strcmp (argv[0], "env") == 0 || g_str_has_suffix (argv[0], "/env"))
    for (i = 1; argv[i] != NULL && (strchr (argv[i], '=') != NULL || argv[i][0] == '-'); i++)
      ;
  if (argv[i] == NULL || argv[i][0] == '%')
    return NULL;
  return g_path_get_basename (argv[i]);
}

GKeyFile *
gl_export_rewrite_entry (GKeyFile *in, const char *desktop_id,
                         const char *sandbox_id, const char *sandbox_name,
                         const char *launcher, const char *icon_name,
                         GError **error)
{
  g_autoptr(GKeyFile) out = g_key_file_new ();
  g_autofree char *type = g_key_file_get_string (in, DE_GROUP, "Type", NULL);
  gboolean hidden = g_key_file_get_boolean (in, DE_GROUP, "Hidden", NULL);
  /* "Mousepad — dk-host": the name a person would write */
  g_autofree char *suffix = g_strdup_printf (" — %s", sandbox_name);
  g_autofree char *exec = NULL;
  g_autofree char *wrapped = NULL;
  g_autofree char *icon = NULL;
  g_autofree char *tryexec = NULL;
  g_autofree char *path = NULL;
  g_autofree char *wmclass = NULL;
  g_autofree char *categories = NULL;
  g_autofree char *ours = NULL;
  g_auto(GStrv) mime = NULL;
  g_autoptr(GStrvBuilder) mime_kept = g_strv_builder_new ();
  g_auto(GStrv) mime_list = NULL;

  if (g_strcmp0 (type, "Application") != 0 || hidden)
    {
      g_set_error (error, GL_EXPORT_ERROR, GL_EXPORT_ERROR_NOT_APPLICATION,
                   "%s is not an application entry (Type=%s%s), nothing to export",
                   desktop_id, type != NULL ? type : "", type != NULL && hidden ? ", Hidden" : "");
      return NULL;
    }
  if (!get_checked (in, desktop_id, DE_GROUP, "Exec", &exec, error))
    return NULL;
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
  if (!get_checked (in, desktop_id, DE_GROUP, "Icon", &icon, error) ||
      !get_checked (in, desktop_id, DE_GROUP, "TryExec", &tryexec, error) ||
      !get_checked (in, desktop_id, DE_GROUP, "Path", &path, error) ||
      !get_checked (in, desktop_id, DE_GROUP, "StartupWMClass", &wmclass, error) ||
      !get_checked (in, desktop_id, DE_GROUP, "Categories", &categories, error))
    return NULL;

  g_key_file_set_string (out, DE_GROUP, "Type", "Application");
  /* the sandbox's name on every translation of the names */
  if (!copy_localized (in, out, desktop_id, DE_GROUP, localized_keys, suffix, error))
    return NULL;

  /* Icon: the exported copy; an unresolved themed name stays (the host's
   * theme may have it), an unresolved path goes (it points outside) */
  if (icon_name != NULL)
    g_key_file_set_string (out, DE_GROUP, "Icon", icon_name);
  else if (icon_is_themed_name (icon))
    g_key_file_set_string (out, DE_GROUP, "Icon", icon);

  g_key_file_set_string (out, DE_GROUP, "Exec", wrapped);

  /* TryExec names a program in the sandbox, which the host does not have:
   * it would hide the entry.  Point it at the launcher instead, so the entry
   * disappears only if Glimpse itself is uninstalled. */
  if (tryexec != NULL)
    {
      g_key_file_set_string (out, DE_GROUP, "TryExec", launcher);
      g_key_file_set_string (out, DE_GROUP, "X-Glimpse-TryExec", tryexec);
    }
  /* Path is a directory in the sandbox's view; the host would chdir there
   * before running the launcher and fail when the host lacks it.  The
   * launcher keeps the working directory. */
  if (path != NULL)
    g_key_file_set_string (out, DE_GROUP, "X-Glimpse-Path", path);

  for (gsize i = 0; boolean_keys[i] != NULL; i++)
    {
      g_autoptr(GError) local_error = NULL;
      gboolean v = g_key_file_get_boolean (in, DE_GROUP, boolean_keys[i], &local_error);

      if (local_error == NULL)
        g_key_file_set_boolean (out, DE_GROUP, boolean_keys[i], v);
    }

  /* the window's class still matches this launcher although the file is
   * renamed: docks match by StartupWMClass, else by desktop file name.  The
   * original's, else what GTK, Qt and plain X11 set by default: the name
   * of the program run (its WM_CLASS instance) */
  if (wmclass == NULL)
    wmclass = exec_program_name (exec);
  if (wmclass == NULL)
    wmclass = g_strndup (desktop_id, strlen (desktop_id) - strlen (".desktop"));
  g_key_file_set_string (out, DE_GROUP, "StartupWMClass", wmclass);

  {
    g_auto(GStrv) only = word_list (in, DE_GROUP, "OnlyShowIn");
    g_auto(GStrv) not = word_list (in, DE_GROUP, "NotShowIn");
    set_list (out, DE_GROUP, "OnlyShowIn", only);
    set_list (out, DE_GROUP, "NotShowIn", not);
  }

  /* MimeType: kept, so the app shows in "Open With"; never the web, mail,
   * file schemes, directories or wildcards */
  mime = g_key_file_get_string_list (in, DE_GROUP, "MimeType", NULL, NULL);
  for (gsize i = 0; mime != NULL && mime[i] != NULL; i++)
    if (gl_export_mime_type_allowed (mime[i]))
      g_strv_builder_add (mime_kept, mime[i]);
    else if (*mime[i] != '\0')
      g_debug ("%s: not claiming MIME type %s on the host", desktop_id, mime[i]);
  mime_list = g_strv_builder_end (mime_kept);
  set_list (out, DE_GROUP, "MimeType", mime_list);

  /* Categories: only ours, so the entry shows in Glimpse › sandbox and
   * nowhere else; the original kept for reference */
  ours = g_strdup_printf ("X-Glimpse;X-Glimpse-%s;", sandbox_id);
  g_key_file_set_string (out, DE_GROUP, "Categories", ours);
  if (categories != NULL)
    g_key_file_set_string (out, DE_GROUP, "X-Glimpse-Categories", categories);

  if (!copy_actions (in, out, desktop_id, sandbox_id, launcher, error))
    return NULL;

  g_key_file_set_string (out, DE_GROUP, "X-Glimpse-Sandbox", sandbox_id);
  g_key_file_set_string (out, DE_GROUP, "X-Glimpse-Desktop-Id", desktop_id);
  return g_steal_pointer (&out);
}
