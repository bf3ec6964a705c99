/* glimpse-pkg-cmds.c: install, uninstall, update, repos, add-repo,
 * remove-repo, reset, rebase — option parsing and printing; the work is in gl-pkg
 * and gl-repo.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdio.h>
#include <unistd.h>

#include "gl-pkg.h"
#include "gl-printable.h"
#include "gl-paths.h"
#include "gl-rebase.h"
#include "gl-repo.h"
#include "gl-store.h"
#include "glimpse-cli.h"
#include "glimpse-pkg-cmds.h"

static void
print_progress (const char *line, gpointer user_data)
{
  /* On a terminal and in logs alike: one line per step of the package
   * manager ("Unpacking foo", "Setting up foo"), as it happens. */
  g_printerr ("%s\n", line);
}

/* Whether the operation that just succeeded changed @s's system: it made a
 * new generation (one that changed nothing makes none, and gl-pkg has said
 * "Nothing changed in “ID”"), so the last line does not claim otherwise */
static gboolean
changed_since (GlSandbox *s, guint generation)
{
  return gl_pkg_current_generation (s->path) != generation;
}

static int
pkg_fail (const GError *error)
{
  if (error->domain == GL_PKG_ERROR)
    {
      g_printerr ("glimpse: %s\n", error->message);
      switch (error->code)
        {
        case GL_PKG_ERROR_INVALID:
          return GL_EXIT_INVALID;
        case GL_PKG_ERROR_UNSUPPORTED:
          return GL_EXIT_USAGE;
        default:
          return GL_EXIT_FAILED;
        }
    }
  return gl_cli_fail (error);
}

/* Parses options, loads the sandbox of argv[1], checks root. */
static GlSandbox *
prepare (const char *command, const char *params, const char *summary, GOptionEntry *entries,
         int min_args, int *argc, char ***argv, int *status)
{
  g_autoptr(GOptionContext) context = gl_cli_context_new (params, summary);
  g_autoptr(GError) error = NULL;
  GlSandbox *s;

  if (entries)
    g_option_context_add_main_entries (context, entries, NULL);
  if (!gl_cli_parse (context, argc, argv, status))
    return NULL;
  if (*argc < 1 + min_args)
    {
      *status = gl_cli_usage (command, "expected %s", params);
      return NULL;
    }
  s = gl_sandbox_load (gl_paths_store_dir (), (*argv)[1], &error);
  if (s == NULL)
    {
      *status = gl_cli_fail (error);
      return NULL;
    }
  if (g_strcmp0 (command, "repos") != 0 && !gl_cli_require_root ("Changing a sandbox's packages"))
    {
      gl_sandbox_free (s);
      *status = GL_EXIT_PERMISSION;
      return NULL;
    }
  return s;
}

int
gl_cmd_install (int argc, char **argv)
{
  int status = GL_EXIT_OK;
  g_autoptr(GError) error = NULL;
  g_autoptr(GlSandbox) s = prepare ("install", "ID PACKAGE…",
                                    "Install packages into a sandbox (needs root). The package manager "
                                    "runs as root of a user namespace, never as the host's root.",
                                    NULL, 2, &argc, &argv, &status);
  guint generation;

  if (s == NULL)
    return status;
  generation = gl_pkg_current_generation (s->path);
  if (!gl_pkg_install (s, (const char * const *) argv + 2, print_progress, NULL, NULL, &error))
    return pkg_fail (error);
  if (!changed_since (s, generation))
    {
      g_printerr ("“%s” has %s already.\n", s->id, argc > 3 ? "these packages" : "this package");
      return GL_EXIT_OK;
    }
  g_printerr ("Installed into “%s”. “glimpse apps %s” lists its applications; “glimpse export %s” "
              "puts them into your menu.\n", s->id, s->id, s->id);
  return GL_EXIT_OK;
}

