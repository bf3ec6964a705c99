/* gl-apt-release.c: a repository's signed InRelease
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-apt-release.h"
#include "gl-apt-release-private.h"
#include "gl-spawn.h"

#include <errno.h>
#include <string.h>

#include "gl-curl.h"
#include "gl-gpgv.h"

G_DEFINE_QUARK (gl-apt-error-quark, gl_apt_error)

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "0"
#endif

static long connect_timeout = 30;   /* seconds */
static long low_speed_time = 60;    /* seconds under 100 B/s abort */

void
gl_apt_http_set_timeouts_for_test (long connect_s, long stall_s)
{
  connect_timeout = connect_s;
  low_speed_time = stall_s;
}

static GlAptFetchFunc fetch_func;
static gpointer fetch_func_data;

void
gl_apt_http_set_fetch_func (GlAptFetchFunc func, gpointer user_data)
{
  fetch_func = func;
  fetch_func_data = user_data;
}

void
gl_apt_validators_clear (GlAptValidators *v)
{
  g_clear_pointer (&v->etag, g_free);
  g_clear_pointer (&v->last_modified, g_free);
  v->not_modified = FALSE;
}

typedef struct {
  GlAptSinkFunc  sink;
  gpointer       user_data;
  guint64        max_size;
  guint64        received;
  long           status;      /* of the last status line */
  char          *etag;
  char          *last_modified;
  GCancellable  *cancellable;
  GError        *error;
} Transfer;

static size_t
header_cb (char *buffer, size_t size, size_t nitems, void *data)
{
  Transfer *t = data;
  gsize len = size * nitems;
  g_autofree char *line = g_strndup (buffer, len);

  g_strchomp (line);
  if (g_str_has_prefix (line, "HTTP/"))
    {
      const char *sp = strchr (line, ' ');

      t->status = sp ? strtol (sp + 1, NULL, 10) : 0;
      /* a new response (after a redirect): forget the previous headers */
      g_clear_pointer (&t->etag, g_free);
      g_clear_pointer (&t->last_modified, g_free);
    }
  else if (g_ascii_strncasecmp (line, "ETag:", 5) == 0)
    {
      g_free (t->etag);
      t->etag = g_strdup (g_strstrip (line + 5));
    }
  else if (g_ascii_strncasecmp (line, "Last-Modified:", 14) == 0)
    {
      g_free (t->last_modified);
      t->last_modified = g_strdup (g_strstrip (line + 14));
    }
  return len;
}

static size_t
write_cb (char *ptr, size_t size, size_t nmemb, void *data)
{
  Transfer *t = data;
  gsize len = size * nmemb;

  if (t->status >= 300)
    return len;   /* an error body: read and dropped */
  if (t->error != NULL || g_cancellable_set_error_if_cancelled (t->cancellable, &t->error))
    return 0;
  t->received += len;
  if (t->max_size > 0 && t->received > t->max_size)
    {
      g_set_error (&t->error, GL_APT_ERROR, GL_APT_ERROR_CHECKSUM,
                   "larger than the %" G_GUINT64_FORMAT " bytes expected", t->max_size);
      return 0;
    }
  if (!t->sink ((const guint8 *) ptr, len, t->user_data, &t->error))
    return 0;
  return len;
}

static int
xferinfo_cb (void *data, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
  Transfer *t = data;

  return g_cancellable_is_cancelled (t->cancellable) ? 1 : 0;
}

