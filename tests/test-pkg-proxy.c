/* test-pkg-proxy.c: the package operations' download proxy — what it lets
 * through and what it refuses, parsed and over real sockets (a connection
 * passed to it as glimpse-pkgns's relay passes them, the test HTTP server
 * on 127.0.0.1 as the repository).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include <glib-unix.h>

#include "gl-pkg-proxy.h"
#include "gl-test-http.h"

static GlPkgProxyVerdict
check (GlPkgProxy *proxy, const char *head, char **rewritten)
{
  g_auto(GlPkgProxyRequest) r = { 0 };
  GlPkgProxyVerdict v = gl_pkg_proxy_check (proxy, head, strlen (head), &r);
  if (rewritten)
    *rewritten = g_steal_pointer (&r.head);
  return v;
}

static void
test_allow (void)
{
  g_autoptr(GlPkgProxy) proxy = gl_pkg_proxy_new ();
  g_auto(GStrv) list = NULL;

  g_assert_true (gl_pkg_proxy_allow (proxy, "http://Repo.Example.ORG./debian"));
  g_assert_true (gl_pkg_proxy_allow (proxy, "https://repo.example.org/x"));
  g_assert_true (gl_pkg_proxy_allow (proxy, "http://127.0.0.1:8080/repo"));
  g_assert_true (gl_pkg_proxy_allow (proxy, "http://[::1]:81"));
  g_assert_true (gl_pkg_proxy_allow (proxy, "http://repo.example.org/other"));   /* the same origin */
  g_assert_false (gl_pkg_proxy_allow (proxy, "ftp://repo.example.org/"));
  g_assert_false (gl_pkg_proxy_allow (proxy, "mirror+http://repo.example.org/"));
  g_assert_false (gl_pkg_proxy_allow (proxy, "http://user@repo.example.org/"));
  g_assert_false (gl_pkg_proxy_allow (proxy, "http://repo.example.org:99999/"));
  g_assert_false (gl_pkg_proxy_allow (proxy, "http://repo%2eexample.org/"));
  list = gl_pkg_proxy_list (proxy);
  g_assert_cmpstrv (list, ((const char *[]) { "http://127.0.0.1:8080", "http://[::1]:81",
                                              "http://repo.example.org:80",
                                              "https://repo.example.org:443", NULL }));
}

