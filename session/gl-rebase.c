/* gl-rebase.c: moving a sandbox onto its profile's current base (see gl-rebase.h)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-rebase-private.h"

#include "gl-fsutil.h"
#include "gl-paths.h"
#include "gl-pkg-private.h"
#include "gl-profile.h"
#include "gl-reclaim.h"

#define FAILED_PREFIX "glimpse-rebase: cannot reinstall "

/* Package lists of the view (dpkg's status of a large system is a few MiB) */
#define VIEW_FILE_MAX (64 * 1024 * 1024)

/* The system layers and the base are the sandbox's, written by its
 * package managers' root: read as the host's root, none of their links
 * is followed, nothing but a regular file read (gl_tree_*). */

/* The file @rel as the view over @roots (top first) shows it, or NULL
 * when it shows none or something else (gl_view_read_file) */
static char *
view_file_len (const char * const *roots, gsize n_roots, const char *rel, gsize max, gsize *len)
{
  char *text = NULL;

  return gl_view_read_file (roots, n_roots, rel, max, &text, len) == GL_VIEW_FILE ? text : NULL;
}

static char *
view_file (const char * const *roots, gsize n_roots, const char *rel)
{
  return view_file_len (roots, n_roots, rel, VIEW_FILE_MAX, NULL);
}

/* deb822 paragraphs (dpkg's status, apt's extended_states): calls @func
 * with each paragraph's fields (name → value, first line only). */
static void
for_each_paragraph (const char *text, void (*func) (GHashTable *fields, gpointer data), gpointer data)
{
  g_auto(GStrv) lines = g_strsplit (text ? text : "", "\n", -1);
  g_autoptr(GHashTable) fields = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);

  for (char **l = lines;; l++)
    {
      if (*l == NULL || **l == '\0')
        {
          if (g_hash_table_size (fields) > 0)
            func (fields, data);
          g_hash_table_remove_all (fields);
          if (*l == NULL)
            break;
          continue;
        }
      if (**l == ' ' || **l == '\t')
        continue;
      {
        const char *colon = strchr (*l, ':');
        if (colon != NULL)
          g_hash_table_insert (fields, g_strndup (*l, colon - *l), g_strstrip (g_strdup (colon + 1)));
      }
    }
}

static void
add_installed (GHashTable *fields, gpointer data)
{
  const char *pkg = g_hash_table_lookup (fields, "Package");
  const char *status = g_hash_table_lookup (fields, "Status");
  g_auto(GStrv) words = status ? g_strsplit (status, " ", -1) : NULL;

  if (pkg != NULL && words != NULL && g_strv_length (words) == 3 && g_str_equal (words[2], "installed"))
    g_hash_table_add (data, g_strdup (pkg));
}

static void
add_auto (GHashTable *fields, gpointer data)
{
  const char *pkg = g_hash_table_lookup (fields, "Package");
  if (pkg != NULL && g_strcmp0 (g_hash_table_lookup (fields, "Auto-Installed"), "1") == 0)
    g_hash_table_add (data, g_strdup (pkg));
}

/* The package database @rel of the sandbox “@id” could not be read as
 * @why: what a rebase would reinstall is unknown, so it stops here */
static void
set_db_error (GError **error, const char *id, const char *rel, const char *where, const char *why)
{
  g_set_error (error, GL_PKG_ERROR, GL_PKG_ERROR_INVALID,
               "Cannot rebase “%s”: its package database /%s (%s) %s, so glimpse cannot tell "
               "which packages to put back; nothing was changed. Look at it (“glimpse run %s -- "
               "ls -l /%s”) and repair it with the sandbox's package manager, or drop what was "
               "installed with “glimpse reset %s” (note what you installed first), then rebase again",
               id, rel, where, why, id, rel, id);
}

/* Whether @text is a dpkg status database: paragraphs of "Field: value"
 * lines (and continuation lines), each with a Package and a Status; else
 * *@why says what is wrong */
