/* gl-pkg-proxy.c: the only way a package operation downloads (see gl-pkg-proxy.h)
 *
 * One thread takes the connections glimpse-pkgns relays (SCM_RIGHTS over a
 * SOCK_SEQPACKET socket); each connection has a thread of its own, with
 * blocking I/O and poll(): at most MAX_CONNECTIONS at a time.  Stopping
 * makes a pipe every poll() watches readable, so every thread ends at once.
 * So does the cut: a message "o" on the same channel, from glimpse-pkgns's
 * PID 1 once it has killed the relay, after which no connection is open
 * or served any more and the proxy answers "k" (go_offline).
 *
 * What a hostile package manager may send, and what happens:
 * - a request head larger than HEAD_MAX, or not complete within
 *   HEAD_TIMEOUT_S (slowloris): 431, or the connection is closed;
 * - any method but GET, HEAD and CONNECT: 405; a body (Content-Length other
 *   than 0, any Transfer-Encoding): 400; an origin-form request ("GET /x"),
 *   an https:// URL without CONNECT, userinfo, a fragment, bare CR or LF,
 *   obsolete line folding, control characters: 400;
 * - a request goes to the origin as glimpse rebuilds it: origin-form, the
 *   Host header from the URL (the client's Host and Proxy-* are dropped),
 *   so no header can name another origin than the one checked;
 * - a later request on the same connection is checked the same way; one
 *   for another origin (or refused) ends the connection after the answers
 *   to the requests before it (apt then asks again on a new connection);
 * - CONNECT is a blind tunnel, to an allowed https origin only.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-pkg-proxy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib-unix.h>

#define HEAD_MAX 16384
#define HEAD_TIMEOUT_S 60
#define CONNECT_TIMEOUT_S 30
#define MAX_CONNECTIONS 64
#define MAX_HEADERS 100
#define MAX_LOG_LINES 50

typedef struct {
  gboolean https;
  gboolean literal;   /* the host is an address, not a name */
  char *host;
  guint16 port;
} Origin;

struct _GlPkgProxy {
  GPtrArray *allowed;          /* Origin* */
  GArray *local_addrs;         /* struct sockaddr_storage: this machine's own */
  int our_end;                 /* the SOCK_SEQPACKET end we receive on */
  int stop[2];                 /* readable once stopping */
  int log_w;                   /* the refusal lines */
  GThread *acceptor;
  GMutex lock;
  GCond idle;
  guint n_connections;
  GPtrArray *connections;      /* Conn*, cut when stopping */
  gboolean offline;            /* cut for good (go_offline) */
  guint n_logged;
};

typedef struct {
  GlPkgProxy *proxy;
  int client;
  int origin;
} Conn;

static void
origin_free (Origin *o)
{
  g_free (o->host);
  g_free (o);
}

void
gl_pkg_proxy_request_clear (GlPkgProxyRequest *request)
{
  g_clear_pointer (&request->host, g_free);
  g_clear_pointer (&request->head, g_free);
}

GlPkgProxy *
gl_pkg_proxy_new (void)
{
  GlPkgProxy *p = g_new0 (GlPkgProxy, 1);
  p->allowed = g_ptr_array_new_with_free_func ((GDestroyNotify) origin_free);
  p->local_addrs = g_array_new (FALSE, TRUE, sizeof (struct sockaddr_storage));
  p->our_end = p->stop[0] = p->stop[1] = p->log_w = -1;
  p->connections = g_ptr_array_new ();
  g_mutex_init (&p->lock);
  g_cond_init (&p->idle);
  return p;
}

/* ------------------------------------------------------------ parsing */

/* HOST[:PORT] or [V6][:PORT] of @len bytes: the host (lower-case, without
 * brackets or a trailing dot), whether it is a literal address, the port
 * (@default_port when absent; 0 refuses its absence). */
static gboolean
parse_authority (const char *a, gsize len, guint16 default_port, char **host, gboolean *literal,
                 guint16 *port)
{
  g_autofree char *h = NULL;
  const char *colon;
  gsize hlen;
  struct in6_addr a6;
  struct in_addr a4;

  if (len == 0 || len > 300)
    return FALSE;
  if (a[0] == '[')
    {
      const char *close = memchr (a, ']', len);
      if (close == NULL)
        return FALSE;
      h = g_strndup (a + 1, (gsize) (close - a - 1));
      if (inet_pton (AF_INET6, h, &a6) != 1)
        return FALSE;
      colon = close + 1 < a + len ? close + 1 : NULL;
      if (colon && *colon != ':')
        return FALSE;
      *literal = TRUE;
    }
  else
    {
      colon = memchr (a, ':', len);
      hlen = colon ? (gsize) (colon - a) : len;
      if (hlen == 0)
        return FALSE;
      /* labels of letters, digits and '-', none empty (not "a..b",
       * ".a" or "."); one trailing dot (the root) is dropped below */
      for (gsize i = 0; i < hlen; i++)
        if (!g_ascii_isalnum (a[i]) && a[i] != '.' && a[i] != '-')
          return FALSE;
        else if (a[i] == '.' && (i == 0 || a[i - 1] == '.'))
          return FALSE;
      h = g_ascii_strdown (a, (gssize) hlen);
      if (hlen > 1 && h[hlen - 1] == '.')
        h[hlen - 1] = '\0';
      *literal = inet_pton (AF_INET, h, &a4) == 1;
    }
  if (colon)
    {
      const char *d = colon + 1;
      gsize n = (gsize) (a + len - d);
      guint v = 0;
      if (n == 0 || n > 5)
        return FALSE;
      for (gsize i = 0; i < n; i++)
        if (!g_ascii_isdigit (d[i]))
          return FALSE;
        else
          v = v * 10 + (guint) (d[i] - '0');
      if (v == 0 || v > 65535)
        return FALSE;
      *port = (guint16) v;
    }
  else if (default_port == 0)
    return FALSE;
  else
    *port = default_port;
  *host = g_steal_pointer (&h);
  return TRUE;
}

