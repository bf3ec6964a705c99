/* gl-icon.c: icon resolution inside sandbox trees
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>

#include "gl-icon.h"
#include "gl-tree.h"
#include "gl-view.h"

/* The fixed sizes the hicolor index.theme has: an icon put anywhere else is
 * never found by the host. */
static const int hicolor_sizes[] = { 16, 22, 24, 32, 36, 48, 64, 72, 96, 128, 192, 256, 512 };

static const char * const icon_exts[] = { "png", "svg", "xpm", NULL };

void
gl_icon_file_free (GlIconFile *file)
{
  if (file == NULL)
    return;
  g_free (file->root);
  g_free (file->path);
  g_free (file->size_dir);
  g_free (file->ext);
  g_free (file);
}

static GlIconFile *
icon_file_new (const char *root, const char *path, const char *size_dir, const char *ext)
{
  GlIconFile *f = g_new0 (GlIconFile, 1);

  f->root = g_strdup (root);
  f->path = g_strdup (path);
  f->size_dir = g_strdup (size_dir);
  f->ext = g_strdup (ext);
  return f;
}

int
gl_icon_png_size (const char *path)
{
  guchar header[24];
  FILE *f = fopen (path, "rbe");
  size_t n;

  if (f == NULL)
    return 0;
  n = fread (header, 1, sizeof header, f);
  fclose (f);
  if (n < sizeof header || memcmp (header, "\x89PNG\r\n\x1a\n", 8) != 0 ||
      memcmp (header + 12, "IHDR", 4) != 0)
    return 0;
  return (int) (((guint32) header[16] << 24) | ((guint32) header[17] << 16) |
                ((guint32) header[18] << 8) | (guint32) header[19]);
}

static gboolean
is_hicolor_size (int size)
{
  for (gsize i = 0; i < G_N_ELEMENTS (hicolor_sizes); i++)
    if (hicolor_sizes[i] == size)
      return TRUE;
  return FALSE;
}

/* "48x48" or "48" -> 48; "scalable" -> -1; else 0 (including "48x48@2") */
static int
parse_size_dir (const char *name)
{
  char *end = NULL;
  guint64 a;

  if (strcmp (name, "scalable") == 0)
    return -1;
  if (!g_ascii_isdigit (name[0]))
    return 0;
  a = g_ascii_strtoull (name, &end, 10);
  if (*end == '\0')
    return (int) a;
  if (*end == 'x')
    {
      guint64 b = g_ascii_strtoull (end + 1, &end, 10);
      if (*end == '\0' && a == b)
        return (int) a;
    }
  return 0;
}

static char *
size_dir_name (int size)
{
  if (size < 0)
    return g_strdup ("scalable");
  if (is_hicolor_size (size))
    return g_strdup_printf ("%dx%d", size, size);
  return NULL;
}

