/* glimpse-launch's parsers: its arguments, the caller's environment,
 * sandbox.conf, paths and the mount table.  The input is split at NUL bytes into strings
 * (argv, envp, paths); the whole input is also read as a sandbox.conf.
 * Properties: a RUN parse has a valid id (checked against an independent
 * reading of ^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$) and "--" before a
 * non-empty command; the app's environment holds only allow-listed names
 * (exact names, no prefixes), each once, and the launcher's own values;
 * the whole input read as a mountinfo table is a table of absolute paths,
 * one at most per line, or an error with a message and no table.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdbool.h>
#include <string.h>

#include "gl-launch-mount.h"
#include "gl-launch-pure.h"
#include "fuzz.h"

#define MAX_PARTS 64

/* The allow-list, written out again on purpose: a name the launcher starts
 * passing must be added here too, knowingly. */
static const char *const allowed[] = {
  "DISPLAY", "WAYLAND_DISPLAY", "XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS",
  "XAUTHORITY", "PULSE_SERVER", "LANG", "LANGUAGE", "TERM", "COLORTERM",
  "XDG_SESSION_TYPE", "XDG_CURRENT_DESKTOP", "XDG_SESSION_DESKTOP",
  "DESKTOP_SESSION", NULL
};
/* set by the launcher itself */
static const char *const own[] = {
  "HOME", "USER", "LOGNAME", "SHELL", "PATH", "GLIMPSE_SANDBOX", NULL
};

static bool
in_list (const char *name, size_t len, const char *const *list)
{
  for (size_t i = 0; list[i] != NULL; i++)
    if (strlen (list[i]) == len && memcmp (list[i], name, len) == 0)
      return true;
  return false;
}

static bool
ref_allowed (const char *name, size_t len)
{
  if (in_list (name, len, allowed))
    return true;
  if (len >= 4 && memcmp (name, "LC_", 3) == 0)
    {
      for (size_t i = 3; i < len; i++)
        if (!((name[i] >= 'A' && name[i] <= 'Z') || name[i] == '_'))
          return false;
      return true;
    }
  return false;
}

static bool
ref_id_valid (const char *id)
{
  size_t len = strlen (id);

  if (len < 1 || len > 64)
    return false;
  for (size_t i = 0; i < len; i++)
    {
      char c = id[i];
      bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
      if (!alnum && (i == 0 || (c != '_' && c != '.' && c != '-')))
        return false;
    }
  return true;
}

static bool
ref_canonical (const char *p)
{
  if (p[0] != '/')
    return false;
  if (strcmp (p, "/") == 0)
    return true;
  if (p[strlen (p) - 1] == '/' || strstr (p, "//") != NULL)
    return false;
  for (const char *s = p; (s = strchr (s, '/')) != NULL; s++)
    if ((s[1] == '.' && (s[2] == '/' || s[2] == '\0')) ||
        (s[1] == '.' && s[2] == '.' && (s[3] == '/' || s[3] == '\0')))
      return false;
  return true;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  char *buf, *parts[MAX_PARTS + 1];
  int n = 0;

  if (size > 16384)
    return 0;
  buf = malloc (size + 1);
  if (buf == NULL)
    abort ();
  memcpy (buf, data, size);
  buf[size] = '\0';
  for (char *p = buf; n < MAX_PARTS && p <= buf + size; p += strlen (p) + 1)
    parts[n++] = p;
  parts[n] = NULL;

  /* arguments: "glimpse-launch" then the parts */
  {
    char *argv[MAX_PARTS + 2];
    GlLaunchArgs a;
    GlLaunchAction act;

    argv[0] = (char *) "glimpse-launch";
    for (int i = 0; i <= n; i++)
      argv[i + 1] = parts[i];
    act = gl_launch_parse_args (n + 1, argv, &a);
    if (n >= 1)
      FUZZ_ASSERT (gl_launch_id_is_valid (parts[0]) == ref_id_valid (parts[0]));
    if (act == GL_LAUNCH_ACTION_RUN)
      {
        FUZZ_ASSERT (a.id == parts[0] && ref_id_valid (a.id));
        FUZZ_ASSERT (n >= 3 && strcmp (parts[1], "--") == 0);
        FUZZ_ASSERT (a.command == &argv[3] && a.command[0][0] != '\0');
      }
    else if (act == GL_LAUNCH_ACTION_ERROR)
      FUZZ_ASSERT (a.error != NULL);
  }

  /* the caller's environment */
  {
    char **env = gl_launch_build_env (parts, "/home/u", "u", "/bin/sh", "sb-1");
    char **notify = gl_launch_build_notify_env (parts);
    size_t m = 0;

    FUZZ_ASSERT (env != NULL && notify != NULL);
    for (; env[m] != NULL; m++)
      {
        size_t len = strcspn (env[m], "=");

        FUZZ_ASSERT (env[m][len] == '=');
        FUZZ_ASSERT (in_list (env[m], len, own) || ref_allowed (env[m], len));
        for (size_t k = 0; k < m; k++)
          FUZZ_ASSERT (!(strncmp (env[k], env[m], len + 1) == 0));
      }
    FUZZ_ASSERT (strcmp (gl_launch_env_get (env, "HOME"), "/home/u") == 0);
    FUZZ_ASSERT (strcmp (gl_launch_env_get (env, "GLIMPSE_SANDBOX"), "sb-1") == 0);
    for (size_t k = 0; notify[k] != NULL; k++)
      {
        size_t len = strcspn (notify[k], "=");
        FUZZ_ASSERT (notify[k][len] == '=' && (ref_allowed (notify[k], len) || strncmp (notify[k], "PATH=", 5) == 0));
      }
    for (int i = 0; i < n; i++)
      FUZZ_ASSERT (gl_launch_env_name_allowed (parts[i]) ==
                   ref_allowed (parts[i], strcspn (parts[i], "=")));
    gl_launch_strv_free (env);
    gl_launch_strv_free (notify);
  }

  /* sandbox.conf, paths */
  free (gl_launch_conf_get_base (buf));
  for (int i = 0; i < n; i++)
    {
      char *cand;

      FUZZ_ASSERT (gl_launch_path_is_canonical (parts[i]) == ref_canonical (parts[i]));
      if (i + 1 < n)
        {
          size_t k = 0;
          for (; k < 1000 && (cand = gl_launch_path_candidate (parts[i], parts[i + 1], k)) != NULL; k++)
            free (cand);
          FUZZ_ASSERT (k < 1000);
        }
    }
  /* the input as a mount table */
  {
    FILE *f = fmemopen ((void *) data, size ? size : 1, "r");
    GlLaunchMountTable t;
    char *error = NULL;
    size_t lines = 1;

    FUZZ_ASSERT (f != NULL);
    if (size == 0)
      (void) fgetc (f);         /* an empty stream */
    for (size_t i = 0; i < size; i++)
      lines += data[i] == '\n';
    if (gl_launch_mount_table_parse (f, "fuzz", &t, &error) == 0)
      {
        FUZZ_ASSERT (error == NULL && t.n <= lines);
        for (size_t i = 0; i < t.n; i++)
          FUZZ_ASSERT (t.paths[i][0] == '/' && t.fstypes[i] != NULL && t.fsopts[i] != NULL);
        gl_launch_mount_table_clear (&t);
      }
    else
      FUZZ_ASSERT (error != NULL && t.n == 0);
    free (error);
    fclose (f);
  }
  free (buf);
  return 0;
}
