/* gl-download.c: resumable, verified downloads with libcurl
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-download.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <curl/curl.h>
#include <gio/gunixoutputstream.h>
#include <glib/gstdio.h>

G_DEFINE_AUTOPTR_CLEANUP_FUNC (CURL, curl_easy_cleanup)

G_DEFINE_QUARK (gl-download-error-quark, gl_download_error)

#define GL_DOWNLOAD_STRING_MAX (16 * 1024 * 1024)
#define GL_DOWNLOAD_CONNECT_TIMEOUT 30L   /* seconds */
#define GL_DOWNLOAD_LOW_SPEED_LIMIT 100L  /* bytes per second … */
#define GL_DOWNLOAD_LOW_SPEED_TIME 60L    /* … for this many seconds aborts */

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "0"
#endif

typedef struct {
  CURL                   *curl;
  const char             *url;
  const char             *part_path;   /* NULL when downloading to memory */
  int                     fd;          /* the .part, O_APPEND */
  GOutputStream          *out;
  GByteArray             *buffer;      /* to-memory transfers */
  guint64                 offset;      /* bytes in the .part before this attempt */
  gboolean                started;     /* the body of the final response began */
  gboolean                http_failed; /* status >= 400 seen in the write callback */
  gint64                  range_start; /* from Content-Range, -1 if none */
  gint64                  range_total; /* from Content-Range, -1 if unknown */
  char                   *reason;      /* reason phrase of the last status line */
  GlDownloadProgressFunc  progress;
  gpointer                progress_data;
  GCancellable           *cancellable;
  GError                 *error;       /* set by callbacks */
} GlTransfer;

static void
gl_transfer_clear (GlTransfer *t)
{
  g_clear_pointer (&t->reason, g_free);
  g_clear_error (&t->error);
}

static void
gl_curl_global_init (void)
{
  static gsize initialized = 0;

  if (g_once_init_enter (&initialized))
    {
      curl_global_init (CURL_GLOBAL_DEFAULT);
      g_once_init_leave (&initialized, 1);
    }
}

static gboolean
truncate_part (GlTransfer *t)
{
  if (ftruncate (t->fd, 0) != 0)
    {
      int errsv = errno;
      g_set_error (&t->error, G_IO_ERROR, g_io_error_from_errno (errsv),
                   "Cannot truncate %s to restart the download: %s",
                   t->part_path, g_strerror (errsv));
      return FALSE;
    }
  t->offset = 0;
  return TRUE;
}

static size_t
header_cb (char *data, size_t size, size_t nmemb, void *user_data)
{
  GlTransfer *t = user_data;
  gsize len = size * nmemb;
  g_autofree char *line = g_strstrip (g_strndup (data, len));

  if (g_str_has_prefix (line, "HTTP/"))
    {
      /* A new response (after a redirect or 100 Continue) */
      const char *p = strchr (line, ' ');

      t->range_start = -1;
      t->range_total = -1;
      g_clear_pointer (&t->reason, g_free);
      if (p != NULL && (p = strchr (p + 1, ' ')) != NULL && p[1] != '\0')
        t->reason = g_strdup (p + 1);
    }
  else if (g_ascii_strncasecmp (line, "Content-Range:", strlen ("Content-Range:")) == 0)
    {
      const char *p = line + strlen ("Content-Range:");
      const char *slash;

      while (*p == ' ' || *p == '\t')
        p++;
      if (g_ascii_strncasecmp (p, "bytes ", 6) == 0)
        {
          p += 6;
          if (g_ascii_isdigit (*p))
            t->range_start = g_ascii_strtoll (p, NULL, 10);
          slash = strchr (p, '/');
          if (slash != NULL && g_ascii_isdigit (slash[1]))
            t->range_total = g_ascii_strtoll (slash + 1, NULL, 10);
        }
    }

  return len;
}

