/* gl-repo-dnf.c: the repositories of a dnf sandbox (see gl-repo.h)
 *
 * A repository glimpse adds is /etc/yum.repos.d/glimpse-NAME.repo with one
 * section [NAME], gpgcheck=1 always, and its key (--key) under
 * /etc/pki/rpm-gpg/glimpse-NAME.{asc,gpg}, named by that section's gpgkey=
 * only: nothing is imported into rpm's database by glimpse, so the key is
 * trusted for that repository (dnf imports it when a package of it is
 * first installed, as it does for every repository).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-repo-private.h"

#include "gl-download.h"

#define REPO_MAX (64 * 1024)

/* The keys a .repo of glimpse may carry; anything else (sslverify,
 * sslcacert, proxy, username, password…) is refused. */
static const char * const allowed_keys[] = {
  "name", "baseurl", "metalink", "mirrorlist", "enabled", "gpgcheck", "repo_gpgcheck", "gpgkey",
  "type", "skip_if_unavailable", "metadata_expire", "priority", "cost", "countme",
  "module_hotfixes", "enabled_metadata", "timeout", "retries", "minrate", "max_parallel_downloads",
  "deltarpm", "fastestmirror", "excludepkgs", "exclude", "includepkgs", "autorefresh", NULL
};

static gboolean
is_true (const char *v)
{
  return g_ascii_strcasecmp (v, "1") == 0 || g_ascii_strcasecmp (v, "yes") == 0
         || g_ascii_strcasecmp (v, "true") == 0 || g_ascii_strcasecmp (v, "on") == 0;
}

/* Addresses in a value (baseurl takes several, separated by spaces or
 * commas); dnf's $releasever and $basearch may appear. */
static gboolean
urls_ok (const char *key, const char *value, gboolean file_keys_ok, GError **error)
{
  g_auto(GStrv) words = g_strsplit_set (value, " \t,", -1);
  guint n = 0;
  for (char **w = words; *w; w++)
    {
      g_autofree char *plain = NULL;
      if (**w == '\0')
        continue;
      n++;
      /* (the variables and a query are words; the rest must be an address
       * glimpse accepts) */
      plain = g_strdup (*w);
      for (char *p = plain; *p; p++)
        if (strchr ("${}?&", *p))
          *p = '_';
      if (gl_repo_uri_ok (plain))
        continue;
      if (file_keys_ok && g_str_has_prefix (*w, "file:///etc/pki/rpm-gpg/") && !strstr (*w, "..")
          && strlen (*w) > 24)
        continue;
      return gl_repo_invalid (error, "%s=%s: “%s” is not an http:// or https:// address%s", key, value, *w,
                              file_keys_ok ? " or a key under file:///etc/pki/rpm-gpg/" : "");
    }
  if (n == 0)
    return gl_repo_invalid (error, "%s= is empty", key);
  return TRUE;
}

GlRepoIniSection *
gl_repo_dnf_parse (const char *text, gboolean have_key, GError **error)
{
  g_autoptr(GPtrArray) sections = NULL;
  GlRepoIniSection *s;
  gboolean where = FALSE;

  if (text == NULL || strlen (text) > REPO_MAX)
    return gl_repo_invalid (error, "the .repo is larger than 64 KiB"), NULL;
  for (const char *p = text; *p; p++)
    if ((guchar) *p < 0x20 && *p != '\n' && *p != '\t' && *p != '\r')
      return gl_repo_invalid (error, "the .repo holds control characters"), NULL;
  sections = gl_repo_ini_parse (text, TRUE);
  if (sections->len == 0)
    return gl_repo_invalid (error, "no [repository] section in it"), NULL;
  if (sections->len > 1)
    return gl_repo_invalid (error, "one repository at a time (found %u sections); run add-repo once for each",
                            sections->len), NULL;
  s = sections->pdata[0];
  for (guint i = 0; i + 1 <= s->keys->len; i += 2)
    {
      const char *k = s->keys->pdata[i], *v = s->keys->pdata[i + 1];
      if (!g_strv_contains (allowed_keys, k))
        return gl_repo_invalid (error, "[%s]: glimpse does not add a repository with “%s” (it accepts %s)",
                                s->id, k, "name, baseurl, metalink, mirrorlist, gpgkey, repo_gpgcheck and "
                                "the download settings"), NULL;
      if (v == NULL || *v == '\0')
        return gl_repo_invalid (error, "[%s]: “%s” has no value", s->id, k), NULL;
      if (g_str_equal (k, "gpgcheck") && !is_true (v))
        return gl_repo_invalid (error, "[%s]: gpgcheck=%s turns off the packages' signature checks; glimpse "
                                "does not add such a repository", s->id, v), NULL;
      if (g_str_equal (k, "baseurl") || g_str_equal (k, "metalink") || g_str_equal (k, "mirrorlist"))
        {
          if (!urls_ok (k, v, FALSE, error))
            return NULL;
          where = TRUE;
        }
      if (g_str_equal (k, "gpgkey") && !urls_ok (k, v, TRUE, error))
        return NULL;
      if (strchr (v, '\r'))
        return gl_repo_invalid (error, "[%s]: a carriage return in “%s”", s->id, k), NULL;
    }
  if (!where)
    return gl_repo_invalid (error, "[%s]: no baseurl=, metalink= or mirrorlist=", s->id), NULL;
  if (!have_key && gl_repo_ini_get (s, "gpgkey") == NULL)
    return gl_repo_invalid (error, "[%s] names no gpgkey=: give the repository's signing key with --key "
                            "FILE|URL (it is kept for this repository only)", s->id), NULL;
  return g_ptr_array_steal_index (sections, 0);
}

