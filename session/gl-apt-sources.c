/* gl-apt-sources.c: apt's sources — one-line sources.list and deb822 .sources
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-apt-sources.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gl-fsutil.h"

#include <string.h>

G_DEFINE_QUARK (gl-apt-sources-error-quark, gl_apt_sources_error)

void
gl_apt_source_free (GlAptSource *source)
{
  if (source == NULL)
    return;
  g_free (source->uri);
  g_free (source->suite);
  g_strfreev (source->components);
  g_strfreev (source->archs);
  g_strfreev (source->signed_by);
  g_strfreev (source->fingerprints);
  g_free (source->inline_key);
  g_free (source->where);
  g_free (source);
}

char **
gl_apt_split_words (const char *s, const char *seps)
{
  g_auto(GStrv) v = g_strsplit_set (s, seps, -1);
  g_autoptr(GStrvBuilder) b = g_strv_builder_new ();

  for (guint i = 0; v[i] != NULL; i++)
    if (v[i][0] != '\0')
      g_strv_builder_add (b, v[i]);
  return g_strv_builder_end (b);
}

static gboolean
is_fingerprint (const char *s)
{
  gsize n = strlen (s);

  if (n > 0 && s[n - 1] == '!')
    n--;
  return (n == 40 || n == 16) && strspn (s, "0123456789abcdefABCDEF") == n;
}

/* Signed-By: keyring paths and fingerprints (a list), or an inline key. */
static void
set_signed_by (GlAptSource *s, const char *value)
{
  g_auto(GStrv) words = NULL;
  g_autoptr(GStrvBuilder) paths = g_strv_builder_new ();
  g_autoptr(GStrvBuilder) fprs = g_strv_builder_new ();

  if (strstr (value, "-----BEGIN PGP PUBLIC KEY BLOCK-----") != NULL)
    {
      g_free (s->inline_key);
      s->inline_key = g_strdup (value);
      return;
    }
  words = gl_apt_split_words (value, ", \t\n");
  for (guint i = 0; words[i] != NULL; i++)
    g_strv_builder_add (is_fingerprint (words[i]) ? fprs : paths, words[i]);
  g_strfreev (s->signed_by);
  g_strfreev (s->fingerprints);
  s->signed_by = g_strv_builder_end (paths);
  s->fingerprints = g_strv_builder_end (fprs);
  if (s->signed_by[0] == NULL)
    g_clear_pointer (&s->signed_by, g_strfreev);
}

static gboolean
is_yes (const char *value)
{
  return g_ascii_strcasecmp (value, "yes") == 0 || g_ascii_strcasecmp (value, "true") == 0;
}

static gboolean
malformed (GError **error, const char *file, guint line, const char *format, ...) G_GNUC_PRINTF (4, 5);

static gboolean
malformed (GError **error, const char *file, guint line, const char *format, ...)
{
  g_autofree char *what = NULL;
  va_list args;

  va_start (args, format);
  what = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, GL_APT_SOURCES_ERROR, GL_APT_SOURCES_ERROR_MALFORMED,
               "%s:%u: %s", file, line, what);
  return FALSE;
}

/* One line: "deb [opt=v …] URI SUITE [COMPONENT…]"; NULL with an error
 * when it is not one. */
