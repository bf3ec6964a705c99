/* gl-agent.c: the session agent's state — every sandbox's menu kept live
 *
 * The store monitor reports which sandbox an event concerns; the agent
 * collects them and, once things are quiet (or a burst has gone on for a
 * while), re-arms that sandbox's watches and exports only it again, through
 * the one export engine (gl_export_sync) and its manifest.  No timer runs
 * while nothing happens.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <malloc.h>
#include <string.h>
#include <unistd.h>

#include "gl-agent.h"
#include "gl-store-monitor.h"
#include "gl-sandbox.h"
#include "gl-store.h"

#define DEFAULT_QUIET_MS 150
#define DEFAULT_MAX_MS 700

struct _GlAgent {
  GObject parent;
  char *store_dir;
  char *host_root;
  GlExportContext *ctx;
  GlStoreMonitor *monitor;
  GHashTable *sandboxes;     /* id -> GlAgentSandbox */
  GPtrArray *listing;        /* sorted view for gl_agent_list */

  /* the debounce */
  GHashTable *pending;       /* ids */
  gboolean pending_store;
  gint64 burst_start;        /* monotonic µs, 0: no burst */
  guint flush_source;
  guint quiet_ms, max_ms;
};

enum { SIGNAL_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

G_DEFINE_TYPE (GlAgent, gl_agent, G_TYPE_OBJECT)

const char *
gl_agent_export_state_to_string (GlAgentExportState state)
{
  switch (state)
    {
    case GL_AGENT_EXPORT_EXPORTED:
      return "exported";
    case GL_AGENT_EXPORT_HIDDEN:
      return "hidden";
    case GL_AGENT_EXPORT_BROKEN:
      return "broken";
    case GL_AGENT_EXPORT_PENDING:
    default:
      return "pending";
    }
}

static void
agent_sandbox_free (GlAgentSandbox *s)
{
  g_free (s->id);
  g_free (s->name);
  g_free (s->error);
  g_hash_table_unref (s->properties);
  g_free (s);
}

static GlAgentSandbox *
ensure_sandbox (GlAgent *self, const char *id)
{
  GlAgentSandbox *s = g_hash_table_lookup (self->sandboxes, id);

  if (s == NULL)
    {
      s = g_new0 (GlAgentSandbox, 1);
      s->id = g_strdup (id);
      s->name = g_strdup (id);
      s->properties = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                             (GDestroyNotify) g_variant_unref);
      g_hash_table_insert (self->sandboxes, s->id, s);
      g_clear_pointer (&self->listing, g_ptr_array_unref);
    }
  return s;
}

static void
forget_sandbox (GlAgent *self, const char *id)
{
  if (g_hash_table_remove (self->sandboxes, id))
    g_clear_pointer (&self->listing, g_ptr_array_unref);
}

static void
emit_changed (GlAgent *self, GPtrArray *ids)
{
  if (ids->len == 0)
    return;
  g_ptr_array_add (ids, NULL);
  g_signal_emit (self, signals[SIGNAL_CHANGED], 0, (GStrv) ids->pdata);
  g_ptr_array_remove_index (ids, ids->len - 1);
}

/* Sandbox-looking directories of the store */
static GHashTable *
scan_store (GlAgent *self)
{
  GHashTable *ids = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GDir) dir = g_dir_open (self->store_dir, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = NULL;

      /* creations in progress are ".name" and not valid ids */
      if (!gl_sandbox_id_is_valid (name))
        continue;
      path = g_build_filename (self->store_dir, name, NULL);
      if (g_file_test (path, G_FILE_TEST_IS_DIR))
        g_hash_table_add (ids, g_strdup (name));
    }
  return ids;
}

/* Attributes per-entry warnings of the engine to the sandboxes they name */
static void
note_warnings (GlAgent *self, GPtrArray *ids, GPtrArray *warnings)
{
  for (guint i = 0; i < ids->len; i++)
    {
      GlAgentSandbox *s = g_hash_table_lookup (self->sandboxes, ids->pdata[i]);
      g_autofree char *needle = NULL;

      if (s == NULL)
        continue;
      needle = g_strdup_printf ("sandbox %s", s->id);
      for (guint j = 0; j < warnings->len; j++)
        {
          const GError *w = warnings->pdata[j];
          if (strstr (w->message, needle) != NULL || ids->len == 1)
            {
              g_free (s->error);
              s->error = g_strdup (w->message);
            }
        }
    }
  for (guint j = 0; j < warnings->len; j++)
    g_debug ("%s", ((GError *) warnings->pdata[j])->message);
}

