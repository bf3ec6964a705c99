/* gl-export-store.c: the export engine (xdg/) applied to the sandbox store
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "gl-export-store.h"
#include "gl-paths.h"
#include "gl-spawn.h"

const char *
gl_export_store_host_root (void)
{
  const char *root = g_getenv ("GLIMPSE_HOST_ROOT");   /* tests */
  return root != NULL && *root != '\0' ? root : "/";
}

/* The cache tools after an export.  They are optional: a missing or failing
 * tool leaves the menus working (GIO reads the entries themselves).
 * posix_spawn'd (gl_spawn_tool): a fork of the agent would cost it the
 * copy-on-write faults of its whole heap after every change. */
static gboolean
run_tool (const char * const *argv, gpointer user_data)
{
  g_autoptr(GError) error = NULL;

  if (!gl_spawn_tool (argv, &error))
    {
      g_debug ("%s, skipping it", error->message);
      return FALSE;
    }
  return TRUE;
}

GlExportContext *
gl_export_store_context_new (void)
{
  GlExportContext *ctx = gl_export_context_new (gl_paths_launcher (), gl_paths_glimpse ());

  ctx->run_tool = run_tool;
  return ctx;
}

char *
gl_export_store_system_tree (GlSandbox *sandbox, GError **error)
{
  g_autofree char *number = NULL;
  guint generation = 0;

  if (!gl_sandbox_get_system_generation (sandbox, &generation, error))
    return NULL;
  if (generation == 0)
    return NULL;   /* no system layer: the base only */
  number = g_strdup_printf ("%u", generation);
  return g_build_filename (sandbox->path, "system", number, "tree", NULL);
}

GlExportSource *
gl_export_store_source_new (GlSandbox *sandbox, const char *host_root,
                            const char *config_home, GError **error)
{
  g_autoptr(GlExportSource) s = gl_export_source_new (sandbox->id, sandbox->name);
  g_autoptr(GError) local_error = NULL;
  g_autofree char *tree = gl_export_store_system_tree (sandbox, &local_error);
  g_autofree char *rootfs = gl_sandbox_get_rootfs (sandbox);
  const char *base = rootfs != NULL ? rootfs : host_root;
  g_autoptr(GStrvBuilder) roots = g_strv_builder_new ();
  g_autoptr(GStrvBuilder) apps = g_strv_builder_new ();

  if (local_error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return NULL;
    }

  /* the system layer over the base, highest precedence first; icons of a
   * host-based sandbox may come from the host's own tree */
  if (tree != NULL)
    {
      g_autofree char *tree_apps = g_build_filename (tree, "usr/share/applications", NULL);
      g_strv_builder_add (roots, tree);
      g_strv_builder_add (apps, tree_apps);
      s->system_apps_dir = g_strdup (tree_apps);
    }
  g_strv_builder_add (roots, base);
  if (rootfs != NULL)
    {
      g_autofree char *rootfs_apps = g_build_filename (rootfs, "usr/share/applications", NULL);
      g_strv_builder_add (apps, rootfs_apps);
    }
  else
    s->exclude_apps_dir = g_build_filename (host_root, "usr/share/applications", NULL);
  s->data_roots = g_strv_builder_end (roots);
  s->app_dirs = g_strv_builder_end (apps);

  if (sandbox->launchers != NULL && sandbox->launchers[0] != NULL)
    s->launchers = g_strdupv (sandbox->launchers);
  if (sandbox->added_launchers != NULL && sandbox->added_launchers[0] != NULL)
    s->admin_added = g_strdupv (sandbox->added_launchers);
  if (sandbox->hidden_launchers != NULL && sandbox->hidden_launchers[0] != NULL)
    s->admin_hidden = g_strdupv (sandbox->hidden_launchers);
  s->control_entries = TRUE;
  if (!gl_export_user_launchers_load (config_home, sandbox->id, &s->added, &s->removed, error))
    return NULL;
  return g_steal_pointer (&s);
}

gboolean
gl_export_store_sync_all (GlExportContext *ctx, const char *store_dir, const char *host_root,
                          GlExportStats *stats, GPtrArray *warnings, GError **error)
{
  g_autoptr(GPtrArray) errors = g_ptr_array_new_with_free_func ((GDestroyNotify) g_error_free);
  g_autoptr(GlStore) store = gl_store_new (store_dir);
  g_autoptr(GPtrArray) all = gl_store_list (store, errors, error);
  g_autoptr(GPtrArray) sources = g_ptr_array_new_with_free_func ((GDestroyNotify) gl_export_source_free);

  if (all == NULL)
    return FALSE;
  for (guint i = 0; i < errors->len; i++)
    if (warnings != NULL)
      g_ptr_array_add (warnings, g_error_copy (errors->pdata[i]));
  for (guint i = 0; i < all->len; i++)
    {
      GlSandbox *sb = all->pdata[i];
      g_autoptr(GError) local_error = NULL;
      GlExportSource *source;

      if (gl_export_user_disabled (ctx->config_home, sb->id))
        continue;
      source = gl_export_store_source_new (sb, host_root, ctx->config_home, &local_error);
      if (source == NULL)
        {
          /* a broken choice file must not take the other sandboxes down */
          if (warnings != NULL)
            g_ptr_array_add (warnings, g_steal_pointer (&local_error));
          continue;
        }
      g_ptr_array_add (sources, source);
    }
  return gl_export_sync (ctx, sources, TRUE, stats, warnings, error);
}

gboolean
gl_export_store_sync_sandbox (GlExportContext *ctx, const char *store_dir, const char *id,
                              const char *host_root, GlExportStats *stats,
                              GPtrArray *warnings, GError **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GlSandbox) sb = gl_sandbox_load (store_dir, id, &local_error);
  g_autoptr(GPtrArray) sources = g_ptr_array_new_with_free_func ((GDestroyNotify) gl_export_source_free);
  GlExportSource *source;

  if (sb == NULL)
    {
      if (!g_error_matches (local_error, GL_STORE_ERROR, GL_STORE_ERROR_NOT_FOUND))
        {
          g_propagate_error (error, g_steal_pointer (&local_error));
          return FALSE;
        }
      if (stats != NULL)
        *stats = (GlExportStats) { 0, };
      return gl_export_unexport (ctx, id, error);
    }
  if (gl_export_user_disabled (ctx->config_home, sb->id))
    {
      if (stats != NULL)
        *stats = (GlExportStats) { 0, };
      return gl_export_unexport (ctx, id, error);
    }
  source = gl_export_store_source_new (sb, host_root, ctx->config_home, error);
  if (source == NULL)
    return FALSE;
  g_ptr_array_add (sources, source);
  return gl_export_sync (ctx, sources, FALSE, stats, warnings, error);
}

gboolean
gl_export_store_remove_sandbox (const char *id, GError **error)
{
  g_autoptr(GlExportContext) ctx = NULL;

  if (geteuid () == 0)
    {
      g_debug ("Running as root: the exports of %s are removed by each user's next sync", id);
      return TRUE;
    }
  ctx = gl_export_store_context_new ();
  return gl_export_unexport (ctx, id, error);
}
