/* gl-export-private.h: what the export modules share (source, entry rules,
 * plan, sync engine); not for programs
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "gl-export.h"
#include "gl-manifest.h"
#include "gl-mkdir.h"

#include <sys/stat.h>

G_BEGIN_DECLS

#define DE_GROUP G_KEY_FILE_DESKTOP_GROUP

/* One file the export wants, with its contents. */
typedef struct {
  char *path;
  char *sandbox;     /* "" for shared files */
  GBytes *contents;  /* NULL: read from @read_root when written, or @keep */
  int mode;
  char *source;      /* the key of the source file it is made from, or NULL (and when @keep) */
  char *want;        /* the checksum of its contents (computed when needed) */
  gboolean keep;     /* the file is as the manifest recorded it, and stays */
  char *read_root;   /* a copy of the file @read_rel in this tree (gl_tree_read) */
  char *read_rel;
  gsize read_max;
} GlPlanFile;

/* path -> GlPlanFile */
GHashTable *gl_plan_new (void);
/* Both FALSE (and the plan unchanged) if another sandbox, or the same
 * sandbox with other contents, already planned @path: a collision. */
gboolean    gl_plan_add (GHashTable *plan, const char *path, const char *sandbox,
                         const char *data, gssize len, int mode);
gboolean    gl_plan_add_bytes (GHashTable *plan, const char *path, const char *sandbox,
                               GBytes *bytes, int mode);
/* Adds @file (taken): FALSE (and @file freed) on a collision, as above. */
gboolean    gl_plan_add_file (GHashTable *plan, GlPlanFile *file);
/* The checksum of what @file should contain. */
const char *gl_plan_file_checksum (GlPlanFile *file);
/* Its contents: @contents, or the copy read again (and checked against the
 * checksum of the first read: NULL and an error if it changed since; not
 * hashed again when it is the same file, unchanged since before @since_us,
 * the start of the run). */
GBytes     *gl_plan_file_bytes (GlPlanFile *file, gint64 since_us, GError **error);
void        gl_plan_file_free (GlPlanFile *file);
/* The checksum @path keeps if it is sandbox @id's copy of the source with
 * key @source and nobody changed it since (its stat key as recorded, or
 * its directory as the last run left it: gl_export_cache_dir_as_left),
 * else NULL; *@mode (if non-NULL) gets its permission bits. */
const char *gl_plan_copy_unchanged (GlExportContext *ctx, GlManifest *m, const char *id,
                                    const char *path, const char *source, guint *mode);

/* A sandbox as the shared files (menu, Thunar, app folders) see it. */
typedef struct {
  const char *id;
  const char *name;
  const char * const *apps;   /* exported desktop file names */
} GlExportedSandbox;

/* What one sandbox's plan exported. */
typedef struct {
  char *id;
  char *name;
  GPtrArray *apps;   /* exported desktop file names */
  GPtrArray *extra;  /* icon files read outside the trees' icons and pixmaps directories */
} GlPlanSandbox;

void           gl_plan_sandbox_free (GlPlanSandbox *r);
/* Adds the files of @source to @plan; problems of single entries go to
 * @warnings (counted in @stats). */
/* The control entries of @source's submenu (gl-export-control.c): planned,
 * their file names appended to @apps. */
void            gl_plan_control (GHashTable *plan, GlExportContext *ctx, GlExportSource *source,
                                 GPtrArray *apps);

/* @names: the display names of the other sandboxes (gl_fm_actions_plan) */
GlPlanSandbox *gl_plan_sandbox (GHashTable *plan, GlExportContext *ctx, GlManifest *m,
                                GlExportSource *source, GHashTable *names,
                                GlExportStats *stats, GPtrArray *warnings);
/* Adds the shared files (the Glimpse menu and its directory file) for
 * @sandboxes, sorted by id. */
void           gl_plan_shared (GHashTable *plan, GlExportContext *ctx,
                               const GlExportedSandbox *sandboxes, guint n);

/* Letters, digits and "._-+" kept, anything else '_'. */
char *gl_export_sanitize_name (const char *s);
/* "glimpse-ID+ICON", ICON sanitized (see gl_export_desktop_file_name). */
char *gl_export_icon_name (const char *sandbox_id, const char *icon);
/* FALSE for a MIME type a sandbox app never claims on the host (web, mail
 * and file schemes, every inode type, wildcards, malformed types). */
gboolean gl_export_mime_type_allowed (const char *type);

/* Names the host's application the default of every type an exported app
 * claims and a host application handles, unless a default is chosen
 * already (gl-export-defaults.c). */
void gl_export_defaults_sync (GlExportContext *ctx, GlManifest *m, GlExportStats *stats,
                              GPtrArray *warnings);

/* g_debug()s @error, counts it as skipped and appends a copy to @warnings
 * (if non-NULL). */
void gl_export_add_warning (GPtrArray *warnings, GlExportStats *stats, const GError *error);

/* What one desktop entry of a sandbox was, as an earlier scan read it, and
 * what its export was made into (gl-export-fingerprint.c) */
typedef struct {
  gint64 st[8];          /* its lstat when read (dev, ino, size, mode, mtime, ctime) */
  gboolean runnable;
  gboolean visible;
  const char *name;
  const char *icon;
  guint8 out_key[32];    /* what else the export was made from (gl_plan_sandbox) */
  char out_sum[65];      /* the checksum of the export, or "" */
} GlAppMemo;

/* One sandbox's memos, path -> GlAppMemo, kept in a few large blocks (an
 * agent keeps thousands of them: one allocation each would pin pages of
 * the heap all over) */