/* The apps of each sandbox, as the export (@sources) counted them */
static void
note_exported (GlAgent *self, GPtrArray *sources)
{
  gint64 now = g_get_real_time ();

  for (guint i = 0; i < sources->len; i++)
    {
      GlExportSource *source = sources->pdata[i];
      GlAgentSandbox *s = g_hash_table_lookup (self->sandboxes, source->id);

      if (s == NULL || s->export_state != GL_AGENT_EXPORT_PENDING)
        continue;
      s->n_apps = source->n_exported;
      s->export_state = GL_AGENT_EXPORT_EXPORTED;
      s->synced = now;
    }
}

/* Loads sandbox @id into its state; returns an export source when its
 * applications are to be exported, NULL otherwise (*gone set when the
 * exports are to go). */
static GlExportSource *
prepare_sandbox (GlAgent *self, const char *id, gboolean *gone)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GlSandbox) sb = gl_sandbox_load (self->store_dir, id, &error);
  GlAgentSandbox *s;
  GlExportSource *source;

  *gone = FALSE;
  if (sb == NULL)
    {
      if (g_error_matches (error, GL_STORE_ERROR, GL_STORE_ERROR_NOT_FOUND))
        {
          /* no sandbox.conf (any more): not a sandbox */
          *gone = TRUE;
          return NULL;
        }
      /* a broken sandbox.conf is an administrator's mistake in progress:
       * the menu stays as it was until it is fixed */
      s = ensure_sandbox (self, id);
      s->export_state = GL_AGENT_EXPORT_BROKEN;
      g_free (s->error);
      s->error = g_strdup (error->message);
      g_debug ("%s", error->message);
      return NULL;
    }
  s = ensure_sandbox (self, id);
  g_free (s->name);
  s->name = g_strdup (sb->name != NULL ? sb->name : id);
  g_clear_pointer (&s->error, g_free);
  if (gl_export_user_disabled (self->ctx->config_home, id))
    {
      s->export_state = GL_AGENT_EXPORT_HIDDEN;
      s->n_apps = 0;
      *gone = TRUE;
      return NULL;
    }
  source = gl_export_store_source_new (sb, self->host_root, self->ctx->config_home, &error);
  if (source == NULL)
    {
      s->export_state = GL_AGENT_EXPORT_BROKEN;
      s->error = g_strdup (error->message);
      g_debug ("%s", error->message);
      return NULL;
    }
  s->export_state = GL_AGENT_EXPORT_PENDING;
  return source;
}

/* The agent's resident size (/proc/self/statm), in bytes; 0 if unknown */
static gsize
resident_bytes (void)
{
  g_autofree char *statm = NULL;
  char *end = NULL;
  guint64 pages;

  if (!g_file_get_contents ("/proc/self/statm", &statm, NULL, NULL))
    return 0;
  pages = g_ascii_strtoull (statm, &end, 10);          /* size */
  pages = g_ascii_strtoull (end, NULL, 10);            /* resident */
  return (gsize) pages * (gsize) sysconf (_SC_PAGESIZE);
}

/* Above this resident size the heap a run freed goes back to the system */
#define KEEP_RESIDENT (9 * 1024 * 1024)

/* An export reads every changed entry and icon, and the manifest, into
 * memory: what it freed goes back to the system after a run over more
 * than one sandbox (a complete sync, a burst over several), and after any
 * run that left the agent above KEEP_RESIDENT, so the idle agent stays
 * small.  Not otherwise: malloc_trim() walks every free chunk and
 * madvise()s it (5-35 ms on a loaded machine, as much as the rest of a
 * one-app change), and the next run faults the same pages in again.
 * (mallinfo2's free bytes cannot decide it: they count the free chunks
 * trimmed already.) */