static void
test_check (void)
{
  g_autoptr(GlPkgProxy) proxy = gl_pkg_proxy_new ();
  g_autofree char *head = NULL, *huge = NULL;
  GString *big;

  gl_pkg_proxy_allow (proxy, "http://repo.example.org/debian");
  gl_pkg_proxy_allow (proxy, "https://secure.example.org/");
  gl_pkg_proxy_allow (proxy, "http://127.0.0.1:8080/");

  /* allowed, and rebuilt: origin-form, Host from the URL, Proxy-* dropped */
  g_assert_cmpint (check (proxy, "GET http://REPO.example.org/debian/InRelease HTTP/1.1\r\n"
                                 "Host: evil.example.net\r\nProxy-Authorization: x\r\n"
                                 "User-Agent: apt\r\nRange: bytes=0-\r\n\r\n", &head),
                   ==, GL_PKG_PROXY_OK);
  g_assert_cmpstr (head, ==, "GET /debian/InRelease HTTP/1.1\r\nHost: repo.example.org\r\n"
                             "User-Agent: apt\r\nRange: bytes=0-\r\n\r\n");
  g_clear_pointer (&head, g_free);
  g_assert_cmpint (check (proxy, "HEAD http://127.0.0.1:8080?x HTTP/1.0\r\n\r\n", &head), ==, GL_PKG_PROXY_OK);
  g_assert_cmpstr (head, ==, "HEAD /?x HTTP/1.0\r\nHost: 127.0.0.1:8080\r\n\r\n");
  g_assert_cmpint (check (proxy, "CONNECT secure.example.org:443 HTTP/1.1\r\nHost: x\r\n\r\n", NULL),
                   ==, GL_PKG_PROXY_OK);

  /* another port, host, scheme of an allowed one: refused */
  g_assert_cmpint (check (proxy, "GET http://127.0.0.1:8081/ HTTP/1.1\r\n\r\n", NULL), ==, GL_PKG_PROXY_FORBIDDEN);
  g_assert_cmpint (check (proxy, "GET http://127.0.0.1/ HTTP/1.1\r\n\r\n", NULL), ==, GL_PKG_PROXY_FORBIDDEN);
  g_assert_cmpint (check (proxy, "GET http://localhost:8080/ HTTP/1.1\r\n\r\n", NULL), ==, GL_PKG_PROXY_FORBIDDEN);
  g_assert_cmpint (check (proxy, "GET http://169.254.169.254/latest HTTP/1.1\r\n\r\n", NULL), ==, GL_PKG_PROXY_FORBIDDEN);
  g_assert_cmpint (check (proxy, "CONNECT repo.example.org:80 HTTP/1.1\r\n\r\n", NULL), ==, GL_PKG_PROXY_FORBIDDEN);
  g_assert_cmpint (check (proxy, "CONNECT secure.example.org:22 HTTP/1.1\r\n\r\n", NULL), ==, GL_PKG_PROXY_FORBIDDEN);
  g_assert_cmpint (check (proxy, "CONNECT 127.0.0.1:8080 HTTP/1.1\r\n\r\n", NULL), ==, GL_PKG_PROXY_FORBIDDEN);
  g_assert_cmpint (check (proxy, "GET http://secure.example.org/ HTTP/1.1\r\n\r\n", NULL), ==, GL_PKG_PROXY_FORBIDDEN);

  /* methods, forms and framing a download never needs */
  g_assert_cmpint (check (proxy, "POST http://repo.example.org/ HTTP/1.1\r\n\r\n", NULL), ==, GL_PKG_PROXY_BAD_METHOD);
  g_assert_cmpint (check (proxy, "get http://repo.example.org/ HTTP/1.1\r\n\r\n", NULL), ==, GL_PKG_PROXY_BAD_METHOD);
  g_assert_cmpint (check (proxy, "GET /debian/InRelease HTTP/1.1\r\nHost: repo.example.org\r\n\r\n", NULL),
                   ==, GL_PKG_PROXY_BAD_REQUEST);
  g_assert_cmpint (check (proxy, "GET https://secure.example.org/ HTTP/1.1\r\n\r\n", NULL), ==, GL_PKG_PROXY_BAD_REQUEST);
  g_assert_cmpint (check (proxy, "CONNECT secure.example.org HTTP/1.1\r\n\r\n", NULL), ==, GL_PKG_PROXY_BAD_REQUEST);
  g_assert_cmpint (check (proxy, "GET http://x@repo.example.org/ HTTP/1.1\r\n\r\n", NULL), ==, GL_PKG_PROXY_BAD_REQUEST);
  g_assert_cmpint (check (proxy, "GET http://repo.example.org/#f HTTP/1.1\r\n\r\n", NULL), ==, GL_PKG_PROXY_BAD_REQUEST);
  g_assert_cmpint (check (proxy, "GET http://repo.example.org%2f@127.0.0.1:8080/ HTTP/1.1\r\n\r\n", NULL),
                   ==, GL_PKG_PROXY_BAD_REQUEST);
  g_assert_cmpint (check (proxy, "GET http://repo.example.org/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", NULL),
                   ==, GL_PKG_PROXY_BAD_REQUEST);
  g_assert_cmpint (check (proxy, "GET http://repo.example.org/ HTTP/1.1\r\nContent-Length: 5\r\n\r\n", NULL),
                   ==, GL_PKG_PROXY_BAD_REQUEST);
  g_assert_cmpint (check (proxy, "GET http://repo.example.org/ HTTP/1.1\r\nContent-Length: 0\r\n\r\n", NULL),
                   ==, GL_PKG_PROXY_OK);
  g_assert_cmpint (check (proxy, "GET http://repo.example.org/ HTTP/1.1\r\nX: a\r\n b\r\n\r\n", NULL),
                   ==, GL_PKG_PROXY_BAD_REQUEST);
  g_assert_cmpint (check (proxy, "GET http://repo.example.org/ HTTP/1.1\nHost: x\r\n\r\n", NULL),
                   ==, GL_PKG_PROXY_BAD_REQUEST);
  g_assert_cmpint (check (proxy, "GET http://repo.example.org/ HTTP/1.1\r\nX: a\rb\r\n\r\n", NULL),
                   ==, GL_PKG_PROXY_BAD_REQUEST);
  g_assert_cmpint (check (proxy, "GET http://repo.example.org/  HTTP/1.1\r\n\r\n", NULL), ==, GL_PKG_PROXY_BAD_REQUEST);
  g_assert_cmpint (check (proxy, "GET http://repo.example.org/ HTTP/2\r\n\r\n", NULL), ==, GL_PKG_PROXY_BAD_REQUEST);
  /* a host of an empty label: refused as malformed, never looked up */
  g_assert_cmpint (check (proxy, "GET http://repo..example.org/ HTTP/1.1\r\n\r\n", NULL), ==, GL_PKG_PROXY_BAD_REQUEST);
  g_assert_cmpint (check (proxy, "GET http://.repo.example.org/ HTTP/1.1\r\n\r\n", NULL), ==, GL_PKG_PROXY_BAD_REQUEST);
  g_assert_cmpint (check (proxy, "CONNECT .secure.example.org:443 HTTP/1.1\r\n\r\n", NULL), ==, GL_PKG_PROXY_BAD_REQUEST);
  g_assert_cmpint (check (proxy, "GET http://./ HTTP/1.1\r\n\r\n", NULL), ==, GL_PKG_PROXY_BAD_REQUEST);
  g_assert_cmpint (check (proxy, "GET http://repo.example.org../ HTTP/1.1\r\n\r\n", NULL), ==, GL_PKG_PROXY_BAD_REQUEST);
  /* (one trailing dot is the root: the same host) */
  g_assert_cmpint (check (proxy, "GET http://repo.example.org./ HTTP/1.1\r\n\r\n", NULL), ==, GL_PKG_PROXY_OK);
  g_assert_false (gl_pkg_proxy_allow (proxy, "http://a..b/"));
  big = g_string_new ("GET http://repo.example.org/ HTTP/1.1\r\n");
  for (int i = 0; i < 1000; i++)
    g_string_append (big, "X-Pad: 0123456789012345678901234567890123456789\r\n");
  g_string_append (big, "\r\n");
  huge = g_string_free (big, FALSE);
  g_assert_cmpint (check (proxy, huge, NULL), ==, GL_PKG_PROXY_TOO_LARGE);
}

