/* gl-rebase.h: moving a sandbox onto its profile's current base
 *
 * The profile's base is built anew (downloaded and verified, or
 * bootstrapped) inside a package operation's scratch; the repositories
 * glimpse added and the packages installed since the base (apt: the ones
 * installed by hand, not as dependencies) are put back on it through the
 * package namespace; the result becomes the next system generation.  The
 * old base (rootfs/) and the generations running views use never change;
 * users' layers stay.  On any failure the sandbox is as it was.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "gl-create.h"
#include "gl-pkg.h"

G_BEGIN_DECLS

/* The packages of the sandbox's current view installed by hand since its
 * base (apt family: dpkg's status and apt's extended_states of the view
 * against those of the base), sorted; NULL with an error where the family
 * has no way to tell, or where a package database (the view's or the
 * base's) is not a regular file reached without links, is malformed, or
 * is missing or lists nothing in the view where the base's lists
 * packages: never an empty list for a database it could not read. */
GStrv    gl_rebase_kept_packages (GlSandbox *sandbox, GError **error);

/* Rebases @sandbox.  @options: how to build the base (status and output
 * callbacks, cache; its id, display name and image are ignored).  @failed
 * receives the packages that could not be installed on the new base (the
 * rebase still succeeds: the report names them). */
gboolean gl_rebase_sandbox (GlSandbox *sandbox, const GlCreateOptions *options,
                            GlPkgProgress progress, gpointer user_data, GStrv *failed,
                            GCancellable *cancellable, GError **error);

G_END_DECLS
