/* gl-export-sync.c: the sync engine — brings the user's directories in line
 * with a plan, with the manifest saying which files are Glimpse's
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gl-app-folders.h"
#include "gl-export-private.h"
#include "gl-fm-actions.h"
#include "gl-manifest.h"

/* --------------------------------------------------------------- context */

GlExportContext *
gl_export_context_new (const char *launcher, const char *glimpse)
{
  GlExportContext *ctx = g_new0 (GlExportContext, 1);

  ctx->data_home = g_strdup (g_get_user_data_dir ());
  ctx->config_home = g_strdup (g_get_user_config_dir ());
  ctx->launcher = g_strdup (launcher);
  ctx->glimpse = g_strdup (glimpse);
  ctx->app_folders = TRUE;
  ctx->file_managers = TRUE;
  ctx->caja_scripts = !gl_fm_caja_actions_installed ();
  return ctx;
}

void
gl_export_context_free (GlExportContext *ctx)
{
  if (ctx == NULL)
    return;
  g_free (ctx->data_home);
  g_free (ctx->config_home);
  g_free (ctx->launcher);
  g_free (ctx->glimpse);
  gl_export_cache_free (ctx->cache);
  g_free (ctx);
}

char *
gl_export_manifest_path (GlExportContext *ctx)
{
  return g_build_filename (ctx->data_home, "glimpse", "export-manifest", NULL);
}

static gboolean
ensure_dir (GlManifest *m, const char *dir, GError **error)
{
  g_autofree char *parent = NULL;

  if (g_file_test (dir, G_FILE_TEST_IS_DIR))
    return TRUE;
  parent = g_path_get_dirname (dir);
  if (strcmp (parent, dir) != 0 && !ensure_dir (m, parent, error))
    return FALSE;
  if (mkdir (dir, 0755) != 0 && errno != EEXIST)
    {
      int saved = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "Cannot create the directory %s: %s", dir, g_strerror (saved));
      return FALSE;
    }
  g_hash_table_add (m->dirs, g_strdup (dir));
  return TRUE;
}

/* @data written to a temporary file beside @path ("<file>.XXXXXX", as
 * g_file_set_contents names them: a killed run's is removed by the next
 * complete sync) given @mode and renamed over @path: atomic, a killed run
 * leaves the old file or the new one; not synced (see sync_write) */
static gboolean
replace_contents (const char *path, const char *data, gsize len, int mode, GError **error)
{
  g_autofree char *tmp = g_strconcat (path, ".XXXXXX", NULL);
  int fd = g_mkstemp_full (tmp, O_RDWR | O_CLOEXEC, mode);
  int saved = 0;

  if (fd < 0)
    {
      saved = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "Failed to create file “%s”: %s", tmp, g_strerror (saved));
      return FALSE;
    }
  while (len > 0)
    {
      ssize_t n = write (fd, data, len);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          saved = errno;
          break;
        }
      data += n;
      len -= (gsize) n;
    }
  /* the umask may have masked it at creation */
  if (saved == 0 && fchmod (fd, mode) != 0)
    saved = errno;
  if (close (fd) != 0 && saved == 0)
    saved = errno;
  if (saved == 0 && rename (tmp, path) != 0)
    saved = errno;
  if (saved != 0)
    {
      unlink (tmp);
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "Failed to write “%s”: %s", path, g_strerror (saved));
      return FALSE;
    }
  return TRUE;
}

/* @path written with @contents and @mode, atomically; @durable: synced
 * before the rename if it replaces a file (a merged file, the user's as
 * much as ours), else not synced at all (an export, which the next sync
 * repairs: see sync_write); @known_dirs (or NULL) holds the directories
 * this run has seen to exist */
static gboolean
write_file (GlManifest *m, const char *path, GBytes *contents, int mode,
            GHashTable *known_dirs, gboolean durable, GError **error)
{
  g_autofree char *dir = g_path_get_dirname (path);
  gsize len;
  const char *data = g_bytes_get_data (contents, &len);

  /* a directory is looked at once per run, not once per file in it */
  if (known_dirs == NULL || !g_hash_table_contains (known_dirs, dir))
    {
      if (!ensure_dir (m, dir, error))
        return FALSE;
      if (known_dirs != NULL)
        g_hash_table_add (known_dirs, g_steal_pointer (&dir));
    }
  if (!durable)
    return replace_contents (path, data, len, mode, error);
  if (!g_file_set_contents_full (path, data, len,
                                 G_FILE_SET_CONTENTS_CONSISTENT | G_FILE_SET_CONTENTS_ONLY_EXISTING,
                                 mode, error))
    return FALSE;
  /* the umask may have masked the mode */
  if (chmod (path, mode) != 0)
    {
      int saved = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "Cannot set the mode of %s: %s", path, g_strerror (saved));
      return FALSE;
    }
  return TRUE;
}

static gboolean
run_tool (GlExportContext *ctx, const char * const *argv)
{
  return ctx->run_tool != NULL && ctx->run_tool (argv, ctx->run_tool_data);
}

static gint
compare_length_desc (gconstpointer a, gconstpointer b)
{
  return (int) strlen (b) - (int) strlen (a);
}

static void
sync_thunar (GlExportContext *ctx, GlManifest *m, const GlExportedSandbox *sandboxes,
             guint n, GlExportStats *stats, GPtrArray *warnings)
{
  g_autofree char *path = gl_fm_thunar_path (ctx);
  g_autofree char *existing = NULL;
  g_autofree char *merged = NULL;
  g_autoptr(GError) error = NULL;
  const char *created = g_hash_table_lookup (m->merged, path);
  gboolean we_created;

  if (!g_file_get_contents (path, &existing, NULL, NULL))
    {
      g_clear_pointer (&existing, g_free);
      if (n == 0)
        {
          g_hash_table_remove (m->merged, path);
          return;
        }
      /* Thunar reads only the first uca.xml: start from the system's, as
       * Thunar itself does, so its default actions stay */
      existing = gl_fm_thunar_system_default ();
      created = "1";
    }
  we_created = g_strcmp0 (created, "1") == 0;

  merged = gl_fm_thunar_merge (path, existing, sandboxes, n, ctx->glimpse, &error);
  if (merged == NULL)
    {
      gl_export_add_warning (warnings, stats, error);
      return;
    }

  if (n == 0 && we_created)
    {
      g_autofree char *def = gl_fm_thunar_system_default ();
      g_autofree char *empty = gl_fm_thunar_merge (path, def, NULL, 0, ctx->glimpse, NULL);

      if (g_strcmp0 (merged, empty) == 0)
        {
          if (unlink (path) == 0 || errno == ENOENT)
            stats->removed++;
          g_hash_table_remove (m->merged, path);
          return;
        }
    }

  if (g_strcmp0 (merged, existing) != 0 || !g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_autoptr(GBytes) bytes = g_bytes_new (merged, strlen (merged));

      if (!write_file (m, path, bytes, 0644, NULL, TRUE, &error))
        {
          gl_export_add_warning (warnings, stats, error);
          return;
        }
      stats->written++;
    }
  else
    stats->unchanged++;

  if (n == 0)
    g_hash_table_remove (m->merged, path);
  else
    g_hash_table_insert (m->merged, g_strdup (path), g_strdup (we_created ? "1" : "0"));
}