static gboolean
dpkg_status_valid (const char *text, gsize len, const char **why)
{
  g_auto(GStrv) lines = NULL;
  gboolean package = FALSE, status = FALSE;

  if (memchr (text, '\0', len) != NULL)
    return *why = "holds NUL bytes: it is not a text file", FALSE;
  lines = g_strsplit (text, "\n", -1);
  for (char **l = lines;; l++)
    {
      const char *colon;

      if (*l == NULL || **l == '\0')
        {
          if ((package || status) && !(package && status))
            return *why = "has a paragraph without a Package or a Status field (cut short?)", FALSE;
          package = status = FALSE;
          if (*l == NULL)
            break;
          continue;
        }
      if (**l == ' ' || **l == '\t')
        continue;   /* (a field's continuation line) */
      colon = strchr (*l, ':');
      if (colon == NULL || colon == *l)
        return *why = "has a line that is no “Field: value”", FALSE;
      package = package || g_str_has_prefix (*l, "Package:");
      status = status || g_str_has_prefix (*l, "Status:");
    }
  return TRUE;
}

#define UNREADABLE "cannot be read: a link on the way (not followed), not a regular file, " \
                   "unreadable or larger than 64 MiB"

/* Each package database below is read from the view over @roots: a
 * missing one is an empty set (*@absent), one that cannot be read or
 * parsed (a link, not a regular file, too large, malformed) NULL with an
 * error naming it (@where: which view), never an empty set: a rebase
 * would then put nothing back.  *@count: how many packages it lists. */

/* dpkg: the packages its status has installed */
static GHashTable *
installed_set (const char *id, const char * const *roots, gsize n_roots, const char *where,
               gboolean *absent, guint *count, GError **error)
{
  const char *rel = "var/lib/dpkg/status";
  g_autofree char *status = NULL;
  gsize len = 0;
  const char *why = NULL;
  GHashTable *set = NULL;

  switch (gl_view_read_file (roots, n_roots, rel, VIEW_FILE_MAX, &status, &len))
    {
    case GL_VIEW_ABSENT:
      *absent = TRUE;
      break;
    case GL_VIEW_UNKNOWN:
      set_db_error (error, id, rel, where, UNREADABLE);
      return NULL;
    case GL_VIEW_FILE:
      if (!dpkg_status_valid (status, len, &why))
        {
          set_db_error (error, id, rel, where, why);
          return NULL;
        }
      break;
    }
  set = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for_each_paragraph (status, add_installed, set);
  *count = g_hash_table_size (set);
  return set;
}

