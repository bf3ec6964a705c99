/* gl-deb-version.h: Debian version strings — validation and ordering
 *
 * The ordering is dpkg's (deb-version(7)): the epoch numerically, then the
 * upstream version and the Debian revision each compared as alternating
 * non-digit and digit runs, where in a non-digit run '~' sorts before
 * everything (even the end of the string), letters sort before the other
 * characters, and digit runs compare numerically.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define GL_DEB_VERSION_ERROR (gl_deb_version_error_quark ())

typedef enum {
  GL_DEB_VERSION_ERROR_INVALID,
} GlDebVersionError;

GQuark gl_deb_version_error_quark (void);

/* < 0, 0 or > 0 as a is older than, the same as or newer than b.  Works
 * on any string (as dpkg does for what it can parse); validate untrusted
 * input with gl_deb_version_check() first. */
int      gl_deb_version_compare (const char *a,
                                 const char *b);

/* TRUE when version is a valid Debian version by dpkg's rules: not empty,
 * no white space, an optional numeric epoch before the first ':', an
 * upstream part that starts with a digit and holds only alphanumerics and
 * ". + - ~ :" (the '-' only with a revision), a revision of alphanumerics
 * and ". + ~".  The error names the version and what is wrong with it. */
gboolean gl_deb_version_check   (const char  *version,
                                 GError     **error);

G_END_DECLS
