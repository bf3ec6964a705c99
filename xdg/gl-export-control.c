/* gl-export-control.c: the control entries of a sandbox's submenu — the
 * original's control window, made desktop-native
 *
 *   glimpse-<id>+.terminal.desktop  "Terminal in <name>"
 *   glimpse-<id>+.control.desktop   "<name>", with the desktop actions
 *                                   Update now, Show my changes, Purge my
 *                                   changes, Hide from menu
 *
 * Each runs "glimpse control <id> <action>", which asks the session agent
 * (D-Bus activated when it is not running); the agent answers with desktop
 * notifications and the user's terminal.  Named like the applications,
 * glimpse-<id>+<name>, with a name no application has (a desktop id never
 * starts with '.').  Older versions named them glimpse-<id>--terminal and
 * --control: those are in the manifest, not planned any more, and go with
 * the next export like any stale file.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include "gl-exec.h"
#include "gl-export-private.h"

#define TERMINAL_SUFFIX "+.terminal.desktop"
#define CONTROL_SUFFIX "+.control.desktop"

gboolean
gl_export_is_control_entry (const char *file_name)
{
  return g_str_has_suffix (file_name, TERMINAL_SUFFIX) || g_str_has_suffix (file_name, CONTROL_SUFFIX);
}

static char *
control_exec (GlExportContext *ctx, const char *id, const char *action)
{
  g_autofree char *prog = gl_exec_quote_literal (ctx->glimpse);
  g_autofree char *qid = gl_exec_quote_literal (id);

  return g_strdup_printf ("%s control %s %s", prog, qid, action);
}

static GKeyFile *
control_entry (GlExportContext *ctx, GlExportSource *source, const char *name,
               const char *comment, const char *icon, const char *action)
{
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  g_autofree char *exec = control_exec (ctx, source->id, action);
  g_autofree char *category = g_strdup_printf ("X-Glimpse-%s", source->id);
  const char *categories[] = { "X-Glimpse", category, NULL };

  g_key_file_set_comment (kf, NULL, NULL, " Written by glimpse export; it is replaced on the next export.", NULL);
  g_key_file_set_string (kf, DE_GROUP, "Type", "Application");
  g_key_file_set_string (kf, DE_GROUP, "Version", "1.0");
  g_key_file_set_string (kf, DE_GROUP, "Name", name);
  g_key_file_set_string (kf, DE_GROUP, "Comment", comment);
  g_key_file_set_string (kf, DE_GROUP, "Icon", icon);
  g_key_file_set_string (kf, DE_GROUP, "Exec", exec);
  g_key_file_set_boolean (kf, DE_GROUP, "Terminal", FALSE);
  g_key_file_set_string_list (kf, DE_GROUP, "Categories", categories, 2);
  g_key_file_set_string (kf, DE_GROUP, "X-Glimpse-Sandbox", source->id);
  return g_steal_pointer (&kf);
}

static void
add_entry (GHashTable *plan, GlExportContext *ctx, GlExportSource *source, GKeyFile *kf,
           const char *suffix, GPtrArray *apps)
{
  g_autofree char *file = g_strconcat ("glimpse-", source->id, suffix, NULL);
  g_autofree char *dest = g_build_filename (ctx->data_home, "applications", file, NULL);
  g_autofree char *data = NULL;
  gsize len;

  data = g_key_file_to_data (kf, &len, NULL);
  gl_plan_add (plan, dest, source->id, data, len, 0644);
  g_ptr_array_add (apps, g_steal_pointer (&file));
}

void
gl_plan_control (GHashTable *plan, GlExportContext *ctx, GlExportSource *source, GPtrArray *apps)
{
  static const struct {
    const char *action;
    const char *name;
  } actions[] = {
    { "update", "Update now" },
    { "show-changes", "Show my changes" },
    { "purge", "Purge my changes…" },
    { "hide", "Hide from menu" },
  };
  g_autofree char *term_name = g_strdup_printf ("Terminal in %s", source->name);
  g_autofree char *term_comment = g_strdup_printf ("A shell inside the sandbox %s, as you", source->name);
  g_autofree char *comment = g_strdup_printf ("The sandbox %s: update it, see or drop what its apps changed in your files",
                                              source->name);
  g_autoptr(GKeyFile) term = control_entry (ctx, source, term_name, term_comment,
                                            "utilities-terminal", "terminal");
  g_autoptr(GKeyFile) control = control_entry (ctx, source, source->name, comment,
                                               "preferences-system", "show-changes");
  g_autoptr(GStrvBuilder) names = g_strv_builder_new ();
  g_auto(GStrv) list = NULL;

  g_key_file_set_string (term, DE_GROUP, "Keywords", "shell;console;command;");
  for (gsize i = 0; i < G_N_ELEMENTS (actions); i++)
    {
      g_autofree char *group = g_strdup_printf ("Desktop Action %s", actions[i].action);
      g_autofree char *exec = control_exec (ctx, source->id, actions[i].action);

      g_strv_builder_add (names, actions[i].action);
      g_key_file_set_string (control, group, "Name", actions[i].name);
      g_key_file_set_string (control, group, "Exec", exec);
    }
  list = g_strv_builder_end (names);
  g_key_file_set_string_list (control, DE_GROUP, "Actions", (const char * const *) list,
                              g_strv_length (list));

  add_entry (plan, ctx, source, term, TERMINAL_SUFFIX, apps);
  add_entry (plan, ctx, source, control, CONTROL_SUFFIX, apps);
}
