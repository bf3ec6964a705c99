/* gl-updates.h: which packages of an apt sandbox its apt would upgrade
 *
 * Reads the sandbox's view (its system generation over its base) as its
 * apt would: sources (one-line and deb822), architectures, preferences,
 * dpkg status; fetches each repository's InRelease conditionally, checks
 * it with gpgv, fetches the Packages indexes it lists; picks apt's
 * candidate per package and architecture and lists those newer than the
 * installed version.  Never writes into the sandbox, needs no root.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

#include "gl-sandbox.h"

G_BEGIN_DECLS

typedef struct {
  char     *name;
  char     *arch;        /* the candidate's architecture as `apt list` prints it ("all" too) */
  char     *installed;
  char     *candidate;
  char     *suites;      /* the suites carrying the candidate, "unstable,sid" */
  gboolean  held;        /* "hold" in the dpkg status */
  gboolean  phased;      /* the candidate's Phased-Update-Percentage is below 100 */
} GlUpdate;

GlUpdate *gl_update_new  (const char *name,
                          const char *arch,
                          const char *installed,
                          const char *candidate,
                          const char *suites);
void      gl_update_free (GlUpdate   *update);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GlUpdate, gl_update_free)

typedef struct {
  guint requests;        /* HTTP requests made */
  guint releases;        /* InRelease files checked */
  guint unchanged;       /* of those, answered "not modified" */
  guint indexes;         /* Packages indexes read (from the network or the cache) */
  guint downloads;       /* Packages indexes downloaded */
} GlUpdatesStats;

/* The view of a sandbox, top layer first: its current system tree (when
 * it has one) and its base (rootfs/, or "/" for a sandbox over the host). */
GStrv gl_updates_sandbox_layers (GlSandbox *sandbox);

/* The check.  layers: the view, top first.  cache_dir: this sandbox's
 * cache (validators and the verified releases, per repository);
 * index_cache_dir: the index summaries, named by their SHA256, shareable
 * between sandboxes.  Returns the GlUpdates sorted by name and
 * architecture.  Any repository that cannot be fetched, verified or
 * parsed fails the whole check (a partial answer would be a wrong one);
 * the error names the repository. */
GPtrArray *gl_updates_check (const char * const  *layers,
                             const char          *cache_dir,
                             const char          *index_cache_dir,
                             GlUpdatesStats      *stats,
                             GCancellable        *cancellable,
                             GError             **error);

/* "Update now", the desktop way: `pkexec HELPER SANDBOX_ID` (the helper
 * takes nothing but the id and runs `glimpse update ID` as root; polkit
 * asks for the administrator, auth_admin_keep).  Runs in a thread.
 * Without pkexec, or without a polkit authority on the system bus
 * (org.freedesktop.PolicyKit1 neither running nor activatable), nothing
 * is run: GL_UPDATES_RUN_NO_POLKIT, with an error saying what to run;
 * the caller offers a terminal with `sudo glimpse update ID`. */
typedef enum {
  GL_UPDATES_RUN_OK,          /* the update finished */
  GL_UPDATES_RUN_DISMISSED,   /* pkexec 126 (dialog dismissed) or 127 (not authorised): nothing to say */
  GL_UPDATES_RUN_FAILED,      /* the update failed: the error says how (its last lines of output) */
  GL_UPDATES_RUN_NO_POLKIT,   /* no pkexec or no polkit: nothing was run */
} GlUpdatesRunResult;

void               gl_updates_run_update        (const char           *sandbox_id,
                                                 const char           *helper_path,
                                                 GCancellable         *cancellable,
                                                 GAsyncReadyCallback   callback,
                                                 gpointer              user_data);
GlUpdatesRunResult gl_updates_run_update_finish (GAsyncResult         *result,
                                                 GError              **error);

G_END_DECLS