gboolean
gl_pkg_proxy_allow (GlPkgProxy *proxy, const char *uri)
{
  gboolean https = g_ascii_strncasecmp (uri, "https://", 8) == 0;
  const char *a, *end;
  Origin o = { 0 };

  if (!https && g_ascii_strncasecmp (uri, "http://", 7) != 0)
    return FALSE;
  a = uri + (https ? 8 : 7);
  end = a + strcspn (a, "/?#");
  if (memchr (a, '@', (gsize) (end - a)) != NULL
      || !parse_authority (a, (gsize) (end - a), https ? 443 : 80, &o.host, &o.literal, &o.port))
    return FALSE;
  o.https = https;
  for (guint i = 0; i < proxy->allowed->len; i++)
    {
      Origin *e = proxy->allowed->pdata[i];
      if (e->https == o.https && e->port == o.port && g_str_equal (e->host, o.host))
        {
          g_free (o.host);
          return TRUE;
        }
    }
  g_ptr_array_add (proxy->allowed, g_memdup2 (&o, sizeof o));
  return TRUE;
}

static int
cmp_str (const void *a, const void *b)
{
  return strcmp (*(char * const *) a, *(char * const *) b);
}

GStrv
gl_pkg_proxy_list (GlPkgProxy *proxy)
{
  g_autoptr(GStrvBuilder) b = g_strv_builder_new ();
  GStrv list;
  for (guint i = 0; i < proxy->allowed->len; i++)
    {
      Origin *e = proxy->allowed->pdata[i];
      gboolean v6 = strchr (e->host, ':') != NULL;
      g_autofree char *o = g_strdup_printf ("%s://%s%s%s:%u", e->https ? "https" : "http",
                                            v6 ? "[" : "", e->host, v6 ? "]" : "", e->port);
      g_strv_builder_add (b, o);
    }
  list = g_strv_builder_end (b);
  qsort (list, g_strv_length (list), sizeof *list, cmp_str);
  return list;
}

static Origin *
find_allowed (GlPkgProxy *proxy, gboolean https, const char *host, guint16 port)
{
  for (guint i = 0; i < proxy->allowed->len; i++)
    {
      Origin *e = proxy->allowed->pdata[i];
      if (e->https == https && e->port == port && g_str_equal (e->host, host))
        return e;
    }
  return NULL;
}

static gboolean
is_token_char (char c)
{
  return g_ascii_isalnum (c) || (c != '\0' && strchr ("!#$%&'*+-.^_`|~", c) != NULL);
}

/* Headers a request never takes to the origin */
static gboolean
dropped_header (const char *name, gsize len)
{
  static const char *names[] = { "host", "proxy-connection", "proxy-authorization",
                                 "proxy-authenticate", "upgrade", "keep-alive" };
  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    if (strlen (names[i]) == len && g_ascii_strncasecmp (name, names[i], len) == 0)
      return TRUE;
  return FALSE;
}

/* The header lines from @p to @end (the final CRLF), checked; those the
 * origin gets appended to @out (NULL: none). */
static gboolean
copy_headers (const char *p, const char *end, GString *out, guint *n_headers)
{
  const char *eol;
  for (; p < end - 2; p = eol + 2)
    {
      const char *colon;
      eol = memmem (p, (gsize) (end - p), "\r\n", 2);
      if (++*n_headers > MAX_HEADERS)
        return FALSE;
      colon = memchr (p, ':', (gsize) (eol - p));
      if (colon == NULL || colon == p)
        return FALSE;
      for (const char *c = p; c < colon; c++)
        if (!is_token_char (*c))
          return FALSE;   /* also obsolete folding: a line starting with a blank */
      for (const char *c = colon + 1; c < eol; c++)
        if (((guchar) *c < 0x20 && *c != '\t') || *c == 0x7f)
          return FALSE;
      if ((gsize) (colon - p) == 17 && g_ascii_strncasecmp (p, "transfer-encoding", 17) == 0)
        return FALSE;
      if ((gsize) (colon - p) == 14 && g_ascii_strncasecmp (p, "content-length", 14) == 0)
        {
          g_autofree char *v = g_strndup (colon + 1, (gsize) (eol - colon - 1));
          if (!g_str_equal (g_strstrip (v), "0"))
            return FALSE;
        }
      if (out != NULL && !dropped_header (p, (gsize) (colon - p)))
        {
          g_string_append_len (out, p, eol - p);
          g_string_append (out, "\r\n");
        }
    }
  return TRUE;
}