/* First body bytes of the final response: decide what to do with them. */
static gboolean
transfer_start (GlTransfer *t)
{
  long code = 0;

  t->started = TRUE;
  curl_easy_getinfo (t->curl, CURLINFO_RESPONSE_CODE, &code);
  if (code >= 400)
    {
      t->http_failed = TRUE;
      return FALSE;
    }

  if (t->part_path != NULL && t->offset > 0)
    {
      if (code == 200)
        {
          g_debug ("%s ignored the range request; restarting from zero", t->url);
          return truncate_part (t);
        }
      if (code == 206 && t->range_start != (gint64) t->offset)
        {
          g_set_error (&t->error, GL_DOWNLOAD_ERROR, GL_DOWNLOAD_ERROR_NETWORK,
                       "Downloading %s failed: asked for the bytes from %" G_GUINT64_FORMAT
                       " on, the server sent a range from %" G_GINT64_FORMAT
                       "; delete %s and rerun",
                       t->url, t->offset, t->range_start, t->part_path);
          return FALSE;
        }
    }

  return TRUE;
}

static size_t
write_cb (char *data, size_t size, size_t nmemb, void *user_data)
{
  GlTransfer *t = user_data;
  gsize len = size * nmemb;
  g_autoptr(GError) local_error = NULL;

  if (!t->started && !transfer_start (t))
    return 0;

  if (t->buffer != NULL)
    {
      if (t->buffer->len + len > GL_DOWNLOAD_STRING_MAX)
        {
          g_set_error (&t->error, GL_DOWNLOAD_ERROR, GL_DOWNLOAD_ERROR_TOO_LARGE,
                       "Downloading %s failed: it is larger than %d MiB, too large for a list",
                       t->url, GL_DOWNLOAD_STRING_MAX / (1024 * 1024));
          return 0;
        }
      g_byte_array_append (t->buffer, (const guint8 *) data, len);
      return len;
    }

  if (!g_output_stream_write_all (t->out, data, len, NULL, NULL, &local_error))
    {
      if (g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_NO_SPACE))
        g_set_error (&t->error, G_IO_ERROR, G_IO_ERROR_NO_SPACE,
                     "No space left on device while writing %s; free space and rerun — "
                     "the partial download is kept for resume", t->part_path);
      else
        g_set_error (&t->error, local_error->domain, local_error->code,
                     "Writing %s failed: %s", t->part_path, local_error->message);
      return 0;
    }

  return len;
}

static int
xferinfo_cb (void *user_data, curl_off_t dltotal, curl_off_t dlnow,
             curl_off_t ultotal, curl_off_t ulnow)
{
  GlTransfer *t = user_data;

  if (g_cancellable_is_cancelled (t->cancellable))
    return 1;

  if (t->progress != NULL && t->started && !t->http_failed)
    t->progress (t->offset + (guint64) dlnow,
                 dltotal > 0 ? t->offset + (guint64) dltotal : 0,
                 t->progress_data);

  return 0;
}

