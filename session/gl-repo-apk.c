/* gl-repo-apk.c: the repositories of an apk sandbox (see gl-repo.h)
 *
 * A repository glimpse adds is a line of the sandbox's
 * /etc/apk/repositories after a marker comment naming it and its key; the
 * key (an RSA public key in PEM) goes to /etc/apk/keys/ under the name apk
 * looks it up by: the name its signer gave it (the index's
 * .SIGN.RSA.<name>), which is the key file's own name ("…​.rsa.pub").
 * apk trusts every key of /etc/apk/keys for every repository: that is
 * apk's model, said in glimpse(1).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-repo-private.h"

#define MARK "# glimpse add-repo "
#define MARK_KEY " key "

gboolean
gl_repo_apk_key_name_validate (const char *name, GError **error)
{
  gsize len = strlen (name);
  if (len > 8 && len <= 128 && g_str_has_suffix (name, ".rsa.pub") && g_ascii_isalnum (name[0]))
    {
      const char *p;
      for (p = name; *p; p++)
        if (!g_ascii_isalnum (*p) && !strchr ("@._+-", *p))
          break;
      if (*p == '\0')
        return TRUE;
    }
  return gl_repo_invalid (error, "“%s” is not the name of an apk signing key: apk finds a key by the "
                          "name its signer gave it (as in the index's .SIGN.RSA.NAME), e.g. "
                          "“builder@example.org-5f1e2d3c.rsa.pub”; give the key file under that name",
                          name);
}

static gboolean
pem_public_key (GBytes *key)
{
  gsize len;
  const char *d = g_bytes_get_data (key, &len);
  return len > 60 && len < 16384 && g_str_has_prefix (d, "-----BEGIN PUBLIC KEY-----")
         && g_strstr_len (d, (gssize) len, "-----END PUBLIC KEY-----") != NULL
         && memchr (d, '\0', len) == NULL;
}

char *
gl_repo_apk_repositories_add (const char *text, const char *name, const char *url, const char *key_name)
{
  GString *s = g_string_new (text ? text : "");
  if (s->len > 0 && s->str[s->len - 1] != '\n')
    g_string_append_c (s, '\n');
  g_string_append_printf (s, MARK "%s" MARK_KEY "%s\n%s\n", name, key_name, url);
  return g_string_free (s, FALSE);
}

/* The marker of @name: its key's name, or NULL */
static char *
marker_key (const char *line, const char *name)
{
  g_autofree char *m = g_strconcat (MARK, name, MARK_KEY, NULL);
  return g_str_has_prefix (line, m) ? g_strdup (line + strlen (m)) : NULL;
}

static char *
marker_name (const char *line)
{
  const char *p, *e;
  if (!g_str_has_prefix (line, MARK))
    return NULL;
  p = line + strlen (MARK);
  e = strstr (p, MARK_KEY);
  return e ? g_strndup (p, e - p) : NULL;
}

char *
gl_repo_apk_repositories_remove (const char *text, const char *name, gboolean recorded, char **key_name)
{
  g_auto(GStrv) lines = g_strsplit (text ? text : "", "\n", -1);
  GString *s = g_string_new (NULL);
  gboolean found = FALSE, key_used = FALSE;

  *key_name = NULL;
  for (guint i = 0; lines[i]; i++)
    {
      g_autofree char *k = found ? NULL : marker_key (lines[i], name);
      g_autofree char *plain = g_strstrip (g_strdup (lines[i]));
      g_autofree char *derived = NULL;
      if (k != NULL)
        {
          found = TRUE;
          *key_name = g_steal_pointer (&k);
          if (lines[i + 1])
            i++;   /* its line */
          continue;
        }
      /* a line of the base, by the name repos shows for it */
      if (!found && *plain && *plain != '#' && (derived = gl_repo_name_from_uri (plain))
          && g_str_equal (derived, name))
        {
          found = TRUE;
          continue;
        }
      g_string_append (s, lines[i]);
      if (lines[i + 1])
        g_string_append_c (s, '\n');
    }
  if (!found)
    {
      g_string_free (s, TRUE);
      return NULL;
    }
  /* a key another marker still names stays, whether glimpse recorded
   * adding that one or not (as pacman keeps a key any block names) */
  if (*key_name)
    {
      g_auto(GStrv) left = g_strsplit (s->str, "\n", -1);
      for (char **l = left; *l && !key_used; l++)
        {
          const char *p = strstr (*l, MARK_KEY);
          key_used = g_str_has_prefix (*l, MARK) && p && g_str_equal (p + strlen (MARK_KEY), *key_name);
        }
      /* (a marker glimpse did not record adding is the base's or a
       * package's: its key is not glimpse's to delete) */
      if (key_used || !recorded)
        g_clear_pointer (key_name, g_free);
    }
  return g_string_free (s, FALSE);
}

static const char add_script[] =
  "set -e\n"
  "key=$1\n"
  "mkdir -p /etc/apk/keys /tmp/glimpse-only\n"
  "cp /run/glimpse-input/key \"/etc/apk/keys/$key\"; chmod 0644 \"/etc/apk/keys/$key\"\n"
  "cp /run/glimpse-input/repositories /etc/apk/repositories; chmod 0644 /etc/apk/repositories\n"
  /* this repository alone: its index must answer and verify */
  "apk update --repositories-file /run/glimpse-input/only\n";

static const char remove_script[] =
  "set -e\n"
  "cp /run/glimpse-input/repositories /etc/apk/repositories; chmod 0644 /etc/apk/repositories\n"
  "if [ -n \"$1\" ]; then rm -f -- \"/etc/apk/keys/$1\"; fi\n";