GlPkgProxyVerdict
gl_pkg_proxy_check (GlPkgProxy *proxy, const char *head, gsize len, GlPkgProxyRequest *request)
{
  g_autoptr(GString) out = NULL;
  const char *p = head, *end = head + len, *eol, *sp1, *sp2, *target, *a, *aend;
  gsize tlen;
  gboolean is_connect, literal = FALSE, https;
  guint n_headers = 0;

  g_return_val_if_fail (head != NULL, GL_PKG_PROXY_BAD_REQUEST);
  memset (request, 0, sizeof *request);
  if (len > HEAD_MAX)
    return GL_PKG_PROXY_TOO_LARGE;
  if (len < 4 || memcmp (end - 4, "\r\n\r\n", 4) != 0 || memchr (head, '\0', len) != NULL)
    return GL_PKG_PROXY_BAD_REQUEST;
  /* every CR is followed by LF, every LF preceded by CR */
  for (gsize i = 0; i < len; i++)
    if ((head[i] == '\r' && (i + 1 == len || head[i + 1] != '\n'))
        || (head[i] == '\n' && (i == 0 || head[i - 1] != '\r')))
      return GL_PKG_PROXY_BAD_REQUEST;

  /* the request line: METHOD SP TARGET SP HTTP/1.x (the head ends in a
   * CRLF: every search below stays within it, none needs a NUL) */
  eol = memmem (p, len, "\r\n", 2);
  sp1 = memchr (p, ' ', (gsize) (eol - p));
  if (sp1 == NULL)
    return GL_PKG_PROXY_BAD_REQUEST;
  target = sp1 + 1;
  sp2 = memchr (target, ' ', (gsize) (eol - target));
  if (sp2 == NULL || sp2 == target || memchr (sp2 + 1, ' ', (gsize) (eol - sp2 - 1)) != NULL
      || ((gsize) (eol - sp2 - 1) != 8)
      || (memcmp (sp2 + 1, "HTTP/1.1", 8) != 0 && memcmp (sp2 + 1, "HTTP/1.0", 8) != 0))
    return GL_PKG_PROXY_BAD_REQUEST;
  for (const char *c = p; c < eol; c++)
    if ((guchar) *c < 0x21 && *c != ' ')
      return GL_PKG_PROXY_BAD_REQUEST;
    else if ((guchar) *c >= 0x7f)
      return GL_PKG_PROXY_BAD_REQUEST;
  tlen = (gsize) (sp2 - target);
  is_connect = (gsize) (sp1 - p) == 7 && memcmp (p, "CONNECT", 7) == 0;
  if (!is_connect && !((gsize) (sp1 - p) == 3 && memcmp (p, "GET", 3) == 0)
      && !((gsize) (sp1 - p) == 4 && memcmp (p, "HEAD", 4) == 0))
    return GL_PKG_PROXY_BAD_METHOD;

  if (is_connect)
    {
      a = target;
      aend = sp2;
      https = TRUE;
    }
  else
    {
      if (tlen < 8 || g_ascii_strncasecmp (target, "http://", 7) != 0)
        return GL_PKG_PROXY_BAD_REQUEST;   /* origin-form, https:// or another scheme */
      a = target + 7;
      aend = a;
      while (aend < sp2 && *aend != '/' && *aend != '?' && *aend != '#')
        aend++;
      if (memchr (target, '#', tlen) != NULL)
        return GL_PKG_PROXY_BAD_REQUEST;
      https = FALSE;
    }
  if (memchr (a, '@', (gsize) (aend - a)) != NULL
      || !parse_authority (a, (gsize) (aend - a), is_connect ? 0 : 80, &request->host, &literal,
                           &request->port))
    {
      gl_pkg_proxy_request_clear (request);
      return GL_PKG_PROXY_BAD_REQUEST;
    }
  request->connect = is_connect;

  out = g_string_new (NULL);
  if (!is_connect)
    {
      gboolean v6 = strchr (request->host, ':') != NULL;
      g_string_append_len (out, p, sp1 - p + 1);
      if (aend == sp2 || *aend != '/')
        g_string_append_c (out, '/');
      g_string_append_len (out, aend, sp2 - aend);
      g_string_append_len (out, sp2, eol - sp2);
      g_string_append (out, "\r\nHost: ");
      g_string_append_printf (out, "%s%s%s", v6 ? "[" : "", request->host, v6 ? "]" : "");
      if (request->port != 80)
        g_string_append_printf (out, ":%u", request->port);
      g_string_append (out, "\r\n");
    }

  if (!copy_headers (eol + 2, end, is_connect ? NULL : out, &n_headers))
    {
      gl_pkg_proxy_request_clear (request);
      return n_headers > MAX_HEADERS ? GL_PKG_PROXY_TOO_LARGE : GL_PKG_PROXY_BAD_REQUEST;
    }
  g_string_append (out, "\r\n");

  if (find_allowed (proxy, https, request->host, request->port) == NULL)
    return GL_PKG_PROXY_FORBIDDEN;
  if (!is_connect)
    request->head = g_string_free (g_steal_pointer (&out), FALSE);
  return GL_PKG_PROXY_OK;
}

