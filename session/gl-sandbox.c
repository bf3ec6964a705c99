/* gl-sandbox.c: one sandbox of the store: sandbox.conf, its layers, its locks
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-sandbox.h"
#include "gl-sandbox-private.h"
#include "gl-fsutil.h"
#include "gl-paths.h"
#include "gl-printable.h"
#include "gl-spawn.h"
#include "gl-store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <glib/gstdio.h>

#define SANDBOX_GROUP "Sandbox"

void
gl_sandbox_free (GlSandbox *sandbox)
{
  if (sandbox == NULL)
    return;
  g_free (sandbox->id);
  g_free (sandbox->path);
  g_free (sandbox->profile);
  g_free (sandbox->name);
  g_free (sandbox->base);
  g_free (sandbox->family);
  g_free (sandbox->release);
  g_free (sandbox->follows);
  g_strfreev (sandbox->launchers);
  g_strfreev (sandbox->added_launchers);
  g_strfreev (sandbox->hidden_launchers);
  g_strfreev (sandbox->repositories);
  g_strfreev (sandbox->repository_uris);
  g_clear_pointer (&sandbox->created, g_date_time_unref);
  g_clear_pointer (&sandbox->updated, g_date_time_unref);
  g_free (sandbox);
}

gboolean
gl_sandbox_id_is_valid (const char *id)
{
  gsize len;

  if (id == NULL || !g_ascii_isalnum (id[0]))
    return FALSE;
  len = strlen (id);
  if (len > 64)
    return FALSE;
  for (gsize i = 1; i < len; i++)
    {
      char c = id[i];
      if (!g_ascii_isalnum (c) && c != '_' && c != '.' && c != '-')
        return FALSE;
    }
  return TRUE;
}

gboolean
gl_sandbox_name_validate (const char *name, GError **error)
{
  glong len = name != NULL && g_utf8_validate (name, -1, NULL) ? g_utf8_strlen (name, -1) : -1;

  if (len < 1 || len > 128)
    {
      g_set_error_literal (error, GL_STORE_ERROR, GL_STORE_ERROR_INVALID_ID,
                           len < 0 ? "The display name is not valid UTF-8; give it in your terminal's encoding"
                                   : "The display name must be 1 to 128 characters long");
      return FALSE;
    }
  for (const char *p = name; *p != '\0'; p++)
    if ((guchar) *p < 0x20 || *p == 0x7f)
      {
        g_set_error_literal (error, GL_STORE_ERROR, GL_STORE_ERROR_INVALID_ID,
                             "The display name holds a control character (a tab or line break); "
                             "give it on one line");
        return FALSE;
      }
  return TRUE;
}

gboolean
gl_sandbox_id_validate (const char *id, GError **error)
{
  if (gl_sandbox_id_is_valid (id))
    return TRUE;

  if (id == NULL || *id == '\0')
    g_set_error_literal (error, GL_STORE_ERROR, GL_STORE_ERROR_INVALID_ID,
                         "The sandbox name is empty; give a name of letters, digits, '.', '_' or '-'");
  else if (strlen (id) > 64)
    g_set_error (error, GL_STORE_ERROR, GL_STORE_ERROR_INVALID_ID,
                 "The sandbox name is %zu characters long; use at most 64", strlen (id));
  else
    {
      g_autofree char *shown = g_strescape (id, NULL);
      g_set_error (error, GL_STORE_ERROR, GL_STORE_ERROR_INVALID_ID,
                   "“%s” is not a valid sandbox name: it must start with a letter or digit "
                   "and contain only letters, digits, '.', '_' and '-'", shown);
    }
  return FALSE;
}

static GDateTime *
get_time (GKeyFile *kf, const char *key)
{
  g_autofree char *value = g_key_file_get_string (kf, SANDBOX_GROUP, key, NULL);

  if (value == NULL)
    return NULL;
  return g_date_time_new_from_iso8601 (value, NULL);
}

#define BASE_RECORD_GROUP "Base"

guint
gl_sandbox_generation_base (const char *system, guint n)
{
  g_autofree char *num = g_strdup_printf ("%u", n);
  g_autofree char *path = g_build_filename (system, num, "base", NULL);
  g_autofree char *text = NULL;
  guint64 g = 0;

  if (n == 0 || !g_file_get_contents (path, &text, NULL, NULL)
      || !g_ascii_string_to_unsigned (g_strstrip (text), 10, 1, G_MAXUINT32, &g, NULL))
    return 0;
  return (guint) g;
}

gboolean
gl_sandbox_write_base_record (const char *base_dir, const char *release, const char *follows,
                              GError **error)
{
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  g_autofree char *path = g_build_filename (base_dir, "release", NULL);
  g_autofree char *data = NULL;
  gsize length = 0;

  /* (the group alone: the base has no release of its own) */
  if (!g_key_file_load_from_data (kf, "[" BASE_RECORD_GROUP "]\n", -1, G_KEY_FILE_NONE, error))
    return FALSE;
  if (release != NULL)
    g_key_file_set_string (kf, BASE_RECORD_GROUP, "Release", release);
  if (follows != NULL)
    g_key_file_set_string (kf, BASE_RECORD_GROUP, "Follows", follows);
  data = g_key_file_to_data (kf, &length, NULL);
  return g_file_set_contents_full (path, data, (gssize) length, G_FILE_SET_CONTENTS_DURABLE, 0644, error);
}

/* The release of the base the current generation lies over, when a
 * rebase recorded it (gl_sandbox_write_base_record): it wins over
 * sandbox.conf, which a crash may have left behind. */