/* How a shared file is counted in a sync made in steps: once, as the step
 * that did most to it saw it (a write or a removal over unchanged, over
 * skipped). */
typedef enum {
  COUNT_SKIPPED = 1,
  COUNT_UNCHANGED,
  COUNT_WRITTEN,
  COUNT_REMOVED,
} CountKind;

/* A sync of several sandboxes made one sandbox at a time (see
 * gl_export_sync): what the steps carry to the last one. */
typedef struct {
  gboolean complete;               /* every step checks as a complete sync does */
  gboolean last;                   /* this step (of no source) runs the tools and the defaults,
                                    * and a complete sync's drops the sandboxes recorded but not synced */
  GPtrArray *synced;               /* ids of the sources, for the last step */
  GPtrArray *sources;              /* every step's source (GlExportSource*) */
  GHashTable *shared_counts;       /* the shared files each step plans again: path -> CountKind,
                                    * counted once for the whole sync */
  gboolean desktop_changed;        /* of the steps before */
  gboolean icons_changed;
  gboolean claims_changed;
} SyncSteps;

/* One run of the sync engine: what is wanted, what is there, what changed. */
typedef struct {
  GlExportContext *ctx;
  GlManifest *m;
  gboolean complete;
  gboolean thorough;               /* a complete sync, or a step of one: every check made */
  const char * const *remove_ids;  /* sandboxes to drop although not complete */
  GHashTable *plan;                /* path -> GlPlanFile */
  GHashTable *source_ids;          /* ids being synced (set) */
  GPtrArray *planned;              /* GlPlanSandbox*, one per source */
  GArray *final;                   /* GlExportedSandbox: every sandbox exported afterwards, by id */
  GPtrArray *gone;                 /* ids leaving the manifest */
  GHashTable *failed;              /* planned paths whose write failed (set) */
  GHashTable *emptied;             /* directories a file left in this run (set) */
  char *apps_dir;
  char *icons_dir;
  gboolean desktop_changed;
  gboolean claims_changed;         /* the MIME types the exported entries claim may differ */
  gboolean icons_changed;
  GlExportStats stats;
  GHashTable *shared_counts;       /* a step's: SyncSteps.shared_counts, else NULL */
  GlExportStats shared_stats;      /* what of @stats is shared files' (with @shared_counts) */
  GPtrArray *warnings;
  gint64 started;                  /* g_get_real_time () when the run began */
} SyncRun;

static void
add_stats (GlExportStats *sum, const GlExportStats *step)
{
  sum->written += step->written;
  sum->unchanged += step->unchanged;
  sum->removed += step->removed;
  sum->skipped += step->skipped;
}

static gboolean
is_shared (const char *sandbox)
{
  return *sandbox == '\0';
}

/* The file @path (of @sandbox: "" for a shared one) was counted in
 * run->stats as @kind: a shared one, in a step, is also noted to be
 * counted once for the sync */
static void
count_shared (SyncRun *run, const char *sandbox, const char *path, CountKind kind)
{
  guint *counters[] = { NULL, &run->shared_stats.skipped, &run->shared_stats.unchanged,
                        &run->shared_stats.written, &run->shared_stats.removed };
  CountKind had;

  if (run->shared_counts == NULL || !is_shared (sandbox))
    return;
  (*counters[kind])++;
  had = GPOINTER_TO_UINT (g_hash_table_lookup (run->shared_counts, path));
  if (kind >= had)
    g_hash_table_insert (run->shared_counts, g_strdup (path), GUINT_TO_POINTER (kind));
}