static GlAptSource *
parse_line (const char *file, guint n, char *line, GError **error)
{
  g_autoptr(GlAptSource) s = g_new0 (GlAptSource, 1);
  g_auto(GStrv) words = NULL;
  g_auto(GStrv) opts = NULL;
  char *rest;

  /* (a bare "deb" lacks its URI and suite, not its type) */
  if (g_str_has_prefix (line, "deb-src") && (line[7] == '\0' || g_ascii_isspace (line[7])))
    {
      s->deb_src = TRUE;
      rest = line + 7;
    }
  else if (g_str_has_prefix (line, "deb") && (line[3] == '\0' || g_ascii_isspace (line[3])))
    rest = line + 3;
  else
    {
      malformed (error, file, n, "not a “deb” or “deb-src” line: %s", line);
      return NULL;
    }
  rest = g_strstrip (rest);
  if (rest[0] == '[')
    {
      char *close = strchr (rest, ']');

      if (close == NULL)
        {
          malformed (error, file, n, "the options after “[” have no “]”");
          return NULL;
        }
      *close = '\0';
      opts = gl_apt_split_words (rest + 1, " \t");
      rest = close + 1;
    }
  words = gl_apt_split_words (rest, " \t");
  if (g_strv_length (words) < 2)
    {
      malformed (error, file, n, "a “%s” line needs a URI and a suite", s->deb_src ? "deb-src" : "deb");
      return NULL;
    }
  s->enabled = TRUE;
  s->uri = g_strdup (words[0]);
  s->suite = g_strdup (words[1]);
  s->components = g_strdupv (words + 2);
  if (g_str_has_suffix (s->suite, "/") && s->components[0] != NULL)
    {
      /* apt refuses it too: "Malformed entry (absolute Suite Component)" */
      malformed (error, file, n, "the flat repository suite “%s” takes no components", s->suite);
      return NULL;
    }
  s->where = g_strdup_printf ("%s:%u", file, n);
  for (guint i = 0; opts != NULL && opts[i] != NULL; i++)
    {
      const char *eq = strchr (opts[i], '=');
      g_autofree char *key = eq ? g_strndup (opts[i], eq - opts[i]) : NULL;

      if (eq == NULL)
        {
          malformed (error, file, n, "the option “%s” has no “=”", opts[i]);
          return NULL;
        }
      if (g_str_equal (key, "arch"))
        {
          /* the last of repeated options wins (it leaked, found by fuzz-apt-sources) */
          g_strfreev (s->archs);
          s->archs = gl_apt_split_words (eq + 1, ",");
        }
      else if (g_str_equal (key, "signed-by"))
        set_signed_by (s, eq + 1);
      else if (g_str_equal (key, "trusted"))
        s->trusted = is_yes (eq + 1);
    }
  return g_steal_pointer (&s);
}

GPtrArray *
gl_apt_sources_parse_one_line (const char *file, const char *text, GError **error)
{
  g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func ((GDestroyNotify) gl_apt_source_free);
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);

  for (guint n = 0; lines[n] != NULL; n++)
    {
      char *line = lines[n];
      char *hash = strchr (line, '#');
      GlAptSource *s;

      if (hash != NULL)
        *hash = '\0';
      g_strstrip (line);
      if (line[0] == '\0')
        continue;
      s = parse_line (file, n + 1, line, error);
      if (s == NULL)
        return NULL;
      g_ptr_array_add (out, s);
    }
  return g_steal_pointer (&out);
}

/* The sources of one deb822 stanza (its fields lower-cased), appended. */
static gboolean
add_stanza (const char *file, guint line, GHashTable *fields, GPtrArray *out, GError **error)
{
  const char *types = g_hash_table_lookup (fields, "types");
  const char *uris = g_hash_table_lookup (fields, "uris");
  const char *suites = g_hash_table_lookup (fields, "suites");
  const char *v;
  g_auto(GStrv) typev = NULL;
  g_auto(GStrv) uriv = NULL;
  g_auto(GStrv) suitev = NULL;

  if (types == NULL || uris == NULL || suites == NULL)
    return malformed (error, file, line, "the entry lacks %s",
                      types == NULL ? "Types" : uris == NULL ? "URIs" : "Suites");
  typev = gl_apt_split_words (types, " \t\n");
  uriv = gl_apt_split_words (uris, " \t\n");
  suitev = gl_apt_split_words (suites, " \t\n");
  v = g_hash_table_lookup (fields, "components");
  for (guint su = 0; v != NULL && suitev[su] != NULL; su++)
    if (g_str_has_suffix (suitev[su], "/") && strspn (v, " \t\n") != strlen (v))
      /* apt refuses it too (found by tests/fuzz/fuzz-apt-sources) */
      return malformed (error, file, line, "the flat repository suite “%s” takes no Components",
                        suitev[su]);
  for (guint t = 0; typev[t] != NULL; t++)
    {
      if (!g_str_equal (typev[t], "deb") && !g_str_equal (typev[t], "deb-src"))
        return malformed (error, file, line, "unknown type “%s” (deb or deb-src)", typev[t]);
      for (guint u = 0; uriv[u] != NULL; u++)
        for (guint su = 0; suitev[su] != NULL; su++)
          {
            GlAptSource *s = g_new0 (GlAptSource, 1);

            s->deb_src = g_str_equal (typev[t], "deb-src");
            v = g_hash_table_lookup (fields, "enabled");
            s->enabled = v == NULL || is_yes (v);
            v = g_hash_table_lookup (fields, "trusted");
            s->trusted = v != NULL && is_yes (v);
            s->uri = g_strdup (uriv[u]);
            s->suite = g_strdup (suitev[su]);
            v = g_hash_table_lookup (fields, "components");
            s->components = gl_apt_split_words (v ? v : "", " \t\n");
            v = g_hash_table_lookup (fields, "architectures");
            if (v != NULL)
              s->archs = gl_apt_split_words (v, " \t\n");
            v = g_hash_table_lookup (fields, "signed-by");
            if (v != NULL)
              set_signed_by (s, v);
            s->where = g_strdup_printf ("%s:%u", file, line);
            g_ptr_array_add (out, s);
          }
    }
  return TRUE;
}

