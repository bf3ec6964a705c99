/* gl-export-fingerprint.c: what a sandbox's export is made from, as one
 * digest, so a resync of an unchanged sandbox only stats and compares
 *
 * The fingerprint of a source covers everything its plan reads: the
 * context and the source's own fields (which carry sandbox.conf's name and
 * launchers, the user's choice and, through the layers' paths, the system
 * generation), and the lstat of every file and directory in the places the
 * plan lists or reads — the applications directories, every icon theme down
 * to its files, pixmaps, the host's applications directory of a host
 * sandbox, and the icon files it found elsewhere (an absolute Icon=).  A
 * directory's mtime and ctime change when a name in it comes or goes; a
 * file's inode, size and ctime when it is written or replaced (ctime cannot
 * be set back).  A link is followed inside its tree and its target's stat
 * counted too.
 *
 * The same stat can hide two writes within one tick of the file system's
 * clock (or one second on a file system without nanoseconds): a
 * fingerprint with an input changed that recently is "racy" and never
 * recorded, as git does with its index.
 *
 * The places a watcher can vouch for (GlExportSource.watched_roots) are
 * parts of the digest of their own: each applications directory, the icons
 * and the pixmaps of each data root.  A part the watcher saw no change in
 * since the last run over the source ended clean is taken as that run
 * walked it, not walked again (a change of one app in a sandbox of 300
 * apps with three icons each: 300 lstats, not 1,200).  Only a part whose
 * every directory the watcher watches is kept for that: no link in it, no
 * directory deeper than the watches go, no file with another name (a hard
 * link written through may be outside them), its path inside its tree the
 * path on the host, nothing in it changed too recently.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "gl-export-private.h"
#include "gl-tree.h"

/* Bumped whenever the plan reads something new or writes differently */
#define FINGERPRINT_VERSION "glimpse-export-fingerprint 2"

/* A change this close to the start (or, without nanoseconds, within two
 * seconds) may share its stat with an earlier one */
#define RACY_NS (50 * G_GINT64_CONSTANT (1000000))
#define RACY_COARSE_NS (2 * G_GINT64_CONSTANT (1000000000))

#define APPS_DEPTH 8    /* as gl_export_source_scan descends */
#define ICONS_DEPTH 3   /* icons/<theme>/<a>/<b>/<file> */

typedef struct {
  char *id;
  guint8 digest[32];
  gboolean valid;
  guint n_exported;
  guint n_files;
  GStrv extra;        /* icon files read outside the listed places */
  GHashTable *dirs;   /* the directories of its exported files -> their stat record
                       * (gint64[8]) as that run left them, or NULL */
  GHashTable *settled; /* this run's answers: directory -> "1" (as left) or "0" */
} CacheEntry;

struct _GlExportCache {
  char *manifest_key;   /* the manifest as the last run left it */
  GHashTable *entries;  /* id -> CacheEntry */
  GHashTable *apps;     /* id -> (path -> GlAppMemo) */
  GPtrArray *recent;    /* ids of @apps, the one scanned last last */
  gint64 since;         /* the clock when the current run started */
  guint hits;           /* runs that found nothing to do */
  GHashTable *stats;    /* path -> struct stat the fingerprint took, for this run's plan; or NULL */
  gboolean trust_dirs;  /* this run may take an export directory left as it was for its files */
  GHashTable *parts;    /* id -> (part key -> digest[32]): the parts the last clean run over it
                         * walked or took, which a watcher vouches for */
  GPtrArray *unchanged; /* the directories of the parts this run took as they were (not
                         * walked), for its plan; or NULL */
};

static void
cache_entry_free (CacheEntry *e)
{
  g_free (e->id);
  g_strfreev (e->extra);
  g_clear_pointer (&e->dirs, g_hash_table_unref);
  g_clear_pointer (&e->settled, g_hash_table_unref);
  g_free (e);
}

