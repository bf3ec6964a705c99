/* gl-export-plan.c: what an export should write — every sandbox's entries,
 * icons, directory files and file-manager actions, and the shared menu —
 * as a plan of files with their contents, before anything is written
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "gl-export-private.h"
#include "gl-fm-actions.h"
#include "gl-icon.h"
#include "gl-tree.h"

void
gl_plan_file_free (GlPlanFile *f)
{
  if (f == NULL)
    return;
  g_free (f->path);
  g_free (f->sandbox);
  g_clear_pointer (&f->contents, g_bytes_unref);
  g_free (f->source);
  g_free (f->want);
  g_free (f->read_root);
  g_free (f->read_rel);
  g_free (f);
}

GHashTable *
gl_plan_new (void)
{
  return g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) gl_plan_file_free);
}

const char *
gl_plan_file_checksum (GlPlanFile *f)
{
  if (f->want == NULL && f->contents != NULL)
    f->want = gl_checksum_bytes (f->contents);
  return f->want;
}

/* TRUE if @key (gl_manifest_stat_key) has a ctime well before @since_us:
 * a write after that gives another ctime (and none can be made to look
 * older) */
static gboolean
key_is_settled (const char *key, gint64 since_us)
{
  g_auto(GStrv) parts = g_strsplit (key, ":", -1);
  gint64 sec = 0, nsec = 0;
  gint64 margin_us;

  if (g_strv_length (parts) != 5 || sscanf (parts[3], "%" G_GINT64_FORMAT ".%" G_GINT64_FORMAT, &sec, &nsec) != 2)
    return FALSE;
  margin_us = nsec == 0 ? 2 * G_USEC_PER_SEC : 50 * 1000;
  return sec * G_USEC_PER_SEC + nsec / 1000 < since_us - margin_us;
}

GBytes *
gl_plan_file_bytes (GlPlanFile *f, gint64 since_us, GError **error)
{
  g_autoptr(GBytes) bytes = NULL;
  g_autofree char *sum = NULL;
  const char *key = f->source != NULL ? strchr (f->source, '\t') : NULL;
  struct stat st;

  if (f->contents != NULL)
    return g_bytes_ref (f->contents);
  g_return_val_if_fail (f->read_root != NULL, NULL);
  bytes = gl_tree_read_stat (f->read_root, f->read_rel, gl_tree_data_prefixes, f->read_max, &st, error);
  if (bytes == NULL)
    return NULL;
  /* the very file the plan read and hashed (same inode, size, times),
   * settled before this run began: not hashed again */
  if (key != NULL && key_is_settled (key + 1, since_us))
    {
      g_autofree char *now = gl_manifest_stat_key_of (&st);

      if (strcmp (now, key + 1) == 0)
        return g_steal_pointer (&bytes);
    }
  sum = gl_checksum_bytes (bytes);
  if (g_strcmp0 (sum, f->want) != 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                   "Not exporting %s: its source %s%s changed while it was exported; "
                   "the next export takes the new one", f->path, f->read_root, f->read_rel);
      return NULL;
    }
  return g_steal_pointer (&bytes);
}

gboolean
gl_plan_add_file (GHashTable *plan, GlPlanFile *file)
{
  GlPlanFile *f = g_hash_table_lookup (plan, file->path);

  if (f != NULL && (strcmp (f->sandbox, file->sandbox) != 0 ||
                    g_strcmp0 (gl_plan_file_checksum (f), gl_plan_file_checksum (file)) != 0))
    {
      gl_plan_file_free (file);
      return FALSE;
    }
  g_hash_table_replace (plan, file->path, file);
  return TRUE;
}

gboolean
gl_plan_add_bytes (GHashTable *plan, const char *path, const char *sandbox, GBytes *bytes, int mode)
{
  GlPlanFile *f = g_new0 (GlPlanFile, 1);

  f->path = g_strdup (path);
  f->sandbox = g_strdup (sandbox);
  f->contents = g_bytes_ref (bytes);
  f->mode = mode;
  return gl_plan_add_file (plan, f);
}

/* TRUE if @mf (an exported file of sandbox @id, with a recorded stat key)
 * is as Glimpse left it: its directory as the last run over @id left it,
 * or else its own stat key unchanged */
