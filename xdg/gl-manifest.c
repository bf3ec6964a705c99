/* gl-manifest.c: line-based text files, fields separated by tabs and each
 * escaped with g_strescape, so any path or name round-trips.  The shared
 * file ("export-manifest"):
 *
 *   glimpse-export-manifest 2
 *   sandbox  ID  NAME  APP;APP  (in an APP, ';' and '\\' escaped as g_strescape
 *                                would, so a name with a ';' stays one)
 *   file     PATH  ""  SHA256[,SHA256]      (the files every sandbox shares)
 *   cache    PATH  STAT-KEY  SOURCE         (what the file above is on disk)
 *   dir      PATH
 *   merged   PATH  CREATED(0|1)
 *   default  MIME-TYPE  DESKTOP-ID
 *
 * and one per sandbox ("export-manifest.d/ID.manifest", the ID's bytes
 * other than letters, digits, "-_+" and a '.' not first written %XX):
 *
 *   glimpse-export-sandbox-manifest 1
 *   file     PATH  ID  SHA256[,SHA256]
 *   cache    PATH  STAT-KEY  SOURCE
 *
 * Version 1 of the shared file held every sandbox's file lines too; it is
 * read as it was, and the next save moves those lines into the sandboxes'
 * own files (written before the shared file is replaced, so a run killed
 * in between leaves both, read together).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gl-manifest.h"
#include "gl-mkdir.h"

#define MANIFEST_MAGIC "glimpse-export-manifest 2"
#define MANIFEST_MAGIC_V1 "glimpse-export-manifest 1"
#define SANDBOX_MAGIC "glimpse-export-sandbox-manifest 1"
#define SANDBOX_SUFFIX ".manifest"

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
  g_hash_table_unref (manifest->loaded);
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

/* The @n-th field (from 0) of the stat key @key, with its length */
static const char *
key_field (const char *key, guint n, gsize *len)
{
  for (; n > 0 && key != NULL; n--)
    if ((key = strchr (key, ':')) != NULL)
      key++;
  if (key == NULL)
    return NULL;
  *len = strcspn (key, ":");
  return key;
}

gboolean
gl_manifest_file_lost (GlManifestFile *file)
{
  struct stat st;
  g_autofree char *now = NULL;

  if (lstat (file->path, &st) != 0 || !S_ISREG (st.st_mode))
    return FALSE;
  if (st.st_size == 0)
    return TRUE;
  if (file->stat == NULL)
    return FALSE;
  now = gl_manifest_stat_key_of (&st);
  /* the inode (field 0) and its ctime (field 3) as recorded */
  for (guint i = 0; i < 4; i += 3)
    {
      gsize a_len = 0, b_len = 0;
      const char *a = key_field (file->stat, i, &a_len);
      const char *b = key_field (now, i, &b_len);

      if (a == NULL || b == NULL || a_len != b_len || memcmp (a, b, a_len) != 0)
        return FALSE;
    }
  return TRUE;
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
  m->loaded = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  return m;
}

#define MAX_FIELDS 5

/* One line of the text, split in place (the text is the loaded file's own
 * copy): the fields are pointers into it, each undone with g_strcompress
 * only when it has a backslash (written escaped with g_strescape). */
static void
parse_line (GlManifest *m, char *line, gsize len, gsize lineno, const char *sandbox)
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
  else if (sandbox != NULL && strcmp (f[0], "file") != 0 && strcmp (f[0], "cache") != 0)
    g_debug ("%s:%zu: ignoring a line not of sandbox %s's files", m->path, lineno, sandbox);
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
          /* a sandbox's own file holds its files only */
          if (*q != '\0')
            gl_manifest_add_file (m, f[1], sandbox != NULL ? sandbox : f[2], q);
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

/* The manifest is read and written through a buffer of this size, never
 * held whole in memory: with ten sandboxes of 300 apps it is 5 MB of text */
#define STREAM_CHUNK (64 * 1024)

/* Reads up to @len bytes of @fd into @buf (fewer only at the end): the
 * number read, or -1 with errno set */
static gssize
read_full (int fd, char *buf, gsize len)
{
  gsize done = 0;

  while (done < len)
    {
      gssize n = read (fd, buf + done, len - done);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return -1;
      if (n == 0)
        break;
      done += n;
    }
  return (gssize) done;
}

