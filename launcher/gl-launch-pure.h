/* glimpse-launch: pure helpers (no system calls, no global state), unit-tested:
 * arguments, environment, sandbox.conf, paths.  SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define GL_LAUNCH_ID_MAX 64
#define GL_LAUNCH_DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define GL_LAUNCH_ENV_VALUE_MAX 4096

typedef enum {
  GL_LAUNCH_ACTION_ERROR,
  GL_LAUNCH_ACTION_HELP,
  GL_LAUNCH_ACTION_VERSION,
  GL_LAUNCH_ACTION_RUN,
  GL_LAUNCH_ACTION_HELD,   /* --held ID: is your layer still held by an ended view? */
} GlLaunchAction;

typedef struct {
  const char *id;
  char *const *command;   /* NULL-terminated, at least one element (RUN only) */
  const char *error;      /* for GL_LAUNCH_ACTION_ERROR */
} GlLaunchArgs;

bool gl_launch_id_is_valid (const char *id);

/* The user's layers: users/<uid>/<layer>/{upper,work} over the host
 * directory PATH (NULL: the user's home for "home", /run/user/<uid> for
 * "run-user").  Ends with { NULL, NULL }.  session/'s gl_changes_layers()
 * has the same table; tests/test-contract.c checks they agree. */
typedef struct {
  const char *layer;
  const char *path;
} GlLaunchLayer;

extern const GlLaunchLayer gl_launch_layers[];
GlLaunchAction gl_launch_parse_args (int argc, char *const *argv, GlLaunchArgs *out);

/* True if NAME=... from the caller may reach the app. */
bool gl_launch_env_name_allowed (const char *name);
/* Builds the app's environment: allow-listed entries of ENVP (first wins,
 * malformed or over-long ones dropped), then HOME/USER/LOGNAME/SHELL,
 * PATH and GLIMPSE_SANDBOX.  Returns a malloc'd NULL-terminated vector. */
char **gl_launch_build_env (char *const *envp, const char *home, const char *user,
                            const char *shell, const char *sandbox_id);
/* Only the allow-listed entries of ENVP. */
char **gl_launch_filter_env (char *const *envp);
/* Same, but only what `glimpse notify-error` needs to reach the desktop. */
char **gl_launch_build_notify_env (char *const *envp);
const char *gl_launch_env_get (char *const *envp, const char *name);
void gl_launch_strv_free (char **strv);

/* The value of Base= in group [Sandbox] of a sandbox.conf text, as a new
 * string, or NULL if absent or given more than once.  session/ reads the
 * file with GKeyFile; tests/test-contract.c checks both agree. */
char *gl_launch_conf_get_base (const char *text);

/* True if PATH is DIR or below it (both absolute, normalised). */
bool gl_launch_path_has_prefix (const char *path, const char *dir);
/* Canonical absolute path check: starts with '/', no "//", no "." or ".."
 * components, no trailing slash (except "/"). */
bool gl_launch_path_is_canonical (const char *path);

/* The i-th candidate for COMMAND along SEARCH_PATH (execvp rules: empty
 * element = "."), or NULL when exhausted.  COMMAND containing '/' has
 * exactly one candidate, itself. */
char *gl_launch_path_candidate (const char *search_path, const char *command, size_t i);

/* A process's name (the process chose it) made fit for a message on a
 * terminal, in place: every byte but printable ASCII becomes "?", so
 * neither a C0 nor a UTF-8-encoded C1 control (U+009B is a CSI) gets
 * through. */
void gl_launch_printable_name (char *name);

/* Where the "passwd:" line of an nsswitch.conf TEXT (LEN bytes) looks
 * first, when that is all a lookup of the caller's uid needs to know (see
 * lookup_user): FILES or COMPAT when that is the line's first service and
 * no action ("[...]") follows it; OTHER for any other first service, an
 * action, no passwd line, more than one, or a NUL in TEXT.  Lines are read
 * as glibc reads them ("passwd ldap", without the colon, is one). */
typedef enum {
  GL_LAUNCH_PASSWD_OTHER,
  GL_LAUNCH_PASSWD_FILES,
  GL_LAUNCH_PASSWD_COMPAT,
} GlLaunchPasswdFirst;
GlLaunchPasswdFirst gl_launch_nsswitch_passwd (const char *text, size_t len);

/* The output OUT (LEN bytes) of `getent passwd UID`, read strictly: exactly
 * one line, ending with a newline, no NUL; seven ':'-separated fields; a
 * name that is not empty; the uid field the decimal UID, the gid field
 * digits.  On success sets NAME, HOME, SHELL (new strings; HOME and SHELL
 * as given, possibly empty) and returns true. */
bool gl_launch_parse_passwd_line (const char *out, size_t len, unsigned uid,
                                  char **name, char **home, char **shell);