static gboolean
dest_as_recorded (GlExportCache *cache, const char *id, GlManifestFile *mf)
{
  g_autofree char *now = NULL;

  if (gl_export_cache_dir_as_left (cache, id, mf->path))
    return TRUE;
  now = gl_manifest_stat_key (mf->path);
  return now != NULL && strcmp (now, mf->stat) == 0;
}

const char *
gl_plan_copy_unchanged (GlExportContext *ctx, GlManifest *m, const char *id, const char *path,
                        const char *source, guint *mode)
{
  GlManifestFile *mf = m != NULL ? g_hash_table_lookup (m->files, path) : NULL;

  if (mf == NULL || source == NULL || mf->source == NULL || mf->stat == NULL ||
      g_strv_length (mf->checksums) != 1 || strcmp (mf->source, source) != 0 ||
      !dest_as_recorded (ctx->cache, id, mf))
    return NULL;
  /* the key ends with the mode */
  if (mode != NULL)
    *mode = (guint) g_ascii_strtoull (strrchr (mf->stat, ':') + 1, NULL, 8) & 07777;
  return mf->checksums[0];
}

gboolean
gl_plan_add (GHashTable *plan, const char *path, const char *sandbox,
             const char *data, gssize len, int mode)
{
  g_autoptr(GBytes) bytes = g_bytes_new (data, len < 0 ? strlen (data) : (gsize) len);
  return gl_plan_add_bytes (plan, path, sandbox, bytes, mode);
}

static char *
directory_file (const char *name, const char *icon)
{
  g_autoptr(GKeyFile) kf = g_key_file_new ();

  g_key_file_set_comment (kf, NULL, NULL, " Written by glimpse export; it is replaced on the next export.", NULL);
  g_key_file_set_string (kf, DE_GROUP, "Version", "1.0");
  g_key_file_set_string (kf, DE_GROUP, "Type", "Directory");
  g_key_file_set_string (kf, DE_GROUP, "Name", name);
  g_key_file_set_string (kf, DE_GROUP, "Icon", icon);
  return g_key_file_to_data (kf, NULL, NULL);
}

static char *
menu_file (const GlExportedSandbox *sandboxes, guint n)
{
  g_autoptr(GString) out = g_string_new (
    "<!DOCTYPE Menu PUBLIC \"-//freedesktop//DTD Menu 1.0//EN\"\n"
    " \"http://www.freedesktop.org/standards/menu-spec/menu-1.0.dtd\">\n"
    "<!-- Written by glimpse export; it is replaced on the next export. -->\n"
    "<Menu>\n"
    "  <Name>Applications</Name>\n"
    "  <Menu>\n"
    "    <Name>Glimpse</Name>\n"
    "    <Directory>glimpse.directory</Directory>\n");

  for (guint i = 0; i < n; i++)
    {
      g_autofree char *id = g_markup_escape_text (sandboxes[i].id, -1);

      g_string_append_printf (out,
                              "    <Menu>\n"
                              "      <Name>glimpse-%s</Name>\n"
                              "      <Directory>glimpse-%s.directory</Directory>\n"
                              "      <Include>\n"
                              "        <Category>X-Glimpse-%s</Category>\n"
                              "      </Include>\n"
                              "    </Menu>\n", id, id, id);
    }
  g_string_append (out, "  </Menu>\n</Menu>\n");
  return g_string_free (g_steal_pointer (&out), FALSE);
}

void
gl_plan_sandbox_free (GlPlanSandbox *r)
{
  g_free (r->id);
  g_free (r->name);
  g_ptr_array_unref (r->apps);
  g_ptr_array_unref (r->extra);
  g_free (r);
}

void
gl_export_add_warning (GPtrArray *warnings, GlExportStats *stats, const GError *error)
{
  g_debug ("%s", error->message);
  stats->skipped++;
  if (warnings != NULL)
    g_ptr_array_add (warnings, g_error_copy (error));
}


static gsize
icon_cap (const char *ext)
{
  return strcmp (ext, "svg") == 0 ? GL_TREE_MAX_SVG : GL_TREE_MAX_RASTER;
}

/* The icon of one entry: its files read (inside the sandbox's tree, capped)
 * and checked, planned into @copies (GlPlanFile*, read again when written:
 * a plan never holds every icon at once), the exported name returned
 * (NULL: none found). */
