/* gl-manifest.h: the record of every file desktop integration wrote
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct {
  char *path;
  char *sandbox;     /* owning sandbox id, "" for shared files */
  GStrv checksums;   /* contents Glimpse wrote (more than one only while a sync runs) */
  char *stat;        /* the file as Glimpse left it (gl_manifest_stat_key), or NULL */
  char *source;      /* what it was made from (a source file's key), or NULL */
} GlManifestFile;

typedef struct {
  char *id;
  char *name;
  GStrv apps;        /* exported desktop file names */
} GlManifestSandbox;

typedef struct {
  char *path;                 /* the manifest file itself */
  GHashTable *files;          /* path -> GlManifestFile (of the sandboxes loaded, and shared ones) */
  GHashTable *sandboxes;      /* id -> GlManifestSandbox */
  GHashTable *dirs;           /* directories Glimpse created (set) */
  GHashTable *merged;         /* merged files (uca.xml) -> "1" if Glimpse created it, else "0" */
  GHashTable *defaults;       /* MIME type -> the host's app Glimpse set as its default */
  GHashTable *loaded;         /* ids of the sandboxes whose files are in @files (set) */
  gboolean had_intent;        /* loaded with a journal a killed run left */
  gboolean intent_on_disk;    /* a journal is there (loaded, or written by this run) */
} GlManifest;

void        gl_manifest_free (GlManifest *manifest);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GlManifest, gl_manifest_free)

/* The manifest is one file for what every sandbox shares (the sandboxes'
 * lines, directories, merged files, defaults, the shared files) and one
 * per sandbox for that sandbox's files, beside it in "<path>.d": a change
 * to one sandbox reads and writes that sandbox's records only.
 *
 * Loads @path and every sandbox's records; a missing file is an empty
 * manifest. */
GlManifest *gl_manifest_load (const char *path, GError **error);
/* Loads @path without the sandboxes' records, except those of sandboxes a
 * journal of a killed run names (and, from a manifest of an older version,
 * which kept everything in one file, every sandbox's). */
GlManifest *gl_manifest_load_shared (const char *path, GError **error);
/* Adds the records of sandbox @id (nothing if they are loaded already); a
 * manifest of it that cannot be read is an error, and nothing is changed. */
gboolean    gl_manifest_load_sandbox (GlManifest *manifest, const char *id, GError **error);
/* Adds the records of every sandbox with a manifest or a line. */
gboolean    gl_manifest_load_all (GlManifest *manifest, GError **error);
/* The ids of every sandbox with a manifest or a line, or with records
 * loaded (an id may be there more than once) */
GPtrArray  *gl_manifest_recorded_ids (GlManifest *manifest);
gboolean    gl_manifest_sandbox_loaded (GlManifest *manifest, const char *id);
/* The manifest of sandbox @id's files beside @manifest_path */
char       *gl_manifest_sandbox_path (const char *manifest_path, const char *id);
/* Saves the shared file and the manifest of every sandbox loaded (each
 * compared first and written only if it differs; one left with no record
 * removed); then removes the journal. */
gboolean    gl_manifest_save (GlManifest *manifest, GError **error);
/* Changes whenever a run saved another text of any part of the manifest
 * at @manifest_path */
char       *gl_manifest_state_key (const char *manifest_path);
/* The intent to write @paths (their records as they are now, with the
 * checksums about to be written) saved before they are written: a small
 * journal beside the manifest (its path + ".intent"), synced, which
 * gl_manifest_load() adds to what it reads and the next gl_manifest_save()
 * (or gl_manifest_delete()) removes.  Much cheaper than saving the whole
 * manifest twice per run. */
gboolean    gl_manifest_save_intent (GlManifest *manifest, GHashTable *paths, GError **error);
/* Removes the manifest file, the manifests of the sandboxes loaded and the
 * journal (nothing left is recorded). */
void        gl_manifest_delete (GlManifest *manifest);
char       *gl_manifest_intent_path (const char *manifest_path);

/* Adds @checksum to the checksums of @path (creating the record). */
void        gl_manifest_add_file (GlManifest *manifest, const char *path,
                                  const char *sandbox, const char *checksum);
void        gl_manifest_set_sandbox (GlManifest *manifest, const char *id,
                                     const char *name, const char * const *apps);
gboolean    gl_manifest_file_matches (GlManifestFile *file, const char *checksum);

/* "ino:size:mtime:ctime" of @path (not following a link), NULL if it
 * cannot be stat()ed: a file whose key is unchanged has the contents it had
 * (a write changes mtime and ctime; ctime cannot be set back). */
char       *gl_manifest_stat_key (const char *path);
struct stat;
char       *gl_manifest_stat_key_of (const struct stat *st);
/* The checksum of @file's contents without reading it when its key still
 * matches the one recorded; else read (NULL if unreadable). */
char       *gl_manifest_file_checksum (GlManifestFile *file);
/* TRUE if @file is what a power cut can leave of a write Glimpse made
 * without syncing it (see sync_write in gl-export-sync.c), so it is still
 * Glimpse's to write again: a regular file that is empty (no export is),
 * or the inode recorded with the ctime recorded (nobody wrote, renamed or
 * chmod()ed it since: a ctime cannot be set back) whose size or contents
 * differ (data the file system had not written when the power went). */
gboolean    gl_manifest_file_lost (GlManifestFile *file);
/* Records what @file is now (after Glimpse wrote it), and its source. */
void        gl_manifest_file_set_stat (GlManifestFile *file, const char *source);

char       *gl_checksum_file (const char *path);  /* sha256, NULL if unreadable */
char       *gl_checksum_bytes (GBytes *bytes);

G_END_DECLS
