/* gl-export.h: exporting sandbox applications into the host's menus
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define GL_EXPORT_ERROR (gl_export_error_quark ())

typedef enum {
  GL_EXPORT_ERROR_NOT_APPLICATION,  /* Type is not Application, or Hidden */
  GL_EXPORT_ERROR_NO_EXEC,          /* nothing to run */
  GL_EXPORT_ERROR_NOT_FOUND,        /* no such application in the sandbox */
  GL_EXPORT_ERROR_CONFLICT,         /* a file Glimpse did not write is in the way */
  GL_EXPORT_ERROR_TOO_MANY,         /* more applications than GL_EXPORT_MAX_APPS */
  GL_EXPORT_ERROR_UNSAFE,           /* a value or name the host's desktop could misread */
  GL_EXPORT_ERROR_FAILED,
} GlExportError;

GQuark gl_export_error_quark (void);

/* Where a sandbox's applications come from.  Everything is a path, so tests
 * fake a sandbox under a temporary directory. */
typedef struct {
  char *id;
  char *name;              /* display name */
  GStrv app_dirs;          /* applications directories, highest precedence first */
  char *exclude_apps_dir;  /* Base=host: the host's applications directory, else NULL */
  GStrv data_roots;        /* trees for icons and absolute paths, highest first */
  char *system_apps_dir;   /* the one of @app_dirs the sandbox's own packages write (its
                            * system layer), or NULL: what they installed or upgraded
                            * is exported whatever @launchers says */
  GStrv launchers;         /* the default among the base's apps (sandbox.conf Launchers=),
                            * NULL: every visible app */
  GStrv admin_added;       /* the admin's choice for every user (sandbox.conf AddedLaunchers=, */
  GStrv admin_hidden;      /* HiddenLaunchers=), over the default */
  GStrv added;             /* the user's own choice ($XDG_CONFIG_HOME/glimpse/launchers/ID.conf), */
  GStrv removed;           /* over the admin's */
  gboolean control_entries;  /* "Terminal in <name>" and "<name>" with its actions (gl-export-control.c) */
  guint n_exported;        /* set by gl_export_sync: the applications exported (control entries not counted) */
  /* What a watcher (the session agent's inotify) knows, for a sync with a
   * GlExportContext.cache: @watched_roots are data roots whose
   * usr/share/applications (GL_EXPORT_WATCH_APPS_DEPTH levels of
   * directories below it), usr/share/icons (GL_EXPORT_WATCH_ICONS_DEPTH)
   * and usr/share/pixmaps are watched, and the directories leading to
   * them; @changed_dirs (with @watched_roots) the watched directories in
   * which anything happened since the last sync of this source with the
   * same cache, when nothing else can have changed there.  NULL: anything
   * may have changed (every place is looked at again). */
  GStrv watched_roots;
  GStrv changed_dirs;
} GlExportSource;

#define GL_EXPORT_WATCH_APPS_DEPTH 2
#define GL_EXPORT_WATCH_ICONS_DEPTH 3

GlExportSource *gl_export_source_new (const char *id, const char *name);
void            gl_export_source_free (GlExportSource *source);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GlExportSource, gl_export_source_free)

typedef struct {
  char *desktop_id;   /* "org.example.App.desktop" */
  char *path;         /* the file on the host */
  char *name;         /* Name, localised */
  gboolean visible;   /* an application not NoDisplay, with Exec */
  gboolean runnable;  /* Type=Application, not Hidden, with Exec */
  gboolean on_host;   /* Base=host and the host has it too */
  gboolean own;       /* its entry is in the system layer (GlExportSource.system_apps_dir) */
  gboolean exported;
  char *icon;         /* Icon= */
  GKeyFile *entry;    /* the entry as read (inside the sandbox's tree, size-capped); NULL from
                       * the export's scan (with GlExportContext.cache), which keeps none */
} GlApp;

void gl_app_free (GlApp *app);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GlApp, gl_app_free)

/* At most this many desktop entries of one sandbox are considered. */
#define GL_EXPORT_MAX_APPS 2000

/* The sandbox's applications (a whiteout or an opaque directory in an upper
 * layer hides the lower one), sorted by desktop id, with exported set.
 * Entries that cannot be read safely (see gl-tree.h) are left out, each
 * with a warning appended to @warnings (GError*, if non-NULL); more than
 * GL_EXPORT_MAX_APPS entries give one warning and the rest is ignored. */
