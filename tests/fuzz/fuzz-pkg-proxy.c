/* The package operations' proxy: a request head as the sandbox's package
 * manager sends it (gl_pkg_proxy_check), in a buffer of exactly its size
 * (no NUL after it, as the proxy reads it off the socket).
 * Properties: a request is allowed only to an allowed origin, with a host
 * of non-empty labels and a port; an allowed GET/HEAD goes on as one head
 * of plain characters, ending in its blank line, with exactly one Host
 * header, which is the proxy's; a CONNECT carries no head; a refused
 * request carries nothing.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "gl-pkg-proxy.h"
#include "fuzz.h"

static GlPkgProxy *
proxy (void)
{
  static GlPkgProxy *p;

  if (p == NULL)
    {
      p = gl_pkg_proxy_new ();
      gl_pkg_proxy_allow (p, "http://repo.example.org/debian");
      gl_pkg_proxy_allow (p, "https://secure.example.org/");
      gl_pkg_proxy_allow (p, "http://127.0.0.1:8080/");
      gl_pkg_proxy_allow (p, "http://[::1]:8080/");
    }
  return p;
}

static guint
count_host_headers (const char *head)
{
  guint n = 0;

  for (const char *l = strstr (head, "\r\n"); l != NULL && l[2] != '\0'; l = strstr (l + 2, "\r\n"))
    if (g_ascii_strncasecmp (l + 2, "host:", 5) == 0)
      n++;
  return n;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_auto(GlPkgProxyRequest) r = { 0 };
  g_autofree char *exact = g_memdup2 (data, size);
  GlPkgProxyVerdict v = gl_pkg_proxy_check (proxy (), exact, size, &r);

  FUZZ_ASSERT (v >= GL_PKG_PROXY_OK && v <= GL_PKG_PROXY_TOO_LARGE);
  if (v != GL_PKG_PROXY_OK && v != GL_PKG_PROXY_FORBIDDEN)
    {
      FUZZ_ASSERT (r.host == NULL && r.head == NULL);
      return 0;
    }
  FUZZ_ASSERT (r.host != NULL && r.host[0] != '\0' && r.port != 0);
  FUZZ_ASSERT (r.host[0] != '.' && strstr (r.host, "..") == NULL);
  if (v == GL_PKG_PROXY_FORBIDDEN)
    {
      FUZZ_ASSERT (r.head == NULL);
      return 0;
    }
  FUZZ_ASSERT (g_str_equal (r.host, "repo.example.org") || g_str_equal (r.host, "secure.example.org")
               || g_str_equal (r.host, "127.0.0.1") || g_str_equal (r.host, "::1"));
  if (r.connect)
    {
      FUZZ_ASSERT (r.head == NULL && g_str_equal (r.host, "secure.example.org") && r.port == 443);
      return 0;
    }
  FUZZ_ASSERT (r.head != NULL && g_str_has_suffix (r.head, "\r\n\r\n"));
  FUZZ_ASSERT (g_str_has_prefix (r.head, "GET /") || g_str_has_prefix (r.head, "HEAD /"));
  FUZZ_ASSERT (count_host_headers (r.head) == 1);
  for (const char *c = r.head; *c != '\0'; c++)
    FUZZ_ASSERT ((guchar) *c >= 0x20 ? (guchar) *c != 0x7f : (*c == '\r' || *c == '\n' || *c == '\t'));
  return 0;
}
