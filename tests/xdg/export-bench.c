/* export-bench: export of a sandbox with 300 applications and their icons,
 * a no-op re-export, and update-desktop-database on the same directory;
 * then the first export and update-desktop-database again with DIRTY_MB
 * (1000) of another writer's data not yet written back on the same file
 * system (as a CI run or a download leaves it), 0 for none.
 *
 *   export-bench [N_APPS [DIRTY_MB]]
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gl-export-store.h"
#include "xdg-test-util.h"

static double
now (void)
{
  return g_get_monotonic_time () / 1000.0;
}

/* @mb MB written to @path and not synced */
static void
dirty_file_system (const char *path, int mb)
{
  g_autofree char *block = g_malloc (1 << 20);
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

  if (fd < 0)
    g_error ("%s: %s", path, g_strerror (errno));
  for (int i = 0; i < (1 << 20); i++)
    block[i] = (char) i;
  for (int i = 0; i < mb; i++)
    if (write (fd, block, 1 << 20) != (1 << 20))
      g_error ("%s: %s", path, g_strerror (errno));
  close (fd);
}

/* "Dirty:" of /proc/meminfo, in MB (-1 if unknown) */
static long
dirty_mb_now (void)
{
  g_autofree char *meminfo = NULL;
  const char *line;

  if (!g_file_get_contents ("/proc/meminfo", &meminfo, NULL, NULL) ||
      (line = strstr (meminfo, "\nDirty:")) == NULL)
    return -1;
  return (long) (g_ascii_strtoull (line + strlen ("\nDirty:"), NULL, 10) / 1024);
}

static double
run_udd (const char *udd, const char *apps_dir)
{
  const char *args[] = { udd, "-q", apps_dir, NULL };
  int status = 0;
  double t0 = now ();

  g_spawn_sync (NULL, (char **) args, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL, &status, NULL);
  return now () - t0;
}

static GlExportStats
export_once (GlExportContext *ctx, GPtrArray *sources)
{
  g_autoptr(GError) error = NULL;
  GlExportStats stats = { 0, };

  if (!gl_export_sync (ctx, sources, TRUE, &stats, NULL, &error))
    g_error ("export failed: %s", error->message);
  return stats;
}