static CURL *
transfer_setup (GlTransfer *t, char *errbuf)
{
  CURL *curl;

  gl_curl_global_init ();
  curl = curl_easy_init ();
  if (curl == NULL)
    return NULL;

  curl_easy_setopt (curl, CURLOPT_URL, t->url);
  curl_easy_setopt (curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt (curl, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt (curl, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt (curl, CURLOPT_MAXREDIRS, 10L);
#if LIBCURL_VERSION_NUM >= 0x075500
  curl_easy_setopt (curl, CURLOPT_PROTOCOLS_STR, "http,https,file");
  curl_easy_setopt (curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#else
  curl_easy_setopt (curl, CURLOPT_PROTOCOLS, (long) (CURLPROTO_HTTP | CURLPROTO_HTTPS | CURLPROTO_FILE));
  curl_easy_setopt (curl, CURLOPT_REDIR_PROTOCOLS, (long) (CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
  curl_easy_setopt (curl, CURLOPT_CONNECTTIMEOUT, GL_DOWNLOAD_CONNECT_TIMEOUT);
  curl_easy_setopt (curl, CURLOPT_LOW_SPEED_LIMIT, GL_DOWNLOAD_LOW_SPEED_LIMIT);
  curl_easy_setopt (curl, CURLOPT_LOW_SPEED_TIME, GL_DOWNLOAD_LOW_SPEED_TIME);
  curl_easy_setopt (curl, CURLOPT_USERAGENT, "glimpse/" PACKAGE_VERSION);
  curl_easy_setopt (curl, CURLOPT_HEADERFUNCTION, header_cb);
  curl_easy_setopt (curl, CURLOPT_HEADERDATA, t);
  curl_easy_setopt (curl, CURLOPT_WRITEFUNCTION, write_cb);
  curl_easy_setopt (curl, CURLOPT_WRITEDATA, t);
  curl_easy_setopt (curl, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt (curl, CURLOPT_XFERINFOFUNCTION, xferinfo_cb);
  curl_easy_setopt (curl, CURLOPT_XFERINFODATA, t);

  t->curl = curl;
  t->range_start = -1;
  t->range_total = -1;
  return curl;
}

static void
set_http_error (GError **error, const char *url, long code, const char *reason)
{
  g_set_error (error, GL_DOWNLOAD_ERROR, GL_DOWNLOAD_ERROR_HTTP,
               "Downloading %s failed: the server answered HTTP %ld%s%s; "
               "check the address (or the profile's download URL) and rerun",
               url, code, reason != NULL ? " " : "", reason != NULL ? reason : "");
}

static void
set_curl_error (GError **error, const char *url, CURLcode res, const char *errbuf,
                gboolean resumable)
{
  g_set_error (error, GL_DOWNLOAD_ERROR, GL_DOWNLOAD_ERROR_NETWORK,
               "Downloading %s failed: %s; check the address and the network connection and rerun%s",
               url, errbuf[0] != '\0' ? errbuf : curl_easy_strerror (res),
               resumable ? " (the partial download is kept and will be resumed)" : "");
}

typedef enum {
  ATTEMPT_DONE,
  ATTEMPT_RESTART,
  ATTEMPT_FAILED,
} AttemptResult;

/* One request for the rest of the .part. */
static AttemptResult
download_attempt (GlTransfer *t, GError **error)
{
  char errbuf[CURL_ERROR_SIZE] = "";
  g_autoptr(CURL) curl = transfer_setup (t, errbuf);
  g_autofree char *range = NULL;
  CURLcode res;
  long code = 0;

  if (curl == NULL)
    {
      g_set_error (error, GL_DOWNLOAD_ERROR, GL_DOWNLOAD_ERROR_NETWORK,
                   "Downloading %s failed: cannot initialise libcurl", t->url);
      return ATTEMPT_FAILED;
    }

  if (t->offset > 0)
    {
      range = g_strdup_printf ("%" G_GUINT64_FORMAT "-", t->offset);
      curl_easy_setopt (curl, CURLOPT_RANGE, range);
      g_debug ("resuming %s from byte %" G_GUINT64_FORMAT, t->url, t->offset);
    }

  res = curl_easy_perform (curl);
  curl_easy_getinfo (curl, CURLINFO_RESPONSE_CODE, &code);
  t->curl = NULL;

  if (t->error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&t->error));
      return ATTEMPT_FAILED;
    }

  if (res == CURLE_ABORTED_BY_CALLBACK && g_cancellable_is_cancelled (t->cancellable))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED,
                   "Download of %s cancelled; the partial download is kept in %s "
                   "and will be resumed", t->url, t->part_path);
      return ATTEMPT_FAILED;
    }

  if (code == 416 && t->offset > 0)
    {
      /* Nothing past the end of the .part: complete, unless the server
       * says the file has another size. */
      if (t->range_total < 0 || t->range_total == (gint64) t->offset)
        return ATTEMPT_DONE;
      g_debug ("%s has %" G_GINT64_FORMAT " bytes, %s has %" G_GUINT64_FORMAT "; restarting",
               t->url, t->range_total, t->part_path, t->offset);
      return ATTEMPT_RESTART;
    }

  if (code >= 400)
    {
      set_http_error (error, t->url, code, t->reason);
      return ATTEMPT_FAILED;
    }

  /* file:// asked to resume past the end of the file */
  if (res == CURLE_BAD_DOWNLOAD_RESUME && t->offset > 0)
    return ATTEMPT_RESTART;

  if (res != CURLE_OK)
    {
      set_curl_error (error, t->url, res, errbuf, t->started || t->offset > 0);
      return ATTEMPT_FAILED;
    }

  /* A 200 with an empty body to a range request */
  if (!t->started && t->offset > 0 && code == 200)
    {
      if (!truncate_part (t))
        {
          g_propagate_error (error, g_steal_pointer (&t->error));
          return ATTEMPT_FAILED;
        }
    }

  return ATTEMPT_DONE;
}

static gboolean
normalize_sha256 (const char *in, char **out, GError **error)
{
  if (in == NULL)
    return TRUE;

  if (!gl_is_sha256 (in))
    {
      g_set_error (error, GL_DOWNLOAD_ERROR, GL_DOWNLOAD_ERROR_INVALID,
                   "“%s” is not a SHA-256 checksum (64 hexadecimal digits)", in);
      return FALSE;
    }

  *out = g_ascii_strdown (in, -1);
  return TRUE;
}

static void
sync_parent_dir (const char *path)
{
  g_autofree char *dir = g_path_get_dirname (path);
  int fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

  if (fd >= 0)
    {
      (void) fsync (fd);
      close (fd);
    }
}

gboolean
gl_download_file (const char             *url,
                  const char             *dest_path,
                  const char             *expected_sha256,
                  GlDownloadProgressFunc  progress,
                  gpointer                user_data,
                  GCancellable           *cancellable,
                  GError                **error)
{
  g_autofree char *expected = NULL;
  g_autofree char *part_path = NULL;
  g_autofree char *actual = NULL;
  g_autoptr(GOutputStream) out = NULL;
  GlTransfer t = { 0 };
  AttemptResult result = ATTEMPT_FAILED;
  struct stat st;
  guint attempts;
  int fd;

  g_return_val_if_fail (url != NULL, FALSE);
  g_return_val_if_fail (dest_path != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!normalize_sha256 (expected_sha256, &expected, error))
    return FALSE;

  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return FALSE;

  /* The cache case */
  if (expected != NULL && g_file_test (dest_path, G_FILE_TEST_EXISTS))
    {
      g_autofree char *cached = gl_checksum_file_sha256 (dest_path, cancellable, error);

      if (cached == NULL)
        return FALSE;
      if (g_str_equal (cached, expected))
        {
          g_debug ("%s is already downloaded and verified", dest_path);
          return TRUE;
        }
      g_debug ("%s has SHA-256 %s, not %s; downloading it again", dest_path, cached, expected);
    }

  part_path = g_strconcat (dest_path, ".part", NULL);
  fd = open (part_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0644);
  if (fd < 0)
    {
      int errsv = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv),
                   "Cannot create %s: %s", part_path, g_strerror (errsv));
      return FALSE;
    }
  out = g_unix_output_stream_new (fd, TRUE);

  if (flock (fd, LOCK_EX | LOCK_NB) != 0)
    {
      int errsv = errno;
      if (errsv == EWOULDBLOCK)
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_BUSY,
                     "Another download into %s is running; wait for it to finish and rerun",
                     part_path);
      else
        g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv),
                     "Cannot lock %s: %s", part_path, g_strerror (errsv));
      return FALSE;
    }

  if (fstat (fd, &st) != 0)
    {
      int errsv = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv),
                   "Cannot stat %s: %s", part_path, g_strerror (errsv));
      return FALSE;
    }

  t.url = url;
  t.part_path = part_path;
  t.fd = fd;
  t.out = out;
  t.offset = (guint64) st.st_size;
  t.progress = progress;
  t.progress_data = user_data;
  t.cancellable = cancellable;

  for (attempts = 0; attempts < 2; attempts++)
    {
      t.started = FALSE;
      t.http_failed = FALSE;
      result = download_attempt (&t, error);
      if (result != ATTEMPT_RESTART)
        break;
      if (!truncate_part (&t))
        {
          g_propagate_error (error, g_steal_pointer (&t.error));
          result = ATTEMPT_FAILED;
          break;
        }
    }
  gl_transfer_clear (&t);

  if (result == ATTEMPT_RESTART)
    {
      g_set_error (error, GL_DOWNLOAD_ERROR, GL_DOWNLOAD_ERROR_NETWORK,
                   "Downloading %s failed: the server did not deliver the file after a restart; rerun later",
                   url);
      return FALSE;
    }
  if (result != ATTEMPT_DONE)
    {
      /* Keep a .part with data for resuming, not an empty one */
      if (fstat (fd, &st) == 0 && st.st_size == 0)
        (void) g_unlink (part_path);
      return FALSE;
    }

  if (fsync (fd) != 0)
    {
      int errsv = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv),
                   errsv == ENOSPC
                   ? "No space left on device while writing %s; free space and rerun — the partial download is kept for resume"
                   : "Cannot write %s to disk", part_path);
      return FALSE;
    }
  if (!g_output_stream_close (out, NULL, error))
    {
      g_prefix_error (error, "Cannot close %s: ", part_path);
      return FALSE;
    }

  if (expected != NULL)
    {
      actual = gl_checksum_file_sha256 (part_path, cancellable, error);
      if (actual == NULL)
        return FALSE;
      if (!g_str_equal (actual, expected))
        {
          (void) g_unlink (part_path);
          g_set_error (error, GL_DOWNLOAD_ERROR, GL_DOWNLOAD_ERROR_CHECKSUM,
                       "Checksum mismatch for %s (downloaded from %s): expected SHA-256 %s, got %s. "
                       "The download was deleted; rerun to fetch it again, and if it keeps failing "
                       "the mirror or the profile's checksum is out of date",
                       dest_path, url, expected, actual);
          return FALSE;
        }
    }

  if (g_rename (part_path, dest_path) != 0)
    {
      int errsv = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv),
                   "Cannot rename %s to %s: %s", part_path, dest_path, g_strerror (errsv));
      return FALSE;
    }
  sync_parent_dir (dest_path);

  return TRUE;
}

