/* TAP unit test of glimpse-launch's pure helpers and its mount-table reader.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include "gl-launch-mount.h"
#include "gl-launch-pure.h"

#include <errno.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int n_test = 0, n_fail = 0;

static void
ok (int cond, const char *what)
{
  n_test++;
  if (!cond)
    n_fail++;
  printf ("%sok %d - %s\n", cond ? "" : "not ", n_test, what);
}

static int
has (char **env, const char *entry)
{
  for (size_t i = 0; env[i]; i++)
    if (strcmp (env[i], entry) == 0)
      return 1;
  return 0;
}

/* A stream that gives the first CUT bytes of a mountinfo text, then fails
 * with EIO (or ends, when CUT is past the end). */
typedef struct {
  const char *text;
  size_t pos, cut;
} Failing;

static ssize_t
failing_read (void *cookie, char *buf, size_t size)
{
  Failing *f = cookie;
  size_t len = strlen (f->text), n;
  if (f->pos >= f->cut && f->cut < len)
    {
      errno = EIO;
      return -1;
    }
  n = (f->cut < len ? f->cut : len) - f->pos;
  if (n > size)
    n = size;
  memcpy (buf, f->text + f->pos, n);
  f->pos += n;
  return (ssize_t) n;
}

static int
parse_text (const char *text, size_t cut, GlLaunchMountTable *t, char **error)
{
  Failing f = { text, 0, cut };
  cookie_io_functions_t io = { failing_read, NULL, NULL, NULL };
  FILE *fp = fopencookie (&f, "r", io);
  int rc;
  setvbuf (fp, NULL, _IONBF, 0);
  rc = gl_launch_mount_table_parse (fp, "test", t, error);
  fclose (fp);
  return rc;
}

static int
overlay_ids_text (const char *text, size_t cut, unsigned *ids, size_t max, size_t *n)
{
  Failing f = { text, 0, cut };
  cookie_io_functions_t io = { failing_read, NULL, NULL, NULL };
  FILE *fp = fopencookie (&f, "r", io);
  int rc;
  setvbuf (fp, NULL, _IONBF, 0);
  rc = gl_launch_mount_table_overlay_ids (fp, ids, NULL, max, n);
  fclose (fp);
  return rc;
}

static int
has_name (char **env, const char *name)
{
  return gl_launch_env_get (env, name) != NULL;
}

