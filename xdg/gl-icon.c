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

/* by name, the kind letter aside */
static gint
compare_typed (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char * const *) a + 1, *(const char * const *) b + 1);
}

/* The entries of @path, sorted, each prefixed with its kind from the
 * listing itself: 'd' a directory, 'f' a regular file, '?' anything that
 * needs a look (a link, or a file system without d_type). */
static GStrv
list_dir_typed (const char *path)
{
  DIR *dir = opendir (path);
  g_autoptr(GPtrArray) names = g_ptr_array_new ();
  struct dirent *d;

  if (dir == NULL)
    return NULL;
  while ((d = readdir (dir)) != NULL)
    {
      char kind = d->d_type == DT_DIR ? 'd' : d->d_type == DT_REG ? 'f' : '?';

      if (strcmp (d->d_name, ".") == 0 || strcmp (d->d_name, "..") == 0)
        continue;
      if (d->d_type != DT_DIR && d->d_type != DT_REG && d->d_type != DT_LNK && d->d_type != DT_UNKNOWN)
        continue;
      g_ptr_array_add (names, g_strdup_printf ("%c%s", kind, d->d_name));
    }
  closedir (dir);
  g_ptr_array_sort (names, compare_typed);
  g_ptr_array_add (names, NULL);
  return (GStrv) g_ptr_array_free (g_steal_pointer (&names), FALSE);
}

/* The directory @name (a typed entry) of the resolved directory @dir_real,
 * @rel inside @root: its host path, or NULL if it is none. */
static char *
sub_dir (const char *root, const char *dir_real, const char *rel, const char *typed)
{
  g_autofree char *real = NULL;

  if (typed[0] == 'd')
    return g_build_filename (dir_real, typed + 1, NULL);
  if (typed[0] == 'f')
    return NULL;
  real = gl_tree_resolve (root, rel);
  if (real == NULL || !g_file_test (real, G_FILE_TEST_IS_DIR))
    return NULL;
  return g_steal_pointer (&real);
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

/* Per root: the themes in lookup order, each a table
 * icon name -> (size dir -> relative path of the file). */
typedef struct {
  char *root;
  GPtrArray *themes;   /* GHashTable*, hicolor first */
} RootIndex;

struct _GlIconIndex {
  GStrv roots;
  GPtrArray *per_root;  /* RootIndex* */
};

static void
root_index_free (RootIndex *ri)
{
  g_free (ri->root);
  g_ptr_array_unref (ri->themes);
  g_free (ri);
}

static void
hash_table_unref0 (gpointer p)
{
  if (p != NULL)
    g_hash_table_unref (p);
}

/* Lists <theme>/{A}/{B}/ once: every icon file in it by name and size,
 * from the directory listings alone (no stat per file).  A value is the
 * host path after '=' for a regular file seen in a resolved directory, or
 * the path inside the root, resolved on lookup, for a link. */
static GHashTable *
index_theme (const char *root, const char *theme_rel)
{
  GHashTable *names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, hash_table_unref0);
  g_autofree char *theme_dir = gl_tree_resolve (root, theme_rel);
  g_auto(GStrv) level1 = NULL;

  if (theme_dir == NULL || (level1 = list_dir_typed (theme_dir)) == NULL)
    return names;
  for (gsize i = 0; level1[i] != NULL; i++)
    {
      const char *a_name = level1[i] + 1;
      g_autofree char *a_rel = g_build_filename (theme_rel, a_name, NULL);
      g_autofree char *a_dir = sub_dir (root, theme_dir, a_rel, level1[i]);
      g_auto(GStrv) level2 = NULL;

      if (a_dir == NULL || (level2 = list_dir_typed (a_dir)) == NULL)
        continue;
      for (gsize j = 0; level2[j] != NULL; j++)
        {
          const char *b_name = level2[j] + 1;
          int size = parse_size_dir (a_name);
          const char *context = b_name;
          g_autofree char *sdir = NULL;
          g_autofree char *b_rel = NULL;
          g_autofree char *b_dir = NULL;
          g_auto(GStrv) files = NULL;

          if (size == 0)
            {
              size = parse_size_dir (b_name);
              context = a_name;
            }
          if (size == 0 || (sdir = size_dir_name (size)) == NULL)
            continue;
          b_rel = g_build_filename (a_rel, b_name, NULL);
          b_dir = sub_dir (root, a_dir, b_rel, level2[j]);
          if (b_dir == NULL || (files = list_dir_typed (b_dir)) == NULL)
            continue;
          for (gsize k = 0; files[k] != NULL; k++)
            {
              const char *file = files[k] + 1;
              const char *dot = strrchr (file, '.');
              g_autofree char *name = NULL;
              GHashTable *sizes;

              if (files[k][0] == 'd' || dot == NULL || dot == file ||
                  !g_strv_contains (icon_exts, dot + 1) ||
                  (size < 0) != (strcmp (dot + 1, "svg") == 0))
                continue;
              name = g_strndup (file, dot - file);
              sizes = g_hash_table_lookup (names, name);
              if (sizes == NULL)
                {
                  sizes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
                  g_hash_table_insert (names, g_strdup (name), sizes);
                }
              /* first extension wins (png, svg, xpm order is by name here:
               * keep png over xpm), "apps" contexts over others */
              if (g_hash_table_contains (sizes, sdir) && strcmp (context, "apps") != 0)
                continue;
              if (g_hash_table_contains (sizes, sdir) && strcmp (dot + 1, "xpm") == 0)
                continue;
              g_hash_table_insert (sizes, g_strdup (sdir),
                                   files[k][0] == 'f'
                                   ? g_strconcat ("=", b_dir, "/", file, NULL)
                                   : g_build_filename (b_rel, file, NULL));
            }
        }
    }
  return names;
}