static int
compare_strings (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

/* apk: the dependencies of /etc/apk/world (as written, "name@tag>=1") */
static GHashTable *
apk_world (const char *id, const char * const *roots, gsize n_roots, const char *where,
           gboolean *absent, guint *count, GError **error)
{
  g_autofree char *text = NULL;
  g_auto(GStrv) words = NULL;
  GHashTable *set;

  switch (gl_view_read_file (roots, n_roots, "etc/apk/world", VIEW_FILE_MAX, &text, NULL))
    {
    case GL_VIEW_ABSENT:
      *absent = TRUE;
      break;
    case GL_VIEW_UNKNOWN:
      set_db_error (error, id, "etc/apk/world", where, UNREADABLE);
      return NULL;
    case GL_VIEW_FILE:
      break;
    }
  words = g_strsplit_set (text ? text : "", " \t\n", -1);
  set = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (char **w = words; *w; w++)
    if (**w)
      g_hash_table_add (set, g_strdup (*w));
  *count = g_hash_table_size (set);
  return set;
}

/* pacman: the packages of the local database (/var/lib/pacman/local/
 * NAME-VERSION-RELEASE/desc), with @explicit_only those not installed as
 * a dependency (%REASON% 1), as pacman -Qqe lists them */
static GHashTable *
pacman_local (const char *id, const char * const *roots, gsize n_roots, gboolean explicit_only,
              const char *where, gboolean *absent, guint *count, GError **error)
{
  g_autoptr(GHashTable) entries = gl_view_dir_names (roots, n_roots, "var/lib/pacman/local");
  GHashTable *set;
  GHashTableIter it;
  gpointer key;

  if (entries == NULL)
    {
      set_db_error (error, id, "var/lib/pacman/local", where,
                    "cannot be read: a link on the way (not followed), or not a directory");
      return NULL;
    }
  *count = g_hash_table_size (entries);
  *absent = *count == 0;
  set = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_hash_table_iter_init (&it, entries);
  while (g_hash_table_iter_next (&it, &key, NULL))
    {
      g_autofree char *rel = g_strconcat ("var/lib/pacman/local/", key, "/desc", NULL);
      g_autofree char *desc = view_file (roots, n_roots, rel);
      g_auto(GStrv) lines = g_strsplit (desc ? desc : "", "\n", -1);
      const char *name = NULL;
      gboolean dependency = FALSE;
      for (guint i = 0; lines[i] && lines[i + 1]; i++)
        if (g_str_equal (lines[i], "%NAME%"))
          name = lines[i + 1];
        else if (g_str_equal (lines[i], "%REASON%"))
          dependency = g_str_equal (lines[i + 1], "1");
      if (name != NULL && *name && !(explicit_only && dependency))
        g_hash_table_add (set, g_strdup (name));
    }
  return set;
}

/* (where the databases are read, for the errors) */
#define NOW "as the sandbox sees it"
#define BEFORE "of its base"

GStrv
gl_rebase_kept_packages (GlSandbox *sandbox, GError **error)
{
  g_autofree char *tree = gl_pkg_current_tree (sandbox);
  g_autofree char *base = gl_pkg_base_tree (sandbox);
  g_autofree char *rootfs = gl_sandbox_get_rootfs (sandbox);
  const char *now_roots[] = { tree, base, rootfs };
  const char *base_roots[] = { base, rootfs };
  g_autoptr(GHashTable) now = NULL, before = NULL, autos = NULL;
  g_autofree char *ext = NULL;
  g_autoptr(GPtrArray) kept = g_ptr_array_new_with_free_func (g_free);
  GHashTableIter iter;
  gpointer key;
  const char *db = NULL;
  gboolean now_absent = FALSE, before_absent = FALSE;
  guint now_count = 0, before_count = 0;

  if (tree == NULL)
    return g_new0 (char *, 1);   /* no system layer: nothing was installed */
  if (g_strcmp0 (sandbox->family, "apk") == 0)
    {
      /* what the world asks for that the base's did not */
      db = "etc/apk/world";
      if ((now = apk_world (sandbox->id, now_roots, G_N_ELEMENTS (now_roots), NOW, &now_absent, &now_count, error)) == NULL
          || (before = apk_world (sandbox->id, base_roots, G_N_ELEMENTS (base_roots), BEFORE, &before_absent,
                             &before_count, error)) == NULL)
        return NULL;
      autos = g_hash_table_new (g_str_hash, g_str_equal);
    }
  else if (g_strcmp0 (sandbox->family, "pacman") == 0)
    {
      /* installed explicitly (pacman -Qqe) and not in the base */
      db = "var/lib/pacman/local";
      if ((now = pacman_local (sandbox->id, now_roots, G_N_ELEMENTS (now_roots), TRUE, NOW, &now_absent, &now_count, error)) == NULL
          || (before = pacman_local (sandbox->id, base_roots, G_N_ELEMENTS (base_roots), FALSE, BEFORE, &before_absent,
                             &before_count, error)) == NULL)
        return NULL;
      autos = g_hash_table_new (g_str_hash, g_str_equal);
    }
  else if (g_strcmp0 (sandbox->family, "apt") == 0)
    {
      db = "var/lib/dpkg/status";
      if ((now = installed_set (sandbox->id, now_roots, G_N_ELEMENTS (now_roots), NOW, &now_absent, &now_count, error)) == NULL
          || (before = installed_set (sandbox->id, base_roots, G_N_ELEMENTS (base_roots), BEFORE, &before_absent,
                             &before_count, error)) == NULL)
        return NULL;
      autos = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
      ext = view_file (now_roots, G_N_ELEMENTS (now_roots), "var/lib/apt/extended_states");
      for_each_paragraph (ext, add_auto, autos);
    }
  else
    {
      /* (dnf keeps which packages were asked for in its history database,
       * which glimpse cannot read from the files) */
      g_set_error (error, GL_PKG_ERROR, GL_PKG_ERROR_UNSUPPORTED,
                   "Sandbox “%s” has packages installed, and glimpse can tell which to keep "
                   "only for apt, pacman and apk sandboxes, not for “%s”; “glimpse reset %s” first "
                   "drops them (note what you installed), then rebase", sandbox->id,
                   sandbox->family ? sandbox->family : "(none)", sandbox->id);
      return NULL;
    }
  /* (a database the base has and the view lost, or that lists nothing
   * where the base's lists packages: removed or emptied, not read right) */
  if ((now_absent && !before_absent) || (now_count == 0 && before_count > 0))
    {
      set_db_error (error, sandbox->id, db, NOW,
                    now_absent ? "is missing, though its base has one"
                               : "lists no package, though its base's lists some");
      return NULL;
    }
  g_hash_table_iter_init (&iter, now);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    if (!g_hash_table_contains (before, key) && !g_hash_table_contains (autos, key))
      g_ptr_array_add (kept, g_strdup (key));
  g_ptr_array_sort (kept, compare_strings);
  g_ptr_array_add (kept, NULL);
  return (GStrv) g_ptr_array_free (g_steal_pointer (&kept), FALSE);
}

gboolean
gl_rebase_copy_repositories (GlSandbox *sandbox, const char *dir, guint *n_copied, GError **error)
{
  g_autofree char *tree = gl_pkg_current_tree (sandbox);
  g_autofree char *base = gl_pkg_base_tree (sandbox);
  const char *roots[] = { tree, base };

  *n_copied = 0;
  if (!gl_mkdir (dir, 0755, error))
    return FALSE;
  for (guint i = 0; sandbox->repositories && sandbox->repositories[i]; i++)
    {
      const char *name = sandbox->repositories[i];
      const char *kinds[][2] = { { "etc/apt/sources.list.d/glimpse-", ".sources" },
                                 { "etc/apt/keyrings/glimpse-", ".asc" },
                                 { "etc/apt/keyrings/glimpse-", ".gpg" } };
      for (gsize k = 0; k < G_N_ELEMENTS (kinds); k++)
        {
          g_autofree char *rel = g_strconcat (kinds[k][0], name, kinds[k][1], NULL);
          gsize len = 0;
          /* (keys may be binary: read by length) */
          g_autofree char *text = view_file_len (roots, G_N_ELEMENTS (roots), rel, 1024 * 1024, &len);
          g_autofree char *path = NULL;
          g_autofree char *file = g_path_get_basename (rel);
          if (text == NULL)
            continue;
          path = g_build_filename (dir, file, NULL);
          if (!g_file_set_contents_full (path, text, (gssize) len, G_FILE_SET_CONTENTS_CONSISTENT, 0644, error))
            return FALSE;
          if (k == 0)
            ++*n_copied;
        }
    }
  return TRUE;
}

typedef struct {
  GlPkgProgress progress;
  gpointer user_data;
  GPtrArray *failed;
} Watch;

static void
watch_line (const char *line, gpointer data)
{
  Watch *w = data;
  if (g_str_has_prefix (line, FAILED_PREFIX))
    g_ptr_array_add (w->failed, g_strdup (line + strlen (FAILED_PREFIX)));
  if (w->progress)
    w->progress (line, w->user_data);
}

static void
say (GlPkgProgress progress, gpointer user_data, const char *format, ...) G_GNUC_PRINTF (3, 4);

static void
say (GlPkgProgress progress, gpointer user_data, const char *format, ...)
{
  va_list ap;
  g_autofree char *line = NULL;
  va_start (ap, format);
  line = g_strdup_vprintf (format, ap);
  va_end (ap);
  if (progress)
    progress (line, user_data);
}

static void
status_line (const char *message, gpointer data)
{
  Watch *w = data;
  if (w->progress)
    w->progress (message, w->user_data);
}

/* Inside the namespace, over the new base: the repositories back in
 * place, then the packages, all at once or, when that fails, one by one,
 * naming each that cannot be installed.  $1: the install command; the
 * packages follow.  Two stages (GL_PKG_NETWORK_FETCH_FIRST): the fetch
 * stage downloads with the network, the apply stage installs without. */
static const char rebase_script[] =
  "set -e\n"
  "APT_CONFIG=/run/glimpse-input/apt.conf; export APT_CONFIG\n"
  "install=$1; shift\n"
  "if [ \"$GLIMPSE_STAGE\" = fetch ]; then\n"
  "  mkdir -p /etc/apt/keyrings /etc/apt/sources.list.d\n"
  "  for f in /run/glimpse-input/repos/*; do\n"
  "    [ -e \"$f\" ] || continue   # (no repository added: the pattern itself)\n"
  "    case ${f##*/} in\n"
  "      *.sources) cp -- \"$f\" /etc/apt/sources.list.d/ ;;\n"
  "      glimpse-*) cp -- \"$f\" /etc/apt/keyrings/ ;;\n"
  "    esac\n"
  "  done\n"
  "  [ $# -gt 0 ] || exit 0\n"
  "  apt-get -c " GL_PKG_APT_LAST_CONF " update || echo 'glimpse-rebase: some package indexes could not be fetched'\n"
  "  $install --download-only \"$@\" || for p in \"$@\"; do $install --download-only \"$p\" || :; done\n"
  "  exit 0\n"
  "fi\n"
  "[ $# -gt 0 ] || exit 0\n"
  "if ! $install \"$@\"; then\n"
  "  echo 'glimpse-rebase: installing all at once failed; one by one:'\n"
  "  for p in \"$@\"; do $install \"$p\" || echo \"" FAILED_PREFIX "$p\"; done\n"
  "fi\n";

gboolean
gl_rebase_sandbox (GlSandbox *sandbox, const GlCreateOptions *options, GlPkgProgress progress,
                   gpointer user_data, GStrv *failed, GCancellable *cancellable, GError **error)
{
  g_auto(GStrv) path = gl_paths_profile_dirs ();
  g_autoptr(GlProfile) profile = NULL;
  g_autoptr(GlPkgOp) op = NULL;
  g_auto(GStrv) kept = NULL;
  g_autofree char *base = NULL, *repos = NULL, *release = NULL, *follows = NULL, *install = NULL;
  g_autofree char *list = NULL;
  g_autofree char *what = NULL;
  g_autoptr(GPtrArray) args = g_ptr_array_new ();
  g_autoptr(GPtrArray) failures = g_ptr_array_new_with_free_func (g_free);
  GlCreateOptions build = *options;
  Watch watch = { progress, user_data, failures };
  guint n_repos = 0;

  if (g_strcmp0 (sandbox->base, GL_BASE_HOST) == 0)
    {
      g_set_error (error, GL_PKG_ERROR, GL_PKG_ERROR_UNSUPPORTED,
                   "Sandbox “%s” runs on the host's own system, which it always follows; there is "
                   "no base of its own to rebase", sandbox->id);
      return FALSE;
    }
  if (sandbox->profile == NULL)
    {
      g_set_error (error, GL_PKG_ERROR, GL_PKG_ERROR_UNSUPPORTED,
                   "Sandbox “%s” names no profile in its sandbox.conf, so its base cannot be built "
                   "again", sandbox->id);
      return FALSE;
    }
  profile = gl_profile_find ((const char * const *) path, sandbox->profile, error);
  if (profile == NULL)
    {
      g_prefix_error (error, "Cannot rebase “%s”: ", sandbox->id);
      return FALSE;
    }
  if (profile->base_type == GL_PROFILE_BASE_HOST)
    {
      g_set_error (error, GL_PKG_ERROR, GL_PKG_ERROR_UNSUPPORTED,
                   "Profile “%s” of sandbox “%s” now uses the host as its base; a sandbox with a "
                   "tree of its own cannot move onto it", profile->name, sandbox->id);
      return FALSE;
    }

  op = gl_pkg_op_begin (sandbox, progress, user_data, error);
  if (op == NULL)
    return FALSE;
  /* what to keep, read before anything is built */
  kept = gl_rebase_kept_packages (sandbox, error);
  if (kept == NULL)
    return FALSE;
  if (g_strcmp0 (sandbox->family, "apt") != 0 && sandbox->repositories && sandbox->repositories[0])
    {
      g_set_error (error, GL_PKG_ERROR, GL_PKG_ERROR_UNSUPPORTED,
                   "A rebase puts back the repositories glimpse added only in apt sandboxes so far; "
                   "“%s” (%s) has %s: remove them first (“glimpse remove-repo %s NAME”), then add "
                   "them again after the rebase", sandbox->id, sandbox->family, sandbox->repositories[0],
                   sandbox->id);
      return FALSE;
    }
  repos = g_build_filename (gl_pkg_op_get_input_dir (op), "repos", NULL);
  if (!gl_rebase_copy_repositories (sandbox, repos, &n_repos, error))
    return FALSE;
  list = g_strjoinv (" ", kept);
  say (progress, user_data, "Keeping %u added repositories and %u packages%s%s", n_repos,
       g_strv_length (kept), kept[0] ? ": " : "", list);

  /* the new base, in the scratch (removed with it on failure, and by the
   * next operation after kill -9) */
  base = g_build_filename (gl_pkg_op_get_dir (op), "base", NULL);
  build.id = sandbox->id;
  build.image = NULL;
  build.sha256 = NULL;
  build.signature = NULL;
  if (build.status == NULL)
    {
      build.status = status_line;
      build.status_data = &watch;
    }
  if (!gl_create_build_base (profile, &build, sandbox->path, sandbox->id, base, &release, cancellable, error))
    {
      g_prefix_error (error, "Cannot build the new base of “%s” (it is unchanged): ", sandbox->id);
      return FALSE;
    }

  if (!gl_pkg_write_apt_conf (gl_pkg_op_get_input_dir (op), error))
    return FALSE;
  /* the new base's release, recorded with it: the rename of `current`
   * switches base and record at once (sandbox.conf follows after) */
  if (release == NULL)
    release = g_strdup (profile->release);
  follows = gl_profile_follows (profile, release);
  gl_pkg_op_set_new_base (op, base, release, follows);
  install = g_strdup (profile->cmd_install ? profile->cmd_install : "apt-get install -y");
  if (g_strcmp0 (sandbox->family, "apt") == 0)
    {
      g_autofree char *plain = g_steal_pointer (&install);

      install = gl_pkg_apt_command (plain, error);
      if (install == NULL)
        return FALSE;
    }
  g_ptr_array_add (args, install);
  for (guint i = 0; kept[i]; i++)
    g_ptr_array_add (args, kept[i]);
  g_ptr_array_add (args, NULL);
  what = g_strdup_printf ("rebasing “%s”", sandbox->id);
  /* the package manager's lines, watched for the packages that failed */
  gl_pkg_op_set_progress (op, watch_line, &watch);
  /* downloads with the network, dpkg and maintainer scripts without */
  gl_pkg_op_set_network (op, GL_PKG_NETWORK_FETCH_FIRST);
  if (g_strcmp0 (sandbox->family, "apt") != 0)
    {
      /* the family's own two stages (gl-pkg), all at once, else one by one */
      g_autofree char *stage = gl_pkg_staged_script (sandbox->family, NULL, args->pdata[0], TRUE);
      g_autofree char *script = g_strdup_printf (
        "stage () { %s; }\n"
        "shift\n"
        "[ $# -gt 0 ] || exit 0\n"
        "if [ \"$GLIMPSE_STAGE\" = fetch ]; then\n"
        "  stage \"$@\" || for p in \"$@\"; do stage \"$p\" || :; done\n"
        "  exit 0\n"
        "fi\n"
        "if ! stage \"$@\"; then\n"
        "  echo 'glimpse-rebase: installing all at once failed; one by one:'\n"
        "  for p in \"$@\"; do stage \"$p\" || echo \"" FAILED_PREFIX "$p\"; done\n"
        "fi\n%s", stage, gl_pkg_staged_cleanup (sandbox->family));
      if (!gl_pkg_op_run (op, what, script, (const char * const *) args->pdata, cancellable, error))
        return FALSE;
    }
  else if (!gl_pkg_op_run (op, what, rebase_script, (const char * const *) args->pdata, cancellable, error))
    return FALSE;
  if (!gl_pkg_op_commit (op, cancellable, error))
    return FALSE;
  gl_pkg_crash_point ("rebase-committed");
  /* the old base goes now if no app uses it, else after the last one;
   * the copy reset would have returned to before (hard links into the
   * generations the rebase replaced) goes with them (gl_pkg_op_reclaim) */
  gl_pkg_op_set_progress (op, progress, user_data);
  {
    g_autofree char *system = g_build_filename (sandbox->path, "system", NULL);
    g_autoptr(GError) mark_error = NULL;
    /* (unmarked, the old base merely stays, as before) */
    if (!gl_reclaim_mark_rebased (system, gl_pkg_current_generation (sandbox->path), &mark_error))
      say (progress, user_data, "The old base of “%s” stays: %s", sandbox->id, mark_error->message);
    else
      gl_pkg_op_reclaim (op);
  }

  g_clear_pointer (&sandbox->release, g_free);
  sandbox->release = g_steal_pointer (&release);
  g_clear_pointer (&sandbox->follows, g_free);
  sandbox->follows = g_steal_pointer (&follows);
  g_clear_pointer (&sandbox->updated, g_date_time_unref);
  sandbox->updated = g_date_time_new_now_utc ();
  if (!gl_sandbox_save (sandbox, error))
    return FALSE;
  g_ptr_array_add (failures, NULL);
  if (failed != NULL)
    *failed = (GStrv) g_ptr_array_free (g_steal_pointer (&failures), FALSE);
  return TRUE;
}
