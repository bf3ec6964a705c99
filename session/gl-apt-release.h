/* gl-apt-release.h: a repository's signed InRelease — fetching it with a
 * conditional request, verifying it with gpgv, parsing what gpgv vouches
 * for, and refusing expired or rolled-back releases
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define GL_APT_ERROR (gl_apt_error_quark ())

typedef enum {
  GL_APT_ERROR_NETWORK,      /* connecting, resolving, timeouts, cut transfers, TLS */
  GL_APT_ERROR_HTTP,         /* the server answered with a status >= 400 */
  GL_APT_ERROR_SIGNATURE,    /* unsigned, badly signed, or signed by a key not trusted for it */
  GL_APT_ERROR_EXPIRED,      /* past its Valid-Until */
  GL_APT_ERROR_ROLLBACK,     /* older than the release already seen */
  GL_APT_ERROR_MALFORMED,    /* a Release or index that does not parse */
  GL_APT_ERROR_CHECKSUM,     /* a file whose size or SHA256 is not what the Release says */
  GL_APT_ERROR_NOT_LISTED,   /* a file the Release does not list */
  GL_APT_ERROR_KEYRING,      /* a Signed-By keyring that cannot be read */
} GlAptError;

GQuark gl_apt_error_quark (void);

/* --- HTTP: one GET, optionally conditional, streamed to a callback --- */

/* Receives the body as it arrives; returning FALSE (with error set)
 * aborts the transfer with that error. */
typedef gboolean (*GlAptSinkFunc) (const guint8  *data,
                                   gsize          length,
                                   gpointer       user_data,
                                   GError       **error);

typedef struct {
  char    *etag;           /* the validators to send (in) and received (out) */
  char    *last_modified;
  gboolean not_modified;   /* out: the server answered 304 */
} GlAptValidators;

void gl_apt_validators_clear (GlAptValidators *v);

/* GETs url (http, https or file).  validators (nullable) makes the request
 * conditional (If-None-Match / If-Modified-Since) and receives the new
 * ones; on a 304 the sink is never called and not_modified is set.
 * max_size (0 for none) aborts a body larger than that. */
gboolean gl_apt_http_get (const char       *url,
                          GlAptValidators  *validators,
                          guint64           max_size,
                          GlAptSinkFunc     sink,
                          gpointer          user_data,
                          GCancellable     *cancellable,
                          GError          **error);

/* Where the process's fetches are: FUNC is called with a request's
 * address as gl_apt_http_get starts it (done FALSE) and once it has ended,
 * whatever its outcome (done TRUE).  One for the process (NULL: none);
 * glimpse-updates-check reports it to the agent (gl-updates-result.h). */
typedef void (*GlAptFetchFunc) (const char *url, gboolean done, gpointer user_data);
void gl_apt_http_set_fetch_func (GlAptFetchFunc func, gpointer user_data);

/* --- Release --- */

typedef struct {
  char    *path;           /* relative to the directory of the Release */
  guint64  size;
  char    *sha256;         /* lower-case hex */
} GlAptReleaseFile;

typedef struct {
  char        *origin;
  char        *label;
  char        *suite;
  char        *codename;
  char        *version;
  gint64       date;            /* seconds since the epoch; 0 when absent */
  gint64       valid_until;     /* 0 when absent */
  gboolean     not_automatic;
  gboolean     but_automatic_upgrades;
  gboolean     acquire_by_hash;
  char       **architectures;   /* never NULL */
  char       **components;      /* never NULL */
  GHashTable  *files;           /* path → GlAptReleaseFile, from SHA256 */
} GlAptRelease;

void gl_apt_release_free (GlAptRelease *release);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GlAptRelease, gl_apt_release_free)

/* Parses the text of a Release (the signed part of an InRelease, as
 * gl_apt_release_verify() returns it).  what names it in errors. */
GlAptRelease *gl_apt_release_parse (const char  *text,
                                    gsize        length,
                                    const char  *what,
                                    GError     **error);

/* A keyring to check a signature against: its contents (binary or
 * ASCII-armored), already read, and what to call it in messages. */
typedef struct {
  char   *name;
  GBytes *data;
} GlAptKeyring;

GlAptKeyring *gl_apt_keyring_new (const char *name, GBytes *data);
void gl_apt_keyring_free (GlAptKeyring *keyring);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GlAptKeyring, gl_apt_keyring_free)

/* Verifies the clear-signed InRelease in data with gpgv against keyrings
 * (GlAptKeyring: each written, armored ones converted, into a private
 * temporary directory for gpgv) and returns only the text gpgv vouches
 * for.  fingerprints (nullable) restricts the acceptable signing keys
 * (Signed-By fingerprints).  Anything outside the single signed block is
 * refused. */
GBytes *gl_apt_release_verify (GBytes              *data,
                               GPtrArray           *keyrings,
                               const char * const  *fingerprints,
                               const char          *what,
                               GCancellable        *cancellable,
                               GError             **error);

/* Valid-Until not passed at now, and not older (Date) than cached
 * (nullable).  what names the release in errors. */
gboolean gl_apt_release_check_fresh (const GlAptRelease  *release,
                                     const GlAptRelease  *cached,
                                     gint64               now,
                                     const char          *what,
                                     GError             **error);

/* An ASCII-armored OpenPGP block (one or more) to binary; NULL with an
 * error when text holds none or it does not decode. */
GBytes *gl_apt_dearmor (const char  *text,
                        gsize        length,
                        GError     **error);

G_END_DECLS