static void
sync_run_clear (SyncRun *run)
{
  g_clear_pointer (&run->m, gl_manifest_free);
  g_clear_pointer (&run->plan, g_hash_table_unref);
  g_clear_pointer (&run->source_ids, g_hash_table_unref);
  g_clear_pointer (&run->planned, g_ptr_array_unref);
  g_clear_pointer (&run->final, g_array_unref);
  g_clear_pointer (&run->gone, g_ptr_array_unref);
  g_clear_pointer (&run->failed, g_hash_table_unref);
  g_clear_pointer (&run->emptied, g_hash_table_unref);
  g_clear_pointer (&run->apps_dir, g_free);
  g_clear_pointer (&run->icons_dir, g_free);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (SyncRun, sync_run_clear)

static gboolean
sync_keeps_other (SyncRun *run, const char *id)
{
  return !run->complete && !(run->remove_ids != NULL && g_strv_contains (run->remove_ids, id));
}

/* A file of the user's menus changed: the caches need refreshing. */
static void
note_change (SyncRun *run, const char *path)
{
  if (g_str_has_suffix (path, ".desktop") && g_str_has_prefix (path, run->apps_dir))
    run->desktop_changed = TRUE;
  if (g_str_has_prefix (path, run->icons_dir))
    run->icons_changed = TRUE;
}

static gint
compare_exported (gconstpointer a, gconstpointer b)
{
  return strcmp (((const GlExportedSandbox *) a)->id, ((const GlExportedSandbox *) b)->id);
}

/* What is wanted: every source's files, the sandboxes that stay as they
 * are (not synced now), those that go, and the shared files for them all. */
static void
sync_plan (SyncRun *run, GPtrArray *sources, SyncSteps *steps)
{
  GList *sorted;
  /* the display names of every sandbox that has or gets file-manager
   * scripts, which are named by them: those of the other steps' sources as
   * they are now, the manifest's of sandboxes not synced (none in a
   * complete sync: they go) */
  g_autoptr(GHashTable) names = g_hash_table_new (g_str_hash, g_str_equal);
  GPtrArray *lists[] = { steps != NULL ? steps->sources : NULL, sources };

  if (!run->complete && (steps == NULL || !steps->complete))
    {
      GHashTableIter iter;
      gpointer value;

      g_hash_table_iter_init (&iter, run->m->sandboxes);
      while (g_hash_table_iter_next (&iter, NULL, &value))
        if (((GlManifestSandbox *) value)->name != NULL)
          g_hash_table_insert (names, ((GlManifestSandbox *) value)->id, ((GlManifestSandbox *) value)->name);
    }
  for (gsize l = 0; l < G_N_ELEMENTS (lists); l++)
    for (guint i = 0; lists[l] != NULL && i < lists[l]->len; i++)
      {
        GlExportSource *source = lists[l]->pdata[i];

        if (source->name != NULL)
          g_hash_table_insert (names, source->id, source->name);
      }

  for (guint i = 0; i < sources->len; i++)
    {
      GlExportSource *source = sources->pdata[i];

      GlPlanSandbox *r = gl_plan_sandbox (run->plan, run->ctx, run->m, source, names,
                                          &run->stats, run->warnings);

      g_hash_table_add (run->source_ids, source->id);
      source->n_exported = 0;
      for (guint j = 0; j < r->apps->len; j++)
        if (!gl_export_is_control_entry (r->apps->pdata[j]))
          source->n_exported++;
      g_ptr_array_add (run->planned, r);
    }

  sorted = g_list_sort (g_hash_table_get_keys (run->m->sandboxes), (GCompareFunc) strcmp);
  for (GList *l = sorted; l != NULL; l = l->next)
    {
      GlManifestSandbox *s = g_hash_table_lookup (run->m->sandboxes, l->data);

      if (g_hash_table_contains (run->source_ids, s->id))
        continue;
      if (sync_keeps_other (run, s->id))
        {
          GlExportedSandbox e = { s->id, s->name, (const char * const *) s->apps };
          g_array_append_val (run->final, e);
        }
      else
        g_ptr_array_add (run->gone, g_strdup (s->id));
    }
  g_list_free (sorted);

  for (guint i = 0; i < run->planned->len; i++)
    {
      GlPlanSandbox *r = run->planned->pdata[i];
      GlExportedSandbox e = { r->id, r->name, NULL };

      g_ptr_array_add (r->apps, NULL);
      e.apps = (const char * const *) r->apps->pdata;
      g_array_append_val (run->final, e);
    }
  /* shared files, sorted by id so the output is stable */
  g_array_sort (run->final, compare_exported);
  gl_plan_shared (run->plan, run->ctx, (const GlExportedSandbox *) (void *) run->final->data,
                  run->final->len);
}

/* Classifies the plan: unchanged, to write, or in the way (a file Glimpse
 * did not write, or one the user changed since: it is theirs now, and
 * leaves the plan).  Records the intent to write in the manifest before
 * anything is written, so a crash leaves nothing unaccounted for. */
static gboolean
sync_classify (SyncRun *run, GHashTable *write_set, GError **error)
{
  GHashTableIter iter;
  gpointer value;

  g_hash_table_iter_init (&iter, run->plan);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      GlPlanFile *f = value;
      g_autofree char *want = NULL;
      g_autofree char *have = NULL;
      GlManifestFile *mf = g_hash_table_lookup (run->m->files, f->path);

      if (f->keep)
        {
          /* checked in the plan: our copy of an unchanged source, untouched */
          run->stats.unchanged++;
          count_shared (run, f->sandbox, f->path, COUNT_UNCHANGED);
          continue;
        }
      want = g_strdup (gl_plan_file_checksum (f));
      /* our own file as we left it is not read again */
      have = mf != NULL ? gl_manifest_file_checksum (mf) : gl_checksum_file (f->path);
      if (have != NULL && strcmp (have, want) == 0)
        {
          struct stat st;
          /* adopt it (a crash between writing and recording), fix the mode */
          if (stat (f->path, &st) == 0 && (int) (st.st_mode & 07777) != f->mode)
            chmod (f->path, f->mode);
          run->stats.unchanged++;
          count_shared (run, f->sandbox, f->path, COUNT_UNCHANGED);
          continue;
        }
      /* ours still when a power cut lost what we wrote (see sync_write) */
      if (have != NULL && (mf == NULL || !gl_manifest_file_matches (mf, have)) &&
          (mf == NULL || !gl_manifest_file_lost (mf)))
        {
          g_autoptr(GError) conflict = g_error_new (GL_EXPORT_ERROR, GL_EXPORT_ERROR_CONFLICT,
                                                     "Not overwriting %s: Glimpse did not write it (or it was changed since); "
                                                     "move it away to let Glimpse export it", f->path);
          gl_export_add_warning (run->warnings, &run->stats, conflict);
          count_shared (run, f->sandbox, f->path, COUNT_SKIPPED);
          g_hash_table_iter_remove (&iter);
          continue;
        }
      g_hash_table_add (write_set, f->path);
      /* intent: both the old and the new contents are ours while we write */
      gl_manifest_add_file (run->m, f->path, f->sandbox, want);
    }
  /* the intent in a journal beside the manifest, not the whole manifest
   * saved twice in a run */
  return g_hash_table_size (write_set) == 0 || gl_manifest_save_intent (run->m, write_set, error);
}

/* MimeType= of the desktop entry @data, or NULL */
static char *
claimed_mime_types (const char *data, gsize len)
{
  g_autoptr(GKeyFile) kf = g_key_file_new ();

  if (data == NULL || !g_key_file_load_from_data (kf, data, len, G_KEY_FILE_NONE, NULL))
    return NULL;
  return g_key_file_get_string (kf, DE_GROUP, "MimeType", NULL);
}

/* Whether writing @bytes over @path changes the types the entries claim
 * (the defaults of gl-export-defaults.c depend on nothing else of them) */