GlExportCache *
gl_export_cache_new (void)
{
  GlExportCache *cache = g_new0 (GlExportCache, 1);

  cache->entries = g_hash_table_new_full (g_str_hash, g_str_equal, NULL,
                                          (GDestroyNotify) cache_entry_free);
  cache->apps = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                       (GDestroyNotify) gl_app_memos_free);
  cache->recent = g_ptr_array_new_with_free_func (g_free);
  cache->parts = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                        (GDestroyNotify) g_hash_table_unref);
  return cache;
}

void
gl_export_cache_free (GlExportCache *cache)
{
  if (cache == NULL)
    return;
  g_free (cache->manifest_key);
  g_hash_table_unref (cache->entries);
  g_hash_table_unref (cache->apps);
  g_ptr_array_unref (cache->recent);
  g_clear_pointer (&cache->stats, g_hash_table_unref);
  g_hash_table_unref (cache->parts);
  g_free (cache);
}

/* ------------------------------------------------------------ the digest */

typedef struct {
  GChecksum *sum;
  gint64 since_ns;   /* a ctime at or after this is racy */
  gboolean racy;
  GHashTable *stats; /* where the lstats go for the plan (gl_export_cache_lstat), or NULL */
  /* a part's walk: FALSE once it meets what the watcher does not watch (a
   * link, a directory @watch_depth levels below @depth's start) */
  gboolean watchable;
  int top_depth;
  int watch_depth;
} Fingerprint;

static void
add_str (Fingerprint *fp, const char *s)
{
  g_checksum_update (fp->sum, (const guchar *) (s != NULL ? s : "\1"), s != NULL ? strlen (s) + 1 : 1);
}

static void
add_strv (Fingerprint *fp, const char * const *v)
{
  gsize n = v != NULL ? g_strv_length ((GStrv) v) : 0;
  char count[32];

  g_snprintf (count, sizeof count, "%c%zu", v != NULL ? 'v' : 'n', n);
  add_str (fp, count);
  for (gsize i = 0; i < n; i++)
    add_str (fp, v[i]);
}

static void
stat_record (const struct stat *st, gint64 rec[8])
{
  rec[0] = (gint64) st->st_dev;
  rec[1] = (gint64) st->st_ino;
  rec[2] = (gint64) st->st_size;
  rec[3] = (gint64) st->st_mode;
  rec[4] = (gint64) st->st_mtim.tv_sec;
  rec[5] = (gint64) st->st_mtim.tv_nsec;
  rec[6] = (gint64) st->st_ctim.tv_sec;
  rec[7] = (gint64) st->st_ctim.tv_nsec;
}

/* TRUE if a file with @st may change again without its stat changing, as
 * seen by a run that started at @since_ns */
static gboolean
stat_is_racy (const struct stat *st, gint64 since_ns)
{
  gint64 ctime_ns = (gint64) st->st_ctim.tv_sec * G_GINT64_CONSTANT (1000000000) + st->st_ctim.tv_nsec;
  gint64 margin = st->st_ctim.tv_nsec == 0 ? RACY_COARSE_NS : RACY_NS;

  return since_ns == 0 || ctime_ns >= since_ns - margin;
}

static void
add_stat_buf (Fingerprint *fp, const struct stat *st)
{
  gint64 rec[8];

  stat_record (st, rec);
  g_checksum_update (fp->sum, (const guchar *) rec, sizeof rec);
  if (stat_is_racy (st, fp->since_ns))
    fp->racy = TRUE;
}

/* lstat of @name in the directory @dfd (AT_FDCWD: @name is @path), kept
 * for the plan under @path; FALSE (and the error counted) if there is none */
static gboolean
add_lstat_at (Fingerprint *fp, int dfd, const char *name, const char *path, struct stat *st)
{
  if (fstatat (dfd, name, st, AT_SYMLINK_NOFOLLOW) != 0)
    {
      char e[16];

      g_snprintf (e, sizeof e, "!%d", errno);
      add_str (fp, e);
      return FALSE;
    }
  add_stat_buf (fp, st);
  if (fp->stats != NULL)
    g_hash_table_insert (fp->stats, g_strdup (path), g_memdup2 (st, sizeof *st));
  return TRUE;
}