GPtrArray *gl_export_source_scan (GlExportSource *source, GPtrArray *warnings);
/* The same, the warnings only g_debug()ed; never fails. */
GPtrArray *gl_export_source_list_apps (GlExportSource *source, GError **error);

/* The user's own choice of launchers. */
char     *gl_export_user_launchers_path (const char *config_home, const char *id);
gboolean  gl_export_user_launchers_load (const char *config_home, const char *id,
                                         GStrv *added, GStrv *removed, GError **error);
gboolean  gl_export_user_launchers_save (const char *config_home, const char *id,
                                         const char * const *added, const char * const *removed,
                                         GError **error);

/* Rewrites one desktop entry for the host (see gl-export-entry.c for each rule).
 * @icon_name: the exported icon name, or NULL to keep a themed Icon and drop
 * an absolute one. */
GKeyFile *gl_export_rewrite_entry (GKeyFile *entry, const char *desktop_id,
                                   const char *sandbox_id, const char *sandbox_name,
                                   const char *launcher, const char *icon_name,
                                   GError **error);

/* TRUE for the file names of the control entries (not applications). */
gboolean gl_export_is_control_entry (const char *file_name);

/* "glimpse-<id>-<desktop-id>" */
char *gl_export_desktop_file_name (const char *sandbox_id, const char *desktop_id);

/* Runs a program (argv[0] a name looked up in PATH) and waits for it; TRUE
 * if it ran and exited 0.  Desktop integration runs no program itself: the
 * caller passes one (session/gl-export-store.c). */
typedef gboolean (*GlExportRunTool) (const char * const *argv, gpointer user_data);

/* What a long-lived caller (the session agent) keeps between syncs: each
 * sandbox's input fingerprint (gl-export-fingerprint.c), so a resync of a
 * sandbox whose sources and exports did not change does nothing. */
typedef struct _GlExportCache GlExportCache;

GlExportCache *gl_export_cache_new (void);
void           gl_export_cache_free (GlExportCache *cache);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GlExportCache, gl_export_cache_free)

typedef struct {
  char *data_home;      /* $XDG_DATA_HOME */
  char *config_home;    /* $XDG_CONFIG_HOME */
  char *launcher;       /* glimpse-launch, the Exec of every exported entry */
  char *glimpse;        /* the glimpse program, for file-manager actions */
  GlExportRunTool run_tool;  /* update-desktop-database, gtk-update-icon-cache; NULL: none */
  gpointer run_tool_data;
  gboolean app_folders; /* GNOME app folders (when the schema exists) */
  gboolean file_managers;
  gboolean caja_scripts; /* Caja scripts: TRUE unless caja-actions is installed */
  GlExportCache *cache;  /* NULL, or kept between syncs (freed with the context) */
} GlExportContext;

/* The user's XDG directories; @launcher and @glimpse as given. */
GlExportContext *gl_export_context_new (const char *launcher, const char *glimpse);
void             gl_export_context_free (GlExportContext *ctx);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GlExportContext, gl_export_context_free)

char *gl_export_manifest_path (GlExportContext *ctx);

typedef struct {
  guint written;     /* files created or changed */
  guint unchanged;
  guint removed;
  guint skipped;     /* conflicts and entries that could not be exported */
} GlExportStats;

/* Brings the exports in line with @sources (GlExportSource*).  With
 * @complete the sources are every sandbox there is and exports of any other
 * sandbox go; otherwise other sandboxes' exports are kept as they are.
 * Per-entry problems are skipped (g_debug, counted in @stats and appended
 * to @warnings as GError* if non-NULL); an error is returned only when the
 * manifest cannot be read or written. */
gboolean gl_export_sync (GlExportContext *ctx, GPtrArray *sources, gboolean complete,
                         GlExportStats *stats, GPtrArray *warnings, GError **error);

/* The user's "glimpse unexport" switch, Disabled= in their launcher file. */
gboolean gl_export_user_disabled (const char *config_home, const char *id);
gboolean gl_export_user_set_disabled (const char *config_home, const char *id,
                                      gboolean disabled, GError **error);

/* Removes every export of sandbox @id. */
gboolean gl_export_unexport (GlExportContext *ctx, const char *id, GError **error);

G_END_DECLS