int
main (int argc, char **argv)
{
  int n = argc > 1 ? atoi (argv[1]) : 300;
  int dirty_mb = argc > 2 ? atoi (argv[2]) : 1000;
  g_autoptr(GError) error = NULL;
  g_autofree char *tmp = g_dir_make_tmp ("glimpse-bench-XXXXXX", &error);
  g_autofree char *tree = g_build_filename (tmp, "tree", NULL);
  g_autofree char *rootfs = g_build_filename (tree, "rootfs", NULL);
  g_autofree char *home = g_build_filename (tmp, "home", NULL);
  g_autofree char *data_home = g_build_filename (home, ".local/share", NULL);
  g_autofree char *data_home2 = g_build_filename (home, ".local/share2", NULL);
  g_autofree char *data_home3 = g_build_filename (home, ".local/share3", NULL);
  g_autofree char *apps_dir3 = g_build_filename (data_home3, "applications", NULL);
  g_autofree char *dirty_path = g_build_filename (tmp, "dirty", NULL);
  g_autofree char *config_home = g_build_filename (home, ".config", NULL);
  g_autofree char *apps_dir = g_build_filename (data_home, "applications", NULL);
  g_autoptr(GPtrArray) sources = g_ptr_array_new_with_free_func ((GDestroyNotify) gl_export_source_free);
  g_autoptr(GlExportContext) ctx = NULL;
  g_autofree char *png_payload = g_strnfill (4096, 'x');
  g_autofree char *udd = g_find_program_in_path ("update-desktop-database");
  GlExportStats s1, s2, s3, s4, s5 = { 0, };
  GlExportRunTool tool;
  double t0, t_first, t_noop, t_first_notools, t_udd = -1, t_rm;
  double t_first_dirty = -1, t_udd_dirty = -1, t_replace, t_replace_dirty = -1;
  long dirty_seen = -1;

  g_assert_no_error (error);
  g_setenv ("XDG_DATA_HOME", data_home, TRUE);
  g_setenv ("XDG_CONFIG_HOME", config_home, TRUE);
  g_setenv ("HOME", home, TRUE);
  g_setenv ("GSETTINGS_BACKEND", "memory", TRUE);

  for (int i = 0; i < n; i++)
    {
      g_autofree char *rel = g_strdup_printf ("usr/share/applications/org.example.App%03d.desktop", i);
      g_autofree char *entry = g_strdup_printf (
        "[Desktop Entry]\nType=Application\nName=App %d\nName[de]=Anwendung %d\nName[fr]=Appli %d\n"
        "GenericName=Thing\nComment=Does things\nExec=app%d --open %%U\nTryExec=app%d\n"
        "Icon=org.example.App%03d\nCategories=Utility;\nMimeType=text/x-app%d;\nActions=new;\n\n"
        "[Desktop Action new]\nName=New\nExec=app%d --new\n", i, i, i, i, i, i, i, i);
      g_autofree char *p48 = g_strdup_printf ("usr/share/icons/hicolor/48x48/apps/org.example.App%03d.png", i);
      g_autofree char *p256 = g_strdup_printf ("usr/share/icons/hicolor/256x256/apps/org.example.App%03d.png", i);
      g_autofree char *svg = g_strdup_printf ("usr/share/icons/hicolor/scalable/apps/org.example.App%03d.svg", i);

      tu_write (rootfs, rel, entry);
      tu_write_png (rootfs, p48, 48);
      tu_write_png (rootfs, p256, 256);
      tu_write (rootfs, svg, png_payload);
    }
  g_ptr_array_add (sources, tu_source (tree, "bench", "Bench"));

  ctx = gl_export_store_context_new ();
  g_free (ctx->launcher);
  ctx->launcher = g_strdup ("/usr/bin/glimpse-launch");
  ctx->app_folders = FALSE;

  t0 = now ();
  s1 = export_once (ctx, sources);
  t_first = now () - t0;

  t0 = now ();
  s2 = export_once (ctx, sources);
  t_noop = now () - t0;

  /* every entry replaced (the launcher moved), and back */
  g_free (ctx->launcher);
  ctx->launcher = g_strdup ("/usr/local/bin/glimpse-launch");
  t0 = now ();
  s4 = export_once (ctx, sources);
  t_replace = now () - t0;
  g_free (ctx->launcher);
  ctx->launcher = g_strdup ("/usr/bin/glimpse-launch");
  export_once (ctx, sources);

  if (udd != NULL)
    t_udd = run_udd (udd, apps_dir);

  /* the same first export without running the tools: our own share */
  g_free (ctx->data_home);
  ctx->data_home = g_strdup (data_home2);
  tool = ctx->run_tool;
  ctx->run_tool = NULL;
  t0 = now ();
  s3 = export_once (ctx, sources);
  t_first_notools = now () - t0;

  ctx->run_tool = tool;
  g_free (ctx->data_home);
  ctx->data_home = g_strdup (data_home);
  g_ptr_array_set_size (sources, 0);
  t0 = now ();
  export_once (ctx, sources);
  t_rm = now () - t0;

  /* the first export again, into a new home, with another writer's data
   * waiting to be written back on the same file system */
  if (dirty_mb > 0)
    {
      g_ptr_array_add (sources, tu_source (tree, "bench", "Bench"));
      g_free (ctx->data_home);
      ctx->data_home = g_strdup (data_home3);
      dirty_file_system (dirty_path, dirty_mb);
      dirty_seen = dirty_mb_now ();
      t0 = now ();
      export_once (ctx, sources);
      t_first_dirty = now () - t0;
      /* every entry replaced (the launcher moved) */
      g_free (ctx->launcher);
      ctx->launcher = g_strdup ("/usr/local/bin/glimpse-launch");
      t0 = now ();
      s5 = export_once (ctx, sources);
      t_replace_dirty = now () - t0;
      if (udd != NULL)
        t_udd_dirty = run_udd (udd, apps_dir3);
      unlink (dirty_path);
    }

  g_print ("glimpse export benchmark: %d applications, %d icon files\n", n, 3 * n);
  g_print ("  %-52s %9.1f ms  (%u files written)\n", "first export (incl. update-desktop-database)", t_first, s1.written);
  g_print ("  %-52s %9.1f ms  (%u files written)\n", "first export, tools not run", t_first_notools, s3.written);
  g_print ("  %-52s %9.1f ms  (%u written, %u unchanged)\n", "no-op re-export", t_noop, s2.written, s2.unchanged);
  g_print ("  %-52s %9.1f ms  (%u written, %u unchanged)\n", "re-export, every entry changed", t_replace,
           s4.written, s4.unchanged);
  if (t_udd >= 0)
    g_print ("  %-52s %9.1f ms\n", "update-desktop-database alone, same directory", t_udd);
  g_print ("  %-52s %9.1f ms\n", "removal of everything", t_rm);
  if (t_first_dirty >= 0)
    {
      g_autofree char *what = g_strdup_printf ("with %d MB of another writer's unsynced data", dirty_mb);

      g_print ("%s (Dirty: %ld MB when the export started):\n", what, dirty_seen);
      g_print ("  %-52s %9.1f ms\n", "first export (incl. update-desktop-database)", t_first_dirty);
      g_print ("  %-52s %9.1f ms  (%u written, %u unchanged)\n", "re-export, every entry changed",
               t_replace_dirty, s5.written, s5.unchanged);
      if (t_udd_dirty >= 0)
        g_print ("  %-52s %9.1f ms\n", "update-desktop-database alone, same directory", t_udd_dirty);
    }
  if (t_udd > 0)
    g_print ("first export / update-desktop-database: %.1fx quiet", t_first / t_udd);
  if (t_udd > 0 && t_udd_dirty > 0)
    g_print (", %.1fx with the dirty data", t_first_dirty / t_udd_dirty);
  if (t_udd > 0)
    g_print ("\n");

  {
    const char *rm[] = { "rm", "-rf", tmp, NULL };
    g_spawn_sync (NULL, (char **) rm, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, NULL, NULL);
  }
  return 0;
}
