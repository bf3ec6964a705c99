/* gl-apt-index.h: a repository's Packages index — fetched as its Release
 * lists it (xz, gz or plain; by-hash when the Release asks for it), its
 * size and SHA256 checked, parsed as it streams in, and kept in the cache
 * as a compact summary named by its SHA256
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

#include "gl-apt-release.h"

G_BEGIN_DECLS

/* What the update check needs of one binary package stanza. */
typedef struct {
  const char *name;
  const char *arch;      /* as the stanza says: "amd64", "all", … */
  const char *version;
  guint       phased;    /* Phased-Update-Percentage, 100 when absent */
} GlAptIndexEntry;

typedef struct _GlAptIndex GlAptIndex;

GlAptIndex            *gl_apt_index_new         (void);
void                   gl_apt_index_free        (GlAptIndex *index);
guint                  gl_apt_index_get_size    (GlAptIndex *index);
const GlAptIndexEntry *gl_apt_index_get         (GlAptIndex *index,
                                                 guint       i);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GlAptIndex, gl_apt_index_free)

/* A streaming parser of Packages text: feed it pieces of any size. */
typedef struct _GlAptIndexParser GlAptIndexParser;

GlAptIndexParser *gl_apt_index_parser_new    (GlAptIndex        *into,
                                              const char        *what);
gboolean          gl_apt_index_parser_feed   (GlAptIndexParser  *parser,
                                              const char        *data,
                                              gsize              length,
                                              GError           **error);
gboolean          gl_apt_index_parser_finish (GlAptIndexParser  *parser,
                                              GError           **error);
void              gl_apt_index_parser_free   (GlAptIndexParser  *parser);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GlAptIndexParser, gl_apt_index_parser_free)

/* Parses a whole Packages file, compressed as its name says (.xz, .gz or
 * none).  For tests and benchmarks. */
GlAptIndex *gl_apt_index_load_file (const char    *path,
                                    GCancellable  *cancellable,
                                    GError       **error);

/* Fetches and parses index_path ("main/binary-amd64/Packages") of the
 * release whose directory is dist_url ("http://…/dists/sid/").  Picks the
 * .gz (cheaper to decode), else the .xz, else the plain file the Release
 * lists; uses the
 * by-hash path when the Release says Acquire-By-Hash: yes.  A summary
 * already in cache_dir under the file's SHA256 is used without any
 * request (downloaded, nullable, tells which).  Returns NULL without an error when the Release does not list
 * the index at all (apt skips such an index too). */
GlAptIndex *gl_apt_index_fetch (const char          *dist_url,
                                const GlAptRelease  *release,
                                const char          *index_path,
                                const char          *cache_dir,
                                gboolean            *downloaded,
                                GCancellable        *cancellable,
                                GError             **error);

G_END_DECLS
