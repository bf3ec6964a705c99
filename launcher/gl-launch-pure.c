/* glimpse-launch: pure helpers (no system calls, no global state), unit-tested:
 * arguments, environment, sandbox.conf, paths.  SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include "gl-launch-pure.h"
#include "gl-launch-die.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

const GlLaunchLayer gl_launch_layers[] = {
  { "home", NULL }, { "tmp", "/tmp" }, { "var-tmp", "/var/tmp" },
  { "run-user", NULL }, { "dev-shm", "/dev/shm" }, { "media", "/media" },
  { "run-media", "/run/media" }, { "mnt", "/mnt" },
  { NULL, NULL },
};

bool
gl_launch_id_is_valid (const char *id)
{
  size_t len;

  if (id == NULL)
    return false;
  len = strlen (id);
  if (len == 0 || len > GL_LAUNCH_ID_MAX)
    return false;
  for (size_t i = 0; i < len; i++)
    {
      char c = id[i];
      bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
      if (i == 0 && !alnum)
        return false;
      if (!alnum && c != '_' && c != '.' && c != '-')
        return false;
    }
  return true;
}

GlLaunchAction
gl_launch_parse_args (int argc, char *const *argv, GlLaunchArgs *out)
{
  memset (out, 0, sizeof *out);

  if (argc < 1 || argv == NULL || argv[0] == NULL)
    {
      out->error = "called without a program name";
      return GL_LAUNCH_ACTION_ERROR;
    }
  if (argc == 2 && (strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0))
    return GL_LAUNCH_ACTION_HELP;
  if (argc == 2 && strcmp (argv[1], "--version") == 0)
    return GL_LAUNCH_ACTION_VERSION;
  if (argc == 3 && strcmp (argv[1], "--held") == 0)
    {
      if (!gl_launch_id_is_valid (argv[2]))
        {
          out->error = "invalid sandbox ID after --held; see glimpse list for the IDs";
          return GL_LAUNCH_ACTION_ERROR;
        }
      out->id = argv[2];
      return GL_LAUNCH_ACTION_HELD;
    }
  if (argc < 2)
    {
      out->error = "missing sandbox ID; usage: glimpse-launch ID -- COMMAND [ARG...]";
      return GL_LAUNCH_ACTION_ERROR;
    }
  if (!gl_launch_id_is_valid (argv[1]))
    {
      out->error = "invalid sandbox ID (allowed: a letter or digit, then up to 63 of "
                   "A-Z a-z 0-9 _ . -); see glimpse list for the IDs";
      return GL_LAUNCH_ACTION_ERROR;
    }
  if (argc < 3 || strcmp (argv[2], "--") != 0)
    {
      out->error = "expected \"--\" after the sandbox ID; usage: glimpse-launch ID -- COMMAND [ARG...]";
      return GL_LAUNCH_ACTION_ERROR;
    }
  if (argc < 4 || argv[3] == NULL || argv[3][0] == '\0')
    {
      out->error = "missing command; usage: glimpse-launch ID -- COMMAND [ARG...]";
      return GL_LAUNCH_ACTION_ERROR;
    }
  out->id = argv[1];
  out->command = &argv[3];
  return GL_LAUNCH_ACTION_RUN;
}

static const char *const allowed_env[] = {
  "DISPLAY", "WAYLAND_DISPLAY", "XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS",
  "XAUTHORITY", "PULSE_SERVER", "LANG", "LANGUAGE", "TERM", "COLORTERM",
  "XDG_SESSION_TYPE", "XDG_CURRENT_DESKTOP", "XDG_SESSION_DESKTOP",
  "DESKTOP_SESSION",
  NULL
};

static const char *const notify_env[] = {
  "DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR", "DISPLAY", "WAYLAND_DISPLAY",
  NULL
};

static bool
name_in (const char *name, size_t len, const char *const *list)
{
  for (size_t i = 0; list[i] != NULL; i++)
    if (strlen (list[i]) == len && strncmp (list[i], name, len) == 0)
      return true;
  return false;
}

static bool
lc_name (const char *name, size_t len)
{
  if (len < 4 || strncmp (name, "LC_", 3) != 0)
    return false;
  for (size_t i = 3; i < len; i++)
    if (!((name[i] >= 'A' && name[i] <= 'Z') || name[i] == '_'))
      return false;
  return true;
}

bool
gl_launch_env_name_allowed (const char *name)
{
  size_t len = strcspn (name, "=");
  return name_in (name, len, allowed_env) || lc_name (name, len);
}

const char *
gl_launch_env_get (char *const *envp, const char *name)
{
  size_t len = strlen (name);
  if (envp == NULL)
    return NULL;
  for (size_t i = 0; envp[i] != NULL; i++)
    if (strncmp (envp[i], name, len) == 0 && envp[i][len] == '=')
      return envp[i] + len + 1;
  return NULL;
}

static bool
already_set (char **env, size_t n, const char *entry)
{
  size_t len = strcspn (entry, "=");
  for (size_t i = 0; i < n; i++)
    if (strncmp (env[i], entry, len) == 0 && env[i][len] == '=')
      return true;
  return false;
}

static char **
filter_env (char *const *envp, bool notify, size_t extra, size_t *n_out)
{
  size_t cap = extra + 1, n = 0;
  char **env;

  for (size_t i = 0; envp != NULL && envp[i] != NULL; i++)
    cap++;
  env = xcalloc (cap, sizeof (char *));
  for (size_t i = 0; envp != NULL && envp[i] != NULL; i++)
    {
      const char *e = envp[i];
      const char *eq = strchr (e, '=');
      size_t len;
      if (eq == NULL || eq == e)
        continue;
      len = (size_t) (eq - e);
      if (notify ? !name_in (e, len, notify_env) : !(name_in (e, len, allowed_env) || lc_name (e, len)))
        continue;
      if (strlen (eq + 1) > GL_LAUNCH_ENV_VALUE_MAX)
        continue;
      if (already_set (env, n, e))
        continue;
      env[n++] = xstrdup (e);
    }
  *n_out = n;
  return env;
}

char **
gl_launch_filter_env (char *const *envp)
{
  size_t n;
  char **env = filter_env (envp, false, 0, &n);
  env[n] = NULL;
  return env;
}

char **
gl_launch_build_env (char *const *envp, const char *home, const char *user,
                     const char *shell, const char *sandbox_id)
{
  size_t n;
  char **env = filter_env (envp, false, 6, &n);

  env[n++] = xasprintf ("HOME=%s", home);
  env[n++] = xasprintf ("USER=%s", user);
  env[n++] = xasprintf ("LOGNAME=%s", user);
  env[n++] = xasprintf ("SHELL=%s", shell);
  env[n++] = xstrdup ("PATH=" GL_LAUNCH_DEFAULT_PATH);
  env[n++] = xasprintf ("GLIMPSE_SANDBOX=%s", sandbox_id);
  env[n] = NULL;
  return env;
}

char **
gl_launch_build_notify_env (char *const *envp)
{
  size_t n;
  char **env = filter_env (envp, true, 1, &n);
  env[n++] = xstrdup ("PATH=" GL_LAUNCH_DEFAULT_PATH);
  env[n] = NULL;
  return env;
}

void
gl_launch_strv_free (char **strv)
{
  if (strv == NULL)
    return;
  for (size_t i = 0; strv[i] != NULL; i++)
    free (strv[i]);
  free (strv);
}

char *
gl_launch_conf_get_base (const char *text)
{
  bool in_group = false;
  const char *p = text;
  char *found = NULL;

  while (p != NULL && *p != '\0')
    {
      const char *end = strchr (p, '\n');
      size_t len = end ? (size_t) (end - p) : strlen (p);
      /* blanks around a line are not part of it (as GKeyFile reads it) */
      while (len > 0 && (p[0] == ' ' || p[0] == '\t'))
        p++, len--;
      while (len > 0 && (p[len - 1] == '\r' || p[len - 1] == ' ' || p[len - 1] == '\t'))
        len--;
      if (len > 0 && p[0] == '[')
        in_group = (len == 9 && strncmp (p, "[Sandbox]", 9) == 0);
      else if (in_group && len >= 5 && strncmp (p, "Base", 4) == 0)
        {
          const char *q = p + 4, *lim = p + len;
          while (q < lim && (*q == ' ' || *q == '\t'))
            q++;
          if (q < lim && *q == '=')
            {
              q++;
              while (q < lim && (*q == ' ' || *q == '\t'))
                q++;
              /* Base= twice: GKeyFile would take the last, we the first;
               * a file that says two things is refused */
              if (found != NULL)
                {
                  free (found);
                  return NULL;
                }
              found = xmalloc ((size_t) (lim - q) + 1);
              memcpy (found, q, (size_t) (lim - q));
              found[lim - q] = '\0';
            }
        }
      p = end ? end + 1 : NULL;
    }
  return found;
}

