/* gl-apt-index.c: a repository's Packages index
 *
 * .xz is decoded with liblzma: GLib has no xz converter, and liblzma is
 * the library xz-utils, dpkg and apt use themselves (maintained, already
 * on every Debian system).  .gz goes through GZlibDecompressor.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-apt-index.h"
#include "gl-deb-version.h"
#include "gl-fsutil.h"

#include <string.h>

#include <lzma.h>
#include <glib/gstdio.h>

struct _GlAptIndex {
  GStringChunk *strings;
  GArray       *entries;   /* GlAptIndexEntry */
};

GlAptIndex *
gl_apt_index_new (void)
{
  GlAptIndex *index = g_new0 (GlAptIndex, 1);

  index->strings = g_string_chunk_new (64 * 1024);
  index->entries = g_array_new (FALSE, FALSE, sizeof (GlAptIndexEntry));
  return index;
}

void
gl_apt_index_free (GlAptIndex *index)
{
  if (index == NULL)
    return;
  g_string_chunk_free (index->strings);
  g_array_unref (index->entries);
  g_free (index);
}

guint
gl_apt_index_get_size (GlAptIndex *index)
{
  return index->entries->len;
}

const GlAptIndexEntry *
gl_apt_index_get (GlAptIndex *index,
                  guint       i)
{
  g_return_val_if_fail (i < index->entries->len, NULL);
  return &g_array_index (index->entries, GlAptIndexEntry, i);
}

static void
index_add (GlAptIndex *index, const char *name, const char *arch, const char *version, guint phased)
{
  GlAptIndexEntry e;

  /* names and versions are nearly all distinct: interning them would be
   * a hash lookup per stanza for nothing; architectures are a handful */
  e.name = g_string_chunk_insert (index->strings, name);
  e.arch = g_string_chunk_insert_const (index->strings, arch);
  e.version = g_string_chunk_insert (index->strings, version);
  e.phased = phased;
  g_array_append_val (index->entries, e);
}

/* --- the streaming parser --- */

struct _GlAptIndexParser {
  GlAptIndex *index;
  char       *what;
  GString    *line;        /* an incomplete line carried between feeds */
  guint       lineno;
  guint       stanza_line;
  char       *package;
  char       *arch;
  char       *version;
  guint       phased;
  gboolean    in_stanza;
};

GlAptIndexParser *
gl_apt_index_parser_new (GlAptIndex *into,
                         const char *what)
{
  GlAptIndexParser *p = g_new0 (GlAptIndexParser, 1);

  p->index = into;
  p->what = g_strdup (what);
  p->line = g_string_new (NULL);
  p->phased = 100;
  return p;
}

void
gl_apt_index_parser_free (GlAptIndexParser *p)
{
  if (p == NULL)
    return;
  g_free (p->what);
  g_string_free (p->line, TRUE);
  g_free (p->package);
  g_free (p->arch);
  g_free (p->version);
  g_free (p);
}

static gboolean
end_stanza (GlAptIndexParser *p, GError **error)
{
  g_autoptr(GError) verr = NULL;

  if (!p->in_stanza)
    return TRUE;
  p->in_stanza = FALSE;
  if (p->package == NULL || p->version == NULL || p->arch == NULL)
    {
      g_set_error (error, GL_APT_ERROR, GL_APT_ERROR_MALFORMED,
                   "%s: the paragraph at line %u lacks %s", p->what, p->stanza_line,
                   p->package == NULL ? "Package" : p->version == NULL ? "Version" : "Architecture");
      return FALSE;
    }
  if (!gl_deb_version_check (p->version, &verr))
    {
      g_set_error (error, GL_APT_ERROR, GL_APT_ERROR_MALFORMED,
                   "%s: package %s at line %u: %s", p->what, p->package, p->stanza_line, verr->message);
      return FALSE;
    }
  index_add (p->index, p->package, p->arch, p->version, p->phased);
  g_clear_pointer (&p->package, g_free);
  g_clear_pointer (&p->arch, g_free);
  g_clear_pointer (&p->version, g_free);
  p->phased = 100;
  return TRUE;
}

