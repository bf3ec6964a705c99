/* gl-pkg-limits.c: the resource limits of a package operation (see gl-pkg-limits.h)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-pkg-limits.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <gio/gio.h>

#include "gl-config.h"
#include "gl-paths.h"

struct _GlPkgLimits {
  GlPkgLimitValues values;
  char *conf;
  GPtrArray *dirs;      /* the run's cgroups */
  GPtrArray *parents;   /* their glimpse/ directories */
  char **cgroups;       /* gl_pkg_limits_get_cgroups */
};

gboolean
gl_pkg_limits_load (const char *conf, GlPkgLimitValues *values, GError **error)
{
  g_autoptr(GlConfig) c = gl_config_load (conf, error);

  if (c == NULL)
    return FALSE;
  values->max_tasks = c->max_tasks;
  values->max_memory_mib = c->max_memory_mib;
  values->max_seconds = c->max_seconds;
  values->min_free_mib = c->min_free_mib;
  return TRUE;
}

/* ------------------------------------------------------------- cgroups */

static gboolean
write_text (const char *dir, const char *file, const char *text, GError **error)
{
  g_autofree char *path = g_build_filename (dir, file, NULL);
  int fd = open (path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
  gssize n = fd >= 0 ? write (fd, text, strlen (text)) : -1;
  int errsv = errno;

  if (fd >= 0)
    close (fd);
  if (n == (gssize) strlen (text))
    return TRUE;
  g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv), "Cannot write “%s” to %s: %s",
               text, path, g_strerror (errsv));
  return FALSE;
}

static gboolean
has_words (const char *dir, const char *file, const char * const *words)
{
  g_autofree char *path = g_build_filename (dir, file, NULL);
  g_autofree char *text = NULL;
  g_auto(GStrv) have = NULL;

  if (!g_file_get_contents (path, &text, NULL, NULL))
    return FALSE;
  have = g_strsplit_set (g_strstrip (text), " \n", -1);
  for (gsize i = 0; words[i]; i++)
    if (!g_strv_contains ((const char * const *) have, words[i]))
      return FALSE;
  return TRUE;
}

/* Glimpse's own cgroup in the v1 hierarchy of @controller */
static char *
own_cgroup (const char *controller)
{
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;

  if (!g_file_get_contents ("/proc/self/cgroup", &text, NULL, NULL))
    return NULL;
  lines = g_strsplit (text, "\n", -1);
  for (char **l = lines; *l; l++)
    {
      g_auto(GStrv) f = g_strsplit (*l, ":", 3);
      g_auto(GStrv) controllers = NULL;
      if (g_strv_length (f) != 3)
        continue;
      controllers = g_strsplit (f[1], ",", -1);
      if (g_strv_contains ((const char * const *) controllers, controller))
        return g_strdup (f[2]);
    }
  return NULL;
}

/* Where cgroup v2 is mounted, and glimpse's own cgroups of the v1 pids and
 * memory hierarchies (as directories), from the mount table */
static void
find_hierarchies (char **v2, char **pids, char **memory)
{
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;

  *v2 = *pids = *memory = NULL;
  if (!g_file_get_contents ("/proc/self/mountinfo", &text, NULL, NULL))
    return;
  lines = g_strsplit (text, "\n", -1);
  for (char **l = lines; *l; l++)
    {
      g_auto(GStrv) f = g_strsplit (*l, " ", -1);
      guint n = g_strv_length (f), sep;
      g_auto(GStrv) opts = NULL;
      const char *root, *mnt;

      for (sep = 6; sep < n && !g_str_equal (f[sep], "-"); sep++)
        ;
      if (sep + 3 >= n)
        continue;
      root = f[3];
      mnt = f[4];
      /* (the only place glimpse-pkgns joins a cgroup) */
      if (!g_str_has_prefix (mnt, "/sys/fs/cgroup"))
        continue;
      if (g_str_equal (f[sep + 1], "cgroup2"))
        {
          if (*v2 == NULL)
            *v2 = g_strdup (mnt);
          continue;
        }
      if (!g_str_equal (f[sep + 1], "cgroup"))
        continue;
      opts = g_strsplit (f[sep + 3], ",", -1);
      for (int k = 0; k < 2; k++)
        {
          const char *controller = k == 0 ? "pids" : "memory";
          char **out = k == 0 ? pids : memory;
          g_autofree char *own = NULL;
          if (*out != NULL || !g_strv_contains ((const char * const *) opts, controller)
              || (own = own_cgroup (controller)) == NULL)
            continue;
          /* (a mount of part of the hierarchy shows what lies below its root) */
          if (g_str_equal (root, "/"))
            *out = g_build_filename (mnt, own, NULL);
          else if (g_str_has_prefix (own, root) && (own[strlen (root)] == '/' || own[strlen (root)] == '\0'))
            *out = g_build_filename (mnt, own + strlen (root), NULL);
          else
            *out = g_strdup (mnt);
        }
    }
}

