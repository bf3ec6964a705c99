/* gl-manifest.c: a line-based text file, fields separated by tabs and each
 * escaped with g_strescape, so any path or name round-trips:
 *
 *   glimpse-export-manifest 1
 *   sandbox  ID  NAME  APP;APP  (in an APP, ';' and '\\' escaped as g_strescape
 *                                would, so a name with a ';' stays one)
 *   file     PATH  SANDBOX  SHA256[,SHA256]
 *   dir      PATH
 *   merged   PATH  CREATED(0|1)
 *   default  MIME-TYPE  DESKTOP-ID
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gl-manifest.h"

#define MANIFEST_MAGIC "glimpse-export-manifest 1"

static void
manifest_file_free (GlManifestFile *f)
{
  g_free (f->path);
  g_free (f->sandbox);
  g_strfreev (f->checksums);
  g_free (f->stat);
  g_free (f->source);
  g_free (f);
}

static void
manifest_sandbox_free (GlManifestSandbox *s)
{
  g_free (s->id);
  g_free (s->name);
  g_strfreev (s->apps);
  g_free (s);
}

void
gl_manifest_free (GlManifest *manifest)
{
  if (manifest == NULL)
    return;
  g_free (manifest->path);
  g_hash_table_unref (manifest->files);
  g_hash_table_unref (manifest->sandboxes);
  g_hash_table_unref (manifest->dirs);
  g_hash_table_unref (manifest->merged);
  g_hash_table_unref (manifest->defaults);
  g_free (manifest);
}

char *
gl_checksum_bytes (GBytes *bytes)
{
  return g_compute_checksum_for_bytes (G_CHECKSUM_SHA256, bytes);
}

char *
gl_checksum_file (const char *path)
{
  g_autoptr(GMappedFile) mf = g_mapped_file_new (path, FALSE, NULL);
  g_autoptr(GBytes) bytes = NULL;

  if (mf == NULL)
    return NULL;
  bytes = g_mapped_file_get_bytes (mf);
  return gl_checksum_bytes (bytes);
}

char *
gl_manifest_stat_key (const char *path)
{
  struct stat st;

  if (lstat (path, &st) != 0)
    return NULL;
  return gl_manifest_stat_key_of (&st);
}

/* @v in @base, at least @width digits, appended at *p */
static void
put_num (char **p, guint64 v, guint base, int width)
{
  char digits[24];
  int n = 0;

  do
    {
      digits[n++] = (char) ('0' + v % base);
      v /= base;
    }
  while (v > 0);
  while (n < width)
    digits[n++] = '0';
  while (n > 0)
    *(*p)++ = digits[--n];
}

static void
put_signed (char **p, gint64 v)
{
  if (v < 0)
    {
      *(*p)++ = '-';
      put_num (p, -(guint64) v, 10, 1);
    }
  else
    put_num (p, (guint64) v, 10, 1);
}

/* "%llu:%lld:%lld.%09ld:%lld.%09ld:%o" of ino, size, mtime, ctime, mode,
 * without printf (an export makes thousands) */
char *
gl_manifest_stat_key_of (const struct stat *st)
{
  char buf[160];
  char *p = buf;

  put_num (&p, (guint64) st->st_ino, 10, 1);
  *p++ = ':';
  put_signed (&p, (gint64) st->st_size);
  *p++ = ':';
  put_signed (&p, (gint64) st->st_mtim.tv_sec);
  *p++ = '.';
  put_num (&p, (guint64) st->st_mtim.tv_nsec, 10, 9);
  *p++ = ':';
  put_signed (&p, (gint64) st->st_ctim.tv_sec);
  *p++ = '.';
  put_num (&p, (guint64) st->st_ctim.tv_nsec, 10, 9);
  *p++ = ':';
  put_num (&p, (guint) st->st_mode, 8, 1);
  return g_strndup (buf, p - buf);
}

char *
gl_manifest_file_checksum (GlManifestFile *file)
{
  if (file->stat != NULL && g_strv_length (file->checksums) == 1)
    {
      g_autofree char *now = gl_manifest_stat_key (file->path);

      if (now == NULL)
        return NULL;
      if (strcmp (now, file->stat) == 0)
        return g_strdup (file->checksums[0]);
    }
  return gl_checksum_file (file->path);
}

void
gl_manifest_file_set_stat (GlManifestFile *file, const char *source)
{
  g_free (file->stat);
  file->stat = gl_manifest_stat_key (file->path);
  g_free (file->source);
  file->source = g_strdup (source);
}