/* ------------------------------------------------------------ addresses */

static gboolean
same_address (const struct sockaddr *a, const struct sockaddr_storage *b)
{
  if (a->sa_family != b->ss_family)
    return FALSE;
  if (a->sa_family == AF_INET)
    return ((const struct sockaddr_in *) a)->sin_addr.s_addr == ((const struct sockaddr_in *) b)->sin_addr.s_addr;
  if (a->sa_family == AF_INET6)
    return memcmp (&((const struct sockaddr_in6 *) a)->sin6_addr,
                   &((const struct sockaddr_in6 *) b)->sin6_addr, sizeof (struct in6_addr)) == 0;
  return FALSE;
}

static gboolean
ipv4_ok (guint32 host_order)
{
  guint8 first = (guint8) (host_order >> 24);
  if (first == 0 || first == 127 || first >= 224)   /* this network, loopback, multicast, reserved */
    return FALSE;
  if ((host_order & 0xffff0000u) == 0xa9fe0000u)    /* 169.254/16, link-local (metadata services) */
    return FALSE;
  return TRUE;
}

gboolean
gl_pkg_proxy_address_ok (GlPkgProxy *proxy, const struct sockaddr *addr)
{
  for (guint i = 0; proxy && i < proxy->local_addrs->len; i++)
    if (same_address (addr, &g_array_index (proxy->local_addrs, struct sockaddr_storage, i)))
      return FALSE;
  if (addr->sa_family == AF_INET)
    return ipv4_ok (ntohl (((const struct sockaddr_in *) addr)->sin_addr.s_addr));
  if (addr->sa_family == AF_INET6)
    {
      const struct in6_addr *a = &((const struct sockaddr_in6 *) addr)->sin6_addr;
      if (IN6_IS_ADDR_V4MAPPED (a) || IN6_IS_ADDR_V4COMPAT (a))
        {
          guint32 v4;
          memcpy (&v4, a->s6_addr + 12, 4);
          return ipv4_ok (ntohl (v4));
        }
      return !IN6_IS_ADDR_UNSPECIFIED (a) && !IN6_IS_ADDR_LOOPBACK (a)
             && !IN6_IS_ADDR_LINKLOCAL (a) && !IN6_IS_ADDR_SITELOCAL (a)
             && !IN6_IS_ADDR_MULTICAST (a);
    }
  return FALSE;
}

static void
read_local_addresses (GlPkgProxy *proxy)
{
  struct ifaddrs *ifs = NULL;
  if (getifaddrs (&ifs) != 0)
    return;
  for (struct ifaddrs *i = ifs; i; i = i->ifa_next)
    if (i->ifa_addr && (i->ifa_addr->sa_family == AF_INET || i->ifa_addr->sa_family == AF_INET6))
      {
        struct sockaddr_storage ss = { 0 };
        memcpy (&ss, i->ifa_addr, i->ifa_addr->sa_family == AF_INET ? sizeof (struct sockaddr_in)
                                                                   : sizeof (struct sockaddr_in6));
        g_array_append_val (proxy->local_addrs, ss);
      }
  freeifaddrs (ifs);
}

/* ------------------------------------------------------------ serving */

static void
log_line (GlPkgProxy *proxy, const char *format, ...) G_GNUC_PRINTF (2, 3);

static void
log_line (GlPkgProxy *proxy, const char *format, ...)
{
  char line[512];
  va_list ap;
  int n;
  guint count;

  g_mutex_lock (&proxy->lock);
  count = ++proxy->n_logged;
  g_mutex_unlock (&proxy->lock);
  if (count > MAX_LOG_LINES + 1)
    return;
  if (count == MAX_LOG_LINES + 1)
    n = g_snprintf (line, sizeof line, "glimpse: (further refused downloads are not shown)\n");
  else
    {
      va_start (ap, format);
      n = g_vsnprintf (line, sizeof line - 1, format, ap);
      va_end (ap);
      n = MIN (n, (int) sizeof line - 2);
      line[n++] = '\n';
    }
  /* one write of less than PIPE_BUF: whole, or dropped when full */
  if (write (proxy->log_w, line, (size_t) n) < 0)
    g_debug ("proxy: a log line was dropped: %s", g_strerror (errno));
}

