/* gl-checksum.h: SHA-256 checksum lists and file hashing
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define GL_CHECKSUM_ERROR (gl_checksum_error_quark ())

typedef enum {
  GL_CHECKSUM_ERROR_NOT_LISTED,    /* a checksum list has no (or conflicting) entries for a file */
} GlChecksumError;

GQuark gl_checksum_error_quark (void);

/* TRUE when @s is 64 hexadecimal digits */
gboolean gl_checksum_is_sha256 (const char *s);

/* The parser of checksum lists: GNU lines "SUM  name" and "SUM *name",
 * BSD lines "SHA256 (name) = SUM", with PGP dash-escaping; any other line
 * (comments, the headers of a clear-signed list such as "Hash: SHA256", a
 * signature, other algorithms) is not an entry.  The SUM is 64 hex digits.
 *
 * The file names in a list, in its order ("./" dropped). */
GStrv gl_checksum_list_names (const char *list_text);

/* The lower-case hex SHA-256 of @filename in the list.  A listed "./name"
 * or "dir/name" matches name when no exact entry exists.  Errors:
 * GL_CHECKSUM_ERROR_NOT_LISTED (none, or conflicting sums). */
gchar *gl_checksum_find_in_list (const char  *list_text,
                                 const char  *filename,
                                 GError     **error);

/* The lower-case hex SHA-256 of the file at @path. */
gchar *gl_checksum_file_sha256 (const char    *path,
                                GCancellable  *cancellable,
                                GError       **error);

/* The lower-case hex SHA-256 of what is left to read of @fd (left open);
 * @name says in a message what it is. */
gchar *gl_checksum_fd_sha256 (int            fd,
                              const char    *name,
                              GCancellable  *cancellable,
                              GError       **error);

G_END_DECLS
