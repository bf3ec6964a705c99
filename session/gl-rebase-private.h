/* gl-rebase-private.h: what gl-rebase.c shares with its tests
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "gl-rebase.h"

G_BEGIN_DECLS

/* Copies the files of the repositories glimpse added to @sandbox (a
 * .sources and its key under /etc/apt/keyrings) from its current view into
 * @dir (created); *@n_copied: how many repositories had a .sources. */
gboolean gl_rebase_copy_repositories (GlSandbox *sandbox, const char *dir, guint *n_copied,
                                      GError **error);

G_END_DECLS