static void
trim_heap (guint n_sandboxes, gboolean all)
{
  if (all || n_sandboxes > 1 || resident_bytes () > KEEP_RESIDENT)
    malloc_trim (0);
}

/* Exports @ids (and, with @all, every sandbox, dropping the exports of
 * sandboxes that are gone).  With @narrow, a sandbox in which the watches
 * saw files change only in watched directories keeps its watches and is
 * exported from those directories, the rest taken as the last export
 * found it (GlExportSource.changed_dirs); else every place is looked at. */
static gboolean
sync_sandboxes (GlAgent *self, GHashTable *ids, gboolean all, gboolean narrow, GError **error)
{
  g_autoptr(GPtrArray) sources = g_ptr_array_new_with_free_func ((GDestroyNotify) gl_export_source_free);
  g_autoptr(GPtrArray) synced = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) changed = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) remove = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func ((GDestroyNotify) g_error_free);
  g_autoptr(GHashTable) present = NULL;
  g_autoptr(GList) keys = NULL;
  GlExportStats stats = { 0, };
  gint64 start = g_get_monotonic_time ();
  gboolean ok = TRUE;
  guint n_narrow = 0;

  /* what happened up to now is in this run's changes */
  gl_store_monitor_drain (self->monitor);
  if (all)
    {
      GHashTableIter iter;
      gpointer key;

      gl_store_monitor_watch_store (self->monitor);
      present = scan_store (self);
      /* sandboxes known that are gone */
      g_hash_table_iter_init (&iter, self->sandboxes);
      while (g_hash_table_iter_next (&iter, &key, NULL))
        if (!g_hash_table_contains (present, key))
          g_ptr_array_add (remove, g_strdup (key));
      ids = present;
    }

  keys = g_list_sort (g_hash_table_get_keys (ids), (GCompareFunc) strcmp);
  for (GList *l = keys; l != NULL; l = l->next)
    {
      const char *id = l->data;
      g_autofree char *dir = g_build_filename (self->store_dir, id, NULL);
      GlExportSource *source = NULL;
      gboolean gone = TRUE;

      g_ptr_array_add (changed, g_strdup (id));
      if (g_file_test (dir, G_FILE_TEST_IS_DIR))
        {
          g_auto(GStrv) dirs = NULL;
          gboolean known = gl_store_monitor_take_changes (self->monitor, id, &dirs) && narrow;

          /* watch first: a change while we read is not lost (the watches
           * stand when only files changed in watched directories) */
          if (!known)
            gl_store_monitor_watch_sandbox (self->monitor, id);
          source = prepare_sandbox (self, id, &gone);
          if (source != NULL)
            {
              source->watched_roots = gl_store_monitor_watched_roots (self->monitor, id);
              if (known)
                {
                  source->changed_dirs = g_steal_pointer (&dirs);
                  n_narrow++;
                }
            }
          else if (known)
            gl_store_monitor_lose_changes (self->monitor, id);
        }
      if (source != NULL)
        {
          g_ptr_array_add (sources, source);
          g_ptr_array_add (synced, g_strdup (id));
        }
      else if (gone)
        {
          GlAgentSandbox *s = g_hash_table_lookup (self->sandboxes, id);

          if (s == NULL || s->export_state != GL_AGENT_EXPORT_HIDDEN)
            forget_sandbox (self, id);
          /* a directory without sandbox.conf stays watched: it may be a
           * sandbox being made by hand */
          if (!g_file_test (dir, G_FILE_TEST_IS_DIR))
            gl_store_monitor_forget_sandbox (self->monitor, id);
          if (!all)
            g_ptr_array_add (remove, g_strdup (id));
        }
    }

  if (!gl_export_sync (self->ctx, sources, all, &stats, warnings, error))
    ok = FALSE;
  for (guint i = 0; i < remove->len; i++)
    {
      g_autoptr(GError) local_error = NULL;
      const char *id = remove->pdata[i];

      if (all)
        {
          /* gl_export_sync above removed them */
          gl_store_monitor_forget_sandbox (self->monitor, id);
          forget_sandbox (self, id);
          g_ptr_array_add (changed, g_strdup (id));
        }
      else if (!gl_export_unexport (self->ctx, id, &local_error))
        g_debug ("%s", local_error->message);
    }
  note_warnings (self, synced, warnings);
  if (ok)
    note_exported (self, sources);
  else
    for (guint i = 0; i < synced->len; i++)
      {
        GlAgentSandbox *s = g_hash_table_lookup (self->sandboxes, synced->pdata[i]);
        if (s != NULL)
          {
            g_free (s->error);
            s->error = g_strdup ((*error)->message);
          }
      }
  g_debug ("Exported %u sandbox(es), removed %u in %.1f ms: %u written, %u unchanged, "
           "%u removed, %u skipped; %u watches; %u from the directories that changed",
           synced->len, remove->len, (g_get_monotonic_time () - start) / 1000.0,
           stats.written, stats.unchanged, stats.removed, stats.skipped,
           gl_store_monitor_n_watches (self->monitor), n_narrow);
  emit_changed (self, changed);
  trim_heap (synced->len + remove->len, all);
  return ok;
}

