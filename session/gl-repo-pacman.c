/* gl-repo-pacman.c: the repositories of a pacman sandbox (see gl-repo.h)
 *
 * A repository glimpse adds is a section appended to the sandbox's
 * /etc/pacman.conf between two marker comments, with SigLevel = Required
 * (packages and database signed); its key is added to the sandbox's own
 * keyring (/etc/pacman.d/gnupg) and locally signed by pacman-key, which
 * runs inside the package namespace like every package operation, never
 * as the host's root.  The first marker names the key's fingerprints, so
 * that remove-repo takes out what it added.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-repo-private.h"

#define MARK_BEGIN "# glimpse add-repo "
#define MARK_KEYS ": begin; keys "
#define MARK_END ": end"

/* A Server= address: http(s), pacman's $repo and $arch allowed */
static gboolean
server_ok (const char *url)
{
  g_autofree char *plain = g_strdup (url);
  for (char *p = plain; *p; p++)
    if (*p == '$')
      *p = '_';
  return gl_repo_uri_ok (plain);
}

gboolean
gl_repo_pacman_parse (const char *text, const char *name_arg, char **name, GStrv *servers, GError **error)
{
  g_autoptr(GPtrArray) sections = NULL;
  g_autoptr(GStrvBuilder) b = g_strv_builder_new ();
  GlRepoIniSection *s;
  const char *p = text;
  guint n = 0;

  while (g_ascii_isspace (*p))
    p++;
  if (g_str_has_prefix (p, "http://") || g_str_has_prefix (p, "https://"))
    {
      g_autofree char *url = g_strstrip (g_strdup (p));
      if (!server_ok (url))
        return gl_repo_invalid (error, "“%s” is not an http:// or https:// address", url);
      *name = name_arg ? g_strdup (name_arg) : gl_repo_name_from_uri (url);
      g_strv_builder_add (b, url);
      *servers = g_strv_builder_end (b);
      return TRUE;
    }
  for (const char *c = text; *c; c++)
    if ((guchar) *c < 0x20 && *c != '\n' && *c != '\t' && *c != '\r')
      return gl_repo_invalid (error, "the repository holds control characters");
  sections = gl_repo_ini_parse (text, FALSE);
  if (sections->len != 1)
    return gl_repo_invalid (error, "give one [repository] section with Server = lines, or the server's "
                            "address (found %u sections)", sections->len);
  s = sections->pdata[0];
  if (g_str_equal (s->id, "options"))
    return gl_repo_invalid (error, "[options] is pacman's own settings, not a repository");
  for (guint i = 0; i < s->keys->len; i += 2)
    {
      const char *k = s->keys->pdata[i], *v = s->keys->pdata[i + 1];
      if (g_str_equal (k, "Server") && v && server_ok (v))
        {
          g_strv_builder_add (b, v);
          n++;
        }
      else if (g_str_equal (k, "Server"))
        return gl_repo_invalid (error, "[%s]: Server = %s: not an http:// or https:// address", s->id,
                                v ? v : "");
      else if (g_str_equal (k, "SigLevel") && v && g_str_equal (v, "Required"))
        continue;
      else if (g_str_equal (k, "SigLevel"))
        return gl_repo_invalid (error, "[%s]: SigLevel = %s: glimpse adds a repository only with "
                                "SigLevel = Required (its packages and database signed)", s->id, v ? v : "");
      else
        return gl_repo_invalid (error, "[%s]: glimpse does not add a repository with “%s” (it takes "
                                "Server = and SigLevel = Required)", s->id, k);
    }
  if (n == 0)
    return gl_repo_invalid (error, "[%s] has no Server = line", s->id);
  *name = g_strdup (name_arg ? name_arg : s->id);
  *servers = g_strv_builder_end (b);
  return TRUE;
}

char *
gl_repo_pacman_section (const char *name, const char * const *servers)
{
  GString *s = g_string_new (NULL);
  g_string_append_printf (s, "[%s]\nSigLevel = Required\n", name);
  for (gsize i = 0; servers[i]; i++)
    g_string_append_printf (s, "Server = %s\n", servers[i]);
  return g_string_free (s, FALSE);
}

char *
gl_repo_pacman_conf_add (const char *conf, const char *name, const char * const *servers,
                         const char * const *fprs)
{
  GString *s = g_string_new (conf ? conf : "");
  g_autofree char *keys = g_strjoinv (" ", (char **) fprs);
  g_autofree char *section = gl_repo_pacman_section (name, servers);
  if (s->len > 0 && s->str[s->len - 1] != '\n')
    g_string_append_c (s, '\n');
  g_string_append_printf (s, "\n" MARK_BEGIN "%s" MARK_KEYS "%s\n%s" MARK_BEGIN "%s" MARK_END "\n",
                          name, keys, section, name);
  return g_string_free (s, FALSE);
}

