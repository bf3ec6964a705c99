/* gl-download.h: resumable, verified downloads with libcurl
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

#include "gl-checksum.h"

G_BEGIN_DECLS

#define GL_DOWNLOAD_ERROR (gl_download_error_quark ())

typedef enum {
  GL_DOWNLOAD_ERROR_HTTP,          /* the server answered with a status >= 400 */
  GL_DOWNLOAD_ERROR_NETWORK,       /* connecting, resolving, timeouts, cut transfers */
  GL_DOWNLOAD_ERROR_CHECKSUM,      /* the SHA-256 of the download is not the expected one */
  GL_DOWNLOAD_ERROR_INVALID,       /* a malformed argument: URL, checksum string */
  GL_DOWNLOAD_ERROR_TOO_LARGE,     /* gl_download_to_string() over its limit */
} GlDownloadError;

GQuark gl_download_error_quark (void);

/* total is 0 when the size is not known.  Called from the thread that
 * runs the download. */
typedef void (*GlDownloadProgressFunc) (guint64  received,
                                        guint64  total,
                                        gpointer user_data);

/* Downloads url (http, https or file) to dest_path.
 *
 * Data goes to dest_path + ".part"; an existing .part is resumed with an
 * HTTP Range request (a server that ignores Range is handled by starting
 * again from zero).  When expected_sha256 (hex) is given, the .part is
 * verified before it is renamed to dest_path; on a mismatch the .part is
 * deleted.  When dest_path already exists and matches expected_sha256,
 * nothing is fetched (the cache case).  Without expected_sha256 the file
 * is always fetched.  The .part is locked (flock) while in use: a second
 * download into it fails with G_IO_ERROR_BUSY.  An empty .part is removed
 * on failure; one with data is kept for resuming.
 *
 * Errors: GL_DOWNLOAD_ERROR_*, G_IO_ERROR_CANCELLED (the .part is kept),
 * G_IO_ERROR_NO_SPACE (the .part is kept) and other G_IO_ERRORs. */
gboolean gl_download_file (const char             *url,
                           const char             *dest_path,
                           const char             *expected_sha256,
                           GlDownloadProgressFunc  progress,
                           gpointer                user_data,
                           GCancellable           *cancellable,
                           GError                **error);

/* Fetches a small file (checksum lists, indexes; at most 16 MiB) into a
 * NUL-terminated string; length (nullable) receives its length. */
gchar *gl_download_to_string (const char    *url,
                              gsize         *length,
                              GCancellable  *cancellable,
                              GError       **error);

G_END_DECLS
