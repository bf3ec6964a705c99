/* test-download.c: gl-download against a local HTTP/1.1 server
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1   /* unshare() */
#endif

#include "gl-download.h"
#include "gl-test-http.h"
#include "gl-test-skip.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include <gio/gio.h>
#include <glib/gstdio.h>

#define BLOB_SIZE (3 * 1024 * 1024 + 123)
#define CUT_AT 1000000

typedef struct {
  GSubprocess *server;
  char        *root;      /* served directory */
  char        *work;      /* downloads go here */
  char        *base;      /* http://127.0.0.1:PORT */
  char        *blob_path; /* root/blob.bin */
  char        *blob_sum;
} Fixture;

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GByteArray) blob = g_byte_array_sized_new (BLOB_SIZE);
  g_autoptr(GRand) rand = g_rand_new_with_seed (42);
  gsize i;

  f->root = g_build_filename (g_get_user_cache_dir (), "served", NULL);
  f->work = g_build_filename (g_get_user_cache_dir (), "work", NULL);
  g_assert_cmpint (g_mkdir_with_parents (f->root, 0755), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (f->work, 0755), ==, 0);

  for (i = 0; i < BLOB_SIZE; i++)
    {
      guint8 b = g_rand_int (rand) & 0xff;
      g_byte_array_append (blob, &b, 1);
    }
  f->blob_path = g_build_filename (f->root, "blob.bin", NULL);
  g_file_set_contents (f->blob_path, (const char *) blob->data, blob->len, &error);
  g_assert_no_error (error);
  f->blob_sum = g_compute_checksum_for_data (G_CHECKSUM_SHA256, blob->data, blob->len);
  {
    g_autofree char *sums = g_build_filename (f->root, "SHA256SUMS", NULL);
    g_file_set_contents (sums, "0123  nonsense\n", -1, &error);
    g_assert_no_error (error);
  }

  f->server = gl_test_http_start (f->root, &f->base);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  gl_test_http_stop (&f->server);
  g_free (f->root);
  g_free (f->work);
  g_free (f->base);
  g_free (f->blob_path);
  g_free (f->blob_sum);
}

/* The requests the server saw for path, one "METHOD RANGE STATUS BYTES" each. */
static GStrv
server_requests (Fixture *f, const char *path)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *url = g_strdup_printf ("%s/__stats?path=%s", f->base, path);
  g_autofree char *text = gl_download_to_string (url, NULL, NULL, &error);
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  g_auto(GStrv) lines = NULL;
  gsize i;

  g_assert_no_error (error);
  lines = g_strsplit (text, "\n", -1);
  for (i = 0; lines[i] != NULL; i++)
    if (lines[i][0] != '\0')
      g_strv_builder_add (builder, lines[i]);
  return g_strv_builder_end (builder);
}

/* What server_requests() shows for one GET; range NULL for none. */
static char *
get_line (const char *range, int status, gint64 bytes)
{
  return g_strdup_printf ("GET %s %d %" G_GINT64_FORMAT, range != NULL ? range : "-", status, bytes);
}

#define assert_request(line, range, status, bytes) \
  G_STMT_START { \
    g_autofree char *expected_ = get_line (range, status, bytes); \
    g_assert_cmpstr (line, ==, expected_); \
  } G_STMT_END

static char *
work_path (Fixture *f, const char *name)
{
  return g_build_filename (f->work, name, NULL);
}

static char *
blob_url (Fixture *f, const char *query)
{
  return g_strdup_printf ("%s/blob.bin%s", f->base, query != NULL ? query : "");
}

static void
assert_file_is_blob (Fixture *f, const char *path)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *sum = gl_checksum_file_sha256 (path, NULL, &error);

  g_assert_no_error (error);
  g_assert_cmpstr (sum, ==, f->blob_sum);
}

static goffset
file_size (const char *path)
{
  GStatBuf st;

  if (g_stat (path, &st) != 0)
    return -1;
  return st.st_size;
}

typedef struct {
  guint   calls;
  guint64 received;
  guint64 total;
  guint64 cancel_after;    /* cancel once this much arrived, 0: never */
  GCancellable *cancellable;
} ProgressRecord;

static void
record_progress (guint64 received, guint64 total, gpointer user_data)
{
  ProgressRecord *r = user_data;

  r->calls++;
  g_assert_cmpuint (received, >=, r->received);
  r->received = received;
  r->total = total;
  if (r->cancel_after > 0 && received >= r->cancel_after)
    g_cancellable_cancel (r->cancellable);
}