gboolean
gl_apt_http_get (const char       *url,
                 GlAptValidators  *validators,
                 guint64           max_size,
                 GlAptSinkFunc     sink,
                 gpointer          user_data,
                 GCancellable     *cancellable,
                 GError          **error)
{
  g_autoptr(CURL) curl = NULL;
  struct curl_slist *headers = NULL;
  char errbuf[CURL_ERROR_SIZE] = "";
  Transfer t = { sink, user_data, max_size, 0, 0, NULL, NULL, cancellable, NULL };
  CURLcode res;
  long status = 0;

  curl = gl_curl_easy_init ();
  if (curl == NULL)
    {
      g_set_error (error, GL_APT_ERROR, GL_APT_ERROR_NETWORK, "Cannot initialise libcurl");
      return FALSE;
    }
  gl_curl_easy_setopt (curl, CURLOPT_URL, url);
  gl_curl_easy_setopt (curl, CURLOPT_NOSIGNAL, 1L);
  gl_curl_easy_setopt (curl, CURLOPT_ERRORBUFFER, errbuf);
  gl_curl_easy_setopt (curl, CURLOPT_FOLLOWLOCATION, 1L);
  gl_curl_easy_setopt (curl, CURLOPT_MAXREDIRS, 10L);
  gl_curl_easy_setopt (curl, CURLOPT_PROTOCOLS_STR, "http,https,file");
  gl_curl_easy_setopt (curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  gl_curl_easy_setopt (curl, CURLOPT_CONNECTTIMEOUT, connect_timeout);
  gl_curl_easy_setopt (curl, CURLOPT_LOW_SPEED_LIMIT, 100L);
  gl_curl_easy_setopt (curl, CURLOPT_LOW_SPEED_TIME, low_speed_time);
  gl_curl_easy_setopt (curl, CURLOPT_USERAGENT, "glimpse/" PACKAGE_VERSION);
  gl_curl_easy_setopt (curl, CURLOPT_HEADERFUNCTION, header_cb);
  gl_curl_easy_setopt (curl, CURLOPT_HEADERDATA, &t);
  gl_curl_easy_setopt (curl, CURLOPT_WRITEFUNCTION, write_cb);
  gl_curl_easy_setopt (curl, CURLOPT_WRITEDATA, &t);
  gl_curl_easy_setopt (curl, CURLOPT_NOPROGRESS, 0L);
  gl_curl_easy_setopt (curl, CURLOPT_XFERINFOFUNCTION, xferinfo_cb);
  gl_curl_easy_setopt (curl, CURLOPT_XFERINFODATA, &t);
  if (validators != NULL)
    {
      validators->not_modified = FALSE;
      if (validators->etag != NULL)
        {
          g_autofree char *h = g_strdup_printf ("If-None-Match: %s", validators->etag);
          headers = gl_curl_slist_append (headers, h);
        }
      if (validators->last_modified != NULL)
        {
          g_autofree char *h = g_strdup_printf ("If-Modified-Since: %s", validators->last_modified);
          headers = gl_curl_slist_append (headers, h);
        }
      gl_curl_easy_setopt (curl, CURLOPT_HTTPHEADER, headers);
    }

  if (fetch_func != NULL)
    fetch_func (url, FALSE, fetch_func_data);
  res = gl_curl_easy_perform (curl);
  if (fetch_func != NULL)
    fetch_func (url, TRUE, fetch_func_data);
  gl_curl_slist_free_all (headers);
  gl_curl_easy_getinfo (curl, CURLINFO_RESPONSE_CODE, &status);

  if (t.error != NULL)
    {
      g_propagate_prefixed_error (error, g_steal_pointer (&t.error), "%s: ", url);
      g_free (t.etag);
      g_free (t.last_modified);
      return FALSE;
    }
  if (res != CURLE_OK)
    {
      g_set_error (error, GL_APT_ERROR, GL_APT_ERROR_NETWORK, "Cannot fetch %s: %s", url,
                   errbuf[0] ? errbuf : gl_curl_easy_strerror (res));
      g_free (t.etag);
      g_free (t.last_modified);
      return FALSE;
    }
  if (status >= 400)
    {
      g_set_error (error, GL_APT_ERROR, GL_APT_ERROR_HTTP, "Cannot fetch %s: the server answered %ld",
                   url, status);
      g_free (t.etag);
      g_free (t.last_modified);
      return FALSE;
    }
  if (validators != NULL)
    {
      if (status == 304)
        validators->not_modified = TRUE;
      else
        {
          g_free (validators->etag);
          validators->etag = g_steal_pointer (&t.etag);
          g_free (validators->last_modified);
          validators->last_modified = g_steal_pointer (&t.last_modified);
        }
    }
  else if (status == 304)
    {
      g_set_error (error, GL_APT_ERROR, GL_APT_ERROR_HTTP,
                   "Cannot fetch %s: the server answered 304 to an unconditional request", url);
      g_free (t.etag);
      g_free (t.last_modified);
      return FALSE;
    }
  g_free (t.etag);
  g_free (t.last_modified);
  return TRUE;
}

/* --- Release --- */

static void
release_file_free (GlAptReleaseFile *f)
{
  g_free (f->path);
  g_free (f->sha256);
  g_free (f);
}

void
gl_apt_release_free (GlAptRelease *r)
{
  if (r == NULL)
    return;
  g_free (r->origin);
  g_free (r->label);
  g_free (r->suite);
  g_free (r->codename);
  g_free (r->version);
  g_strfreev (r->architectures);
  g_strfreev (r->components);
  g_clear_pointer (&r->files, g_hash_table_unref);
  g_free (r);
}

static gint64
parse_date (const char *value)
{
  time_t t = gl_curl_getdate (value);

  return t < 0 ? -1 : (gint64) t;
}

static gboolean
parse_sha256_line (GlAptRelease *r, const char *line, const char *what, GError **error)
{
  g_auto(GStrv) parts = g_strsplit_set (line, " \t", -1);
  const char *f[3];
  guint n = 0;
  GlAptReleaseFile *file;
  char *end = NULL;

  for (guint i = 0; parts[i] != NULL; i++)
    if (parts[i][0] != '\0')
      {
        if (n >= 3)
          n = 4;   /* too many fields (found by tests/fuzz/fuzz-apt: f[] overflowed) */
        else
          f[n++] = parts[i];
      }
  if (n != 3 || strlen (f[0]) != 64 || strspn (f[0], "0123456789abcdefABCDEF") != 64)
    {
      g_set_error (error, GL_APT_ERROR, GL_APT_ERROR_MALFORMED,
                   "%s: malformed SHA256 line \"%s\"", what, line);
      return FALSE;
    }
  file = g_new0 (GlAptReleaseFile, 1);
  file->sha256 = g_ascii_strdown (f[0], -1);
  file->size = g_ascii_strtoull (f[1], &end, 10);
  file->path = g_strdup (f[2]);
  if (end == f[1] || *end != '\0' || strstr (file->path, "..") != NULL || file->path[0] == '/')
    {
      g_set_error (error, GL_APT_ERROR, GL_APT_ERROR_MALFORMED,
                   "%s: malformed SHA256 line \"%s\"", what, line);
      release_file_free (file);
      return FALSE;
    }
  g_hash_table_replace (r->files, file->path, file);
  return TRUE;
}

static gboolean
set_field (GlAptRelease *r, const char *name, const char *value, const char *what, GError **error)
{
  if (g_ascii_strcasecmp (name, "Origin") == 0)
    g_free (r->origin), r->origin = g_strdup (value);
  else if (g_ascii_strcasecmp (name, "Label") == 0)
    g_free (r->label), r->label = g_strdup (value);
  else if (g_ascii_strcasecmp (name, "Suite") == 0)
    g_free (r->suite), r->suite = g_strdup (value);
  else if (g_ascii_strcasecmp (name, "Codename") == 0)
    g_free (r->codename), r->codename = g_strdup (value);
  else if (g_ascii_strcasecmp (name, "Version") == 0)
    g_free (r->version), r->version = g_strdup (value);
  else if (g_ascii_strcasecmp (name, "NotAutomatic") == 0)
    r->not_automatic = g_ascii_strcasecmp (value, "yes") == 0;
  else if (g_ascii_strcasecmp (name, "ButAutomaticUpgrades") == 0)
    r->but_automatic_upgrades = g_ascii_strcasecmp (value, "yes") == 0;
  else if (g_ascii_strcasecmp (name, "Acquire-By-Hash") == 0)
    r->acquire_by_hash = g_ascii_strcasecmp (value, "yes") == 0;
  else if (g_ascii_strcasecmp (name, "Architectures") == 0)
    g_strfreev (r->architectures), r->architectures = g_strsplit_set (value, " \t", -1);
  else if (g_ascii_strcasecmp (name, "Components") == 0)
    g_strfreev (r->components), r->components = g_strsplit_set (value, " \t", -1);
  else if (g_ascii_strcasecmp (name, "Date") == 0 || g_ascii_strcasecmp (name, "Valid-Until") == 0)
    {
      gint64 t = parse_date (value);

      if (t < 0)
        {
          g_set_error (error, GL_APT_ERROR, GL_APT_ERROR_MALFORMED,
                       "%s: cannot read the date \"%s\" of %s", what, value, name);
          return FALSE;
        }
      if (g_ascii_strcasecmp (name, "Date") == 0)
        r->date = t;
      else
        r->valid_until = t;
    }
  return TRUE;
}

static char **
drop_empty (char **v)
{
  guint j = 0;

  for (guint i = 0; v[i] != NULL; i++)
    {
      if (v[i][0] != '\0')
        v[j++] = v[i];
      else
        g_free (v[i]);
    }
  v[j] = NULL;
  return v;
}

GlAptRelease *
gl_apt_release_parse (const char  *text,
                      gsize        length,
                      const char  *what,
                      GError     **error)
{
  g_autoptr(GlAptRelease) r = g_new0 (GlAptRelease, 1);
  g_autofree char *copy = g_strndup (text, length);
  g_auto(GStrv) lines = NULL;
  g_autofree char *field = NULL;
  GString *value = g_string_new (NULL);
  gboolean in_sha256 = FALSE, seen_field = FALSE;
  gboolean ok = TRUE;

  r->files = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) release_file_free);
  r->architectures = g_new0 (char *, 1);
  r->components = g_new0 (char *, 1);

  if (memchr (text, '\0', length) != NULL)
    {
      g_string_free (value, TRUE);
      g_set_error (error, GL_APT_ERROR, GL_APT_ERROR_MALFORMED, "%s: contains a NUL byte", what);
      return NULL;
    }

  lines = g_strsplit (copy, "\n", -1);
  for (guint i = 0; ok && lines[i] != NULL; i++)
    {
      char *line = lines[i];
      gsize len = strlen (line);

      if (len > 0 && line[len - 1] == '\r')
        line[--len] = '\0';
      if (len == 0)
        {
          if (seen_field)
            {
              /* only one stanza: a second one is not ours to read */
              gboolean rest_blank = TRUE;

              for (guint j = i + 1; lines[j] != NULL; j++)
                if (g_strstrip (lines[j])[0] != '\0')
                  rest_blank = FALSE;
              if (!rest_blank)
                {
                  g_set_error (error, GL_APT_ERROR, GL_APT_ERROR_MALFORMED,
                               "%s: more than one paragraph", what);
                  ok = FALSE;
                }
              break;
            }
          continue;
        }
      if (line[0] == '#')
        continue;
      if (line[0] == ' ' || line[0] == '\t')
        {
          if (field == NULL)
            {
              g_set_error (error, GL_APT_ERROR, GL_APT_ERROR_MALFORMED,
                           "%s: line %u continues no field", what, i + 1);
              ok = FALSE;
            }
          else if (in_sha256)
            {
              g_strstrip (line);
              if (line[0] != '\0')
                ok = parse_sha256_line (r, line, what, error);
            }
          continue;
        }
      {
        char *colon = strchr (line, ':');

        if (colon == NULL || colon == line)
          {
            g_set_error (error, GL_APT_ERROR, GL_APT_ERROR_MALFORMED,
                         "%s: line %u is not a field", what, i + 1);
            ok = FALSE;
            break;
          }
        *colon = '\0';
        g_free (field);
        field = g_strdup (line);
        seen_field = TRUE;
        in_sha256 = g_ascii_strcasecmp (field, "SHA256") == 0;
        g_string_assign (value, colon + 1);
        g_strstrip (value->str);
        if (!in_sha256)
          ok = set_field (r, field, value->str, what, error);
      }
    }
  g_string_free (value, TRUE);
  if (!ok)
    return NULL;
  if (!seen_field)
    {
      g_set_error (error, GL_APT_ERROR, GL_APT_ERROR_MALFORMED, "%s: empty", what);
      return NULL;
    }
  drop_empty (r->architectures);
  drop_empty (r->components);
  if (g_hash_table_size (r->files) == 0)
    {
      g_set_error (error, GL_APT_ERROR, GL_APT_ERROR_MALFORMED,
                   "%s: lists no files with a SHA256 sum (apt refuses such a release too)", what);
      return NULL;
    }
  return g_steal_pointer (&r);
}

