/* gl-repo.c: a sandbox's package repositories (see gl-repo.h)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-repo.h"
#include "gl-repo-private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "gl-apt-sources.h"
#include "gl-download.h"
#include "gl-config.h"
#include "gl-fsutil.h"
#include "gl-spawn.h"

#define KEY_MAX (1024 * 1024)

void
gl_repo_source_free (GlRepoSource *source)
{
  if (source == NULL)
    return;
  g_strfreev (source->types);
  g_strfreev (source->uris);
  g_strfreev (source->suites);
  g_strfreev (source->components);
  g_strfreev (source->architectures);
  g_free (source);
}

void
gl_repo_entry_free (GlRepoEntry *entry)
{
  if (entry == NULL)
    return;
  g_free (entry->name);
  g_free (entry->file);
  g_free (entry->summary);
  g_free (entry);
}

gboolean
gl_repo_invalid (GError **error, const char *format, ...)
{
  va_list ap;
  g_autofree char *msg = NULL;
  va_start (ap, format);
  msg = g_strdup_vprintf (format, ap);
  va_end (ap);
  g_set_error_literal (error, GL_PKG_ERROR, GL_PKG_ERROR_INVALID, msg);
  return FALSE;
}

/* Words of a value: letters, digits and -._~+/:=@% only (no quoting, no
 * shell or apt syntax). */
static gboolean
word_ok (const char *w)
{
  if (*w == '\0' || strlen (w) > 512)
    return FALSE;
  for (const char *p = w; *p; p++)
    if (!g_ascii_isalnum (*p) && !strchr ("-._~+/:=@%", *p))
      return FALSE;
  return TRUE;
}

gboolean
gl_repo_not_found (GlSandbox *sandbox, const char *name, GError **error)
{
  g_set_error (error, GL_STORE_ERROR, GL_STORE_ERROR_NOT_FOUND,
               "“%s” has no repository “%s”; “glimpse repos %s” lists them", sandbox->id, name,
               sandbox->id);
  return FALSE;
}

gboolean
gl_repo_uri_ok (const char *u)
{
  return (g_str_has_prefix (u, "http://") || g_str_has_prefix (u, "https://")) && word_ok (u)
         && strlen (u) > 8;
}

static void
add_unique (GPtrArray *a, const char *w)
{
  for (guint i = 0; i < a->len; i++)
    if (g_str_equal (a->pdata[i], w))
      return;
  g_ptr_array_add (a, g_strdup (w));
}

static GStrv
steal_strv (GPtrArray *a)
{
  g_ptr_array_add (a, NULL);
  return (GStrv) g_ptr_array_free (a, FALSE);
}

/* The text as apt reads it (gl-apt-sources), then what glimpse accepts of
 * it: enabled http(s) entries of one repository, no key of their own, no
 * trusted=yes, and values that are plain words. */
GlRepoSource *
gl_repo_source_parse (const char *text, GError **error)
{
  g_autoptr(GPtrArray) entries = NULL;
  g_autoptr(GPtrArray) types = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) uris = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) suites = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) comps = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) arches = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GError) local = NULL;
  const char *p = text;
  GlRepoSource *s;

  while (g_ascii_isspace (*p))
    p++;
  if (g_str_has_prefix (p, "deb") && (p[3] == '\0' || g_ascii_isspace (p[3]) || g_str_has_prefix (p, "deb-src")))
    entries = gl_apt_sources_parse_one_line ("the repository", text, &local);
  else if (*p != '\0')
    entries = gl_apt_sources_parse_deb822 ("the repository", text, &local);
  else
    return gl_repo_invalid (error, "the repository is empty"), NULL;
  /* (a syntax error alone does not say what was expected: a mistyped
   * "deb" line reads as deb822 that "lacks Types") */
  if (entries == NULL)
    return gl_repo_invalid (error, "%s; give a “deb URI SUITE [COMPONENT…]” line, quoted as one "
                            "argument, deb822 text (Types:, URIs:, Suites:, Components:) or a file "
                            "holding either", local->message), NULL;
  for (guint i = 0; i < entries->len; i++)
    {
      GlAptSource *e = entries->pdata[i];
      if (!e->enabled)
        continue;
      if (e->signed_by || e->fingerprints || e->inline_key)
        return gl_repo_invalid (error, "give the key with --key instead of Signed-By or signed-by= (glimpse "
                        "keeps each repository's key beside it)"), NULL;
      if (e->trusted)
        return gl_repo_invalid (error, "%s: trusted=yes turns off signature checks; glimpse does not add "
                        "such a repository", e->where), NULL;
      if (!gl_repo_uri_ok (e->uri))
        return gl_repo_invalid (error, "“%s”: the address must be http:// or https://", e->uri), NULL;
      if (!word_ok (e->suite))
        return gl_repo_invalid (error, "%s: bad suite “%s”", e->where, e->suite), NULL;
      if (e->components[0] == NULL && !g_str_has_suffix (e->suite, "/"))
        return gl_repo_invalid (error, "%s: no components (e.g. “main”): only a flat repository (suite "
                        "ending in “/”) has none", e->where), NULL;
      add_unique (types, e->deb_src ? "deb-src" : "deb");
      add_unique (uris, e->uri);
      add_unique (suites, e->suite);
      for (char **c = e->components; *c; c++)
        if (!word_ok (*c))
          return gl_repo_invalid (error, "%s: bad component “%s”", e->where, *c), NULL;
        else
          add_unique (comps, *c);
      for (char **a = e->archs; a && *a; a++)
        if (!word_ok (*a))
          return gl_repo_invalid (error, "%s: bad architecture “%s”", e->where, *a), NULL;
        else
          add_unique (arches, *a);
    }
  if (uris->len == 0)
    return gl_repo_invalid (error, "no enabled repository in it"), NULL;
  if (uris->len > 1)
    return gl_repo_invalid (error, "one repository at a time (found %u addresses); run add-repo once for each",
                    uris->len), NULL;
  s = g_new0 (GlRepoSource, 1);
  s->types = steal_strv (g_steal_pointer (&types));
  s->uris = steal_strv (g_steal_pointer (&uris));
  s->suites = steal_strv (g_steal_pointer (&suites));
  s->components = steal_strv (g_steal_pointer (&comps));
  s->architectures = steal_strv (g_steal_pointer (&arches));
  return s;
}