void
gl_manifest_add_file (GlManifest *manifest, const char *path,
                      const char *sandbox, const char *checksum)
{
  GlManifestFile *f = g_hash_table_lookup (manifest->files, path);

  if (f == NULL)
    {
      f = g_new0 (GlManifestFile, 1);
      f->path = g_strdup (path);
      f->sandbox = g_strdup (sandbox);
      f->checksums = g_new0 (char *, 2);
      f->checksums[0] = g_strdup (checksum);
      g_hash_table_insert (manifest->files, f->path, f);
      return;
    }
  if (!g_strv_contains ((const char * const *) f->checksums, checksum))
    {
      guint n = g_strv_length (f->checksums);

      f->checksums = g_renew (char *, f->checksums, n + 2);
      f->checksums[n] = g_strdup (checksum);
      f->checksums[n + 1] = NULL;
    }
}

gboolean
gl_manifest_file_matches (GlManifestFile *file, const char *checksum)
{
  return checksum != NULL && g_strv_contains ((const char * const *) file->checksums, checksum);
}

void
gl_manifest_set_sandbox (GlManifest *manifest, const char *id,
                         const char *name, const char * const *apps)
{
  GlManifestSandbox *s = g_new0 (GlManifestSandbox, 1);

  s->id = g_strdup (id);
  s->name = g_strdup (name);
  s->apps = g_strdupv ((GStrv) apps);
  g_hash_table_replace (manifest->sandboxes, s->id, s);
}

static GlManifest *
manifest_new (const char *path)
{
  GlManifest *m = g_new0 (GlManifest, 1);

  m->path = g_strdup (path);
  m->files = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) manifest_file_free);
  m->sandboxes = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) manifest_sandbox_free);
  m->dirs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  m->merged = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  m->defaults = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  return m;
}

#define MAX_FIELDS 5

/* One line of the text, split in place (the text is the loaded file's own
 * copy): the fields are pointers into it, each undone with g_strcompress
 * only when it has a backslash (written escaped with g_strescape). */
static void
parse_line (GlManifest *m, char *line, gsize len, gsize lineno)
{
  char *f[MAX_FIELDS + 1] = { NULL, };
  char *unescaped[MAX_FIELDS + 1] = { NULL, };
  guint n = 0;
  char *p = line;
  char *end = line + len;

  *end = '\0';
  while (n <= MAX_FIELDS)
    {
      char *tab = memchr (p, '\t', end - p);

      if (tab != NULL)
        *tab = '\0';
      if (strchr (p, '\\') != NULL)
        p = unescaped[n] = g_strcompress (p);
      f[n++] = p;
      if (tab == NULL)
        break;
      p = tab + 1;
    }

  if (n > MAX_FIELDS)
    g_debug ("%s:%zu: ignoring unknown manifest line", m->path, lineno);
  else if (strcmp (f[0], "sandbox") == 0 && n == 4)
    {
      g_auto(GStrv) apps = g_strsplit (f[3], ";", -1);
      gsize k = 0;

      /* empty names dropped in place, escaped ones undone */
      for (gsize j = 0; apps[j] != NULL; j++)
        if (*apps[j] == '\0')
          g_free (apps[j]);
        else if (strchr (apps[j], '\\') != NULL)
          {
            g_autofree char *escaped = apps[j];
            apps[k++] = g_strcompress (escaped);
          }
        else
          apps[k++] = apps[j];
      apps[k] = NULL;
      gl_manifest_set_sandbox (m, f[1], f[2], (const char * const *) apps);
    }
  else if (strcmp (f[0], "file") == 0 && n == 4)
    {
      char *q = f[3];

      /* SHA256[,SHA256]: most lines have one */
      while (q != NULL)
        {
          char *comma = strchr (q, ',');

          if (comma != NULL)
            *comma = '\0';
          if (*q != '\0')
            gl_manifest_add_file (m, f[1], f[2], q);
          q = comma != NULL ? comma + 1 : NULL;
        }
    }
  else if (strcmp (f[0], "cache") == 0 && n == 4)
    {
      GlManifestFile *file = g_hash_table_lookup (m->files, f[1]);

      if (file != NULL)
        {
          g_free (file->stat);
          file->stat = *f[2] != '\0' ? g_strdup (f[2]) : NULL;
          g_free (file->source);
          file->source = *f[3] != '\0' ? g_strdup (f[3]) : NULL;
        }
    }
  else if (strcmp (f[0], "dir") == 0 && n == 2)
    g_hash_table_add (m->dirs, g_strdup (f[1]));
  else if (strcmp (f[0], "merged") == 0 && n == 3)
    g_hash_table_insert (m->merged, g_strdup (f[1]), g_strdup (f[2]));
  else if (strcmp (f[0], "default") == 0 && n == 3)
    g_hash_table_insert (m->defaults, g_strdup (f[1]), g_strdup (f[2]));
  else
    g_debug ("%s:%zu: ignoring unknown manifest line", m->path, lineno);
  for (guint i = 0; i < n; i++)
    g_free (unescaped[i]);
}