static gboolean
is_blank (const char *line)
{
  for (const char *p = line; *p != '\0'; p++)
    if (!g_ascii_isspace (*p))
      return FALSE;
  return TRUE;
}

GPtrArray *
gl_apt_sources_parse_deb822 (const char *file, const char *text, GError **error)
{
  g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func ((GDestroyNotify) gl_apt_source_free);
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  g_autoptr(GHashTable) fields = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autofree char *last = NULL;
  guint stanza_line = 0;

  for (guint n = 0; ; n++)
    {
      const char *line = lines[n];
      const char *colon;

      if (line != NULL && line[0] == '#')
        continue;
      if (line == NULL || is_blank (line))
        {
          if (g_hash_table_size (fields) > 0 && !add_stanza (file, stanza_line, fields, out, error))
            return NULL;
          g_hash_table_remove_all (fields);
          g_clear_pointer (&last, g_free);
          if (line == NULL)
            break;
          continue;
        }
      if (line[0] == ' ' || line[0] == '\t')
        {
          g_autofree char *t = g_strstrip (g_strdup (line));
          GString *v;

          if (last == NULL)
            {
              malformed (error, file, n + 1, "a continuation line outside a field");
              return NULL;
            }
          v = g_string_new (g_hash_table_lookup (fields, last));
          g_string_append_c (v, '\n');
          g_string_append (v, g_str_equal (t, ".") ? "" : t);
          g_hash_table_replace (fields, g_strdup (last), g_string_free (v, FALSE));
          continue;
        }
      colon = strchr (line, ':');
      if (colon == NULL)
        {
          malformed (error, file, n + 1, "not a field: %s", line);
          return NULL;
        }
      if (g_hash_table_size (fields) == 0)
        stanza_line = n + 1;
      g_free (last);
      last = g_ascii_strdown (line, colon - line);
      g_hash_table_replace (fields, g_strdup (last), g_strstrip (g_strdup (colon + 1)));
    }
  return g_steal_pointer (&out);
}

static gint
compare_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

/* The files apt reads under @root, in its order (relative to @root):
 * sources.list, then the parts of sources.list.d by name (which is the
 * order of the paths: sources.list is a prefix of theirs); @tree: the
 * directory is opened without following links (gl_tree_*). */