char *
gl_repo_source_to_deb822 (GlRepoSource *source, const char *keyring)
{
  GString *s = g_string_new ("# Added by glimpse add-repo; its key is trusted for this repository only.\n");
  g_autofree char *types = g_strjoinv (" ", source->types);
  g_autofree char *uris = g_strjoinv (" ", source->uris);
  g_autofree char *suites = g_strjoinv (" ", source->suites);
  g_string_append_printf (s, "Types: %s\nURIs: %s\nSuites: %s\n", types, uris, suites);
  if (source->components[0])
    {
      g_autofree char *c = g_strjoinv (" ", source->components);
      g_string_append_printf (s, "Components: %s\n", c);
    }
  if (source->architectures[0])
    {
      g_autofree char *a = g_strjoinv (" ", source->architectures);
      g_string_append_printf (s, "Architectures: %s\n", a);
    }
  g_string_append_printf (s, "Signed-By: %s\n", keyring);
  return g_string_free (s, FALSE);
}

gboolean
gl_repo_name_validate (const char *name, GError **error)
{
  gsize len = strlen (name);
  if (len > 0 && len <= 64 && (g_ascii_islower (name[0]) || g_ascii_isdigit (name[0])))
    {
      const char *p;
      for (p = name; *p; p++)
        if (!g_ascii_islower (*p) && !g_ascii_isdigit (*p) && !strchr ("._-", *p))
          break;
      if (*p == '\0')
        return TRUE;
    }
  return gl_repo_invalid (error, "“%s” is not a repository name (lower-case letters, digits, “.”, “_”, “-”, "
                  "at most 64, starting with a letter or digit)", name);
}

char *
gl_repo_name_from_uri (const char *uri)
{
  const char *p = strstr (uri, "://");
  GString *s = g_string_new (NULL);
  p = p ? p + 3 : uri;
  for (; *p && s->len < 64; p++)
    {
      char c = g_ascii_tolower (*p);
      if (g_ascii_isalnum (c) || c == '.')
        g_string_append_c (s, c);
      else if (s->len > 0 && s->str[s->len - 1] != '-')
        g_string_append_c (s, '-');
    }
  while (s->len > 0 && (s->str[s->len - 1] == '-' || s->str[s->len - 1] == '.'))
    g_string_truncate (s, s->len - 1);
  if (s->len == 0)
    g_string_append (s, "repo");
  return g_string_free (s, FALSE);
}

GStrv
gl_repo_key_fingerprints (GBytes *key, GError **error)
{
  g_autofree char *home = g_dir_make_tmp ("glimpse-gpg-XXXXXX", error);
  g_autofree char *file = NULL, *out = NULL;
  g_autoptr(GPtrArray) fprs = g_ptr_array_new_with_free_func (g_free);
  g_auto(GStrv) lines = NULL;
  g_auto(GlSpawnResult) result = { 0 };
  GlSpawnOptions options = { .output = GL_SPAWN_OUTPUT_CAPTURE };
  g_autoptr(GError) local = NULL;
  gboolean in_pub = FALSE, secret = FALSE;
  gboolean ok;

  if (home == NULL)
    return NULL;
  file = g_build_filename (home, "key", NULL);
  {
    const char *argv[] = { "gpg", "--batch", "--no-options", "--no-default-keyring", "--homedir",
                           home, "--with-colons", "--show-keys", file, NULL };
    ok = g_file_set_contents (file, g_bytes_get_data (key, NULL), (gssize) g_bytes_get_size (key), error)
         && (gl_spawn_run (argv, &options, &result, NULL, &local) || local->domain == GL_SPAWN_ERROR);
    if (!ok && local)
      g_propagate_error (error, g_steal_pointer (&local));
  }
  gl_rm_rf (home, NULL, NULL);
  if (!ok)
    return NULL;
  if (local != NULL)
    {
      g_autofree char *err = result.err ? g_strndup (g_bytes_get_data (result.err, NULL),
                                                     MIN (g_bytes_get_size (result.err), 500)) : g_strdup ("");
      g_auto(GStrv) err_lines = g_strsplit (err, "\n", -1);
      g_autoptr(GString) why = g_string_new (NULL);

      /* gpg's own words, on one line: without its "gpg: " prefixes and
       * the note about the keybox it made in its temporary home */
      for (char **l = err_lines; *l; l++)
        {
          const char *t = g_str_has_prefix (*l, "gpg: ") ? *l + strlen ("gpg: ") : *l;
          g_autofree char *line = g_strstrip (g_strdup (t));

          if (*line == '\0' || (g_str_has_prefix (line, "keybox ") && g_str_has_suffix (line, " created")))
            continue;
          if (why->len > 0)
            g_string_append (why, "; ");
          g_string_append (why, line);
        }
      gl_repo_invalid (error, "it is not an OpenPGP public key (gpg: %s); give --key the repository's "
                       "public signing key, as a file or URL (.asc or .gpg)",
                       why->len > 0 ? why->str : "no key found");
      return NULL;
    }
  out = g_strndup (g_bytes_get_data (result.out, NULL), g_bytes_get_size (result.out));
  lines = g_strsplit (out, "\n", -1);
  for (char **l = lines; *l; l++)
    {
      if (g_str_has_prefix (*l, "pub:"))
        in_pub = TRUE;
      else if (g_str_has_prefix (*l, "sec:") || g_str_has_prefix (*l, "ssb:"))
        secret = TRUE;
      else if (g_str_has_prefix (*l, "sub:"))
        in_pub = FALSE;
      else if (g_str_has_prefix (*l, "fpr:") && in_pub)
        {
          g_auto(GStrv) f = g_strsplit (*l, ":", -1);
          if (g_strv_length (f) > 9 && f[9][0])
            g_ptr_array_add (fprs, g_ascii_strup (f[9], -1));
          in_pub = FALSE;
        }
    }
  if (secret)
    {
      gl_repo_invalid (error, "the key file holds a secret key; give the repository's public key only");
      return NULL;
    }
  if (fprs->len == 0)
    {
      gl_repo_invalid (error, "the key file holds no OpenPGP public key");
      return NULL;
    }
  return steal_strv (g_steal_pointer (&fprs));
}