static gboolean
addr_ok (const char *text)
{
  struct sockaddr_storage ss = { 0 };
  struct sockaddr_in *v4 = (struct sockaddr_in *) &ss;
  struct sockaddr_in6 *v6 = (struct sockaddr_in6 *) &ss;
  if (inet_pton (AF_INET, text, &v4->sin_addr) == 1)
    v4->sin_family = AF_INET;
  else
    {
      g_assert_cmpint (inet_pton (AF_INET6, text, &v6->sin6_addr), ==, 1);
      v6->sin6_family = AF_INET6;
    }
  return gl_pkg_proxy_address_ok (NULL, (struct sockaddr *) &ss);
}

/* DNS rebinding: what a name may resolve to */
static void
test_addresses (void)
{
  const char *refused[] = { "127.0.0.1", "127.1.2.3", "0.0.0.0", "169.254.169.254", "224.0.0.1",
                            "255.255.255.255", "::1", "::", "fe80::1", "ff02::1", "::ffff:127.0.0.1",
                            "::ffff:169.254.169.254", "::127.0.0.1" };
  const char *allowed[] = { "192.0.2.1", "10.1.2.3", "192.168.1.10", "2001:db8::1" };
  for (gsize i = 0; i < G_N_ELEMENTS (refused); i++)
    g_assert_false (addr_ok (refused[i]));
  for (gsize i = 0; i < G_N_ELEMENTS (allowed); i++)
    g_assert_true (addr_ok (allowed[i]));
}

/* ---- over sockets ---- */