bool
gl_launch_path_has_prefix (const char *path, const char *dir)
{
  size_t len = strlen (dir);
  if (strcmp (dir, "/") == 0)
    return path[0] == '/';
  return strncmp (path, dir, len) == 0 && (path[len] == '\0' || path[len] == '/');
}

bool
gl_launch_path_is_canonical (const char *path)
{
  const char *p;
  if (path == NULL || path[0] != '/')
    return false;
  if (strcmp (path, "/") == 0)
    return true;
  p = path;
  while (*p == '/')
    {
      const char *s = ++p;
      size_t len = strcspn (s, "/");
      if (len == 0)
        return false;
      if ((len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.'))
        return false;
      p = s + len;
    }
  return *p == '\0';
}

char *
gl_launch_path_candidate (const char *search_path, const char *command, size_t i)
{
  const char *p = search_path;

  if (strchr (command, '/') != NULL)
    return i == 0 ? xstrdup (command) : NULL;
  if (p == NULL)
    p = GL_LAUNCH_DEFAULT_PATH;
  for (size_t k = 0;; k++)
    {
      size_t len = strcspn (p, ":");
      if (k == i)
        {
          if (len == 0)
            return xasprintf ("./%s", command);
          return xasprintf ("%.*s/%s", (int) len, p, command);
        }
      if (p[len] == '\0')
        return NULL;
      p += len + 1;
    }
}

void
gl_launch_printable_name (char *name)
{
  for (char *c = name; *c; c++)
    if ((unsigned char) *c < 0x20 || (unsigned char) *c >= 0x7f)
      *c = '?';
}

static bool
is_blank (char c)
{
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

GlLaunchPasswdFirst
gl_launch_nsswitch_passwd (const char *text, size_t len)
{
  GlLaunchPasswdFirst first = GL_LAUNCH_PASSWD_OTHER;
  int n_lines = 0;
  const char *p = text, *text_end = text + len;

  /* (glibc reads on past a NUL, to a passwd line we would not see) */
  if (memchr (text, '\0', len) != NULL)
    return GL_LAUNCH_PASSWD_OTHER;
  while (p < text_end)
    {
      const char *end = memchr (p, '\n', (size_t) (text_end - p));
      const char *lim = end ? end : text_end;
      const char *hash = memchr (p, '#', (size_t) (lim - p));
      const char *s, *w;

      /* As glibc reads a line (nss_database.c): a '#' starts a comment
       * anywhere; the database's name runs to a blank or ':', matched
       * with its case; then any blanks and colons - "passwd ldap" is a
       * passwd line too. */
      if (hash)
        lim = hash;
      while (p < lim && is_blank (*p))
        p++;
      w = p;
      while (p < lim && !is_blank (*p) && *p != ':')
        p++;
      if (p < lim && p - w == 6 && strncmp (w, "passwd", 6) == 0)
        {
          s = p;
          while (s < lim && (is_blank (*s) || *s == ':'))
            s++;
          n_lines++;
          first = GL_LAUNCH_PASSWD_OTHER;
          w = s;
          while (s < lim && !is_blank (*s) && *s != '[')
            s++;
          if (s - w == 5 && strncmp (w, "files", 5) == 0)
            first = GL_LAUNCH_PASSWD_FILES;
          else if (s - w == 6 && strncmp (w, "compat", 6) == 0)
            first = GL_LAUNCH_PASSWD_COMPAT;
          while (s < lim && is_blank (*s))
            s++;
          if (s < lim && *s == '[')
            first = GL_LAUNCH_PASSWD_OTHER;
        }
      p = end ? end + 1 : text_end;
    }
  return n_lines == 1 ? first : GL_LAUNCH_PASSWD_OTHER;
}

static bool
all_digits (const char *s, size_t len)
{
  if (len == 0)
    return false;
  for (size_t i = 0; i < len; i++)
    if (s[i] < '0' || s[i] > '9')
      return false;
  return true;
}

bool
gl_launch_parse_passwd_line (const char *out, size_t len, unsigned uid,
                             char **name, char **home, char **shell)
{
  const char *field[7];
  size_t flen[7];
  const char *p = out, *lim;
  char want[16];
  int n = 0;

  if (len == 0 || out[len - 1] != '\n' || memchr (out, '\0', len) != NULL
      || memchr (out, '\n', len - 1) != NULL)
    return false;
  lim = out + len - 1;
  for (;;)
    {
      const char *colon = memchr (p, ':', (size_t) (lim - p));
      const char *e = colon ? colon : lim;
      if (n == 7)
        return false;
      field[n] = p;
      flen[n] = (size_t) (e - p);
      n++;
      if (colon == NULL)
        break;
      p = colon + 1;
    }
  snprintf (want, sizeof want, "%u", uid);
  if (n != 7 || flen[0] == 0
      || flen[2] != strlen (want) || memcmp (field[2], want, flen[2]) != 0
      || !all_digits (field[3], flen[3]))
    return false;
  *name = xasprintf ("%.*s", (int) flen[0], field[0]);
  *home = xasprintf ("%.*s", (int) flen[5], field[5]);
  *shell = xasprintf ("%.*s", (int) flen[6], field[6]);
  return true;
}