GBytes *
gl_repo_read_key (const char *key, GCancellable *cancellable, GError **error)
{
  gsize len = 0;
  char *data = NULL;

  if (g_str_has_prefix (key, "http://") || g_str_has_prefix (key, "https://"))
    {
      data = gl_download_to_string (key, &len, cancellable, error);
      if (data == NULL)
        {
          g_prefix_error (error, "Cannot fetch the key %s: ", key);
          return NULL;
        }
    }
  else
    {
      struct stat st;
      if (stat (key, &st) == 0 && (!S_ISREG (st.st_mode) || st.st_size > KEY_MAX))
        return gl_repo_invalid (error, "The key %s is not a regular file of at most 1 MiB", key), NULL;
      if (!g_file_get_contents (key, &data, &len, error))
        {
          g_prefix_error (error, "Cannot read the key: ");
          return NULL;
        }
    }
  if (len > KEY_MAX)
    {
      g_free (data);
      return gl_repo_invalid (error, "The key %s is larger than 1 MiB", key), NULL;
    }
  return g_bytes_new_take (data, len);
}

gboolean
gl_repo_key_is_armored (GBytes *key)
{
  gsize len;
  const char *d = g_bytes_get_data (key, &len);
  return len > 36 && g_strstr_len (d, (gssize) MIN (len, 4096), "-----BEGIN PGP PUBLIC KEY BLOCK-----") != NULL;
}

/* ------------------------------------------------------------ ppa: */

/* $ENV when set, else the [Packages] setting of /etc/glimpse/glimpse.conf
 * (gl-config.h) @field picks, else @fallback: Launchpad's own public
 * addresses (tests and mirrors of Launchpad set the others).  A
 * glimpse.conf that cannot be read is an error, not the public address. */
static char *
setting (const char *env, char *(*field) (GlConfig *c), const char *fallback, GError **error)
{
  const char *v = g_getenv (env);
  g_autoptr(GlConfig) conf = NULL;

  if (v && *v)
    return g_strdup (v);
  conf = gl_config_load_default (error);
  if (conf == NULL)
    return NULL;
  return g_strdup (field (conf) != NULL ? field (conf) : fallback);
}

static char *
launchpad_api (GlConfig *c)
{
  return c->launchpad_api;
}

static char *
ppa_archive (GlConfig *c)
{
  return c->ppa_archive;
}

char *
gl_repo_launchpad_api (GError **error)
{
  return setting ("GLIMPSE_LAUNCHPAD_API", launchpad_api, "https://api.launchpad.net/devel", error);
}

/* Where PPAs' archives are: GLIMPSE_PPA_ARCHIVE, PPAArchive= */
static char *
ppa_archive_base (GError **error)
{
  return setting ("GLIMPSE_PPA_ARCHIVE", ppa_archive, "https://ppa.launchpadcontent.net", error);
}

/* The value of a top-level JSON string field, unescaped (the answers are
 * flat objects; nested ones are not needed). */
static char *
json_string (const char *json, const char *field)
{
  g_autofree char *needle = g_strdup_printf ("\"%s\"", field);
  const char *p = strstr (json, needle);
  GString *s;
  if (p == NULL)
    return NULL;
  p += strlen (needle);
  while (g_ascii_isspace (*p))
    p++;
  if (*p++ != ':')
    return NULL;
  while (g_ascii_isspace (*p))
    p++;
  if (*p != '"')
    return NULL;
  s = g_string_new (NULL);
  for (p++; *p && *p != '"'; p++)
    {
      if (*p != '\\')
        {
          g_string_append_c (s, *p);
          continue;
        }
      p++;
      switch (*p)
        {
        case 'n': g_string_append_c (s, '\n'); break;
        case 't': g_string_append_c (s, '\t'); break;
        case 'r': break;
        case '"': case '\\': case '/': g_string_append_c (s, *p); break;
        default:
          g_string_free (s, TRUE);
          return NULL;
        }
    }
  if (*p != '"')
    {
      g_string_free (s, TRUE);
      return NULL;
    }
  return g_string_free (s, FALSE);
}