typedef struct {
  GSubprocess *server;
  char *base;          /* http://127.0.0.1:PORT */
  guint16 port;
  char *root;
  GlPkgProxy *proxy;
  int relay, log;
  int listener;        /* stands for the relay's 127.0.0.1 listener */
} Fixture;

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *repo = NULL, *file = NULL;
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };

  f->root = g_dir_make_tmp ("glimpse-proxy-XXXXXX", &error);
  g_assert_no_error (error);
  repo = g_build_filename (f->root, "repo", NULL);
  g_assert_cmpint (g_mkdir (repo, 0755), ==, 0);
  file = g_build_filename (repo, "InRelease", NULL);
  g_assert_true (g_file_set_contents (file, "signed index\n", -1, NULL));
  f->server = gl_test_http_start (f->root, &f->base);
  f->port = (guint16) atoi (strrchr (f->base, ':') + 1);
  f->proxy = gl_pkg_proxy_new ();
  f->relay = f->log = -1;
  f->listener = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  g_assert_cmpint (bind (f->listener, (struct sockaddr *) &a, sizeof a), ==, 0);
  g_assert_cmpint (listen (f->listener, 8), ==, 0);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  g_clear_pointer (&f->proxy, gl_pkg_proxy_free);
  if (f->relay >= 0)
    close (f->relay);
  if (f->log >= 0)
    close (f->log);
  close (f->listener);
  gl_test_http_stop (&f->server);
  g_free (f->base);
  {
    g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", f->root);
    g_assert_cmpint (system (cmd), ==, 0);
  }
  g_free (f->root);
}

static void
start (Fixture *f)
{
  g_autoptr(GError) error = NULL;
  g_assert_true (gl_pkg_proxy_start (f->proxy, &f->relay, &f->log, &error));
  g_assert_no_error (error);
}

/* A connection as the relay makes it: connected here, the accepted end
 * passed to the proxy; the client end returned. */
static int
connect_through (Fixture *f)
{
  struct sockaddr_in a;
  socklen_t len = sizeof a;
  int c, s;
  char byte = 'c';
  struct iovec iov = { &byte, 1 };
  union { struct cmsghdr h; char buf[CMSG_SPACE (sizeof (int))]; } u;
  struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf };
  struct cmsghdr *h;

  g_assert_cmpint (getsockname (f->listener, (struct sockaddr *) &a, &len), ==, 0);
  c = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  g_assert_cmpint (connect (c, (struct sockaddr *) &a, len), ==, 0);
  s = accept4 (f->listener, NULL, NULL, SOCK_CLOEXEC);
  g_assert_cmpint (s, >=, 0);
  memset (u.buf, 0, sizeof u.buf);
  h = CMSG_FIRSTHDR (&m);
  h->cmsg_level = SOL_SOCKET;
  h->cmsg_type = SCM_RIGHTS;
  h->cmsg_len = CMSG_LEN (sizeof (int));
  memcpy (CMSG_DATA (h), &s, sizeof s);
  g_assert_cmpint (sendmsg (f->relay, &m, 0), ==, 1);
  close (s);
  return c;
}

/* Everything until the proxy closes (a generous deadline against hangs) */
static char *
read_all (int fd)
{
  GString *s = g_string_new (NULL);
  char buf[4096];
  for (;;)
    {
      struct pollfd p = { fd, POLLIN, 0 };
      ssize_t n;
      g_assert_cmpint (poll (&p, 1, 60000), ==, 1);
      n = read (fd, buf, sizeof buf);
      if (n <= 0)
        break;
      g_string_append_len (s, buf, n);
    }
  return g_string_free (s, FALSE);
}

static char *
ask (Fixture *f, const char *request)
{
  int c = connect_through (f);
  char *answer;
  g_assert_cmpint (write (c, request, strlen (request)), ==, (gssize) strlen (request));
  answer = read_all (c);
  close (c);
  return answer;
}

static char *
log_text (Fixture *f)
{
  char buf[4096];
  ssize_t n = read (f->log, buf, sizeof buf - 1);   /* (non-blocking: what is there) */
  return g_strndup (buf, n > 0 ? (gsize) n : 0);
}