static gboolean
claims_differ (SyncRun *run, const char *path, GBytes *bytes)
{
  g_autofree char *old = NULL;
  gsize old_len = 0;
  g_autofree char *before = NULL;
  g_autofree char *after = NULL;
  gsize len;
  const char *data;

  if (!g_str_has_suffix (path, ".desktop") || !g_str_has_prefix (path, run->apps_dir))
    return FALSE;
  data = g_bytes_get_data (bytes, &len);
  after = claimed_mime_types (data, len);
  if (g_file_get_contents (path, &old, &old_len, NULL))
    before = claimed_mime_types (old, old_len);
  return g_strcmp0 (before, after) != 0;
}

/* Writes the files of @write_set.
 *
 * What is durable, and why that is enough:
 * - The manifest and its journal are written durably (gl-manifest.c: a
 *   temporary file synced, renamed, the directory synced): they alone say
 *   which files are Glimpse's, and nothing else can tell.
 * - An exported file (menu entry, icon, directory file, file-manager
 *   action) is written atomically (a temporary file renamed over: a killed
 *   process leaves the old file or the new one, never a mixture) but not
 *   synced, new or replaced: after a power cut one may be missing, empty
 *   or cut short.  The next sync repairs it from the manifest (and the
 *   journal, which is on disk before any of them is written): a missing
 *   file is written again; so is one that gl_manifest_file_lost() finds to
 *   be a lost write of ours (empty, or the recorded inode with the
 *   recorded ctime and other contents), where a file the user changed is
 *   left alone.  Start-up and "glimpse export" make such a sync.
 *   An old file outliving a manifest that records only the new contents
 *   would be taken for the user's; a file system with an ordered journal
 *   (ext4, XFS) never shows one, as the manifest's fsync, made after these
 *   renames, commits them too.  (Syncing a file before its rename, as
 *   g_file_set_contents_full does, never made the rename durable.)
 * - A merged file (Thunar's uca.xml: the user's actions and ours) is
 *   synced before it replaces the old one, as it cannot be made again.
 * So the cost of durability follows what an export writes: a few fsyncs,
 * for the journal and the manifest, whatever the number of files.  A sync
 * of the whole file system (syncfs, as this once made for a first export
 * of 300 apps) also waits for every other writer's dirty data: 0.2 s became
 * 0.85 s with 1 GB of someone else's waiting to be written. */
static void
sync_write (SyncRun *run, GHashTable *write_set)
{
  GHashTableIter iter;
  gpointer key;
  g_autoptr(GHashTable) known_dirs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  g_hash_table_iter_init (&iter, write_set);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    {
      GlPlanFile *f = g_hash_table_lookup (run->plan, key);
      g_autoptr(GError) werr = NULL;
      g_autoptr(GBytes) bytes = gl_plan_file_bytes (f, run->started, &werr);

      if (bytes != NULL && !run->claims_changed && claims_differ (run, f->path, bytes))
        run->claims_changed = TRUE;
      if (bytes == NULL || !write_file (run->m, f->path, bytes, f->mode, known_dirs, FALSE, &werr))
        {
          gl_export_add_warning (run->warnings, &run->stats, werr);
          count_shared (run, f->sandbox, f->path, COUNT_SKIPPED);
          g_hash_table_add (run->failed, f->path);
          continue;
        }
      run->stats.written++;
      count_shared (run, f->sandbox, f->path, COUNT_WRITTEN);
      note_change (run, f->path);
    }
}

/* Removes what is no longer exported, if it is still what Glimpse wrote;
 * the planned files keep only their current checksum. */
static void
sync_remove_stale (SyncRun *run)
{
  GHashTableIter iter;
  gpointer value;

  g_hash_table_iter_init (&iter, run->m->files);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      GlManifestFile *mf = value;
      GlPlanFile *f = g_hash_table_lookup (run->plan, mf->path);
      g_autofree char *have = NULL;

      if (f != NULL)
        {
          g_autofree char *want = NULL;

          g_free (mf->sandbox);
          mf->sandbox = g_strdup (f->sandbox);
          if (f->keep)
            continue;   /* kept as recorded */
          want = g_strdup (gl_plan_file_checksum (f));
          g_strfreev (mf->checksums);
          mf->checksums = g_new0 (char *, 2);
          mf->checksums[0] = g_steal_pointer (&want);
          /* what the file is now, so the next run need not read it; not
           * after a failed write (it has other contents) */
          if (g_hash_table_contains (run->failed, f->path))
            g_clear_pointer (&mf->stat, g_free);
          else
            gl_manifest_file_set_stat (mf, f->source);
          continue;
        }
      if (*mf->sandbox != '\0' && !g_hash_table_contains (run->source_ids, mf->sandbox) &&
          sync_keeps_other (run, mf->sandbox))
        continue;   /* another sandbox's, not being synced */
      have = gl_manifest_file_checksum (mf);
      if (have == NULL)
        {
          /* gone already: its directory may be empty now */
          g_hash_table_add (run->emptied, g_path_get_dirname (mf->path));
          g_hash_table_iter_remove (&iter);
          continue;
        }
      if (!gl_manifest_file_matches (mf, have) && !gl_manifest_file_lost (mf))
        {
          g_debug ("Leaving %s: changed since Glimpse wrote it", mf->path);
          g_hash_table_iter_remove (&iter);
          continue;
        }
      if (unlink (mf->path) != 0 && errno != ENOENT)
        {
          int saved = errno;
          g_autoptr(GError) rerr = g_error_new (G_IO_ERROR, g_io_error_from_errno (saved),
                                                "Cannot remove %s: %s", mf->path, g_strerror (saved));
          gl_export_add_warning (run->warnings, &run->stats, rerr);
          count_shared (run, mf->sandbox, mf->path, COUNT_SKIPPED);
          continue;
        }
      run->stats.removed++;
      count_shared (run, mf->sandbox, mf->path, COUNT_REMOVED);
      note_change (run, mf->path);
      g_hash_table_add (run->emptied, g_path_get_dirname (mf->path));
      if (g_str_has_suffix (mf->path, ".desktop") && g_str_has_prefix (mf->path, run->apps_dir))
        run->claims_changed = TRUE;
      g_hash_table_iter_remove (&iter);
    }

  for (guint i = 0; i < run->gone->len; i++)
    g_hash_table_remove (run->m->sandboxes, run->gone->pdata[i]);
  for (guint i = 0; i < run->planned->len; i++)
    {
      GlPlanSandbox *r = run->planned->pdata[i];
      gl_manifest_set_sandbox (run->m, r->id, r->name, (const char * const *) r->apps->pdata);
    }
}