/* A JSON document that is one string (getSigningKeyData) */
static char *
json_top_string (const char *json)
{
  g_autofree char *wrapped = g_strdup_printf ("{\"v\": %s}", g_strstrip ((char *) json));
  return json_string (wrapped, "v");
}

/* The sandbox's file @rel, system layer first, walked with @flags. */
static char *
read_sandbox_file (GlSandbox *sandbox, const char *rel, GlViewFlags flags)
{
  g_autofree char *tree = gl_pkg_current_tree (sandbox);
  g_autofree char *rootfs = gl_sandbox_get_rootfs (sandbox);
  const char *roots[] = { tree, rootfs ? rootfs : "/" };
  char *text = NULL;

  /* (the layers are the sandbox's, read as root: no FIFO, device or huge
   * file read; whiteouts and opaque directories hide what is below, as in
   * the view; a link is followed only with GL_VIEW_FOLLOW_LINKS, and then
   * inside the view) */
  if (gl_view_read_file_full (roots, G_N_ELEMENTS (roots), rel, flags, 1024 * 1024, &text, NULL)
      != GL_VIEW_FILE)
    return NULL;
  return text;
}

char *
gl_repo_read_sandbox_file (GlSandbox *sandbox, const char *rel)
{
  return read_sandbox_file (sandbox, rel, GL_VIEW_NO_FLAGS);
}

char *
gl_repo_read_os_release (GlSandbox *sandbox)
{
  /* (mostly a link to ../usr/lib/os-release, or to /usr/lib/os-release;
   * read as root, over a base that may be the host's /: a link elsewhere,
   * to /etc/shadow or /proc, is not read) */
  return read_sandbox_file (sandbox, "etc/os-release", GL_VIEW_FOLLOW_LINKS | GL_VIEW_LINKS_INTO_USR);
}

/* Whether the view of @sandbox (@roots) shows a regular file at @rel */
static gboolean
view_has_file (const char * const *roots, gsize n_roots, const char *rel)
{
  int fd = -1;

  if (gl_view_open_file (roots, n_roots, rel, G_MAXSIZE, &fd) != GL_VIEW_FILE)
    return FALSE;
  close (fd);
  return TRUE;
}

static char *
os_release_value (const char *text, const char *key)
{
  g_auto(GStrv) lines = g_strsplit (text ? text : "", "\n", -1);
  for (char **l = lines; *l; l++)
    if (g_str_has_prefix (*l, key) && (*l)[strlen (key)] == '=')
      {
        char *v = *l + strlen (key) + 1;
        gsize n = strlen (v);
        if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0])
          return g_strndup (v + 1, n - 2);
        return g_strdup (v);
      }
  return NULL;
}

static gboolean
resolve_ppa (GlSandbox *sandbox, const char *spec, char **source_text, GBytes **key,
             char **name, GCancellable *cancellable, GError **error)
{
  const char *rest = spec + 4;
  g_auto(GStrv) parts = g_strsplit (rest, "/", -1);
  g_autofree char *api = NULL, *archive = NULL;
  g_autofree char *url = NULL, *json = NULL, *fpr = NULL, *keyjson = NULL, *armored = NULL;
  g_autofree char *osr = NULL, *id = NULL, *like = NULL, *codename = NULL;
  g_auto(GStrv) fprs = NULL;
  g_autoptr(GBytes) k = NULL;
  gboolean match = FALSE;

  if (g_strv_length (parts) != 2 || !gl_repo_name_validate (parts[0], NULL)
      || !gl_repo_name_validate (parts[1], NULL))
    return gl_repo_invalid (error, "“%s” is not a PPA (“ppa:OWNER/NAME”, lower-case)", spec);
  api = gl_repo_launchpad_api (error);
  archive = api ? ppa_archive_base (error) : NULL;
  if (archive == NULL)
    return FALSE;
  url = g_strdup_printf ("%s/~%s/+archive/ubuntu/%s", api, parts[0], parts[1]);
  json = gl_download_to_string (url, NULL, cancellable, error);
  if (json == NULL)
    {
      g_prefix_error (error, "Cannot look up %s at %s: ", spec, url);
      return FALSE;
    }
  fpr = json_string (json, "signing_key_fingerprint");
  if (fpr == NULL || strlen (fpr) < 16)
    return gl_repo_invalid (error, "Launchpad gives no signing key for %s (%s); it may not be built yet", spec, url);
  g_free (url);
  url = g_strdup_printf ("%s/~%s/+archive/ubuntu/%s?ws.op=getSigningKeyData", api, parts[0], parts[1]);
  keyjson = gl_download_to_string (url, NULL, cancellable, error);
  if (keyjson == NULL)
    {
      g_prefix_error (error, "Cannot fetch the signing key of %s: ", spec);
      return FALSE;
    }
  armored = json_top_string (keyjson);
  if (armored == NULL)
    return gl_repo_invalid (error, "The signing key of %s (%s) is not a JSON string", spec, url);
  k = g_bytes_new (armored, strlen (armored));
  fprs = gl_repo_key_fingerprints (k, error);
  if (fprs == NULL)
    {
      g_prefix_error (error, "The signing key of %s: ", spec);
      return FALSE;
    }
  for (char **f = fprs; *f; f++)
    if (g_ascii_strcasecmp (*f, fpr) == 0)
      match = TRUE;
  if (!match || g_strv_length (fprs) != 1)
    return gl_repo_invalid (error, "The key served for %s has the fingerprint %s, not %s as Launchpad "
                    "announces; refused (nothing was written)", spec, fprs[0], fpr);

  osr = gl_repo_read_os_release (sandbox);
  id = os_release_value (osr, "ID");
  like = os_release_value (osr, "ID_LIKE");
  codename = os_release_value (osr, "UBUNTU_CODENAME");
  if (codename == NULL)
    codename = os_release_value (osr, "VERSION_CODENAME");
  if (g_strcmp0 (id, "ubuntu") != 0 && (like == NULL || strstr (like, "ubuntu") == NULL))
    return gl_repo_invalid (error, "“%s” is not Ubuntu-based (its os-release says ID=%s); PPAs are built "
                    "for Ubuntu only", sandbox->id, id ? id : "?");
  if (codename == NULL || !word_ok (codename))
    return gl_repo_invalid (error, "“%s” has no VERSION_CODENAME in its os-release; add the PPA with "
                    "a “deb …” line instead", sandbox->id);
  *source_text = g_strdup_printf ("deb %s/%s/%s/ubuntu %s main", archive, parts[0], parts[1], codename);
  *key = g_steal_pointer (&k);
  *name = g_strdup_printf ("ppa-%s-%s", parts[0], parts[1]);
  return TRUE;
}

