/* gl-store-monitor.c: raw inotify on the sandbox store
 *
 * One inotify descriptor on the main context (g_unix_fd_add), no timers:
 * with nothing changing, nothing wakes up.  A watch is shared by every
 * sandbox that sees the same directory (host-based sandboxes share the
 * host's applications directory); each watch keeps the names it cares
 * about, so a package writing /usr/share/doc does not count as a change of
 * /usr/share.
 *
 * Each sandbox's events are also kept as what they say changed: the
 * watched directories in which only files were written, created, renamed
 * or removed, for the export to walk those again and take the rest as the
 * last export found it (gl_store_monitor_take_changes).  Anything else —
 * a directory come or gone, the sandbox's own files, a filtered watch
 * (the directories leading to the data directories), a directory watched
 * by two names, events lost or too many of them — is "anything may have
 * changed".
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/inotify.h>
#include <unistd.h>
#include <glib-unix.h>

#include "gl-store-monitor.h"
#include "gl-export.h"

/* Changes of a directory's entries, and of the files in it */
#define DIR_EVENTS (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE | \
                    IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW)

/* How deep below usr/share/applications and usr/share/icons directories
 * are watched: applications/kde4/x.desktop, icons/hicolor/48x48/apps/x.png */
#define APPS_DEPTH GL_EXPORT_WATCH_APPS_DEPTH
#define ICONS_DEPTH GL_EXPORT_WATCH_ICONS_DEPTH

/* More events than this for one sandbox before it is exported again: a
 * package operation, not one app; every place is looked at again */
#define MAX_EVENTS 256

/* What the events of one sandbox said since its changes were taken */
typedef struct {
  gboolean unknown;     /* anything may have changed */
  guint n_events;
  GHashTable *dirs;     /* the watched directories with an event (set) */
  GStrv roots;          /* the layer roots watched whole as the sandbox was armed, or NULL */
} Changes;

typedef struct {
  int wd;
  char *path;
  gboolean aliased;   /* added by two names: which one an event is of is not known */
  GHashTable *ids;    /* sandbox id ("" for the store) -> names (GHashTable set) or NULL: any name */
} Watch;

/* The pseudo-sandbox of the user's launcher choices (not a valid id) */
#define USER_ID "@user"

struct _GlStoreMonitor {
  char *store_dir;
  char *config_home;
  char *host_root;
  int fd;
  guint source;
  GHashTable *watches;      /* wd -> Watch */
  GHashTable *sandboxes;    /* id -> GHashTable set of wds (GINT_TO_POINTER) */
  GHashTable *changes;      /* id -> Changes, of the sandboxes armed */
  gboolean arm_failed;      /* a watch of the sandbox being armed could not be added */
  GlStoreMonitorFunc func;
  gpointer user_data;
};

static void
watch_free (Watch *w)
{
  g_free (w->path);
  g_hash_table_unref (w->ids);
  g_free (w);
}

static gboolean on_readable (int fd, GIOCondition condition, gpointer user_data);

static void
changes_free (Changes *c)
{
  g_hash_table_unref (c->dirs);
  g_strfreev (c->roots);
  g_free (c);
}

static void
changes_set_unknown (GlStoreMonitor *self, const char *id)
{
  Changes *c = g_hash_table_lookup (self->changes, id);

  if (c != NULL)
    c->unknown = TRUE;
}

static void
names_unref (gpointer p)
{
  if (p != NULL)
    g_hash_table_unref (p);
}

/* Adds a watch of @path for @id, interested in @names (NULL-terminated;
 * NULL: every name).  The wd is added to @wds.  Missing paths are fine. */