static gboolean
add_lstat (Fingerprint *fp, const char *path, struct stat *st)
{
  return add_lstat_at (fp, AT_FDCWD, path, path, st);
}

static gint
compare_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

/* @dir (host path; @rel the same inside @root, or NULL outside any root)
 * and every name in it, down @depth levels of directories */
static void
add_tree (Fingerprint *fp, const char *root, const char *dir, const char *rel, int depth)
{
  struct stat st;
  DIR *d;
  struct dirent *de;
  g_autoptr(GPtrArray) names = NULL;

  add_str (fp, dir);
  if (!add_lstat (fp, dir, &st) || !S_ISDIR (st.st_mode) || (d = opendir (dir)) == NULL)
    return;
  names = g_ptr_array_new_with_free_func (g_free);
  while ((de = readdir (d)) != NULL)
    if (strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0)
      g_ptr_array_add (names, g_strdup (de->d_name));
  g_ptr_array_sort (names, compare_names);

  /* each name looked up in the open directory, not along its whole path
   * again (a path walk of ten components per icon file) */
  for (guint i = 0; i < names->len; i++)
    {
      const char *name = names->pdata[i];
      g_autofree char *path = g_build_filename (dir, name, NULL);
      g_autofree char *sub_rel = NULL;

      add_str (fp, name);
      if (!add_lstat_at (fp, dirfd (d), name, path, &st))
        continue;
      /* a link leads where the watches may not go, a directory too deep is
       * not watched, and a file of several names may be written through
       * one the watches do not see */
      if (S_ISLNK (st.st_mode) || (S_ISDIR (st.st_mode) && fp->top_depth - depth >= fp->watch_depth) ||
          (!S_ISDIR (st.st_mode) && st.st_nlink > 1))
        fp->watchable = FALSE;
      if (rel != NULL && (S_ISLNK (st.st_mode) || S_ISDIR (st.st_mode)))
        sub_rel = g_build_filename (rel, name, NULL);
      if (S_ISLNK (st.st_mode))
        {
          /* where it leads inside the tree (or, outside one, on the host) */
          g_autofree char *target = root != NULL && sub_rel != NULL
            ? gl_tree_resolve (root, sub_rel) : g_strdup (path);
          struct stat tst;

          add_str (fp, target);
          if (target != NULL && stat (target, &tst) == 0)
            {
              add_stat_buf (fp, &tst);
              if (S_ISDIR (tst.st_mode) && depth > 0)
                add_tree (fp, root, target, sub_rel, depth - 1);
            }
          continue;
        }
      if (S_ISDIR (st.st_mode) && depth > 0)
        add_tree (fp, root, path, sub_rel, depth - 1);
    }
  closedir (d);
}

/* The root @path lies in and @path inside it, or NULL */
static const char *
rel_in_roots (GlExportSource *source, const char *path, const char **root)
{
  for (gsize i = 0; source->data_roots != NULL && source->data_roots[i] != NULL; i++)
    {
      gsize n = strlen (source->data_roots[i]);

      if (strncmp (path, source->data_roots[i], n) == 0 && path[n] == '/')
        {
          *root = source->data_roots[i];
          return path + n + 1;
        }
    }
  *root = NULL;
  return NULL;
}

/* The parts of one run's fingerprint */
typedef struct {
  GlExportSource *source;
  GHashTable *old;       /* the last clean run's (part key -> digest), or NULL */
  GHashTable *parts;     /* this run's, kept if it ends clean */
  GPtrArray *unchanged;  /* the directories of the parts taken from @old */
} Parts;

/* TRUE if the watcher saw a change in @dir or below it */
static gboolean
part_changed (GlExportSource *source, const char *dir)
{
  gsize n = strlen (dir);

  for (gsize i = 0; source->changed_dirs[i] != NULL; i++)
    if (strncmp (source->changed_dirs[i], dir, n) == 0 &&
        (source->changed_dirs[i][n] == '\0' || source->changed_dirs[i][n] == '/'))
      return TRUE;
  return FALSE;
}