gboolean
gl_apt_release_check_fresh (const GlAptRelease  *release,
                            const GlAptRelease  *cached,
                            gint64               now,
                            const char          *what,
                            GError             **error)
{
  if (release->valid_until != 0 && now > release->valid_until)
    {
      g_autoptr(GDateTime) dt = g_date_time_new_from_unix_utc (release->valid_until);
      g_autofree char *s = g_date_time_format_iso8601 (dt);

      g_set_error (error, GL_APT_ERROR, GL_APT_ERROR_EXPIRED,
                   "%s expired at %s (Valid-Until); the mirror is stale or replays an old release",
                   what, s);
      return FALSE;
    }
  if (cached != NULL && cached->date != 0 && release->date < cached->date)
    {
      g_autoptr(GDateTime) a = g_date_time_new_from_unix_utc (release->date);
      g_autoptr(GDateTime) b = g_date_time_new_from_unix_utc (cached->date);
      g_autofree char *sa = g_date_time_format_iso8601 (a);
      g_autofree char *sb = g_date_time_format_iso8601 (b);

      g_set_error (error, GL_APT_ERROR, GL_APT_ERROR_ROLLBACK,
                   "%s is dated %s, older than the %s already seen: refused as a rollback",
                   what, sa, sb);
      return FALSE;
    }
  return TRUE;
}