gchar *
gl_download_to_string (const char    *url,
                       gsize         *length,
                       GCancellable  *cancellable,
                       GError       **error)
{
  char errbuf[CURL_ERROR_SIZE] = "";
  g_autoptr(GByteArray) buffer = g_byte_array_new ();
  g_autoptr(CURL) curl = NULL;
  GlTransfer t = { 0 };
  CURLcode res;
  long code = 0;

  g_return_val_if_fail (url != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;

  t.url = url;
  t.buffer = buffer;
  t.cancellable = cancellable;
  curl = transfer_setup (&t, errbuf);
  if (curl == NULL)
    {
      g_set_error (error, GL_DOWNLOAD_ERROR, GL_DOWNLOAD_ERROR_NETWORK,
                   "Downloading %s failed: cannot initialise libcurl", url);
      return NULL;
    }

  res = curl_easy_perform (curl);
  curl_easy_getinfo (curl, CURLINFO_RESPONSE_CODE, &code);

  if (t.error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&t.error));
      gl_transfer_clear (&t);
      return NULL;
    }
  if (res == CURLE_ABORTED_BY_CALLBACK && g_cancellable_is_cancelled (cancellable))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "Download of %s cancelled", url);
      gl_transfer_clear (&t);
      return NULL;
    }
  if (code >= 400)
    {
      set_http_error (error, url, code, t.reason);
      gl_transfer_clear (&t);
      return NULL;
    }
  gl_transfer_clear (&t);
  if (res != CURLE_OK)
    {
      set_curl_error (error, url, res, errbuf, FALSE);
      return NULL;
    }

  if (length != NULL)
    *length = buffer->len;
  g_byte_array_append (buffer, (const guint8 *) "", 1);
  return (gchar *) g_byte_array_free (g_steal_pointer (&buffer), FALSE);
}