/* What @file is not: a manifest Glimpse wrote */
static void
set_not_ours (GError **error, const char *file, const char *sandbox)
{
  if (sandbox != NULL)
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                 "The export manifest %s of sandbox %s's files is not one Glimpse wrote; nothing "
                 "was changed; move it away and run “glimpse export” again", file, sandbox);
  else
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                 "The export manifest %s is not one Glimpse wrote; move it away and run “glimpse export” again",
                 file);
}

static gboolean
is_magic (const char *p, gsize len, const char *magic)
{
  return len == strlen (magic) && strncmp (p, magic, len) == 0;
}

/* The lines of @file (the shared manifest or its journal, or with
 * @sandbox, the manifest of that sandbox's files) into @m, read a chunk at
 * a time; a missing file adds nothing (*@found, if non-NULL, says which). */
static gboolean
load_file (GlManifest *m, const char *file, const char *sandbox, gboolean *found, GError **error)
{
  g_autoptr(GString) buf = NULL;
  gsize lineno = 0;
  gboolean at_end = FALSE;
  int fd = open (file, O_RDONLY | O_CLOEXEC);

  if (found != NULL)
    *found = fd >= 0;
  if (fd < 0)
    {
      int saved = errno;

      if (saved == ENOENT)
        return TRUE;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "Cannot read the export manifest: Failed to open file “%s”: %s",
                   file, g_strerror (saved));
      return FALSE;
    }

  buf = g_string_sized_new (STREAM_CHUNK + 1);
  while (!at_end)
    {
      gsize old_len = buf->len;
      gssize n;
      char *p, *nul;
      gsize used = 0;

      g_string_set_size (buf, old_len + STREAM_CHUNK);
      n = read_full (fd, buf->str + old_len, STREAM_CHUNK);
      if (n < 0)
        {
          int saved = errno;

          close (fd);
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                       "Cannot read the export manifest: Error reading file “%s”: %s",
                       file, g_strerror (saved));
          return FALSE;
        }
      g_string_set_size (buf, old_len + n);
      /* a NUL ends the text, as it always did */
      if ((nul = memchr (buf->str + old_len, '\0', n)) != NULL)
        g_string_set_size (buf, nul - buf->str);
      at_end = n < STREAM_CHUNK || nul != NULL;

      /* every whole line (and, at the end, the last one without its
       * newline); a partial one waits for the next chunk */
      for (p = buf->str; used < buf->len;)
        {
          char *nl = memchr (p, '\n', buf->len - used);
          gsize len;

          if (nl == NULL && !at_end)
            break;
          len = (nl != NULL ? nl : buf->str + buf->len) - p;
          if (lineno++ == 0)
            {
              if (sandbox != NULL ? !is_magic (p, len, SANDBOX_MAGIC)
                                  : !is_magic (p, len, MANIFEST_MAGIC) && !is_magic (p, len, MANIFEST_MAGIC_V1))
                {
                  close (fd);
                  set_not_ours (error, file, sandbox);
                  return FALSE;
                }
            }
          else if (len > 0)
            parse_line (m, p, len, lineno, sandbox);   /* ends the line with a NUL */
          used += len + (nl != NULL ? 1 : 0);
          p = buf->str + used;
        }
      g_string_erase (buf, 0, used);
    }
  close (fd);
  if (lineno == 0)
    {
      /* an empty file is not a manifest either */
      set_not_ours (error, file, sandbox);
      return FALSE;
    }
  return TRUE;
}

/* "ID.manifest", the ID's bytes other than letters, digits, "-_+" and a
 * '.' not first as %XX: any ID is one file name of its own */
static char *
sandbox_file_name (const char *id)
{
  GString *out = g_string_new (NULL);

  for (const char *p = id; *p != '\0'; p++)
    {
      guchar c = (guchar) *p;

      if (g_ascii_isalnum (c) || c == '-' || c == '_' || c == '+' || (c == '.' && p != id))
        g_string_append_c (out, (char) c);
      else
        g_string_append_printf (out, "%%%02X", c);
    }
  g_string_append (out, SANDBOX_SUFFIX);
  return g_string_free (out, FALSE);
}

