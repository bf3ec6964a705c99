/* glimpse-export.c: glimpse export, unexport, apps, add-launcher,
 * remove-launcher, open
 *
 * Which applications of a sandbox are exported:
 *   the default: those of the base in sandbox.conf Launchers= (from the
 *   profile), or every visible one when it is empty (for a Base=host
 *   sandbox: those of its system layer); with a list, also every visible
 *   one the sandbox's own packages installed (its system layer) that the
 *   base does not ship - an upgrade of one it ships follows the list;
 *   plus the admin's AddedLaunchers=, minus the admin's HiddenLaunchers=
 *   (sandbox.conf);
 *   plus the user's Added=, minus the user's Removed= in
 *   $XDG_CONFIG_HOME/glimpse/launchers/ID.conf.
 * add-launcher / remove-launcher run as root change the admin's sets in
 * sandbox.conf (for every user); run as a user they change that user's file
 * only.  Either way adding takes the app out of the other set, and back.
 * unexport also sets Disabled=true there, so a later "glimpse export" or the
 * session agent leaves the sandbox out until "glimpse export ID".
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include <unistd.h>

#include "gl-export-store.h"
#include "gl-open.h"
#include "gl-paths.h"
#include "gl-pkg.h"
#include "gl-printable.h"
#include "gl-store.h"
#include "glimpse-cli.h"
#include "glimpse-export.h"

static void
print_warnings (GPtrArray *warnings)
{
  for (guint i = 0; i < warnings->len; i++)
    g_printerr ("glimpse: warning: %s\n", ((GError *) warnings->pdata[i])->message);
}

static int
export_sandboxes (GlExportContext *ctx, GPtrArray *sandboxes, gboolean complete, gboolean quiet)
{
  g_autoptr(GPtrArray) sources = g_ptr_array_new_with_free_func ((GDestroyNotify) gl_export_source_free);
  g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func ((GDestroyNotify) g_error_free);
  g_autoptr(GError) error = NULL;
  GlExportStats stats = { 0, };

  for (guint i = 0; i < sandboxes->len; i++)
    {
      GlSandbox *sb = sandboxes->pdata[i];
      GlExportSource *source = gl_export_store_source_new (sb, gl_export_store_host_root (), ctx->config_home, &error);

      if (source == NULL)
        return gl_cli_fail (error);
      g_ptr_array_add (sources, source);
    }
  if (!gl_export_sync (ctx, sources, complete, &stats, warnings, &error))
    return gl_cli_fail (error);
  print_warnings (warnings);
  if (!quiet)
    g_print ("Exported %u sandbox%s: %u file%s written, %u unchanged, %u removed%s\n",
             sources->len, sources->len == 1 ? "" : "es",
             stats.written, stats.written == 1 ? "" : "s", stats.unchanged, stats.removed,
             stats.skipped > 0 ? " (some skipped, see the warnings)" : "");
  return GL_EXIT_OK;
}

int
gl_cmd_export (int argc, char **argv)
{
  gboolean quiet = FALSE;
  GOptionEntry entries[] = {
    { "quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, "Print only warnings and errors", NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) context = gl_cli_context_new ("[ID…]",
    "Put the applications of the sandboxes (all by default) into the Applications menu.");
  g_autoptr(GlExportContext) ctx = gl_export_store_context_new ();
  g_autoptr(GPtrArray) sandboxes = NULL;
  g_autoptr(GError) error = NULL;
  int status = GL_EXIT_OK;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!gl_cli_parse (context, &argc, &argv, &status))
    return status;

  if (argc < 2)
    {
      g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func ((GDestroyNotify) g_error_free);
      GlExportStats stats = { 0, };

      if (!gl_export_store_sync_all (ctx, gl_paths_store_dir (), gl_export_store_host_root (), &stats, warnings, &error))
        return gl_cli_fail (error);
      print_warnings (warnings);
      if (!quiet)
        g_print ("Exported: %u file%s written, %u unchanged, %u removed%s\n",
               stats.written, stats.written == 1 ? "" : "s", stats.unchanged, stats.removed,
               stats.skipped > 0 ? " (some skipped, see the warnings)" : "");
      return GL_EXIT_OK;
    }

  sandboxes = g_ptr_array_new_with_free_func ((GDestroyNotify) gl_sandbox_free);
  for (int i = 1; i < argc; i++)
    {
      GlSandbox *sb = gl_sandbox_load (gl_paths_store_dir (), argv[i], &error);

      if (sb == NULL)
        return gl_cli_fail (error);
      g_ptr_array_add (sandboxes, sb);
      if (!gl_export_user_set_disabled (ctx->config_home, sb->id, FALSE, &error))
        return gl_cli_fail (error);
    }
  return export_sandboxes (ctx, sandboxes, FALSE, quiet);
}

int
gl_cmd_unexport (int argc, char **argv)
{
  g_autoptr(GOptionContext) context = gl_cli_context_new ("ID…",
    "Take the applications of sandboxes out of the menus and file managers.");
  g_autoptr(GlExportContext) ctx = gl_export_store_context_new ();
  g_autoptr(GError) error = NULL;
  int status = GL_EXIT_OK;

  if (!gl_cli_parse (context, &argc, &argv, &status))
    return status;
  if (argc < 2)
    return gl_cli_usage ("unexport", "give the sandbox ID");
  for (int i = 1; i < argc; i++)
    {
      /* a sandbox that is gone from the store can still be unexported */
      if (!gl_sandbox_id_validate (argv[i], &error) ||
          !gl_export_unexport (ctx, argv[i], &error) ||
          !gl_export_user_set_disabled (ctx->config_home, argv[i], TRUE, &error))
        return gl_cli_fail (error);
    }
  return GL_EXIT_OK;
}