/* One part: the directory @rel of the tree @root (@dir: the applications
 * directory as the source names it; NULL: @rel resolved inside @root) and
 * every name in it down @depth levels, the watcher's watches going
 * @watch_depth levels down.  Its digest is taken from the last clean run
 * when the watcher vouches for it and saw no change in it. */
static void
add_part (Fingerprint *fp, Parts *parts, char kind, const char *root, const char *rel,
          const char *dir, int depth, int watch_depth)
{
  g_autofree char *key = g_strdup_printf ("%c%s", kind, dir != NULL ? dir : root);
  g_autofree char *real = NULL;
  g_autofree char *literal = NULL;
  gboolean watched = parts != NULL && parts->source->watched_roots != NULL && root != NULL &&
                     rel != NULL && g_strv_contains ((const char * const *) parts->source->watched_roots, root);
  Fingerprint sub = { g_checksum_new (G_CHECKSUM_SHA256), fp->since_ns, FALSE, fp->stats,
                      TRUE, depth, watch_depth };
  guint8 digest[32];
  gsize len = sizeof digest;
  const guint8 *known;

  if (dir == NULL || watched)
    real = gl_tree_resolve (root, rel);
  if (watched)
    {
      /* the watcher watches the path on the host: the same directory */
      literal = g_build_filename (root, rel, NULL);
      watched = real != NULL && strcmp (real, literal) == 0;
    }
  add_str (fp, key);
  if (watched && parts->source->changed_dirs != NULL && parts->old != NULL &&
      (known = g_hash_table_lookup (parts->old, key)) != NULL && !part_changed (parts->source, real))
    {
      g_checksum_update (fp->sum, known, 32);
      g_hash_table_insert (parts->parts, g_strdup (key), g_memdup2 (known, 32));
      g_ptr_array_add (parts->unchanged, g_steal_pointer (&real));
      g_checksum_free (sub.sum);
      return;
    }

  if (dir != NULL)
    add_tree (&sub, root, dir, rel, depth);
  else if (real != NULL)
    add_tree (&sub, root, real, rel, depth);
  else
    add_str (&sub, "!");
  g_checksum_get_digest (sub.sum, digest, &len);
  g_checksum_free (sub.sum);
  g_checksum_update (fp->sum, digest, sizeof digest);
  if (sub.racy)
    fp->racy = TRUE;
  else if (watched && sub.watchable)
    g_hash_table_insert (parts->parts, g_strdup (key), g_memdup2 (digest, sizeof digest));
}

gint64
gl_export_fingerprint_clock (void)
{
  struct timespec ts;

  /* the clock the kernel stamps files with */
  clock_gettime (CLOCK_REALTIME_COARSE, &ts);
  return (gint64) ts.tv_sec * G_GINT64_CONSTANT (1000000000) + ts.tv_nsec;
}

/* The digest of @source's inputs as they are now; *racy when one of them
 * changed since @since_ns (gl_export_fingerprint_clock) or just before. */