/* The ID a file name of sandbox_file_name() stands for, or NULL */
static char *
sandbox_id_of (const char *name)
{
  g_autofree char *stem = NULL;
  g_autofree char *id = NULL;
  g_autofree char *again = NULL;

  if (!g_str_has_suffix (name, SANDBOX_SUFFIX) || strlen (name) == strlen (SANDBOX_SUFFIX))
    return NULL;
  stem = g_strndup (name, strlen (name) - strlen (SANDBOX_SUFFIX));
  id = g_uri_unescape_string (stem, NULL);
  if (id == NULL || *id == '\0')
    return NULL;
  again = sandbox_file_name (id);
  return strcmp (again, name) == 0 ? g_steal_pointer (&id) : NULL;
}

static char *
sandboxes_dir (const char *manifest_path)
{
  return g_strconcat (manifest_path, ".d", NULL);
}

char *
gl_manifest_sandbox_path (const char *manifest_path, const char *id)
{
  g_autofree char *dir = sandboxes_dir (manifest_path);
  g_autofree char *name = sandbox_file_name (id);

  return g_build_filename (dir, name, NULL);
}

gboolean
gl_manifest_sandbox_loaded (GlManifest *manifest, const char *id)
{
  return g_hash_table_contains (manifest->loaded, id);
}

gboolean
gl_manifest_load_sandbox (GlManifest *manifest, const char *id, GError **error)
{
  g_autofree char *path = NULL;

  g_return_val_if_fail (id != NULL && *id != '\0', FALSE);
  if (gl_manifest_sandbox_loaded (manifest, id))
    return TRUE;
  path = gl_manifest_sandbox_path (manifest->path, id);
  if (!load_file (manifest, path, id, NULL, error))
    return FALSE;
  g_hash_table_add (manifest->loaded, g_strdup (id));
  return TRUE;
}

/* Every sandbox @m has records of, loaded: a record of one is never saved
 * without the others (a manifest of version 1 holds them all; a journal,
 * the files a killed run was writing) */
static gboolean
load_sandboxes_of (GlManifest *m, GHashTable *files, GError **error)
{
  g_autoptr(GHashTable) ids = g_hash_table_new (g_str_hash, g_str_equal);
  GHashTableIter iter;
  gpointer value;

  g_hash_table_iter_init (&iter, files);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      const char *id = ((GlManifestFile *) value)->sandbox;

      if (*id != '\0' && !gl_manifest_sandbox_loaded (m, id))
        g_hash_table_add (ids, (gpointer) id);
    }
  g_hash_table_iter_init (&iter, ids);
  while (g_hash_table_iter_next (&iter, &value, NULL))
    if (!gl_manifest_load_sandbox (m, value, error))
      return FALSE;
  return TRUE;
}

GPtrArray *
gl_manifest_recorded_ids (GlManifest *manifest)
{
  g_autofree char *dir_path = sandboxes_dir (manifest->path);
  g_autoptr(GDir) dir = g_dir_open (dir_path, 0, NULL);
  GPtrArray *ids = g_ptr_array_new_with_free_func (g_free);
  GHashTableIter iter;
  gpointer key;
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      char *id = sandbox_id_of (name);

      if (id != NULL)
        g_ptr_array_add (ids, id);
    }
  g_hash_table_iter_init (&iter, manifest->sandboxes);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    g_ptr_array_add (ids, g_strdup (key));
  /* and those of records loaded already (a journal's, an older manifest's) */
  g_hash_table_iter_init (&iter, manifest->loaded);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    g_ptr_array_add (ids, g_strdup (key));
  return ids;
}

gboolean
gl_manifest_load_all (GlManifest *manifest, GError **error)
{
  g_autoptr(GPtrArray) ids = gl_manifest_recorded_ids (manifest);

  for (guint i = 0; i < ids->len; i++)
    if (!gl_manifest_load_sandbox (manifest, ids->pdata[i], error))
      return FALSE;
  return TRUE;
}