/* ------------------------------------------------------------ add/remove */

static gboolean
require_apt (GlSandbox *sandbox, const char *what, GError **error)
{
  if (g_strcmp0 (sandbox->family, "apt") == 0)
    return TRUE;
  g_set_error (error, GL_PKG_ERROR, GL_PKG_ERROR_UNSUPPORTED,
               "%s is supported for apt, dnf, pacman and apk sandboxes; “%s” uses %s, which has no repositories glimpse "
               "knows", what, sandbox->id,
               sandbox->family ? sandbox->family : "no package manager");
  return FALSE;
}

static void
strv_add (char ***strv, const char *s)
{
  g_autoptr(GStrvBuilder) b = g_strv_builder_new ();
  if (*strv && g_strv_contains ((const char * const *) *strv, s))
    return;
  if (*strv)
    g_strv_builder_addv (b, (const char **) *strv);
  g_strv_builder_add (b, s);
  g_strfreev (*strv);
  *strv = g_strv_builder_end (b);
}

static void
strv_remove (char ***strv, const char *s)
{
  g_autoptr(GStrvBuilder) b = g_strv_builder_new ();
  if (*strv == NULL)
    return;
  for (char **p = *strv; *p; p++)
    if (!g_str_equal (*p, s))
      g_strv_builder_add (b, *p);
  g_strfreev (*strv);
  *strv = g_strv_builder_end (b);
}

/* RepositoryURIs=: NAME=URI for each repository glimpse added */
static void
record_uri (GlSandbox *sandbox, const char *name, const char *uri)
{
  g_autoptr(GStrvBuilder) b = g_strv_builder_new ();
  g_autofree char *prefix = g_strconcat (name, "=", NULL);
  g_autofree char *entry = uri ? g_strconcat (prefix, uri, NULL) : NULL;
  for (char **p = sandbox->repository_uris; p && *p; p++)
    if (!g_str_has_prefix (*p, prefix))
      g_strv_builder_add (b, *p);
  if (entry)
    g_strv_builder_add (b, entry);
  g_strfreev (sandbox->repository_uris);
  sandbox->repository_uris = g_strv_builder_end (b);
}

gboolean
gl_repo_change (GlSandbox *sandbox, const char *what, const GlRepoInput *inputs, const char *script,
                const char * const *args, const char * const *allow, const char *added,
                const char *removed, GlPkgProgress progress, gpointer user_data,
                GCancellable *cancellable, GError **error)
{
  g_autoptr(GlPkgOp) op = gl_pkg_op_begin (sandbox, progress, user_data, error);
  const char *input;

  if (op == NULL)
    return FALSE;
  input = gl_pkg_op_get_input_dir (op);
  for (gsize i = 0; inputs && inputs[i].name; i++)
    {
      g_autofree char *path = g_build_filename (input, inputs[i].name, NULL);
      if (!g_file_set_contents_full (path, inputs[i].data ? g_bytes_get_data (inputs[i].data, NULL) : "",
                                     inputs[i].data ? (gssize) g_bytes_get_size (inputs[i].data) : 0,
                                     G_FILE_SET_CONTENTS_CONSISTENT, 0644, error))
        return FALSE;
    }
  /* downloads through the proxy, to the sandbox's repositories and the
   * one being added only; else no network at all */
  gl_pkg_op_set_network (op, allow ? GL_PKG_NETWORK_PROXY : GL_PKG_NETWORK_NONE);
  for (gsize i = 0; allow && allow[i]; i++)
    gl_pkg_op_allow_uri (op, allow[i]);
  if (!gl_pkg_op_run (op, what, script, args, cancellable, error)
      || !gl_pkg_op_commit (op, cancellable, error))
    return FALSE;
  if (added)
    {
      strv_add (&sandbox->repositories, added);
      record_uri (sandbox, added, allow && allow[0] ? allow[0] : NULL);
    }
  if (removed)
    {
      strv_remove (&sandbox->repositories, removed);
      record_uri (sandbox, removed, NULL);
    }
  return gl_sandbox_save (sandbox, error);
}

