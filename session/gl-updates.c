/* gl-updates.c: which packages of an apt sandbox its apt would upgrade
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-updates.h"

#include "gl-apt-index.h"
#include "gl-apt-release.h"
#include "gl-apt-sources.h"
#include "gl-deb-version.h"
#include "gl-fsutil.h"

#include <string.h>

#include <glib/gstdio.h>

GStrv
gl_updates_sandbox_layers (GlSandbox *sandbox)
{
  g_autoptr(GStrvBuilder) b = g_strv_builder_new ();
  g_autofree char *tree = gl_sandbox_get_system_tree (sandbox);
  g_autofree char *rootfs = gl_sandbox_get_rootfs (sandbox);

  if (tree != NULL)
    g_strv_builder_add (b, tree);
  g_strv_builder_add (b, rootfs != NULL ? rootfs : "/");
  return g_strv_builder_end (b);
}

/* --- the view: layers, top first, read as overlayfs shows them --- */

/* The sandbox's files this reads: its sources, dpkg's state, keyrings */
#define VIEW_FILE_MAX (64 * 1024 * 1024)

/* (links are followed inside the view, as the sandbox's own apt follows
 * them: /etc/apt/trusted.gpg.d/x.gpg -> /usr/share/keyrings/x.gpg) */
#define VIEW_FLAGS GL_VIEW_FOLLOW_LINKS

/* @rel of the view, read from what the resolver opened: a regular file
 * of at most VIEW_FILE_MAX bytes.  A FIFO would never be written; a link
 * to a device or to /proc (/dev/stdin, /proc/self/fd/0) is resolved in the
 * view, never to the caller's own, and is not a regular file there. */
static gboolean
view_read (const char * const *layers, const char *rel, char **contents, gsize *len, GError **error)
{
  if (gl_view_read_file_full (layers, g_strv_length ((char **) layers), rel, VIEW_FLAGS, VIEW_FILE_MAX,
                              contents, len) == GL_VIEW_FILE)
    return TRUE;
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
               "%s: not found in the sandbox, or not a regular file of at most 64 MiB that can be read",
               rel);
  return FALSE;
}

static int
compare_strp (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char * const *) a, *(char * const *) b);
}

/* The names in directory rel of the view, sorted, whiteouts applied. */
static GPtrArray *
view_list (const char * const *layers, const char *rel)
{
  g_autoptr(GHashTable) set = gl_view_dir_names_full (layers, g_strv_length ((char **) layers), rel, VIEW_FLAGS);
  GPtrArray *names = g_ptr_array_new_with_free_func (g_free);
  GHashTableIter iter;
  gpointer name;

  if (set == NULL)
    return names;
  g_hash_table_iter_init (&iter, set);
  while (g_hash_table_iter_next (&iter, &name, NULL))
    g_ptr_array_add (names, g_strdup (name));
  g_ptr_array_sort (names, compare_strp);
  return names;
}

/* --- sources --- */

static gboolean
line_is_blank (const char *l)
{
  for (; *l; l++)
    if (!g_ascii_isspace (*l))
      return FALSE;
  return TRUE;
}

/* The sources the view's apt uses: enabled "deb" ones.  A trusted=yes
 * source cannot be checked (nothing vouches for its indexes): an error. */
static gboolean
keep_sources (GPtrArray *parsed, GPtrArray *out, GError **error)
{
  for (guint i = 0; i < parsed->len; i++)
    {
      GlAptSource *s = parsed->pdata[i];

      if (s->deb_src || !s->enabled)
        continue;
      if (s->trusted)
        {
          g_set_error (error, GL_APT_ERROR, GL_APT_ERROR_SIGNATURE,
                       "%s: trusted=yes repositories are not checked for updates "
                       "(their indexes carry no signature to trust)", s->where);
          return FALSE;
        }
      if (!g_str_has_suffix (s->uri, "/"))
        {
          char *u = g_strconcat (s->uri, "/", NULL);

          g_free (s->uri);
          s->uri = u;
        }
      g_ptr_array_add (out, g_steal_pointer (&parsed->pdata[i]));
    }
  return TRUE;
}