/* The files shared with the user or the desktop: Thunar's uca.xml, GNOME's
 * app folders. */
static void
sync_shared (SyncRun *run)
{
  g_autofree char *thunar_path = gl_fm_thunar_path (run->ctx);
  const GlExportedSandbox *all = (const GlExportedSandbox *) (void *) run->final->data;

  if (run->ctx->file_managers || g_hash_table_contains (run->m->merged, thunar_path))
    {
      GlExportStats thunar = { 0, };

      sync_thunar (run->ctx, run->m, run->ctx->file_managers ? all : NULL,
                   run->ctx->file_managers ? run->final->len : 0, &thunar, run->warnings);
      add_stats (&run->stats, &thunar);
      /* one of the four at most */
      if (thunar.written > 0)
        count_shared (run, "", thunar_path, COUNT_WRITTEN);
      else if (thunar.removed > 0)
        count_shared (run, "", thunar_path, COUNT_REMOVED);
      if (thunar.removed > 0)
        g_hash_table_add (run->emptied, g_path_get_dirname (thunar_path));
      else if (thunar.unchanged > 0)
        count_shared (run, "", thunar_path, COUNT_UNCHANGED);
      else if (thunar.skipped > 0)
        count_shared (run, "", thunar_path, COUNT_SKIPPED);
    }

  if (run->ctx->app_folders && gl_app_folders_available ())
    {
      g_ptr_array_add (run->gone, NULL);
      gl_app_folders_sync (all, run->final->len, (const char * const *) run->gone->pdata);
      g_ptr_array_remove_index (run->gone, run->gone->len - 1);
    }
}

/* The tools' caches: the MIME cache of the applications directory, the
 * icon cache of the user's hicolor. */
static void
sync_caches (SyncRun *run)
{
  if (run->desktop_changed && run->ctx->run_tool != NULL)
    {
      g_autofree char *mimecache = g_build_filename (run->apps_dir, "mimeinfo.cache", NULL);
      gboolean had_cache = g_file_test (mimecache, G_FILE_TEST_EXISTS);
      gboolean ours_left = FALSE;
      GHashTableIter iter;
      gpointer key, value;

      g_hash_table_iter_init (&iter, run->m->files);
      while (!ours_left && g_hash_table_iter_next (&iter, &key, NULL))
        if (g_str_has_prefix (key, run->apps_dir) && g_str_has_suffix (key, ".desktop"))
          ours_left = TRUE;
      /* and the entries of the sandboxes this run did not load */
      g_hash_table_iter_init (&iter, run->m->sandboxes);
      while (!ours_left && g_hash_table_iter_next (&iter, &key, &value))
        if (!gl_manifest_sandbox_loaded (run->m, key) && ((GlManifestSandbox *) value)->apps != NULL &&
            ((GlManifestSandbox *) value)->apps[0] != NULL)
          ours_left = TRUE;

      /* the cache exists because of Glimpse: with the last entry it goes
       * (GIO reads the entries of a directory without one), else refresh */
      if (!ours_left && g_strcmp0 (g_hash_table_lookup (run->m->merged, mimecache), "1") == 0)
        {
          if (unlink (mimecache) == 0)
            run->stats.removed++;
          g_hash_table_add (run->emptied, g_strdup (run->apps_dir));
          g_hash_table_remove (run->m->merged, mimecache);
        }
      else if (run_tool (run->ctx, (const char *[]) { "update-desktop-database", "-q", run->apps_dir, NULL }) &&
               !had_cache && ours_left)
        g_hash_table_insert (run->m->merged, g_strdup (mimecache), g_strdup ("1"));
    }
  if (run->icons_changed && run->ctx->run_tool != NULL)
    {
      /* refresh a cache that exists; never create one: a cache in the
       * user's hicolor would hide icons others add there later */
      g_autofree char *cache = g_build_filename (run->icons_dir, "icon-theme.cache", NULL);
      if (g_file_test (cache, G_FILE_TEST_EXISTS))
        run_tool (run->ctx, (const char *[]) { "gtk-update-icon-cache", "-q", "-t", "-f", run->icons_dir, NULL });
    }
}

/* TRUE if a file left @dir, or a directory below it, in this run */
static gboolean
dir_emptied (SyncRun *run, const char *dir)
{
  GHashTableIter iter;
  gpointer key;
  gsize n = strlen (dir);

  if (g_hash_table_contains (run->emptied, dir))
    return TRUE;
  g_hash_table_iter_init (&iter, run->emptied);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    if (strncmp (key, dir, n) == 0 && ((const char *) key)[n] == '/')
      return TRUE;
  return FALSE;
}

/* Directories Glimpse created and emptied again, deepest first; then the
 * manifest, or none when nothing is left.  Only a directory a file left in
 * this run can have become empty: the others are not tried (a change of
 * one app tried some 23 directories full of files), except by a complete
 * sync, which also finds those the user emptied. */
static gboolean
sync_finish (SyncRun *run, GError **error)
{
  GList *sorted = g_list_sort (g_hash_table_get_keys (run->m->dirs), compare_length_desc);

  for (GList *l = sorted; l != NULL; l = l->next)
    {
      const char *dir = l->data;

      if (!run->thorough && !dir_emptied (run, dir))
        continue;
      if (rmdir (dir) == 0 || errno == ENOENT)
        g_hash_table_remove (run->m->dirs, dir);
    }
  g_list_free (sorted);

  if (g_hash_table_size (run->m->files) == 0 && g_hash_table_size (run->m->sandboxes) == 0 &&
      g_hash_table_size (run->m->merged) == 0 && g_hash_table_size (run->m->dirs) == 0 &&
      g_hash_table_size (run->m->defaults) == 0)
    {
      g_autofree char *mdir = g_path_get_dirname (run->m->path);
      gl_manifest_delete (run->m);
      rmdir (mdir);
      return TRUE;
    }
  return gl_manifest_save (run->m, error);
}

static void
unlock_fd (int fd)
{
  if (fd >= 0)
    close (fd);   /* releases the flock */
}
typedef int LockFd;
G_DEFINE_AUTO_CLEANUP_FREE_FUNC (LockFd, unlock_fd, -1)

/* The user's export state (the manifest's directory) locked for one run:
 * the agent and a "glimpse export" never rewrite the manifest at the same
 * time.  A run that empties the state removes the directory while locked;
 * one that waited then finds another directory (or none) there and locks
 * again. */