int
gl_cmd_uninstall (int argc, char **argv)
{
  int status = GL_EXIT_OK;
  g_autoptr(GError) error = NULL;
  g_autoptr(GlSandbox) s = prepare ("uninstall", "ID PACKAGE…", "Remove packages from a sandbox (needs root).",
                                    NULL, 2, &argc, &argv, &status);
  guint generation;

  if (s == NULL)
    return status;
  generation = gl_pkg_current_generation (s->path);
  if (!gl_pkg_uninstall (s, (const char * const *) argv + 2, print_progress, NULL, NULL, &error))
    return pkg_fail (error);
  if (!changed_since (s, generation))
    {
      g_printerr ("“%s” has none of %s.\n", s->id, argc > 3 ? "these packages" : "this package");
      return GL_EXIT_OK;
    }
  g_printerr ("Removed from “%s”.\n", s->id);
  return GL_EXIT_OK;
}

int
gl_cmd_update (int argc, char **argv)
{
  int status = GL_EXIT_OK;
  g_autoptr(GError) error = NULL;
  g_autoptr(GlSandbox) s = prepare ("update", "ID", "Refresh a sandbox's package indexes and upgrade "
                                    "everything (needs root).", NULL, 1, &argc, &argv, &status);
  guint generation;

  if (s == NULL)
    return status;
  generation = gl_pkg_current_generation (s->path);
  if (!gl_pkg_update (s, print_progress, NULL, NULL, &error))
    return pkg_fail (error);
  if (!changed_since (s, generation))
    g_printerr ("“%s” is up to date.\n", s->id);
  else
    g_printerr ("Updated “%s”.\n", s->id);
  return GL_EXIT_OK;
}

int
gl_cmd_repos (int argc, char **argv)
{
  int status = GL_EXIT_OK;
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) list = NULL;
  g_autoptr(GlSandbox) s = prepare ("repos", "ID", "List a sandbox's package repositories.", NULL, 1,
                                    &argc, &argv, &status);
  if (s == NULL)
    return status;
  list = gl_repo_list (s, &error);
  if (list == NULL)
    return pkg_fail (error);
  for (guint i = 0; i < list->len; i++)
    {
      GlRepoEntry *e = list->pdata[i];
      /* (both read from the sandbox's files, which its packages may write) */
      g_autofree char *name = gl_printable (e->name);
      g_autofree char *summary = gl_printable (e->summary);
      g_print ("%-24s %s%s\n", name, summary, e->added ? "  (added)" : "");
    }
  return GL_EXIT_OK;
}

int
gl_cmd_add_repo (int argc, char **argv)
{
  char *key = NULL, *name = NULL;
  GOptionEntry entries[] = {
    { "key", 0, 0, G_OPTION_ARG_STRING, &key, "The repository's signing key (file or http(s) URL)", "FILE|URL" },
    { "name", 0, 0, G_OPTION_ARG_STRING, &name, "Name for the repository (default: from its address)", "NAME" },
    { NULL }
  };
  int status = GL_EXIT_OK;
  g_autoptr(GError) error = NULL;
  g_autoptr(GlSandbox) s = prepare ("add-repo", "ID SPEC",
                                    "Add a package repository to a sandbox (needs root). SPEC: apt, a "
                                    "“deb URI SUITE COMPONENT…” line, deb822 text or a file holding "
                                    "either, or ppa:OWNER/NAME; dnf, a .repo file, its address or "
                                    "text; pacman, a [NAME] section with Server = lines, or a "
                                    "server's address; apk, a repository's address. The repository's "
                                    "index is fetched and verified with its key before anything is "
                                    "kept.",
                                    entries, 2, &argc, &argv, &status);
  if (s != NULL)
    {
      guint generation = gl_pkg_current_generation (s->path);
      if (argc > 3)
        status = gl_cli_usage ("add-repo", "give the repository as one argument (quote a “deb …” line)");
      else if (!gl_repo_add (s, argv[2], key, name, print_progress, NULL, NULL, &error))
        status = pkg_fail (error);
      else if (!changed_since (s, generation))
        g_printerr ("“%s” has this repository already, as it is.\n", s->id);
      else
        g_printerr ("Added the repository to “%s”; “glimpse install %s PACKAGE” installs from it.\n",
                    s->id, s->id);
    }
  g_free (key);
  g_free (name);
  return status;
}

