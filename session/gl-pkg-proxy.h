/* gl-pkg-proxy.h: the only way a package operation downloads
 *
 * A package operation's command (the sandbox's own package manager, its
 * configuration, hooks and methods: all of it the sandbox's, so possibly
 * replaced by an earlier, hostile package) runs in a network namespace of
 * its own with nothing but a loopback interface.  glimpse-pkgns relays
 * every TCP connection made there to 127.0.0.1:GL_PKG_PROXY_PORT to this
 * proxy, which runs in glimpse, outside, as trusted code, by passing the
 * accepted socket over a SOCK_SEQPACKET socket (SCM_RIGHTS).  The same
 * channel carries glimpse-pkgns's cut (--net-until-cut): a message "o"
 * without a socket, after which the proxy closes every connection it holds
 * (the operation's socket and the one upstream), closes any later one
 * unserved, and answers "k" on the channel.
 *
 * The proxy serves only GET and HEAD of http:// URLs (absolute-form) and
 * CONNECT (for https), and only to the (scheme, host, port) of the
 * sandbox's repositories as glimpse itself knows them (gl_pkg_proxy_allow).
 * It resolves names itself; a name that resolves to a loopback, link-local,
 * unspecified or multicast address, or to an address of this machine, is
 * refused (a repository's owner controls its DNS): only a repository
 * configured by a literal address reaches that address, and only at its
 * port.  Everything else gets 403 (or 400/405/431) and a line through the
 * log descriptor: "glimpse: refused a download of HOST:PORT not among the
 * sandbox's repositories".
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>
#include <sys/socket.h>

G_BEGIN_DECLS

/* The port the relay listens on inside the operation's own network
 * namespace (which holds nothing else). */
#define GL_PKG_PROXY_PORT 3128

typedef struct _GlPkgProxy GlPkgProxy;

GlPkgProxy *gl_pkg_proxy_new (void);
/* Allows the origin of @uri (http:// or https://, host and port; the
 * path does not matter).  FALSE (and nothing allowed) for anything else. */
gboolean    gl_pkg_proxy_allow (GlPkgProxy *proxy, const char *uri);
/* The allowed origins, "http://HOST:PORT" each, sorted (for messages and tests) */
GStrv       gl_pkg_proxy_list (GlPkgProxy *proxy);
/* Starts serving.  @relay_fd: the end glimpse-pkgns gets (--proxy-fd),
 * which the caller closes once the child has it; @log_fd: the read end of
 * the refusal lines (GlSpawnOptions.extra_lines_fd), which the caller
 * closes after the run. */
gboolean    gl_pkg_proxy_start (GlPkgProxy *proxy, int *relay_fd, int *log_fd, GError **error);
/* Stops serving (every connection cut), then frees. */
void        gl_pkg_proxy_free (GlPkgProxy *proxy);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GlPkgProxy, gl_pkg_proxy_free)

/* ---- the parts, for tests ---- */

typedef enum {
  GL_PKG_PROXY_OK,
  GL_PKG_PROXY_BAD_REQUEST,    /* 400 */
  GL_PKG_PROXY_FORBIDDEN,      /* 403: not one of the repositories */
  GL_PKG_PROXY_BAD_METHOD,     /* 405 */
  GL_PKG_PROXY_TOO_LARGE,      /* 431 */
} GlPkgProxyVerdict;

typedef struct {
  gboolean connect;   /* CONNECT: a tunnel to host:port */
  char *host;         /* lower-case; an IPv6 literal without brackets */
  guint16 port;
  char *head;         /* GET/HEAD: the request as it goes to the origin */
} GlPkgProxyRequest;

void gl_pkg_proxy_request_clear (GlPkgProxyRequest *request);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (GlPkgProxyRequest, gl_pkg_proxy_request_clear)

/* Parses one request head (@len bytes up to and including the blank line)
 * and decides on it. */
GlPkgProxyVerdict gl_pkg_proxy_check (GlPkgProxy *proxy, const char *head, gsize len,
                                      GlPkgProxyRequest *request);
/* Whether @proxy may connect to @addr for an origin given by name (not by
 * a literal address): not loopback, link-local, unspecified, multicast or
 * one of this machine's own addresses. */
gboolean gl_pkg_proxy_address_ok (GlPkgProxy *proxy, const struct sockaddr *addr);

G_END_DECLS
