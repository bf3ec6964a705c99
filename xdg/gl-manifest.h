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
  GHashTable *files;          /* path -> GlManifestFile */
  GHashTable *sandboxes;      /* id -> GlManifestSandbox */
  GHashTable *dirs;           /* directories Glimpse created (set) */
  GHashTable *merged;         /* merged files (uca.xml) -> "1" if Glimpse created it, else "0" */
  GHashTable *defaults;       /* MIME type -> the host's app Glimpse set as its default */
  gboolean had_intent;        /* loaded with a journal a killed run left */
  gboolean intent_on_disk;    /* a journal is there (loaded, or written by this run) */
} GlManifest;

void        gl_manifest_free (GlManifest *manifest);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GlManifest, gl_manifest_free)

/* Loads @path; a missing file is an empty manifest. */
GlManifest *gl_manifest_load (const char *path, GError **error);
gboolean    gl_manifest_save (GlManifest *manifest, GError **error);
/* The intent to write @paths (their records as they are now, with the
 * checksums about to be written) saved before they are written: a small
 * journal beside the manifest (its path + ".intent"), synced, which
 * gl_manifest_load() adds to what it reads and the next gl_manifest_save()
 * (or gl_manifest_delete()) removes.  Much cheaper than saving the whole
 * manifest twice per run. */
gboolean    gl_manifest_save_intent (GlManifest *manifest, GHashTable *paths, GError **error);
/* Removes the manifest file and its journal (nothing left is recorded). */
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
/* Records what @file is now (after Glimpse wrote it), and its source. */
void        gl_manifest_file_set_stat (GlManifestFile *file, const char *source);

char       *gl_checksum_file (const char *path);  /* sha256, NULL if unreadable */
char       *gl_checksum_bytes (GBytes *bytes);

G_END_DECLS