static void
test_plain (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dest = work_path (f, "blob.bin");
  g_autofree char *part = g_strconcat (dest, ".part", NULL);
  g_autofree char *url = blob_url (f, NULL);
  g_autofree char *upper = g_ascii_strup (f->blob_sum, -1);
  g_auto(GStrv) requests = NULL;
  ProgressRecord r = { 0 };

  /* an upper-case sum is fine too */
  g_assert_true (gl_download_file (url, dest, upper, record_progress, &r, NULL, &error));
  g_assert_no_error (error);
  assert_file_is_blob (f, dest);
  g_assert_false (g_file_test (part, G_FILE_TEST_EXISTS));
  g_assert_cmpuint (r.calls, >, 0);
  g_assert_cmpuint (r.received, ==, BLOB_SIZE);
  g_assert_cmpuint (r.total, ==, BLOB_SIZE);

  requests = server_requests (f, "/blob.bin");
  g_assert_cmpuint (g_strv_length (requests), ==, 1);
  assert_request (requests[0], NULL, 200, BLOB_SIZE);
}

static void
test_no_checksum (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dest = work_path (f, "blob.bin");
  g_autofree char *url = blob_url (f, NULL);
  g_auto(GStrv) requests = NULL;

  g_assert_true (gl_download_file (url, dest, NULL, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  assert_file_is_blob (f, dest);
  /* without a checksum there is no cache: it is fetched again */
  g_assert_true (gl_download_file (url, dest, NULL, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  assert_file_is_blob (f, dest);
  requests = server_requests (f, "/blob.bin");
  g_assert_cmpuint (g_strv_length (requests), ==, 2);
}

static void
test_mismatch (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dest = work_path (f, "blob.bin");
  g_autofree char *part = g_strconcat (dest, ".part", NULL);
  g_autofree char *url = blob_url (f, NULL);
  const char *wrong = "0000000000000000000000000000000000000000000000000000000000000000";

  g_assert_false (gl_download_file (url, dest, wrong, NULL, NULL, NULL, &error));
  g_assert_error (error, GL_DOWNLOAD_ERROR, GL_DOWNLOAD_ERROR_CHECKSUM);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, dest));
  g_assert_nonnull (strstr (error->message, wrong));
  g_assert_nonnull (strstr (error->message, f->blob_sum));
  g_assert_nonnull (strstr (error->message, "rerun"));
  g_assert_false (g_file_test (dest, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (part, G_FILE_TEST_EXISTS));
}

static void
test_invalid_checksum (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dest = work_path (f, "blob.bin");
  g_autofree char *url = blob_url (f, NULL);

  g_assert_false (gl_download_file (url, dest, "abc", NULL, NULL, NULL, &error));
  g_assert_error (error, GL_DOWNLOAD_ERROR, GL_DOWNLOAD_ERROR_INVALID);
  {
    g_auto(GStrv) requests = server_requests (f, "/blob.bin");
    g_assert_cmpuint (g_strv_length (requests), ==, 0);
  }
}

static void
test_resume (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dest = work_path (f, "blob.bin");
  g_autofree char *part = g_strconcat (dest, ".part", NULL);
  g_autofree char *url = blob_url (f, "?cut=" G_STRINGIFY (CUT_AT));
  g_auto(GStrv) requests = NULL;
  ProgressRecord r = { 0 };

  g_assert_false (gl_download_file (url, dest, f->blob_sum, NULL, NULL, NULL, &error));
  g_assert_error (error, GL_DOWNLOAD_ERROR, GL_DOWNLOAD_ERROR_NETWORK);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, url));
  g_assert_nonnull (strstr (error->message, "resumed"));
  g_clear_error (&error);
  g_assert_false (g_file_test (dest, G_FILE_TEST_EXISTS));
  g_assert_cmpint (file_size (part), ==, CUT_AT);

  /* the server cuts only once per path */
  g_assert_true (gl_download_file (url, dest, f->blob_sum, record_progress, &r, NULL, &error));
  g_assert_no_error (error);
  assert_file_is_blob (f, dest);
  g_assert_false (g_file_test (part, G_FILE_TEST_EXISTS));
  g_assert_cmpuint (r.received, ==, BLOB_SIZE);
  g_assert_cmpuint (r.total, ==, BLOB_SIZE);

  requests = server_requests (f, "/blob.bin");
  g_assert_cmpuint (g_strv_length (requests), ==, 2);
  assert_request (requests[0], NULL, 200, CUT_AT);
  /* the second request asked for the rest and got only the rest */
  assert_request (requests[1], "bytes=1000000-", 206, BLOB_SIZE - CUT_AT);
}

static void
write_garbage (const char *path, gsize len)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *junk = g_malloc (len);

  memset (junk, 'x', len);
  g_file_set_contents (path, junk, len, &error);
  g_assert_no_error (error);
}