static void
fingerprint (GlExportContext *ctx, GlExportSource *source, const char * const *extra,
             gint64 since_ns, GHashTable *stats, Parts *parts, guint8 digest[32], gboolean *racy)
{
  Fingerprint fp = { g_checksum_new (G_CHECKSUM_SHA256), since_ns, FALSE, stats, TRUE, 0, 0 };
  gsize len = 32;
  struct stat st;

  add_str (&fp, FINGERPRINT_VERSION);
  add_str (&fp, ctx->data_home);
  add_str (&fp, ctx->config_home);
  add_str (&fp, ctx->launcher);
  add_str (&fp, ctx->glimpse);
  add_str (&fp, ctx->app_folders ? "f1" : "f0");
  add_str (&fp, ctx->file_managers ? "m1" : "m0");
  add_str (&fp, ctx->caja_scripts ? "c1" : "c0");
  add_str (&fp, ctx->run_tool != NULL ? "t1" : "t0");

  add_str (&fp, source->id);
  add_str (&fp, source->name);
  add_strv (&fp, (const char * const *) source->app_dirs);
  add_str (&fp, source->exclude_apps_dir);
  add_strv (&fp, (const char * const *) source->data_roots);
  add_str (&fp, source->system_apps_dir);
  add_strv (&fp, (const char * const *) source->launchers);
  add_strv (&fp, (const char * const *) source->admin_added);
  add_strv (&fp, (const char * const *) source->admin_hidden);
  add_strv (&fp, (const char * const *) source->added);
  add_strv (&fp, (const char * const *) source->removed);
  add_str (&fp, source->control_entries ? "e1" : "e0");

  for (gsize i = 0; source->app_dirs != NULL && source->app_dirs[i] != NULL; i++)
    {
      const char *root = NULL;
      const char *rel = rel_in_roots (source, source->app_dirs[i], &root);

      add_part (&fp, parts, 'a', root, rel, source->app_dirs[i], APPS_DEPTH, GL_EXPORT_WATCH_APPS_DEPTH);
    }
  if (source->exclude_apps_dir != NULL)
    add_lstat (&fp, source->exclude_apps_dir, &st);

  for (gsize i = 0; source->data_roots != NULL && source->data_roots[i] != NULL; i++)
    {
      const char *root = source->data_roots[i];
      static const char * const chain[] = { "usr", "usr/share", NULL };

      add_str (&fp, root);
      add_lstat (&fp, root, &st);
      for (gsize c = 0; chain[c] != NULL; c++)
        {
          g_autofree char *path = g_build_filename (root, chain[c], NULL);
          add_lstat (&fp, path, &st);
        }
      add_part (&fp, parts, 'i', root, "usr/share/icons", NULL, ICONS_DEPTH, GL_EXPORT_WATCH_ICONS_DEPTH);
      add_part (&fp, parts, 'p', root, "usr/share/pixmaps", NULL, 0, 0);
    }

  add_strv (&fp, extra);
  for (gsize i = 0; extra != NULL && extra[i] != NULL; i++)
    {
      struct stat est;
      if (stat (extra[i], &est) == 0)
        add_stat_buf (&fp, &est);
      else
        add_str (&fp, "!");
    }

  g_checksum_get_digest (fp.sum, digest, &len);
  g_checksum_free (fp.sum);
  *racy = fp.racy;
}

/* ------------------------------------------------------------- the cache */

void
gl_export_cache_begin (GlExportCache *cache, const char *manifest_path)
{
  g_autofree char *now = gl_manifest_state_key (manifest_path);

  /* another run (glimpse export) changed the exports: nothing is known */
  if (g_strcmp0 (now, cache->manifest_key) != 0)
    {
      g_hash_table_remove_all (cache->entries);
      /* nor what the last runs' records say of their sources */
      g_hash_table_remove_all (cache->parts);
    }
  else
    {
      GHashTableIter iter;
      gpointer value;

      g_hash_table_iter_init (&iter, cache->entries);
      while (g_hash_table_iter_next (&iter, NULL, &value))
        g_clear_pointer (&((CacheEntry *) value)->settled, g_hash_table_unref);
    }
}

void
gl_export_cache_end (GlExportCache *cache, const char *manifest_path)
{
  g_free (cache->manifest_key);
  cache->manifest_key = gl_manifest_state_key (manifest_path);
}

void
gl_export_cache_note_hit (GlExportCache *cache)
{
  cache->hits++;
}

guint
gl_export_cache_n_hits (GlExportCache *cache)
{
  return cache->hits;
}

void
gl_export_cache_forget (GlExportCache *cache, const char *id)
{
  g_hash_table_remove (cache->entries, id);
  g_hash_table_remove (cache->parts, id);
}

void
gl_export_cache_drop (GlExportCache *cache, const char *id)
{
  g_hash_table_remove (cache->entries, id);
  g_hash_table_remove (cache->apps, id);
  g_hash_table_remove (cache->parts, id);
}