static gboolean
send_all (int fd, const char *data, gsize len)
{
  while (len > 0)
    {
      ssize_t n = send (fd, data, len, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return FALSE;
      data += n;
      len -= (gsize) n;
    }
  return TRUE;
}

static void
answer (int fd, const char *status, const char *text)
{
  g_autofree char *r = g_strdup_printf ("HTTP/1.1 %s\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n"
                                        "Connection: close\r\n\r\n%s", status, strlen (text), text);
  send_all (fd, r, strlen (r));
}

/* Waits for @fd (POLLIN or POLLOUT) until @deadline (monotonic µs; 0:
 * none); FALSE when stopping, on timeout or on error. */
static gboolean
wait_for (GlPkgProxy *proxy, int fd, short events, gint64 deadline)
{
  for (;;)
    {
      struct pollfd p[2] = { { fd, events, 0 }, { proxy->stop[0], POLLIN, 0 } };
      int timeout = -1, r;
      if (deadline > 0)
        {
          gint64 left = deadline - g_get_monotonic_time ();
          if (left <= 0)
            return FALSE;
          timeout = (int) MIN (left / 1000 + 1, G_MAXINT);
        }
      r = poll (p, 2, timeout);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0 || p[1].revents)
        return FALSE;
      return TRUE;
    }
}

/* A complete head at the start of @buf: its length, or 0 */
static gsize
head_length (GByteArray *buf)
{
  for (gsize i = 3; i < buf->len; i++)
    if (memcmp (buf->data + i - 3, "\r\n\r\n", 4) == 0)
      return i + 1;
  return 0;
}

/* Reads the first request head into @buf; FALSE (after answering) on
 * timeout, too large or EOF. */
static gboolean
read_head (Conn *c, GByteArray *buf, gsize *head_len)
{
  gint64 deadline = g_get_monotonic_time () + HEAD_TIMEOUT_S * G_USEC_PER_SEC;
  guint8 chunk[4096];
  while ((*head_len = head_length (buf)) == 0)
    {
      ssize_t n;
      if (buf->len > HEAD_MAX)
        {
          answer (c->client, "431 Request Header Fields Too Large", "glimpse: request head too large\n");
          return FALSE;
        }
      if (!wait_for (c->proxy, c->client, POLLIN, deadline))
        return FALSE;
      n = recv (c->client, chunk, sizeof chunk, 0);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return FALSE;
      g_byte_array_append (buf, chunk, (guint) n);
    }
  return TRUE;
}

static void
refuse (Conn *c, GlPkgProxyVerdict verdict, const GlPkgProxyRequest *r, gboolean answer_it)
{
  switch (verdict)
    {
    case GL_PKG_PROXY_FORBIDDEN:
      {
        gboolean v6 = strchr (r->host, ':') != NULL;
        g_autofree char *what = g_strdup_printf ("%s%s%s:%u", v6 ? "[" : "", r->host, v6 ? "]" : "", r->port);
        g_autofree char *msg = g_strdup_printf ("glimpse: refused a download of %s not among the "
                                                "sandbox's repositories", what);
        log_line (c->proxy, "%s", msg);
        if (answer_it)
          {
            g_autofree char *body = g_strconcat (msg, "\n", NULL);
            answer (c->client, "403 Forbidden", body);
          }
      }
      break;
    case GL_PKG_PROXY_BAD_METHOD:
      log_line (c->proxy, "glimpse: refused a request other than GET, HEAD or CONNECT");
      if (answer_it)
        answer (c->client, "405 Method Not Allowed", "glimpse: only GET, HEAD and CONNECT\n");
      break;
    case GL_PKG_PROXY_TOO_LARGE:
      if (answer_it)
        answer (c->client, "431 Request Header Fields Too Large", "glimpse: request head too large\n");
      break;
    case GL_PKG_PROXY_BAD_REQUEST:
    case GL_PKG_PROXY_OK:
    default:
      log_line (c->proxy, "glimpse: refused a malformed proxy request");
      if (answer_it)
        answer (c->client, "400 Bad Request", "glimpse: malformed proxy request\n");
      break;
    }
}

/* Connects to the origin of @r (resolved here; see address_ok); -1 after
 * answering 502. */