static int
lock_export_state (const char *manifest_path, GError **error)
{
  g_autofree char *dir = g_path_get_dirname (manifest_path);

  for (;;)
    {
      struct stat locked, now;
      int fd;

      if (!gl_mkdir_with_parents (dir, 0755, error))
        return -1;
      fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (fd < 0 && errno == ENOENT)
        continue;
      if (fd < 0)
        {
          int saved = errno;
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                       "Cannot open %s to lock the export state: %s", dir, g_strerror (saved));
          return -1;
        }
      while (flock (fd, LOCK_EX) != 0)
        if (errno != EINTR)
          {
            int saved = errno;
            close (fd);
            g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                         "Cannot lock the export state %s: %s", dir, g_strerror (saved));
            return -1;
          }
      if (fstat (fd, &locked) == 0 && stat (dir, &now) == 0 &&
          locked.st_dev == now.st_dev && locked.st_ino == now.st_ino)
        return fd;
      close (fd);   /* removed (and maybe made again) while we waited */
    }
}

/* A temporary file g_file_set_contents() leaves when the run is killed
 * between creating and renaming it: "<name>.XXXXXX", <name> one of ours. */
static gboolean
is_our_temp (const char *name, GHashTable *ours)
{
  gsize len = strlen (name);
  g_autofree char *base = NULL;
  gboolean random = FALSE;

  if (len < 8 || name[len - 7] != '.')
    return FALSE;
  for (gsize i = len - 6; i < len; i++)
    if (!g_ascii_isalnum (name[i]))
      return FALSE;
    else if (!g_ascii_islower (name[i]))
      random = TRUE;
  /* a name such as "x.desktop.backup" may be the user's: the six random
   * characters of a temporary file are all lower-case letters only once in
   * about 190 (such a leftover stays) */
  if (!random)
    return FALSE;
  base = g_strndup (name, len - 7);
  return g_hash_table_contains (ours, base);
}

/* Removes the temporary files of our files that a killed run left (kill -9
 * during an export), in the directories of our files, if they are older
 * than this run. */
static void
sync_remove_temporaries (SyncRun *run, gint64 started)
{
  g_autoptr(GHashTable) dirs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                      (GDestroyNotify) g_hash_table_unref);
  GHashTable *tables[] = { run->m->files, run->plan };
  GHashTableIter iter;
  gpointer key, value;

  for (gsize t = 0; t < G_N_ELEMENTS (tables); t++)
    {
      g_hash_table_iter_init (&iter, tables[t]);
      while (g_hash_table_iter_next (&iter, &key, NULL))
        {
          g_autofree char *dir = g_path_get_dirname (key);
          GHashTable *names = g_hash_table_lookup (dirs, dir);

          if (names == NULL)
            {
              names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
              g_hash_table_insert (dirs, g_strdup (dir), names);
            }
          g_hash_table_add (names, g_path_get_basename (key));
        }
    }
  {
    /* the manifests and the journal are written the same way */
    GHashTableIter liter;
    gpointer id;

    g_hash_table_iter_init (&liter, run->m->loaded);
    while (g_hash_table_iter_next (&liter, &id, NULL))
      {
        g_autofree char *own = gl_manifest_sandbox_path (run->m->path, id);
        g_autofree char *odir = g_path_get_dirname (own);
        GHashTable *names = g_hash_table_lookup (dirs, odir);

        if (names == NULL)
          {
            names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
            g_hash_table_insert (dirs, g_steal_pointer (&odir), names);
          }
        g_hash_table_add (names, g_path_get_basename (own));
      }
  }
  {
    g_autofree char *mdir = g_path_get_dirname (run->m->path);
    g_autofree char *intent = gl_manifest_intent_path (run->m->path);
    GHashTable *names = g_hash_table_lookup (dirs, mdir);

    if (names == NULL)
      {
        names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
        g_hash_table_insert (dirs, g_steal_pointer (&mdir), names);
      }
    g_hash_table_add (names, g_path_get_basename (run->m->path));
    g_hash_table_add (names, g_path_get_basename (intent));
  }

  g_hash_table_iter_init (&iter, dirs);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      g_autoptr(GDir) dir = g_dir_open (key, 0, NULL);
      const char *name;

      while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
        {
          g_autofree char *path = NULL;
          struct stat st;

          if (!is_our_temp (name, value))
            continue;
          path = g_build_filename (key, name, NULL);
          if (lstat (path, &st) == 0 && S_ISREG (st.st_mode) &&
              (gint64) st.st_mtim.tv_sec * G_USEC_PER_SEC + st.st_mtim.tv_nsec / 1000 < started &&
              unlink (path) == 0)
            {
              g_debug ("Removed %s, left by an export that was killed", path);
              run->stats.removed++;
            }
        }
    }
}

/* The fingerprints of @sources now (ctx->cache only); TRUE if every one
 * matches the exports as the cache knows them: nothing to do. */
static gboolean
sync_unchanged (GlExportContext *ctx, GPtrArray *sources, gboolean complete,
                const char * const *remove_ids, const char *manifest_path,
                GPtrArray *prints, GlExportStats *stats)
{
  gint64 since = gl_export_fingerprint_clock ();
  GlExportStats none = { 0, };
  gboolean all = TRUE;

  gl_export_cache_begin (ctx->cache, manifest_path);
  gl_export_cache_set_since (ctx->cache, since);
  gl_export_cache_keep_stats (ctx->cache, sources->len == 1);
  /* a complete sync checks every exported file itself */
  gl_export_cache_trust_dirs (ctx->cache, !complete);
  for (guint i = 0; i < sources->len; i++)
    {
      GlExportSource *source = sources->pdata[i];
      GlFingerprint *f = gl_export_fingerprint_new (ctx->cache, ctx, source, since);
      guint n_files = 0;

      g_ptr_array_add (prints, f);
      if (all && gl_export_cache_matches (ctx->cache, source, f, &n_files))
        none.unchanged += n_files;
      else
        all = FALSE;
    }
  /* a complete sync (start-up, "glimpse export") also drops what is gone
   * and checks everything: never skipped */
  if (!all || complete || remove_ids != NULL || sources->len == 0)
    return FALSE;
  *stats = none;
  gl_export_cache_note_hit (ctx->cache);
  for (guint i = 0; i < prints->len; i++)
    gl_export_cache_keep_parts (ctx->cache, prints->pdata[i]);
  return TRUE;
}