/* What killed operations left in @parent: the cgroups of a glimpse that
 * has ended (op-PID-N; one of a running glimpse may be empty yet, before
 * its glimpse-pkgns moves in), and rmdir removes only an empty one */
static void
remove_stale (const char *parent)
{
  g_autoptr(GDir) d = g_dir_open (parent, 0, NULL);
  const char *name;

  while (d && (name = g_dir_read_name (d)) != NULL)
    if (g_str_has_prefix (name, "op-"))
      {
        guint64 pid = 0;
        g_auto(GStrv) f = g_strsplit (name, "-", 3);
        if (g_strv_length (f) == 3 && g_ascii_string_to_unsigned (f[1], 10, 1, G_MAXINT32, &pid, NULL)
            && (kill ((pid_t) pid, 0) == 0 || errno != ESRCH))
          continue;
        g_autofree char *path = g_build_filename (parent, name, NULL);
        if (rmdir (path) == 0)
          g_debug ("removed %s, left by an interrupted package operation", path);
      }
}

/* A new cgroup of the run in @parent (made when missing, with
 * @subtree_control written there when not NULL: cgroup v2) */
static char *
make_cgroup (GlPkgLimits *l, const char *parent, const char *subtree_control, GError **error)
{
  static guint counter;
  g_autofree char *name = g_strdup_printf ("op-%d-%u", (int) getpid (), counter++);
  g_autofree char *dir = g_build_filename (parent, name, NULL);

  for (int attempt = 0;; attempt++)
    {
      if (mkdir (parent, 0755) != 0 && errno != EEXIST)
        {
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errno), "Cannot create %s: %s",
                       parent, g_strerror (errno));
          return NULL;
        }
      if (subtree_control != NULL && !write_text (parent, "cgroup.subtree_control", subtree_control, error))
        return NULL;
      if (attempt == 0)
        remove_stale (parent);
      if (mkdir (dir, 0755) == 0)
        break;
      /* (another operation's end may remove the empty parent meanwhile) */
      if (errno != ENOENT || attempt == 2)
        {
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errno), "Cannot create %s: %s",
                       dir, g_strerror (errno));
          return NULL;
        }
    }
  if (!g_ptr_array_find_with_equal_func (l->parents, parent, g_str_equal, NULL))
    g_ptr_array_add (l->parents, g_strdup (parent));
  g_ptr_array_add (l->dirs, g_strdup (dir));
  return g_steal_pointer (&dir);
}

static char *
number_or_max (guint64 n, guint64 unit, const char *unlimited)
{
  return n > 0 ? g_strdup_printf ("%" G_GUINT64_FORMAT, n * unit) : g_strdup (unlimited);
}

/* cgroup v2 at @mnt, when its pids and memory controllers are available:
 * <mnt>/glimpse/op-… with both limits */