gboolean
gl_repo_add (GlSandbox *sandbox, const char *spec, const char *key_arg, const char *name_arg,
             GlPkgProgress progress, gpointer user_data, GCancellable *cancellable, GError **error)
{
  g_autofree char *text = NULL, *name = NULL, *deb822 = NULL, *keyring = NULL, *what = NULL;
  g_autofree char *keyfile = NULL, *srcfile = NULL, *script = NULL;
  g_autoptr(GlRepoSource) source = NULL;
  g_autoptr(GBytes) key = NULL;
  g_autoptr(GlPkgOp) op = NULL;
  g_auto(GStrv) fprs = NULL;
  const char *input;

  if (g_strcmp0 (sandbox->family, "dnf") == 0)
    return gl_repo_dnf_add (sandbox, spec, key_arg, name_arg, progress, user_data, cancellable, error);
  if (g_strcmp0 (sandbox->family, "pacman") == 0)
    return gl_repo_pacman_add (sandbox, spec, key_arg, name_arg, progress, user_data, cancellable, error);
  if (g_strcmp0 (sandbox->family, "apk") == 0)
    return gl_repo_apk_add (sandbox, spec, key_arg, name_arg, progress, user_data, cancellable, error);
  if (!require_apt (sandbox, "add-repo", error))
    return FALSE;
  if (g_str_has_prefix (spec, "ppa:"))
    {
      if (key_arg)
        return gl_repo_invalid (error, "a PPA's key comes from Launchpad; drop --key");
      if (!resolve_ppa (sandbox, spec, &text, &key, &name, cancellable, error))
        return FALSE;
    }
  else if (g_str_has_prefix (spec, "deb") || strchr (spec, '\n') || strstr (spec, "URIs:"))
    text = g_strdup (spec);
  else if (g_file_test (spec, G_FILE_TEST_IS_REGULAR))
    {
      if (!g_file_get_contents (spec, &text, NULL, error))
        return FALSE;
    }
  else
    return gl_repo_invalid (error, "“%s” is not a repository: give a “deb URI SUITE COMPONENT…” line, "
                    "deb822 text or a file holding it, or ppa:OWNER/NAME", spec);
  source = gl_repo_source_parse (text, error);
  if (source == NULL)
    {
      g_prefix_error (error, "Bad repository: ");
      return FALSE;
    }
  if (key == NULL)
    {
      if (key_arg == NULL)
        return gl_repo_invalid (error, "give the repository's signing key with --key FILE|URL (each "
                        "repository is trusted with its own key only)");
      key = gl_repo_read_key (key_arg, cancellable, error);
      if (key == NULL)
        return FALSE;
    }
  fprs = gl_repo_key_fingerprints (key, error);
  if (fprs == NULL)
    {
      g_prefix_error (error, "Bad key %s: ", key_arg ? key_arg : spec);
      return FALSE;
    }
  if (name_arg)
    name = g_strdup (name_arg);
  else if (name == NULL)
    name = gl_repo_name_from_uri (source->uris[0]);
  if (!gl_repo_name_validate (name, error))
    return FALSE;

  keyring = g_strdup_printf ("/etc/apt/keyrings/glimpse-%s.%s", name, gl_repo_key_is_armored (key) ? "asc" : "gpg");
  deb822 = gl_repo_source_to_deb822 (source, keyring);
  op = gl_pkg_op_begin (sandbox, progress, user_data, error);
  if (op == NULL)
    return FALSE;
  input = gl_pkg_op_get_input_dir (op);
  keyfile = g_build_filename (input, "key", NULL);
  srcfile = g_build_filename (input, "glimpse.sources", NULL);
  {
    if (!gl_pkg_write_apt_conf (input, error)
        || !g_file_set_contents_full (keyfile, g_bytes_get_data (key, NULL),
                                      (gssize) g_bytes_get_size (key), G_FILE_SET_CONTENTS_CONSISTENT,
                                      0644, error)
        || !g_file_set_contents_full (srcfile, deb822, -1, G_FILE_SET_CONTENTS_CONSISTENT, 0644, error))
      return FALSE;
  }
  /* The new repository alone is fetched and verified (other sources are
   * neither refreshed nor touched); a failure fails the whole operation.
   * Only apt-get update runs (no package is unpacked), through the proxy,
   * which lets it reach the new repository and the sandbox's own only. */
  gl_pkg_op_set_network (op, GL_PKG_NETWORK_PROXY);
  gl_pkg_op_allow_uri (op, source->uris[0]);
  script = g_strdup_printf (
    "set -e; APT_CONFIG=/run/glimpse-input/apt.conf; export APT_CONFIG\n"
    "name=\"$1\"; keyring=\"$2\"\n"
    "mkdir -p /etc/apt/keyrings /etc/apt/sources.list.d /tmp/glimpse-only\n"
    "cp /run/glimpse-input/key \"$keyring\"; chmod 0644 \"$keyring\"\n"
    "cp /run/glimpse-input/glimpse.sources \"/etc/apt/sources.list.d/glimpse-$name.sources\"\n"
    "chmod 0644 \"/etc/apt/sources.list.d/glimpse-$name.sources\"\n"
    "cp /run/glimpse-input/glimpse.sources /tmp/glimpse-only/glimpse.sources\n"
    "apt-get -c " GL_PKG_APT_LAST_CONF " update -o Dir::Etc::SourceList=/tmp/glimpse-only/none.list "
    "-o Dir::Etc::SourceParts=/tmp/glimpse-only -o APT::Get::List-Cleanup=0\n");
  what = g_strdup_printf ("adding the repository %s (%s) to “%s”", name, source->uris[0], sandbox->id);
  {
    const char *args[] = { name, keyring, NULL };
    if (!gl_pkg_op_run (op, what, script, args, cancellable, error)
        || !gl_pkg_op_commit (op, cancellable, error))
      return FALSE;
  }
  strv_add (&sandbox->repositories, name);
  record_uri (sandbox, name, source->uris[0]);
  return gl_sandbox_save (sandbox, error);
}

