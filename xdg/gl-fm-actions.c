/* gl-fm-actions.c: "Open in <sandbox>" for Nautilus, Caja, Nemo, Thunar,
 * Dolphin and PCManFM-Qt, each calling "glimpse open ID -- FILES"
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include "gl-exec.h"
#include "gl-fm-actions.h"

#define THUNAR_PREFIX "glimpse-"

/* A name fit for a file name and a one-line comment. */
static char *
clean_label (const char *name)
{
  g_autoptr(GString) out = g_string_new (NULL);

  for (const char *p = name; *p != '\0'; p++)
    {
      if (*p == '/')
        g_string_append_c (out, '-');
      else if ((guchar) *p < 0x20 || *p == 0x7f)
        g_string_append_c (out, ' ');
      else
        g_string_append_c (out, *p);
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}

/* Nautilus and Caja run scripts with the selected files as arguments
 * (relative to the working directory they set for local folders); "$@"
 * keeps every name intact, and glimpse open makes them absolute. */
static char *
script (const char *glimpse, const char *id, const char *label)
{
  g_autofree char *qglimpse = g_shell_quote (glimpse);
  g_autofree char *qid = g_shell_quote (id);

  return g_strdup_printf ("#!/bin/sh\n"
                          "# Open in %s: written by glimpse export, replaced on the next export.\n"
                          "exec %s open %s -- \"$@\"\n", label, qglimpse, qid);
}

/* TRUE if another sandbox of @names could want the script name "Open in
 * @label": its label is the same, or @label ends with its " [ID]" */
static gboolean
label_taken (GHashTable *names, const char *id, const char *label)
{
  GHashTableIter iter;
  gpointer other, other_name;

  if (names == NULL)
    return FALSE;
  g_hash_table_iter_init (&iter, names);
  while (g_hash_table_iter_next (&iter, &other, &other_name))
    {
      g_autofree char *other_label = NULL;
      g_autofree char *suffix = NULL;

      if (strcmp (other, id) == 0)
        continue;
      other_label = clean_label (other_name);
      suffix = g_strdup_printf (" [%s]", (const char *) other);
      if (strcmp (other_label, label) == 0 || g_str_has_suffix (label, suffix))
        return TRUE;
    }
  return FALSE;
}

/* A script's file name, which the file manager shows as it is: "Open in
 * LABEL"; when another sandbox could want that (two sandboxes of one
 * display name: glimpse create --display-name, glimpse rename), "Open in
 * LABEL [ID]" (bare when LABEL is the id or ends with " [ID]" already, as
 * the name glimpse create gives a second sandbox of a profile does).
 * Unique: a sandbox id has no space or '[', so a name ending with " [ID]"
 * ends with no other sandbox's " [ID]" and is no bare id, and a bare
 * label is taken only when no other sandbox's label is the same or is its
 * " [ID]" form. */
static char *
script_name (GHashTable *names, const char *label, const char *id)
{
  g_autofree char *suffix = g_strdup_printf (" [%s]", id);

  if (!label_taken (names, id, label) || strcmp (label, id) == 0 || g_str_has_suffix (label, suffix))
    return g_strdup_printf ("Open in %s", label);
  return g_strdup_printf ("Open in %s%s", label, suffix);
}

/* The per-sandbox files, one row each: where (under $XDG_CONFIG_HOME or
 * $XDG_DATA_HOME), the file name (script_name for scripts, glimpse-ID plus a
 * suffix otherwise), the mode, and for key files their keys as
 * group, key, value triples ("" the main group; @TITLE@, @COMMENT@ and
 * @EXEC@ replaced). */
typedef struct {
  gboolean caja_only;       /* written only when Caja has no caja-actions */
  gboolean in_config;
  const char *dir;
  const char *suffix;       /* NULL: a script (script_name) */
  int mode;
  const char *main_group;
  const char *kv[28];
} FmWriter;

/* One entry point per file manager.  Nemo reads both its scripts and
 * .nemo_action files: only the script is written, as it gets every name
 * exactly (Nemo puts each path of an action's %F in single quotes without
 * escaping and splits the line like a shell).  Caja with caja-actions reads
 * both its scripts and the FileManager-Actions files PCManFM-Qt reads: the
 * script only when caja-actions is not installed. */
static const FmWriter fm_writers[] = {
  /* Nautilus: scripts/Glimpse/ is the "Glimpse" submenu */
  { FALSE, FALSE, "nautilus/scripts/Glimpse", NULL, 0755, NULL, { NULL } },
  /* Caja: the same convention under the configuration directory */
  { TRUE, TRUE, "caja/scripts/Glimpse", NULL, 0755, NULL, { NULL } },
  /* Nemo runs scripts the same way, Scripts > Glimpse */
  { FALSE, FALSE, "nemo/scripts/Glimpse", NULL, 0755, NULL, { NULL } },
  /* Dolphin/Konqueror: a KIO service menu, which KIO runs only when it is
   * executable; in the "Glimpse" submenu */
  { FALSE, FALSE, "kio/servicemenus", ".desktop", 0755, "Desktop Entry", {
      "", "Type", "Service",
      "", "MimeType", "all/all;",
      "", "Actions", "open;",
      "", "X-KDE-Submenu", "Glimpse",
      "Desktop Action open", "Name", "@TITLE@",
      "Desktop Action open", "Icon", "folder",
      "Desktop Action open", "Exec", "@EXEC@",
      NULL } },
  /* PCManFM-Qt and caja-actions: a FileManager-Actions action, an item of
   * the "Glimpse" menu (gl_fm_actions_plan_shared) */
  { FALSE, FALSE, "file-manager/actions", ".desktop", 0644, "Desktop Entry", {
      "", "Type", "Action",
      "", "Name", "@TITLE@",
      "", "Tooltip", "@COMMENT@",
      "", "Icon", "folder",
      "", "Profiles", "glimpse;",
      "X-Action-Profile glimpse", "Name", "@TITLE@",
      "X-Action-Profile glimpse", "MimeTypes", "all/all;",
      "X-Action-Profile glimpse", "Exec", "@EXEC@",
      NULL } },
};

static char *
keyfile_action (const FmWriter *w, const char *title, const char *comment, const char *exec)
{
  g_autoptr(GKeyFile) kf = g_key_file_new ();

  g_key_file_set_comment (kf, NULL, NULL, " Written by glimpse export; it is replaced on the next export.", NULL);
  for (gsize i = 0; w->kv[i] != NULL; i += 3)
    {
      const char *value = w->kv[i + 2];

      if (strcmp (value, "@TITLE@") == 0)
        value = title;
      else if (strcmp (value, "@COMMENT@") == 0)
        value = comment;
      else if (strcmp (value, "@EXEC@") == 0)
        value = exec;
      g_key_file_set_string (kf, *w->kv[i] != '\0' ? w->kv[i] : w->main_group, w->kv[i + 1], value);
    }
  return g_key_file_to_data (kf, NULL, NULL);
}

void
gl_fm_actions_plan (GHashTable *plan, GlExportContext *ctx, GHashTable *names,
                    const char *id, const char *name)
{
  g_autofree char *label = clean_label (name);
  /* the scripts' names, and the title of the other file managers' entries,
   * which would show two sandboxes of one name alike */
  g_autofree char *title = script_name (names, label, id);
  g_autofree char *comment = g_strdup_printf ("Open the selected files with an application of %s", label);
  g_autofree char *sh = script (ctx->glimpse, id, label);
  g_autofree char *qglimpse = gl_exec_quote_literal (ctx->glimpse);
  g_autofree char *qid = gl_exec_quote_literal (id);
  g_autofree char *exec = g_strdup_printf ("%s open %s -- %%F", qglimpse, qid);

  for (gsize i = 0; i < G_N_ELEMENTS (fm_writers); i++)
    {
      const FmWriter *w = &fm_writers[i];
      g_autofree char *file = NULL;
      g_autofree char *path = NULL;
      g_autofree char *data = NULL;

      if (w->caja_only && !ctx->caja_scripts)
        continue;
      file = w->suffix != NULL ? g_strconcat ("glimpse-", id, w->suffix, NULL) : g_strdup (title);
      path = g_build_filename (w->in_config ? ctx->config_home : ctx->data_home,
                               w->dir, file, NULL);
      data = w->suffix != NULL ? keyfile_action (w, title, comment, exec) : NULL;

      gl_plan_add (plan, path, id, data != NULL ? data : sh, -1, w->mode);
    }
}

gboolean
gl_fm_caja_actions_installed (void)
{
  g_autofree char *run = g_find_program_in_path ("caja-actions-run");

  return run != NULL;
}

void
gl_fm_actions_plan_shared (GHashTable *plan, GlExportContext *ctx,
                           const GlExportedSandbox *sandboxes, guint n)
{
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  g_autoptr(GPtrArray) items = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *path = NULL;
  g_autofree char *data = NULL;

  if (n == 0)
    return;
  /* the FileManager-Actions "Glimpse" menu: its id "glimpse" is no
   * sandbox's (theirs are glimpse-ID) */
  for (guint i = 0; i < n; i++)
    g_ptr_array_add (items, g_strconcat ("glimpse-", sandboxes[i].id, NULL));
  g_key_file_set_comment (kf, NULL, NULL, " Written by glimpse export; it is replaced on the next export.", NULL);
  g_key_file_set_string (kf, DE_GROUP, "Type", "Menu");
  g_key_file_set_string (kf, DE_GROUP, "Name", "Glimpse");
  g_key_file_set_string (kf, DE_GROUP, "Tooltip", "Open the selected files in a sandbox");
  g_key_file_set_string (kf, DE_GROUP, "Icon", "folder");
  g_key_file_set_string_list (kf, DE_GROUP, "ItemsList", (const char * const *) items->pdata, items->len);
  data = g_key_file_to_data (kf, NULL, NULL);
  path = g_build_filename (ctx->data_home, "file-manager", "actions", "glimpse.desktop", NULL);
  gl_plan_add (plan, path, "", data, -1, 0644);
}

/* ----------------------------------------------------------------- Thunar */

char *
gl_fm_thunar_path (GlExportContext *ctx)
{
  return g_build_filename (ctx->config_home, "Thunar", "uca.xml", NULL);
}

char *
gl_fm_thunar_system_default (void)
{
  const char * const *dirs = g_get_system_config_dirs ();

  for (gsize i = 0; dirs[i] != NULL; i++)
    {
      g_autofree char *path = g_build_filename (dirs[i], "Thunar", "uca.xml", NULL);
      char *data = NULL;

      if (g_file_get_contents (path, &data, NULL, NULL))
        return data;
    }
  return NULL;
}

static char *
thunar_action (const GlExportedSandbox *s, const char *glimpse, GHashTable *names)
{
  g_autofree char *label = clean_label (s->name);
  g_autofree char *title = script_name (names, label, s->id);
  g_autofree char *qglimpse = g_shell_quote (glimpse);
  g_autofree char *qid = g_shell_quote (s->id);
  g_autofree char *command = g_strdup_printf ("%s open %s -- %%F", qglimpse, qid);

  return g_markup_printf_escaped ("<action>\n"
                                  "\t<icon>folder</icon>\n"
                                  "\t<name>%s</name>\n"
                                  "\t<submenu>Glimpse</submenu>\n"
                                  "\t<unique-id>" THUNAR_PREFIX "%s</unique-id>\n"
                                  "\t<command>%s</command>\n"
                                  "\t<description>Open the selected files with an application of %s</description>\n"
                                  "\t<range>*</range>\n"
                                  "\t<patterns>*</patterns>\n"
                                  "\t<directories/>\n"
                                  "\t<audio-files/>\n"
                                  "\t<image-files/>\n"
                                  "\t<other-files/>\n"
                                  "\t<text-files/>\n"
                                  "\t<video-files/>\n"
                                  "</action>\n",
                                  title, s->id, command, label);
}

static gboolean
check_well_formed (const char *path, const char *text, GError **error)
{
  static const GMarkupParser parser = { NULL, NULL, NULL, NULL, NULL };
  g_autoptr(GMarkupParseContext) pc = g_markup_parse_context_new (&parser, 0, NULL, NULL);

  if (!g_markup_parse_context_parse (pc, text, -1, error) ||
      !g_markup_parse_context_end_parse (pc, error))
    {
      g_prefix_error (error, "Cannot merge Glimpse's actions into %s, it is not valid XML "
                      "(fix it or move it away): ", path);
      return FALSE;
    }
  return TRUE;
}

/* Skips a comment, CDATA section or processing instruction at @p. */
static const char *
skip_special (const char *p)
{
  static const struct { const char *open, *close; } kinds[] = {
    { "<!--", "-->" }, { "<![CDATA[", "]]>" }, { "<?", "?>" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (kinds); i++)
    if (g_str_has_prefix (p, kinds[i].open))
      {
        const char *end = strstr (p + strlen (kinds[i].open), kinds[i].close);
        return end != NULL ? end + strlen (kinds[i].close) : p + strlen (p);
      }
  return NULL;
}

char *
gl_fm_thunar_merge (const char *path, const char *existing,
                    const GlExportedSandbox *sandboxes, guint n_sandboxes,
                    const char *glimpse, GError **error)
{
  const char *text = existing != NULL
    ? existing
    : "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<actions>\n</actions>\n";
  g_autoptr(GString) out = g_string_new (NULL);
  g_autoptr(GHashTable) names = g_hash_table_new (g_str_hash, g_str_equal);
  const char *p = text;
  const char *close = NULL;
  gsize close_at;

  for (guint i = 0; i < n_sandboxes; i++)
    if (sandboxes[i].name != NULL)
      g_hash_table_insert (names, (char *) sandboxes[i].id, (char *) sandboxes[i].name);
  if (!check_well_formed (path, text, error))
    return NULL;

  /* copy everything but our own <action> elements */
  while (*p != '\0')
    {
      const char *skip;

      if (*p != '<')
        {
          g_string_append_c (out, *p++);
          continue;
        }
      if ((skip = skip_special (p)) != NULL)
        {
          g_string_append_len (out, p, skip - p);
          p = skip;
          continue;
        }
      if (g_str_has_prefix (p, "<action>") || g_str_has_prefix (p, "<action "))
        {
          const char *end = strstr (p, "</action>");
          g_autofree char *element = NULL;

          if (end == NULL)
            {
              g_string_append (out, p);
              break;
            }
          end += strlen ("</action>");
          element = g_strndup (p, end - p);
          if (strstr (element, "<unique-id>" THUNAR_PREFIX) != NULL)
            {
              /* ours: drop it with its line */
              if (*end == '\n')
                end++;
              p = end;
              continue;
            }
          g_string_append (out, element);
          p = end;
          continue;
        }
      g_string_append_c (out, *p++);
    }

  /* ours go before the last </actions>, at the start of its line */
  for (const char *q = out->str; (q = strstr (q, "</actions>")) != NULL; q++)
    close = q;
  if (close == NULL)
    {
      g_set_error (error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                   "Cannot merge Glimpse's actions into %s: it has no <actions> element "
                   "(fix it or move it away)", path);
      return NULL;
    }
  close_at = close - out->str;
  while (close_at > 0 && (out->str[close_at - 1] == ' ' || out->str[close_at - 1] == '\t'))
    close_at--;

  for (guint i = n_sandboxes; i > 0; i--)
    {
      g_autofree char *action = thunar_action (&sandboxes[i - 1], glimpse, names);
      g_string_insert (out, close_at, action);
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}
