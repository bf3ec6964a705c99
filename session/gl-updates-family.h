/* gl-updates-family.h: pending updates of dnf, pacman and apk sandboxes
 *
 * Unlike apt sandboxes (gl-updates.h, checked in C), these run the
 * family's own read-only check inside the sandbox, through the launcher,
 * as the user (so nothing runs as root and the sandbox's system layer is
 * never written), each with a private cache:
 *   dnf     dnf -q check-update --refresh --setopt=cachedir=… (exit 100: updates, 0: none),
 *           through /bin/sh, which first removes the locks a stopped check
 *           left on that cache; then rpm -q for the installed versions
 *   pacman  checkupdates (pacman-contrib; exit 0: updates, 2: none)
 *   apk     apk --no-cache list --upgradable (exit 0; a warning that an
 *           index could not be fetched fails the check)
 * The launcher's own exit codes are read first: 127 (the tool is not in
 * the sandbox) is GL_UPDATES_FAMILY_ERROR_NO_TOOL, which the agent
 * reports once instead of retrying.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define GL_UPDATES_FAMILY_ERROR (gl_updates_family_error_quark ())

typedef enum {
  GL_UPDATES_FAMILY_ERROR_UNSUPPORTED,  /* no check for this family */
  GL_UPDATES_FAMILY_ERROR_NO_TOOL,      /* the family's tool is not installed in the sandbox */
  GL_UPDATES_FAMILY_ERROR_FAILED,       /* the tool (or the launcher) failed: the message says how */
} GlUpdatesFamilyError;

GQuark gl_updates_family_error_quark (void);

/* TRUE for the families gl_updates_family_check() knows (dnf, pacman, apk). */
gboolean   gl_updates_family_supported (const char *family);

/* Runs the family's check in sandbox @sandbox_id through the launcher
 * (gl_paths_launcher()) and returns its GlUpdates (gl-updates.h) sorted
 * by name and architecture.  Blocks: call it from a thread. */
GPtrArray *gl_updates_family_check     (const char    *sandbox_id,
                                        const char    *family,
                                        GCancellable  *cancellable,
                                        GError       **error);

/* The parsers of the tools' output (exposed for tests).  Each returns the
 * GlUpdates in the order of the output, or NULL with
 * GL_UPDATES_FAMILY_ERROR_FAILED on a line it does not understand. */
GPtrArray *gl_updates_family_parse_dnf          (const char  *out,
                                                 GError     **error);
GPtrArray *gl_updates_family_parse_checkupdates (const char  *out,
                                                 GError     **error);
GPtrArray *gl_updates_family_parse_apk          (const char  *out,
                                                 GError     **error);

G_END_DECLS