static gboolean
flush (gpointer user_data)
{
  GlAgent *self = user_data;
  g_autoptr(GHashTable) ids = g_steal_pointer (&self->pending);
  g_autoptr(GError) error = NULL;
  gboolean all = self->pending_store;

  self->flush_source = 0;
  self->burst_start = 0;
  self->pending_store = FALSE;
  self->pending = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  if (all)
    {
      /* which sandboxes came or went: those, not all of them */
      g_autoptr(GHashTable) present = NULL;
      GHashTableIter iter;
      gpointer key;

      gl_store_monitor_watch_store (self->monitor);
      present = scan_store (self);
      g_hash_table_iter_init (&iter, present);
      while (g_hash_table_iter_next (&iter, &key, NULL))
        if (!g_hash_table_contains (self->sandboxes, key))
          g_hash_table_add (ids, g_strdup (key));
      g_hash_table_iter_init (&iter, self->sandboxes);
      while (g_hash_table_iter_next (&iter, &key, NULL))
        if (!g_hash_table_contains (present, key))
          g_hash_table_add (ids, g_strdup (key));
    }
  if (g_hash_table_size (ids) > 0 && !sync_sandboxes (self, ids, FALSE, TRUE, &error))
    g_warning ("%s", error->message);
  return G_SOURCE_REMOVE;
}

static void
on_monitor_event (GlStoreMonitor *monitor, const char *id, gpointer user_data)
{
  GlAgent *self = user_data;
  gint64 now = g_get_monotonic_time ();
  gint64 due;

  if (id != NULL && !gl_sandbox_id_is_valid (id))
    return;   /* a stray file in the user's launcher choices */
  if (id == NULL)
    self->pending_store = TRUE;
  else
    g_hash_table_add (self->pending, g_strdup (id));

  if (self->burst_start == 0)
    self->burst_start = now;
  due = MIN (now + (gint64) self->quiet_ms * 1000, self->burst_start + (gint64) self->max_ms * 1000);
  if (self->flush_source != 0)
    g_source_remove (self->flush_source);
  self->flush_source = g_timeout_add (MAX (0, (due - now) / 1000), flush, self);
}

gboolean
gl_agent_refresh (GlAgent *self, const char * const *ids, GError **error)
{
  g_autoptr(GHashTable) set = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  g_return_val_if_fail (GL_IS_AGENT (self), FALSE);
  /* asked for: every place looked at again */
  if (ids == NULL || ids[0] == NULL)
    return sync_sandboxes (self, set, TRUE, FALSE, error);
  for (gsize i = 0; ids[i] != NULL; i++)
    {
      if (!gl_sandbox_id_validate (ids[i], error))
        return FALSE;
      g_hash_table_add (set, g_strdup (ids[i]));
    }
  return sync_sandboxes (self, set, FALSE, FALSE, error);
}

gboolean
gl_agent_start (GlAgent *self, GError **error)
{
  g_return_val_if_fail (GL_IS_AGENT (self), FALSE);
  g_return_val_if_fail (self->monitor == NULL, FALSE);

  self->monitor = gl_store_monitor_new (self->store_dir, self->host_root, on_monitor_event, self, error);
  if (self->monitor == NULL)
    return FALSE;
  /* the user's own choice: glimpse add-launcher, unexport, "Hide from menu" */
  gl_store_monitor_watch_user_config (self->monitor, self->ctx->config_home);
  if (!gl_agent_refresh (self, NULL, error))
    {
      /* the manifest could not be written: say so, keep watching */
      g_warning ("%s", (*error)->message);
      g_clear_error (error);
    }
  return TRUE;
}

