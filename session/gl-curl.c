/* gl-curl.c: libcurl, loaded by the first transfer (see gl-curl.h)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <dlfcn.h>
#include <stdarg.h>

#include "gl-curl.h"

/* libcurl's ABI since 7.16 (2006) */
#define LIBCURL_SONAME "libcurl.so.4"

typedef struct {
  CURLcode (*global_init) (long flags);
  CURL *(*easy_init) (void);
  CURLcode (*easy_setopt) (CURL *curl, CURLoption option, ...);
  CURLcode (*easy_getinfo) (CURL *curl, CURLINFO info, ...);
  CURLcode (*easy_perform) (CURL *curl);
  void (*easy_cleanup) (CURL *curl);
  const char *(*easy_strerror) (CURLcode code);
  struct curl_slist *(*slist_append) (struct curl_slist *list, const char *string);
  void (*slist_free_all) (struct curl_slist *list);
  time_t (*getdate) (const char *date, const time_t *unused);
} Curl;

/* libcurl's functions, or NULL when it cannot be loaded or initialised */
static const Curl *
curl_lib (void)
{
  static gsize done = 0;
  static Curl lib;
  static gboolean loaded;

  if (g_once_init_enter (&done))
    {
      /* (never closed: libcurl keeps global state) */
      void *h = dlopen (LIBCURL_SONAME, RTLD_NOW | RTLD_LOCAL);
      struct { void **fn; const char *name; } syms[] = {
        { (void **) &lib.global_init, "curl_global_init" },
        { (void **) &lib.easy_init, "curl_easy_init" },
        { (void **) &lib.easy_setopt, "curl_easy_setopt" },
        { (void **) &lib.easy_getinfo, "curl_easy_getinfo" },
        { (void **) &lib.easy_perform, "curl_easy_perform" },
        { (void **) &lib.easy_cleanup, "curl_easy_cleanup" },
        { (void **) &lib.easy_strerror, "curl_easy_strerror" },
        { (void **) &lib.slist_append, "curl_slist_append" },
        { (void **) &lib.slist_free_all, "curl_slist_free_all" },
        { (void **) &lib.getdate, "curl_getdate" },
      };

      loaded = h != NULL;
      if (h == NULL)
        g_debug ("Cannot load %s: %s", LIBCURL_SONAME, dlerror ());
      for (gsize i = 0; loaded && i < G_N_ELEMENTS (syms); i++)
        if ((*syms[i].fn = dlsym (h, syms[i].name)) == NULL)
          {
            g_debug ("%s has no %s", LIBCURL_SONAME, syms[i].name);
            loaded = FALSE;
          }
      if (loaded && lib.global_init (CURL_GLOBAL_DEFAULT) != CURLE_OK)
        {
          g_debug ("curl_global_init failed");
          loaded = FALSE;
        }
      g_once_init_leave (&done, 1);
    }
  return loaded ? &lib : NULL;
}

CURL *
gl_curl_easy_init (void)
{
  const Curl *lib = curl_lib ();

  return lib ? lib->easy_init () : NULL;
}

CURLcode
gl_curl_easy_setopt (CURL *curl, CURLoption option, ...)
{
  const Curl *lib = curl_lib ();
  CURLcode res;
  va_list ap;

  if (lib == NULL)
    return CURLE_FAILED_INIT;
  va_start (ap, option);
  /* (the type is in the option's number, as libcurl reads it) */
  if (option < CURLOPTTYPE_OBJECTPOINT)
    res = lib->easy_setopt (curl, option, va_arg (ap, long));
  else if (option >= CURLOPTTYPE_OFF_T && option < CURLOPTTYPE_BLOB)
    res = lib->easy_setopt (curl, option, va_arg (ap, curl_off_t));
  else
    res = lib->easy_setopt (curl, option, va_arg (ap, void *));
  va_end (ap);
  return res;
}

CURLcode
gl_curl_easy_getinfo (CURL *curl, CURLINFO info, ...)
{
  const Curl *lib = curl_lib ();
  CURLcode res;
  va_list ap;

  if (lib == NULL)
    return CURLE_FAILED_INIT;
  va_start (ap, info);
  res = lib->easy_getinfo (curl, info, va_arg (ap, void *));
  va_end (ap);
  return res;
}

CURLcode
gl_curl_easy_perform (CURL *curl)
{
  const Curl *lib = curl_lib ();

  return lib ? lib->easy_perform (curl) : CURLE_FAILED_INIT;
}

void
gl_curl_easy_cleanup (CURL *curl)
{
  const Curl *lib = curl_lib ();

  if (lib != NULL && curl != NULL)
    lib->easy_cleanup (curl);
}

const char *
gl_curl_easy_strerror (CURLcode code)
{
  const Curl *lib = curl_lib ();

  return lib ? lib->easy_strerror (code) : "libcurl (" LIBCURL_SONAME ") cannot be loaded";
}

struct curl_slist *
gl_curl_slist_append (struct curl_slist *list, const char *string)
{
  const Curl *lib = curl_lib ();

  return lib ? lib->slist_append (list, string) : NULL;
}

void
gl_curl_slist_free_all (struct curl_slist *list)
{
  const Curl *lib = curl_lib ();

  if (lib != NULL)
    lib->slist_free_all (list);
}

time_t
gl_curl_getdate (const char *date)
{
  const Curl *lib = curl_lib ();

  return lib ? lib->getdate (date, NULL) : -1;
}