static void
test_server_ignores_range (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dest = work_path (f, "blob.bin");
  g_autofree char *part = g_strconcat (dest, ".part", NULL);
  g_autofree char *url = blob_url (f, "?norange=1");
  g_auto(GStrv) requests = NULL;

  /* garbage in the .part proves that it starts again from zero */
  write_garbage (part, 500000);
  g_assert_true (gl_download_file (url, dest, f->blob_sum, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  assert_file_is_blob (f, dest);

  requests = server_requests (f, "/blob.bin");
  g_assert_cmpuint (g_strv_length (requests), ==, 1);
  assert_request (requests[0], "bytes=500000-", 200, BLOB_SIZE);
}

static void
test_range_complete (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dest = work_path (f, "blob.bin");
  g_autofree char *part = g_strconcat (dest, ".part", NULL);
  g_autofree char *url = blob_url (f, NULL);
  g_autofree char *blob = NULL;
  gsize len = 0;
  g_auto(GStrv) requests = NULL;

  /* A complete .part (say the rename was interrupted): 416, then verified */
  g_file_get_contents (f->blob_path, &blob, &len, &error);
  g_assert_no_error (error);
  g_file_set_contents (part, blob, len, &error);
  g_assert_no_error (error);
  g_assert_true (gl_download_file (url, dest, f->blob_sum, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  assert_file_is_blob (f, dest);
  requests = server_requests (f, "/blob.bin");
  g_assert_cmpuint (g_strv_length (requests), ==, 1);
  {
    g_autofree char *range = g_strdup_printf ("bytes=%d-", BLOB_SIZE);
    g_autofree char *prefix = g_strdup_printf ("GET %s 416 ", range);
    g_assert_true (g_str_has_prefix (requests[0], prefix));
  }
}

static void
test_range_too_long (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dest = work_path (f, "blob.bin");
  g_autofree char *part = g_strconcat (dest, ".part", NULL);
  g_autofree char *url = blob_url (f, NULL);
  g_auto(GStrv) requests = NULL;

  /* A .part longer than the file: 416 with another size, start again */
  write_garbage (part, BLOB_SIZE + 100);
  g_assert_true (gl_download_file (url, dest, f->blob_sum, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  assert_file_is_blob (f, dest);
  requests = server_requests (f, "/blob.bin");
  g_assert_cmpuint (g_strv_length (requests), ==, 2);
  g_assert_nonnull (strstr (requests[0], " 416 "));
  assert_request (requests[1], NULL, 200, BLOB_SIZE);
}

static void
test_http_errors (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dest = work_path (f, "missing.bin");
  g_autofree char *part = g_strconcat (dest, ".part", NULL);
  g_autofree char *url = g_strdup_printf ("%s/missing.bin", f->base);
  g_autofree char *url500 = blob_url (f, "?status=500");

  g_assert_false (gl_download_file (url, dest, NULL, NULL, NULL, NULL, &error));
  g_assert_error (error, GL_DOWNLOAD_ERROR, GL_DOWNLOAD_ERROR_HTTP);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, url));
  g_assert_nonnull (strstr (error->message, "HTTP 404"));
  g_assert_false (g_file_test (dest, G_FILE_TEST_EXISTS));
  /* no error page in a .part, and no empty .part */
  g_assert_false (g_file_test (part, G_FILE_TEST_EXISTS));
  g_clear_error (&error);

  g_assert_false (gl_download_file (url500, dest, NULL, NULL, NULL, NULL, &error));
  g_assert_error (error, GL_DOWNLOAD_ERROR, GL_DOWNLOAD_ERROR_HTTP);
  g_assert_nonnull (strstr (error->message, "HTTP 500"));
  g_clear_error (&error);

  g_assert_null (gl_download_to_string (url, NULL, NULL, &error));
  g_assert_error (error, GL_DOWNLOAD_ERROR, GL_DOWNLOAD_ERROR_HTTP);
  g_assert_nonnull (strstr (error->message, url));
}

static void
test_connection_refused (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSocket) sock = NULL;
  g_autoptr(GSocketAddress) any = NULL;
  g_autoptr(GSocketAddress) bound = NULL;
  g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autofree char *dest = work_path (f, "blob.bin");
  g_autofree char *url = NULL;
  gint64 start;

  /* a port bound but with no listener: refused; kept bound until the end
   * of the test, so no other program can take it meanwhile */
  sock = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, &error);
  g_assert_no_error (error);
  any = g_inet_socket_address_new (loopback, 0);
  g_assert_true (g_socket_bind (sock, any, FALSE, &error));
  bound = g_socket_get_local_address (sock, &error);
  g_assert_no_error (error);
  url = g_strdup_printf ("http://127.0.0.1:%u/blob.bin",
                         g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound)));

  start = g_get_monotonic_time ();
  g_assert_false (gl_download_file (url, dest, f->blob_sum, NULL, NULL, NULL, &error));
  g_assert_error (error, GL_DOWNLOAD_ERROR, GL_DOWNLOAD_ERROR_NETWORK);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, url));
  g_assert_null (strstr (error->message, "resumed"));
  /* at once, not after a back-off (the margin is for an ASan build on a
   * loaded machine; curl's own connect timeout is minutes) */
  g_assert_cmpint (g_get_monotonic_time () - start, <, 20 * G_USEC_PER_SEC);
  g_assert_false (g_file_test (dest, G_FILE_TEST_EXISTS));
  {
    g_autofree char *part = g_strconcat (dest, ".part", NULL);
    g_assert_false (g_file_test (part, G_FILE_TEST_EXISTS));
  }
}