GlIconIndex *
gl_icon_index_new (const char * const *roots)
{
  GlIconIndex *index = g_new0 (GlIconIndex, 1);

  index->roots = g_strdupv ((GStrv) roots);
  index->per_root = g_ptr_array_new_with_free_func ((GDestroyNotify) root_index_free);
  for (gsize r = 0; roots[r] != NULL; r++)
    {
      RootIndex *ri = g_new0 (RootIndex, 1);
      g_autofree char *icons_dir = gl_tree_resolve (roots[r], "usr/share/icons");
      g_auto(GStrv) themes = icons_dir != NULL ? list_dir_typed (icons_dir) : NULL;

      ri->root = g_strdup (roots[r]);
      ri->themes = g_ptr_array_new_with_free_func ((GDestroyNotify) g_hash_table_unref);
      g_ptr_array_add (ri->themes, index_theme (roots[r], "usr/share/icons/hicolor"));
      for (gsize t = 0; themes != NULL && themes[t] != NULL; t++)
        {
          g_autofree char *rel = NULL;

          if (themes[t][0] == 'f' || strcmp (themes[t] + 1, "hicolor") == 0)
            continue;
          rel = g_build_filename ("usr/share/icons", themes[t] + 1, NULL);
          g_ptr_array_add (ri->themes, index_theme (roots[r], rel));
        }
      g_ptr_array_add (index->per_root, ri);
    }
  return index;
}

void
gl_icon_index_free (GlIconIndex *index)
{
  if (index == NULL)
    return;
  g_strfreev (index->roots);
  g_ptr_array_unref (index->per_root);
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
  for (guint r = 0; r < index->per_root->len; r++)
    {
      RootIndex *ri = index->per_root->pdata[r];

      for (guint t = 0; t < ri->themes->len; t++)
        {
          GHashTable *sizes = g_hash_table_lookup (ri->themes->pdata[t], name);
          GHashTableIter iter;
          gpointer key, value;

          if (sizes == NULL)
            continue;
          g_hash_table_iter_init (&iter, sizes);
          while (g_hash_table_iter_next (&iter, &key, &value))
            {
              const char *v = value;
              g_autofree char *real = v[0] == '=' ? g_strdup (v + 1) : gl_tree_resolve (ri->root, v);
              const char *dot = strrchr (v, '.');

              /* a regular file seen in the listing needs no second look:
               * reading it checks it again (gl_tree_read) */
              if (real != NULL && (v[0] == '=' || g_file_test (real, G_FILE_TEST_IS_REGULAR)))
                g_ptr_array_add (result, icon_file_new (ri->root, real, key, dot + 1));
            }
          if (result->len > 0)
            {
              g_ptr_array_sort (result, compare_icon_files);
              return TRUE;
            }
        }
    }
  return FALSE;
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
      for (gsize r = 0; roots[r] != NULL; r++)
        {
          g_autofree char *real = gl_tree_resolve (roots[r], icon);
          GlIconFile *f;

          if (real != NULL && g_file_test (real, G_FILE_TEST_IS_REGULAR) &&
              (f = single_file (roots[r], real)) != NULL)
            {
              g_ptr_array_add (result, f);
              break;
            }
        }
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
  for (gsize r = 0; roots[r] != NULL; r++)
    {
      static const char * const dirs[] = { "usr/share/icons", "usr/share/pixmaps", NULL };

      for (gsize d = 0; dirs[d] != NULL; d++)
        {
          for (gsize k = 0; icon_exts[k] != NULL; k++)
            {
              g_autofree char *file = g_strdup_printf ("%s.%s", name, icon_exts[k]);
              g_autofree char *rel = g_build_filename (dirs[d], file, NULL);
              g_autofree char *real = gl_tree_resolve (roots[r], rel);
              GlIconFile *f;

              if (real != NULL && g_file_test (real, G_FILE_TEST_IS_REGULAR) &&
                  (f = single_file (roots[r], real)) != NULL)
                {
                  g_ptr_array_add (result, f);
                  return g_steal_pointer (&result);
                }
            }
        }
    }
  return g_steal_pointer (&result);
}