/* TRUE if @path (a file of the tree @root) is in a directory the
 * fingerprint lists: <root>/usr/share/icons/… or <root>/usr/share/pixmaps/… */
static gboolean
in_listed_dirs (const char *root, const char *path)
{
  gsize n = strlen (root);

  return strncmp (path, root, n) == 0 && path[n] == '/' &&
         (g_str_has_prefix (path + n + 1, "usr/share/icons/") ||
          g_str_has_prefix (path + n + 1, "usr/share/pixmaps/"));
}

/* "<path>\t<stat key>" of the icon file @path, whose copy is @dest: the
 * manifest's record of @dest when the file lies in a part of the source
 * the watcher saw no change in since the last clean run (which recorded
 * it so), else from its stat now */
static char *
icon_source_key (GlExportContext *ctx, GlManifest *m, const char *path, const char *dest)
{
  GlManifestFile *mf = m != NULL ? g_hash_table_lookup (m->files, dest) : NULL;
  gsize n = strlen (path);
  g_autofree char *key = NULL;
  struct stat st;

  if (mf != NULL && mf->source != NULL && strncmp (mf->source, path, n) == 0 &&
      mf->source[n] == '\t' && gl_export_cache_path_unchanged (ctx->cache, path))
    return g_strdup (mf->source);
  if (!gl_export_cache_lstat (ctx->cache, path, &st))
    return NULL;
  key = gl_manifest_stat_key_of (&st);
  return g_strconcat (path, "\t", key, NULL);
}

static char *
read_icon (GlExportContext *ctx, GlManifest *m, GlExportSource *source, GlIconIndex *index,
           const char *icon, GPtrArray *copies, GPtrArray *extra, GlExportStats *stats,
           GPtrArray *warnings)
{
  g_autoptr(GPtrArray) files = gl_icon_index_resolve (index, icon);
  g_autofree char *base = NULL;
  g_autofree char *exported = NULL;

  if (files->len == 0)
    return NULL;
  base = g_path_get_basename (icon);
  for (const char *e = ".png\0.svg\0.xpm\0"; *e != '\0'; e += strlen (e) + 1)
    if (g_str_has_suffix (base, e) && strlen (base) > strlen (e))
      base[strlen (base) - strlen (e)] = '\0';
  exported = gl_export_icon_name (source->id, base);

  for (guint i = 0; i < files->len; i++)
    {
      GlIconFile *f = files->pdata[i];
      g_autofree char *file = g_strdup_printf ("%s.%s", exported, f->ext);
      g_autofree char *dest = f->size_dir != NULL
        ? g_build_filename (ctx->data_home, "icons", "hicolor", f->size_dir, "apps", file, NULL)
        : g_build_filename (ctx->data_home, "icons", file, NULL);
      g_autoptr(GError) error = NULL;
      g_autofree char *src = icon_source_key (ctx, m, f->path, dest);
      guint mode = 0;
      const char *keep = gl_plan_copy_unchanged (ctx, m, source->id, dest, src, &mode);
      g_autoptr(GBytes) bytes = NULL;
      GlPlanFile *c = g_new0 (GlPlanFile, 1);

      if (!in_listed_dirs (f->root, f->path))
        g_ptr_array_add (extra, g_strdup (f->path));
      c->path = g_steal_pointer (&dest);
      c->sandbox = g_strdup (source->id);
      /* the same source file (path, inode, size, times, mode) and our copy
       * untouched since: neither is read again */
      if (keep != NULL)
        {
          c->keep = TRUE;
          c->want = g_strdup (keep);
        }
      else if ((bytes = gl_tree_read (f->root, f->path + strlen (f->root), gl_tree_data_prefixes,
                                      icon_cap (f->ext), &mode, &error)) != NULL)
        {
          c->want = gl_checksum_bytes (bytes);
          c->read_root = g_strdup (f->root);
          c->read_rel = g_strdup (f->path + strlen (f->root));
          c->read_max = icon_cap (f->ext);
        }
      else
        {
          gl_plan_file_free (c);
          g_prefix_error (&error, "Icon %s of sandbox %s: ", icon, source->id);
          gl_export_add_warning (warnings, stats, error);
          continue;
        }
      /* a kept copy's record in the manifest stays as it is: its plan
       * holds no second copy of the source's key (9,000 of them in a
       * complete sync of 10 sandboxes of 300 apps) */
      if (!c->keep)
        c->source = g_steal_pointer (&src);
      /* never more readable than the source */
      c->mode = 0644 & (int) mode;
      g_ptr_array_add (copies, c);
    }
  if (copies->len == 0)
    return NULL;
  return g_steal_pointer (&exported);
}