/* -------------------------------------------------- each entry's memo */

#define MEMOS_PER_BLOCK 128

struct _GlAppMemos {
  GHashTable *index;      /* path (in strings) -> GlAppMemo (in blocks) */
  GStringChunk *strings;
  GPtrArray *blocks;      /* GlAppMemo[MEMOS_PER_BLOCK] */
  guint used;             /* in the last block */
};

GlAppMemos *
gl_app_memos_new (void)
{
  GlAppMemos *memos = g_new0 (GlAppMemos, 1);

  memos->index = g_hash_table_new (g_str_hash, g_str_equal);
  memos->strings = g_string_chunk_new (8192);
  memos->blocks = g_ptr_array_new_with_free_func (g_free);
  memos->used = MEMOS_PER_BLOCK;
  return memos;
}

void
gl_app_memos_free (GlAppMemos *memos)
{
  if (memos == NULL)
    return;
  g_hash_table_unref (memos->index);
  g_string_chunk_free (memos->strings);
  g_ptr_array_unref (memos->blocks);
  g_free (memos);
}

GlAppMemo *
gl_app_memos_lookup (GlAppMemos *memos, const char *path)
{
  return memos != NULL ? g_hash_table_lookup (memos->index, path) : NULL;
}

GlAppMemo *
gl_app_memos_add (GlAppMemos *memos, const char *path, const GlAppMemo *memo)
{
  GlAppMemo *copy;

  if (memos->used == MEMOS_PER_BLOCK)
    {
      g_ptr_array_add (memos->blocks, g_new (GlAppMemo, MEMOS_PER_BLOCK));
      memos->used = 0;
    }
  copy = (GlAppMemo *) memos->blocks->pdata[memos->blocks->len - 1] + memos->used++;
  *copy = *memo;
  copy->name = memo->name != NULL ? g_string_chunk_insert (memos->strings, memo->name) : NULL;
  copy->icon = memo->icon != NULL ? g_string_chunk_insert (memos->strings, memo->icon) : NULL;
  g_hash_table_replace (memos->index, g_string_chunk_insert (memos->strings, path), copy);
  return copy;
}

gboolean
gl_app_memo_matches (const GlAppMemo *memo, const struct stat *st)
{
  gint64 rec[8];

  stat_record (st, rec);
  return memcmp (rec, memo->st, sizeof rec) == 0;
}

gboolean
gl_app_memo_init (GlExportCache *cache, GlAppMemo *memo, const struct stat *st)
{
  if (stat_is_racy (st, cache->since))
    return FALSE;
  memset (memo, 0, sizeof *memo);
  stat_record (st, memo->st);
  return TRUE;
}

GlAppMemos *
gl_export_cache_apps (GlExportCache *cache, const char *id)
{
  return g_hash_table_lookup (cache->apps, id);
}

/* The memos of the sandboxes scanned last are kept, up to this many
 * entries (two sandboxes of 300 apps; always those of the last one): a
 * change comes to the sandbox that changed before (a package operation, a
 * burst of them), and 10 sandboxes of 300 apps would keep 1 MB of memos
 * for changes that mostly never come.  A sandbox without them has every
 * entry read again: 20 ms more for 300 apps, once. */
#define MEMOS_KEPT 600

void
gl_export_cache_set_apps (GlExportCache *cache, const char *id, GlAppMemos *apps)
{
  guint kept = 0;
  guint i;

  g_hash_table_insert (cache->apps, g_strdup (id), apps);
  for (i = 0; i < cache->recent->len; i++)
    if (strcmp (cache->recent->pdata[i], id) == 0)
      {
        g_ptr_array_remove_index (cache->recent, i);
        break;
      }
  g_ptr_array_add (cache->recent, g_strdup (id));
  /* from the one scanned last back: a sandbox's memos go once the ones
   * after it hold the entries kept (or the sandbox is gone) */
  for (i = cache->recent->len; i > 0; i--)
    {
      GlAppMemos *memos = g_hash_table_lookup (cache->apps, cache->recent->pdata[i - 1]);

      if (memos != NULL && (kept == 0 || kept + g_hash_table_size (memos->index) <= MEMOS_KEPT))
        {
          kept += g_hash_table_size (memos->index);
          continue;
        }
      g_hash_table_remove (cache->apps, cache->recent->pdata[i - 1]);
      g_ptr_array_remove_index (cache->recent, i - 1);
    }
}

