/* gl-exec.h: Exec= lines of desktop entries (Desktop Entry Specification,
 * "The Exec key")
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define GL_EXEC_ERROR (gl_exec_error_quark ())

typedef enum {
  GL_EXEC_ERROR_EMPTY,       /* no program */
  GL_EXEC_ERROR_QUOTING,     /* unbalanced quotes, dangling backslash */
} GlExecError;

GQuark gl_exec_error_quark (void);

/* Splits an Exec value (already unescaped at the key-file level, as
 * g_key_file_get_string returns it) into arguments.  Double-quoted
 * arguments follow the specification (\" \` \$ \\ inside); for the sake of
 * real-world entries single quotes and a backslash outside quotes are
 * understood the way GLib's own launcher (g_shell_parse_argv) does.
 * Field codes are left untouched inside the arguments ("%f", "%%",
 * "--name=%c"), so the result can be quoted again without changing its
 * meaning.  Deprecated field codes (%d %D %n %N %v %m) are dropped. */
gboolean gl_exec_split (const char *exec, GStrv *argv_out, GError **error);

/* Quotes one argument for an Exec value: unchanged when it needs no quoting,
 * else in double quotes with " ` $ \ escaped.  '%' is not touched (field codes
 * stay field codes). */
char *gl_exec_quote_arg (const char *arg);

/* Quotes each argument and joins them with spaces. */
char *gl_exec_join (const char * const *argv);

/* Like gl_exec_quote_arg, for a literal string that must not be read as
 * containing field codes ('%' doubled), e.g. the launcher's path. */
char *gl_exec_quote_literal (const char *arg);

/* The wrapper: "<launcher> <id> -- <original arguments>", quoted. */
char *gl_exec_wrap (const char *launcher, const char *id, const char *exec, GError **error);

/* Expands the field codes of split arguments for a launch with @uris (file
 * URIs or other URIs; may be empty).  Like GLib: %f/%u take one item, %F/%U
 * all of them; local files become paths for %f/%F.  Items consumed are
 * removed from the front of @uris (*n_used tells how many); call again while
 * items remain.  %i expands to "--icon" @icon, %c to @name, %k to
 * @desktop_file; unknown codes vanish; %% gives %. */
GStrv gl_exec_expand (const char * const *argv, const char * const *uris,
                      const char *icon, const char *name, const char *desktop_file,
                      guint *n_used);

G_END_DECLS
