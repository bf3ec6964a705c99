/* gl-repo-private.h: what gl-repo.c shares with the repositories of the
 * other families (gl-repo-dnf.c, gl-repo-pacman.c, gl-repo-apk.c)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "gl-repo.h"

G_BEGIN_DECLS

/* Sets a GL_PKG_ERROR_INVALID error; returns FALSE. */
gboolean gl_repo_invalid (GError **error, const char *format, ...) G_GNUC_PRINTF (2, 3);
/* Sets GL_STORE_ERROR_NOT_FOUND for the repository @name; returns FALSE. */
gboolean gl_repo_not_found (GlSandbox *sandbox, const char *name, GError **error);
/* Whether @sandbox records @name as a repository glimpse added (its
 * sandbox.conf's Repositories=, which the sandbox's packages cannot write):
 * only such a repository is "(added)", and only its keys does remove-repo
 * delete; a file or marker of the base's or a package's named like
 * glimpse's is not enough. */
gboolean gl_repo_recorded (GlSandbox *sandbox, const char *name);
/* An http(s) address of plain characters (no quoting, no spaces). */
gboolean gl_repo_uri_ok (const char *uri);
/* The key of --key: a file or an http(s) URL, at most 1 MiB. */
GBytes  *gl_repo_read_key (const char *key, GCancellable *cancellable, GError **error);
gboolean gl_repo_key_is_armored (GBytes *key);
/* The sandbox's regular file @rel ("etc/pacman.conf") as its view shows it
 * (system layer over the base), at most 1 MiB, reached without following a
 * link; NULL when there is none. */
char    *gl_repo_read_sandbox_file (GlSandbox *sandbox, const char *rel);
/* The same of etc/os-release, following links inside the view
 * (GL_VIEW_FOLLOW_LINKS: bounded, never out of the sandbox's tree) to a
 * file in its /usr only (GL_VIEW_LINKS_INTO_USR). */
char    *gl_repo_read_os_release (GlSandbox *sandbox);
/* The files of the directory @dir_rel ("etc/yum.repos.d") whose names end
 * in one of @suffixes, as the view shows them: name without the suffix →
 * path inside ("/etc/yum.repos.d/x.repo"). */
GHashTable *gl_repo_view_dir (GlSandbox *sandbox, const char *dir_rel, const char * const *suffixes);

/* One [section] of an INI-style file (.repo, pacman.conf). */
typedef struct {
  char *id;           /* the name between the brackets */
  guint first, last;  /* its header's line and its last key's line (0-based) */
  GPtrArray *keys;    /* key, value, key, value… (value NULL for a bare word) */
} GlRepoIniSection;
void gl_repo_ini_section_free (GlRepoIniSection *section);
/* The sections of @text; with @continuation, an indented line continues
 * the value before it (dnf), else it is a line of its own (pacman).
 * Comments (# and ;) and lines outside any section are skipped. */
GPtrArray *gl_repo_ini_parse (const char *text, gboolean continuation);
/* The first value of @key in @section, or NULL. */
const char *gl_repo_ini_get (GlRepoIniSection *section, const char *key);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GlRepoIniSection, gl_repo_ini_section_free)
/* @text without the lines of the section @id (header to last key). */
char *gl_repo_ini_drop_section (const char *text, const char *id, gboolean continuation);

typedef struct {
  const char *name;   /* file name in /run/glimpse-input */
  GBytes *data;       /* NULL: an empty file */
} GlRepoInput;

/* One repository change as a package operation: @inputs (ending with a
 * NULL name) written to /run/glimpse-input, @script run inside with @args,
 * downloading through the proxy from the sandbox's repositories and the
 * addresses @allow (NULL: no network at all), the generation committed,
 * then @added (its address: @allow[0]) put into / @removed taken out of
 * the sandbox's list of repositories glimpse added. */
gboolean gl_repo_change (GlSandbox *sandbox, const char *what, const GlRepoInput *inputs,
                         const char *script, const char * const *args, const char * const *allow,
                         const char *added, const char *removed, GlPkgProgress progress,
                         gpointer user_data, GCancellable *cancellable, GError **error);