char *
gl_repo_dnf_render (GlRepoIniSection *repo, const char *name, const char *keyfile)
{
  GString *s = g_string_new ("# Added by glimpse add-repo; its key is trusted for this repository only.\n");
  g_string_append_printf (s, "[%s]\n", name);
  for (guint i = 0; i + 1 < repo->keys->len; i += 2)
    {
      const char *k = repo->keys->pdata[i], *v = repo->keys->pdata[i + 1];
      if (g_str_equal (k, "gpgcheck") || (keyfile && g_str_equal (k, "gpgkey")))
        continue;
      g_string_append_printf (s, "%s=%s\n", k, v);
    }
  g_string_append (s, "gpgcheck=1\n");
  if (keyfile)
    g_string_append_printf (s, "gpgkey=file://%s\n", keyfile);
  return g_string_free (s, FALSE);
}

/* The addresses dnf downloads from for @repo, @first first: its
 * baseurls, metalink, mirrorlist and http(s) keys */
static GStrv
allowed_urls (GlRepoIniSection *repo, const char *first)
{
  g_autoptr(GStrvBuilder) b = g_strv_builder_new ();
  const char *keys[] = { "baseurl", "metalink", "mirrorlist", "gpgkey" };
  g_strv_builder_add (b, first);
  for (gsize k = 0; k < G_N_ELEMENTS (keys); k++)
    {
      const char *v = gl_repo_ini_get (repo, keys[k]);
      g_auto(GStrv) words = g_strsplit_set (v ? v : "", " \t,", -1);
      for (char **w = words; *w; w++)
        if ((g_str_has_prefix (*w, "http://") || g_str_has_prefix (*w, "https://")) && !g_str_equal (*w, first))
          g_strv_builder_add (b, *w);
    }
  return g_strv_builder_end (b);
}

static char *
read_spec (const char *spec, GCancellable *cancellable, GError **error)
{
  char *text = NULL;
  gsize len = 0;

  if ((g_str_has_prefix (spec, "http://") || g_str_has_prefix (spec, "https://")) && !strchr (spec, '\n'))
    {
      if (!g_str_has_suffix (spec, ".repo"))
        {
          g_autofree char *name = gl_repo_name_from_uri (spec);
          return g_strdup_printf ("[%s]\nbaseurl=%s\n", name, spec);
        }
      text = gl_download_to_string (spec, &len, cancellable, error);
      if (text == NULL)
        g_prefix_error (error, "Cannot fetch %s: ", spec);
      return text;
    }
  if (strchr (spec, '[') && strchr (spec, '='))
    return g_strdup (spec);
  if (g_file_test (spec, G_FILE_TEST_IS_REGULAR))
    {
      if (!g_file_get_contents (spec, &text, &len, error))
        return NULL;
      return text;
    }
  return gl_repo_invalid (error, "“%s” is not a repository: give a .repo file, its http(s) address, "
                          "its text, or the repository's baseurl", spec), NULL;
}