/* ---- checksum lists ---- */

static gboolean
is_sha256_hex (const char *s, gsize len)
{
  gsize i;

  if (len != 64)
    return FALSE;
  for (i = 0; i < len; i++)
    if (!g_ascii_isxdigit (s[i]))
      return FALSE;
  return TRUE;
}

gboolean
gl_is_sha256 (const char *s)
{
  return is_sha256_hex (s, strlen (s));
}

/* Parses one line into (name, sum) pointing into line, which it modifies. */
static gboolean
parse_checksum_line (char *line, const char **name_out, const char **sum_out)
{
  char *p = g_strstrip (line);

  /* dash-escaped lines of PGP clear-signed lists */
  if (g_str_has_prefix (p, "- "))
    p += 2;
  /* GNU marks lines with escaped names with a backslash */
  if (*p == '\\')
    p++;

  if (g_str_has_prefix (p, "SHA256 (") || g_str_has_prefix (p, "SHA256("))
    {
      char *name = strchr (p, '(') + 1;
      char *close = g_strrstr (name, ")");
      char *sum;

      if (close == NULL)
        return FALSE;
      sum = close + 1;
      while (*sum == ' ' || *sum == '\t')
        sum++;
      if (*sum != '=')
        return FALSE;
      sum++;
      while (*sum == ' ' || *sum == '\t')
        sum++;
      if (!is_sha256_hex (sum, strlen (sum)))
        return FALSE;
      *close = '\0';
      *name_out = name;
      *sum_out = sum;
      return TRUE;
    }

  if (strlen (p) > 65 && is_sha256_hex (p, 64) && (p[64] == ' ' || p[64] == '\t'))
    {
      char *name = p + 65;

      while (*name == ' ' || *name == '\t')
        name++;
      if (*name == '*')
        name++;
      if (*name == '\0')
        return FALSE;
      p[64] = '\0';
      *name_out = name;
      *sum_out = p;
      return TRUE;
    }

  return FALSE;
}

