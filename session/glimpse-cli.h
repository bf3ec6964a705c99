/* glimpse-cli.h: shared pieces of the glimpse command line
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* Exit codes, documented in glimpse(1) */
enum {
  GL_EXIT_OK = 0,
  GL_EXIT_FAILED = 1,       /* the operation failed; the message says why */
  GL_EXIT_USAGE = 2,        /* bad command line */
  GL_EXIT_NOT_FOUND = 3,    /* unknown sandbox, profile or application */
  GL_EXIT_PERMISSION = 4,   /* needs root: rerun with sudo */
  GL_EXIT_IN_USE = 5,       /* an app of the sandbox runs */
  GL_EXIT_INVALID = 6,      /* malformed profile, sandbox.conf or other input */
  GL_EXIT_CANCELLED = 130,  /* interrupted */
};

typedef int (*GlCommandFunc) (int argc, char **argv);

/* Prints "glimpse: MESSAGE" on stderr and returns the exit code for the error. */
int gl_cli_fail (const GError *error);
/* Same for a usage problem, with a hint to --help. */
int gl_cli_usage (const char *command, const char *format, ...) G_GNUC_PRINTF (2, 3);
/* Parses options with a GOptionContext; on failure prints and returns FALSE with *exit_code set. */
gboolean gl_cli_parse (GOptionContext *context, int *argc, char ***argv, int *exit_code);
/* TRUE when running as root; otherwise prints how to rerun and returns FALSE. */
gboolean gl_cli_require_root (const char *what);
/* A context for "glimpse COMMAND" with the summary set */
GOptionContext *gl_cli_context_new (const char *parameters, const char *summary);

G_END_DECLS