static GlExportSource *
load_source (const char *id, GlSandbox **sandbox_out, GError **error)
{
  g_autoptr(GlSandbox) sb = gl_sandbox_load (gl_paths_store_dir (), id, error);
  GlExportSource *source;

  if (sb == NULL)
    return NULL;
  source = gl_export_store_source_new (sb, gl_export_store_host_root (), g_get_user_config_dir (), error);
  if (source != NULL && sandbox_out != NULL)
    *sandbox_out = g_steal_pointer (&sb);
  return source;
}

int
gl_cmd_apps (int argc, char **argv)
{
  g_autoptr(GOptionContext) context = gl_cli_context_new ("ID",
    "List the applications of a sandbox; * marks those in the menu.");
  g_autoptr(GlExportSource) source = NULL;
  g_autoptr(GPtrArray) apps = NULL;
  g_autoptr(GError) error = NULL;
  int status = GL_EXIT_OK;

  if (!gl_cli_parse (context, &argc, &argv, &status))
    return status;
  if (argc != 2)
    return gl_cli_usage ("apps", "give one sandbox ID");
  source = load_source (argv[1], NULL, &error);
  if (source == NULL || (apps = gl_export_source_list_apps (source, &error)) == NULL)
    return gl_cli_fail (error);

  if (apps->len == 0)
    {
      if (source->exclude_apps_dir != NULL)
        g_printerr ("“%s” has no applications of its own: a sandbox of the host lists "
                    "only those installed into it, not the host's.\n", argv[1]);
      else
        g_printerr ("“%s” has no applications: no desktop entries in its "
                    "share/applications directories.\n", argv[1]);
      return GL_EXIT_OK;
    }
  if (isatty (STDOUT_FILENO))
    g_printerr ("* = chosen for the menu (“glimpse export” puts them there)\n");
  for (guint i = 0; i < apps->len; i++)
    {
      GlApp *app = apps->pdata[i];
      /* (why one is left out before what it has in common with the host) */
      const char *note = !app->runnable ? " (cannot be exported)"
                       : !app->visible ? " (hidden)"
                       : app->on_host ? " (the host has it too)" : "";
      /* (from the sandbox's desktop entries, which its packages write) */
      g_autofree char *id = gl_printable (app->desktop_id);
      g_autofree char *name = gl_printable (app->name != NULL ? app->name : "");

      g_print ("%s %s\t%s%s\n", app->exported ? "*" : " ", id, name, note);
    }
  return GL_EXIT_OK;
}