int
gl_cmd_remove_repo (int argc, char **argv)
{
  int status = GL_EXIT_OK;
  g_autoptr(GError) error = NULL;
  g_autoptr(GlSandbox) s = prepare ("remove-repo", "ID NAME",
                                    "Remove a repository (a name from “glimpse repos ID”) from a "
                                    "sandbox (needs root). Installed packages stay.",
                                    NULL, 2, &argc, &argv, &status);
  if (s == NULL)
    return status;
  if (!gl_repo_remove (s, argv[2], print_progress, NULL, NULL, &error))
    return pkg_fail (error);
  g_printerr ("Removed the repository %s from “%s”.\n", argv[2], s->id);
  return GL_EXIT_OK;
}

int
gl_cmd_reset (int argc, char **argv)
{
  gboolean yes = FALSE, dropped = TRUE;
  GOptionEntry entries[] = {
    { "yes", 'y', 0, G_OPTION_ARG_NONE, &yes, "Do not ask", NULL },
    { NULL }
  };
  int status = GL_EXIT_OK;
  g_autoptr(GError) error = NULL;
  g_autoptr(GlSandbox) s = prepare ("reset", "ID [--yes]",
                                    "Drop every package change made to a sandbox since it was created, "
                                    "and the repositories added with add-repo (needs root). "
                                    "Users' own files stay.",
                                    entries, 1, &argc, &argv, &status);
  if (s == NULL)
    return status;
  if (!yes)
    {
      char answer[16] = "";
      if (!isatty (STDIN_FILENO))
        return gl_cli_usage ("reset", "this drops every package installed into “%s” and the repositories "
                             "added with add-repo; add --yes", s->id);
      g_printerr ("Drop every package change made to “%s”, and the repositories added with add-repo? [y/N] ", s->id);
      if (fgets (answer, sizeof answer, stdin) == NULL || (answer[0] != 'y' && answer[0] != 'Y'))
        {
          g_printerr ("Nothing changed.\n");
          return GL_EXIT_CANCELLED;
        }
    }
  if (!gl_pkg_reset (s, print_progress, NULL, &dropped, &error))
    return pkg_fail (error);
  if (!dropped)
    g_printerr ("“%s” had no package changes to drop: it is at its base.\n", s->id);
  else
    g_printerr ("“%s” is back to its base; running apps keep what they had until they exit.\n", s->id);
  return GL_EXIT_OK;
}

static void
print_line (const char *line, gpointer user_data)
{
  g_printerr ("%s\n", line);
}

int
gl_cmd_rebase (int argc, char **argv)
{
  int status = GL_EXIT_OK;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) failed = NULL;
  GlCreateOptions options = { .status = print_line, .output = print_line };
  g_autoptr(GlSandbox) s = prepare ("rebase", "ID",
                                    "Move a sandbox onto its profile's current base (needs root): the "
                                    "base is built again (downloaded and verified, or bootstrapped), "
                                    "the repositories glimpse added and the packages installed by hand "
                                    "are put back on it, and the result becomes the sandbox's next "
                                    "system generation. Users' own files stay; running apps keep the "
                                    "old one until they exit. Packages that cannot be installed on the "
                                    "new base are named.",
                                    NULL, 1, &argc, &argv, &status);
  if (s == NULL)
    return status;
  if (argc > 2)
    return gl_cli_usage ("rebase", "give one sandbox id");
  if (!gl_rebase_sandbox (s, &options, print_progress, NULL, &failed, NULL, &error))
    return pkg_fail (error);
  if (failed != NULL && failed[0] != NULL)
    {
      g_autofree char *list = g_strjoinv (" ", failed);
      g_printerr ("Rebased “%s” onto %s, but these packages could not be installed on the new base: "
                  "%s. Try “glimpse install %s PACKAGE” later, or “glimpse update %s”.\n",
                  s->id, s->release ? s->release : "its profile's current base", list, s->id, s->id);
      return GL_EXIT_FAILED;
    }
  g_printerr ("Rebased “%s” onto %s; running apps keep the old base until they exit.\n", s->id,
              s->release ? s->release : "its profile's current base");
  return GL_EXIT_OK;
}