static gint
compare_sandboxes (gconstpointer a, gconstpointer b)
{
  return strcmp ((*(GlAgentSandbox * const *) a)->id, (*(GlAgentSandbox * const *) b)->id);
}

GPtrArray *
gl_agent_list (GlAgent *self)
{
  if (self->listing == NULL)
    {
      GHashTableIter iter;
      gpointer value;

      self->listing = g_ptr_array_new ();
      g_hash_table_iter_init (&iter, self->sandboxes);
      while (g_hash_table_iter_next (&iter, NULL, &value))
        g_ptr_array_add (self->listing, value);
      g_ptr_array_sort (self->listing, compare_sandboxes);
    }
  return self->listing;
}

GlAgentSandbox *
gl_agent_lookup (GlAgent *self, const char *id)
{
  return g_hash_table_lookup (self->sandboxes, id);
}

void
gl_agent_set_sandbox_property (GlAgent *self, const char *id, const char *key, GVariant *value)
{
  GlAgentSandbox *s = g_hash_table_lookup (self->sandboxes, id);
  g_autoptr(GPtrArray) changed = g_ptr_array_new ();

  if (s == NULL)
    {
      if (value != NULL)
        g_variant_unref (g_variant_ref_sink (value));
      return;
    }
  if (value != NULL)
    g_hash_table_insert (s->properties, g_strdup (key), g_variant_ref_sink (value));
  else
    g_hash_table_remove (s->properties, key);
  g_ptr_array_add (changed, s->id);
  emit_changed (self, changed);
}

const char *
gl_agent_get_store_dir (GlAgent *self)
{
  return self->store_dir;
}

GlExportContext *
gl_agent_get_export_context (GlAgent *self)
{
  return self->ctx;
}

guint
gl_agent_get_n_watches (GlAgent *self)
{
  return self->monitor != NULL ? gl_store_monitor_n_watches (self->monitor) : 0;
}

void
gl_agent_set_debounce (GlAgent *self, guint quiet_ms, guint max_ms)
{
  self->quiet_ms = quiet_ms;
  self->max_ms = MAX (quiet_ms, max_ms);
}

GlAgent *
gl_agent_new (const char *store_dir, const char *host_root, GlExportContext *ctx)
{
  GlAgent *self = g_object_new (GL_TYPE_AGENT, NULL);

  self->store_dir = g_strdup (store_dir);
  self->host_root = g_strdup (host_root);
  self->ctx = ctx;
  /* what each sandbox was exported from: a resync of one that did not
   * change only stats its sources */
  if (ctx->cache == NULL)
    ctx->cache = gl_export_cache_new ();
  return self;
}

static void
gl_agent_finalize (GObject *object)
{
  GlAgent *self = GL_AGENT (object);

  if (self->flush_source != 0)
    g_source_remove (self->flush_source);
  g_clear_pointer (&self->monitor, gl_store_monitor_free);
  g_clear_pointer (&self->listing, g_ptr_array_unref);
  g_clear_pointer (&self->sandboxes, g_hash_table_unref);
  g_clear_pointer (&self->pending, g_hash_table_unref);
  g_clear_pointer (&self->ctx, gl_export_context_free);
  g_free (self->store_dir);
  g_free (self->host_root);
  G_OBJECT_CLASS (gl_agent_parent_class)->finalize (object);
}

static void
gl_agent_init (GlAgent *self)
{
  self->sandboxes = g_hash_table_new_full (g_str_hash, g_str_equal, NULL,
                                           (GDestroyNotify) agent_sandbox_free);
  self->pending = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->quiet_ms = DEFAULT_QUIET_MS;
  self->max_ms = DEFAULT_MAX_MS;
}

static void
gl_agent_class_init (GlAgentClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = gl_agent_finalize;
  signals[SIGNAL_CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                          0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRV);
}