/* What this run exported, for the next one to compare with. */
static void
sync_remember (SyncRun *run, GPtrArray *sources, GPtrArray *prints)
{
  GlExportCache *cache = run->ctx->cache;

  gl_export_cache_end (cache, run->m->path);
  for (guint i = 0; i < run->gone->len; i++)
    gl_export_cache_drop (cache, run->gone->pdata[i]);
  for (guint i = 0; run->remove_ids != NULL && run->remove_ids[i] != NULL; i++)
    gl_export_cache_drop (cache, run->remove_ids[i]);
  for (guint i = 0; i < sources->len; i++)
    {
      GlExportSource *source = sources->pdata[i];
      GlPlanSandbox *r = run->planned->pdata[i];
      GHashTableIter iter;
      gpointer value;
      g_autoptr(GPtrArray) files = g_ptr_array_new ();
      g_autoptr(GHashTable) dirs = NULL;

      /* a run with problems (a conflict, a failed write, an entry skipped)
       * is made again next time, with its warnings */
      if (run->stats.skipped > 0 || g_hash_table_size (run->failed) > 0)
        {
          gl_export_cache_forget (cache, source->id);
          continue;
        }
      g_hash_table_iter_init (&iter, run->plan);
      while (g_hash_table_iter_next (&iter, NULL, &value))
        if (strcmp (((GlPlanFile *) value)->sandbox, source->id) == 0)
          g_ptr_array_add (files, ((GlPlanFile *) value)->path);
      /* every file of the sandbox is as recorded now, in directories as
       * they are now */
      dirs = gl_export_cache_dir_stats (files);
      g_ptr_array_add (r->extra, NULL);
      gl_export_cache_record (cache, source, prints->pdata[i],
                              (const char * const *) r->extra->pdata, files->len, dirs);
      g_ptr_array_remove_index (r->extra, r->extra->len - 1);
    }
}

/* The manifest with the records this run works on: a complete sync's,
 * every sandbox's; else those of the sandboxes synced or dropped (and the
 * shared files'), not the other sandboxes', which stay as they are */
static GlManifest *
load_manifest (const char *path, GPtrArray *sources, gboolean complete,
               const char * const *remove_ids, GError **error)
{
  g_autoptr(GlManifest) m = gl_manifest_load_shared (path, error);

  if (m == NULL)
    return NULL;
  if (complete)
    return gl_manifest_load_all (m, error) ? g_steal_pointer (&m) : NULL;
  for (guint i = 0; i < sources->len; i++)
    if (!gl_manifest_load_sandbox (m, ((GlExportSource *) sources->pdata[i])->id, error))
      return NULL;
  for (gsize i = 0; remove_ids != NULL && remove_ids[i] != NULL; i++)
    if (!gl_manifest_load_sandbox (m, remove_ids[i], error))
      return NULL;
  return g_steal_pointer (&m);
}

/* The manifest for the last step of a complete sync made in steps: with
 * the records of the sandboxes it records that are not among the steps'
 * (@others), which go */
static GlManifest *
load_manifest_others (const char *path, SyncSteps *steps, GStrv *others, GError **error)
{
  g_autoptr(GlManifest) m = gl_manifest_load_shared (path, error);
  g_autoptr(GPtrArray) ids = NULL;
  g_autoptr(GPtrArray) gone = g_ptr_array_new_with_free_func (g_free);

  if (m == NULL)
    return NULL;
  ids = gl_manifest_recorded_ids (m);
  for (guint i = 0; i < ids->len; i++)
    if (!g_ptr_array_find_with_equal_func (steps->synced, ids->pdata[i], g_str_equal, NULL) &&
        !g_ptr_array_find_with_equal_func (gone, ids->pdata[i], g_str_equal, NULL))
      {
        if (!gl_manifest_load_sandbox (m, ids->pdata[i], error))
          return NULL;
        g_ptr_array_add (gone, g_strdup (ids->pdata[i]));
      }
  g_ptr_array_add (gone, NULL);
  *others = (GStrv) g_ptr_array_free (g_steal_pointer (&gone), FALSE);
  return g_steal_pointer (&m);
}

/* One run.  With @steps, a step of a sync made in steps: one source (or,
 * the last, none and a complete sync's sandboxes gone) loaded and planned,
 * checked as thoroughly as the sync is. */