/* --- OpenPGP armor --- */

GBytes *
gl_apt_dearmor (const char  *text,
                gsize        length,
                GError     **error)
{
  g_autoptr(GByteArray) out = g_byte_array_new ();
  g_autofree char *copy = g_strndup (text, length);
  g_auto(GStrv) lines = g_strsplit (copy, "\n", -1);
  enum { OUTSIDE, HEADERS, BODY } state = OUTSIDE;
  g_autoptr(GString) b64 = g_string_new (NULL);
  guint blocks = 0;

  for (guint i = 0; lines[i] != NULL; i++)
    {
      char *line = g_strstrip (lines[i]);

      switch (state)
        {
        case OUTSIDE:
          if (g_str_has_prefix (line, "-----BEGIN PGP PUBLIC KEY BLOCK-----"))
            state = HEADERS;
          break;
        case HEADERS:
          if (line[0] == '\0')
            state = BODY;
          else if (strchr (line, ':') == NULL)
            {
              /* no armor headers and no blank line: the body starts here */
              state = BODY;
              g_string_append (b64, line);
            }
          break;
        case BODY:
          if (g_str_has_prefix (line, "-----END PGP PUBLIC KEY BLOCK-----"))
            {
              gsize n = 0;
              guchar *bin;

              if (b64->len == 0)
                break;
              bin = g_base64_decode (b64->str, &n);
              if (n == 0)
                {
                  g_free (bin);
                  g_set_error (error, GL_APT_ERROR, GL_APT_ERROR_KEYRING,
                               "An armored key block does not decode");
                  return NULL;
                }
              g_byte_array_append (out, bin, n);
              g_free (bin);
              g_string_truncate (b64, 0);
              blocks++;
              state = OUTSIDE;
            }
          else if (line[0] == '=' && strlen (line) == 5)
            ;  /* the CRC-24 line */
          else if (line[0] == '.' && line[1] == '\0')
            ;  /* deb822: an empty line inside a multi-line field */
          else
            g_string_append (b64, line);
          break;
        }
    }
  if (blocks == 0)
    {
      g_set_error (error, GL_APT_ERROR, GL_APT_ERROR_KEYRING,
                   "No complete ASCII-armored public key block found");
      return NULL;
    }
  return g_byte_array_free_to_bytes (g_steal_pointer (&out));
}