static void
test_serve (Fixture *f, gconstpointer data)
{
  g_autofree char *req = NULL, *got = NULL, *other = NULL, *logged = NULL;

  g_assert_true (gl_pkg_proxy_allow (f->proxy, f->base));
  start (f);
  g_unix_set_fd_nonblocking (f->log, TRUE, NULL);

  /* two requests on one connection (apt's keep-alive and pipelining) */
  req = g_strdup_printf ("GET %s/repo/InRelease HTTP/1.1\r\nHost: 127.0.0.1:1\r\n\r\n"
                         "HEAD %s/repo/InRelease HTTP/1.1\r\nConnection: close\r\n\r\n", f->base, f->base);
  got = ask (f, req);
  g_assert_true (g_str_has_prefix (got, "HTTP/1."));
  g_assert_nonnull (strstr (got, " 200 "));
  g_assert_nonnull (strstr (got, "signed index\n"));
  g_assert_nonnull (strstr (strstr (got, "signed index\n"), " 200 "));
  g_clear_pointer (&got, g_free);

  /* a port of the host's loopback not among the repositories */
  other = g_strdup_printf ("GET http://127.0.0.1:%u/ HTTP/1.1\r\n\r\n", (guint) (f->port == 9 ? 10 : 9));
  got = ask (f, other);
  g_assert_true (g_str_has_prefix (got, "HTTP/1.1 403 "));
  g_assert_nonnull (strstr (got, "not among the sandbox's repositories"));
  g_clear_pointer (&got, g_free);
  got = ask (f, "CONNECT 127.0.0.1:22 HTTP/1.1\r\n\r\n");
  g_assert_true (g_str_has_prefix (got, "HTTP/1.1 403 "));
  g_clear_pointer (&got, g_free);
  got = ask (f, "DELETE http://127.0.0.1:1/ HTTP/1.1\r\n\r\n");
  g_assert_true (g_str_has_prefix (got, "HTTP/1.1 405 "));
  g_clear_pointer (&got, g_free);

  logged = log_text (f);
  g_assert_nonnull (strstr (logged, "glimpse: refused a download of 127.0.0.1:"));
  g_assert_nonnull (strstr (logged, "glimpse: refused a download of 127.0.0.1:22 not among the sandbox's repositories\n"));
  g_assert_nonnull (strstr (logged, "other than GET, HEAD or CONNECT"));
}

/* A later request on a kept-alive connection names another origin: the
 * first is answered, the other never reaches anything */
static void
test_switch_origin (Fixture *f, gconstpointer data)
{
  g_autofree char *req = NULL, *got = NULL, *logged = NULL;

  g_assert_true (gl_pkg_proxy_allow (f->proxy, f->base));
  start (f);
  g_unix_set_fd_nonblocking (f->log, TRUE, NULL);
  req = g_strdup_printf ("GET %s/repo/InRelease HTTP/1.1\r\n\r\n"
                         "GET http://127.0.0.1:1/secret HTTP/1.1\r\n\r\n", f->base);
  got = ask (f, req);
  g_assert_nonnull (strstr (got, "signed index\n"));
  g_assert_null (strstr (strstr (got, "signed index\n"), "HTTP/1."));
  logged = log_text (f);
  g_assert_nonnull (strstr (logged, "refused a download of 127.0.0.1:1 "));
}

/* An allowed name that resolves to the loopback (DNS rebinding) is not
 * connected to; the same port by its literal address is */
static void
test_rebinding (Fixture *f, gconstpointer data)
{
  g_autofree char *by_name = g_strdup_printf ("http://localhost:%u/", f->port);
  g_autofree char *req = g_strdup_printf ("GET http://localhost:%u/repo/InRelease HTTP/1.1\r\n\r\n", f->port);
  g_autofree char *got = NULL, *logged = NULL;

  g_assert_true (gl_pkg_proxy_allow (f->proxy, by_name));
  start (f);
  g_unix_set_fd_nonblocking (f->log, TRUE, NULL);
  got = ask (f, req);
  g_assert_true (g_str_has_prefix (got, "HTTP/1.1 502 "));
  g_assert_null (strstr (got, "signed index"));
  logged = log_text (f);
  g_assert_nonnull (strstr (logged, "local address"));
}

/* An allowed origin that refuses the connection: the 502's reason phrase
 * (what apt prints) names it and why */
static void
test_refused (Fixture *f, gconstpointer data)
{
  g_autofree char *got = NULL;

  g_assert_true (gl_pkg_proxy_allow (f->proxy, "http://127.0.0.1:1/"));
  start (f);
  got = ask (f, "GET http://127.0.0.1:1/repo/InRelease HTTP/1.1\r\n\r\n");
  g_assert_true (g_str_has_prefix (got, "HTTP/1.1 502 could not connect to 127.0.0.1:1: Connection refused\r\n"));
}