/* The families' own add-repo, remove-repo and repos (same contracts as
 * gl_repo_add, gl_repo_remove and gl_repo_list). */
/* dnf: the one repository of a .repo text, checked: http(s) addresses,
 * gpgcheck never off, only keys glimpse knows, a gpgkey= unless @have_key. */
GlRepoIniSection *gl_repo_dnf_parse (const char *text, gboolean have_key, GError **error);
/* The .repo glimpse writes: section [@name], gpgcheck=1, and
 * gpgkey=file://@keyfile when given (replacing the text's own). */
char      *gl_repo_dnf_render (GlRepoIniSection *repo, const char *name, const char *keyfile);
gboolean   gl_repo_dnf_add (GlSandbox *sandbox, const char *spec, const char *key, const char *name,
                            GlPkgProgress progress, gpointer user_data, GCancellable *cancellable,
                            GError **error);
gboolean   gl_repo_dnf_remove (GlSandbox *sandbox, const char *name, GlPkgProgress progress,
                               gpointer user_data, GCancellable *cancellable, GError **error);
GPtrArray *gl_repo_dnf_list (GlSandbox *sandbox, GError **error);

/* pacman: a [NAME] section with Server = lines (SigLevel = Required at
 * most) or a server's address; @name_arg wins over the section's name. */
gboolean   gl_repo_pacman_parse (const char *text, const char *name_arg, char **name, GStrv *servers,
                                 GError **error);
/* [@name], SigLevel = Required, the Server = lines */
char      *gl_repo_pacman_section (const char *name, const char * const *servers);
/* @conf with the section of @name appended between glimpse's markers,
 * the first naming @fprs */
char      *gl_repo_pacman_conf_add (const char *conf, const char *name, const char * const *servers,
                                    const char * const *fprs);
/* @conf without the repository @name: glimpse's block (*@keys: its key
 * fingerprints no other block under glimpse's marks names, recorded or
 * not, when @recorded: glimpse recorded adding it, see gl_repo_recorded)
 * or a section of the base (*@keys NULL); @conf itself when there is none */
char      *gl_repo_pacman_conf_remove (const char *conf, const char *name, gboolean recorded, GStrv *keys);
gboolean   gl_repo_pacman_add (GlSandbox *sandbox, const char *spec, const char *key, const char *name,
                               GlPkgProgress progress, gpointer user_data, GCancellable *cancellable,
                               GError **error);
gboolean   gl_repo_pacman_remove (GlSandbox *sandbox, const char *name, GlPkgProgress progress,
                                  gpointer user_data, GCancellable *cancellable, GError **error);
GPtrArray *gl_repo_pacman_list (GlSandbox *sandbox, GError **error);

/* apk: a key's file name as apk looks it up ("…​.rsa.pub") */
gboolean   gl_repo_apk_key_name_validate (const char *name, GError **error);
/* /etc/apk/repositories text with @url added after glimpse's marker */
char      *gl_repo_apk_repositories_add (const char *text, const char *name, const char *url,
                                         const char *key_name);
/* … without the repository @name (glimpse's, or a line of the base by the
 * name “repos” shows); *@key_name: the key to delete (none when another
 * marker names it, recorded or not, or unless @recorded: glimpse recorded
 * adding it, see gl_repo_recorded); NULL when there is no such repository */
char      *gl_repo_apk_repositories_remove (const char *text, const char *name, gboolean recorded,
                                            char **key_name);
gboolean   gl_repo_apk_add (GlSandbox *sandbox, const char *spec, const char *key, const char *name,
                            GlPkgProgress progress, gpointer user_data, GCancellable *cancellable,
                            GError **error);
gboolean   gl_repo_apk_remove (GlSandbox *sandbox, const char *name, GlPkgProgress progress,
                               gpointer user_data, GCancellable *cancellable, GError **error);
GPtrArray *gl_repo_apk_list (GlSandbox *sandbox, GError **error);

G_END_DECLS
