/* gl-repo.h: a sandbox's package repositories (add-repo, remove-repo, repos)
 *
 * apt: every repository glimpse adds is a deb822 file
 * /etc/apt/sources.list.d/glimpse-NAME.sources in the sandbox's system layer
 * whose Signed-By names its own key, /etc/apt/keyrings/glimpse-NAME.{asc,gpg};
 * no key is ever trusted for every repository.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

#include "gl-pkg.h"
#include "gl-store.h"

G_BEGIN_DECLS

/* One apt source, parsed from a one-line "deb …" entry or a deb822 stanza. */
typedef struct {
  char **types;        /* deb, deb-src */
  char **uris;
  char **suites;
  char **components;
  char **architectures;
} GlRepoSource;

void gl_repo_source_free (GlRepoSource *source);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GlRepoSource, gl_repo_source_free)

/* Parses @text: one-line entries ("deb [arch=amd64] URI SUITE COMP…") or
 * deb822 stanzas; every entry must be http(s) and of one repository
 * (several lines or stanzas are merged when they agree on the URI).
 * A Signed-By or signed-by= given in the text is refused: the key comes
 * with --key. */
GlRepoSource *gl_repo_source_parse (const char *text, GError **error);
/* The deb822 text of @source with Signed-By: @keyring. */
char *gl_repo_source_to_deb822 (GlRepoSource *source, const char *keyring);

/* A repository name: ^[a-z0-9][a-z0-9._-]{0,63}$ */
gboolean gl_repo_name_validate (const char *name, GError **error);
/* A name from a URI: host and path, lower-cased, other characters as '-'. */
char *gl_repo_name_from_uri (const char *uri);

/* The fingerprints (upper-case hex) of the public keys in @key (armored or
 * binary OpenPGP), through gpg with a throw-away home; an error when it holds
 * no public key or any secret key. */
GStrv gl_repo_key_fingerprints (GBytes *key, GError **error);

/* Where the Launchpad API lives (ppa:): $GLIMPSE_LAUNCHPAD_API, else
 * the [Packages] LaunchpadAPI= of /etc/glimpse/glimpse.conf (its "devel"
 * API root), else Launchpad's own.  The archives: $GLIMPSE_PPA_ARCHIVE,
 * PPAArchive=, else Launchpad's own.  NULL and an error when glimpse.conf is
 * there but cannot be read (gl_config_load). */
char *gl_repo_launchpad_api (GError **error);

/* glimpse add-repo.  @spec: "deb …", deb822 text, a file holding either,
 * or ppa:OWNER/NAME; @key: a file or http(s) URL (NULL only for ppa:);
 * @name: NULL to derive one.  The repository's index is fetched and
 * verified against the key before anything is kept. */
gboolean gl_repo_add (GlSandbox *sandbox, const char *spec, const char *key, const char *name,
                      GlPkgProgress progress, gpointer user_data,
                      GCancellable *cancellable, GError **error);
/* glimpse remove-repo: a repository glimpse added (NAME), or any sources
 * file of the sandbox by its name without extension ("debian" for
 * debian.sources, "sources" for /etc/apt/sources.list). */
gboolean gl_repo_remove (GlSandbox *sandbox, const char *name,
                         GlPkgProgress progress, gpointer user_data,
                         GCancellable *cancellable, GError **error);

typedef struct {
  char *name;      /* what remove-repo takes */
  char *file;      /* path inside the sandbox */
  char *summary;   /* "URI SUITE COMPONENTS" */
  gboolean added;  /* added by glimpse */
} GlRepoEntry;

void gl_repo_entry_free (GlRepoEntry *entry);
/* The sandbox's apt sources as it sees them (system layer over the base). */
GPtrArray *gl_repo_list (GlSandbox *sandbox, GError **error);

G_END_DECLS