int
main (void)
{
  char long_id[4097];
  GlLaunchArgs a;

  /* IDs (SECURITY.md case 3) */
  ok (gl_launch_id_is_valid ("debian-sid"), "id debian-sid valid");
  ok (gl_launch_id_is_valid ("a"), "id a valid");
  ok (gl_launch_id_is_valid ("A1_b.c-d"), "id A1_b.c-d valid");
  ok (!gl_launch_id_is_valid (""), "empty id refused");
  ok (!gl_launch_id_is_valid (NULL), "NULL id refused");
  ok (!gl_launch_id_is_valid (".."), "id .. refused");
  ok (!gl_launch_id_is_valid ("."), "id . refused");
  ok (!gl_launch_id_is_valid ("../x"), "id ../x refused");
  ok (!gl_launch_id_is_valid ("a/b"), "id a/b refused");
  ok (!gl_launch_id_is_valid ("x,lowerdir=/root"), "id x,lowerdir=/root refused");
  ok (!gl_launch_id_is_valid ("-x"), "id -x refused");
  ok (!gl_launch_id_is_valid ("_x"), "id _x refused");
  ok (!gl_launch_id_is_valid ("a b"), "id with space refused");
  ok (!gl_launch_id_is_valid ("a\nb"), "id with newline refused");
  ok (!gl_launch_id_is_valid ("a:b"), "id with colon refused");
  memset (long_id, 'a', 64);
  long_id[64] = '\0';
  ok (gl_launch_id_is_valid (long_id), "64-char id valid");
  long_id[64] = 'a';
  long_id[65] = '\0';
  ok (!gl_launch_id_is_valid (long_id), "65-char id refused");
  memset (long_id, 'a', 4096);
  long_id[4096] = '\0';
  ok (!gl_launch_id_is_valid (long_id), "4 KiB id refused");

  /* Arguments */
  {
    char *v1[] = { "gl", "--help", NULL };
    char *v2[] = { "gl", "--version", NULL };
    char *v3[] = { "gl", "sid", "--", "echo", "hi", NULL };
    char *v4[] = { "gl", "sid", "echo", NULL };
    char *v5[] = { "gl", "sid", "--", NULL };
    char *v6[] = { "gl", "../x", "--", "echo", NULL };
    char *v7[] = { "gl", NULL };
    char *v8[] = { "gl", "--help", "x", NULL };
    char *v9[] = { "gl", "sid", "--", "", NULL };
    char *v10[] = { NULL };
    char *v11[] = { "gl", "--held", "sid", NULL };
    char *v12[] = { "gl", "--held", "../x", NULL };
    char *v13[] = { "gl", "--held", "sid", "x", NULL };
    ok (gl_launch_parse_args (2, v1, &a) == GL_LAUNCH_ACTION_HELP, "--help");
    ok (gl_launch_parse_args (2, v2, &a) == GL_LAUNCH_ACTION_VERSION, "--version");
    ok (gl_launch_parse_args (5, v3, &a) == GL_LAUNCH_ACTION_RUN && strcmp (a.id, "sid") == 0
        && strcmp (a.command[0], "echo") == 0 && strcmp (a.command[1], "hi") == 0
        && a.command[2] == NULL, "ID -- COMMAND ARG");
    ok (gl_launch_parse_args (3, v4, &a) == GL_LAUNCH_ACTION_ERROR, "missing -- refused");
    ok (gl_launch_parse_args (3, v5, &a) == GL_LAUNCH_ACTION_ERROR, "missing command refused");
    ok (gl_launch_parse_args (4, v6, &a) == GL_LAUNCH_ACTION_ERROR && a.error != NULL,
        "bad id refused with a message");
    ok (gl_launch_parse_args (1, v7, &a) == GL_LAUNCH_ACTION_ERROR, "no args refused");
    ok (gl_launch_parse_args (3, v8, &a) == GL_LAUNCH_ACTION_ERROR, "--help with extra refused");
    ok (gl_launch_parse_args (4, v9, &a) == GL_LAUNCH_ACTION_ERROR, "empty command refused");
    ok (gl_launch_parse_args (0, v10, &a) == GL_LAUNCH_ACTION_ERROR, "empty argv refused");
    ok (gl_launch_parse_args (3, v11, &a) == GL_LAUNCH_ACTION_HELD && strcmp (a.id, "sid") == 0
        && a.command == NULL, "--held ID");
    ok (gl_launch_parse_args (3, v12, &a) == GL_LAUNCH_ACTION_ERROR && a.error != NULL,
        "--held with a bad id refused");
    ok (gl_launch_parse_args (4, v13, &a) == GL_LAUNCH_ACTION_ERROR, "--held with extra refused");
  }

  /* Environment allow-list (SECURITY.md case 2) */
  {
    char big[GL_LAUNCH_ENV_VALUE_MAX + 20];
    char *envp[] = {
      "DISPLAY=:1", "DISPLAY=:2", "LD_PRELOAD=/tmp/evil.so", "LD_LIBRARY_PATH=/tmp",
      "LD_AUDIT=/tmp/a.so", "GCONV_PATH=/tmp", "GLIBC_TUNABLES=glibc.malloc.check=3",
      "MALLOC_CHECK_=3", "MALLOC_ARENA_MAX=1", "HOME=/root", "USER=root", "PATH=/tmp/evil",
      "SHELL=/tmp/sh", "LANG=de_DE.UTF-8", "LC_ALL=C", "LC_TIME=en_GB.UTF-8", "LC_=x",
      "LC_evil=x", "TERM=xterm", "WAYLAND_DISPLAY=wayland-0", "DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1/bus",
      "XDG_RUNTIME_DIR=/run/user/1", "XAUTHORITY=/x", "PULSE_SERVER=unix:/p", "COLORTERM=truecolor",
      "XDG_SESSION_TYPE=wayland", "XDG_CURRENT_DESKTOP=GNOME", "GLIMPSE_SANDBOX=evil",
      "IFS=x", "ENV=/tmp/x", "BASH_ENV=/tmp/x", "=novalue", "NOEQUALS", big, NULL
    };
    char **env;
    snprintf (big, sizeof big, "TERM=");
    memset (big + 5, 'x', GL_LAUNCH_ENV_VALUE_MAX + 1);
    big[5 + GL_LAUNCH_ENV_VALUE_MAX + 1] = '\0';
    env = gl_launch_build_env (envp, "/home/u", "u", "/bin/bash", "sid");
    ok (has (env, "DISPLAY=:1") && !has (env, "DISPLAY=:2"), "first DISPLAY kept, once");
    ok (!has_name (env, "LD_PRELOAD") && !has_name (env, "LD_LIBRARY_PATH")
        && !has_name (env, "LD_AUDIT"), "LD_* dropped");
    ok (!has_name (env, "GCONV_PATH") && !has_name (env, "GLIBC_TUNABLES"), "GCONV_PATH, GLIBC_TUNABLES dropped");
    ok (!has_name (env, "MALLOC_CHECK_") && !has_name (env, "MALLOC_ARENA_MAX"), "MALLOC_* dropped");
    ok (has (env, "HOME=/home/u") && !has (env, "HOME=/root"), "HOME from passwd");
    ok (has (env, "USER=u") && has (env, "LOGNAME=u") && has (env, "SHELL=/bin/bash"), "USER/LOGNAME/SHELL from passwd");
    ok (has (env, "PATH=" GL_LAUNCH_DEFAULT_PATH) && !has (env, "PATH=/tmp/evil"), "PATH reset");
    ok (has (env, "GLIMPSE_SANDBOX=sid") && !has (env, "GLIMPSE_SANDBOX=evil"), "GLIMPSE_SANDBOX set");
    ok (has (env, "LANG=de_DE.UTF-8") && has (env, "LC_ALL=C") && has (env, "LC_TIME=en_GB.UTF-8"), "locale kept");
    ok (!has_name (env, "LC_") && !has_name (env, "LC_evil"), "odd LC_ names dropped");
    ok (has (env, "TERM=xterm") && has_name (env, "WAYLAND_DISPLAY") && has_name (env, "DBUS_SESSION_BUS_ADDRESS")
        && has_name (env, "XDG_RUNTIME_DIR") && has_name (env, "XAUTHORITY") && has_name (env, "PULSE_SERVER")
        && has_name (env, "COLORTERM") && has_name (env, "XDG_SESSION_TYPE") && has_name (env, "XDG_CURRENT_DESKTOP"),
        "desktop variables kept");
    ok (!has_name (env, "IFS") && !has_name (env, "ENV") && !has_name (env, "BASH_ENV"), "shell hooks dropped");
    {
      int n = 0;
      for (size_t i = 0; env[i]; i++)
        if (strncmp (env[i], "TERM=", 5) == 0)
          n++;
      ok (n == 1, "over-long value dropped");
    }
    gl_launch_strv_free (env);
    env = gl_launch_build_notify_env (envp);
    ok (has (env, "DISPLAY=:1") && has_name (env, "DBUS_SESSION_BUS_ADDRESS") && !has_name (env, "LANG")
        && !has_name (env, "LD_PRELOAD") && !has_name (env, "HOME"), "notify env minimal");
    gl_launch_strv_free (env);
    env = gl_launch_filter_env (envp);
    ok (!has_name (env, "HOME") && !has_name (env, "PATH") && has_name (env, "TERM"), "filter only");
    gl_launch_strv_free (env);
  }

  /* sandbox.conf */
  {
    char *b;
    b = gl_launch_conf_get_base ("[Sandbox]\nProfile=debian\nBase=host\n");
    ok (b && strcmp (b, "host") == 0, "Base=host");
    free (b);
    b = gl_launch_conf_get_base ("# c\n[Other]\nBase=host\n[Sandbox]\nBase = rootfs \r\n");
    ok (b && strcmp (b, "rootfs") == 0, "Base in [Sandbox] only, trimmed");
    free (b);
    b = gl_launch_conf_get_base ("[Other]\nBase=host\n");
    ok (b == NULL, "Base outside [Sandbox] ignored");
    b = gl_launch_conf_get_base ("[Sandbox]\nBasement=host\n");
    ok (b == NULL, "Basement is not Base");
  }

  /* mount tables (SECURITY.md case 28) */
  {
    static const char text[] =
      "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
      "36 22 98:0 /mnt1 /mnt/with\\040space rw,noatime master:1 - ext3 /dev/root rw,errors=continue\n"
      "37 22 0:5 / /proc rw - proc proc rw\n";
    GlLaunchMountTable t;
    char *error = NULL;
    int rc = parse_text (text, sizeof text, &t, &error);
    ok (rc == 0 && t.n == 3 && strcmp (t.paths[1], "/mnt/with space") == 0
        && strcmp (t.paths[2], "/proc") == 0, "mountinfo read whole, octal unescaped");
    gl_launch_mount_table_clear (&t);
    free (error);
    error = NULL;
    /* the read fails after the second line: an error, not two mounts */
    rc = parse_text (text, strchr (strchr (text, '\n') + 1, '\n') + 1 - text, &t, &error);
    ok (rc < 0 && t.n == 0 && error != NULL && strstr (error, "test") != NULL,
        "a read error part of the way is an error, never a shorter table");
    free (error);
    error = NULL;
    rc = parse_text (text, 10, &t, &error);
    ok (rc < 0 && t.n == 0, "a read error inside a line is an error");
    free (error);
    error = NULL;
    /* several optional fields, escapes in the type and options */
    rc = parse_text ("40 22 0:50 / /run/user/1000/doc rw,nosuid shared:5 master:2 - "
                     "fuse.portal\134x portal rw,user_id=1000,group_id=1000\054x\n"
                     "41 22 0:51 / none rw - tmpfs none rw\n", (size_t) -1, &t, &error);
    ok (rc == 0 && t.n == 1 && strcmp (t.paths[0], "/run/user/1000/doc") == 0
        && strcmp (t.fstypes[0], "fuse.portal\\x") == 0
        && strcmp (t.fsopts[0], "rw,user_id=1000,group_id=1000,x") == 0,
        "mountinfo: optional fields skipped, type and options unescaped, relative targets left out");
    gl_launch_mount_table_clear (&t);
    free (error);
    /* lines the kernel never writes: an error, not a table without them */
    {
      static const char *const bad[] = {
        "36 22 98:0 /mnt1 /mnt/x rw,noatime master:1 ext3 /dev/root rw\n",      /* no "-" */
        "36 22 98:0 /mnt1 /mnt/x rw - ext3 /dev/root\n",                          /* short */
        "36 22 98:0 /mnt1 /mnt/x rw - ext3 /dev/root rw extra\n",                 /* long */
        "36 22 98:0 /mnt1 /mnt/x\\000y rw - ext3 /dev/root rw\n",               /* NUL */
        "36 22 98:0 /\n",
      };
      bool all = true;
      for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        {
          error = NULL;
          rc = parse_text (bad[i], (size_t) -1, &t, &error);
          if (rc == 0 || t.n != 0 || error == NULL || strstr (error, "line 1") == NULL)
            all = false;
          free (error);
        }
      ok (all, "a line not in the mountinfo format is an error naming the line");
    }
  }
  {
    /* The real table under a caller's tiny address-space limit: the
     * launcher dies with a message, or reads the whole table. */
    GlLaunchMountTable whole = gl_launch_mount_table_read ();
    int p[2];
    pid_t pid;
    int st = 0;
    char buf[512] = "";
    ssize_t n;
    if (pipe (p) != 0)
      abort ();
    pid = fork ();
    if (pid == 0)
      {
        /* grow the heap's need: many lines, little memory */
        struct rlimit rl = { 0, 0 };
        GlLaunchMountTable t;
        char *error = NULL;
        FILE *f = fopen ("/proc/self/mountinfo", "re");
        dup2 (p[1], 2);
        rl.rlim_cur = rl.rlim_max = 1;    /* no more memory at all */
        (void) setrlimit (RLIMIT_AS, &rl);
        if (f == NULL || gl_launch_mount_table_parse (f, "/proc/self/mountinfo", &t, &error) != 0)
          _exit (3);
        _exit (t.n == whole.n ? 0 : 4);
      }
    close (p[1]);
    n = read (p[0], buf, sizeof buf - 1);
    (void) n;
    waitpid (pid, &st, 0);
    ok (WIFEXITED (st) && (WEXITSTATUS (st) == 0 || WEXITSTATUS (st) == 3 || WEXITSTATUS (st) == 125),
        "under RLIMIT_AS the table is whole or an error (never shorter)");
    gl_launch_mount_table_clear (&whole);
  }

  /* the view's overlays, for root's record of it (SECURITY.md case 28):
   * its own (source "glimpse": the root, the merged and the writable
   * ones), not the host's bound into it; a read error, a line not in the
   * format or too many is an error, never a shorter list */
  {
    static const char view[] =
      "500 499 0:60 / / ro,nosuid,nodev - overlay " GL_LAUNCH_OVERLAY_SOURCE " ro,lowerdir=/proc/self/fd/7,userxattr\n"
      "501 500 0:61 / /home/a rw,nosuid,nodev - overlay " GL_LAUNCH_OVERLAY_SOURCE " rw,lowerdir=/proc/self/fd/9,upperdir=/proc/self/fd/10,workdir=/proc/self/fd/11,userxattr\n"
      "502 500 0:62 / /var/lib/docker/overlay2/x/merged ro - overlay overlay rw,lowerdir=/l,upperdir=/u,workdir=/w\n"
      "503 500 0:63 / /usr/share/themes ro,nosuid,nodev - overlay " GL_LAUNCH_OVERLAY_SOURCE " ro,lowerdir=/proc/self/fd/3:/proc/self/fd/4,userxattr\n"
      "504 500 0:64 / /proc rw - proc proc rw\n";
    unsigned ids[32];
    size_t n = 0;
    char *big = NULL, *many = NULL;
    size_t off = 0;
    int rc = overlay_ids_text (view, sizeof view, ids, 32, &n);
    ok (rc == 0 && n == 3 && ids[0] == 500 && ids[1] == 501 && ids[2] == 503,
        "overlay IDs: the view's own overlays (read-only ones too), not the host's");
    rc = overlay_ids_text (view, strchr (view, '\n') + 1 - view, ids, 32, &n);
    ok (rc == -EIO, "overlay IDs: a read error part of the way is an error, not a shorter list");
    /* a line longer than any buffer (a host overlay with many lower
     * layers): read whole, its numbers never taken for a line's ID */
    big = malloc (20000);
    off = (size_t) snprintf (big, 20000, "600 1 0:70 / /var/lib/c/merged ro - overlay overlay rw,lowerdir=");
    while (off < 9000)
      off += (size_t) snprintf (big + off, 20000 - off, "/l/4097\\040-\\040overlay\\040" GL_LAUNCH_OVERLAY_SOURCE ":");
    snprintf (big + off, 20000 - off, ",upperdir=/u,workdir=/w\n%s", view);
    rc = overlay_ids_text (big, (size_t) -1, ids, 32, &n);
    ok (rc == 0 && n == 3 && ids[0] == 500 && ids[2] == 503,
        "overlay IDs: a line longer than 4096 bytes is read whole");
    rc = overlay_ids_text ("500 499 0:60 / / ro - overlay\n", (size_t) -1, ids, 32, &n);
    ok (rc == -EINVAL, "overlay IDs: a line not in the format is an error");
    rc = overlay_ids_text ("x500 499 0:60 / / ro - overlay " GL_LAUNCH_OVERLAY_SOURCE " ro\n",
                           (size_t) -1, ids, 32, &n);
    ok (rc == -EINVAL, "overlay IDs: a line whose ID is not a number is an error");
    many = malloc (64 * 128);
    off = 0;
    for (int i = 0; i < 40; i++)
      off += (size_t) snprintf (many + off, 64 * 128 - off, "%d 1 0:1 / /m%d ro - overlay "
                                GL_LAUNCH_OVERLAY_SOURCE " ro\n", 700 + i, i);
    rc = overlay_ids_text (many, (size_t) -1, ids, 32, &n);
    ok (rc == -E2BIG, "overlay IDs: more than fit is an error, not the first ones");
    free (big);
    free (many);
  }

  /* paths */
  ok (gl_launch_path_has_prefix ("/run/user/1", "/run/user/1"), "prefix: equal");
  ok (gl_launch_path_has_prefix ("/run/user/1/x", "/run/user/1"), "prefix: below");
  ok (!gl_launch_path_has_prefix ("/run/user/10", "/run/user/1"), "prefix: not a sibling");
  ok (gl_launch_path_has_prefix ("/x", "/"), "prefix: root");
  ok (gl_launch_path_is_canonical ("/var/lib/glimpse"), "canonical");
  ok (gl_launch_path_is_canonical ("/"), "canonical /");
  ok (!gl_launch_path_is_canonical ("/var//lib"), "not canonical //");
  ok (!gl_launch_path_is_canonical ("/var/../etc"), "not canonical ..");
  ok (!gl_launch_path_is_canonical ("/var/./lib"), "not canonical .");
  ok (!gl_launch_path_is_canonical ("/var/"), "not canonical trailing /");
  ok (!gl_launch_path_is_canonical ("var"), "not canonical relative");
  {
    char *c0 = gl_launch_path_candidate ("/a:/b::/c", "ls", 0);
    char *c1 = gl_launch_path_candidate ("/a:/b::/c", "ls", 1);
    char *c2 = gl_launch_path_candidate ("/a:/b::/c", "ls", 2);
    char *c3 = gl_launch_path_candidate ("/a:/b::/c", "ls", 3);
    char *c4 = gl_launch_path_candidate ("/a:/b::/c", "ls", 4);
    char *d0 = gl_launch_path_candidate ("/a", "./x", 0);
    char *d1 = gl_launch_path_candidate ("/a", "./x", 1);
    ok (strcmp (c0, "/a/ls") == 0 && strcmp (c1, "/b/ls") == 0 && strcmp (c2, "./ls") == 0
        && strcmp (c3, "/c/ls") == 0 && c4 == NULL, "PATH candidates");
    ok (strcmp (d0, "./x") == 0 && d1 == NULL, "command with / is used as is");
    free (c0); free (c1); free (c2); free (c3); free (d0);
  }

  /* a process's name on root's terminal (remove, reclaim; a held view) */
  {
    char name[] = "a\033]0;x\007 \302\233" "31m~\177\tz";
    gl_launch_printable_name (name);
    ok (strcmp (name, "a?]0;x? ??31m~??z") == 0, "a process name keeps printable ASCII only");
  }

  /* nsswitch.conf's passwd line: may the static launcher read /etc/passwd
   * itself (lookup_user)? */
  {
    static const struct { const char *text; GlLaunchPasswdFirst want; } ns[] = {
      { "passwd:         files systemd\ngroup: files\n", GL_LAUNCH_PASSWD_FILES },
      { "passwd: files\n", GL_LAUNCH_PASSWD_FILES },
      { "# c\n  passwd:\tfiles # passwd: ldap\n", GL_LAUNCH_PASSWD_FILES },
      { "passwd : files", GL_LAUNCH_PASSWD_FILES },
      { "passwd:: files\n", GL_LAUNCH_PASSWD_FILES },
      { "passwd files\n", GL_LAUNCH_PASSWD_FILES },
      /* (glibc: the name with its case; "PASSWD:" is not the line) */
      { "PASSWD: files\n", GL_LAUNCH_PASSWD_OTHER },
      { "PASSWD: ldap\npasswd: files\n", GL_LAUNCH_PASSWD_FILES },
      /* (glibc: "passwd ldap" is a passwd line, and the last one wins) */
      { "passwd: files\npasswd ldap\n", GL_LAUNCH_PASSWD_OTHER },
      { "passwd: files\npasswd\tsss files\n", GL_LAUNCH_PASSWD_OTHER },
      { "passwd: compat systemd\n", GL_LAUNCH_PASSWD_COMPAT },
      { "passwd: ldap files\n", GL_LAUNCH_PASSWD_OTHER },
      { "passwd: sss files\n", GL_LAUNCH_PASSWD_OTHER },
      { "passwd: files [SUCCESS=continue] ldap\n", GL_LAUNCH_PASSWD_OTHER },
      { "passwd: files[SUCCESS=continue] ldap\n", GL_LAUNCH_PASSWD_OTHER },
      { "passwd: [NOTFOUND=return] files\n", GL_LAUNCH_PASSWD_OTHER },
      { "passwd: filesx\n", GL_LAUNCH_PASSWD_OTHER },
      { "passwd:\n", GL_LAUNCH_PASSWD_OTHER },
      { "passwd: files\npasswd: ldap\n", GL_LAUNCH_PASSWD_OTHER },
      { "passwdx: files\ngroup: files\n", GL_LAUNCH_PASSWD_OTHER },
      { "#passwd: files\n", GL_LAUNCH_PASSWD_OTHER },
      { "group: files\n", GL_LAUNCH_PASSWD_OTHER },
      { "", GL_LAUNCH_PASSWD_OTHER },
    };
    bool all = true;
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
      if (gl_launch_nsswitch_passwd (ns[i].text, strlen (ns[i].text)) != ns[i].want)
        {
          all = false;
          printf ("# nsswitch case %zu: got %d\n", i,
                  (int) gl_launch_nsswitch_passwd (ns[i].text, strlen (ns[i].text)));
        }
    ok (all, "nsswitch.conf: /etc/passwd first only for files or compat, without an action");
    {
      /* glibc reads past the NUL to the last passwd line: ldap first */
      static const char nul[] = "passwd: files\n#\0\npasswd: ldap files\n";
      ok (gl_launch_nsswitch_passwd (nul, sizeof nul - 1) == GL_LAUNCH_PASSWD_OTHER,
          "nsswitch.conf with a NUL: not read as files first");
    }
  }

  /* `getent passwd UID`'s output, read strictly (lookup_user's fallback) */
  {
    static const char good[] = "dyn:x:61999:61999:Dyn User:/var/lib/dyn:/bin/bash\n";
    static const char empty_home[] = "dyn:*:61999:61999:::\n";
    static const char *const bad[] = {
      "dyn:x:61999:61999:Dyn User:/var/lib/dyn:/bin/bash",            /* no newline */
      "dyn:x:61999:61999:Dyn User:/var/lib/dyn:/bin/bash\n\n",        /* two lines */
      "dyn:x:61999:61999:Dyn User:/var/lib/dyn:/bin/bash\nroot:x:0:0::/root:/bin/sh\n",
      "dyn:x:61999:61999:Dyn User:/var/lib/dyn:/bin/bash:x\n",        /* 8 fields */
      "dyn:x:61999:61999:/var/lib/dyn:/bin/bash\n",                   /* 6 fields */
      "dyn:x:0:0:Dyn User:/root:/bin/bash\n",                         /* another uid */
      "dyn:x:619990:61999::/h:/bin/sh\n",
      "dyn:x:061999:61999::/h:/bin/sh\n",
      "dyn:x:+61999:61999::/h:/bin/sh\n",
      "dyn:x: 61999:61999::/h:/bin/sh\n",
      "dyn:x::61999::/h:/bin/sh\n",
      "dyn:x:61999:x::/h:/bin/sh\n",                                  /* gid not a number */
      "dyn:x:61999:::/h:/bin/sh\n",
      ":x:61999:61999::/h:/bin/sh\n",                                 /* no name */
      "\n",
      "",
    };
    char nul[] = "dyn:x:61999:61999::/h\0/x:/bin/sh\n";
    char *name = NULL, *home = NULL, *shell = NULL;
    bool refused = true;

    ok (gl_launch_parse_passwd_line (good, strlen (good), 61999, &name, &home, &shell)
        && strcmp (name, "dyn") == 0 && strcmp (home, "/var/lib/dyn") == 0
        && strcmp (shell, "/bin/bash") == 0, "getent's passwd line read");
    free (name); free (home); free (shell);
    ok (gl_launch_parse_passwd_line (empty_home, strlen (empty_home), 61999, &name, &home, &shell)
        && strcmp (name, "dyn") == 0 && home[0] == '\0' && shell[0] == '\0',
        "empty home and shell are read as empty (the launcher's defaults then)");
    free (name); free (home); free (shell);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
      if (gl_launch_parse_passwd_line (bad[i], strlen (bad[i]), 61999, &name, &home, &shell))
        {
          refused = false;
          printf ("# accepted: %s", bad[i]);
        }
    ok (refused, "getent output that is not exactly one passwd line of the uid is refused");
    ok (!gl_launch_parse_passwd_line (nul, sizeof nul - 1, 61999, &name, &home, &shell),
        "getent output with a NUL is refused");
  }

  printf ("1..%d\n", n_test);
  return n_fail ? 1 : 0;
}