/* Slowloris, and stopping: a client that never ends its head does not
 * keep gl_pkg_proxy_free waiting */
static void
test_stop (Fixture *f, gconstpointer data)
{
  int c;
  gint64 t0;

  g_assert_true (gl_pkg_proxy_allow (f->proxy, f->base));
  start (f);
  c = connect_through (f);
  g_assert_cmpint (write (c, "GET http://", 11), ==, 11);
  t0 = g_get_monotonic_time ();
  g_clear_pointer (&f->proxy, gl_pkg_proxy_free);
  g_assert_cmpint (g_get_monotonic_time () - t0, <, 30 * G_USEC_PER_SEC);
  g_free (read_all (c));   /* closed */
  close (c);
}

/* A listener on 127.0.0.1 standing for an origin that speaks anything
 * (a CONNECT tunnel's): its port in @port */
static int
raw_origin (guint16 *port)
{
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  socklen_t len = sizeof a;
  int l = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  g_assert_cmpint (bind (l, (struct sockaddr *) &a, sizeof a), ==, 0);
  g_assert_cmpint (listen (l, 128), ==, 0);
  g_assert_cmpint (getsockname (l, (struct sockaddr *) &a, &len), ==, 0);
  *port = ntohs (a.sin_port);
  return l;
}

/* A CONNECT tunnel through the proxy to the raw origin @l: the client
 * end; the origin's end in @origin */
static int
tunnel (Fixture *f, int l, guint16 port, int *origin)
{
  g_autofree char *req = g_strdup_printf ("CONNECT 127.0.0.1:%u HTTP/1.1\r\n\r\n", port);
  static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
  char buf[sizeof ok] = { 0 };
  int c = connect_through (f);
  gsize got = 0;

  g_assert_cmpint (write (c, req, strlen (req)), ==, (gssize) strlen (req));
  while (got < sizeof ok - 1)
    {
      ssize_t n = read (c, buf + got, sizeof ok - 1 - got);
      g_assert_cmpint (n, >, 0);
      got += (gsize) n;
    }
  g_assert_cmpstr (buf, ==, ok);
  *origin = accept4 (l, NULL, NULL, SOCK_CLOEXEC);
  g_assert_cmpint (*origin, >=, 0);
  return c;
}