static void
test_cached (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dest = work_path (f, "blob.bin");
  g_autofree char *url = blob_url (f, NULL);
  g_auto(GStrv) requests = NULL;

  g_assert_true (gl_download_file (url, dest, f->blob_sum, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (gl_download_file (url, dest, f->blob_sum, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  requests = server_requests (f, "/blob.bin");
  g_assert_cmpuint (g_strv_length (requests), ==, 1);
  g_clear_pointer (&requests, g_strfreev);

  /* a damaged cached copy is replaced */
  write_garbage (dest, 1000);
  g_assert_true (gl_download_file (url, dest, f->blob_sum, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  assert_file_is_blob (f, dest);
  requests = server_requests (f, "/blob.bin");
  g_assert_cmpuint (g_strv_length (requests), ==, 2);
}

static void
test_redirect_and_file_url (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dest = work_path (f, "blob.bin");
  g_autofree char *dest2 = work_path (f, "blob2.bin");
  g_autofree char *part2 = g_strconcat (dest2, ".part", NULL);
  g_autofree char *url = blob_url (f, "?redirect=1");
  g_autofree char *file_url = g_filename_to_uri (f->blob_path, NULL, &error);
  g_auto(GStrv) requests = NULL;

  g_assert_true (gl_download_file (url, dest, f->blob_sum, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  assert_file_is_blob (f, dest);
  requests = server_requests (f, "/blob.bin");
  g_assert_cmpuint (g_strv_length (requests), ==, 2);
  g_assert_true (g_str_has_prefix (requests[0], "GET - 302 "));

  /* file:// URLs, resumed too */
  {
    g_autofree char *head = NULL;
    gsize len = 0;
    g_file_get_contents (f->blob_path, &head, &len, &error);
    g_assert_no_error (error);
    g_file_set_contents (part2, head, 4096, &error);
    g_assert_no_error (error);
  }
  g_assert_true (gl_download_file (file_url, dest2, f->blob_sum, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  assert_file_is_blob (f, dest2);
}

static void
test_to_string (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *url = g_strdup_printf ("%s/SHA256SUMS", f->base);
  g_autofree char *text = NULL;
  gsize len = 0;

  text = gl_download_to_string (url, &len, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (text, ==, "0123  nonsense\n");
  g_assert_cmpuint (len, ==, strlen (text));
}

static void
test_cancel_from_progress (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autofree char *dest = work_path (f, "blob.bin");
  g_autofree char *part = g_strconcat (dest, ".part", NULL);
  g_autofree char *url = blob_url (f, NULL);
  ProgressRecord r = { 0 };

  r.cancel_after = 1;
  r.cancellable = cancellable;
  g_assert_false (gl_download_file (url, dest, f->blob_sum, record_progress, &r,
                                    cancellable, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_test_message ("%s", error->message);
  g_clear_error (&error);
  g_assert_false (g_file_test (dest, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (part, G_FILE_TEST_EXISTS));

  /* an already cancelled cancellable fails at once */
  g_assert_false (gl_download_file (url, dest, f->blob_sum, NULL, NULL, cancellable, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&error);

  /* and the .part is resumed */
  g_assert_true (gl_download_file (url, dest, f->blob_sum, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  assert_file_is_blob (f, dest);
}

typedef struct {
  const char   *url;
  const char   *dest;
  const char   *sum;
  GCancellable *cancellable;
  gint          got_data;   /* atomic */
  gboolean      result;
  GError       *error;
} ThreadDownload;

static void
thread_progress (guint64 received, guint64 total, gpointer user_data)
{
  ThreadDownload *td = user_data;

  if (received > 0 && !g_atomic_int_get (&td->got_data))
    {
      g_atomic_int_set (&td->got_data, TRUE);
      g_main_context_wakeup (NULL);
    }
}

static gpointer
download_thread (gpointer user_data)
{
  ThreadDownload *td = user_data;

  td->result = gl_download_file (td->url, td->dest, td->sum, thread_progress, td,
                                 td->cancellable, &td->error);
  return NULL;
}

static gboolean
set_flag (gpointer user_data)
{
  *(gboolean *) user_data = TRUE;
  return G_SOURCE_REMOVE;
}

static void
test_cancel_from_thread (Fixture *f, gconstpointer data)
{
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autofree char *dest = work_path (f, "blob.bin");
  g_autofree char *part = g_strconcat (dest, ".part", NULL);
  g_autofree char *url = blob_url (f, "?stall=100000");
  ThreadDownload td = { 0 };
  gboolean timed_out = FALSE;
  guint timeout_id;
  GThread *thread;

  td.url = url;
  td.dest = dest;
  td.sum = f->blob_sum;
  td.cancellable = cancellable;
  thread = g_thread_new ("download", download_thread, &td);

  /* wait until the stalled transfer has delivered something */
  timeout_id = g_timeout_add_seconds (20, set_flag, &timed_out);
  while (!g_atomic_int_get (&td.got_data) && !timed_out)
    g_main_context_iteration (NULL, TRUE);
  g_assert_false (timed_out);
  g_source_remove (timeout_id);

  g_cancellable_cancel (cancellable);
  g_thread_join (thread);

  g_assert_false (td.result);
  g_assert_error (td.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&td.error);
  g_assert_false (g_file_test (dest, G_FILE_TEST_EXISTS));
  /* what arrived before the cancellation is kept, and resumed */
  g_assert_cmpint (file_size (part), >, 0);
  g_assert_cmpint (file_size (part), <=, 100000);
  {
    g_autoptr(GError) error = NULL;
    g_autofree char *plain = blob_url (f, NULL);

    g_assert_true (gl_download_file (plain, dest, f->blob_sum, NULL, NULL, NULL, &error));
    g_assert_no_error (error);
    assert_file_is_blob (f, dest);
  }
}

static void
test_no_space (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *small = work_path (f, "small");
  g_autofree char *dest = g_build_filename (small, "blob.bin", NULL);
  g_autofree char *part = g_strconcat (dest, ".part", NULL);
  g_autofree char *url = blob_url (f, NULL);

  if (geteuid () != 0)
    {
      gl_test_skip ("needs root to mount a small tmpfs in a private mount namespace");
      return;
    }

  if (!g_test_subprocess ())
    {
      g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
      g_test_trap_assert_passed ();
      return;
    }

  if (unshare (CLONE_NEWNS) != 0 ||
      mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
    {
      gl_test_skip_printf ("cannot make a private mount namespace: %s", g_strerror (errno));
      return;
    }
  g_assert_cmpint (g_mkdir_with_parents (small, 0755), ==, 0);
  g_assert_cmpint (mount ("tmpfs", small, "tmpfs", 0, "size=1m"), ==, 0);

  g_assert_false (gl_download_file (url, dest, f->blob_sum, NULL, NULL, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NO_SPACE);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, part));
  g_assert_nonnull (strstr (error->message, "free space and rerun"));
  g_assert_true (g_file_test (part, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (dest, G_FILE_TEST_EXISTS));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

#define ADD(path, func) \
  g_test_add (path, Fixture, NULL, fixture_setup, func, fixture_teardown)
  ADD ("/download/plain", test_plain);
  ADD ("/download/no-checksum", test_no_checksum);
  ADD ("/download/mismatch", test_mismatch);
  ADD ("/download/invalid-checksum", test_invalid_checksum);
  ADD ("/download/resume", test_resume);
  ADD ("/download/server-ignores-range", test_server_ignores_range);
  ADD ("/download/range-complete", test_range_complete);
  ADD ("/download/range-too-long", test_range_too_long);
  ADD ("/download/http-errors", test_http_errors);
  ADD ("/download/connection-refused", test_connection_refused);
  ADD ("/download/cached", test_cached);
  ADD ("/download/redirect-and-file-url", test_redirect_and_file_url);
  ADD ("/download/to-string", test_to_string);
  ADD ("/download/cancel-from-progress", test_cancel_from_progress);
  ADD ("/download/cancel-from-thread", test_cancel_from_thread);
  ADD ("/download/no-space", test_no_space);
#undef ADD

  return g_test_run ();
}