static int
compare_names (const void *a, const void *b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

/* The names in the directory @rel of the view over @layers (top first),
 * sorted: listed through the view's resolver, as the sandbox sees it, its
 * links followed inside the view, a whiteout or an opaque directory hiding
 * what is below.  NULL when there is none or it is no directory. */
static GStrv
view_names (const char * const *layers, const char *rel)
{
  g_autoptr(GHashTable) set = gl_view_dir_names_full (layers, g_strv_length ((GStrv) layers), rel,
                                                      GL_VIEW_FOLLOW_LINKS);
  g_autofree const char **keys = NULL;
  guint n = 0;

  if (set == NULL || g_hash_table_size (set) == 0)
    return NULL;
  keys = (const char **) g_hash_table_get_keys_as_array (set, &n);
  qsort (keys, n, sizeof *keys, compare_names);
  return g_strdupv ((GStrv) keys);
}

static gint
compare_entries (gconstpointer a, gconstpointer b)
{
  const GlViewEntry *x = *(const GlViewEntry * const *) a;
  const GlViewEntry *y = *(const GlViewEntry * const *) b;

  return strcmp (x->name, y->name);
}

/* The regular file @rel of the view over @layers: the layer that gives it,
 * and its host path there (no link on the way); NULL if it is none. */
static char *
view_file (const char * const *layers, const char *rel, const char **root)
{
  g_autofree char *layer_rel = NULL;
  gsize layer = 0;

  if (gl_view_locate_file (layers, g_strv_length ((GStrv) layers), rel, &layer, &layer_rel)
      != GL_VIEW_FILE)
    return NULL;
  *root = layers[layer];
  return g_build_filename (layers[layer], layer_rel, NULL);
}

static GlIconFile *
single_file (const char *root, const char *real)
{
  const char *dot = strrchr (real, '.');
  const char *ext = dot != NULL ? dot + 1 : "";
  g_autofree char *sdir = NULL;

  if (strcmp (ext, "svg") == 0)
    sdir = g_strdup ("scalable");
  else if (strcmp (ext, "png") == 0)
    sdir = size_dir_name (gl_icon_png_size (real));
  else if (strcmp (ext, "xpm") != 0)
    return NULL;
  return icon_file_new (root, real, sdir, ext);
}

static gint
compare_icon_files (gconstpointer a, gconstpointer b)
{
  const GlIconFile *fa = *(GlIconFile * const *) a;
  const GlIconFile *fb = *(GlIconFile * const *) b;

  return g_strcmp0 (fa->size_dir, fb->size_dir);
}

/* The themes of the view in lookup order, each a table
 * icon name -> (size dir -> IndexedFile). */
struct _GlIconIndex {
  GStrv roots;
  GPtrArray *themes;   /* GHashTable*, hicolor first */
};

static void
hash_table_unref0 (gpointer p)
{
  if (p != NULL)
    g_hash_table_unref (p);
}

/* A file of the index: a regular file seen in the listing, by its
 * layer and host path there; anything else (a link) by its path in the
 * view, resolved on lookup (view_file). */
typedef struct {
  gsize layer;   /* G_MAXSIZE: @path is the view's */
  char *path;
} IndexedFile;

static void
indexed_file_free (IndexedFile *f)
{
  g_free (f->path);
  g_free (f);
}

/* Lists <theme>/{A}/{B}/ once: every icon file in it by name and size,
 * from the view's listings alone (no look at a file but a possible
 * whiteout). */
static GHashTable *
index_theme (const char * const *layers, const char *theme_rel)
{
  GHashTable *names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, hash_table_unref0);
  g_auto(GStrv) level1 = view_names (layers, theme_rel);

  for (gsize i = 0; level1 != NULL && level1[i] != NULL; i++)
    {
      const char *a_name = level1[i];
      g_autofree char *a_rel = g_build_filename (theme_rel, a_name, NULL);
      g_auto(GStrv) level2 = view_names (layers, a_rel);

      for (gsize j = 0; level2 != NULL && level2[j] != NULL; j++)
        {
          const char *b_name = level2[j];
          int size = parse_size_dir (a_name);
          const char *context = b_name;
          g_autofree char *sdir = NULL;
          g_autofree char *b_rel = NULL;
          g_autofree char *b_real = NULL;
          g_autoptr(GPtrArray) files = NULL;

          if (size == 0)
            {
              size = parse_size_dir (b_name);
              context = a_name;
            }
          if (size == 0 || (sdir = size_dir_name (size)) == NULL)
            continue;
          b_rel = g_build_filename (a_rel, b_name, NULL);
          files = gl_view_dir_entries (layers, g_strv_length ((GStrv) layers), b_rel,
                                       GL_VIEW_FOLLOW_LINKS, &b_real);
          if (files != NULL)
            g_ptr_array_sort (files, compare_entries);
          for (guint k = 0; files != NULL && k < files->len; k++)
            {
              const GlViewEntry *entry = files->pdata[k];
              const char *file = entry->name;
              const char *dot = strrchr (file, '.');
              g_autofree char *name = NULL;
              IndexedFile *found;
              GHashTable *sizes;

              if (entry->type == DT_DIR || dot == NULL || dot == file ||
                  !g_strv_contains (icon_exts, dot + 1) ||
                  (size < 0) != (strcmp (dot + 1, "svg") == 0))
                continue;
              name = g_strndup (file, dot - file);
              sizes = g_hash_table_lookup (names, name);
              if (sizes == NULL)
                {
                  sizes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                 (GDestroyNotify) indexed_file_free);
                  g_hash_table_insert (names, g_strdup (name), sizes);
                }
              /* first extension wins (png, svg, xpm order is by name here:
               * keep png over xpm), "apps" contexts over others */
              if (g_hash_table_contains (sizes, sdir) && strcmp (context, "apps") != 0)
                continue;
              if (g_hash_table_contains (sizes, sdir) && strcmp (dot + 1, "xpm") == 0)
                continue;
              found = g_new0 (IndexedFile, 1);
              found->layer = entry->type == DT_REG ? entry->layer : G_MAXSIZE;
              found->path = entry->type == DT_REG
                            ? g_build_filename (layers[entry->layer], b_real, file, NULL)
                            : g_build_filename (b_rel, file, NULL);
              g_hash_table_insert (sizes, g_strdup (sdir), found);
            }
        }
    }
  return names;
}

