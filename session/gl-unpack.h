/* gl-unpack.h: unpacking root file system tarballs
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define GL_UNPACK_ERROR (gl_unpack_error_quark ())

typedef enum {
  GL_UNPACK_ERROR_FAILED,        /* tar failed: corrupt or truncated archive, I/O */
  GL_UNPACK_ERROR_UNSAFE,        /* a member with an absolute path or a '..' component */
  GL_UNPACK_ERROR_MISSING_TOOL,  /* tar, xz, zstd, … not installed */
} GlUnpackError;

GQuark gl_unpack_error_quark (void);

/* Unpacks a tar archive (uncompressed, gzip, bzip2, xz or zstd, detected
 * from its first bytes) into dest_dir, which must exist and be empty.
 * Owners (as root), modes and extended attributes are kept.  An archive
 * with a member that is absolute or has a '..' component is refused
 * before anything is written.  On failure dest_dir may hold part of the
 * tree; the caller removes it. */
gboolean gl_unpack_archive       (const char    *archive_path,
                                  const char    *dest_dir,
                                  GCancellable  *cancellable,
                                  GError       **error);

/* The same, dropping the first strip_components path components of each
 * member, as for the Arch Linux bootstrap tarball ("root.x86_64/…"). */
gboolean gl_unpack_archive_strip (const char    *archive_path,
                                  const char    *dest_dir,
                                  guint          strip_components,
                                  GCancellable  *cancellable,
                                  GError       **error);

G_END_DECLS