GHashTable *
gl_repo_view_dir (GlSandbox *sandbox, const char *dir_rel, const char * const *suffixes)
{
  g_autofree char *tree = gl_pkg_current_tree (sandbox);
  g_autofree char *rootfs = gl_sandbox_get_rootfs (sandbox);
  const char *roots[] = { tree, rootfs ? rootfs : "/" };
  GHashTable *files = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  /* (as gl_repo_read_sandbox_file reads them) */
  g_autoptr(GHashTable) names = gl_view_dir_names (roots, G_N_ELEMENTS (roots), dir_rel);
  GHashTableIter iter;
  gpointer key;

  if (names == NULL)
    return files;
  g_hash_table_iter_init (&iter, names);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    {
      const char *e = key;
      g_autofree char *rel = g_build_filename (dir_rel, e, NULL);

      for (gsize k = 0; suffixes[k]; k++)
        if (g_str_has_suffix (e, suffixes[k]) && strlen (e) > strlen (suffixes[k]))
          {
            /* (the first suffix that fits; only what the view shows as a
             * regular file) */
            g_autofree char *n = g_strndup (e, strlen (e) - strlen (suffixes[k]));
            if (!g_hash_table_contains (files, n) && view_has_file (roots, G_N_ELEMENTS (roots), rel))
              g_hash_table_insert (files, g_steal_pointer (&n), g_strconcat ("/", rel, NULL));
            break;
          }
    }
  return files;
}

/* The apt sources files of the sandbox, system layer over the base:
 * name → path inside. */
static GHashTable *
list_source_files (GlSandbox *sandbox)
{
  const char *suffixes[] = { ".sources", ".list", NULL };
  GHashTable *files = gl_repo_view_dir (sandbox, "etc/apt/sources.list.d", suffixes);
  g_autofree char *tree = gl_pkg_current_tree (sandbox);
  g_autofree char *rootfs = gl_sandbox_get_rootfs (sandbox);
  const char *roots[] = { tree, rootfs ? rootfs : "/" };

  if (!g_hash_table_contains (files, "sources") && view_has_file (roots, G_N_ELEMENTS (roots), "etc/apt/sources.list"))
    g_hash_table_insert (files, g_strdup ("sources"), g_strdup ("/etc/apt/sources.list"));
  return files;
}

static char *
summarize_sources (GlSandbox *sandbox, const char *inside)
{
  g_autofree char *text = gl_repo_read_sandbox_file (sandbox, inside + 1);
  g_autoptr(GString) s = g_string_new (NULL);
  g_auto(GStrv) lines = g_strsplit (text ? text : "", "\n", -1);
  for (char **l = lines; *l; l++)
    {
      char *line = g_strstrip (*l);
      if (g_str_has_prefix (line, "URIs:") || g_str_has_prefix (line, "Suites:")
          || g_str_has_prefix (line, "Components:"))
        {
          g_string_append (s, s->len ? " " : "");
          g_string_append (s, g_strstrip (strchr (line, ':') + 1));
        }
      else if (g_str_has_prefix (line, "deb ") && s->len == 0)
        g_string_append (s, line + 4);
    }
  return g_strdup (s->str);
}

gboolean
gl_repo_recorded (GlSandbox *sandbox, const char *name)
{
  return sandbox->repositories != NULL
         && g_strv_contains ((const char * const *) sandbox->repositories, name);
}

/* Whether the sources file @name (without its suffix) at @file is a
 * repository glimpse added: the glimpse-NAME.sources add-repo writes, of a
 * NAME the sandbox records (a file of the base's or of a package's that
 * merely starts with glimpse- is not) */
static gboolean
apt_added (GlSandbox *sandbox, const char *name, const char *file)
{
  return g_str_has_prefix (name, "glimpse-") && g_str_has_suffix (file, ".sources")
         && gl_repo_recorded (sandbox, name + 8);
}

static int
cmp_entry (gconstpointer a, gconstpointer b)
{
  const GlRepoEntry *x = *(GlRepoEntry * const *) a, *y = *(GlRepoEntry * const *) b;
  return g_strcmp0 (x->name, y->name);
}

GPtrArray *
gl_repo_list (GlSandbox *sandbox, GError **error)
{
  g_autoptr(GHashTable) files = NULL;
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) gl_repo_entry_free);
  GHashTableIter it;
  gpointer k, v;

  if (g_strcmp0 (sandbox->family, "dnf") == 0 || g_strcmp0 (sandbox->family, "pacman") == 0
      || g_strcmp0 (sandbox->family, "apk") == 0)
    {
      g_ptr_array_unref (out);
      out = g_str_equal (sandbox->family, "dnf") ? gl_repo_dnf_list (sandbox, error)
            : g_str_equal (sandbox->family, "pacman") ? gl_repo_pacman_list (sandbox, error)
            : gl_repo_apk_list (sandbox, error);
      if (out != NULL)
        g_ptr_array_sort (out, cmp_entry);
      return out;
    }
  if (!require_apt (sandbox, "repos", error))
    {
      g_ptr_array_unref (out);
      return NULL;
    }
  files = list_source_files (sandbox);
  g_hash_table_iter_init (&it, files);
  while (g_hash_table_iter_next (&it, &k, &v))
    {
      GlRepoEntry *e = g_new0 (GlRepoEntry, 1);
      const char *name = k;
      e->added = apt_added (sandbox, name, v);
      e->name = g_strdup (e->added ? name + 8 : name);
      e->file = g_strdup (v);
      e->summary = summarize_sources (sandbox, v);
      g_ptr_array_add (out, e);
    }
  g_ptr_array_sort (out, cmp_entry);
  return out;
}