static void
load_base_record (GlSandbox *sandbox)
{
  g_autofree char *system = g_build_filename (sandbox->path, "system", NULL);
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  g_autofree char *name = NULL, *path = NULL;
  guint n = 0, g;

  if (!gl_sandbox_get_system_generation (sandbox, &n, NULL) || n == 0
      || (g = gl_sandbox_generation_base (system, n)) == 0)
    return;
  name = g_strdup_printf ("base-%u", g);
  path = g_build_filename (system, name, "release", NULL);
  if (!g_key_file_load_from_file (kf, path, G_KEY_FILE_NONE, NULL)
      || !g_key_file_has_group (kf, BASE_RECORD_GROUP))
    return;
  g_free (sandbox->release);
  sandbox->release = g_key_file_get_string (kf, BASE_RECORD_GROUP, "Release", NULL);
  g_free (sandbox->follows);
  sandbox->follows = g_key_file_get_string (kf, BASE_RECORD_GROUP, "Follows", NULL);
}

GlSandbox *
gl_sandbox_load_from_data (const char *id, const char *path,
                           const char *data, gsize length, GError **error)
{
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  g_autoptr(GlSandbox) sandbox = g_new0 (GlSandbox, 1);
  g_autoptr(GError) local_error = NULL;

  if (!g_key_file_load_from_data (kf, data, length, G_KEY_FILE_KEEP_COMMENTS, &local_error))
    {
      guint line = gl_keyfile_bad_line (data, length);
      g_autofree char *where = line ? g_strdup_printf ("%s/sandbox.conf:%u", path, line)
                                    : g_strdup_printf ("%s/sandbox.conf", path);
      g_set_error (error, GL_STORE_ERROR, GL_STORE_ERROR_MALFORMED,
                   "%s: %s", where, local_error->message);
      return NULL;
    }

  sandbox->id = g_strdup (id);
  sandbox->path = g_strdup (path);
  sandbox->profile = g_key_file_get_string (kf, SANDBOX_GROUP, "Profile", &local_error);
  if (sandbox->profile == NULL)
    {
      g_set_error (error, GL_STORE_ERROR, GL_STORE_ERROR_MALFORMED,
                   "%s/sandbox.conf: %s", path, local_error->message);
      return NULL;
    }
  if (gl_keyfile_count_key (data, length, SANDBOX_GROUP, "Base") > 1)
    {
      /* the launcher would read another one than GKeyFile: refuse both */
      g_set_error (error, GL_STORE_ERROR, GL_STORE_ERROR_MALFORMED,
                   "%s/sandbox.conf: key “Base” is given more than once", path);
      return NULL;
    }
  sandbox->base = g_key_file_get_string (kf, SANDBOX_GROUP, "Base", &local_error);
  if (sandbox->base == NULL)
    {
      g_set_error (error, GL_STORE_ERROR, GL_STORE_ERROR_MALFORMED,
                   "%s/sandbox.conf: %s", path, local_error->message);
      return NULL;
    }
  /* (trailing blanks as the launcher reads it: tests/test-contract.c) */
  g_strchomp (sandbox->base);
  if (!g_str_equal (sandbox->base, GL_BASE_HOST) && !g_str_equal (sandbox->base, GL_BASE_ROOTFS))
    {
      g_set_error (error, GL_STORE_ERROR, GL_STORE_ERROR_MALFORMED,
                   "%s/sandbox.conf: key “Base” is “%s”; expected “host” or “rootfs”",
                   path, sandbox->base);
      return NULL;
    }
  sandbox->name = g_key_file_get_string (kf, SANDBOX_GROUP, "Name", NULL);
  if (sandbox->name == NULL)
    sandbox->name = g_strdup (id);
  sandbox->family = g_key_file_get_string (kf, SANDBOX_GROUP, "Family", NULL);
  sandbox->release = g_key_file_get_string (kf, SANDBOX_GROUP, "Release", NULL);
  sandbox->follows = g_key_file_get_string (kf, SANDBOX_GROUP, "Follows", NULL);
  sandbox->launchers = g_key_file_get_string_list (kf, SANDBOX_GROUP, "Launchers", NULL, NULL);
  sandbox->added_launchers = g_key_file_get_string_list (kf, SANDBOX_GROUP, "AddedLaunchers", NULL, NULL);
  sandbox->hidden_launchers = g_key_file_get_string_list (kf, SANDBOX_GROUP, "HiddenLaunchers", NULL, NULL);
  sandbox->repositories = g_key_file_get_string_list (kf, SANDBOX_GROUP, "Repositories", NULL, NULL);
  sandbox->repository_uris = g_key_file_get_string_list (kf, SANDBOX_GROUP, "RepositoryURIs", NULL, NULL);
  sandbox->created = get_time (kf, "Created");
  sandbox->updated = get_time (kf, "Updated");
  load_base_record (sandbox);

  return g_steal_pointer (&sandbox);
}