GlIconIndex *
gl_icon_index_new (const char * const *roots)
{
  GlIconIndex *index = g_new0 (GlIconIndex, 1);
  g_auto(GStrv) themes = view_names (roots, "usr/share/icons");

  index->roots = g_strdupv ((GStrv) roots);
  index->themes = g_ptr_array_new_with_free_func ((GDestroyNotify) g_hash_table_unref);
  g_ptr_array_add (index->themes, index_theme (roots, "usr/share/icons/hicolor"));
  for (gsize t = 0; themes != NULL && themes[t] != NULL; t++)
    {
      g_autofree char *rel = NULL;

      if (strcmp (themes[t], "hicolor") == 0)
        continue;
      rel = g_build_filename ("usr/share/icons", themes[t], NULL);
      g_ptr_array_add (index->themes, index_theme (roots, rel));
    }
  return index;
}

void
gl_icon_index_free (GlIconIndex *index)
{
  if (index == NULL)
    return;
  g_strfreev (index->roots);
  g_ptr_array_unref (index->themes);
  g_free (index);
}

static GPtrArray *
resolve (const char * const *roots, GlIconIndex *index, const char *icon);

GPtrArray *
gl_icon_index_resolve (GlIconIndex *index, const char *icon)
{
  return resolve ((const char * const *) index->roots, index, icon);
}

GPtrArray *
gl_icon_resolve (const char * const *roots, const char *icon)
{
  g_autoptr(GlIconIndex) index = gl_icon_index_new (roots);

  return resolve (roots, index, icon);
}

/* the themed part through the index */
static gboolean
index_lookup (GlIconIndex *index, const char *name, GPtrArray *result)
{
  for (guint t = 0; t < index->themes->len; t++)
    {
      GHashTable *sizes = g_hash_table_lookup (index->themes->pdata[t], name);
      GHashTableIter iter;
      gpointer key, value;

      if (sizes == NULL)
        continue;
      g_hash_table_iter_init (&iter, sizes);
      while (g_hash_table_iter_next (&iter, &key, &value))
        {
          const IndexedFile *f = value;
          const char *root = f->layer != G_MAXSIZE ? index->roots[f->layer] : NULL;
          g_autofree char *real = f->layer != G_MAXSIZE
                                  ? g_strdup (f->path)
                                  : view_file ((const char * const *) index->roots, f->path, &root);
          const char *dot = strrchr (f->path, '.');

          /* (reading it checks it again: gl_tree_read) */
          if (real != NULL)
            g_ptr_array_add (result, icon_file_new (root, real, key, dot + 1));
        }
      if (result->len > 0)
        {
          g_ptr_array_sort (result, compare_icon_files);
          return TRUE;
        }
    }
  return FALSE;
}

/* The unthemed icon file @rel of the view over @roots added to @result:
 * TRUE if it is one */
static gboolean
add_single_file (const char * const *roots, const char *rel, GPtrArray *result)
{
  const char *root = NULL;
  g_autofree char *real = view_file (roots, rel, &root);
  GlIconFile *f;

  if (real == NULL || (f = single_file (root, real)) == NULL)
    return FALSE;
  g_ptr_array_add (result, f);
  return TRUE;
}

static GPtrArray *
resolve (const char * const *roots, GlIconIndex *index, const char *icon)
{
  g_autoptr(GPtrArray) result = g_ptr_array_new_with_free_func ((GDestroyNotify) gl_icon_file_free);
  g_autofree char *name = NULL;

  if (icon == NULL || *icon == '\0')
    return g_steal_pointer (&result);

  if (icon[0] == '/')
    {
      add_single_file (roots, icon, result);
      return g_steal_pointer (&result);
    }

  if (strchr (icon, '/') != NULL)
    return g_steal_pointer (&result);

  name = g_strdup (icon);
  for (gsize k = 0; icon_exts[k] != NULL; k++)
    if (g_str_has_suffix (name, icon_exts[k]) &&
        strlen (name) > strlen (icon_exts[k]) + 1 &&
        name[strlen (name) - strlen (icon_exts[k]) - 1] == '.')
      name[strlen (name) - strlen (icon_exts[k]) - 1] = '\0';

  /* themes: hicolor first, then the others in name order */
  if (index_lookup (index, name, result))
    return g_steal_pointer (&result);

  /* unthemed: share/icons/<name>.<ext>, share/pixmaps/<name>[.<ext>] */
  {
    static const char * const dirs[] = { "usr/share/icons", "usr/share/pixmaps", NULL };

    for (gsize d = 0; dirs[d] != NULL; d++)
      {
        for (gsize k = 0; icon_exts[k] != NULL; k++)
          {
            g_autofree char *file = g_strdup_printf ("%s.%s", name, icon_exts[k]);
            g_autofree char *rel = g_build_filename (dirs[d], file, NULL);

            if (add_single_file (roots, rel, result))
              return g_steal_pointer (&result);
          }
      }
  }
  return g_steal_pointer (&result);
}