gchar *
gl_checksum_find_in_list (const char  *list_text,
                          const char  *filename,
                          GError     **error)
{
  g_auto(GStrv) lines = NULL;
  g_autofree char *exact = NULL;
  g_autofree char *by_basename = NULL;
  gboolean exact_conflict = FALSE;
  gboolean basename_conflict = FALSE;
  gsize i;

  g_return_val_if_fail (list_text != NULL, NULL);
  g_return_val_if_fail (filename != NULL, NULL);

  lines = g_strsplit (list_text, "\n", -1);
  for (i = 0; lines[i] != NULL; i++)
    {
      const char *name = NULL;
      const char *sum = NULL;
      g_autofree char *base = NULL;

      if (!parse_checksum_line (lines[i], &name, &sum))
        continue;

      if (g_str_has_prefix (name, "./"))
        name += 2;

      if (g_str_equal (name, filename))
        {
          if (exact == NULL)
            exact = g_ascii_strdown (sum, -1);
          else if (g_ascii_strcasecmp (exact, sum) != 0)
            exact_conflict = TRUE;
          continue;
        }

      base = g_path_get_basename (name);
      if (g_str_equal (base, filename))
        {
          if (by_basename == NULL)
            by_basename = g_ascii_strdown (sum, -1);
          else if (g_ascii_strcasecmp (by_basename, sum) != 0)
            basename_conflict = TRUE;
        }
    }

  if (exact_conflict || (exact == NULL && basename_conflict))
    {
      g_set_error (error, GL_DOWNLOAD_ERROR, GL_DOWNLOAD_ERROR_NOT_LISTED,
                   "The checksum list has different SHA-256 sums for “%s”; "
                   "the profile's checksum source is ambiguous", filename);
      return NULL;
    }
  if (exact != NULL)
    return g_steal_pointer (&exact);
  if (by_basename != NULL)
    return g_steal_pointer (&by_basename);

  g_set_error (error, GL_DOWNLOAD_ERROR, GL_DOWNLOAD_ERROR_NOT_LISTED,
               "No SHA-256 checksum for “%s” in the checksum list; the profile's "
               "download URL or checksum source may be out of date", filename);
  return NULL;
}

gchar *
gl_checksum_file_sha256 (const char    *path,
                         GCancellable  *cancellable,
                         GError       **error)
{
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(GFileInputStream) in = NULL;
  g_autoptr(GChecksum) checksum = g_checksum_new (G_CHECKSUM_SHA256);
  g_autofree guint8 *buf = g_malloc (256 * 1024);

  in = g_file_read (file, cancellable, error);
  if (in == NULL)
    return NULL;

  for (;;)
    {
      gssize n = g_input_stream_read (G_INPUT_STREAM (in), buf, 256 * 1024, cancellable, error);

      if (n < 0)
        {
          g_prefix_error (error, "Cannot read %s: ", path);
          return NULL;
        }
      if (n == 0)
        break;
      g_checksum_update (checksum, buf, n);
    }

  return g_strdup (g_checksum_get_string (checksum));
}

/* ---- progress reporting ---- */

struct _GlDownloadProgress {
  char     *label;
  gboolean  is_terminal;
  gboolean  started;
  gboolean  drawn;         /* a bar is on the terminal line */
  gint64    start_time;
  guint64   start_received;
  gint64    last_draw;
  int       last_bucket;   /* last 10% step printed */
  guint64   last_mark;     /* last size printed when the total is unknown */
  guint64   received;
  guint64   total;
};