void
gl_export_cache_set_since (GlExportCache *cache, gint64 since_ns)
{
  cache->since = since_ns;
}

GlFingerprint *
gl_export_fingerprint_new (GlExportCache *cache, GlExportContext *ctx, GlExportSource *source,
                           gint64 since_ns)
{
  CacheEntry *e = g_hash_table_lookup (cache->entries, source->id);
  GlFingerprint *f = g_new0 (GlFingerprint, 1);
  g_autoptr(GHashTable) old = NULL;
  g_autofree char *old_key = NULL;
  Parts parts = { source, NULL, NULL, NULL };

  /* the parts are the last clean run's: this run hands them back only if
   * it ends clean too (a run that fails after walking a changed part must
   * not leave the old digest for the next to take); the stolen key is
   * ours to free as well */
  g_hash_table_steal_extended (cache->parts, source->id, (gpointer *) &old_key, (gpointer *) &old);
  parts.old = old;
  parts.parts = f->parts = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  parts.unchanged = f->unchanged = g_ptr_array_new_with_free_func (g_free);
  f->id = g_strdup (source->id);
  f->extra = e != NULL ? g_strdupv (e->extra) : NULL;
  fingerprint (ctx, source, (const char * const *) f->extra, since_ns, cache->stats, &parts,
               f->digest, &f->racy);
  /* the plan of a run over one source (gl_export_cache_keep_stats) need
   * not look at the files of the parts taken as they were either */
  if (cache->stats != NULL)
    cache->unchanged = f->unchanged;
  return f;
}

void
gl_fingerprint_free (GlFingerprint *f)
{
  if (f == NULL)
    return;
  g_free (f->id);
  g_strfreev (f->extra);
  g_clear_pointer (&f->parts, g_hash_table_unref);
  g_clear_pointer (&f->unchanged, g_ptr_array_unref);
  g_free (f);
}

void
gl_export_cache_keep_parts (GlExportCache *cache, GlFingerprint *f)
{
  if (f->parts != NULL && g_hash_table_size (f->parts) > 0)
    g_hash_table_replace (cache->parts, g_strdup (f->id), g_steal_pointer (&f->parts));
}

gboolean
gl_export_cache_path_unchanged (GlExportCache *cache, const char *path)
{
  if (cache == NULL || cache->unchanged == NULL)
    return FALSE;
  for (guint i = 0; i < cache->unchanged->len; i++)
    {
      const char *dir = cache->unchanged->pdata[i];
      gsize n = strlen (dir);

      if (strncmp (path, dir, n) == 0 && path[n] == '/')
        return TRUE;
    }
  return FALSE;
}

gboolean
gl_export_cache_matches (GlExportCache *cache, GlExportSource *source, GlFingerprint *f,
                         guint *n_files)
{
  CacheEntry *e = g_hash_table_lookup (cache->entries, source->id);

  if (e == NULL || !e->valid || memcmp (e->digest, f->digest, sizeof e->digest) != 0)
    return FALSE;
  source->n_exported = e->n_exported;
  *n_files = e->n_files;
  return TRUE;
}