GlManifest *
gl_manifest_load_shared (const char *path, GError **error)
{
  g_autoptr(GlManifest) m = manifest_new (path);
  g_autofree char *intent = gl_manifest_intent_path (path);
  g_autoptr(GlManifest) journal = manifest_new (intent);
  GHashTableIter iter;
  gpointer value;

  if (!load_file (m, path, NULL, NULL, error) ||
      !load_sandboxes_of (m, m->files, error))
    return NULL;
  /* a run killed between its journal and its manifest: what it meant to
   * write is ours too */
  if (!load_file (journal, intent, NULL, &m->had_intent, error) ||
      !load_sandboxes_of (m, journal->files, error))
    return NULL;
  g_hash_table_iter_init (&iter, journal->files);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      GlManifestFile *jf = value;
      GlManifestFile *mf;

      for (gsize i = 0; jf->checksums[i] != NULL; i++)
        gl_manifest_add_file (m, jf->path, jf->sandbox, jf->checksums[i]);
      mf = g_hash_table_lookup (m->files, jf->path);
      if (mf != NULL && jf->stat != NULL)
        {
          g_free (mf->stat);
          mf->stat = g_strdup (jf->stat);
          g_free (mf->source);
          mf->source = g_strdup (jf->source);
        }
    }
  m->intent_on_disk = m->had_intent;
  return g_steal_pointer (&m);
}

GlManifest *
gl_manifest_load (const char *path, GError **error)
{
  g_autoptr(GlManifest) m = gl_manifest_load_shared (path, error);

  if (m == NULL || !gl_manifest_load_all (m, error))
    return NULL;
  return g_steal_pointer (&m);
}

char *
gl_manifest_state_key (const char *manifest_path)
{
  g_autofree char *dir = sandboxes_dir (manifest_path);
  g_autofree char *shared = gl_manifest_stat_key (manifest_path);
  g_autofree char *own = gl_manifest_stat_key (dir);

  /* a sandbox's file replaced is a new name in the directory: another
   * mtime and ctime of it */
  return g_strconcat (shared != NULL ? shared : "-", " ", own != NULL ? own : "-", NULL);
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

/* the journal, if one is there: not an unlink() per save for nothing */
/* fsync of the directory of @path, after a rename into it: the new name
 * on disk too (0, or the errno) */
static int
sync_parent (const char *path)
{
  g_autofree char *dir = g_path_get_dirname (path);
  int fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int saved = 0;

  if (fd < 0)
    return errno;
  if (fsync (fd) != 0)
    saved = errno;
  close (fd);
  return saved;
}

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

  return gl_mkdir_with_parents (dir, 0755, error);
}

#define N_KINDS 5

/* Where a file's text goes, a chunk at a time: compared with the file
 * there (@fd open on it, or -1 for none), or written to @fd */
typedef struct {
  gboolean compare;
  int fd;
  const char *magic;
  GPtrArray **sorted;  /* the keys of each kind, sorted (emit_text) */
  GString *buf;
  char *old;         /* compare: a chunk of the file */
  gboolean differs;  /* compare: the file has other text */
  int error;         /* write: errno of a failed write */
} ManifestSink;

static void
sink_flush (ManifestSink *sink)
{
  if (sink->buf->len == 0 || sink->differs || sink->error != 0)
    {
      g_string_truncate (sink->buf, 0);
      return;
    }
  if (sink->compare)
    {
      gssize n = -1;

      sink->old = g_realloc (sink->old, sink->buf->len);
      if (sink->fd < 0 || (n = read_full (sink->fd, sink->old, sink->buf->len)) != (gssize) sink->buf->len ||
          memcmp (sink->old, sink->buf->str, sink->buf->len) != 0)
        sink->differs = TRUE;
    }
  else
    {
      gsize done = 0;

      while (done < sink->buf->len)
        {
          gssize n = write (sink->fd, sink->buf->str + done, sink->buf->len - done);

          if (n < 0 && errno == EINTR)
            continue;
          if (n <= 0)
            {
              sink->error = n < 0 ? errno : ENOSPC;
              break;
            }
          done += n;
        }
    }
  g_string_truncate (sink->buf, 0);
}

/* The whole text into @sink, each kind sorted by key (sink->sorted) so
 * the file is stable; FALSE if the sink gave up */