typedef struct _GlAppMemos GlAppMemos;

GlAppMemos *gl_app_memos_new (void);
void        gl_app_memos_free (GlAppMemos *memos);
GlAppMemo  *gl_app_memos_lookup (GlAppMemos *memos, const char *path);
/* A copy of @memo (its strings too) for @path in @memos */
GlAppMemo  *gl_app_memos_add (GlAppMemos *memos, const char *path, const GlAppMemo *memo);
/* TRUE if @st is the stat @memo was read with */
gboolean    gl_app_memo_matches (const GlAppMemo *memo, const struct stat *st);
/* FALSE if a file with @st changed too recently (after the run's start
 * - 50 ms) to trust its stat later; else @memo's stat set from it */
gboolean    gl_app_memo_init (GlExportCache *cache, GlAppMemo *memo, const struct stat *st);
/* Sandbox @id's memos, or NULL */
GlAppMemos *gl_export_cache_apps (GlExportCache *cache, const char *id);
/* Replaces them with @apps (taken) */
void        gl_export_cache_set_apps (GlExportCache *cache, const char *id, GlAppMemos *apps);
void        gl_export_cache_set_since (GlExportCache *cache, gint64 since_ns);
/* The fingerprints' lstats kept for this run's plan (keep), or dropped;
 * gl_export_cache_lstat hands out a kept one, else lstat()s (@cache may be
 * NULL for both).  TRUE if @path has a stat. */
void        gl_export_cache_keep_stats (GlExportCache *cache, gboolean keep);
gboolean    gl_export_cache_lstat (GlExportCache *cache, const char *path, struct stat *st);

/* The scan of gl_export_source_scan, with the memos of @cache (may be
 * NULL): an entry whose stat did not change is not read again. */
GPtrArray  *gl_export_source_scan_memo (GlExportSource *source, GlExportCache *cache,
                                        GPtrArray *warnings);
/* Reads the entry at @path of @source (inside its tree, capped). */
GKeyFile   *gl_export_source_load_entry (GlExportSource *source, const char *path, GError **error);

/* A source's input fingerprint (gl-export-fingerprint.c) */
typedef struct {
  guint8 digest[32];
  gboolean racy;     /* an input changed too recently to trust its stat */
  GStrv extra;       /* the extra files it covers (from the last run) */
  char *id;
  GHashTable *parts; /* the digests of the parts a watcher vouches for (gl-export-fingerprint.c) */
  GPtrArray *unchanged;  /* the directories of those taken as the last run left them */
} GlFingerprint;

/* The clock files are stamped with, before the fingerprints are made */
gint64         gl_export_fingerprint_clock (void);
GlFingerprint *gl_export_fingerprint_new (GlExportCache *cache, GlExportContext *ctx,
                                          GlExportSource *source, gint64 since_ns);
void           gl_fingerprint_free (GlFingerprint *f);
/* A run starts: what another run changed is forgotten */
void           gl_export_cache_begin (GlExportCache *cache, const char *manifest_path);
/* A run ended: the manifest as it left it */
void           gl_export_cache_end (GlExportCache *cache, const char *manifest_path);
void           gl_export_cache_forget (GlExportCache *cache, const char *id);
/* Sandbox @id is gone: its memos too */
void           gl_export_cache_drop (GlExportCache *cache, const char *id);
/* The run that made @f ended clean: the next may take its parts that the
 * watcher saw no change in as they are (gl_export_cache_record does it
 * for a run that recorded its source) */
void           gl_export_cache_keep_parts (GlExportCache *cache, GlFingerprint *f);
/* TRUE if @path lies in a part of this run's source (a run over one
 * source) that the watcher vouches for and saw no change in since the last
 * clean run: the manifest's records of the files made from it are as that
 * run left them, and its files as they were then */
gboolean       gl_export_cache_path_unchanged (GlExportCache *cache, const char *path);
/* Runs that found every source unchanged and did nothing (tests) */
void           gl_export_cache_note_hit (GlExportCache *cache);
guint          gl_export_cache_n_hits (GlExportCache *cache);
/* TRUE if @source's exports were made from the inputs @f describes (and
 * are as that run left them); sets source->n_exported and *n_files */
gboolean       gl_export_cache_matches (GlExportCache *cache, GlExportSource *source,
                                        GlFingerprint *f, guint *n_files);
/* @source was exported from the inputs @f describes, reading the icon
 * files @extra outside its icon directories, in @n_files files, which are
 * in the directories @dirs (gl_export_cache_dir_stats, or NULL) as the run
 * left them */
void           gl_export_cache_record (GlExportCache *cache, GlExportSource *source,
                                       GlFingerprint *f, const char * const *extra,
                                       guint n_files, GHashTable *dirs);
/* The directories of @paths -> their stat records, for _record */
GHashTable    *gl_export_cache_dir_stats (GPtrArray *paths);
/* Whether this run may trust the exported files of a directory as the last
 * run over their sandbox left it (not a complete sync) */
void           gl_export_cache_trust_dirs (GlExportCache *cache, gboolean trust);
/* TRUE if the directory of @path (an exported file of sandbox @id) is as
 * the last run over @id left it (@cache may be NULL): no name in it came,
 * went or was replaced since, so @path is the file that run recorded.  A
 * write into the file itself is not seen, nor a name changed within the
 * same tick of the file system's clock as that run's last change of the
 * directory (the race a file's own stat key has too): the next complete
 * sync (start-up, "glimpse export") checks every file again. */
gboolean       gl_export_cache_dir_as_left (GlExportCache *cache, const char *id, const char *path);

G_END_DECLS