static GStrv
strv_with (GStrv v, const char *s, gboolean add)
{
  g_autoptr(GStrvBuilder) b = g_strv_builder_new ();

  for (gsize i = 0; v != NULL && v[i] != NULL; i++)
    if (strcmp (v[i], s) != 0)
      g_strv_builder_add (b, v[i]);
  if (add)
    g_strv_builder_add (b, s);
  return g_strv_builder_end (b);
}

/* @id into *@added and out of *@removed, or the other way round */
static void
choose (GStrv *added, GStrv *removed, const char *id, gboolean add)
{
  GStrv a = strv_with (*added, id, add);
  GStrv r = strv_with (*removed, id, !add);

  g_strfreev (*added);
  g_strfreev (*removed);
  *added = a;
  *removed = r;
}

static int
change_launchers (int argc, char **argv, gboolean add)
{
  const char *command = add ? "add-launcher" : "remove-launcher";
  g_autoptr(GOptionContext) context = gl_cli_context_new ("ID DESKTOP-ID…",
    add ? "Show applications of a sandbox in the menu (as root: for every user)."
        : "Take applications of a sandbox out of the menu (as root: for every user).");
  g_autoptr(GlExportSource) source = NULL;
  g_autoptr(GlSandbox) sb = NULL;
  g_autoptr(GPtrArray) apps = NULL;
  g_autoptr(GError) error = NULL;
  int status = GL_EXIT_OK;

  if (!gl_cli_parse (context, &argc, &argv, &status))
    return status;
  if (argc < 3)
    return gl_cli_usage (command, "give the sandbox ID and at least one desktop ID");
  source = load_source (argv[1], &sb, &error);
  if (source == NULL || (apps = gl_export_source_list_apps (source, &error)) == NULL)
    return gl_cli_fail (error);

  for (int i = 2; i < argc; i++)
    {
      g_autofree char *id = g_str_has_suffix (argv[i], ".desktop")
        ? g_strdup (argv[i]) : g_strconcat (argv[i], ".desktop", NULL);
      gboolean found = FALSE;

      for (guint j = 0; j < apps->len && !found; j++)
        found = strcmp (((GlApp *) apps->pdata[j])->desktop_id, id) == 0 &&
                ((GlApp *) apps->pdata[j])->runnable;
      if (add && !found)
        {
          g_printerr ("glimpse: sandbox %s has no application %s; “glimpse apps %s” lists them\n",
                      sb->id, id, sb->id);
          return GL_EXIT_NOT_FOUND;
        }

      /* as root the admin's sets; Launchers= (the profile's default) stays */
      if (geteuid () == 0)
        choose (&sb->added_launchers, &sb->hidden_launchers, id, add);
      else
        choose (&source->added, &source->removed, id, add);
    }

  if (geteuid () == 0)
    {
      if (!gl_sandbox_save (sb, &error))
        return gl_cli_fail (error);
      g_print ("Changed the launchers of %s for every user; menus follow on each user's next sync\n", sb->id);
      return GL_EXIT_OK;
    }
  else
    {
      g_autoptr(GlExportContext) ctx = gl_export_store_context_new ();
      g_autoptr(GPtrArray) one = g_ptr_array_new ();

      if (!gl_export_user_launchers_save (ctx->config_home, sb->id,
                                          (const char * const *) source->added,
                                          (const char * const *) source->removed, &error))
        return gl_cli_fail (error);
      g_ptr_array_add (one, sb);
      status = export_sandboxes (ctx, one, FALSE, TRUE);
      g_ptr_array_set_size (one, 0);
      return status;
    }
}

int
gl_cmd_add_launcher (int argc, char **argv)
{
  return change_launchers (argc, argv, TRUE);
}

int
gl_cmd_remove_launcher (int argc, char **argv)
{
  return change_launchers (argc, argv, FALSE);
}