static gboolean
prepare_v2 (GlPkgLimits *l, const char *mnt, GError **error)
{
  static const char * const needed[] = { "pids", "memory", NULL };
  g_autofree char *parent = g_build_filename (mnt, "glimpse", NULL);
  g_autofree char *dir = NULL;
  g_autofree char *tasks = number_or_max (l->values.max_tasks, 1, "max");
  g_autofree char *memory = number_or_max (l->values.max_memory_mib, 1024 * 1024, "max");
  g_autofree char *swap = NULL;

  if (!has_words (mnt, "cgroup.controllers", needed))
    return g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                        "cgroup v2 (%s) has no pids and memory controllers", mnt), FALSE;
  if (!has_words (mnt, "cgroup.subtree_control", needed)
      && !write_text (mnt, "cgroup.subtree_control", "+pids +memory", error))
    return FALSE;
  dir = make_cgroup (l, parent, "+pids +memory", error);
  if (dir == NULL || !write_text (dir, "pids.max", tasks, error)
      || !write_text (dir, "memory.max", memory, error))
    return FALSE;
  swap = g_build_filename (dir, "memory.swap.max", NULL);
  /* (MaxMemoryMiB= is all it has: none of it swapped out) */
  if (l->values.max_memory_mib > 0 && g_file_test (swap, G_FILE_TEST_EXISTS))
    return write_text (dir, "memory.swap.max", "0", error);
  return TRUE;
}

static gboolean
prepare_v1 (GlPkgLimits *l, const char *own, gboolean memory, GError **error)
{
  g_autofree char *parent = g_build_filename (own, "glimpse", NULL);
  g_autofree char *dir = make_cgroup (l, parent, NULL, error);
  g_autofree char *limit = NULL;
  g_autofree char *memsw = NULL;

  if (dir == NULL)
    return FALSE;
  if (!memory)
    {
      limit = number_or_max (l->values.max_tasks, 1, "max");
      return write_text (dir, "pids.max", limit, error);
    }
  limit = number_or_max (l->values.max_memory_mib, 1024 * 1024, "-1");
  memsw = g_build_filename (dir, "memory.memsw.limit_in_bytes", NULL);
  return write_text (dir, "memory.limit_in_bytes", limit, error)
         && (!g_file_test (memsw, G_FILE_TEST_EXISTS)
             || write_text (dir, "memory.memsw.limit_in_bytes", limit, error));
}

GlPkgLimits *
gl_pkg_limits_prepare (GPtrArray *argv, char **warning, GError **error)
{
  g_autoptr(GlPkgLimits) l = g_new0 (GlPkgLimits, 1);
  g_autofree char *v2 = NULL, *pids = NULL, *memory = NULL;
  g_autoptr(GError) v2_error = NULL, pids_error = NULL, memory_error = NULL;
  gboolean have_pids = FALSE, have_memory = FALSE;

  *warning = NULL;
  l->conf = g_strdup (gl_paths_config_file ());
  l->dirs = g_ptr_array_new_with_free_func (g_free);
  l->parents = g_ptr_array_new_with_free_func (g_free);
  if (!gl_pkg_limits_load (l->conf, &l->values, error))
    return NULL;

  find_hierarchies (&v2, &pids, &memory);
  if (v2 != NULL && prepare_v2 (l, v2, &v2_error))
    have_pids = have_memory = TRUE;
  else
    {
      if (v2_error != NULL)
        g_debug ("%s", v2_error->message);
      have_pids = pids != NULL && prepare_v1 (l, pids, FALSE, &pids_error);
      have_memory = memory != NULL && prepare_v1 (l, memory, TRUE, &memory_error);
    }
  if (!have_pids || !have_memory)
    {
      const GError *why = pids_error ? pids_error : memory_error ? memory_error : v2_error;
      g_autofree char *detail = why ? g_strdup_printf (" (%s)", why->message) : g_strdup ("");
      if (!have_pids && !have_memory)
        *warning = g_strdup_printf ("glimpse: no cgroup can hold this package operation (neither "
                                    "cgroup v2 with the pids and memory controllers nor the v1 "
                                    "pids and memory hierarchies)%s: its tasks are limited per "
                                    "user of the sandbox only (MaxTasks=, as RLIMIT_NPROC), its "
                                    "memory not at all", detail);
      else if (!have_pids)
        *warning = g_strdup_printf ("glimpse: no pids cgroup can hold this package operation%s: "
                                    "its tasks are limited per user of the sandbox only "
                                    "(MaxTasks=, as RLIMIT_NPROC)", detail);
      else
        *warning = g_strdup_printf ("glimpse: no memory cgroup can hold this package "
                                    "operation%s: its memory is not limited", detail);
    }

  for (guint i = 0; i < l->dirs->len; i++)
    {
      g_ptr_array_add (argv, g_strdup ("--cgroup"));
      g_ptr_array_add (argv, g_strdup (l->dirs->pdata[i]));
    }
  g_ptr_array_add (argv, g_strdup ("--max-tasks"));
  g_ptr_array_add (argv, g_strdup_printf ("%" G_GUINT64_FORMAT, l->values.max_tasks));
  g_ptr_array_add (argv, g_strdup ("--max-seconds"));
  g_ptr_array_add (argv, g_strdup_printf ("%" G_GUINT64_FORMAT, l->values.max_seconds));
  g_ptr_array_add (argv, g_strdup ("--min-free-mib"));
  g_ptr_array_add (argv, g_strdup_printf ("%" G_GUINT64_FORMAT, l->values.min_free_mib));
  return g_steal_pointer (&l);
}