static GPtrArray *
read_sources (const char * const *layers, GError **error)
{
  g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func ((GDestroyNotify) gl_apt_source_free);
  g_autoptr(GPtrArray) names = view_list (layers, "etc/apt/sources.list.d");
  g_autofree char *text = NULL;

  if (view_read (layers, "etc/apt/sources.list", &text, NULL, NULL))
    {
      g_autoptr(GPtrArray) parsed = gl_apt_sources_parse_one_line ("/etc/apt/sources.list", text, error);

      if (parsed == NULL || !keep_sources (parsed, out, error))
        return NULL;
    }
  for (guint i = 0; i < names->len; i++)
    {
      const char *name = names->pdata[i];
      g_autofree char *rel = g_build_filename ("etc/apt/sources.list.d", name, NULL);
      g_autofree char *abs = g_strconcat ("/", rel, NULL);
      g_autofree char *data = NULL;
      g_autoptr(GPtrArray) parsed = NULL;

      /* apt's rule for parts: letters, digits, '_', '-', '.' only */
      if (strspn (name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") != strlen (name))
        continue;
      if (!g_str_has_suffix (name, ".list") && !g_str_has_suffix (name, ".sources"))
        continue;
      if (!view_read (layers, rel, &data, NULL, error))
        return NULL;
      if (g_str_has_suffix (name, ".list"))
        parsed = gl_apt_sources_parse_one_line (abs, data, error);
      else
        parsed = gl_apt_sources_parse_deb822 (abs, data, error);
      if (parsed == NULL || !keep_sources (parsed, out, error))
        return NULL;
    }
  return g_steal_pointer (&out);
}

/* --- dpkg state --- */

typedef struct {
  char     *version;
  gboolean  held;
} Installed;

static void
installed_free (Installed *i)
{
  g_free (i->version);
  g_free (i);
}

typedef struct {
  char        *native;
  char       **archs;        /* native first */
  GHashTable  *installed;    /* "name:arch" → Installed */
} DpkgState;

static void
dpkg_state_clear (DpkgState *d)
{
  g_free (d->native);
  g_strfreev (d->archs);
  g_clear_pointer (&d->installed, g_hash_table_unref);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (DpkgState, dpkg_state_clear)

static gboolean
status_is_installed (const char *status, gboolean *held)
{
  g_auto(GStrv) w = gl_apt_split_words (status, " \t");

  if (g_strv_length (w) != 3)
    return FALSE;
  *held = strcmp (w[0], "hold") == 0;
  return strcmp (w[2], "not-installed") != 0 && strcmp (w[2], "config-files") != 0;
}

static gboolean
read_dpkg_state (const char * const *layers, DpkgState *d, GError **error)
{
  g_autofree char *text = NULL;
  g_autofree char *archfile = NULL;
  g_auto(GStrv) lines = NULL;
  g_autofree char *pkg = NULL, *arch = NULL, *ver = NULL, *status = NULL;

  if (!view_read (layers, "var/lib/dpkg/status", &text, NULL, error))
    {
      g_prefix_error (error, "Cannot read the sandbox's dpkg status: ");
      return FALSE;
    }
  d->installed = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) installed_free);
  lines = g_strsplit (text, "\n", -1);
  /* Two passes: the native architecture (dpkg's own) is needed to name
   * "Architecture: all" packages. */
  for (guint pass = 0; pass < 2; pass++)
    for (guint n = 0; ; n++)
      {
        const char *l = lines[n];

        if (l == NULL || line_is_blank (l))
          {
            gboolean held = FALSE;

            if (pkg != NULL && pass == 0 && strcmp (pkg, "dpkg") == 0 && arch != NULL &&
                status != NULL && status_is_installed (status, &held))
              d->native = g_strdup (arch);
            if (pkg != NULL && pass == 1 && ver != NULL && arch != NULL && status != NULL &&
                status_is_installed (status, &held))
              {
                Installed *i = g_new0 (Installed, 1);
                const char *a = strcmp (arch, "all") == 0 ? d->native : arch;

                i->version = g_steal_pointer (&ver);
                i->held = held;
                g_hash_table_replace (d->installed, g_strconcat (pkg, ":", a, NULL), i);
              }
            g_clear_pointer (&pkg, g_free);
            g_clear_pointer (&arch, g_free);
            g_clear_pointer (&ver, g_free);
            g_clear_pointer (&status, g_free);
            if (l == NULL)
              break;
            continue;
          }
        if (l[0] == ' ' || l[0] == '\t')
          continue;
        if (g_str_has_prefix (l, "Package:"))
          g_free (pkg), pkg = g_strstrip (g_strdup (l + 8));
        else if (g_str_has_prefix (l, "Architecture:"))
          g_free (arch), arch = g_strstrip (g_strdup (l + 13));
        else if (g_str_has_prefix (l, "Version:"))
          g_free (ver), ver = g_strstrip (g_strdup (l + 8));
        else if (g_str_has_prefix (l, "Status:"))
          g_free (status), status = g_strstrip (g_strdup (l + 7));
      }
  if (d->native == NULL)
    {
      g_set_error (error, GL_APT_ERROR, GL_APT_ERROR_MALFORMED,
                   "The sandbox's dpkg status has no installed dpkg package, so its "
                   "architecture is unknown");
      return FALSE;
    }
  {
    g_autoptr(GStrvBuilder) b = g_strv_builder_new ();
    g_auto(GStrv) foreign = NULL;

    g_strv_builder_add (b, d->native);
    if (view_read (layers, "var/lib/dpkg/arch", &archfile, NULL, NULL))
      {
        foreign = gl_apt_split_words (archfile, " \t\n");
        for (guint i = 0; foreign[i] != NULL; i++)
          if (strcmp (foreign[i], d->native) != 0)
            g_strv_builder_add (b, foreign[i]);
      }
    d->archs = g_strv_builder_end (b);
  }
  return TRUE;
}

/* --- preferences --- */

typedef struct {
  char **packages;      /* patterns; "*" alone makes the pin generic */
  char  *kind;          /* "release", "version", "origin" */
  char  *data;
  int    priority;
} Pin;

static void
pin_free (Pin *p)
{
  g_strfreev (p->packages);
  g_free (p->kind);
  g_free (p->data);
  g_free (p);
}

static gboolean
pin_is_generic (const Pin *p)
{
  return p->packages[0] != NULL && strcmp (p->packages[0], "*") == 0 && p->packages[1] == NULL;
}

/* apt's patterns: /regex/, glob, or the name */
static gboolean
pattern_match (const char *pattern, const char *value)
{
  gsize n = strlen (pattern);

  if (n >= 2 && pattern[0] == '/' && pattern[n - 1] == '/')
    {
      g_autofree char *re = g_strndup (pattern + 1, n - 2);

      return g_regex_match_simple (re, value, 0, 0);
    }
  if (strpbrk (pattern, "*?[") != NULL)
    return g_pattern_match_simple (pattern, value);
  return strcmp (pattern, value) == 0;
}

static gboolean
parse_preferences (const char *file, const char *text, GPtrArray *pins, GError **error)
{
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  g_autofree char *package = NULL, *pin = NULL, *prio = NULL;

  for (guint n = 0; ; n++)
    {
      const char *l = lines[n];

      if (l != NULL && (l[0] == '#' || l[0] == ' ' || l[0] == '\t'))
        continue;
      if (l == NULL || line_is_blank (l))
        {
          if (package != NULL || pin != NULL || prio != NULL)
            {
              Pin *p;
              char *sp;
              gint64 pr;

              if (package == NULL || pin == NULL || prio == NULL ||
                  !g_ascii_string_to_signed (prio, 10, -100000, 100000, &pr, NULL))
                {
                  g_set_error (error, GL_APT_ERROR, GL_APT_ERROR_MALFORMED,
                               "%s: an entry before line %u lacks Package, Pin or a numeric Pin-Priority",
                               file, n + 1);
                  return FALSE;
                }
              p = g_new0 (Pin, 1);
              p->packages = gl_apt_split_words (package, " \t");
              sp = strpbrk (pin, " \t");
              p->kind = sp ? g_strndup (pin, sp - pin) : g_strdup (pin);
              p->data = g_strdup (sp ? g_strstrip (sp) : "");
              p->priority = pr;
              g_ptr_array_add (pins, p);
            }
          g_clear_pointer (&package, g_free);
          g_clear_pointer (&pin, g_free);
          g_clear_pointer (&prio, g_free);
          if (l == NULL)
            break;
          continue;
        }
      if (g_ascii_strncasecmp (l, "Package:", 8) == 0)
        g_free (package), package = g_strstrip (g_strdup (l + 8));
      else if (g_ascii_strncasecmp (l, "Pin:", 4) == 0)
        g_free (pin), pin = g_strstrip (g_strdup (l + 4));
      else if (g_ascii_strncasecmp (l, "Pin-Priority:", 13) == 0)
        g_free (prio), prio = g_strstrip (g_strdup (l + 13));
    }
  return TRUE;
}

static GPtrArray *
read_preferences (const char * const *layers, GError **error)
{
  g_autoptr(GPtrArray) pins = g_ptr_array_new_with_free_func ((GDestroyNotify) pin_free);
  g_autoptr(GPtrArray) names = view_list (layers, "etc/apt/preferences.d");
  g_autofree char *text = NULL;

  if (view_read (layers, "etc/apt/preferences", &text, NULL, NULL) &&
      !parse_preferences ("/etc/apt/preferences", text, pins, error))
    return NULL;
  for (guint i = 0; i < names->len; i++)
    {
      const char *name = names->pdata[i];
      const char *dot = strrchr (name, '.');
      g_autofree char *rel = g_build_filename ("etc/apt/preferences.d", name, NULL);
      g_autofree char *data = NULL;

      if (strspn (name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") != strlen (name))
        continue;
      if (dot != NULL && strcmp (dot, ".pref") != 0)
        continue;
      if (!view_read (layers, rel, &data, NULL, error) ||
          !parse_preferences (rel, data, pins, error))
        return NULL;
    }
  return g_steal_pointer (&pins);
}

/* --- package files: one index of one release, with what pins match on --- */

typedef struct {
  GlAptRelease *release;   /* borrowed */
  char         *component;
  char         *arch;
  char         *host;
  int           priority;  /* default or generic pin */
} PkgFile;

static void
pkg_file_free (PkgFile *f)
{
  g_free (f->component);
  g_free (f->arch);
  g_free (f->host);
  g_free (f);
}

static gboolean
release_pin_matches (const char *data, const PkgFile *f)
{
  g_auto(GStrv) parts = g_strsplit (data, ",", -1);

  if (f == NULL)
    return FALSE;   /* the dpkg status is no release */
  for (guint i = 0; parts[i] != NULL; i++)
    {
      char *part = g_strstrip (parts[i]);
      const char *eq = strchr (part, '=');
      g_autofree char *key = NULL;
      const char *want, *have = NULL;

      if (part[0] == '\0')
        continue;
      if (eq == NULL)
        {
          /* a bare word: a version when it starts with a digit, else an archive */
          key = g_strdup (g_ascii_isdigit (part[0]) ? "v" : "a");
          want = part;
        }
      else
        {
          key = g_strndup (part, eq - part);
          g_strstrip (key);
          want = eq + 1;
        }
      if (strcmp (key, "a") == 0)
        {
          if (!(f->release->suite && pattern_match (want, f->release->suite)))
            return FALSE;
          continue;
        }
      else if (strcmp (key, "n") == 0)
        have = f->release->codename;
      else if (strcmp (key, "v") == 0)
        have = f->release->version;
      else if (strcmp (key, "o") == 0)
        have = f->release->origin;
      else if (strcmp (key, "l") == 0)
        have = f->release->label;
      else if (strcmp (key, "c") == 0)
        have = f->component;
      else if (strcmp (key, "b") == 0)
        have = f->arch;
      else
        return FALSE;
      if (have == NULL || !pattern_match (want, have))
        return FALSE;
    }
  return TRUE;
}

static gboolean
pin_matches_file (const Pin *p, const PkgFile *f)
{
  if (strcmp (p->kind, "release") == 0)
    return release_pin_matches (p->data, f);
  if (strcmp (p->kind, "origin") == 0)
    {
      g_autofree char *want = g_strdup (p->data);
      gsize n = strlen (want);

      if (n >= 2 && want[0] == '"' && want[n - 1] == '"')
        {
          memmove (want, want + 1, n - 2);
          want[n - 2] = '\0';
        }
      return f != NULL && g_strcmp0 (want, f->host) == 0;
    }
  return FALSE;
}

/* --- candidates --- */

typedef struct {
  const char *version;     /* in the index's chunk, or the Installed's */
  const char *arch_field;  /* Architecture: as the index says ("all"); NULL for the status */
  int         priority;    /* max over its files; 100 for the dpkg status */
  GPtrArray  *files;       /* PkgFile*, borrowed */
  guint       phased;
  gboolean    installed;
} Ver;

typedef struct {
  char    *name;
  char    *arch;
  GArray  *versions;       /* Ver */
} Pkg;

static void
pkg_free (Pkg *p)
{
  for (guint i = 0; i < p->versions->len; i++)
    g_clear_pointer (&g_array_index (p->versions, Ver, i).files, g_ptr_array_unref);
  g_array_unref (p->versions);
  g_free (p->name);
  g_free (p->arch);
  g_free (p);
}

static Ver *
pkg_version (Pkg *p, const char *version)
{
  Ver v = { version, NULL, G_MININT, NULL, 100, FALSE };

  for (guint i = 0; i < p->versions->len; i++)
    if (strcmp (g_array_index (p->versions, Ver, i).version, version) == 0)
      return &g_array_index (p->versions, Ver, i);
  v.files = g_ptr_array_new ();
  g_array_append_val (p->versions, v);
  return &g_array_index (p->versions, Ver, p->versions->len - 1);
}

static int
ver_compare_desc (gconstpointer a, gconstpointer b)
{
  return gl_deb_version_compare (((const Ver *) b)->version, ((const Ver *) a)->version);
}

/* apt's specific pins (Package: names/patterns) decide a version's
 * priority when one matches; otherwise the best of its files'. */
static int
version_priority (const Pkg *p, const Ver *v, GPtrArray *pins)
{
  for (guint i = 0; i < pins->len; i++)
    {
      const Pin *pin = pins->pdata[i];
      gboolean name_ok = FALSE;

      if (pin_is_generic (pin))
        continue;
      for (guint k = 0; pin->packages[k] != NULL && !name_ok; k++)
        name_ok = pattern_match (pin->packages[k], p->name);
      if (!name_ok)
        continue;
      if (strcmp (pin->kind, "version") == 0)
        {
          if (pattern_match (pin->data, v->version))
            return pin->priority;
          continue;
        }
      for (guint f = 0; f < v->files->len; f++)
        if (pin_matches_file (pin, v->files->pdata[f]))
          return pin->priority;
    }
  return v->priority == G_MININT ? 0 : v->priority;
}

/* apt's policy: walking the versions from the newest, the first with the
 * highest priority wins; from the installed version down only a priority
 * above 1000 (a downgrade pin) can still win. */
static const Ver *
candidate (Pkg *p, GPtrArray *pins)
{
  const Ver *pref = NULL;
  int max = 0;

  g_array_sort (p->versions, ver_compare_desc);
  for (guint i = 0; i < p->versions->len; i++)
    {
      const Ver *v = &g_array_index (p->versions, Ver, i);
      int prio = version_priority (p, v, pins);

      if (prio == 0)
        continue;
      if (prio > max)
        {
          pref = v;
          max = prio;
        }
      if (v->installed && max < 1000)
        max = 1000;
    }
  return pref;
}

/* --- fetching a release and its indexes --- */

static char *
cache_name_for (const char *dist_url)
{
  GString *s = g_string_new (NULL);

  for (const char *c = strstr (dist_url, "://") ? strstr (dist_url, "://") + 3 : dist_url; *c; c++)
    g_string_append_c (s, g_ascii_isalnum (*c) || *c == '.' || *c == '-' ? *c : '_');
  return g_string_free (s, FALSE);
}

static gboolean
collect_sink (const guint8 *data, gsize length, gpointer user_data, GError **error)
{
  g_byte_array_append (user_data, data, length);
  return TRUE;
}

static char *
url_host (const char *uri)
{
  const char *p = strstr (uri, "://");
  const char *end;

  if (p == NULL)
    return g_strdup ("");
  p += 3;
  end = p + strcspn (p, "/:");
  if (strchr (p, '@') != NULL && strchr (p, '@') < end)
    {
      p = strchr (p, '@') + 1;
      end = p + strcspn (p, "/:");
    }
  return g_strndup (p, end - p);
}

/* The keyring @path of the view, read; NULL where view_read fails */
static GlAptKeyring *
view_keyring (const char * const *layers, const char *path)
{
  g_autofree char *data = NULL;
  gsize len = 0;
  g_autoptr(GBytes) bytes = NULL;

  if (!view_read (layers, path, &data, &len, NULL))
    return NULL;
  bytes = g_bytes_new_take (g_steal_pointer (&data), len);
  return gl_apt_keyring_new (path, bytes);
}

/* The keyrings the source's signature is checked against, as its apt
 * would take them: the inline key, the Signed-By files, or the trusted
 * ones. */
static GPtrArray *
source_keyrings (const char * const *layers, const GlAptSource *s, GError **error)
{
  g_autoptr(GPtrArray) rings = g_ptr_array_new_with_free_func ((GDestroyNotify) gl_apt_keyring_free);

  if (s->inline_key != NULL)
    {
      g_autoptr(GBytes) key = g_bytes_new (s->inline_key, strlen (s->inline_key));
      g_autofree char *name = g_strdup_printf ("the Signed-By key of %s", s->where);

      g_ptr_array_add (rings, gl_apt_keyring_new (name, key));
    }
  else if (s->signed_by != NULL)
    {
      for (guint i = 0; s->signed_by[i] != NULL; i++)
        {
          GlAptKeyring *k = view_keyring (layers, s->signed_by[i]);

          if (k == NULL)
            {
              g_set_error (error, GL_APT_ERROR, GL_APT_ERROR_KEYRING,
                           "%s: the Signed-By keyring %s does not exist in the sandbox, or is not "
                           "a regular file", s->where, s->signed_by[i]);
              return NULL;
            }
          g_ptr_array_add (rings, k);
        }
    }
  else
    {
      g_autoptr(GPtrArray) names = view_list (layers, "etc/apt/trusted.gpg.d");
      GlAptKeyring *main_ring = view_keyring (layers, "/etc/apt/trusted.gpg");

      if (main_ring != NULL)
        g_ptr_array_add (rings, main_ring);
      for (guint i = 0; i < names->len; i++)
        {
          const char *name = names->pdata[i];
          g_autofree char *path = g_build_filename ("/etc/apt/trusted.gpg.d", name, NULL);
          GlAptKeyring *k = NULL;

          if (!g_str_has_suffix (name, ".gpg") && !g_str_has_suffix (name, ".asc"))
            continue;
          k = view_keyring (layers, path);
          if (k != NULL)
            g_ptr_array_add (rings, k);
        }
    }
  return g_steal_pointer (&rings);
}

/* The release at dist_url, from the network when it changed, else from
 * the cache; verified, fresh, not rolled back. */
static GlAptRelease *
fetch_release (const char * const *layers, const GlAptSource *s, const char *dist_url,
               const char *cache_dir, GlUpdatesStats *stats, GCancellable *cancellable,
               GError **error)
{
  g_autofree char *name = cache_name_for (dist_url);
  g_autofree char *dir = g_build_filename (cache_dir, "releases", name, NULL);
  g_autofree char *release_path = g_build_filename (dir, "Release", NULL);
  g_autofree char *meta_path = g_build_filename (dir, "InRelease.meta", NULL);
  g_autofree char *url = g_strconcat (dist_url, "InRelease", NULL);
  g_autofree char *what = g_strdup_printf ("%s (from %s)", url, s->where);
  g_autofree char *cached_text = NULL;
  gsize cached_len = 0;
  g_autoptr(GlAptRelease) cached = NULL;
  g_autoptr(GKeyFile) meta = g_key_file_new ();
  GlAptValidators v = { NULL, NULL, FALSE };
  g_autoptr(GByteArray) body = g_byte_array_new ();
  g_autoptr(GBytes) raw = NULL;
  g_autoptr(GBytes) signed_text = NULL;
  g_autoptr(GlAptRelease) release = NULL;
  g_autoptr(GPtrArray) keyrings = NULL;
  gboolean ok;

  if (g_file_get_contents (release_path, &cached_text, &cached_len, NULL))
    cached = gl_apt_release_parse (cached_text, cached_len, release_path, NULL);
  if (cached != NULL && g_key_file_load_from_file (meta, meta_path, G_KEY_FILE_NONE, NULL))
    {
      v.etag = g_key_file_get_string (meta, "InRelease", "ETag", NULL);
      v.last_modified = g_key_file_get_string (meta, "InRelease", "Last-Modified", NULL);
    }

  if (stats)
    stats->requests++, stats->releases++;
  ok = gl_apt_http_get (url, &v, 16 * 1024 * 1024, collect_sink, body, cancellable, error);
  if (!ok)
    {
      gl_apt_validators_clear (&v);
      return NULL;
    }
  if (v.not_modified)
    {
      gl_apt_validators_clear (&v);
      if (stats)
        stats->unchanged++;
      if (!gl_apt_release_check_fresh (cached, NULL, g_get_real_time () / G_USEC_PER_SEC, what, error))
        return NULL;
      g_debug ("%s: not modified", url);
      return g_steal_pointer (&cached);
    }

  keyrings = source_keyrings (layers, s, error);
  if (keyrings == NULL)
    {
      gl_apt_validators_clear (&v);
      return NULL;
    }
  raw = g_byte_array_free_to_bytes (g_steal_pointer (&body));
  signed_text = gl_apt_release_verify (raw, keyrings,
                                       (const char * const *) s->fingerprints, what,
                                       cancellable, error);
  if (signed_text == NULL)
    {
      gl_apt_validators_clear (&v);
      return NULL;
    }
  release = gl_apt_release_parse (g_bytes_get_data (signed_text, NULL), g_bytes_get_size (signed_text),
                                  what, error);
  if (release == NULL ||
      !gl_apt_release_check_fresh (release, cached, g_get_real_time () / G_USEC_PER_SEC, what, error))
    {
      gl_apt_validators_clear (&v);
      return NULL;
    }

  /* Keep it: the verified text, then the validators that refer to it. */
  g_key_file_remove_group (meta, "InRelease", NULL);
  if (v.etag)
    g_key_file_set_string (meta, "InRelease", "ETag", v.etag);
  if (v.last_modified)
    g_key_file_set_string (meta, "InRelease", "Last-Modified", v.last_modified);
  gl_apt_validators_clear (&v);
  {
    g_autoptr(GError) werr = NULL;

    /* (the next check downloads it again: not an error) */
    if (!gl_mkdir_with_parents (dir, 0700, &werr) ||
        !g_file_set_contents_full (release_path, g_bytes_get_data (signed_text, NULL),
                                   g_bytes_get_size (signed_text), G_FILE_SET_CONTENTS_CONSISTENT,
                                   0600, &werr) ||
        !g_key_file_save_to_file (meta, meta_path, &werr))
      g_debug ("Cannot cache %s: %s", url, werr->message);
  }
  return g_steal_pointer (&release);
}

typedef struct {
  GHashTable *pkgs;        /* "name:arch" → Pkg */
  GPtrArray  *files;       /* PkgFile */
  GPtrArray  *releases;    /* GlAptRelease */
  GPtrArray  *indexes;     /* GlAptIndex */
} Universe;

static void
universe_add_index (Universe *u, const DpkgState *d, GlAptIndex *index, PkgFile *file)
{
  guint n = gl_apt_index_get_size (index);
  g_autoptr(GString) key = g_string_new (NULL);

  for (guint i = 0; i < n; i++)
    {
      const GlAptIndexEntry *e = gl_apt_index_get (index, i);
      const char *arch = strcmp (e->arch, "all") == 0 ? d->native : e->arch;
      Pkg *p;
      Ver *v;

      if (!g_strv_contains ((const char * const *) d->archs, arch))
        continue;
      g_string_assign (key, e->name);
      g_string_append_c (key, ':');
      g_string_append (key, arch);
      p = g_hash_table_lookup (u->pkgs, key->str);
      if (p == NULL)
        {
          /* only what is installed can be upgraded: skip the rest early */
          if (!g_hash_table_contains (d->installed, key->str))
            continue;
          p = g_new0 (Pkg, 1);
          p->name = g_strdup (e->name);
          p->arch = g_strdup (arch);
          p->versions = g_array_new (FALSE, FALSE, sizeof (Ver));
          g_hash_table_insert (u->pkgs, g_strdup (key->str), p);
        }
      v = pkg_version (p, e->version);
      if (v->priority < file->priority)
        v->priority = file->priority;
      if (v->arch_field == NULL)
        v->arch_field = e->arch;
      if (e->phased < v->phased)
        v->phased = e->phased;
      g_ptr_array_add (v->files, file);
    }
}

static char *
suites_of (const Ver *v)
{
  g_autoptr(GPtrArray) seen = g_ptr_array_new ();
  GString *s = g_string_new (NULL);

  for (guint i = 0; i < v->files->len; i++)
    {
      const PkgFile *f = v->files->pdata[i];
      const char *suite = f->release->suite ? f->release->suite : f->release->codename;

      if (suite == NULL || g_ptr_array_find_with_equal_func (seen, suite, g_str_equal, NULL))
        continue;
      g_ptr_array_add (seen, (gpointer) suite);
      if (s->len > 0)
        g_string_append_c (s, ',');
      g_string_append (s, suite);
    }
  return g_string_free (s, FALSE);
}

static int
update_compare (gconstpointer a, gconstpointer b)
{
  const GlUpdate *ua = *(GlUpdate * const *) a;
  const GlUpdate *ub = *(GlUpdate * const *) b;
  int r = strcmp (ua->name, ub->name);

  return r != 0 ? r : strcmp (ua->arch, ub->arch);
}

GPtrArray *
gl_updates_check (const char * const  *layers,
                  const char          *cache_dir,
                  const char          *index_cache_dir,
                  GlUpdatesStats      *stats,
                  GCancellable        *cancellable,
                  GError             **error)
{
  g_autoptr(GPtrArray) sources = NULL;
  g_autoptr(GPtrArray) pins = NULL;
  g_auto(DpkgState) dpkg = { NULL, NULL, NULL };
  Universe u;
  g_autoptr(GHashTable) by_dist = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  GPtrArray *result = NULL;
  gboolean ok = TRUE;
  GHashTableIter it;
  gpointer key, value;

  g_return_val_if_fail (layers != NULL && layers[0] != NULL, NULL);

  if (stats)
    memset (stats, 0, sizeof *stats);
  if (!read_dpkg_state (layers, &dpkg, error))
    return NULL;
  sources = read_sources (layers, error);
  if (sources == NULL)
    return NULL;
  pins = read_preferences (layers, error);
  if (pins == NULL)
    return NULL;

  u.pkgs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) pkg_free);
  u.files = g_ptr_array_new_with_free_func ((GDestroyNotify) pkg_file_free);
  u.releases = g_ptr_array_new_with_free_func ((GDestroyNotify) gl_apt_release_free);
  u.indexes = g_ptr_array_new_with_free_func ((GDestroyNotify) gl_apt_index_free);

  for (guint i = 0; ok && i < sources->len; i++)
    {
      const GlAptSource *s = sources->pdata[i];
      gboolean flat = g_str_has_suffix (s->suite, "/");
      g_autofree char *dist_url = flat ? g_strconcat (s->uri, s->suite, NULL)
                                       : g_strconcat (s->uri, "dists/", s->suite, "/", NULL);
      GlAptRelease *release = g_hash_table_lookup (by_dist, dist_url);
      const char * const *archs = (const char * const *) (s->archs ? s->archs : dpkg.archs);
      g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func (g_free);
      g_autofree char *host = url_host (s->uri);

      if (release == NULL)
        {
          release = fetch_release (layers, s, dist_url, cache_dir, stats, cancellable, error);
          if (release == NULL)
            {
              ok = FALSE;
              break;
            }
          g_ptr_array_add (u.releases, release);
          g_hash_table_insert (by_dist, g_strdup (dist_url), release);
        }

      /* the indexes this source asks for, as the Release lists them */
      for (guint c = 0; flat ? c < 1 : s->components[c] != NULL; c++)
        {
          for (guint a = 0; archs[a] != NULL; a++)
            {
              if (!g_strv_contains ((const char * const *) dpkg.archs, archs[a]))
                continue;
              if (release->architectures[0] != NULL &&
                  !g_strv_contains ((const char * const *) release->architectures, archs[a]))
                continue;
              g_ptr_array_add (paths, flat ? g_strdup ("Packages")
                                           : g_strdup_printf ("%s/binary-%s/Packages", s->components[c], archs[a]));
              if (flat)
                break;
            }
          if (!flat && g_strv_contains ((const char * const *) release->architectures, "all"))
            g_ptr_array_add (paths, g_strdup_printf ("%s/binary-all/Packages", s->components[c]));
        }

      for (guint p = 0; ok && p < paths->len; p++)
        {
          const char *path = paths->pdata[p];
          g_autoptr(GError) ierr = NULL;
          GlAptIndex *index;
          PkgFile *file;
          gboolean downloaded = FALSE;
          g_auto(GStrv) comps = g_strsplit (path, "/", 3);

          index = gl_apt_index_fetch (dist_url, release, path, index_cache_dir,
                                      &downloaded, cancellable, &ierr);
          if (index == NULL && ierr != NULL)
            {
              g_propagate_prefixed_error (error, g_steal_pointer (&ierr), "%s: ", s->where);
              ok = FALSE;
              break;
            }
          if (index == NULL)
            {
              g_debug ("%s: %s%s is not in its Release: skipped", s->where, dist_url, path);
              continue;
            }
          if (stats)
            {
              stats->indexes++;
              stats->downloads += downloaded;
              stats->requests += downloaded;
            }
          g_ptr_array_add (u.indexes, index);
          file = g_new0 (PkgFile, 1);
          file->release = release;
          file->component = flat ? g_strdup ("") : g_strdup (comps[0]);
          file->arch = flat ? g_strdup ("") : g_strdup (comps[1] + strlen ("binary-"));
          file->host = g_strdup (host);
          file->priority = release->not_automatic ? (release->but_automatic_upgrades ? 100 : 1) : 500;
          for (guint k = 0; k < pins->len; k++)
            {
              const Pin *pin = pins->pdata[k];

              if (pin_is_generic (pin) && pin_matches_file (pin, file))
                {
                  file->priority = pin->priority;
                  break;
                }
            }
          g_ptr_array_add (u.files, file);
          universe_add_index (&u, &dpkg, index, file);
        }
    }

  if (ok)
    {
      result = g_ptr_array_new_with_free_func ((GDestroyNotify) gl_update_free);
      g_hash_table_iter_init (&it, u.pkgs);
      while (g_hash_table_iter_next (&it, &key, &value))
        {
          Pkg *p = value;
          Installed *inst = g_hash_table_lookup (dpkg.installed, key);
          Ver *iv;
          const Ver *cand;

          iv = pkg_version (p, inst->version);
          iv->installed = TRUE;
          if (iv->priority < 100)
            iv->priority = 100;
          cand = candidate (p, pins);
          if (cand != NULL && gl_deb_version_compare (cand->version, inst->version) > 0)
            {
              GlUpdate *up = g_new0 (GlUpdate, 1);

              up->name = g_strdup (p->name);
              up->arch = g_strdup (cand->arch_field ? cand->arch_field : p->arch);
              up->installed = g_strdup (inst->version);
              up->candidate = g_strdup (cand->version);
              up->suites = suites_of (cand);
              up->held = inst->held;
              up->phased = cand->phased < 100;
              g_ptr_array_add (result, up);
            }
        }
      g_ptr_array_sort (result, update_compare);
    }
  g_hash_table_unref (u.pkgs);
  g_ptr_array_unref (u.files);
  g_ptr_array_unref (u.indexes);
  g_ptr_array_unref (u.releases);
  return result;
}