static int
connect_origin (Conn *c, const GlPkgProxyRequest *r)
{
  GlPkgProxy *proxy = c->proxy;
  Origin *o = find_allowed (proxy, r->connect, r->host, r->port);
  struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV };
  struct addrinfo *res = NULL;
  char port[8];
  const char *why = "no address";
  int fd = -1, rc;

  g_snprintf (port, sizeof port, "%u", r->port);
  if (o->literal)
    hints.ai_flags |= AI_NUMERICHOST;
  rc = getaddrinfo (r->host, port, &hints, &res);
  if (rc != 0)
    why = gai_strerror (rc);
  for (struct addrinfo *ai = res; rc == 0 && ai && fd < 0; ai = ai->ai_next)
    {
      int err = 0;
      socklen_t elen = sizeof err;
      if (!o->literal && !gl_pkg_proxy_address_ok (proxy, ai->ai_addr))
        {
          why = "it resolves to a local address (loopback, link-local or this machine's), which "
                "only a repository given by that address may use";
          continue;
        }
      fd = socket (ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      if (fd < 0)
        continue;
      if (connect (fd, ai->ai_addr, ai->ai_addrlen) != 0 && errno != EINPROGRESS)
        err = errno;
      else if (!wait_for (proxy, fd, POLLOUT, g_get_monotonic_time () + CONNECT_TIMEOUT_S * G_USEC_PER_SEC))
        err = ETIMEDOUT;
      else if (getsockopt (fd, SOL_SOCKET, SO_ERROR, &err, &elen) != 0)
        err = errno;
      if (err != 0)
        {
          why = g_strerror (err);
          close (fd);
          fd = -1;
        }
    }
  if (res)
    freeaddrinfo (res);
  if (fd < 0)
    {
      g_autofree char *msg = g_strdup_printf ("glimpse: could not connect to %s:%u: %s", r->host, r->port, why);
      g_autofree char *body = g_strconcat (msg, "\n", NULL);
      /* the reason phrase is what apt prints ("502 Bad Gateway" alone
       * named neither the origin nor why) */
      g_autofree char *status = g_strdup_printf ("502 %s", msg + strlen ("glimpse: "));
      log_line (proxy, "%s", msg);
      answer (c->client, status, body);
      return -1;
    }
  g_unix_set_fd_nonblocking (fd, FALSE, NULL);
  return fd;
}

/* Copies both ways until the origin ends.  @http: the client's bytes are
 * request heads, each checked (see the top) against @r's origin. */
static void
pump (Conn *c, GByteArray *pending, const GlPkgProxyRequest *r, gboolean http)
{
  GlPkgProxy *proxy = c->proxy;
  gboolean client_open = TRUE;
  guint8 *buf = g_malloc (65536);

  for (;;)
    {
      struct pollfd p[3] = { { c->origin, POLLIN, 0 }, { proxy->stop[0], POLLIN, 0 },
                             { client_open ? c->client : -1, POLLIN, 0 } };
      ssize_t n;

      if (client_open && pending->len > 0)
        {
          if (!http)
            {
              if (!send_all (c->origin, (const char *) pending->data, pending->len))
                break;
              g_byte_array_set_size (pending, 0);
            }
          else
            {
              gsize hl;
              while (client_open && (hl = head_length (pending)) > 0)
                {
                  g_auto(GlPkgProxyRequest) next = { 0 };
                  GlPkgProxyVerdict v = gl_pkg_proxy_check (proxy, (const char *) pending->data, hl, &next);
                  if (v == GL_PKG_PROXY_OK && !next.connect && next.port == r->port
                      && g_str_equal (next.host, r->host))
                    {
                      if (!send_all (c->origin, next.head, strlen (next.head)))
                        {
                          g_free (buf);
                          return;
                        }
                      g_byte_array_remove_range (pending, 0, (guint) hl);
                      continue;
                    }
                  /* another origin: the answers so far, then the end */
                  if (v != GL_PKG_PROXY_OK)
                    refuse (c, v, &next, FALSE);
                  client_open = FALSE;
                }
              if (client_open && pending->len > HEAD_MAX)
                client_open = FALSE;
              if (!client_open)
                shutdown (c->origin, SHUT_WR);
            }
        }
      if (poll (p, 3, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          break;
        }
      if (p[1].revents)
        break;
      if (p[0].revents)
        {
          n = recv (c->origin, buf, 65536, 0);
          if (n < 0 && errno == EINTR)
            continue;
          if (n <= 0 || !send_all (c->client, (const char *) buf, (gsize) n))
            break;
        }
      if (client_open && p[2].revents)
        {
          n = recv (c->client, buf, 65536, 0);
          if (n < 0 && errno == EINTR)
            continue;
          if (n <= 0)
            {
              client_open = FALSE;
              shutdown (c->origin, SHUT_WR);
            }
          else
            g_byte_array_append (pending, buf, (guint) n);
        }
    }
  g_free (buf);
}

static void
conn_end (Conn *c)
{
  GlPkgProxy *proxy = c->proxy;
  g_mutex_lock (&proxy->lock);
  close (c->client);
  if (c->origin >= 0)
    close (c->origin);
  proxy->n_connections--;
  g_ptr_array_remove_fast (proxy->connections, c);
  g_cond_broadcast (&proxy->idle);
  g_mutex_unlock (&proxy->lock);
  g_free (c);
}

static gpointer
serve (gpointer data)
{
  Conn *c = data;
  g_autoptr(GByteArray) buf = g_byte_array_new ();
  g_auto(GlPkgProxyRequest) r = { 0 };
  GlPkgProxyVerdict v;
  gsize hl;

  if (!read_head (c, buf, &hl))
    {
      conn_end (c);
      return NULL;
    }
  v = gl_pkg_proxy_check (c->proxy, (const char *) buf->data, hl, &r);
  if (v != GL_PKG_PROXY_OK)
    {
      refuse (c, v, &r, TRUE);
      conn_end (c);
      return NULL;
    }
  {
    int fd = connect_origin (c, &r);
    g_mutex_lock (&c->proxy->lock);
    if (fd >= 0 && c->proxy->offline)
      {
        /* (connected as the cut came) */
        close (fd);
        fd = -1;
      }
    c->origin = fd;
    g_mutex_unlock (&c->proxy->lock);
  }
  if (c->origin >= 0)
    {
      g_byte_array_remove_range (buf, 0, (guint) hl);
      if (r.connect)
        {
          static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
          if (send_all (c->client, ok, sizeof ok - 1))
            pump (c, buf, &r, FALSE);
        }
      else if (send_all (c->origin, r.head, strlen (r.head)))
        pump (c, buf, &r, TRUE);
    }
  conn_end (c);
  return NULL;
}

/* One message on the relay's channel: its byte in @byte; the socket it
 * passed (a TCP stream) or -1 (none, or not one); -2 at its end (or on an
 * error); -3 when @flags has MSG_DONTWAIT and nothing is queued. */
static int
receive_message (GlPkgProxy *proxy, char *byte, int flags)
{
  struct iovec iov = { byte, 1 };
  union { struct cmsghdr h; char buf[CMSG_SPACE (4 * sizeof (int))]; } u;
  struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                      .msg_controllen = sizeof u.buf };
  int fd = -1;
  ssize_t n;

  *byte = 0;
  do
    n = recvmsg (proxy->our_end, &m, MSG_CMSG_CLOEXEC | flags);
  while (n < 0 && errno == EINTR);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && (flags & MSG_DONTWAIT))
    return -3;
  if (n <= 0)
    return -2;
  for (struct cmsghdr *h = CMSG_FIRSTHDR (&m); h; h = CMSG_NXTHDR (&m, h))
    if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS)
      {
        gsize count = (h->cmsg_len - CMSG_LEN (0)) / sizeof (int);
        for (gsize i = 0; i < count; i++)
          {
            int got;
            memcpy (&got, CMSG_DATA (h) + i * sizeof (int), sizeof (int));
            if (fd < 0)
              fd = got;
            else
              close (got);
          }
      }
  if (fd >= 0)
    {
      struct stat st;
      int type = 0;
      socklen_t len = sizeof type;
      if (fstat (fd, &st) != 0 || !S_ISSOCK (st.st_mode)
          || getsockopt (fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM)
        {
          close (fd);
          fd = -1;
        }
      else
        g_unix_set_fd_nonblocking (fd, FALSE, NULL);
    }
  return fd;
}