/* The keys of the block glimpse added for @name, or NULL when none */
static GStrv
block_keys (const char *conf, const char *name)
{
  g_autofree char *begin = g_strconcat (MARK_BEGIN, name, MARK_KEYS, NULL);
  g_auto(GStrv) lines = g_strsplit (conf ? conf : "", "\n", -1);
  for (char **l = lines; *l; l++)
    if (g_str_has_prefix (*l, begin))
      return g_strsplit (*l + strlen (begin), " ", -1);
  return NULL;
}

char *
gl_repo_pacman_conf_remove (const char *conf, const char *name, gboolean recorded, GStrv *keys)
{
  g_autofree char *begin = g_strconcat (MARK_BEGIN, name, MARK_KEYS, NULL);
  g_autofree char *end = g_strconcat (MARK_BEGIN, name, MARK_END, NULL);
  g_auto(GStrv) lines = NULL;
  GString *s;
  gboolean inside = FALSE;

  *keys = block_keys (conf, name);
  if (*keys == NULL)
    return gl_repo_ini_drop_section (conf, name, FALSE);   /* one of the base's */
  lines = g_strsplit (conf, "\n", -1);
  s = g_string_new (NULL);
  for (guint i = 0; lines[i]; i++)
    {
      if (g_str_has_prefix (lines[i], begin))
        {
          inside = TRUE;
          /* (the blank line add put before it) */
          if (s->len >= 2 && g_str_has_suffix (s->str, "\n\n"))
            g_string_truncate (s, s->len - 1);
          continue;
        }
      if (inside)
        {
          if (g_str_equal (lines[i], end))
            inside = FALSE;
          continue;
        }
      g_string_append (s, lines[i]);
      if (lines[i + 1])
        g_string_append_c (s, '\n');
    }
  /* a key another block under glimpse's marks still names stays, whether
   * glimpse recorded adding that block or not: an unrecorded one is the
   * base's or a package's, and the key it needs is no more glimpse's to
   * delete than its own (as apk keeps a key any marker names) */
  {
    g_autoptr(GStrvBuilder) b = g_strv_builder_new ();
    g_autoptr(GPtrArray) sections = gl_repo_ini_parse (s->str, FALSE);
    for (char **k = *keys; *k; k++)
      {
        gboolean used = FALSE;
        for (guint i = 0; i < sections->len && !used; i++)
          {
            g_auto(GStrv) other = block_keys (s->str, ((GlRepoIniSection *) sections->pdata[i])->id);
            used = other && g_strv_contains ((const char * const *) other, *k);
          }
        if (!used && **k)
          g_strv_builder_add (b, *k);
      }
    g_strfreev (*keys);
    /* a block like glimpse's that glimpse did not record adding (the
     * base's, a package's) goes, its keys are not glimpse's to delete */
    *keys = recorded ? g_strv_builder_end (b) : NULL;
  }
  return g_string_free (s, FALSE);
}

static const char add_script[] =
  "set -e\n"
  "name=$1; shift\n"
  /* the sandbox's own keyring (a base's post-create normally made it) */
  "if [ ! -f /etc/pacman.d/gnupg/pubring.gpg ] && [ ! -f /etc/pacman.d/gnupg/pubring.kbx ]; then\n"
  "  pacman-key --init\n"
  "fi\n"
  "pacman-key --add /run/glimpse-input/key\n"
  "for f in \"$@\"; do pacman-key --lsign-key \"$f\"; done\n"
  "cp /run/glimpse-input/pacman.conf /etc/pacman.conf; chmod 0644 /etc/pacman.conf\n"
  /* this repository alone, with a configuration and databases of its own:
   * its database must answer and verify */
  "mkdir -p /tmp/glimpse-only/db\n"
  "pacman -Sy --config /run/glimpse-input/only.conf --dbpath /tmp/glimpse-only/db\n";

static const char remove_script[] =
  "set -e\n"
  "cp /run/glimpse-input/pacman.conf /etc/pacman.conf; chmod 0644 /etc/pacman.conf\n"
  "for f in \"$@\"; do pacman-key --delete \"$f\" || :; done\n";