static GPtrArray *
source_files (const char *root, gboolean tree)
{
  g_autoptr(GPtrArray) files = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *path = g_build_filename (root, "etc", "apt", "sources.list.d", NULL);
  int fd = tree ? gl_tree_open_dir (root, "etc/apt/sources.list.d", NULL)
                : open (path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = fd >= 0 ? fdopendir (fd) : NULL;
  struct dirent *e;

  if (fd >= 0 && d == NULL)
    close (fd);
  g_ptr_array_add (files, g_strdup ("etc/apt/sources.list"));
  while (d != NULL && (e = readdir (d)) != NULL)
    {
      /* apt's rule for parts: letters, digits, '_', '-', '.' only */
      if (strspn (e->d_name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")
          != strlen (e->d_name))
        continue;
      if (g_str_has_suffix (e->d_name, ".list") || g_str_has_suffix (e->d_name, ".sources"))
        g_ptr_array_add (files, g_build_filename ("etc", "apt", "sources.list.d", e->d_name, NULL));
    }
  if (d != NULL)
    closedir (d);
  g_ptr_array_sort (files, compare_names);
  return g_steal_pointer (&files);
}

/* The sources of one file; an empty array when it does not exist. */
static GPtrArray *
read_file (const char *root, const char *rel, gboolean tree, GError **error)
{
  g_autofree char *path = g_build_filename (root, rel, NULL);
  g_autofree char *text = NULL;
  g_autoptr(GError) local_error = NULL;

  if (tree ? !gl_tree_read_file_max (root, rel, 4 * 1024 * 1024, &text, NULL, &local_error)
           : !g_file_get_contents (path, &text, NULL, &local_error))
    {
      if (g_error_matches (local_error, G_FILE_ERROR, G_FILE_ERROR_NOENT)
          || g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND))
        return g_ptr_array_new_with_free_func ((GDestroyNotify) gl_apt_source_free);
      if (tree)
        g_propagate_error (error, g_steal_pointer (&local_error));
      else
        g_set_error (error, G_IO_ERROR, g_io_error_from_file_error (local_error->code),
                     "Cannot read %s: %s", path, local_error->message);
      return NULL;
    }
  if (g_str_has_suffix (path, ".sources"))
    return gl_apt_sources_parse_deb822 (path, text, error);
  return gl_apt_sources_parse_one_line (path, text, error);
}

static GPtrArray *
sources_read (const char *root, gboolean tree, GError **error)
{
  g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func ((GDestroyNotify) gl_apt_source_free);
  g_autoptr(GPtrArray) files = source_files (root, tree);

  for (guint i = 0; i < files->len; i++)
    {
      g_autoptr(GPtrArray) some = read_file (root, files->pdata[i], tree, error);

      if (some == NULL)
        return NULL;
      g_ptr_array_extend_and_steal (out, g_steal_pointer (&some));
    }
  return g_steal_pointer (&out);
}

GPtrArray *
gl_apt_sources_read (const char *root, GError **error)
{
  return sources_read (root, FALSE, error);
}

GPtrArray *
gl_apt_sources_read_tree (const char *root, GError **error)
{
  return sources_read (root, TRUE, error);
}

/* ------------------------------------------------ an overlay's sources */

typedef enum {
  LAYER_NONE,      /* no entry: the layer below shows */
  LAYER_FILE,      /* a regular file */
  LAYER_HIDDEN,    /* a whiteout: nothing */
  LAYER_OTHER,     /* a link, a directory, a device: not read */
} LayerEntry;

/* What the directory @dfd (-1: none) has at @name, without following it */
static LayerEntry
layer_entry (int dfd, const char *name)
{
  struct stat st;

  if (dfd < 0 || fstatat (dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
    return LAYER_NONE;
  if (S_ISREG (st.st_mode))
    return LAYER_FILE;
  return gl_overlay_is_whiteout (&st) ? LAYER_HIDDEN : LAYER_OTHER;
}

static void
close_fd (int *fd)
{
  if (*fd >= 0)
    close (*fd);
}

/* Whether the layers below @upper show at its directory @rel: not when it
 * is opaque or lies under an opaque one, nor when a whiteout or another
 * non-directory stands on the way (gl_layer_open_dir); a link on the way,
 * which is not followed, is an error (what it shows is unknown).  *@fd:
 * the directory, or -1. */
static gboolean
layer_shows_lower (const char *upper, const char *rel, int *fd, gboolean *lower, GError **error)
{
  gboolean opaque = FALSE;

  *fd = -1;
  *lower = TRUE;
  if (upper == NULL)
    return TRUE;
  switch (gl_layer_open_dir (upper, rel, fd, &opaque))
    {
    case GL_LAYER_NONE:
      return TRUE;
    case GL_LAYER_HIDES:
      *lower = FALSE;
      return TRUE;
    case GL_LAYER_DIR:
      *lower = !opaque;
      return TRUE;
    case GL_LAYER_UNKNOWN:
      break;
    }
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_REGULAR_FILE,
               "%s/%s cannot be read: a link on the way (not followed), or unreadable", upper, rel);
  return FALSE;
}

GPtrArray *
gl_apt_sources_read_layers (const char *upper, const char *lower, gboolean lower_tree, GError **error)
{
  g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func ((GDestroyNotify) gl_apt_source_free);
  g_autoptr(GPtrArray) names = NULL;
  g_autoptr(GPtrArray) lower_names = NULL;
  __attribute__((cleanup (close_fd))) int apt = -1;
  __attribute__((cleanup (close_fd))) int parts = -1;
  gboolean lower_list, lower_parts;

  /* (the upper layer as the view shows it: opaque directories and
   * whiteouts on the way hide the lower's files, as in apt's view) */
  if (!layer_shows_lower (upper, "etc/apt", &apt, &lower_list, error)
      || !layer_shows_lower (upper, "etc/apt/sources.list.d", &parts, &lower_parts, error))
    return NULL;
  names = upper != NULL ? source_files (upper, TRUE) : g_ptr_array_new_with_free_func (g_free);
  lower_names = source_files (lower, lower_tree);
  for (guint i = 0; i < lower_names->len; i++)
    if (!g_ptr_array_find_with_equal_func (names, lower_names->pdata[i], g_str_equal, NULL))
      g_ptr_array_add (names, g_strdup (lower_names->pdata[i]));
  g_ptr_array_sort (names, compare_names);
  for (guint i = 0; i < names->len; i++)
    {
      const char *rel = names->pdata[i];
      gboolean part = g_str_has_prefix (rel, "etc/apt/sources.list.d/");
      g_autofree char *base = g_path_get_basename (rel);
      g_autoptr(GPtrArray) some = NULL;

      switch (layer_entry (part ? parts : apt, base))
        {
        case LAYER_HIDDEN:
          continue;
        case LAYER_OTHER:
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_REGULAR_FILE,
                       "%s/%s is not a regular file", upper, rel);
          return NULL;
        case LAYER_FILE:
          some = read_file (upper, rel, TRUE, error);
          break;
        case LAYER_NONE:
          if (!(part ? lower_parts : lower_list))
            continue;
          some = read_file (lower, rel, lower_tree, error);
          break;
        }
      if (some == NULL)
        return NULL;
      g_ptr_array_extend_and_steal (out, g_steal_pointer (&some));
    }
  return g_steal_pointer (&out);
}

/* apt's QuoteString of URItoFileName: these, blanks, controls and
 * non-ASCII bytes as %xx */
#define APT_URI_BAD "\\|{}[]<>\"^~_=!@#$%^&*"

char *
gl_apt_source_index_name (const GlAptSource *s)
{
  g_autoptr(GString) out = g_string_new (NULL);
  g_autofree char *uri = g_str_has_suffix (s->uri, "/") ? g_strdup (s->uri) : g_strconcat (s->uri, "/", NULL);
  g_autofree char *meta = NULL;
  const char *p = uri, *colon, *slash, *at;
  g_autofree char *host = NULL;

  /* debReleaseIndex's MetaIndexURI without the file's name */
  if (g_str_equal (s->suite, "/"))
    meta = g_strdup (uri);
  else if (g_str_has_suffix (s->suite, "/"))
    meta = g_strconcat (uri, s->suite, NULL);
  else
    meta = g_strconcat (uri, "dists/", s->suite, "/", NULL);
  /* URItoFileName: the URI without its scheme, user and password (an
   * IPv6 host without its brackets) */
  p = meta;
  colon = strchr (p, ':');
  if (colon != NULL && strcspn (p, "/") > (gsize) (colon - p))
    p = colon + 1;
  if (g_str_has_prefix (p, "//"))
    {
      p += 2;
      slash = strchr (p, '/');
      host = slash ? g_strndup (p, slash - p) : g_strdup (p);
      p = slash ? slash : p + strlen (p);
      at = strrchr (host, '@');
      g_string_append (out, at ? at + 1 : host);
      if (out->str[0] == '[')
        {
          char *close = strchr (out->str, ']');
          if (close != NULL)
            {
              g_string_erase (out, close - out->str, 1);
              g_string_erase (out, 0, 1);
            }
        }
    }
  g_string_append (out, p);
  {
    g_autoptr(GString) quoted = g_string_sized_new (out->len);
    for (const char *c = out->str; *c; c++)
      {
        guchar u = (guchar) *c;
        if (u <= 0x20 || u >= 0x7f || strchr (APT_URI_BAD, u) != NULL)
          g_string_append_printf (quoted, "%%%02x", u);
        else
          g_string_append_c (quoted, u == '/' ? '_' : (char) u);
      }
    return g_string_free (g_steal_pointer (&quoted), FALSE);
  }
}

static gboolean
is_debian_mirror (const GlAptSource *s)
{
  if (!s->enabled || s->deb_src || s->uri[0] == '\0' || strstr (s->suite, "security") != NULL)
    return FALSE;
  /* deb822 entries name their keyring; one-line ones show it in the URI */
  if (strstr (s->where, ".sources:") != NULL)
    {
      for (guint i = 0; s->signed_by != NULL && s->signed_by[i] != NULL; i++)
        if (strstr (s->signed_by[i], "debian-archive-keyring") != NULL)
          return TRUE;
      return FALSE;
    }
  return strstr (s->uri, "/debian") != NULL;
}

char *
gl_apt_sources_find_debian_mirror (const char *apt_root)
{
  g_autoptr(GPtrArray) files = source_files (apt_root, FALSE);

  for (guint i = 0; i < files->len; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GPtrArray) sources = read_file (apt_root, files->pdata[i], FALSE, &error);

      if (sources == NULL)
        {
          g_debug ("Skipping %s: %s", (char *) files->pdata[i], error->message);
          continue;
        }
      for (guint j = 0; j < sources->len; j++)
        {
          GlAptSource *s = sources->pdata[j];
          if (is_debian_mirror (s))
            return g_strdup (s->uri);
        }
    }
  return NULL;
}
