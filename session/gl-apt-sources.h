/* gl-apt-sources.h: apt's sources — one-line sources.list and deb822 .sources
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define GL_APT_SOURCES_ERROR (gl_apt_sources_error_quark ())

typedef enum {
  GL_APT_SOURCES_ERROR_MALFORMED,   /* a line or entry apt would not accept either */
} GlAptSourcesError;

GQuark gl_apt_sources_error_quark (void);

/* One repository: one type, one URI, one suite (a deb822 entry with
 * several of each becomes one GlAptSource per combination, in order). */
typedef struct {
  gboolean  deb_src;       /* "deb-src" rather than "deb" */
  gboolean  enabled;       /* deb822 "Enabled: no" makes it FALSE */
  gboolean  trusted;       /* [trusted=yes] / "Trusted: yes" */
  char     *uri;           /* as written */
  char     *suite;         /* as written; ends in '/' for a flat repository */
  char    **components;    /* empty for a flat repository */
  char    **archs;         /* [arch=…] / Architectures; NULL: apt's default */
  char    **signed_by;     /* keyring paths of Signed-By; NULL: none given */
  char    **fingerprints;  /* fingerprints of Signed-By (40 or 16 hex digits, maybe with '!') */
  char     *inline_key;    /* an armored key block given inline in deb822 Signed-By */
  char     *where;         /* "FILE:LINE" of the line or the entry's first field */
} GlAptSource;

void gl_apt_source_free (GlAptSource *source);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GlAptSource, gl_apt_source_free)

/* Parses the text of a one-line sources.list (FILE names it in messages
 * and GlAptSource.where).  Comments and blank lines are skipped; any other
 * line that is not "deb" or "deb-src" with options, a URI and a suite is
 * an error naming the file and line.  A GPtrArray of GlAptSource*. */
GPtrArray *gl_apt_sources_parse_one_line (const char *file, const char *text, GError **error);

/* Parses the text of a deb822 .sources file: stanzas of Types, URIs,
 * Suites, Components, Architectures, Signed-By (paths, fingerprints or an
 * inline key), Enabled, Trusted; continuation lines and "." lines as
 * deb822 has them.  An entry without Types, URIs or Suites is an error.
 * Disabled entries are returned with enabled FALSE. */
GPtrArray *gl_apt_sources_parse_deb822 (const char *file, const char *text, GError **error);

/* Every source of the apt configuration under @root: etc/apt/sources.list
 * and then etc/apt/sources.list.d/ *.list and *.sources in name order
 * (names of letters, digits, '_', '-' and '.' only, as apt reads them).
 * Missing files are no sources; a file that cannot be parsed is an error. */
GPtrArray *gl_apt_sources_read (const char *root, GError **error);
/* The same for a tree glimpse does not trust (an image's, a sandbox's),
 * read as root: no link is followed (a file reached through one, or not
 * a regular file of at most 4 MiB, is an error; a sources.list.d that is a
 * link is not read). */
GPtrArray *gl_apt_sources_read_tree (const char *root, GError **error);

/* The sources apt sees in an overlay of @upper (a tree glimpse does not
 * trust, read as gl_apt_sources_read_tree does; NULL: none) over @lower
 * (read so too when @lower_tree): a file of @upper hides @lower's of that
 * name, a whiteout hides it with nothing, an opaque etc, etc/apt or
 * sources.list.d (or a whiteout on the way) hides @lower's below it
 * (gl_layer_open_dir).  An entry of @upper that is neither a regular file
 * nor a whiteout, or a link on @upper's way to them, is an error. */
GPtrArray *gl_apt_sources_read_layers (const char *upper, const char *lower, gboolean lower_tree,
                                       GError **error);

/* The name apt gives, in its lists directory, to the release files of
 * @source less "InRelease" or "Release" (URItoFileName of the index's
 * URI: "deb http://host:8080/debian sid" is "host:8080_debian_dists_sid_"). */
char *gl_apt_source_index_name (const GlAptSource *source);

/* The Debian mirror of the apt configuration under @apt_root, or NULL: the
 * URI of the first enabled "deb" source that is Debian's (a one-line URI
 * with "/debian" in it; a deb822 entry signed by debian-archive-keyring)
 * and not a security suite.  Files that cannot be parsed are skipped. */
char *gl_apt_sources_find_debian_mirror (const char *apt_root);

/* The non-empty words of @s split at any of @seps (apt's field lists). */
char **gl_apt_split_words (const char *s, const char *seps);

G_END_DECLS