static gboolean
field_is (const char *line, gsize len, const char *name, gsize name_len)
{
  return len > name_len && line[name_len] == ':' && g_ascii_strncasecmp (line, name, name_len) == 0;
}

static char *
field_value (const char *line, gsize len, gsize name_len)
{
  const char *v = line + name_len + 1;
  const char *end = line + len;

  while (v < end && (*v == ' ' || *v == '\t'))
    v++;
  while (end > v && g_ascii_isspace (end[-1]))
    end--;
  return g_strndup (v, end - v);
}

static gboolean
parse_line (GlAptIndexParser *p, const char *line, gsize len, GError **error)
{
  p->lineno++;
  if (len > 0 && line[len - 1] == '\r')
    len--;
  if (len == 0)
    return end_stanza (p, error);
  if (line[0] == ' ' || line[0] == '\t')
    {
      if (!p->in_stanza)
        {
          g_set_error (error, GL_APT_ERROR, GL_APT_ERROR_MALFORMED,
                       "%s: line %u continues no field", p->what, p->lineno);
          return FALSE;
        }
      return TRUE;
    }
  if (line[0] == '#')
    return TRUE;
  if (!p->in_stanza)
    {
      p->in_stanza = TRUE;
      p->stanza_line = p->lineno;
    }
  if (memchr (line, ':', len) == NULL)
    {
      g_set_error (error, GL_APT_ERROR, GL_APT_ERROR_MALFORMED,
                   "%s: line %u is not a field", p->what, p->lineno);
      return FALSE;
    }
  switch (line[0])
    {
    case 'P': case 'p':
      if (field_is (line, len, "Package", 7))
        {
          g_free (p->package);
          p->package = field_value (line, len, 7);
        }
      else if (field_is (line, len, "Phased-Update-Percentage", 24))
        {
          g_autofree char *v = field_value (line, len, 24);
          guint64 n = 0;

          if (!g_ascii_string_to_unsigned (v, 10, 0, 100, &n, NULL))
            {
              g_set_error (error, GL_APT_ERROR, GL_APT_ERROR_MALFORMED,
                           "%s: line %u: Phased-Update-Percentage \"%s\" is not 0…100",
                           p->what, p->lineno, v);
              return FALSE;
            }
          p->phased = n;
        }
      break;
    case 'V': case 'v':
      if (field_is (line, len, "Version", 7))
        {
          g_free (p->version);
          p->version = field_value (line, len, 7);
        }
      break;
    case 'A': case 'a':
      if (field_is (line, len, "Architecture", 12))
        {
          g_free (p->arch);
          p->arch = field_value (line, len, 12);
        }
      break;
    default:
      break;
    }
  return TRUE;
}

gboolean
gl_apt_index_parser_feed (GlAptIndexParser  *p,
                          const char        *data,
                          gsize              length,
                          GError           **error)
{
  const char *end = data + length;

  while (data < end)
    {
      const char *nl = memchr (data, '\n', end - data);

      if (nl == NULL)
        {
          g_string_append_len (p->line, data, end - data);
          if (p->line->len > 1024 * 1024)
            {
              g_set_error (error, GL_APT_ERROR, GL_APT_ERROR_MALFORMED,
                           "%s: line %u is longer than 1 MiB", p->what, p->lineno + 1);
              return FALSE;
            }
          return TRUE;
        }
      if (p->line->len > 0)
        {
          g_string_append_len (p->line, data, nl - data);
          if (!parse_line (p, p->line->str, p->line->len, error))
            return FALSE;
          g_string_truncate (p->line, 0);
        }
      else if (!parse_line (p, data, nl - data, error))
        return FALSE;
      data = nl + 1;
    }
  return TRUE;
}

gboolean
gl_apt_index_parser_finish (GlAptIndexParser  *p,
                            GError           **error)
{
  if (p->line->len > 0)
    {
      if (!parse_line (p, p->line->str, p->line->len, error))
        return FALSE;
      g_string_truncate (p->line, 0);
    }
  return end_stanza (p, error);
}

/* --- decompression in front of the parser --- */

typedef enum { COMP_NONE, COMP_GZ, COMP_XZ } Compression;