void
gl_export_cache_record (GlExportCache *cache, GlExportSource *source, GlFingerprint *f,
                        const char * const *extra, guint n_files, GHashTable *dirs)
{
  CacheEntry *e = g_new0 (CacheEntry, 1);
  gboolean same_extra = g_strv_equal ((const char * const *) (f->extra != NULL ? f->extra : (GStrv) (char *[]) { NULL }),
                                      extra != NULL ? extra : (const char * const *) (char *[]) { NULL });

  e->id = g_strdup (source->id);
  /* a digest made with other extra files than this plan read is not the
   * digest of its inputs: the next run makes one */
  e->valid = !f->racy && same_extra;
  memcpy (e->digest, f->digest, sizeof e->digest);
  e->n_exported = source->n_exported;
  e->n_files = n_files;
  e->extra = extra != NULL && extra[0] != NULL ? g_strdupv ((GStrv) extra) : NULL;
  e->dirs = dirs != NULL ? g_hash_table_ref (dirs) : NULL;
  g_hash_table_replace (cache->entries, e->id, e);
  if (e->valid)
    gl_export_cache_keep_parts (cache, f);
}

GHashTable *
gl_export_cache_dir_stats (GPtrArray *paths)
{
  GHashTable *dirs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);

  for (guint i = 0; i < paths->len; i++)
    {
      const char *path = paths->pdata[i];
      const char *slash = strrchr (path, '/');
      g_autofree char *dir = slash != NULL && slash != path ? g_strndup (path, slash - path) : NULL;
      struct stat st;

      if (dir == NULL || g_hash_table_contains (dirs, dir))
        continue;
      if (lstat (dir, &st) == 0 && S_ISDIR (st.st_mode))
        {
          gint64 *rec = g_new (gint64, 8);

          stat_record (&st, rec);
          g_hash_table_insert (dirs, g_steal_pointer (&dir), rec);
        }
    }
  return dirs;
}

void
gl_export_cache_trust_dirs (GlExportCache *cache, gboolean trust)
{
  if (cache != NULL)
    cache->trust_dirs = trust;
}

gboolean
gl_export_cache_dir_as_left (GlExportCache *cache, const char *id, const char *path)
{
  CacheEntry *e;
  const char *slash = strrchr (path, '/');
  char dir[4096];
  const char *known;
  const gint64 *rec;
  gboolean as_left = FALSE;
  struct stat st;

  if (cache == NULL || !cache->trust_dirs || slash == NULL || slash == path ||
      (gsize) (slash - path) >= sizeof dir ||
      (e = g_hash_table_lookup (cache->entries, id)) == NULL || e->dirs == NULL)
    return FALSE;
  /* looked up without a copy on the heap: asked once per exported file */
  memcpy (dir, path, slash - path);
  dir[slash - path] = '\0';
  if (e->settled == NULL)
    e->settled = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  else if ((known = g_hash_table_lookup (e->settled, dir)) != NULL)
    return *known == '1';
  rec = g_hash_table_lookup (e->dirs, dir);
  if (rec != NULL && lstat (dir, &st) == 0)
    {
      gint64 now[8];

      stat_record (&st, now);
      as_left = memcmp (now, rec, sizeof now) == 0;
    }
  g_hash_table_insert (e->settled, g_strdup (dir), as_left ? "1" : "0");
  return as_left;
}

/* The plan of a run over one sandbox (an app changed) lstats again what
 * the fingerprint has just lstat'ed: every entry and icon file.  Those
 * stats are kept for the run and handed out instead.  Taken before the
 * plan reads anything, they are what the fingerprint recorded: a file that
 * changes after them makes the next run's fingerprint differ, and its
 * stat key (gl_manifest_stat_key) differ from the one recorded, so it is
 * read again then.  Not for a run over many sandboxes, which would hold
 * every file's stat at once. */
void
gl_export_cache_keep_stats (GlExportCache *cache, gboolean keep)
{
  if (cache == NULL)
    return;
  g_clear_pointer (&cache->stats, g_hash_table_unref);
  cache->unchanged = NULL;
  if (keep)
    cache->stats = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
}

gboolean
gl_export_cache_lstat (GlExportCache *cache, const char *path, struct stat *st)
{
  const struct stat *known = cache != NULL && cache->stats != NULL ? g_hash_table_lookup (cache->stats, path) : NULL;

  if (known != NULL)
    {
      *st = *known;
      return TRUE;
    }
  return lstat (path, st) == 0;
}