static int
add_watch (GlStoreMonitor *self, const char *path, const char *id, const char * const *names,
           GHashTable *wds)
{
  int wd = inotify_add_watch (self->fd, path, DIR_EVENTS);
  Watch *w;
  GHashTable *mine;
  gboolean had;

  if (wd < 0)
    {
      if (errno != ENOENT && errno != ENOTDIR)
        {
          g_debug ("Cannot watch %s: %s", path, g_strerror (errno));
          self->arm_failed = TRUE;
        }
      return -1;
    }
  w = g_hash_table_lookup (self->watches, GINT_TO_POINTER (wd));
  if (w == NULL)
    {
      w = g_new0 (Watch, 1);
      w->wd = wd;
      w->path = g_strdup (path);
      w->ids = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, names_unref);
      g_hash_table_insert (self->watches, GINT_TO_POINTER (wd), w);
    }
  else if (strcmp (w->path, path) != 0)
    {
      /* the same directory by another name (a bind mount, a moved tree) */
      g_free (w->path);
      w->path = g_strdup (path);
      w->aliased = TRUE;
    }

  had = g_hash_table_lookup_extended (w->ids, id, NULL, (gpointer *) &mine);
  if (names == NULL)
    g_hash_table_insert (w->ids, g_strdup (id), NULL);     /* any name wins */
  else if (!had || mine != NULL)
    {
      if (!had)
        {
          mine = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
          g_hash_table_insert (w->ids, g_strdup (id), mine);
        }
      for (gsize i = 0; names[i] != NULL; i++)
        g_hash_table_add (mine, g_strdup (names[i]));
    }
  if (wds != NULL)
    g_hash_table_add (wds, GINT_TO_POINTER (wd));
  return wd;
}

static void
drop_id_from_watch (GlStoreMonitor *self, int wd, const char *id)
{
  Watch *w = g_hash_table_lookup (self->watches, GINT_TO_POINTER (wd));

  if (w == NULL)
    return;
  if (id != NULL)
    g_hash_table_remove (w->ids, id);
  if (g_hash_table_size (w->ids) == 0)
    {
      inotify_rm_watch (self->fd, wd);
      g_hash_table_remove (self->watches, GINT_TO_POINTER (wd));
    }
}

/* A re-arm starts from nothing for @id (its interests in the watches it
 * had are cleared, the watches kept so their descriptors stay) and ends by
 * releasing the watches nobody wants any more. */
static void
begin_rearm (GlStoreMonitor *self, const char *id)
{
  GHashTable *old = g_hash_table_lookup (self->sandboxes, id);
  GHashTableIter iter;
  gpointer key;

  if (old == NULL)
    return;
  g_hash_table_iter_init (&iter, old);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    {
      Watch *w = g_hash_table_lookup (self->watches, key);
      if (w != NULL)
        g_hash_table_remove (w->ids, id);
    }
}

static void
end_rearm (GlStoreMonitor *self, const char *id, GHashTable *wds)
{
  GHashTable *old = g_hash_table_lookup (self->sandboxes, id);
  GHashTableIter iter;
  gpointer key;

  if (old != NULL)
    {
      g_hash_table_iter_init (&iter, old);
      while (g_hash_table_iter_next (&iter, &key, NULL))
        if (!g_hash_table_contains (wds, key))
          drop_id_from_watch (self, GPOINTER_TO_INT (key), NULL);
    }
  g_hash_table_insert (self->sandboxes, g_strdup (id), wds);
}

/* Every directory below @dir down to @depth levels (never through a link);
 * the kind of each entry from the listing itself, so the files in an icon
 * directory cost no stat each */
