/* gl-create.h: building a sandbox from a profile, all or nothing
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "gl-download.h"
#include "gl-profile.h"
#include "gl-store.h"

G_BEGIN_DECLS

typedef struct {
  const char *id;          /* NULL: <profile>, <profile>-2, … */
  const char *display_name; /* NULL: the id for a sandbox of the host, else the profile's name */
  const char *image;       /* a local copy of the base tarball, or NULL */
  const char *sha256;      /* the sum the user vouches for, for image, or NULL */
  const char *signature;   /* a detached signature of image, checked with the profile's keyrings, or NULL */
  const char *release;     /* the release to use instead of the one the profile's channel resolves to */
  const char *cache_dir;   /* NULL: gl_paths_cache_dir () */
  const char *apt_root;    /* where to read the host's apt configuration; NULL: "/" */
  GlDownloadProgressFunc progress;
  gpointer progress_data;
  /* Called with a line of news ("Downloading …", "Unpacking …") */
  void (*status) (const char *message, gpointer user_data);
  gpointer status_data;
  /* Called with each line the bootstrap tool and the hooks print (NULL:
   * they are only g_debug'ed) */
  void (*output) (const char *line, gpointer user_data);
  gpointer output_data;
  /* The caller cancels on SIGINT and SIGTERM itself: the bootstrap tool is
   * not sent them (GlSpawnOptions.no_signal_forward), only stopped */
  gboolean signals_cancel;
} GlCreateOptions;

/* Creates a sandbox in @store; returns its id.  On any failure, and on
 * cancellation, nothing is left in the store. */
char *gl_create_sandbox (GlStore *store, GlProfile *profile, const GlCreateOptions *options,
                         GCancellable *cancellable, GError **error);

/* Builds the profile's base (not the host) at @rootfs (a new directory):
 * downloaded and verified, or bootstrapped; given a resolver
 * configuration, root's and 0755 at the top, the profile's post-create
 * hooks run (with @sandbox_path and @id), set-id bits cleared.  @release
 * receives the release it is, when known.  Used by create and rebase. */
gboolean gl_create_build_base (GlProfile *profile, const GlCreateOptions *options,
                               const char *sandbox_path, const char *id, const char *rootfs,
                               char **release, GCancellable *cancellable, GError **error);

G_END_DECLS