typedef struct {
  Compression       comp;
  lzma_stream       xz;
  GConverter       *gz;
  GlAptIndexParser *parser;
  GChecksum        *sha256;   /* of the bytes as they arrive; nullable */
  guint64           received;
  const char       *what;
  gboolean          ended;    /* the compressed stream said it is complete */
} Pipeline;

#define OUTBUF (64 * 1024)

static gboolean
pipeline_feed (Pipeline *pl, const guint8 *data, gsize len, gboolean last, GError **error)
{
  guint8 out[OUTBUF];

  /* (not the empty end pipeline_finish feeds: the size and SHA256 have
   * been compared, and read, by then; a GChecksum read is closed) */
  if (pl->sha256 != NULL && len > 0)
    g_checksum_update (pl->sha256, data, len);
  pl->received += len;

  switch (pl->comp)
    {
    case COMP_NONE:
      return gl_apt_index_parser_feed (pl->parser, (const char *) data, len, error);

    case COMP_XZ:
      pl->xz.next_in = data;
      pl->xz.avail_in = len;
      do
        {
          lzma_ret r;

          pl->xz.next_out = out;
          pl->xz.avail_out = sizeof out;
          r = lzma_code (&pl->xz, last ? LZMA_FINISH : LZMA_RUN);
          if (!gl_apt_index_parser_feed (pl->parser, (const char *) out, sizeof out - pl->xz.avail_out, error))
            return FALSE;
          if (r == LZMA_STREAM_END)
            {
              pl->ended = TRUE;
              break;
            }
          if (r == LZMA_BUF_ERROR && last)
            break;   /* truncated: reported by the caller */
          if (r != LZMA_OK)
            {
              g_set_error (error, GL_APT_ERROR, GL_APT_ERROR_MALFORMED,
                           "%s: the xz data is corrupt (liblzma error %d)", pl->what, (int) r);
              return FALSE;
            }
        }
      while (pl->xz.avail_in > 0 || pl->xz.avail_out == 0);
      return TRUE;

    case COMP_GZ:
      {
        gsize in_off = 0;

        do
          {
            gsize read = 0, written = 0;
            g_autoptr(GError) cerr = NULL;
            GConverterResult r = g_converter_convert (pl->gz, data + in_off, len - in_off,
                                                      out, sizeof out,
                                                      last ? G_CONVERTER_INPUT_AT_END : G_CONVERTER_NO_FLAGS,
                                                      &read, &written, &cerr);
            if (r == G_CONVERTER_ERROR)
              {
                if (g_error_matches (cerr, G_IO_ERROR, G_IO_ERROR_PARTIAL_INPUT) && !last)
                  return TRUE;   /* needs more input than this piece */
                g_set_error (error, GL_APT_ERROR, GL_APT_ERROR_MALFORMED,
                             "%s: the gzip data is corrupt or cut short: %s", pl->what, cerr->message);
                return FALSE;
              }
            in_off += read;
            if (!gl_apt_index_parser_feed (pl->parser, (const char *) out, written, error))
              return FALSE;
            if (r == G_CONVERTER_FINISHED)
              {
                pl->ended = TRUE;
                break;
              }
            if (read == 0 && written == 0)
              break;
          }
        while (in_off < len || last);
        return TRUE;
      }
    }
  g_assert_not_reached ();
}

static gboolean
pipeline_init (Pipeline *pl, Compression comp, GlAptIndexParser *parser, gboolean checksum,
               const char *what, GError **error)
{
  memset (pl, 0, sizeof *pl);
  pl->comp = comp;
  pl->parser = parser;
  pl->what = what;
  pl->sha256 = checksum ? g_checksum_new (G_CHECKSUM_SHA256) : NULL;
  if (comp == COMP_XZ)
    {
      lzma_stream init = LZMA_STREAM_INIT;

      pl->xz = init;
      if (lzma_stream_decoder (&pl->xz, 1024 * 1024 * 1024, LZMA_CONCATENATED) != LZMA_OK)
        {
          g_set_error (error, GL_APT_ERROR, GL_APT_ERROR_MALFORMED, "%s: cannot start the xz decoder", what);
          return FALSE;
        }
    }
  else if (comp == COMP_GZ)
    pl->gz = G_CONVERTER (g_zlib_decompressor_new (G_ZLIB_COMPRESSOR_FORMAT_GZIP));
  return TRUE;
}