/* "offline" (a message 'o' from glimpse-pkgns's PID 1, which kills the
 * relay first: see cut_network in glimpse-pkgns.c): every connection is
 * cut -- the polls of every thread end (the stop pipe), each socket is
 * shut down both ways, and its descriptor is made /dev/null's at once, so
 * that neither the socket in the operation's network namespace nor the
 * one upstream stays open here, whatever its thread is doing (the thread
 * closes the descriptor when it ends, as before; a thread still resolving
 * a name holds no socket, and keeps none it connects: its wait for the
 * connection ends on the stop pipe, and serve() closes one made as the
 * cut came).  Later connections are closed as they come.  Then, only
 * then, the answer 'k'; none if a socket could not be let go of. */
static gboolean
go_offline (GlPkgProxy *proxy)
{
  int null = open ("/dev/null", O_RDWR | O_CLOEXEC);
  gint64 until = g_get_monotonic_time () + G_USEC_PER_SEC;
  gboolean ok = null >= 0;

  g_mutex_lock (&proxy->lock);
  if (!proxy->offline)
    {
      proxy->offline = TRUE;
      if (write (proxy->stop[1], "x", 1) != 1)
        g_warning ("Cannot stop the package operation's proxy: %s", g_strerror (errno));
    }
  for (guint i = 0; i < proxy->connections->len; i++)
    {
      Conn *c = proxy->connections->pdata[i];
      int *fds[] = { &c->client, &c->origin };
      for (gsize k = 0; k < G_N_ELEMENTS (fds); k++)
        if (*fds[k] >= 0)
          {
            shutdown (*fds[k], SHUT_RDWR);
            /* (never a bare close: the thread may still use the number) */
            if (null < 0 || dup3 (null, *fds[k], O_CLOEXEC) < 0)
              ok = FALSE;
          }
    }
  /* (the threads end at once: a moment for them, not a condition) */
  while (proxy->n_connections > 0)
    if (!g_cond_wait_until (&proxy->idle, &proxy->lock, until))
      break;
  g_mutex_unlock (&proxy->lock);
  if (null >= 0)
    close (null);
  return ok;
}

#define RECEIVE_BATCH 64