static gboolean
export_sync (GlExportContext *ctx, GPtrArray *sources, gboolean complete,
             const char * const *remove_ids, SyncSteps *steps,
             GlExportStats *stats_out, GPtrArray *warnings, GError **error)
{
  g_autofree char *manifest_path = gl_export_manifest_path (ctx);
  g_auto(SyncRun) run = { 0, };
  g_autoptr(GHashTable) write_set = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GPtrArray) prints = g_ptr_array_new_with_free_func ((GDestroyNotify) gl_fingerprint_free);
  gint64 started = g_get_real_time ();
  g_auto(LockFd) lock_fd = -1;
  g_auto(GStrv) others = NULL;
  gboolean thorough = complete || (steps != NULL && steps->complete);

  /* the fingerprints are made before anything is read: a change while
   * this run reads makes the next run's differ */
  if (ctx->cache != NULL)
    {
      GlExportStats unchanged = { 0, };

      if (sync_unchanged (ctx, sources, thorough, remove_ids, manifest_path, prints, &unchanged))
        {
          gl_export_cache_keep_stats (ctx->cache, FALSE);
          if (stats_out != NULL)
            *stats_out = unchanged;
          return TRUE;
        }
    }

  lock_fd = lock_export_state (manifest_path, error);
  if (lock_fd >= 0 && steps != NULL && steps->last && steps->complete)
    {
      run.m = load_manifest_others (manifest_path, steps, &others, error);
      remove_ids = (const char * const *) others;
    }
  else if (lock_fd >= 0)
    run.m = load_manifest (manifest_path, sources, complete, remove_ids, error);
  if (run.m == NULL)
    {
      gl_export_cache_keep_stats (ctx->cache, FALSE);
      return FALSE;
    }
  run.ctx = ctx;
  run.complete = complete;
  run.thorough = thorough;
  run.remove_ids = remove_ids;
  run.plan = gl_plan_new ();
  run.source_ids = g_hash_table_new (g_str_hash, g_str_equal);
  run.planned = g_ptr_array_new_with_free_func ((GDestroyNotify) gl_plan_sandbox_free);
  run.final = g_array_new (FALSE, TRUE, sizeof (GlExportedSandbox));
  run.gone = g_ptr_array_new_with_free_func (g_free);
  run.failed = g_hash_table_new (g_str_hash, g_str_equal);
  run.emptied = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  run.apps_dir = g_build_filename (ctx->data_home, "applications", NULL);
  run.icons_dir = g_build_filename (ctx->data_home, "icons", "hicolor", NULL);
  run.warnings = warnings;
  run.started = started;
  run.shared_counts = steps != NULL ? steps->shared_counts : NULL;

  sync_plan (&run, sources, steps);
  gl_export_cache_keep_stats (ctx->cache, FALSE);   /* the plan was their only reader */
  if (thorough)
    sync_remove_temporaries (&run, started);
  if (!sync_classify (&run, write_set, error))
    return FALSE;
  sync_write (&run, write_set);
  sync_remove_stale (&run);
  sync_shared (&run);
  if (steps != NULL && !steps->last)
    {
      /* the tools and the defaults run once, in the last step */
      steps->desktop_changed |= run.desktop_changed;
      steps->icons_changed |= run.icons_changed;
      steps->claims_changed |= run.claims_changed;
    }
  else
    {
      if (steps != NULL)
        {
          run.desktop_changed |= steps->desktop_changed;
          run.icons_changed |= steps->icons_changed;
          run.claims_changed |= steps->claims_changed;
        }
      sync_caches (&run);
    }
  /* the defaults depend on the types the exported entries claim (and the
   * host's applications): again when those may have changed, and on every
   * complete sync (start-up, "glimpse export"); not on a refresh that
   * changed no entry's MimeType, which would read every exported entry and
   * the host's applications for nothing */
  if (steps == NULL ? run.claims_changed || complete
                    : steps->last && (run.claims_changed || steps->complete))
    {
      guint removed = run.stats.removed;

      gl_export_defaults_sync (ctx, run.m, &run.stats, warnings);
      /* its file went (where it lies is its own business): every
       * directory is tried */
      if (run.stats.removed != removed)
        run.thorough = TRUE;
    }
  if (!sync_finish (&run, error))
    return FALSE;
  if (ctx->cache != NULL)
    sync_remember (&run, sources, prints);

  if (stats_out != NULL)
    {
      /* a step's shared files are counted once, by export_sync_in_steps */
      *stats_out = run.stats;
      stats_out->written -= run.shared_stats.written;
      stats_out->unchanged -= run.shared_stats.unchanged;
      stats_out->removed -= run.shared_stats.removed;
      stats_out->skipped -= run.shared_stats.skipped;
    }
  return TRUE;
}

/* A sync of several sandboxes, one at a time: what a run holds (the plan,
 * the entries and icons read, the manifest's records) is one sandbox's,
 * not every sandbox's at once (10 sandboxes of 300 apps: the session
 * agent's peak 23 MB resident).  Each sandbox in a step of its own (of a
 * complete sync, checked as a complete sync checks); then a last step
 * drops the sandboxes recorded but not among @sources (a complete sync's)
 * and runs the caches' tools and the defaults once, if they are due. */
static gboolean
export_sync_in_steps (GlExportContext *ctx, GPtrArray *sources, gboolean complete,
                      GlExportStats *stats_out, GPtrArray *warnings, GError **error)
{
  g_autoptr(GPtrArray) synced = g_ptr_array_new ();
  g_autoptr(GPtrArray) none = g_ptr_array_new ();
  g_autoptr(GHashTable) shared_counts = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  SyncSteps steps = { complete, FALSE, synced, sources, shared_counts, FALSE, FALSE, FALSE };
  GlExportStats sum = { 0, };
  GlExportStats one = { 0, };
  guint first_warning = warnings != NULL ? warnings->len : 0;
  GHashTableIter iter;
  gpointer kind;

  for (guint i = 0; i < sources->len; i++)
    {
      g_autoptr(GPtrArray) step = g_ptr_array_new ();

      g_ptr_array_add (step, sources->pdata[i]);
      g_ptr_array_add (synced, ((GlExportSource *) sources->pdata[i])->id);
      if (!export_sync (ctx, step, FALSE, NULL, &steps, &one, warnings, error))
        return FALSE;
      add_stats (&sum, &one);
    }
  steps.last = TRUE;
  if (complete || steps.desktop_changed || steps.icons_changed || steps.claims_changed)
    {
      if (!export_sync (ctx, none, FALSE, NULL, &steps, &one, warnings, error))
        return FALSE;
      add_stats (&sum, &one);
    }
  /* each shared file once, though every step planned it */
  g_hash_table_iter_init (&iter, shared_counts);
  while (g_hash_table_iter_next (&iter, NULL, &kind))
    {
      GlExportStats counted = { 0, };
      guint *counters[] = { NULL, &counted.skipped, &counted.unchanged,
                            &counted.written, &counted.removed };

      (*counters[GPOINTER_TO_UINT (kind)])++;
      add_stats (&sum, &counted);
    }
  /* and a problem with one (a conflict, a uca.xml that is not XML) is told
   * once, not by every step */
  for (guint i = first_warning; warnings != NULL && i < warnings->len; i++)
    for (guint j = first_warning; j < i; j++)
      if (strcmp (((GError *) warnings->pdata[i])->message, ((GError *) warnings->pdata[j])->message) == 0)
        {
          g_ptr_array_remove_index (warnings, i--);
          break;
        }
  if (stats_out != NULL)
    *stats_out = sum;
  return TRUE;
}

gboolean
gl_export_sync (GlExportContext *ctx, GPtrArray *sources, gboolean complete,
                GlExportStats *stats_out, GPtrArray *warnings, GError **error)
{
  if (sources->len > 1)
    return export_sync_in_steps (ctx, sources, complete, stats_out, warnings, error);
  return export_sync (ctx, sources, complete, NULL, NULL, stats_out, warnings, error);
}

gboolean
gl_export_unexport (GlExportContext *ctx, const char *id, GError **error)
{
  g_autoptr(GPtrArray) none = g_ptr_array_new ();
  const char *remove_ids[] = { id, NULL };

  return export_sync (ctx, none, FALSE, remove_ids, NULL, NULL, NULL, error);
}

