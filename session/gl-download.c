/* gl-download.c: resumable, verified downloads with libcurl
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-download.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gl-curl.h"
#include <gio/gunixoutputstream.h>
#include <glib/gstdio.h>

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
  gl_curl_easy_getinfo (t->curl, CURLINFO_RESPONSE_CODE, &code);
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

  curl = gl_curl_easy_init ();
  if (curl == NULL)
    return NULL;

  gl_curl_easy_setopt (curl, CURLOPT_URL, t->url);
  gl_curl_easy_setopt (curl, CURLOPT_NOSIGNAL, 1L);
  gl_curl_easy_setopt (curl, CURLOPT_ERRORBUFFER, errbuf);
  gl_curl_easy_setopt (curl, CURLOPT_FOLLOWLOCATION, 1L);
  gl_curl_easy_setopt (curl, CURLOPT_MAXREDIRS, 10L);
#if LIBCURL_VERSION_NUM >= 0x075500
  gl_curl_easy_setopt (curl, CURLOPT_PROTOCOLS_STR, "http,https,file");
  gl_curl_easy_setopt (curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#else
  gl_curl_easy_setopt (curl, CURLOPT_PROTOCOLS, (long) (CURLPROTO_HTTP | CURLPROTO_HTTPS | CURLPROTO_FILE));
  gl_curl_easy_setopt (curl, CURLOPT_REDIR_PROTOCOLS, (long) (CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
  gl_curl_easy_setopt (curl, CURLOPT_CONNECTTIMEOUT, GL_DOWNLOAD_CONNECT_TIMEOUT);
  gl_curl_easy_setopt (curl, CURLOPT_LOW_SPEED_LIMIT, GL_DOWNLOAD_LOW_SPEED_LIMIT);
  gl_curl_easy_setopt (curl, CURLOPT_LOW_SPEED_TIME, GL_DOWNLOAD_LOW_SPEED_TIME);
  gl_curl_easy_setopt (curl, CURLOPT_USERAGENT, "glimpse/" PACKAGE_VERSION);
  gl_curl_easy_setopt (curl, CURLOPT_HEADERFUNCTION, header_cb);
  gl_curl_easy_setopt (curl, CURLOPT_HEADERDATA, t);
  gl_curl_easy_setopt (curl, CURLOPT_WRITEFUNCTION, write_cb);
  gl_curl_easy_setopt (curl, CURLOPT_WRITEDATA, t);
  gl_curl_easy_setopt (curl, CURLOPT_NOPROGRESS, 0L);
  gl_curl_easy_setopt (curl, CURLOPT_XFERINFOFUNCTION, xferinfo_cb);
  gl_curl_easy_setopt (curl, CURLOPT_XFERINFODATA, t);

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
               url, errbuf[0] != '\0' ? errbuf : gl_curl_easy_strerror (res),
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
      gl_curl_easy_setopt (curl, CURLOPT_RANGE, range);
      g_debug ("resuming %s from byte %" G_GUINT64_FORMAT, t->url, t->offset);
    }

  res = gl_curl_easy_perform (curl);
  gl_curl_easy_getinfo (curl, CURLINFO_RESPONSE_CODE, &code);
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

  if (!gl_checksum_is_sha256 (in))
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

  res = gl_curl_easy_perform (curl);
  gl_curl_easy_getinfo (curl, CURLINFO_RESPONSE_CODE, &code);

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