static void
add_tree (GlStoreMonitor *self, const char *dir, const char *id, int depth, GHashTable *wds)
{
  DIR *d;
  struct dirent *de;

  if (add_watch (self, dir, id, NULL, wds) < 0 || depth == 0)
    return;
  d = opendir (dir);
  if (d == NULL)
    return;
  while ((de = readdir (d)) != NULL)
    {
      g_autofree char *sub = NULL;
      struct stat st;

      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0 ||
          (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
        continue;
      sub = g_build_filename (dir, de->d_name, NULL);
      if (de->d_type == DT_UNKNOWN && (lstat (sub, &st) != 0 || !S_ISDIR (st.st_mode)))
        continue;
      add_tree (self, sub, id, depth - 1, wds);
    }
  closedir (d);
}

/* The chain root, root/usr, root/usr/share, each interested only in the
 * next component; then the three data directories themselves. */
static void
add_layer (GlStoreMonitor *self, const char *root, const char *id, gboolean whole, GHashTable *wds)
{
  g_autofree char *usr = g_build_filename (root, "usr", NULL);
  g_autofree char *share = g_build_filename (usr, "share", NULL);
  g_autofree char *apps = g_build_filename (share, "applications", NULL);
  g_autofree char *icons = g_build_filename (share, "icons", NULL);
  g_autofree char *pixmaps = g_build_filename (share, "pixmaps", NULL);

  if (!whole)
    {
      /* the host: only which applications it has (Base=host sandboxes
       * do not export what the host has itself) */
      add_watch (self, apps, id, NULL, wds);
      return;
    }
  add_watch (self, root, id, (const char *[]) { "usr", NULL }, wds);
  add_watch (self, usr, id, (const char *[]) { "share", NULL }, wds);
  add_watch (self, share, id, (const char *[]) { "applications", "icons", "pixmaps", NULL }, wds);
  add_tree (self, apps, id, APPS_DEPTH, wds);
  add_tree (self, icons, id, ICONS_DEPTH, wds);
  add_watch (self, pixmaps, id, NULL, wds);
}

/* "N\n" of system/current, or 0 */
static guint64
read_current (const char *system_dir)
{
  g_autofree char *path = g_build_filename (system_dir, "current", NULL);
  g_autofree char *text = NULL;
  guint64 n = 0;

  if (!g_file_get_contents (path, &text, NULL, NULL))
    return 0;
  g_strchomp (text);
  if (!g_ascii_string_to_unsigned (text, 10, 1, G_MAXUINT32, &n, NULL))
    return 0;
  return n;
}

GStrv
gl_store_monitor_layer_roots (const char *store_dir, const char *id, const char *host_root)
{
  g_autofree char *dir = g_build_filename (store_dir, id, NULL);
  g_autofree char *system = g_build_filename (dir, "system", NULL);
  g_autofree char *rootfs = g_build_filename (dir, "rootfs", NULL);
  g_autoptr(GStrvBuilder) b = g_strv_builder_new ();
  guint64 current = read_current (system);

  if (current > 0)
    {
      g_autofree char *gen = g_strdup_printf ("%" G_GUINT64_FORMAT, current);
      g_autofree char *tree = g_build_filename (system, gen, "tree", NULL);
      g_strv_builder_add (b, tree);
    }
  else
    {
      /* the layout before generations, until root converts it */
      g_autofree char *upper = g_build_filename (system, "upper", NULL);
      if (g_file_test (upper, G_FILE_TEST_IS_DIR))
        g_strv_builder_add (b, upper);
    }
  g_strv_builder_add (b, g_file_test (rootfs, G_FILE_TEST_IS_DIR) ? rootfs : host_root);
  return g_strv_builder_end (b);
}

void
gl_store_monitor_watch_sandbox (GlStoreMonitor *self, const char *id)
{
  g_autofree char *dir = g_build_filename (self->store_dir, id, NULL);
  g_autofree char *system = g_build_filename (dir, "system", NULL);
  g_autoptr(GHashTable) wds = g_hash_table_new (NULL, NULL);
  g_auto(GStrv) roots = gl_store_monitor_layer_roots (self->store_dir, id, self->host_root);
  g_autoptr(GStrvBuilder) whole = g_strv_builder_new ();
  Changes *c;

  begin_rearm (self, id);
  self->arm_failed = FALSE;
  if (add_watch (self, dir, id, (const char *[]) { "sandbox.conf", "rootfs", "system", NULL }, wds) >= 0)
    {
      add_watch (self, system, id, (const char *[]) { "current", "upper", NULL }, wds);
      for (gsize i = 0; roots[i] != NULL; i++)
        {
          gboolean is_whole = strcmp (roots[i], self->host_root) != 0;

          add_layer (self, roots[i], id, is_whole, wds);
          if (is_whole)
            g_strv_builder_add (whole, roots[i]);
        }
    }
  end_rearm (self, id, g_steal_pointer (&wds));

  c = g_hash_table_lookup (self->changes, id);
  if (c == NULL)
    {
      c = g_new0 (Changes, 1);
      c->dirs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
      g_hash_table_insert (self->changes, g_strdup (id), c);
    }
  g_strfreev (c->roots);
  c->roots = self->arm_failed ? NULL : g_strv_builder_end (whole);
}

gboolean
gl_store_monitor_take_changes (GlStoreMonitor *self, const char *id, GStrv *dirs)
{
  Changes *c = g_hash_table_lookup (self->changes, id);
  gboolean known = c != NULL && !c->unknown;
  g_autoptr(GPtrArray) list = NULL;
  GHashTableIter iter;
  gpointer key;

  *dirs = NULL;
  if (c == NULL)
    return FALSE;
  if (known)
    {
      list = g_ptr_array_new ();
      g_hash_table_iter_init (&iter, c->dirs);
      while (g_hash_table_iter_next (&iter, &key, NULL))
        g_ptr_array_add (list, g_strdup (key));
      g_ptr_array_add (list, NULL);
      *dirs = (GStrv) g_ptr_array_free (g_steal_pointer (&list), FALSE);
    }
  c->unknown = FALSE;
  c->n_events = 0;
  g_hash_table_remove_all (c->dirs);
  return known;
}

void
gl_store_monitor_lose_changes (GlStoreMonitor *self, const char *id)
{
  changes_set_unknown (self, id);
}

GStrv
gl_store_monitor_watched_roots (GlStoreMonitor *self, const char *id)
{
  Changes *c = g_hash_table_lookup (self->changes, id);

  return c != NULL ? g_strdupv (c->roots) : NULL;
}

void
gl_store_monitor_drain (GlStoreMonitor *self)
{
  on_readable (self->fd, G_IO_IN, self);
}

void
gl_store_monitor_forget_sandbox (GlStoreMonitor *self, const char *id)
{
  GHashTable *old = g_hash_table_lookup (self->sandboxes, id);
  GHashTableIter iter;
  gpointer key;

  if (old == NULL)
    return;
  g_hash_table_iter_init (&iter, old);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    drop_id_from_watch (self, GPOINTER_TO_INT (key), id);
  g_hash_table_remove (self->sandboxes, id);
  g_hash_table_remove (self->changes, id);
}

void
gl_store_monitor_watch_store (GlStoreMonitor *self)
{
  g_autofree char *parent = g_path_get_dirname (self->store_dir);
  g_autofree char *base = g_path_get_basename (self->store_dir);
  g_autoptr(GHashTable) wds = g_hash_table_new (NULL, NULL);

  /* the store, or its parent until the store is created */
  begin_rearm (self, "");
  if (add_watch (self, self->store_dir, "", NULL, wds) < 0)
    add_watch (self, parent, "", (const char *[]) { base, NULL }, wds);
  end_rearm (self, "", g_steal_pointer (&wds));
}

void
gl_store_monitor_watch_user_config (GlStoreMonitor *self, const char *config_home)
{
  g_autofree char *glimpse = NULL;
  g_autofree char *launchers = NULL;
  g_autoptr(GHashTable) wds = g_hash_table_new (NULL, NULL);

  if (config_home != self->config_home)
    {
      g_free (self->config_home);
      self->config_home = g_strdup (config_home);
    }
  glimpse = g_build_filename (self->config_home, "glimpse", NULL);
  launchers = g_build_filename (glimpse, "launchers", NULL);
  begin_rearm (self, USER_ID);
  add_watch (self, self->config_home, USER_ID, (const char *[]) { "glimpse", NULL }, wds);
  add_watch (self, glimpse, USER_ID, (const char *[]) { "launchers", NULL }, wds);
  add_watch (self, launchers, USER_ID, NULL, wds);
  end_rearm (self, USER_ID, g_steal_pointer (&wds));
}

guint
gl_store_monitor_n_watches (GlStoreMonitor *self)
{
  return g_hash_table_size (self->watches);
}

static void
notify (GlStoreMonitor *self, const char *id, const struct inotify_event *ev)
{
  if (strcmp (id, USER_ID) == 0)
    {
      g_autofree char *sandbox = NULL;

      if (ev->len > 0 && g_str_has_suffix (ev->name, ".conf") && strlen (ev->name) > 5)
        {
          sandbox = g_strndup (ev->name, strlen (ev->name) - 5);
          changes_set_unknown (self, sandbox);
          self->func (self, sandbox, self->user_data);
        }
      else
        gl_store_monitor_watch_user_config (self, self->config_home);   /* a directory came or went */
      return;
    }
  self->func (self, *id == '\0' ? NULL : id, self->user_data);
}

/* What event @ev of the watch @w (@names: the names sandbox @id wants of
 * it, NULL: any) says changed in @id */
static void
note_change (GlStoreMonitor *self, const char *id, Watch *w, GHashTable *names,
             const struct inotify_event *ev)
{
  Changes *c = g_hash_table_lookup (self->changes, id);

  if (c == NULL || c->unknown)
    return;
  if (names != NULL || ev->len == 0 || w->aliased || ++c->n_events > MAX_EVENTS ||
      (ev->mask & (IN_ISDIR | IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED | IN_UNMOUNT)) != 0)
    {
      /* the watches themselves may have to change */
      c->unknown = TRUE;
      g_hash_table_remove_all (c->dirs);
      return;
    }
  g_hash_table_add (c->dirs, g_strdup (w->path));
}

static void
handle_event (GlStoreMonitor *self, const struct inotify_event *ev)
{
  Watch *w;
  GHashTableIter iter;
  gpointer key, value;
  g_autoptr(GPtrArray) hit = NULL;

  if (ev->mask & IN_Q_OVERFLOW)
    {
      g_debug ("inotify queue overflowed: every sandbox may have changed");
      g_hash_table_iter_init (&iter, self->changes);
      while (g_hash_table_iter_next (&iter, NULL, &value))
        ((Changes *) value)->unknown = TRUE;
      self->func (self, NULL, self->user_data);
      g_hash_table_iter_init (&iter, self->sandboxes);
      while (g_hash_table_iter_next (&iter, &key, NULL))
        if (*(const char *) key != '\0' && strcmp (key, USER_ID) != 0)
          self->func (self, key, self->user_data);
      return;
    }
  w = g_hash_table_lookup (self->watches, GINT_TO_POINTER (ev->wd));
  if (w == NULL)
    return;

  /* collect first: the callback may re-arm and free watches */
  hit = g_ptr_array_new_with_free_func (g_free);
  g_hash_table_iter_init (&iter, w->ids);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      GHashTable *names = value;

      if (names != NULL && ev->len > 0 && !(ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)) &&
          !g_hash_table_contains (names, ev->name))
        continue;
      if (names != NULL && ev->len == 0 && !(ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)))
        continue;   /* attributes of the directory itself */
      note_change (self, key, w, names, ev);
      g_ptr_array_add (hit, g_strdup (key));
    }

  if (ev->mask & IN_IGNORED)
    {
      /* the directory is gone: forget the watch everywhere */
      g_hash_table_iter_init (&iter, self->sandboxes);
      while (g_hash_table_iter_next (&iter, NULL, &value))
        g_hash_table_remove (value, GINT_TO_POINTER (ev->wd));
      g_hash_table_remove (self->watches, GINT_TO_POINTER (ev->wd));
    }

  for (guint i = 0; i < hit->len; i++)
    notify (self, hit->pdata[i], ev);
}