GlDownloadProgress *
gl_download_progress_new (const char *label, gboolean is_terminal)
{
  GlDownloadProgress *self = g_new0 (GlDownloadProgress, 1);

  self->label = g_strdup (label != NULL ? label : "download");
  self->is_terminal = is_terminal;
  self->last_bucket = 0;
  return self;
}

static int
terminal_width (void)
{
  struct winsize ws;

  if (ioctl (STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
    return ws.ws_col;
  return 80;
}

static void
progress_draw (GlDownloadProgress *self, gint64 now)
{
  g_autoptr(GString) right = g_string_new (NULL);
  g_autoptr(GString) line = g_string_new ("\r");
  g_autofree char *received = g_format_size_full (self->received, G_FORMAT_SIZE_IEC_UNITS);
  double elapsed = (now - self->start_time) / (double) G_USEC_PER_SEC;
  int width = terminal_width () - 1;
  int label_len = MIN ((int) g_utf8_strlen (self->label, -1), width / 3);
  int bar;

  if (self->total > 0)
    {
      g_autofree char *total = g_format_size_full (self->total, G_FORMAT_SIZE_IEC_UNITS);
      g_string_append_printf (right, " %3d%% %s of %s",
                              (int) (self->received * 100 / self->total), received, total);
    }
  else
    g_string_append_printf (right, " %s", received);

  if (elapsed >= 0.5 && self->received >= self->start_received)
    {
      g_autofree char *rate =
        g_format_size_full ((guint64) ((self->received - self->start_received) / elapsed),
                            G_FORMAT_SIZE_IEC_UNITS);
      g_string_append_printf (right, " %s/s", rate);
    }

  g_string_append_len (line, self->label,
                       g_utf8_offset_to_pointer (self->label, label_len) - self->label);
  bar = width - label_len - (int) right->len - 3;
  if (self->total > 0 && bar >= 10)
    {
      int filled = (int) (self->received * (guint64) bar / self->total);
      int i;

      g_string_append (line, " [");
      for (i = 0; i < bar; i++)
        g_string_append_c (line, i < filled ? '#' : '-');
      g_string_append_c (line, ']');
    }
  g_string_append (line, right->str);
  g_string_append (line, "\033[K");

  fputs (line->str, stderr);
  fflush (stderr);
  self->drawn = TRUE;
  self->last_draw = now;
}

void
gl_download_progress_update (guint64 received, guint64 total, gpointer user_data)
{
  GlDownloadProgress *self = user_data;
  gint64 now = g_get_monotonic_time ();

  g_return_if_fail (self != NULL);

  if (!self->started)
    {
      self->started = TRUE;
      self->start_time = now;
      self->start_received = received;
    }
  self->received = received;
  self->total = total;

  if (self->is_terminal)
    {
      if (!self->drawn || now - self->last_draw >= G_USEC_PER_SEC / 10 ||
          (total > 0 && received == total))
        progress_draw (self, now);
      return;
    }

  if (total > 0)
    {
      int bucket = (int) (MIN (received, total) * 10 / total);

      if (bucket > self->last_bucket)
        {
          g_autofree char *r = g_format_size_full (received, G_FORMAT_SIZE_IEC_UNITS);
          g_autofree char *t = g_format_size_full (total, G_FORMAT_SIZE_IEC_UNITS);

          self->last_bucket = bucket;
          fprintf (stderr, "%s: %d%% (%s of %s)\n", self->label,
                   (int) (MIN (received, total) * 100 / total), r, t);
          fflush (stderr);
        }
    }
  else if (received >= self->last_mark + 16 * 1024 * 1024)
    {
      g_autofree char *r = g_format_size_full (received, G_FORMAT_SIZE_IEC_UNITS);

      self->last_mark = received;
      fprintf (stderr, "%s: %s\n", self->label, r);
      fflush (stderr);
    }
}

void
gl_download_progress_free (GlDownloadProgress *self)
{
  if (self == NULL)
    return;

  if (self->is_terminal && self->drawn)
    {
      progress_draw (self, g_get_monotonic_time ());
      fputc ('\n', stderr);
      fflush (stderr);
    }
  g_free (self->label);
  g_free (self);
}