gboolean
gl_repo_remove (GlSandbox *sandbox, const char *name, GlPkgProgress progress, gpointer user_data,
                GCancellable *cancellable, GError **error)
{
  g_autoptr(GHashTable) files = NULL;
  g_autoptr(GlPkgOp) op = NULL;
  g_autofree char *glname = NULL, *what = NULL;
  const char *file;
  gboolean added;

  if (!gl_repo_name_validate (name, error))
    return FALSE;
  if (g_strcmp0 (sandbox->family, "dnf") == 0)
    return gl_repo_dnf_remove (sandbox, name, progress, user_data, cancellable, error);
  if (g_strcmp0 (sandbox->family, "pacman") == 0)
    return gl_repo_pacman_remove (sandbox, name, progress, user_data, cancellable, error);
  if (g_strcmp0 (sandbox->family, "apk") == 0)
    return gl_repo_apk_remove (sandbox, name, progress, user_data, cancellable, error);
  if (!require_apt (sandbox, "remove-repo", error))
    return FALSE;
  files = list_source_files (sandbox);
  glname = g_strconcat ("glimpse-", name, NULL);
  file = g_hash_table_lookup (files, glname);
  added = file != NULL && apt_added (sandbox, glname, file);
  file = g_hash_table_lookup (files, added ? glname : name);
  if (file == NULL)
    {
      return gl_repo_not_found (sandbox, name, error);
    }
  op = gl_pkg_op_begin (sandbox, progress, user_data, error);
  if (op == NULL)
    return FALSE;
  what = g_strdup_printf ("removing the repository %s from “%s”", name, sandbox->id);
  {
    const char *args[] = { file, added ? name : "", NULL };
    if (!gl_pkg_op_run (op, what,
                        "set -e; rm -f -- \"$1\"\n"
                        "if [ -n \"$2\" ]; then rm -f -- \"/etc/apt/keyrings/glimpse-$2.asc\" "
                        "\"/etc/apt/keyrings/glimpse-$2.gpg\"; fi\n",
                        args, cancellable, error)
        || !gl_pkg_op_commit (op, cancellable, error))
      return FALSE;
  }
  strv_remove (&sandbox->repositories, name);
  record_uri (sandbox, name, NULL);
  return gl_sandbox_save (sandbox, error);
}

/* ------------------------------------------------------------ INI files */

void
gl_repo_ini_section_free (GlRepoIniSection *section)
{
  if (section == NULL)
    return;
  g_free (section->id);
  g_ptr_array_unref (section->keys);
  g_free (section);
}

GPtrArray *
gl_repo_ini_parse (const char *text, gboolean continuation)
{
  g_auto(GStrv) lines = g_strsplit (text ? text : "", "\n", -1);
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) gl_repo_ini_section_free);
  GlRepoIniSection *cur = NULL;

  for (guint i = 0; lines[i]; i++)
    {
      char *raw = lines[i];
      /* (g_strstrip works in place: the copy itself) */
      g_autofree char *line = g_strstrip (g_strdup (raw));
      char *eq;
      if (*line == '\0' || *line == '#' || *line == ';')
        continue;
      if (*line == '[')
        {
          char *end = strchr (line, ']');
          cur = g_new0 (GlRepoIniSection, 1);
          cur->id = g_strstrip (g_strndup (line + 1, end ? (gsize) (end - line - 1) : strlen (line + 1)));
          cur->first = cur->last = i;
          cur->keys = g_ptr_array_new_with_free_func (g_free);
          g_ptr_array_add (out, cur);
          continue;
        }
      if (cur == NULL)
        continue;
      if (continuation && g_ascii_isspace (raw[0]) && cur->keys->len > 0
          && cur->keys->pdata[cur->keys->len - 1] != NULL)
        {
          char *v = cur->keys->pdata[cur->keys->len - 1];
          cur->keys->pdata[cur->keys->len - 1] = g_strconcat (v, " ", line, NULL);
          g_free (v);
          cur->last = i;
          continue;
        }
      eq = strchr (line, '=');
      if (eq)
        {
          *eq = '\0';
          g_ptr_array_add (cur->keys, g_strdup (g_strstrip (line)));
          g_ptr_array_add (cur->keys, g_strdup (g_strstrip (eq + 1)));
        }
      else
        {
          g_ptr_array_add (cur->keys, g_strdup (line));
          g_ptr_array_add (cur->keys, NULL);
        }
      cur->last = i;
    }
  return out;
}

const char *
gl_repo_ini_get (GlRepoIniSection *section, const char *key)
{
  for (guint i = 0; i + 1 < section->keys->len; i += 2)
    if (g_str_equal (section->keys->pdata[i], key))
      return section->keys->pdata[i + 1];
  return NULL;
}

char *
gl_repo_ini_drop_section (const char *text, const char *id, gboolean continuation)
{
  g_autoptr(GPtrArray) sections = gl_repo_ini_parse (text, continuation);
  g_auto(GStrv) lines = g_strsplit (text ? text : "", "\n", -1);
  GString *s = g_string_new (NULL);
  GlRepoIniSection *drop = NULL;

  for (guint i = 0; i < sections->len && drop == NULL; i++)
    if (g_str_equal (((GlRepoIniSection *) sections->pdata[i])->id, id))
      drop = sections->pdata[i];
  for (guint i = 0; lines[i]; i++)
    {
      if (drop && i >= drop->first && i <= drop->last)
        continue;
      g_string_append (s, lines[i]);
      if (lines[i + 1])
        g_string_append_c (s, '\n');
    }
  return g_string_free (s, FALSE);
}