char *
gl_manifest_intent_path (const char *manifest_path)
{
  return g_strconcat (manifest_path, ".intent", NULL);
}

/* The lines of @file (the manifest or its journal) into @m; a missing file
 * adds nothing (*@found, if non-NULL, says which; *@len_out, if non-NULL,
 * gets the text's length). */
static gboolean
load_file (GlManifest *m, const char *file, gboolean *found, gsize *len_out, GError **error)
{
  g_autofree char *data = NULL;
  g_autoptr(GError) local_error = NULL;
  gsize len = 0;
  const char *p, *end;
  gsize lineno = 1;

  if (!g_file_get_contents (file, &data, &len, &local_error))
    {
      if (found != NULL)
        *found = FALSE;
      if (g_error_matches (local_error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        return TRUE;
      g_propagate_prefixed_error (error, g_steal_pointer (&local_error),
                                  "Cannot read the export manifest: ");
      return FALSE;
    }

  if (found != NULL)
    *found = TRUE;
  /* a NUL ends the text, as it always did */
  len = strlen (data);
  if (len_out != NULL)
    *len_out = len;
  end = data + len;
  p = memchr (data, '\n', len);
  if (p == NULL ? strcmp (data, MANIFEST_MAGIC) != 0
                : ((gsize) (p - data) != strlen (MANIFEST_MAGIC) ||
                   strncmp (data, MANIFEST_MAGIC, p - data) != 0))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "The export manifest %s is not one Glimpse wrote; move it away and run “glimpse export” again",
                   file);
      return FALSE;
    }

  while (p != NULL && p < end)
    {
      char *line = (char *) p + 1;
      const char *nl = memchr (line, '\n', end - line);
      gsize n = (nl != NULL ? nl : end) - line;

      lineno++;
      if (n > 0)
        parse_line (m, line, n, lineno);   /* ends the line with a NUL */
      p = nl;
    }
  return TRUE;
}

GlManifest *
gl_manifest_load (const char *path, GError **error)
{
  g_autoptr(GlManifest) m = manifest_new (path);
  g_autofree char *intent = gl_manifest_intent_path (path);

  /* a run killed between its journal and its manifest: what it meant to
   * write is ours too */
  if (!load_file (m, path, NULL, &m->loaded_len, error) ||
      !load_file (m, intent, &m->had_intent, NULL, error))
    return NULL;
  m->intent_on_disk = m->had_intent;
  return g_steal_pointer (&m);
}

/* g_strescape (@s, NULL) appended to @out, without a copy when nothing
 * needs escaping (the common case). */
static void
append_escaped (GString *out, const char *s)
{
  const guchar *p;

  for (p = (const guchar *) s; *p != '\0'; p++)
    if (*p < ' ' || *p >= 0177 || *p == '\\' || *p == '"')
      break;
  if (*p == '\0')
    {
      g_string_append_len (out, s, (const char *) p - s);
      return;
    }
  {
    g_autofree char *escaped = g_strescape (s, NULL);
    g_string_append (out, escaped);
  }
}

static void
append_fields (GString *out, ...)
{
  va_list ap;
  const char *field;
  gboolean first = TRUE;

  va_start (ap, out);
  while ((field = va_arg (ap, const char *)) != NULL)
    {
      if (!first)
        g_string_append_c (out, '\t');
      append_escaped (out, field);
      first = FALSE;
    }
  va_end (ap);
  g_string_append_c (out, '\n');
}

static void
sandbox_line (GString *out, const char *key, gpointer value)
{
  GlManifestSandbox *s = value;
  g_autoptr(GString) apps = g_string_new (NULL);

  for (gsize i = 0; s->apps != NULL && s->apps[i] != NULL; i++)
    {
      if (i > 0)
        g_string_append_c (apps, ';');
      for (const char *p = s->apps[i]; *p != '\0'; p++)
        if (*p == ';')
          g_string_append (apps, "\\073");
        else if (*p == '\\')
          g_string_append (apps, "\\\\");
        else
          g_string_append_c (apps, *p);
    }
  append_fields (out, "sandbox", s->id, s->name, apps->str, NULL);
}

static void
dir_line (GString *out, const char *key, gpointer value)
{
  append_fields (out, "dir", key, NULL);
}

static void
merged_line (GString *out, const char *key, gpointer value)
{
  append_fields (out, "merged", key, (const char *) value, NULL);
}

static void
default_line (GString *out, const char *key, gpointer value)
{
  append_fields (out, "default", key, (const char *) value, NULL);
}

static void
file_line (GString *out, const char *key, gpointer value)
{
  GlManifestFile *f = value;
  g_autofree char *sums = g_strjoinv (",", f->checksums);

  append_fields (out, "file", f->path, f->sandbox, sums, NULL);
  /* a line of its own: older versions ignore it */
  if (f->stat != NULL)
    append_fields (out, "cache", f->path, f->stat, f->source != NULL ? f->source : "", NULL);
}