char *
gl_pkg_limits_describe (GlPkgLimits *l, const char *which)
{
  const char *where = "in the [Packages] group of";

  if (g_strcmp0 (which, "tasks") == 0)
    return g_strdup_printf ("it reached its limit of %" G_GUINT64_FORMAT " tasks (processes and "
                            "threads at once); raise MaxTasks= %s %s", l->values.max_tasks, where, l->conf);
  if (g_strcmp0 (which, "memory") == 0)
    return g_strdup_printf ("it reached its limit of %" G_GUINT64_FORMAT " MiB of memory; raise "
                            "MaxMemoryMiB= %s %s", l->values.max_memory_mib, where, l->conf);
  if (g_strcmp0 (which, "time") == 0)
    return g_strdup_printf ("it ran for its limit of %" G_GUINT64_FORMAT " seconds; raise "
                            "MaxSeconds= %s %s", l->values.max_seconds, where, l->conf);
  if (g_strcmp0 (which, "disk") == 0)
    return g_strdup_printf ("the sandbox store's file system had less than its floor of %"
                            G_GUINT64_FORMAT " MiB free; free space there, or lower MinFreeMiB= %s %s",
                            l->values.min_free_mib, where, l->conf);
  return g_strdup_printf ("it reached a limit (%s) %s %s", which, where, l->conf);
}

const char * const *
gl_pkg_limits_get_cgroups (GlPkgLimits *l)
{
  if (l->cgroups == NULL)
    {
      l->cgroups = g_new0 (char *, l->dirs->len + 1);
      for (guint i = 0; i < l->dirs->len; i++)
        l->cgroups[i] = g_strdup (l->dirs->pdata[i]);
    }
  return (const char * const *) l->cgroups;
}

/* ------------------------------------------------------------ watching */

/* N of the line "KEY N" of DIR/FILE (0 without one) */
static guint64
event_count (const char *dir, const char *file, const char *key)
{
  g_autofree char *path = g_build_filename (dir, file, NULL);
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;
  gsize klen = strlen (key);

  if (!g_file_get_contents (path, &text, NULL, NULL))
    return 0;
  lines = g_strsplit (text, "\n", -1);
  for (char **l = lines; *l; l++)
    if (strncmp (*l, key, klen) == 0 && (*l)[klen] == ' ')
      return g_ascii_strtoull (*l + klen + 1, NULL, 10);
  return 0;
}

struct _GlPkgLimitsWatch {
  GlPkgLimits *limits;    /* borrowed */
  char *path;
  GCancellable *cancellable;
  gint64 started;
  const char *reached;
  gboolean ending;
  GMutex mutex;
  GCond cond;
  GThread *thread;
};