static gboolean
on_readable (int fd, GIOCondition condition, gpointer user_data)
{
  GlStoreMonitor *self = user_data;
  char buf[16384] __attribute__ ((aligned (__alignof__ (struct inotify_event))));

  for (;;)
    {
      ssize_t n = read (fd, buf, sizeof buf);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      for (char *p = buf; p < buf + n; )
        {
          const struct inotify_event *ev = (const struct inotify_event *) (void *) p;

          handle_event (self, ev);
          p += sizeof (struct inotify_event) + ev->len;
        }
    }
  return G_SOURCE_CONTINUE;
}

GlStoreMonitor *
gl_store_monitor_new (const char *store_dir, const char *host_root,
                      GlStoreMonitorFunc func, gpointer user_data, GError **error)
{
  g_autoptr(GlStoreMonitor) self = g_new0 (GlStoreMonitor, 1);

  self->fd = -1;
  self->store_dir = g_strdup (store_dir);
  self->host_root = g_strdup (host_root);
  self->func = func;
  self->user_data = user_data;
  self->watches = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) watch_free);
  self->sandboxes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                           (GDestroyNotify) g_hash_table_unref);
  self->changes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) changes_free);
  self->fd = inotify_init1 (IN_CLOEXEC | IN_NONBLOCK);
  if (self->fd < 0)
    {
      int saved = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "Cannot watch the sandboxes (inotify_init1: %s); raise "
                   "fs.inotify.max_user_instances if the limit is reached",
                   g_strerror (saved));
      return NULL;
    }
  self->source = g_unix_fd_add (self->fd, G_IO_IN, on_readable, self);
  gl_store_monitor_watch_store (self);
  return g_steal_pointer (&self);
}

void
gl_store_monitor_free (GlStoreMonitor *self)
{
  if (self == NULL)
    return;
  if (self->source != 0)
    g_source_remove (self->source);
  g_clear_pointer (&self->watches, g_hash_table_unref);
  g_clear_pointer (&self->sandboxes, g_hash_table_unref);
  g_clear_pointer (&self->changes, g_hash_table_unref);
  if (self->fd >= 0)
    close (self->fd);
  g_free (self->store_dir);
  g_free (self->config_home);
  g_free (self->host_root);
  g_free (self);
}
