/* gl-curl.h: libcurl, loaded by the first transfer rather than at start-up
 *
 * No program of glimpse's links libcurl: with its TLS, Kerberos and LDAP
 * libraries it cost `glimpse` some 17 ms at every start (a package
 * operation, which downloads nothing in glimpse's own process, paid it
 * too).  These are libcurl's functions of the same names, gl_ in front,
 * resolved from libcurl's shared library at the first call; when it cannot
 * be loaded, gl_curl_easy_init returns NULL (callers already report that
 * libcurl could not be initialised) and the others fail as libcurl's would.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <curl/curl.h>
#include <glib.h>
#include <time.h>

G_BEGIN_DECLS

/* (curl_global_init, once, before the first handle) */
CURL               *gl_curl_easy_init      (void);
/* The option's one argument, of the type the option's number says
 * (CURLOPTTYPE_*), as for curl_easy_setopt; getinfo's is a pointer */
CURLcode            gl_curl_easy_setopt    (CURL *curl, CURLoption option, ...);
CURLcode            gl_curl_easy_getinfo   (CURL *curl, CURLINFO info, ...);
CURLcode            gl_curl_easy_perform   (CURL *curl);
void                gl_curl_easy_cleanup   (CURL *curl);
const char         *gl_curl_easy_strerror  (CURLcode code);
struct curl_slist  *gl_curl_slist_append   (struct curl_slist *list, const char *string);
void                gl_curl_slist_free_all (struct curl_slist *list);
time_t              gl_curl_getdate        (const char *date);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (CURL, gl_curl_easy_cleanup)

G_END_DECLS