/* What glimpse-pkgns's limit_reached checks, for a run outside it */
static const char *
watch_check (GlPkgLimitsWatch *w)
{
  const GlPkgLimitValues *v = &w->limits->values;
  struct statvfs sv;

  for (guint i = 0; i < w->limits->dirs->len; i++)
    {
      const char *dir = w->limits->dirs->pdata[i];
      if (event_count (dir, "pids.events", "max") > 0)
        return "tasks";
      if (event_count (dir, "memory.events", "oom_kill") > 0 || event_count (dir, "memory.oom_control", "oom_kill") > 0)
        return "memory";
    }
  if (v->max_seconds > 0 && !w->ending
      && (guint64) (g_get_monotonic_time () - w->started) >= v->max_seconds * G_USEC_PER_SEC)
    return "time";
  if (v->min_free_mib > 0 && statvfs (w->path, &sv) == 0
      && (guint64) sv.f_bavail * sv.f_frsize < v->min_free_mib << 20)
    return "disk";
  return NULL;
}

static gpointer
watch_thread (gpointer data)
{
  GlPkgLimitsWatch *w = data;

  g_mutex_lock (&w->mutex);
  while (!w->ending && w->reached == NULL)
    {
      g_cond_wait_until (&w->cond, &w->mutex, g_get_monotonic_time () + 250 * G_TIME_SPAN_MILLISECOND);
      if (!w->ending && (w->reached = watch_check (w)) != NULL)
        g_cancellable_cancel (w->cancellable);
    }
  g_mutex_unlock (&w->mutex);
  return NULL;
}

GlPkgLimitsWatch *
gl_pkg_limits_watch_start (GlPkgLimits *limits, const char *path, GCancellable *cancellable)
{
  GlPkgLimitsWatch *w = g_new0 (GlPkgLimitsWatch, 1);

  w->limits = limits;
  w->path = g_strdup (path);
  w->cancellable = g_object_ref (cancellable);
  w->started = g_get_monotonic_time ();
  g_mutex_init (&w->mutex);
  g_cond_init (&w->cond);
  w->thread = g_thread_new ("gl-limits", watch_thread, w);
  return w;
}

const char *
gl_pkg_limits_watch_end (GlPkgLimitsWatch *w)
{
  const char *reached;

  g_mutex_lock (&w->mutex);
  w->ending = TRUE;
  g_cond_signal (&w->cond);
  g_mutex_unlock (&w->mutex);
  g_thread_join (w->thread);
  /* what it reached at its very end (an OOM kill that made it fail) */
  reached = w->reached != NULL ? w->reached : watch_check (w);
  g_object_unref (w->cancellable);
  g_mutex_clear (&w->mutex);
  g_cond_clear (&w->cond);
  g_free (w->path);
  g_free (w);
  return reached;
}

void
gl_pkg_limits_free (GlPkgLimits *l)
{
  if (l == NULL)
    return;
  for (guint i = 0; l->dirs && i < l->dirs->len; i++)
    {
      const char *dir = l->dirs->pdata[i];
      /* (the last task of a cgroup may take a moment to leave it:
       * glimpse-pkgns's view's child of main, ending, some ms -- or
       * seconds: the teardown of its mount namespace frees what the
       * operation left in the view's tmpfs mounts, which a maintainer
       * script may fill with millions of files (2.7 s for 1.5 million on
       * a 2-core machine).  Nothing of the sandbox runs then, but nothing
       * of the operation outlives glimpse either: waited for, up to a
       * minute, in steps of 0.2 ms for the first 20 ms (the common case,
       * which a step of a whole ms would lengthen by half of one), 1 ms
       * up to a second, then 10 ms.) */
      gint64 start = g_get_monotonic_time (), waited;
      while (rmdir (dir) != 0 && errno == EBUSY
             && (waited = g_get_monotonic_time () - start) < 60 * G_USEC_PER_SEC)
        g_usleep (waited < 20000 ? 200 : waited < G_USEC_PER_SEC ? 1000 : 10000);
      if (g_file_test (dir, G_FILE_TEST_EXISTS))
        g_debug ("Cannot remove %s: %s", dir, g_strerror (errno));
    }
  /* an empty glimpse/ goes too (v1: in glimpse's own cgroup, which its
   * owner may want to remove) */
  for (guint i = 0; l->parents && i < l->parents->len; i++)
    rmdir (l->parents->pdata[i]);
  g_clear_pointer (&l->dirs, g_ptr_array_unref);
  g_clear_pointer (&l->parents, g_ptr_array_unref);
  g_strfreev (l->cgroups);
  g_free (l->conf);
  g_free (l);
}