GlSandbox *
gl_sandbox_load (const char *store_dir, const char *id, GError **error)
{
  g_autofree char *path = NULL;
  g_autofree char *conf = NULL;
  g_autofree char *data = NULL;
  gsize length = 0;
  g_autoptr(GError) local_error = NULL;

  if (!gl_sandbox_id_validate (id, error))
    return NULL;

  path = g_build_filename (store_dir, id, NULL);
  conf = g_build_filename (path, "sandbox.conf", NULL);
  if (!g_file_get_contents (conf, &data, &length, &local_error))
    {
      if (g_error_matches (local_error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        g_set_error (error, GL_STORE_ERROR, GL_STORE_ERROR_NOT_FOUND,
                     "No sandbox “%s” in %s; “glimpse list” shows the sandboxes there are",
                     id, store_dir);
      else
        g_set_error (error, GL_STORE_ERROR, GL_STORE_ERROR_MALFORMED,
                     "Cannot read %s: %s", conf, local_error->message);
      return NULL;
    }

  return gl_sandbox_load_from_data (id, path, data, length, error);
}

static void
set_time (GKeyFile *kf, const char *key, GDateTime *time)
{
  g_autofree char *text = NULL;

  if (time == NULL)
    return;
  text = g_date_time_format_iso8601 (time);
  g_key_file_set_string (kf, SANDBOX_GROUP, key, text);
}

char *
gl_sandbox_to_data (GlSandbox *sandbox, gsize *length)
{
  g_autoptr(GKeyFile) kf = g_key_file_new ();

  g_key_file_set_string (kf, SANDBOX_GROUP, "Profile", sandbox->profile);
  g_key_file_set_string (kf, SANDBOX_GROUP, "Name", sandbox->name ? sandbox->name : sandbox->id);
  g_key_file_set_string (kf, SANDBOX_GROUP, "Base", sandbox->base);
  if (sandbox->family)
    g_key_file_set_string (kf, SANDBOX_GROUP, "Family", sandbox->family);
  if (sandbox->release)
    g_key_file_set_string (kf, SANDBOX_GROUP, "Release", sandbox->release);
  if (sandbox->follows)
    g_key_file_set_string (kf, SANDBOX_GROUP, "Follows", sandbox->follows);
  g_key_file_set_string_list (kf, SANDBOX_GROUP, "Launchers",
                              (const char * const *) (sandbox->launchers ? sandbox->launchers : (char *[]) { NULL }),
                              sandbox->launchers ? g_strv_length (sandbox->launchers) : 0);
  /* (only when set: a sandbox.conf the admin never changed reads as before) */
  if (sandbox->added_launchers && sandbox->added_launchers[0])
    g_key_file_set_string_list (kf, SANDBOX_GROUP, "AddedLaunchers",
                                (const char * const *) sandbox->added_launchers,
                                g_strv_length (sandbox->added_launchers));
  if (sandbox->hidden_launchers && sandbox->hidden_launchers[0])
    g_key_file_set_string_list (kf, SANDBOX_GROUP, "HiddenLaunchers",
                                (const char * const *) sandbox->hidden_launchers,
                                g_strv_length (sandbox->hidden_launchers));
  g_key_file_set_string_list (kf, SANDBOX_GROUP, "Repositories",
                              (const char * const *) (sandbox->repositories ? sandbox->repositories : (char *[]) { NULL }),
                              sandbox->repositories ? g_strv_length (sandbox->repositories) : 0);
  if (sandbox->repository_uris && sandbox->repository_uris[0])
    g_key_file_set_string_list (kf, SANDBOX_GROUP, "RepositoryURIs",
                                (const char * const *) sandbox->repository_uris,
                                g_strv_length (sandbox->repository_uris));
  set_time (kf, "Created", sandbox->created);
  set_time (kf, "Updated", sandbox->updated);

  return g_key_file_to_data (kf, length, NULL);
}

gboolean
gl_sandbox_save (GlSandbox *sandbox, GError **error)
{
  g_autofree char *conf = g_build_filename (sandbox->path, "sandbox.conf", NULL);
  gsize length = 0;
  g_autofree char *data = gl_sandbox_to_data (sandbox, &length);

  return g_file_set_contents_full (conf, data, length,
                                   G_FILE_SET_CONTENTS_CONSISTENT, 0644, error);
}

char *
gl_sandbox_get_rootfs (GlSandbox *sandbox)
{
  if (g_strcmp0 (sandbox->base, GL_BASE_HOST) == 0)
    return NULL;
  return g_build_filename (sandbox->path, "rootfs", NULL);
}

char *
gl_sandbox_get_base_tree (GlSandbox *sandbox)
{
  g_autofree char *system = NULL;
  g_autofree char *name = NULL;
  g_autofree char *tree = NULL;
  struct stat st;
  guint n = 0, g;

  if (g_strcmp0 (sandbox->base, GL_BASE_HOST) == 0)
    return NULL;
  system = g_build_filename (sandbox->path, "system", NULL);
  if (gl_sandbox_get_system_generation (sandbox, &n, NULL) && n > 0)
    {
      g = gl_sandbox_generation_base (system, n);
      name = g > 0 ? g_strdup_printf ("base-%u", g) : g_strdup ("base");
      tree = g_build_filename (system, name, "tree", NULL);
      if (lstat (tree, &st) == 0 && S_ISDIR (st.st_mode))
        return g_steal_pointer (&tree);
    }
  return gl_sandbox_get_rootfs (sandbox);
}

char *
gl_sandbox_get_system_upper (GlSandbox *sandbox)
{
  return g_build_filename (sandbox->path, "system", "upper", NULL);
}

gboolean
gl_sandbox_get_system_generation (GlSandbox *sandbox, guint *generation, GError **error)
{
  g_autofree char *current = g_build_filename (sandbox->path, "system", "current", NULL);
  g_autofree char *text = NULL;
  g_autoptr(GError) local_error = NULL;
  gsize length = 0;
  guint64 n = 0;

  *generation = 0;
  if (!g_file_get_contents (current, &text, &length, &local_error))
    {
      if (g_error_matches (local_error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        return TRUE;    /* no system layer: the base only */
      g_set_error (error, G_IO_ERROR, g_io_error_from_file_error (local_error->code),
                   "Cannot read %s: %s", current, local_error->message);
      return FALSE;
    }
  /* exactly "N\n", N decimal from 1 to 10^9 (the launcher's bound), no sign, no leading zero */
  if (length < 2 || text[length - 1] != '\n' || text[0] == '0' ||
      (text[length - 1] = '\0', !g_ascii_string_to_unsigned (text, 10, 1, 1000000000, &n, NULL)))
    {
      g_set_error (error, GL_STORE_ERROR, GL_STORE_ERROR_MALFORMED,
                   "%s does not hold a generation number (one line \"N\", N >= 1); "
                   "the sandbox's system layer is damaged", current);
      return FALSE;
    }
  *generation = (guint) n;
  return TRUE;
}

char *
gl_sandbox_get_system_tree (GlSandbox *sandbox)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *number = NULL;
  guint generation = 0;

  if (!gl_sandbox_get_system_generation (sandbox, &generation, &error))
    {
      g_debug ("%s", error->message);
      return NULL;
    }
  if (generation == 0)
    return NULL;
  number = g_strdup_printf ("%u", generation);
  return g_build_filename (sandbox->path, "system", number, "tree", NULL);
}

GStrv
gl_sandbox_get_watch_dirs (GlSandbox *sandbox)
{
  g_autoptr(GStrvBuilder) dirs = g_strv_builder_new ();
  g_autofree char *system = g_build_filename (sandbox->path, "system", NULL);
  char *roots[] = { gl_sandbox_get_system_tree (sandbox), gl_sandbox_get_rootfs (sandbox) };

  g_strv_builder_add (dirs, sandbox->path);
  g_strv_builder_add (dirs, system);
  for (gsize i = 0; i < G_N_ELEMENTS (roots); i++)
    {
      if (roots[i] == NULL)
        continue;
      g_autofree char *apps = g_build_filename (roots[i], "usr", "share", "applications", NULL);
      g_autofree char *local_apps = g_build_filename (roots[i], "usr", "local", "share", "applications", NULL);

      g_strv_builder_add (dirs, apps);
      g_strv_builder_add (dirs, local_apps);
      g_free (roots[i]);
    }
  return g_strv_builder_end (dirs);
}

char *
gl_sandbox_get_user_dir (GlSandbox *sandbox, uid_t uid)
{
  g_autofree char *uid_str = g_strdup_printf ("%u", (unsigned) uid);

  return g_build_filename (sandbox->path, "users", uid_str, NULL);
}

/* How long a lock held by a view that is ending is waited for: at first
 * in any case (the view's PID 1 notices its last app's end a moment after
 * that app's launcher has returned), then while a process of the user is
 * exiting.  An ended PID 1 lets go of the view's locks (its descriptors)
 * before the kernel has taken its overlays down (its mount namespace, each
 * unmount syncing the upper file system): a lock of a user's layer taken
 * while a process of that user is still exiting is given back and taken
 * again later, so that nothing is deleted under an overlay still being
 * unmounted. */
#define GL_LOCK_GRACE_US (500 * G_TIME_SPAN_MILLISECOND)
#define GL_LOCK_ENDING_US (15 * G_TIME_SPAN_SECOND)

/* TRUE if /proc/NAME (a pid) is a process of UID ((uid_t) -1: of anyone)
 * that is exiting (PF_EXITING in /proc/PID/stat, which anyone may read).
 * A zombie is done, however late its parent reaps it (on a machine whose
 * init reaps slowly, for seconds): each of its threads has let go of its
 * namespaces and files before it became one.  Not a zombie thread-group
 * leader whose other threads still live (its "Threads:" counts them, and
 * it): those still hold theirs. */
static gboolean
pid_exiting (const char *name, uid_t uid)
{
  g_autofree char *stat_path = g_build_filename ("/proc", name, "stat", NULL);
  g_autofree char *stat = NULL, *status_path = NULL, *status = NULL;
  const char *p, *line;
  gulong flags = 0;
  gboolean zombie;

  if (!g_file_get_contents (stat_path, &stat, NULL, NULL) || (p = strrchr (stat, ')')) == NULL)
    return FALSE;
  /* after ")": the state is field 3, the flags field 9 */
  zombie = p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
  for (int field = 2; p != NULL && field < 9; field++)
    p = strchr (p + 1, ' ');
  if (p == NULL || sscanf (p + 1, "%lu", &flags) != 1 || !(flags & 0x4UL /* PF_EXITING */))
    return FALSE;
  if (uid == (uid_t) -1 && !zombie)
    return TRUE;
  status_path = g_build_filename ("/proc", name, "status", NULL);
  if (!g_file_get_contents (status_path, &status, NULL, NULL))
    return FALSE;
  if (uid != (uid_t) -1
      && ((line = strstr (status, "\nUid:\t")) == NULL
          || strtoul (line + 6, NULL, 10) != (gulong) uid))
    return FALSE;
  return !zombie
         || ((line = strstr (status, "\nThreads:\t")) != NULL
             && strtoul (line + 10, NULL, 10) > 1);
}

/* TRUE if a process of UID ((uid_t) -1: of anyone) is exiting.  LAST
 * (a pid, "" at first) names the one found by the previous call: while it
 * is still exiting, /proc is not read through again (a waiting loop asks
 * every 10 ms). */
static gboolean
process_exiting (uid_t uid, char last[16])
{
  g_autoptr(GDir) proc = NULL;
  const char *name;

  if (last[0] != '\0' && pid_exiting (last, uid))
    return TRUE;
  last[0] = '\0';
  proc = g_dir_open ("/proc", 0, NULL);
  while (proc != NULL && (name = g_dir_read_name (proc)) != NULL)
    if (g_ascii_isdigit (name[0]) && strlen (name) < 16 && pid_exiting (name, uid))
      {
        g_strlcpy (last, name, 16);
        return TRUE;
      }
  return FALSE;
}

/* Opens the lock file NAME in DIR (without following links, without
 * blocking on anything that is not a plain file) and tries OP on it; held,
 * with WAIT, it waits for a view of UID ((uid_t) -1: of anyone) that is
 * ending (GL_LOCK_GRACE_US, GL_LOCK_ENDING_US).  Returns the fd, or -1 with errno
 * (EWOULDBLOCK: held by someone else). */
static int
try_lock (int dir, const char *name, gboolean create, int op, gboolean wait, uid_t uid)
{
  struct stat st;
  int fd = openat (dir, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK
                   | (create ? O_CREAT : 0), 0600);
  gint64 start = g_get_monotonic_time ();
  char last[16] = "";
  int saved;

  if (fd < 0)
    return -1;
  if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode))
    {
      close (fd);
      errno = EINVAL;
      return -1;
    }
  for (;;)
    {
      gint64 waited = g_get_monotonic_time () - start;
      if (flock (fd, op | LOCK_NB) == 0)
        {
          /* An ended view's PID 1 lets go of its locks (its descriptors)
           * before the kernel has taken its overlays down (its mount
           * namespace): while a process of UID is still exiting, the
           * lock is not yet ours to use. */
          if (!wait || uid == (uid_t) -1 || waited >= GL_LOCK_ENDING_US || !process_exiting (uid, last))
            return fd;
          (void) flock (fd, LOCK_UN);
        }
      else
        {
          saved = errno;
          if (saved != EWOULDBLOCK || !wait
              || (waited >= GL_LOCK_GRACE_US
                  && (waited >= GL_LOCK_ENDING_US || !process_exiting (uid, last))))
            {
              close (fd);
              errno = saved;
              return -1;
            }
        }
      g_usleep (10 * G_TIME_SPAN_MILLISECOND);
    }
}

static void
in_use_error (GlSandbox *sandbox, const char *who, int saved_errno, const char *path,
              GError **error)
{
  if (saved_errno == EWOULDBLOCK)
    g_set_error (error, GL_STORE_ERROR, GL_STORE_ERROR_IN_USE,
                 "Sandbox “%s” is in use: %s; close its apps and try again", sandbox->id, who);
  else
    g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                 "Cannot lock %s: %s", path, g_strerror (saved_errno));
}