static gboolean
emit_text (GlManifest *manifest, ManifestSink *sink)
{
  const struct {
    GHashTable *table;
    void (*line) (GString *out, const char *key, gpointer value);
  } kinds[N_KINDS] = {
    { manifest->sandboxes, sandbox_line },
    { manifest->dirs, dir_line },
    { manifest->merged, merged_line },
    { manifest->defaults, default_line },
    { manifest->files, file_line },
  };

  g_string_append (sink->buf, sink->magic);
  g_string_append_c (sink->buf, '\n');
  for (gsize k = 0; k < N_KINDS; k++)
    for (guint i = 0; i < sink->sorted[k]->len; i++)
      {
        const char *key = sink->sorted[k]->pdata[i];

        kinds[k].line (sink->buf, key, g_hash_table_lookup (kinds[k].table, key));
        if (sink->buf->len >= STREAM_CHUNK)
          {
            sink_flush (sink);
            if (sink->differs || sink->error != 0)
              return FALSE;
          }
      }
  sink_flush (sink);
  return !sink->differs && sink->error == 0;
}

static gint
compare_keys (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

static void
sink_clear (ManifestSink *sink)
{
  if (sink->buf != NULL)
    g_string_free (g_steal_pointer (&sink->buf), TRUE);
  g_clear_pointer (&sink->old, g_free);
  if (sink->fd >= 0)
    close (sink->fd);
  sink->fd = -1;
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (ManifestSink, sink_clear)

/* The text of one file (@magic, then the lines of the keys @sorted of
 * each kind) is never built whole: it is made a chunk at a time and
 * compared with @path (nothing changed: no write, no fsync; the file
 * itself, which sees a file another run wrote since), then, only if it
 * differs, made again into a temporary file, synced, renamed over @path,
 * and the directory synced: the manifest is the one record of an export
 * made durable (see sync_write in gl-export-sync.c). */
static gboolean
save_text (GlManifest *manifest, const char *path, const char *magic, GPtrArray **sorted,
           GError **error)
{
  g_auto(ManifestSink) sink = { TRUE, -1, magic, sorted, NULL, NULL, FALSE, 0 };
  g_autofree char *tmp = NULL;
  gboolean same;

  sink.buf = g_string_sized_new (STREAM_CHUNK + 4096);
  sink.fd = open (path, O_RDONLY | O_CLOEXEC);
  same = emit_text (manifest, &sink);
  if (same && sink.fd >= 0)
    {
      char c;
      same = read_full (sink.fd, &c, 1) == 0;   /* and no more text there */
    }
  if (sink.fd >= 0)
    close (sink.fd);
  sink.fd = -1;
  if (same)
    return TRUE;

  /* "<file>.XXXXXX", as g_file_set_contents names its temporary files
   * (a killed run's is removed by the next complete sync) */
  tmp = g_strconcat (path, ".XXXXXX", NULL);
  sink.compare = FALSE;
  sink.differs = FALSE;
  sink.fd = g_mkstemp_full (tmp, O_RDWR | O_CLOEXEC, 0644);
  if (sink.fd < 0)
    sink.error = errno;
  else
    {
      emit_text (manifest, &sink);
      if (sink.error == 0 && fsync (sink.fd) != 0)
        sink.error = errno;
      if (close (sink.fd) != 0 && sink.error == 0)
        sink.error = errno;
      sink.fd = -1;
      if (sink.error == 0 && rename (tmp, path) != 0)
        sink.error = errno;
      if (sink.error != 0)
        unlink (tmp);
      else
        sink.error = sync_parent (path);
    }
  if (sink.error != 0)
    {
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (sink.error),
                   "Cannot write the export manifest: Failed to write “%s”: %s",
                   path, g_strerror (sink.error));
      return FALSE;
    }
  return TRUE;
}

static GPtrArray *
sorted_keys (GHashTable *table)
{
  GPtrArray *keys = g_ptr_array_sized_new (g_hash_table_size (table));
  GHashTableIter iter;
  gpointer key;

  g_hash_table_iter_init (&iter, table);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    g_ptr_array_add (keys, key);
  g_ptr_array_sort (keys, compare_keys);
  return keys;
}

static void
free_kinds (GPtrArray **sorted)
{
  for (gsize k = 0; k < N_KINDS; k++)
    g_clear_pointer (&sorted[k], g_ptr_array_unref);
}

/* Each loaded sandbox's manifest (its files sorted by path), removed when
 * it has none; then the shared one (over a version 1 file only once every
 * sandbox's own is there) */
gboolean
gl_manifest_save (GlManifest *manifest, GError **error)
{
  g_autoptr(GHashTable) own = g_hash_table_new_full (g_str_hash, g_str_equal, NULL,
                                                     (GDestroyNotify) g_ptr_array_unref);
  g_autoptr(GHashTable) shared = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GPtrArray) ids = NULL;
  g_autoptr(GPtrArray) none = g_ptr_array_new ();
  GPtrArray *sorted[N_KINDS] = { NULL, };
  g_autofree char *dir = sandboxes_dir (manifest->path);
  gboolean dir_made = FALSE;
  GHashTableIter iter;
  gpointer value;

  /* a record added to a sandbox not loaded: its other records with it */
  if (!load_sandboxes_of (manifest, manifest->files, error))
    return FALSE;
  ids = sorted_keys (manifest->loaded);
  for (guint i = 0; i < ids->len; i++)
    g_hash_table_insert (own, ids->pdata[i], g_ptr_array_new ());
  g_hash_table_iter_init (&iter, manifest->files);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      GlManifestFile *f = value;

      if (*f->sandbox == '\0')
        g_hash_table_add (shared, f->path);
      else
        g_ptr_array_add (g_hash_table_lookup (own, f->sandbox), f->path);
    }

  for (guint i = 0; i < ids->len; i++)
    {
      GPtrArray *files = g_hash_table_lookup (own, ids->pdata[i]);
      g_autofree char *path = gl_manifest_sandbox_path (manifest->path, ids->pdata[i]);
      gboolean ok;

      if (files->len == 0)
        {
          if (unlink (path) != 0 && errno != ENOENT)
            {
              int saved = errno;
              g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                           "Cannot remove the export manifest %s: %s", path, g_strerror (saved));
              return FALSE;
            }
          continue;
        }
      if (!dir_made && !gl_mkdir_with_parents (dir, 0755, error))
        return FALSE;
      dir_made = TRUE;
      g_ptr_array_sort (files, compare_keys);
      for (gsize k = 0; k < N_KINDS - 1; k++)
        sorted[k] = g_ptr_array_ref (none);
      sorted[N_KINDS - 1] = g_ptr_array_ref (files);
      ok = save_text (manifest, path, SANDBOX_MAGIC, sorted, error);
      free_kinds (sorted);
      if (!ok)
        return FALSE;
    }

  sorted[0] = sorted_keys (manifest->sandboxes);
  sorted[1] = sorted_keys (manifest->dirs);
  sorted[2] = sorted_keys (manifest->merged);
  sorted[3] = sorted_keys (manifest->defaults);
  sorted[4] = sorted_keys (shared);
  if (!ensure_manifest_dir (manifest, error) ||
      !save_text (manifest, manifest->path, MANIFEST_MAGIC, sorted, error))
    {
      free_kinds (sorted);
      return FALSE;
    }
  free_kinds (sorted);
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
  int saved;

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
  /* synced (g_file_set_contents_full syncs the file before renaming it)
   * and its name too: the files written after it are not synced one by
   * one (see sync_write in gl-export-sync.c), so after a power cut the
   * journal must be there to name them as Glimpse's */
  if (!g_file_set_contents_full (intent, out->str, out->len, G_FILE_SET_CONTENTS_DURABLE, 0644, error))
    {
      g_prefix_error (error, "Cannot write the export manifest's journal: ");
      return FALSE;
    }
  if ((saved = sync_parent (intent)) != 0)
    {
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "Cannot write the export manifest's journal: Failed to sync the directory of “%s”: %s",
                   intent, g_strerror (saved));
      return FALSE;
    }
  return TRUE;
}

void
gl_manifest_delete (GlManifest *manifest)
{
  g_autofree char *dir = sandboxes_dir (manifest->path);
  GHashTableIter iter;
  gpointer key;

  g_hash_table_iter_init (&iter, manifest->loaded);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    {
      g_autofree char *path = gl_manifest_sandbox_path (manifest->path, key);
      unlink (path);
    }
  rmdir (dir);   /* if no other sandbox's is left */
  unlink (manifest->path);
  remove_intent (manifest);
}
