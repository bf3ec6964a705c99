/* gl-reclaim.h: giving back the disk space of what no view uses any more
 *
 * A rebase makes a generation of the whole new base, which hides every
 * file of rootfs/ (the sandbox's first base) but leaves it on disk beneath
 * every view.  system/rebased names the first generation made by the last
 * rebase; once no older generation is left (a view still built from one
 * keeps it, see gl-pkg.h) and no view of the sandbox is up (rootfs/ is a
 * layer of every view, which must not change under it), rootfs/ is swapped
 * with a skeleton of its directories (what the views and the package
 * namespace still look up in the base) and its files deleted;
 * system/reclaimed then names the same generation.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

#include "gl-store.h"

G_BEGIN_DECLS

/* The space deleting @path frees: its directories' and other non-files'
 * blocks, and those of the files no other path links to. */
guint64  gl_reclaim_size (const char *path);
/* The same, counting also the files whose every link lies under @path
 * (what removing the whole of it frees) */
guint64  gl_reclaim_size_whole (const char *path);
/* The same, leaving out the directories named @skip in the directories of
 * @path (NULL: none), and what is linked only from in them */
guint64  gl_reclaim_size_whole_but (const char *path, const char *skip);

/* Records @generation (of @system, <sandbox>/system) as made by a rebase. */
gboolean gl_reclaim_mark_rebased (const char *system, guint generation, GError **error);

/* Reclaims rootfs/ when it is hidden whole and unused (see above), under
 * the caller's package-operation lock.  *@freed: bytes given back (0 when
 * nothing was done); *@in_use: TRUE when it stays because a view uses it or
 * an older generation is left. */
gboolean gl_reclaim_old_base (GlSandbox *sandbox, guint64 *freed, gboolean *in_use, GError **error);

G_END_DECLS