typedef struct {
  GlSandbox *sandbox;
  GArray *fds;          /* the locks taken; NULL: only try them, without waiting */
  GError **error;
} LockAll;

static gboolean
take_user_lock (int dir, const char *uid, LockAll *all)
{
  int fd = try_lock (dir, "lock", FALSE, LOCK_EX, all->fds != NULL,
                     (uid_t) g_ascii_strtoull (uid, NULL, 10));

  if (fd >= 0 && all->fds != NULL)
    g_array_append_val (all->fds, fd);
  else if (fd >= 0)
    close (fd);
  else if (errno == EWOULDBLOCK)
    {
      g_autofree char *who = g_strdup_printf ("an app of uid %s runs in it", uid);
      in_use_error (all->sandbox, who, EWOULDBLOCK, NULL, all->error);
      return FALSE;
    }
  /* (no lock file: that user never launched it since locks came in) */
  return TRUE;
}

/* take_user_lock () on users/<uid>/lock for every user directory the caller
 * can open; FALSE when one of them is held. */
static gboolean
take_user_locks (LockAll *all)
{
  g_autofree char *users = g_build_filename (all->sandbox->path, "users", NULL);
  DIR *d = opendir (users);
  struct dirent *e;
  gboolean go_on = TRUE;

  if (d == NULL)
    return TRUE;
  while (go_on && (e = readdir (d)) != NULL)
    {
      int dir;
      if (!g_ascii_isdigit (e->d_name[0]))
        continue;
      dir = openat (dirfd (d), e->d_name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (dir < 0)
        continue;       /* not yours */
      go_on = take_user_lock (dir, e->d_name, all);
      close (dir);
    }
  closedir (d);
  return go_on;
}

gboolean
gl_sandbox_is_in_use (GlSandbox *sandbox)
{
  g_autofree char *lock = g_build_filename (sandbox->path, "lock", NULL);
  int fd = try_lock (AT_FDCWD, lock, FALSE, LOCK_EX, FALSE, (uid_t) -1);
  LockAll test = { sandbox, NULL, NULL };   /* only trying each lock */

  if (fd >= 0)
    close (fd);
  else if (errno == EWOULDBLOCK)
    return TRUE;
  return !take_user_locks (&test);
}

static void
close_fd (gpointer p)
{
  close (*(int *) p);
}

GArray *
gl_sandbox_lock_exclusive (GlSandbox *sandbox, GError **error)
{
  g_autofree char *lock = g_build_filename (sandbox->path, "lock", NULL);
  g_autoptr(GArray) fds = g_array_new (FALSE, FALSE, sizeof (int));
  LockAll all = { sandbox, fds, error };
  int fd;

  g_array_set_clear_func (fds, close_fd);
  fd = try_lock (AT_FDCWD, lock, FALSE, LOCK_EX, TRUE, (uid_t) -1);
  if (fd < 0)
    {
      in_use_error (sandbox, "an app runs in it", errno, lock, error);
      return NULL;
    }
  g_array_append_val (fds, fd);
  if (!take_user_locks (&all))
    return NULL;
  return g_steal_pointer (&fds);
}

int
gl_sandbox_lock_user (GlSandbox *sandbox, uid_t uid, GError **error)
{
  g_autofree char *dir_path = gl_sandbox_get_user_dir (sandbox, uid);
  int dir = open (dir_path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  int fd, saved;

  if (dir < 0)
    {
      saved = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "Cannot open %s: %s", dir_path, g_strerror (saved));
      return -1;
    }
  fd = try_lock (dir, "lock", TRUE, LOCK_EX, TRUE, uid);
  saved = errno;
  close (dir);
  if (fd < 0)
    {
      g_autofree char *path = g_build_filename (dir_path, "lock", NULL);
      in_use_error (sandbox, "an app of yours runs in it", saved, path, error);
    }
  return fd;
}

/* What the launcher wrote on stderr (ERR, may be NULL), for a message of
 * ours: its lines without "glimpse-launch: ", joined by "; ", valid
 * UTF-8, control characters (C0 and C1: it names processes of the user's,
 * shown on root's terminal) replaced. */
static char *
launcher_says (GBytes *err)
{
  gsize len = 0;
  const char *data = err ? g_bytes_get_data (err, &len) : NULL;
  g_autofree char *text = g_utf8_make_valid (data ? data : "", (gssize) len);
  g_auto(GStrv) lines = g_strsplit (g_strstrip (text), "\n", -1);
  g_autoptr(GString) out = g_string_new (NULL);

  for (char **l = lines; *l != NULL; l++)
    {
      const char *line = g_str_has_prefix (*l, "glimpse-launch: ") ? *l + 16 : *l;
      if (*line == '\0')
        continue;
      g_autofree char *shown = gl_printable (line);
      if (out->len > 0)
        g_string_append (out, "; ");
      g_string_append (out, shown);
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}

/* "process PID (COMM)": the first process /proc lists of UID (by its
 * real, effective, saved or file-system id); NULL when UID has none. */
static char *
uid_process (uid_t uid)
{
  g_autoptr(GDir) proc = g_dir_open ("/proc", 0, NULL);
  const char *name;

  while (proc != NULL && (name = g_dir_read_name (proc)) != NULL)
    {
      g_autofree char *status_path = NULL, *status = NULL, *comm = NULL, *shown = NULL;
      const char *line;
      gboolean found = FALSE;
      char *end;

      if (!g_ascii_isdigit (name[0]))
        continue;
      status_path = g_build_filename ("/proc", name, "status", NULL);
      if (!g_file_get_contents (status_path, &status, NULL, NULL)
          || (line = strstr (status, "\nUid:\t")) == NULL)
        continue;
      line += 6;
      for (int i = 0; i < 4 && !found; i++, line = end)
        {
          gulong id = strtoul (line, &end, 10);
          found = end != line && id == (gulong) uid;
        }
      if (!found)
        continue;
      line = g_str_has_prefix (status, "Name:\t") ? status + 6 : "?";
      comm = g_strndup (line, strcspn (line, "\n"));
      /* (the process chose it: no control characters, C0 or C1) */
      shown = gl_printable (comm);
      return g_strdup_printf ("process %s (%s)", name, shown);
    }
  return NULL;
}

/* How long root waits for glimpse-launch --held run as a user: above the
 * launcher's own bounds (the view lock's 20 s, a dying view's 10 s, a
 * killed first launch's 2 s). */
#define GL_SANDBOX_LAYER_FREE_TIMEOUT_MS 60000

gboolean
gl_sandbox_layer_free (GlSandbox *sandbox, uid_t uid, GError **error)
{
  const char *argv[] = { gl_paths_launcher (), "--held", sandbox->id, NULL };
  /* (bounded: run as the user, the launcher gets any signal of theirs -
   * a SIGSTOP would keep root's remove, or a package operation's reclaim,
   * waiting for good; its own waits end well within this) */
  GlSpawnOptions options = { .output = GL_SPAWN_OUTPUT_CAPTURE,
                             .timeout_ms = GL_SANDBOX_LAYER_FREE_TIMEOUT_MS };
  g_auto(GlSpawnResult) result = { 0 };
  g_autoptr(GError) local = NULL;
  g_autofree gid_t *groups = NULL;
  g_autofree char *whose = g_strdup ("your layer");
  const char *whom = "yours";

  if (uid != getuid ())
    {
      /* (as the user: the launcher looks at the record and processes of
       * the user who runs it) */
      struct passwd *pw = getpwuid (uid);

      g_free (whose);
      whose = g_strdup_printf ("the layer of uid %u", (unsigned) uid);
      if (pw == NULL)
        {
          /* The launcher cannot run as a user the password database does
           * not know (it looks its user up).  But all it counts as holding
           * a view of the uid's is processes of that uid (the view's PID
           * 1 and apps, or one that keeps its overlays): without one, the
           * layer is free; with one, it may not be. */
          g_autofree char *holder = uid_process (uid);

          if (holder == NULL)
            return TRUE;
          g_set_error (error, GL_STORE_ERROR, GL_STORE_ERROR_IN_USE,
                       "%s of “%s” may still be in use: that uid has no entry in the password "
                       "database, so the launcher cannot be asked as it, and %s runs as it; "
                       "end that process, then try again", whose, sandbox->id, holder);
          return FALSE;
        }
      g_free (whose);
      whose = g_strdup_printf ("the layer of %s (uid %u)", pw->pw_name, (unsigned) uid);
      whom = "theirs";
      options.as_user = TRUE;
      options.uid = pw->pw_uid;
      options.gid = pw->pw_gid;
      /* (looked up here: NSS must not run between fork and exec) */
      groups = gl_spawn_get_groups (pw->pw_name, pw->pw_gid, &options.n_groups, &local);
      if (groups == NULL)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                       "cannot tell whether %s in “%s” is in use: %s", whose, sandbox->id,
                       local->message);
          return FALSE;
        }
      options.groups = groups;
    }
  if (gl_spawn_run (argv, &options, &result, NULL, &local))
    return TRUE;
  if (g_error_matches (local, G_IO_ERROR, G_IO_ERROR_TIMED_OUT))
    g_set_error (error, GL_STORE_ERROR, GL_STORE_ERROR_IN_USE,
                 "%s of “%s” may still be in use: the launcher did not answer within %d s "
                 "(stopped by a process of %s?); try again", whose, sandbox->id,
                 GL_SANDBOX_LAYER_FREE_TIMEOUT_MS / 1000, whom);
  else if (!g_error_matches (local, GL_SPAWN_ERROR, GL_SPAWN_ERROR_FAILED))
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                 "cannot ask the launcher whether %s is in use: %s; is Glimpse installed?",
                 whose, local->message);
  else if (WIFEXITED (result.wait_status) && WEXITSTATUS (result.wait_status) == 124)
    {
      g_autofree char *why = launcher_says (result.err);
      g_set_error (error, GL_STORE_ERROR, GL_STORE_ERROR_IN_USE,
                   "%s of “%s” is still in use by a view of %s: %s", whose, sandbox->id, whom,
                   why[0] ? why : "close its apps, then try again");
    }
  else
    {
      g_autofree char *why = launcher_says (result.err);
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                   "cannot tell whether %s of “%s” is in use: %s", whose, sandbox->id,
                   why[0] ? why : local->message);
    }
  return FALSE;
}