static const char add_script[] =
  "set -e\n"
  "name=$1; keyfile=$2\n"
  "mkdir -p /etc/yum.repos.d /etc/pki/rpm-gpg\n"
  "if [ -n \"$keyfile\" ]; then cp /run/glimpse-input/key \"$keyfile\"; chmod 0644 \"$keyfile\"; fi\n"
  "cp /run/glimpse-input/glimpse.repo \"/etc/yum.repos.d/glimpse-$name.repo\"\n"
  "chmod 0644 \"/etc/yum.repos.d/glimpse-$name.repo\"\n"
  /* this repository alone, which must answer (and whose repomd.xml must
   * verify when repo_gpgcheck=1) */
  "dnf -y makecache --repo=\"$name\" --setopt=\"$name.skip_if_unavailable=0\"\n";

gboolean
gl_repo_dnf_add (GlSandbox *sandbox, const char *spec, const char *key_arg, const char *name_arg,
                 GlPkgProgress progress, gpointer user_data, GCancellable *cancellable, GError **error)
{
  g_autofree char *text = NULL, *name = NULL, *keyfile = NULL, *repo_text = NULL, *what = NULL;
  g_autoptr(GlRepoIniSection) repo = NULL;
  g_autoptr(GBytes) key = NULL, repo_bytes = NULL;
  g_auto(GStrv) fprs = NULL;
  const char *where;

  text = read_spec (spec, cancellable, error);
  if (text == NULL)
    return FALSE;
  repo = gl_repo_dnf_parse (text, key_arg != NULL, error);
  if (repo == NULL)
    {
      g_prefix_error (error, "Bad repository: ");
      return FALSE;
    }
  name = g_strdup (name_arg ? name_arg : repo->id);
  if (!gl_repo_name_validate (name, error))
    {
      if (name_arg == NULL)
        g_prefix_error (error, "give the repository a name with --name: ");
      return FALSE;
    }
  if (key_arg)
    {
      key = gl_repo_read_key (key_arg, cancellable, error);
      if (key == NULL)
        return FALSE;
      fprs = gl_repo_key_fingerprints (key, error);
      if (fprs == NULL)
        {
          g_prefix_error (error, "Bad key %s: ", key_arg);
          return FALSE;
        }
      keyfile = g_strdup_printf ("/etc/pki/rpm-gpg/glimpse-%s.%s", name,
                                 gl_repo_key_is_armored (key) ? "asc" : "gpg");
    }
  repo_text = gl_repo_dnf_render (repo, name, keyfile);
  {
    gsize n = strlen (repo_text);
    repo_bytes = g_bytes_new_take (g_steal_pointer (&repo_text), n);
  }
  where = gl_repo_ini_get (repo, "baseurl");
  if (where == NULL)
    where = gl_repo_ini_get (repo, "metalink");
  if (where == NULL)
    where = gl_repo_ini_get (repo, "mirrorlist");
  what = g_strdup_printf ("adding the repository %s (%s) to “%s”", name, where, sandbox->id);
  {
    const GlRepoInput inputs[] = { { "glimpse.repo", repo_bytes }, { "key", key }, { NULL, NULL } };
    const char *args[] = { name, keyfile ? keyfile : "", NULL };
    g_auto(GStrv) allow = allowed_urls (repo, where);
    return gl_repo_change (sandbox, what, inputs, add_script, args, (const char * const *) allow, name, NULL,
                           progress, user_data, cancellable, error);
  }
}

/* The sections of the sandbox's .repo files: (file inside, section) */
typedef struct {
  char *file;
  GlRepoIniSection *section;
} Found;

static void
found_free (Found *f)
{
  g_free (f->file);
  gl_repo_ini_section_free (f->section);
  g_free (f);
}

static GPtrArray *
all_sections (GlSandbox *sandbox, GHashTable **texts)
{
  const char *suffixes[] = { ".repo", NULL };
  g_autoptr(GHashTable) files = gl_repo_view_dir (sandbox, "etc/yum.repos.d", suffixes);
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) found_free);
  GHashTableIter it;
  gpointer k, v;

  if (texts)
    *texts = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_hash_table_iter_init (&it, files);
  while (g_hash_table_iter_next (&it, &k, &v))
    {
      const char *inside = v;
      char *text = gl_repo_read_sandbox_file (sandbox, inside + 1);
      g_autoptr(GPtrArray) sections = gl_repo_ini_parse (text, TRUE);
      while (sections->len > 0)
        {
          Found *f = g_new0 (Found, 1);
          f->file = g_strdup (inside);
          f->section = g_ptr_array_steal_index (sections, 0);
          g_ptr_array_add (out, f);
        }
      if (texts)
        g_hash_table_insert (*texts, g_strdup (inside), text);
      else
        g_free (text);
    }
  return out;
}