gboolean
gl_repo_apk_add (GlSandbox *sandbox, const char *spec, const char *key_arg, const char *name_arg,
                 GlPkgProgress progress, gpointer user_data, GCancellable *cancellable, GError **error)
{
  g_autofree char *url = g_strstrip (g_strdup (spec)), *name = NULL, *key_name = NULL;
  g_autofree char *text = NULL, *new_text = NULL, *existing = NULL, *rel = NULL, *what = NULL;
  g_autofree char *only = NULL;
  g_autoptr(GBytes) key = NULL, text_bytes = NULL, only_bytes = NULL;

  if (!gl_repo_uri_ok (url))
    return gl_repo_invalid (error, "Bad repository: “%s” is not an http:// or https:// address (apk "
                            "takes one repository line, e.g. https://HOST/alpine/edge/testing)", spec);
  name = name_arg ? g_strdup (name_arg) : gl_repo_name_from_uri (url);
  if (!gl_repo_name_validate (name, error))
    return FALSE;
  if (key_arg == NULL)
    return gl_repo_invalid (error, "give the repository's signing key with --key FILE|URL (its RSA "
                            "public key, under the name its signer gave it)");
  {
    g_autofree char *base = g_path_get_basename (key_arg);
    if (!gl_repo_apk_key_name_validate (base, error))
      return FALSE;
    key_name = g_steal_pointer (&base);
  }
  key = gl_repo_read_key (key_arg, cancellable, error);
  if (key == NULL)
    return FALSE;
  if (!pem_public_key (key))
    return gl_repo_invalid (error, "The key %s is not an RSA public key in PEM (“-----BEGIN PUBLIC "
                            "KEY-----”)", key_arg);
  rel = g_strconcat ("etc/apk/keys/", key_name, NULL);
  existing = gl_repo_read_sandbox_file (sandbox, rel);
  if (existing && (strlen (existing) != g_bytes_get_size (key)
                   || memcmp (existing, g_bytes_get_data (key, NULL), strlen (existing)) != 0))
    return gl_repo_invalid (error, "“%s” already has another key named %s; refused", sandbox->id, key_name);
  text = gl_repo_read_sandbox_file (sandbox, "etc/apk/repositories");
  {
    g_autofree char *k = NULL;
    g_autofree char *rest = gl_repo_apk_repositories_remove (text, name, FALSE, &k);
    if (rest != NULL)
      return gl_repo_invalid (error, "“%s” already has a repository “%s”; give another --name", sandbox->id, name);
  }
  new_text = gl_repo_apk_repositories_add (text, name, url, key_name);
  only = g_strdup_printf ("%s\n", url);
  text_bytes = g_bytes_new (new_text, strlen (new_text));
  only_bytes = g_bytes_new (only, strlen (only));
  what = g_strdup_printf ("adding the repository %s (%s) to “%s”", name, url, sandbox->id);
  {
    const GlRepoInput inputs[] = { { "repositories", text_bytes }, { "only", only_bytes },
                                   { "key", key }, { NULL, NULL } };
    const char *args[] = { key_name, NULL };
    const char *allow[] = { url, NULL };
    return gl_repo_change (sandbox, what, inputs, add_script, args, allow, name, NULL,
                           progress, user_data, cancellable, error);
  }
}

gboolean
gl_repo_apk_remove (GlSandbox *sandbox, const char *name, GlPkgProgress progress, gpointer user_data,
                    GCancellable *cancellable, GError **error)
{
  g_autofree char *text = gl_repo_read_sandbox_file (sandbox, "etc/apk/repositories");
  g_autofree char *key_name = NULL, *what = NULL;
  g_autofree char *rest = gl_repo_apk_repositories_remove (text, name, gl_repo_recorded (sandbox, name),
                                                          &key_name);
  g_autoptr(GBytes) rest_bytes = NULL;

  if (rest == NULL)
    {
      return gl_repo_not_found (sandbox, name, error);
    }
  rest_bytes = g_bytes_new (rest, strlen (rest));
  what = g_strdup_printf ("removing the repository %s from “%s”", name, sandbox->id);
  {
    const GlRepoInput inputs[] = { { "repositories", rest_bytes }, { NULL, NULL } };
    const char *args[] = { key_name ? key_name : "", NULL };
    return gl_repo_change (sandbox, what, inputs, remove_script, args, NULL, NULL, name,
                           progress, user_data, cancellable, error);
  }
}

GPtrArray *
gl_repo_apk_list (GlSandbox *sandbox, GError **error)
{
  g_autofree char *text = gl_repo_read_sandbox_file (sandbox, "etc/apk/repositories");
  g_auto(GStrv) lines = g_strsplit (text ? text : "", "\n", -1);
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) gl_repo_entry_free);
  g_autofree char *pending = NULL;

  for (char **l = lines; *l; l++)
    {
      char *line = g_strstrip (*l);
      GlRepoEntry *e;
      if (*line == '#')
        {
          g_free (pending);
          pending = marker_name (line);
          continue;
        }
      if (*line == '\0')
        continue;
      e = g_new0 (GlRepoEntry, 1);
      e->added = pending != NULL && gl_repo_recorded (sandbox, pending);
      e->name = pending ? g_steal_pointer (&pending) : gl_repo_name_from_uri (line);
      e->file = g_strdup ("/etc/apk/repositories");
      e->summary = g_strdup (line);
      g_ptr_array_add (out, e);
    }
  return out;
}