/* --- gpgv --- */

/* The whole of data is one clear-signed message and nothing else. */
static gboolean
check_clearsigned_shape (const char *text, gsize len, const char *what, GError **error)
{
  static const char begin[] = "-----BEGIN PGP SIGNED MESSAGE-----";
  static const char sig[] = "\n-----BEGIN PGP SIGNATURE-----";
  static const char end[] = "\n-----END PGP SIGNATURE-----";
  const char *s, *e;

  while (len > 0 && g_ascii_isspace (*text))
    text++, len--;
  if (len < sizeof begin || memcmp (text, begin, sizeof begin - 1) != 0)
    {
      g_set_error (error, GL_APT_ERROR, GL_APT_ERROR_SIGNATURE,
                   "%s is not signed (no clear-signed message): ignored", what);
      return FALSE;
    }
  s = g_strstr_len (text + 1, len - 1, begin);
  e = g_strstr_len (text, len, end);
  if (s != NULL || e == NULL || g_strstr_len (text, len, sig) == NULL)
    {
      g_set_error (error, GL_APT_ERROR, GL_APT_ERROR_SIGNATURE,
                   "%s is not a single clear-signed message: ignored", what);
      return FALSE;
    }
  e += sizeof end - 1;
  for (const char *p = e; p < text + len; p++)
    if (!g_ascii_isspace (*p))
      {
        g_set_error (error, GL_APT_ERROR, GL_APT_ERROR_SIGNATURE,
                     "%s has data after its signature: ignored", what);
        return FALSE;
      }
  return TRUE;
}