/* @fd ends (EOF or an error, after whatever was still queued) within 10 s */
static gboolean
ends (int fd)
{
  gint64 until = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  char buf[65536];

  for (;;)
    {
      struct pollfd p = { fd, POLLIN, 0 };
      gint64 left = until - g_get_monotonic_time ();
      ssize_t n;
      if (left <= 0 || poll (&p, 1, (int) (left / 1000) + 1) != 1)
        return FALSE;
      n = recv (fd, buf, sizeof buf, MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
        return TRUE;
    }
}

/* The cut (glimpse-pkgns --net-until-cut): once the relay is gone, "o" on
 * the channel; the proxy answers "k" only when no connection it was
 * handed is open any more, in the operation's namespace or upstream,
 * whatever state it is in, and it serves none later.  Attacks: an
 * established CONNECT tunnel, a half-closed one still carrying the
 * origin's bytes, one whose client reads nothing while the origin floods
 * (the proxy's thread blocked writing), a head never finished, connections
 * queued on the channel with the "o" (more than the proxy serves at once). */
static void
test_offline (Fixture *f, gconstpointer data)
{
  guint16 oport;
  int l = raw_origin (&oport);
  g_autofree char *https = g_strdup_printf ("https://127.0.0.1:%u/", oport);
  int t1, o1, t2, o2, t3, o3, t4, queued[70], late, other;
  char buf[64];
  struct pollfd p;
  gint64 t0;

  g_assert_true (gl_pkg_proxy_allow (f->proxy, https));
  g_assert_true (gl_pkg_proxy_allow (f->proxy, f->base));
  start (f);
  t1 = tunnel (f, l, oport, &o1);
  g_assert_cmpint (write (t1, "ping", 4), ==, 4);
  g_assert_cmpint (read (o1, buf, sizeof buf), ==, 4);
  t2 = tunnel (f, l, oport, &o2);
  g_assert_cmpint (shutdown (t2, SHUT_WR), ==, 0);
  g_assert_cmpint (read (o2, buf, sizeof buf), ==, 0);
  g_assert_cmpint (write (o2, "still", 5), ==, 5);
  g_assert_cmpint (read (t2, buf, sizeof buf), ==, 5);
  t3 = tunnel (f, l, oport, &o3);
  g_unix_set_fd_nonblocking (o3, TRUE, NULL);
  {
    static char flood[65536];
    gint64 until = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;
    /* until the proxy's thread is blocked writing to t3 and the origin's
     * buffer is full too */
    while (g_get_monotonic_time () < until)
      if (write (o3, flood, sizeof flood) < 0)
        {
          g_assert_cmpint (errno, ==, EAGAIN);
          g_usleep (100000);
          if (write (o3, flood, sizeof flood) < 0)
            break;
        }
  }
  t4 = connect_through (f);
  g_assert_cmpint (write (t4, "GET http://", 11), ==, 11);
  for (guint i = 0; i < G_N_ELEMENTS (queued); i++)
    queued[i] = connect_through (f);

  t0 = g_get_monotonic_time ();
  g_assert_cmpint (send (f->relay, "o", 1, 0), ==, 1);
  p = (struct pollfd) { f->relay, POLLIN, 0 };
  g_assert_cmpint (poll (&p, 1, 15000), ==, 1);
  g_assert_cmpint (recv (f->relay, buf, sizeof buf, 0), ==, 1);
  g_assert_cmpint (buf[0], ==, 'k');
  g_test_message ("the cut took %" G_GINT64_FORMAT " ms", (g_get_monotonic_time () - t0) / 1000);

  /* every end, upstream and in the namespace, is closed (at once: ends()
   * waits, but no bytes come from the other side any more) */
  g_assert_true (ends (o1));
  g_assert_true (ends (o2));
  g_assert_true (ends (o3));
  g_assert_true (ends (t1));
  g_assert_true (ends (t2));
  g_assert_true (ends (t3));
  g_assert_true (ends (t4));
  for (guint i = 0; i < G_N_ELEMENTS (queued); i++)
    {
      g_assert_true (ends (queued[i]));
      close (queued[i]);
    }
  /* the tunnel carries nothing: the origin's end saw its end above */
  (void) !write (t1, "after", 5);
  /* later connections: closed unanswered, nothing connects upstream */
  late = connect_through (f);
  (void) !write (late, "CONNECT 127.0.0.1:1 HTTP/1.1\r\n\r\n", 32);
  g_assert_true (ends (late));
  {
    g_autofree char *req = g_strdup_printf ("CONNECT 127.0.0.1:%u HTTP/1.1\r\n\r\n", oport);
    int c = connect_through (f);
    g_autofree char *got = NULL;
    (void) !write (c, req, strlen (req));
    got = read_all (c);
    g_assert_cmpstr (got, ==, "");
    close (c);
  }
  g_unix_set_fd_nonblocking (l, TRUE, NULL);
  other = accept4 (l, NULL, NULL, SOCK_CLOEXEC);
  g_assert_cmpint (other, <, 0);
  for (int *fd = (int[]) { t1, o1, t2, o2, t3, o3, t4, late, l, -1 }; *fd >= 0; fd++)
    close (*fd);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_test_add_func ("/pkg-proxy/allow", test_allow);
  g_test_add_func ("/pkg-proxy/check", test_check);
  g_test_add_func ("/pkg-proxy/addresses", test_addresses);
  g_test_add ("/pkg-proxy/serve", Fixture, NULL, fixture_setup, test_serve, fixture_teardown);
  g_test_add ("/pkg-proxy/switch-origin", Fixture, NULL, fixture_setup, test_switch_origin, fixture_teardown);
  g_test_add ("/pkg-proxy/rebinding", Fixture, NULL, fixture_setup, test_rebinding, fixture_teardown);
  g_test_add ("/pkg-proxy/refused", Fixture, NULL, fixture_setup, test_refused, fixture_teardown);
  g_test_add ("/pkg-proxy/stop", Fixture, NULL, fixture_setup, test_stop, fixture_teardown);
  g_test_add ("/pkg-proxy/offline", Fixture, NULL, fixture_setup, test_offline, fixture_teardown);
  return g_test_run ();
}