gboolean
gl_repo_pacman_add (GlSandbox *sandbox, const char *spec, const char *key_arg, const char *name_arg,
                    GlPkgProgress progress, gpointer user_data, GCancellable *cancellable, GError **error)
{
  g_autofree char *text = NULL, *name = NULL, *conf = NULL, *new_conf = NULL, *section = NULL;
  g_autofree char *only = NULL, *what = NULL;
  g_auto(GStrv) servers = NULL, fprs = NULL;
  g_autoptr(GBytes) key = NULL, conf_bytes = NULL, only_bytes = NULL;
  g_autoptr(GPtrArray) args = g_ptr_array_new ();

  if (g_file_test (spec, G_FILE_TEST_IS_REGULAR) && !g_file_get_contents (spec, &text, NULL, error))
    return FALSE;
  if (!gl_repo_pacman_parse (text ? text : spec, name_arg, &name, &servers, error))
    {
      g_prefix_error (error, "Bad repository: ");
      return FALSE;
    }
  if (!gl_repo_name_validate (name, error))
    return FALSE;
  if (key_arg == NULL)
    return gl_repo_invalid (error, "give the repository's signing key with --key FILE|URL (it is added "
                            "to the sandbox's own pacman keyring)");
  key = gl_repo_read_key (key_arg, cancellable, error);
  if (key == NULL)
    return FALSE;
  fprs = gl_repo_key_fingerprints (key, error);
  if (fprs == NULL)
    {
      g_prefix_error (error, "Bad key %s: ", key_arg);
      return FALSE;
    }
  conf = gl_repo_read_sandbox_file (sandbox, "etc/pacman.conf");
  if (conf == NULL)
    return gl_repo_invalid (error, "“%s” has no /etc/pacman.conf", sandbox->id);
  {
    g_autoptr(GPtrArray) sections = gl_repo_ini_parse (conf, FALSE);
    for (guint i = 0; i < sections->len; i++)
      if (g_str_equal (((GlRepoIniSection *) sections->pdata[i])->id, name))
        return gl_repo_invalid (error, "“%s” already has a repository [%s]; give another --name", sandbox->id,
                                name);
  }
  new_conf = gl_repo_pacman_conf_add (conf, name, (const char * const *) servers, (const char * const *) fprs);
  section = gl_repo_pacman_section (name, (const char * const *) servers);
  only = g_strdup_printf ("[options]\nArchitecture = auto\nSigLevel = Required\n\n%s", section);
  conf_bytes = g_bytes_new (new_conf, strlen (new_conf));
  only_bytes = g_bytes_new (only, strlen (only));
  g_ptr_array_add (args, name);
  for (char **f = fprs; *f; f++)
    g_ptr_array_add (args, *f);
  g_ptr_array_add (args, NULL);
  what = g_strdup_printf ("adding the repository %s (%s) to “%s”", name, servers[0], sandbox->id);
  {
    const GlRepoInput inputs[] = { { "pacman.conf", conf_bytes }, { "only.conf", only_bytes },
                                   { "key", key }, { NULL, NULL } };
    return gl_repo_change (sandbox, what, inputs, add_script, (const char * const *) args->pdata,
                           (const char * const *) servers, name, NULL, progress, user_data, cancellable,
                           error);
  }
}

gboolean
gl_repo_pacman_remove (GlSandbox *sandbox, const char *name, GlPkgProgress progress, gpointer user_data,
                       GCancellable *cancellable, GError **error)
{
  g_autofree char *conf = gl_repo_read_sandbox_file (sandbox, "etc/pacman.conf");
  g_autofree char *rest = NULL, *what = NULL;
  g_auto(GStrv) keys = NULL;
  g_autoptr(GBytes) rest_bytes = NULL;

  if (conf != NULL && !g_str_equal (name, "options"))
    rest = gl_repo_pacman_conf_remove (conf, name, gl_repo_recorded (sandbox, name), &keys);
  if (rest == NULL || g_str_equal (rest, conf))
    {
      return gl_repo_not_found (sandbox, name, error);
    }
  rest_bytes = g_bytes_new (rest, strlen (rest));
  what = g_strdup_printf ("removing the repository %s from “%s”", name, sandbox->id);
  {
    const GlRepoInput inputs[] = { { "pacman.conf", rest_bytes }, { NULL, NULL } };
    return gl_repo_change (sandbox, what, inputs, remove_script, (const char * const *) (keys ? keys : NULL),
                           NULL, NULL, name, progress, user_data, cancellable, error);
  }
}

GPtrArray *
gl_repo_pacman_list (GlSandbox *sandbox, GError **error)
{
  g_autofree char *conf = gl_repo_read_sandbox_file (sandbox, "etc/pacman.conf");
  g_autoptr(GPtrArray) sections = gl_repo_ini_parse (conf, FALSE);
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) gl_repo_entry_free);

  for (guint i = 0; i < sections->len; i++)
    {
      GlRepoIniSection *s = sections->pdata[i];
      const char *server = gl_repo_ini_get (s, "Server");
      const char *include = gl_repo_ini_get (s, "Include");
      g_auto(GStrv) keys = NULL;
      GlRepoEntry *e;
      if (g_str_equal (s->id, "options"))
        continue;
      keys = block_keys (conf, s->id);
      e = g_new0 (GlRepoEntry, 1);
      e->name = g_strdup (s->id);
      e->file = g_strdup ("/etc/pacman.conf");
      e->summary = server ? g_strdup (server) : include ? g_strdup_printf ("Include = %s", include)
                                                        : g_strdup ("(no server)");
      e->added = keys != NULL && gl_repo_recorded (sandbox, s->id);
      g_ptr_array_add (out, e);
    }
  return out;
}