/* Whether the repository @name of the file @file is one glimpse added: in
 * the glimpse-NAME.repo add-repo writes, and recorded (a file of the base's
 * or a package's named like it is not, nor are its keys glimpse's) */
static gboolean
added_file (GlSandbox *sandbox, const char *file, const char *name)
{
  g_autofree char *mine = g_strdup_printf ("/etc/yum.repos.d/glimpse-%s.repo", name);
  return g_str_equal (file, mine) && gl_repo_recorded (sandbox, name);
}

GPtrArray *
gl_repo_dnf_list (GlSandbox *sandbox, GError **error)
{
  g_autoptr(GPtrArray) found = all_sections (sandbox, NULL);
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) gl_repo_entry_free);

  for (guint i = 0; i < found->len; i++)
    {
      Found *f = found->pdata[i];
      GlRepoEntry *e = g_new0 (GlRepoEntry, 1);
      const char *where = gl_repo_ini_get (f->section, "baseurl");
      const char *enabled = gl_repo_ini_get (f->section, "enabled");
      if (where == NULL)
        where = gl_repo_ini_get (f->section, "metalink");
      if (where == NULL)
        where = gl_repo_ini_get (f->section, "mirrorlist");
      e->name = g_strdup (f->section->id);
      e->file = g_strdup (f->file);
      e->summary = g_strdup_printf ("%s%s", where ? where : "(no address)",
                                    enabled && !is_true (enabled) ? " (disabled)" : "");
      e->added = added_file (sandbox, f->file, f->section->id);
      g_ptr_array_add (out, e);
    }
  return out;
}

static const char remove_script[] =
  "set -e\n"
  "file=$1; name=$2; keep=$3; added=$4\n"
  "if [ \"$keep\" = yes ]; then cp /run/glimpse-input/rest.repo \"$file\"; chmod 0644 \"$file\"; "
  "else rm -f -- \"$file\"; fi\n"
  "if [ \"$added\" = yes ]; then\n"
  "  rm -f -- \"/etc/pki/rpm-gpg/glimpse-$name.asc\" \"/etc/pki/rpm-gpg/glimpse-$name.gpg\"\n"
  "fi\n"
  "rm -rf /var/cache/dnf/\"$name\"-* /var/cache/dnf/\"$name\".solv /var/cache/dnf/\"$name\"-filenames.solvx\n";

gboolean
gl_repo_dnf_remove (GlSandbox *sandbox, const char *name, GlPkgProgress progress, gpointer user_data,
                    GCancellable *cancellable, GError **error)
{
  g_autoptr(GHashTable) texts = NULL;
  g_autoptr(GPtrArray) found = all_sections (sandbox, &texts);
  g_autofree char *what = NULL, *rest = NULL;
  g_autoptr(GPtrArray) left = NULL;
  g_autoptr(GBytes) rest_bytes = NULL;
  Found *hit = NULL;

  for (guint i = 0; i < found->len && hit == NULL; i++)
    if (g_str_equal (((Found *) found->pdata[i])->section->id, name))
      hit = found->pdata[i];
  if (hit == NULL)
    {
      return gl_repo_not_found (sandbox, name, error);
    }
  /* a file of the base may hold other repositories: they stay */
  rest = gl_repo_ini_drop_section (g_hash_table_lookup (texts, hit->file), name, TRUE);
  left = gl_repo_ini_parse (rest, TRUE);
  {
    gsize n = strlen (rest);
    rest_bytes = g_bytes_new_take (g_steal_pointer (&rest), n);
  }
  what = g_strdup_printf ("removing the repository %s from “%s”", name, sandbox->id);
  {
    gboolean added = added_file (sandbox, hit->file, name);
    const GlRepoInput inputs[] = { { "rest.repo", rest_bytes }, { NULL, NULL } };
    const char *args[] = { hit->file, name, left->len > 0 ? "yes" : "no", added ? "yes" : "no", NULL };
    return gl_repo_change (sandbox, what, inputs, remove_script, args, NULL, NULL,
                           name, progress, user_data, cancellable, error);
  }
}