/* TRUE if @path holds exactly @text */
static gboolean
text_is_saved (const char *path, GString *text)
{
  g_autoptr(GMappedFile) mf = g_mapped_file_new (path, FALSE, NULL);

  return mf != NULL && g_mapped_file_get_length (mf) == text->len &&
         (text->len == 0 || memcmp (g_mapped_file_get_contents (mf), text->str, text->len) == 0);
}

/* the journal, if one is there: not an unlink() per save for nothing */
static void
remove_intent (GlManifest *manifest)
{
  g_autofree char *intent = NULL;

  manifest->had_intent = FALSE;
  if (!manifest->intent_on_disk)
    return;
  intent = gl_manifest_intent_path (manifest->path);
  if (unlink (intent) != 0 && errno != ENOENT)
    g_debug ("Cannot remove %s: %s", intent, g_strerror (errno));
  else
    manifest->intent_on_disk = FALSE;
}

/* the directory the manifest and its journal go in */
static gboolean
ensure_manifest_dir (GlManifest *manifest, GError **error)
{
  g_autofree char *dir = g_path_get_dirname (manifest->path);

  if (g_mkdir_with_parents (dir, 0755) != 0)
    {
      int saved = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "Cannot create %s for the export manifest: %s", dir, g_strerror (saved));
      return FALSE;
    }
  return TRUE;
}

gboolean
gl_manifest_save (GlManifest *manifest, GError **error)
{
  const struct {
    GHashTable *table;
    void (*line) (GString *out, const char *key, gpointer value);
  } kinds[] = {
    { manifest->sandboxes, sandbox_line },
    { manifest->dirs, dir_line },
    { manifest->merged, merged_line },
    { manifest->defaults, default_line },
    { manifest->files, file_line },
  };
  /* room for the text as loaded and a little more: a run over one sandbox
   * changes a few lines, and a text grown by doubling would copy itself
   * (and leave its smaller copies in the heap) three or four times */
  g_autoptr(GString) out = g_string_sized_new (manifest->loaded_len + manifest->loaded_len / 16 + 256);

  g_string_append (out, MANIFEST_MAGIC "\n");
  /* each kind sorted by key, so the file is stable */
  for (gsize k = 0; k < G_N_ELEMENTS (kinds); k++)
    {
      GList *keys = g_list_sort (g_hash_table_get_keys (kinds[k].table), (GCompareFunc) strcmp);

      for (GList *l = keys; l != NULL; l = l->next)
        kinds[k].line (out, l->data, g_hash_table_lookup (kinds[k].table, l->data));
      g_list_free (keys);
    }

  /* nothing changed: no write, no fsync (compared with the file itself,
   * which is cheaper than a checksum of the text and sees a file another
   * run wrote since) */
  if (text_is_saved (manifest->path, out))
    {
      remove_intent (manifest);
      return TRUE;
    }
  if (!ensure_manifest_dir (manifest, error))
    return FALSE;
  if (!g_file_set_contents_full (manifest->path, out->str, out->len,
                                 G_FILE_SET_CONTENTS_CONSISTENT, 0644, error))
    {
      g_prefix_error (error, "Cannot write the export manifest: ");
      return FALSE;
    }
  remove_intent (manifest);
  return TRUE;
}

gboolean
gl_manifest_save_intent (GlManifest *manifest, GHashTable *paths, GError **error)
{
  g_autoptr(GString) out = g_string_new (MANIFEST_MAGIC "\n");
  g_autofree char *intent = gl_manifest_intent_path (manifest->path);
  GHashTableIter iter;
  gpointer key;

  /* a journal left by a killed run holds intents the manifest does not:
   * all of it saved, as a manifest (which removes that journal) */
  if (manifest->had_intent)
    return gl_manifest_save (manifest, error);
  g_hash_table_iter_init (&iter, paths);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    {
      GlManifestFile *f = g_hash_table_lookup (manifest->files, key);

      if (f != NULL)
        file_line (out, key, f);
    }
  if (!ensure_manifest_dir (manifest, error))
    return FALSE;
  /* on disk from the moment its temporary file may be renamed over */
  manifest->intent_on_disk = TRUE;
  if (!g_file_set_contents_full (intent, out->str, out->len, G_FILE_SET_CONTENTS_CONSISTENT, 0644, error))
    {
      g_prefix_error (error, "Cannot write the export manifest's journal: ");
      return FALSE;
    }
  return TRUE;
}

void
gl_manifest_delete (GlManifest *manifest)
{
  unlink (manifest->path);
  remove_intent (manifest);
}