int
gl_cmd_open (int argc, char **argv)
{
  g_autofree char *app_id = NULL;
  GOptionEntry entries[] = {
    { "app", 0, 0, G_OPTION_ARG_STRING, &app_id, "Open with this application of the sandbox", "DESKTOP-ID" },
    { NULL }
  };
  g_autoptr(GOptionContext) context = gl_cli_context_new ("ID [--app DESKTOP-ID] [--] [FILE|URL…]",
    "Open files in the sandbox's default application for their type.");
  g_autoptr(GlExportContext) ctx = gl_export_store_context_new ();
  g_autoptr(GlExportSource) source = NULL;
  g_autoptr(GlSandbox) sb = NULL;
  g_autoptr(GPtrArray) uris = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) procs = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GError) error = NULL;
  g_autofree char *user_config = NULL;
  int status = GL_EXIT_OK;
  int first = 2;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!gl_cli_parse (context, &argc, &argv, &status))
    return status;
  if (argc < 2)
    return gl_cli_usage ("open", "give the sandbox ID");
  source = load_source (argv[1], &sb, &error);
  if (source == NULL)
    return gl_cli_fail (error);
  if (first < argc && strcmp (argv[first], "--") == 0)
    first++;
  for (int i = first; i < argc; i++)
    {
      g_autoptr(GFile) file = g_file_new_for_commandline_arg (argv[i]);
      g_ptr_array_add (uris, g_file_get_uri (file));
    }
  if (uris->len == 0 && app_id == NULL)
    return gl_cli_usage ("open", "give files to open, or --app");
  if (app_id != NULL && !g_str_has_suffix (app_id, ".desktop"))
    {
      char *with = g_strconcat (app_id, ".desktop", NULL);
      g_free (app_id);
      app_id = with;
    }
  {
    g_autofree char *user_dir = gl_sandbox_get_user_dir (sb, getuid ());
    user_config = g_build_filename (user_dir, "home", "upper", ".config", NULL);
  }

  /* group the files by application, in order */
  for (guint i = 0; i < uris->len || (i == 0 && uris->len == 0); )
    {
      g_autofree char *chosen = NULL;
      g_autoptr(GPtrArray) group = g_ptr_array_new ();
      g_autoptr(GPtrArray) commands = NULL;

      if (app_id != NULL)
        chosen = g_strdup (app_id);
      else
        {
          g_autofree char *type = gl_open_content_type (uris->pdata[i]);
          chosen = gl_open_find_app (source, user_config, type);
          if (chosen == NULL)
            {
              g_printerr ("glimpse: sandbox %s has no application for %s (%s); "
                          "choose one with --app (“glimpse apps %s” lists them)\n",
                          sb->id, (char *) uris->pdata[i], type, sb->id);
              return GL_EXIT_NOT_FOUND;
            }
        }
      for (; i < uris->len; i++)
        {
          if (app_id == NULL && group->len > 0)
            {
              g_autofree char *type = gl_open_content_type (uris->pdata[i]);
              g_autofree char *next = gl_open_find_app (source, user_config, type);
              if (g_strcmp0 (next, chosen) != 0)
                break;
            }
          g_ptr_array_add (group, uris->pdata[i]);
        }
      g_ptr_array_add (group, NULL);
      commands = gl_open_commands (source, ctx->launcher, chosen,
                                   (const char * const *) group->pdata, &error);
      if (commands == NULL)
        return gl_cli_fail (error);
      for (guint c = 0; c < commands->len; c++)
        {
          GSubprocess *proc = g_subprocess_newv ((const char * const *) commands->pdata[c],
                                                 G_SUBPROCESS_FLAGS_NONE, &error);
          if (proc == NULL)
            {
              g_prefix_error (&error, "Cannot run the launcher %s: ", ctx->launcher);
              return gl_cli_fail (error);
            }
          g_ptr_array_add (procs, proc);
        }
      if (uris->len == 0)
        break;
    }

  for (guint i = 0; i < procs->len; i++)
    {
      GSubprocess *proc = procs->pdata[i];

      if (!g_subprocess_wait (proc, NULL, &error))
        return gl_cli_fail (error);
      if (g_subprocess_get_if_exited (proc) && g_subprocess_get_exit_status (proc) != 0)
        status = g_subprocess_get_exit_status (proc);
    }
  return status;
}