/* What an entry's export is made from besides the entry: its names, the
 * launcher, the icon it found */
static void
export_key (GlExportContext *ctx, GlExportSource *source, GlApp *app, const char *icon_name,
            guint8 key[32])
{
  g_autoptr(GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
  const char *parts[] = { "glimpse-export-entry 1", app->desktop_id, source->id, source->name,
                          ctx->launcher, icon_name != NULL ? icon_name : "" };
  gsize len = 32;

  for (gsize i = 0; i < G_N_ELEMENTS (parts); i++)
    g_checksum_update (sum, (const guchar *) parts[i], strlen (parts[i]) + 1);
  g_checksum_get_digest (sum, key, &len);
}

/* The checksum @dest keeps if it is the export @memo made with @key and
 * nobody changed it since, else NULL */
static const char *
memo_unchanged (GlExportContext *ctx, GlManifest *m, const char *id, const char *dest,
                GlAppMemo *memo, const guint8 key[32])
{
  GlManifestFile *mf;

  if (memo == NULL || memo->out_sum[0] == '\0' || memcmp (memo->out_key, key, 32) != 0 || m == NULL)
    return NULL;
  mf = g_hash_table_lookup (m->files, dest);
  if (mf == NULL || mf->stat == NULL || g_strv_length (mf->checksums) != 1 ||
      strcmp (mf->checksums[0], memo->out_sum) != 0 || !dest_as_recorded (ctx->cache, id, mf))
    return NULL;
  return memo->out_sum;
}

static void
collision (GPtrArray *warnings, GlExportStats *stats, const char *what, const char *sandbox_id,
           const char *path)
{
  g_autoptr(GError) error = g_error_new (GL_EXPORT_ERROR, GL_EXPORT_ERROR_CONFLICT,
                                         "Not exporting %s of sandbox %s: %s is exported "
                                         "already for something else", what, sandbox_id, path);
  gl_export_add_warning (warnings, stats, error);
}

GlPlanSandbox *
gl_plan_sandbox (GHashTable *plan, GlExportContext *ctx, GlManifest *m, GlExportSource *source,
                 GHashTable *names, GlExportStats *stats, GPtrArray *warnings)
{
  GlPlanSandbox *r = g_new0 (GlPlanSandbox, 1);
  g_autoptr(GPtrArray) scan_warnings = g_ptr_array_new_with_free_func ((GDestroyNotify) g_error_free);
  g_autoptr(GPtrArray) apps = gl_export_source_scan_memo (source, ctx->cache, scan_warnings);
  GlAppMemos *memos = ctx->cache != NULL ? gl_export_cache_apps (ctx->cache, source->id) : NULL;
  g_autofree char *apps_dir = g_build_filename (ctx->data_home, "applications", NULL);
  const char *no_roots[] = { NULL };
  g_autoptr(GlIconIndex) icons = gl_icon_index_new (source->data_roots != NULL
                                                    ? (const char * const *) source->data_roots : no_roots);

  r->id = g_strdup (source->id);
  r->name = g_strdup (source->name);
  r->apps = g_ptr_array_new_with_free_func (g_free);
  r->extra = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < scan_warnings->len; i++)
    gl_export_add_warning (warnings, stats, scan_warnings->pdata[i]);

  for (guint i = 0; i < apps->len; i++)
    {
      GlApp *app = apps->pdata[i];
      g_autoptr(GKeyFile) out = NULL;
      g_autoptr(GError) error = NULL;
      g_autoptr(GPtrArray) copies = g_ptr_array_new_with_free_func ((GDestroyNotify) gl_plan_file_free);
      g_autofree char *icon = NULL;
      g_autofree char *icon_name = NULL;
      g_autofree char *file = NULL;
      g_autofree char *dest = NULL;
      g_autofree char *data = NULL;
      gsize len;

      GlAppMemo *memo;
      guint8 key[32];
      const char *kept = NULL;

      if (!app->exported)
        continue;
      icon = g_strdup (app->icon);
      if (icon != NULL)
        icon_name = read_icon (ctx, m, source, icons, icon, copies, r->extra, stats, warnings);
      file = gl_export_desktop_file_name (source->id, app->desktop_id);
      dest = g_build_filename (apps_dir, file, NULL);

      /* the entry as an earlier run read it, its export as that run left
       * it: neither is read again */
      memo = gl_app_memos_lookup (memos, app->path);
      if (memo != NULL)
        {
          export_key (ctx, source, app, icon_name, key);
          kept = memo_unchanged (ctx, m, source->id, dest, memo, key);
        }
      if (kept != NULL)
        {
          GlPlanFile *f = g_new0 (GlPlanFile, 1);

          f->path = g_strdup (dest);
          f->sandbox = g_strdup (source->id);
          f->keep = TRUE;
          f->want = g_strdup (kept);
          f->mode = 0644;
          if (!gl_plan_add_file (plan, f))
            {
              collision (warnings, stats, app->desktop_id, source->id, dest);
              continue;
            }
        }
      else
        {
          if (app->entry == NULL &&
              (app->entry = gl_export_source_load_entry (source, app->path, &error)) == NULL)
            {
              g_prefix_error (&error, "Skipping %s of sandbox %s: ", app->desktop_id, source->id);
              gl_export_add_warning (warnings, stats, error);
              continue;
            }
          out = gl_export_rewrite_entry (app->entry, app->desktop_id, source->id, source->name,
                                         ctx->launcher, icon_name, &error);
          /* not kept until the plan ends: one entry at a time in memory */
          g_clear_pointer (&app->entry, g_key_file_unref);
          if (out == NULL)
            {
              g_prefix_error (&error, "Not exporting %s of sandbox %s: ", app->desktop_id, source->id);
              gl_export_add_warning (warnings, stats, error);
              continue;
            }
          data = g_key_file_to_data (out, &len, NULL);
          if (!gl_plan_add (plan, dest, source->id, data, len, 0644))
            {
              collision (warnings, stats, app->desktop_id, source->id, dest);
              continue;
            }
          if (memo != NULL)
            {
              GlPlanFile *f = g_hash_table_lookup (plan, dest);

              memcpy (memo->out_key, key, sizeof key);
              g_strlcpy (memo->out_sum, gl_plan_file_checksum (f), sizeof memo->out_sum);
            }
        }
      for (guint c = 0; c < copies->len; c++)
        {
          GlPlanFile *copy = g_steal_pointer (&copies->pdata[c]);
          g_autofree char *copy_path = g_strdup (copy->path);

          if (!gl_plan_add_file (plan, copy))
            collision (warnings, stats, icon, source->id, copy_path);
        }
      g_ptr_array_add (r->apps, g_steal_pointer (&file));
    }

  {
    g_autofree char *dir_name = g_strdup_printf ("glimpse-%s.directory", source->id);
    g_autofree char *dest = g_build_filename (ctx->data_home, "desktop-directories", dir_name, NULL);
    g_autofree char *contents = directory_file (source->name, "folder");

    gl_plan_add (plan, dest, source->id, contents, -1, 0644);
  }
  if (source->control_entries)
    gl_plan_control (plan, ctx, source, r->apps);
  if (ctx->file_managers)
    gl_fm_actions_plan (plan, ctx, names, source->id, source->name);
  return r;
}


void
gl_plan_shared (GHashTable *plan, GlExportContext *ctx, const GlExportedSandbox *sandboxes, guint n)
{
  g_autofree char *menu = NULL;
  g_autofree char *menu_path = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *dir_path = NULL;

  if (n == 0)
    return;
  menu = menu_file (sandboxes, n);
  menu_path = g_build_filename (ctx->config_home, "menus", "applications-merged", "glimpse.menu", NULL);
  dir = directory_file ("Glimpse", "folder");
  dir_path = g_build_filename (ctx->data_home, "desktop-directories", "glimpse.directory", NULL);
  gl_plan_add (plan, menu_path, "", menu, -1, 0644);
  gl_plan_add (plan, dir_path, "", dir, -1, 0644);
  if (ctx->file_managers)
    gl_fm_actions_plan_shared (plan, ctx, sandboxes, n);
}