static gpointer
accept_loop (gpointer data)
{
  GlPkgProxy *proxy = data;
  gboolean end = FALSE;

  while (!end)
    {
      int fds[RECEIVE_BATCH];
      guint n = 0;
      gboolean cut = FALSE;

      if (!proxy->offline)
        {
          if (!wait_for (proxy, proxy->our_end, POLLIN, 0))
            break;
        }
      else
        {
          /* (the stop pipe is readable since the cut: only the channel;
           * gl_pkg_proxy_free shuts it down to end this) */
          struct pollfd p = { proxy->our_end, POLLIN, 0 };
          if (poll (&p, 1, -1) < 0 && errno != EINTR)
            break;
        }
      /* everything queued, at once: connections queued before an
       * "offline" are closed with it, never served */
      while (n < RECEIVE_BATCH)
        {
          char byte;
          int fd = receive_message (proxy, &byte, n > 0 || cut ? MSG_DONTWAIT : 0);
          if (fd == -3)
            break;
          if (fd == -2)
            {
              end = TRUE;
              break;
            }
          if (byte == 'o')
            cut = TRUE;
          if (fd >= 0)
            fds[n++] = fd;
        }
      if (cut || proxy->offline)
        {
          for (guint i = 0; i < n; i++)
            close (fds[i]);
          if (cut)
            {
              /* (not confirmed if a socket could not be let go of:
               * glimpse-pkgns then stops the operation) */
              if (go_offline (proxy) && send (proxy->our_end, "k", 1, MSG_NOSIGNAL | MSG_DONTWAIT) != 1)
                g_debug ("cannot confirm the package operation's cut: %s", g_strerror (errno));
            }
          continue;
        }
      for (guint i = 0; i < n; i++)
        {
          Conn *c;
          GThread *t;
          int fd = fds[i];

          g_mutex_lock (&proxy->lock);
          if (proxy->n_connections >= MAX_CONNECTIONS)
            {
              g_mutex_unlock (&proxy->lock);
              answer (fd, "503 Service Unavailable", "glimpse: too many connections\n");
              close (fd);
              continue;
            }
          proxy->n_connections++;
          c = g_new0 (Conn, 1);
          c->proxy = proxy;
          c->client = fd;
          c->origin = -1;
          g_ptr_array_add (proxy->connections, c);
          g_mutex_unlock (&proxy->lock);
          t = g_thread_try_new ("glimpse-proxy", serve, c, NULL);
          if (t == NULL)
            conn_end (c);
          else
            g_thread_unref (t);
        }
    }
  return NULL;
}

gboolean
gl_pkg_proxy_start (GlPkgProxy *proxy, int *relay_fd, int *log_fd, GError **error)
{
  int pair[2], logp[2];

  g_return_val_if_fail (proxy->acceptor == NULL, FALSE);
  read_local_addresses (proxy);
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
    {
      int errsv = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv),
                   "Cannot create the package operation's download channel: %s", g_strerror (errsv));
      return FALSE;
    }
  if (!g_unix_open_pipe (proxy->stop, FD_CLOEXEC, error) || !g_unix_open_pipe (logp, FD_CLOEXEC, error))
    {
      close (pair[0]);
      close (pair[1]);
      return FALSE;
    }
  g_unix_set_fd_nonblocking (logp[1], TRUE, NULL);
  proxy->our_end = pair[0];
  proxy->log_w = logp[1];
  proxy->acceptor = g_thread_new ("glimpse-proxy-accept", accept_loop, proxy);
  *relay_fd = pair[1];
  *log_fd = logp[0];
  return TRUE;
}

void
gl_pkg_proxy_free (GlPkgProxy *proxy)
{
  if (proxy == NULL)
    return;
  if (proxy->acceptor != NULL)
    {
      if (write (proxy->stop[1], "x", 1) != 1)
        g_warning ("Cannot stop the package operation's proxy: %s", g_strerror (errno));
      /* (after a cut, the acceptor watches the channel alone) */
      shutdown (proxy->our_end, SHUT_RDWR);
      g_thread_join (proxy->acceptor);
      g_mutex_lock (&proxy->lock);
      /* (a thread may be blocked sending to a client that does not read) */
      for (guint i = 0; i < proxy->connections->len; i++)
        {
          Conn *c = proxy->connections->pdata[i];
          shutdown (c->client, SHUT_RDWR);
          if (c->origin >= 0)
            shutdown (c->origin, SHUT_RDWR);
        }
      while (proxy->n_connections > 0)
        g_cond_wait (&proxy->idle, &proxy->lock);
      g_mutex_unlock (&proxy->lock);
      close (proxy->our_end);
      close (proxy->stop[0]);
      close (proxy->stop[1]);
      close (proxy->log_w);
    }
  g_ptr_array_unref (proxy->allowed);
  g_ptr_array_unref (proxy->connections);
  g_array_unref (proxy->local_addrs);
  g_mutex_clear (&proxy->lock);
  g_cond_clear (&proxy->idle);
  g_free (proxy);
}