GlAptKeyring *
gl_apt_keyring_new (const char *name, GBytes *data)
{
  GlAptKeyring *k = g_new0 (GlAptKeyring, 1);

  k->name = g_strdup (name);
  k->data = g_bytes_ref (data);
  return k;
}

void
gl_apt_keyring_free (GlAptKeyring *keyring)
{
  g_free (keyring->name);
  g_bytes_unref (keyring->data);
  g_free (keyring);
}

GBytes *
gl_apt_release_verify (GBytes              *data,
                       GPtrArray           *keyrings,
                       const char * const  *fingerprints,
                       const char          *what,
                       GCancellable        *cancellable,
                       GError             **error)
{
  g_auto(GlGpgvArgs) args = { NULL, NULL };
  g_autofree char *input = NULL;
  gboolean exited_ok = FALSE;
  g_autoptr(GBytes) out = NULL;
  g_autoptr(GBytes) err = NULL;
  g_autoptr(GError) local_error = NULL;
  g_auto(GStrv) status_lines = NULL;
  gsize len;
  const char *text = g_bytes_get_data (data, &len);
  gboolean valid = FALSE, bad = FALSE, fpr_ok = (fingerprints == NULL || fingerprints[0] == NULL);
  g_autofree char *bad_line = NULL;

  if (!check_clearsigned_shape (text, len, what, error))
    return NULL;
  if (keyrings == NULL || keyrings->len == 0)
    {
      g_set_error (error, GL_APT_ERROR, GL_APT_ERROR_SIGNATURE,
                   "%s: no trusted keyring to check its signature against: ignored", what);
      return NULL;
    }

  /* (gpgv reads the keyrings as they were read, from files of its own) */
  if (!gl_gpgv_args_init (&args, NULL, keyrings, &local_error))
    {
      if (g_error_matches (local_error, GL_GPGV_ERROR, GL_GPGV_ERROR_KEYRING))
        g_set_error (error, GL_APT_ERROR, GL_APT_ERROR_KEYRING, "%s: %s", what, local_error->message);
      else
        g_propagate_error (error, g_steal_pointer (&local_error));
      return NULL;
    }
  input = g_build_filename (args.dir, "InRelease", NULL);
  if (!g_file_set_contents_full (input, text, len, G_FILE_SET_CONTENTS_NONE, 0600, error))
    return NULL;
  g_ptr_array_add (args.argv, g_strdup ("--output"));
  g_ptr_array_add (args.argv, g_strdup ("-"));
  g_ptr_array_add (args.argv, g_strdup (input));
  g_ptr_array_add (args.argv, NULL);

  {
    GlSpawnOptions opts = { .output = GL_SPAWN_OUTPUT_CAPTURE };
    g_auto(GlSpawnResult) res = { 0, NULL, NULL };

    exited_ok = gl_spawn_run ((const char * const *) args.argv->pdata, &opts, &res, cancellable, &local_error);
    if (!exited_ok && g_error_matches (local_error, GL_SPAWN_ERROR, GL_SPAWN_ERROR_FAILED))
      g_clear_error (&local_error);   /* gpgv's verdict is read from its status below */
    if (res.err != NULL)
      err = g_bytes_ref (res.err);
    if (res.out != NULL)
      out = g_bytes_ref (res.out);
  }
  if (local_error != NULL)
    {
      if (g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_propagate_error (error, g_steal_pointer (&local_error));
      else
        g_set_error (error, GL_APT_ERROR, GL_APT_ERROR_SIGNATURE,
                     "%s: cannot run gpgv to check its signature: %s (install gpgv)",
                     what, local_error->message);
      return NULL;
    }

  {
    g_autofree char *errtext = err ? g_strndup (g_bytes_get_data (err, NULL), g_bytes_get_size (err)) : g_strdup ("");

    status_lines = g_strsplit (errtext, "\n", -1);
  }
  for (guint i = 0; status_lines[i] != NULL; i++)
    {
      const char *l = status_lines[i];

      if (!g_str_has_prefix (l, "[GNUPG:] "))
        continue;
      l += 9;
      if (g_str_has_prefix (l, "VALIDSIG "))
        {
          g_auto(GStrv) f = g_strsplit (l, " ", -1);

          valid = TRUE;
          for (guint k = 0; !fpr_ok && fingerprints[k] != NULL; k++)
            {
              g_autofree char *want = g_ascii_strup (fingerprints[k], -1);
              gsize wl = strlen (want);

              if (wl > 0 && want[wl - 1] == '!')
                want[--wl] = '\0';
              /* field 1: the signing key; the last one: its primary key */
              if ((f[1] != NULL && g_str_has_suffix (f[1], want)) ||
                  (g_strv_length (f) >= 11 && g_str_has_suffix (f[g_strv_length (f) - 1], want)))
                fpr_ok = TRUE;
            }
        }
      else if (g_str_has_prefix (l, "BADSIG") || g_str_has_prefix (l, "ERRSIG") ||
               g_str_has_prefix (l, "EXPSIG") || g_str_has_prefix (l, "EXPKEYSIG") ||
               g_str_has_prefix (l, "REVKEYSIG") || g_str_has_prefix (l, "NO_PUBKEY"))
        {
          bad = TRUE;
          if (bad_line == NULL)
            bad_line = g_strdup (l);
        }
    }
  if (!exited_ok || !valid || bad || out == NULL)
    {
      g_set_error (error, GL_APT_ERROR, GL_APT_ERROR_SIGNATURE,
                   "%s: the signature does not verify against its keyring (%s): ignored",
                   what, bad_line ? bad_line : "gpgv failed");
      return NULL;
    }
  if (!fpr_ok)
    {
      g_set_error (error, GL_APT_ERROR, GL_APT_ERROR_SIGNATURE,
                   "%s: signed by a key that its Signed-By does not name: ignored", what);
      return NULL;
    }
  return g_steal_pointer (&out);
}