static void
pipeline_clear (Pipeline *pl)
{
  if (pl->comp == COMP_XZ)
    lzma_end (&pl->xz);
  g_clear_object (&pl->gz);
  g_clear_pointer (&pl->sha256, g_checksum_free);
}

static gboolean
pipeline_finish (Pipeline *pl, GError **error)
{
  if (!pipeline_feed (pl, (const guint8 *) "", 0, TRUE, error))
    return FALSE;
  if (pl->comp != COMP_NONE && !pl->ended)
    {
      g_set_error (error, GL_APT_ERROR, GL_APT_ERROR_MALFORMED,
                   "%s: the compressed data is cut short", pl->what);
      return FALSE;
    }
  return gl_apt_index_parser_finish (pl->parser, error);
}

static Compression
compression_of (const char *path)
{
  if (g_str_has_suffix (path, ".xz"))
    return COMP_XZ;
  if (g_str_has_suffix (path, ".gz"))
    return COMP_GZ;
  return COMP_NONE;
}

GlAptIndex *
gl_apt_index_load_file (const char    *path,
                        GCancellable  *cancellable,
                        GError       **error)
{
  g_autoptr(GlAptIndex) index = gl_apt_index_new ();
  g_autoptr(GlAptIndexParser) parser = gl_apt_index_parser_new (index, path);
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(GFileInputStream) in = g_file_read (file, cancellable, error);
  Pipeline pl;
  guint8 buf[OUTBUF];
  gboolean ok = TRUE;

  if (in == NULL)
    return NULL;
  if (!pipeline_init (&pl, compression_of (path), parser, FALSE, path, error))
    return NULL;
  for (;;)
    {
      gssize n = g_input_stream_read (G_INPUT_STREAM (in), buf, sizeof buf, cancellable, error);

      if (n < 0)
        {
          ok = FALSE;
          break;
        }
      if (n == 0)
        {
          ok = pipeline_finish (&pl, error);
          break;
        }
      if (!pipeline_feed (&pl, buf, n, FALSE, error))
        {
          ok = FALSE;
          break;
        }
    }
  pipeline_clear (&pl);
  return ok ? g_steal_pointer (&index) : NULL;
}

/* --- the cache: one summary per index content, named by its SHA256 --- */

static char *
summary_path (const char *cache_dir, const char *sha256)
{
  g_autofree char *name = g_strconcat (sha256, ".idx", NULL);

  return g_build_filename (cache_dir, "indexes", name, NULL);
}

static GlAptIndex *
summary_load (const char *path)
{
  g_autofree char *data = NULL;
  gsize len = 0;
  g_autoptr(GlAptIndex) index = NULL;
  char *line, *next;

  if (!g_file_get_contents (path, &data, &len, NULL))
    return NULL;
  if (!g_str_has_prefix (data, "glimpse-index 1\n"))
    return NULL;
  index = gl_apt_index_new ();
  for (line = data + 16; line < data + len; line = next)
    {
      char *f[4];
      guint n = 0;
      char *nl = strchr (line, '\n');
      guint64 phased;

      if (nl == NULL)
        return NULL;   /* a summary is written whole or not at all */
      *nl = '\0';
      next = nl + 1;
      f[n++] = line;
      for (char *c = line; *c && n < 4; c++)
        if (*c == ' ')
          {
            *c = '\0';
            f[n++] = c + 1;
          }
      if (n != 4 || !g_ascii_string_to_unsigned (f[3], 10, 0, 100, &phased, NULL))
        return NULL;
      index_add (index, f[0], f[1], f[2], phased);
    }
  return g_steal_pointer (&index);
}