gboolean
gl_sandbox_no_unprivileged_view (GlSandbox *sandbox, GError **error)
{
  g_autofree char *users = g_build_filename (sandbox->path, "users", NULL);
  g_autoptr(GDir) d = g_dir_open (users, 0, NULL);
  const char *name;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *dir = NULL;
      guint64 uid;
      struct stat st;
      int dfd, lock;
      gboolean held;

      if (!g_ascii_string_to_unsigned (name, 10, 0, G_MAXUINT32 - 1, &uid, NULL))
        continue;
      dir = g_build_filename (users, name, NULL);
      dfd = open (dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (dfd < 0)
        continue;
      if (fstatat (dfd, "view.lock", &st, AT_SYMLINK_NOFOLLOW) != 0)
        {
          close (dfd);
          continue;
        }
      lock = openat (dfd, "lock", O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
      close (dfd);
      if (lock < 0)
        continue;
      held = flock (lock, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
      close (lock);
      if (held)
        {
          g_set_error (error, GL_STORE_ERROR, GL_STORE_ERROR_IN_USE,
                       "uid %u may run a view of it built by glimpse-launch without its setuid "
                       "bit (its users/%u/lock is held), which cannot hold the generation it "
                       "was built from", (unsigned) uid, (unsigned) uid);
          return FALSE;
        }
    }
  return TRUE;
}

gboolean
gl_sandbox_layers_free (GlSandbox *sandbox, gboolean running_ok, GError **error)
{
  g_autofree char *views = g_build_filename (sandbox->path, "users", ".views", NULL);
  g_autoptr(GDir) d = g_dir_open (views, 0, NULL);
  const char *name;

  if (running_ok && !gl_sandbox_no_unprivileged_view (sandbox, error))
    return FALSE;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    {
      guint64 uid;
      int lock = -1;
      gboolean ok;

      /* (<uid>, not <uid>.lock) */
      if (!g_ascii_string_to_unsigned (name, 10, 0, G_MAXUINT32 - 1, &uid, NULL))
        continue;
      if (running_ok)
        {
          /* The user's lock, as purge takes it: held by a running view
           * (then that view's record is the one there, and it holds its
           * generation), else kept while the launcher is asked. */
          g_autofree char *dir = gl_sandbox_get_user_dir (sandbox, (uid_t) uid);
          g_autofree char *path = g_build_filename (dir, "lock", NULL);
          lock = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
          if (lock >= 0 && flock (lock, LOCK_EX | LOCK_NB) != 0)
            {
              close (lock);
              continue;
            }
        }
      ok = gl_sandbox_layer_free (sandbox, (uid_t) uid, error);
      if (lock >= 0)
        close (lock);
      if (!ok)
        return FALSE;
    }
  return TRUE;
}

/* A file with several links counts once, as du counts it: a rebased
 * sandbox's generation shares most of its files with its base by links. */
static gboolean
first_link (GHashTable *seen, const struct stat *st)
{
  guint64 *key;

  if (st->st_nlink < 2)
    return TRUE;
  key = g_new (guint64, 1);
  *key = (guint64) st->st_ino;
  if (g_hash_table_contains (seen, key))
    {
      g_free (key);
      return FALSE;
    }
  g_hash_table_add (seen, key);
  return TRUE;
}

static guint64
dir_size (int dfd, const char *name, dev_t dev, GHashTable *seen)
{
  struct stat st;
  guint64 total = 0;
  int fd;
  DIR *d;
  struct dirent *de;

  if (fstatat (dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
    return 0;
  if (!S_ISDIR (st.st_mode))
    return st.st_dev != dev || first_link (seen, &st) ? (guint64) st.st_blocks * 512 : 0;
  total = (guint64) st.st_blocks * 512;
  if (st.st_dev != dev)
    return total;

  fd = openat (dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return total;
  d = fdopendir (fd);
  if (d == NULL)
    {
      close (fd);
      return total;
    }
  while ((de = readdir (d)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      total += dir_size (dirfd (d), de->d_name, dev, seen);
    }
  closedir (d);
  return total;
}

guint64
gl_sandbox_get_size (GlSandbox *sandbox)
{
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  struct stat st;

  if (stat (sandbox->path, &st) != 0)
    return 0;
  return dir_size (AT_FDCWD, sandbox->path, st.st_dev, seen);
}

/* How long gl_sandbox_remove waits for a trash's removal (the tests
 * shorten it: gl-sandbox-private.h) */
static guint trash_wait_ms = 60000;

void
gl_sandbox_set_trash_wait_for_tests (guint ms)
{
  trash_wait_ms = ms;
}

/* Whether process @pid has a descriptor of the file @st that holds a lock
 * on it (the descriptor's fdinfo lists the lock) */
static gboolean
holds_lock (const char *pid, const struct stat *st)
{
  g_autofree char *fd_dir = g_build_filename ("/proc", pid, "fd", NULL);
  g_autoptr(GDir) d = g_dir_open (fd_dir, 0, NULL);
  const char *n;

  while (d != NULL && (n = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *link = g_build_filename (fd_dir, n, NULL);
      g_autofree char *info_path = g_build_filename ("/proc", pid, "fdinfo", n, NULL);
      g_autofree char *info = NULL;
      struct stat fst;

      if (stat (link, &fst) != 0 || fst.st_ino != st->st_ino || fst.st_dev != st->st_dev)
        continue;
      if (g_file_get_contents (info_path, &info, NULL, NULL)
          && (g_str_has_prefix (info, "lock:") || strstr (info, "\nlock:") != NULL))
        return TRUE;
    }
  return FALSE;
}

/* The process that holds the flock on @fd's file; 0 if none is found.
 * /proc/locks names the process that took the lock, which may have
 * handed it on and ended (glimpse to its detached glimpse-remove-trash):
 * then it names a process that is gone (0 in a PID namespace, elsewhere
 * a number the system may have given to another process since), so the
 * holder is the process whose descriptor of the file holds the lock. */
static pid_t
lock_holder (int fd)
{
  g_autofree char *locks = NULL;
  g_auto(GStrv) lines = NULL;
  g_autoptr(GDir) proc = NULL;
  const char *name;
  struct stat st;
  pid_t self = getpid ();

  if (fstat (fd, &st) != 0)
    return 0;
  if (g_file_get_contents ("/proc/locks", &locks, NULL, NULL))
    lines = g_strsplit (locks, "\n", -1);
  for (guint i = 0; lines != NULL && lines[i] != NULL; i++)
    {
      unsigned int maj, min;
      unsigned long long ino;
      int pid;

      /* "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF" (a waiter's has "->") */
      if (strstr (lines[i], "->") == NULL
          && sscanf (lines[i], "%*d: FLOCK %*s %*s %d %x:%x:%llu", &pid, &maj, &min, &ino) == 4
          && ino == (unsigned long long) st.st_ino && makedev (maj, min) == st.st_dev)
        {
          g_autofree char *pid_str = g_strdup_printf ("%d", pid);

          if (pid > 0 && pid != self && holds_lock (pid_str, &st))
            return pid;
          break;
        }
    }
  proc = g_dir_open ("/proc", 0, NULL);
  while (proc != NULL && (name = g_dir_read_name (proc)) != NULL)
    {
      guint64 pid = 0;

      if (g_ascii_string_to_unsigned (name, 10, 1, G_MAXINT32, &pid, NULL)
          && (pid_t) pid != self && holds_lock (name, &st))
        return (pid_t) pid;
    }
  return 0;
}

/* Waits for the detached removals of what package operations replaced
 * (system/.trash-*, gl-pkg.c): each holds its trash's lock until it ends,
 * and must not be still at work inside a tree being removed.  A removal
 * still at work after trash_wait_ms is an error that names it. */
static gboolean
wait_for_trash (GlSandbox *sandbox, GlSandboxSay say, gpointer user_data,
                GCancellable *cancellable, GError **error)
{
  g_autofree char *system = g_build_filename (sandbox->path, "system", NULL);
  g_autoptr(GDir) d = g_dir_open (system, 0, NULL);
  gint64 deadline = g_get_monotonic_time () + (gint64) trash_wait_ms * 1000;
  const char *name;

  while (d && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *lock = NULL;
      pid_t pid;
      int fd;

      if (!g_str_has_prefix (name, GL_SANDBOX_TRASH_PREFIX))
        continue;
      lock = g_build_filename (system, name, "lock", NULL);
      fd = open (lock, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
      if (fd < 0)
        continue;
      if (flock (fd, LOCK_EX | LOCK_NB) == 0)
        {
          close (fd);
          continue;
        }
      pid = lock_holder (fd);
      g_debug ("%s is held by process %d; waiting", lock, (int) pid);
      if (say != NULL)
        {
          g_autofree char *holder = pid > 0 ? g_strdup_printf (", process %d", (int) pid) : g_strdup ("");
          g_autofree char *line = g_strdup_printf (
            "Waiting for the removal of the system generations a package operation replaced "
            "(%s%s) to end, for up to %u s…", name, holder, (trash_wait_ms + 999) / 1000);
          say (line, user_data);
        }
      while (flock (fd, LOCK_EX | LOCK_NB) != 0)
        {
          if (g_cancellable_set_error_if_cancelled (cancellable, error))
            {
              close (fd);
              return FALSE;
            }
          if (g_get_monotonic_time () >= deadline)
            {
              g_autofree char *trash = g_build_filename (system, name, NULL);

              pid = lock_holder (fd);
              close (fd);
              if (pid > 0)
                g_set_error (error, GL_STORE_ERROR, GL_STORE_ERROR_IN_USE,
                             "Not removed: the removal of the system generations a package operation "
                             "replaced (%s) still runs after %u s, as process %d; try again when it "
                             "has ended, or end it (kill %d) and try again",
                             trash, (trash_wait_ms + 999) / 1000, (int) pid, (int) pid);
              else
                g_set_error (error, GL_STORE_ERROR, GL_STORE_ERROR_IN_USE,
                             "Not removed: the removal of the system generations a package operation "
                             "replaced (%s) still runs after %u s; try again when it has ended",
                             trash, (trash_wait_ms + 999) / 1000);
              return FALSE;
            }
          g_usleep (50 * 1000);
        }
      close (fd);
    }
  return TRUE;
}

gboolean
gl_sandbox_remove (GlSandbox *sandbox, gboolean force, GlSandboxSay say, gpointer user_data,
                   GCancellable *cancellable, GError **error)
{
  g_autofree char *parent = g_path_get_dirname (sandbox->path);
  g_autoptr(GlStore) store = gl_store_new (parent);
  g_autofree char *doomed = NULL;
  g_autoptr(GError) lock_error = NULL;
  g_autoptr(GArray) locks = NULL;
  gboolean ok;
  int work, held;

  locks = gl_sandbox_lock_exclusive (sandbox, &lock_error);
  /* (no view runs now; one that has ended may still be kept from outside,
   * its overlays mounted on a user's layer and the system generation) */
  if (locks != NULL && !force)
    (void) gl_sandbox_layers_free (sandbox, FALSE, &lock_error);
  if (lock_error != NULL && !force)
    {
      if (g_error_matches (lock_error, GL_STORE_ERROR, GL_STORE_ERROR_IN_USE))
        g_propagate_prefixed_error (error, g_steal_pointer (&lock_error),
                                    "Not removed (--force removes it anyway): ");
      else
        g_propagate_error (error, g_steal_pointer (&lock_error));
      return FALSE;
    }

  if (!wait_for_trash (sandbox, say, user_data, cancellable, error))
    return FALSE;
  /* Take it out of the store first, so a removal that fails half-way
   * leaves no half sandbox that looks usable; the work directory's lock
   * lets the next store operation finish a removal cut short. */
  work = gl_store_make_work_dir (store, "removing", &doomed, error);
  if (work < 0)
    return FALSE;
  held = gl_store_lock_work_dir (store, sandbox->path, error);
  if (held < 0 || rename (sandbox->path, doomed) != 0)
    {
      int saved = errno;
      if (held >= 0)
        g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                     "Cannot remove %s: %s", sandbox->path, g_strerror (saved));
      g_rmdir (doomed);
      close (work);
      if (held >= 0)
        close (held);
      return FALSE;
    }
  close (work);   /* (its empty directory was replaced by the sandbox) */
  g_clear_pointer (&locks, g_array_unref);

  ok = gl_rm_rf (doomed, cancellable, error);
  close (held);
  return ok;
}