static void
summary_save (const char *path, GlAptIndex *index)
{
  g_autoptr(GString) s = g_string_sized_new (index->entries->len * 40 + 32);
  g_autofree char *dir = g_path_get_dirname (path);
  g_autoptr(GError) error = NULL;

  g_string_append (s, "glimpse-index 1\n");
  for (guint i = 0; i < index->entries->len; i++)
    {
      const GlAptIndexEntry *e = &g_array_index (index->entries, GlAptIndexEntry, i);

      g_string_append_printf (s, "%s %s %s %u\n", e->name, e->arch, e->version, e->phased);
    }
  /* (the next check reads the index itself: not an error) */
  if (!gl_mkdir_with_parents (dir, 0700, &error)
      || !g_file_set_contents_full (path, s->str, s->len, G_FILE_SET_CONTENTS_CONSISTENT, 0600, &error))
    g_debug ("Cannot cache the index summary %s: %s", path, error->message);
}

static gboolean
pipeline_sink (const guint8 *data, gsize length, gpointer user_data, GError **error)
{
  return pipeline_feed (user_data, data, length, FALSE, error);
}

GlAptIndex *
gl_apt_index_fetch (const char          *dist_url,
                    const GlAptRelease  *release,
                    const char          *index_path,
                    const char          *cache_dir,
                    gboolean            *downloaded,
                    GCancellable        *cancellable,
                    GError             **error)
{
  /* .gz before .xz: inflating costs a third to half of xz's CPU time
   * (liblzma's decoding was three quarters of a cold check's CPU on a
   * Debian-main-sized index: 0.37 s of 0.53 s), for about 40 % more
   * bytes (bookworm main amd64: 12.1 MB .gz, 8.8 MB .xz); Debian and
   * Ubuntu publish both.  An index the Release lists only as .xz is read
   * as .xz. */
  static const char *suffixes[] = { ".gz", ".xz", "" };
  const GlAptReleaseFile *file = NULL;
  g_autoptr(GlAptIndex) index = NULL;
  g_autoptr(GlAptIndexParser) parser = NULL;
  g_autofree char *cached = NULL;
  g_autofree char *url = NULL;
  g_autofree char *what = NULL;
  g_autoptr(GError) local_error = NULL;
  Pipeline pl;
  gboolean ok;

  for (guint i = 0; file == NULL && i < G_N_ELEMENTS (suffixes); i++)
    {
      g_autofree char *p = g_strconcat (index_path, suffixes[i], NULL);

      file = g_hash_table_lookup (release->files, p);
    }
  if (downloaded != NULL)
    *downloaded = FALSE;
  if (file == NULL)
    return NULL;

  cached = summary_path (cache_dir, file->sha256);
  index = summary_load (cached);
  if (index != NULL)
    {
      g_debug ("%s%s: unchanged (cached summary)", dist_url, file->path);
      return g_steal_pointer (&index);
    }

  if (release->acquire_by_hash)
    {
      g_autofree char *dir = g_path_get_dirname (file->path);

      url = g_strdup_printf ("%s%s/by-hash/SHA256/%s", dist_url, dir, file->sha256);
    }
  else
    url = g_strconcat (dist_url, file->path, NULL);
  what = g_strconcat (dist_url, file->path, NULL);

  if (downloaded != NULL)
    *downloaded = TRUE;
  index = gl_apt_index_new ();
  parser = gl_apt_index_parser_new (index, what);
  if (!pipeline_init (&pl, compression_of (file->path), parser, TRUE, what, error))
    return NULL;
  /* the size and SHA256 first: they explain a parse error on a cut or
   * corrupted file better than the parser can */
  ok = gl_apt_http_get (url, NULL, file->size, pipeline_sink, &pl, cancellable, &local_error);
  if (ok && (pl.received != file->size ||
             g_strcmp0 (g_checksum_get_string (pl.sha256), file->sha256) != 0))
    {
      g_set_error (&local_error, GL_APT_ERROR, GL_APT_ERROR_CHECKSUM,
                   "%s: %" G_GUINT64_FORMAT " bytes with SHA256 %s, but the Release lists %"
                   G_GUINT64_FORMAT " bytes with SHA256 %s (a mirror in the middle of an update, "
                   "or a corrupted file; the next check retries)",
                   what, pl.received, g_checksum_get_string (pl.sha256), file->size, file->sha256);
      ok = FALSE;
    }
  if (ok)
    ok = pipeline_finish (&pl, &local_error);
  pipeline_clear (&pl);
  if (!ok)
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return NULL;
    }
  summary_save (cached, index);
  return g_steal_pointer (&index);
}
