/* test-changes.c: reading and purging a user's layer, against a fake
 * host tree and a layer laid out as overlayfs (userxattr) leaves it.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <errno.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "gl-changes.h"
#include "gl-test-skip.h"

typedef struct {
  char *host;      /* fake host root */
  char *user_dir;  /* <sandbox>/users/<uid> */
  gboolean have_whiteouts;
  gboolean have_opaque;
} Fixture;

static void
put (const char *path, const char *content)
{
  g_autofree char *dir = g_path_get_dirname (path);

  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  g_assert_true (g_file_set_contents (path, content, -1, NULL));
}

static void
setup (Fixture *f, gconstpointer data)
{
  g_autofree char *base = g_build_filename (g_get_user_cache_dir (), "changes", NULL);
  char *p = NULL;

  f->host = g_build_filename (base, "host", NULL);
  f->user_dir = g_build_filename (base, "sandbox", "users", "1000", NULL);

  /* the host: /home/u/{keep,edit,gone,dir/x}, /tmp/t */
  put ((p = g_build_filename (f->host, "home/u/keep", NULL)), "k"); g_free (p);
  put ((p = g_build_filename (f->host, "home/u/edit", NULL)), "old"); g_free (p);
  put ((p = g_build_filename (f->host, "home/u/gone", NULL)), "g"); g_free (p);
  put ((p = g_build_filename (f->host, "home/u/dir/x", NULL)), "x"); g_free (p);
  put ((p = g_build_filename (f->host, "tmp/t", NULL)), "t"); g_free (p);

  /* the layer: edit modified, new added, gone deleted, dir replaced, /tmp/n added */
  put ((p = g_build_filename (f->user_dir, "home/upper/edit", NULL)), "new"); g_free (p);
  put ((p = g_build_filename (f->user_dir, "home/upper/sub/new file", NULL)), "n"); g_free (p);
  put ((p = g_build_filename (f->user_dir, "tmp/upper/n", NULL)), "n"); g_free (p);
  g_assert_cmpint (g_mkdir_with_parents ((p = g_build_filename (f->user_dir, "home/work/work", NULL)), 0755), ==, 0);
  g_assert_cmpint (chmod (p, 0), ==, 0);  /* as overlayfs leaves it */
  g_free (p);

  p = g_build_filename (f->user_dir, "home/upper/gone", NULL);
  f->have_whiteouts = mknod (p, S_IFCHR | 0000, makedev (0, 0)) == 0;
  g_free (p);

  p = g_build_filename (f->user_dir, "home/upper/dir", NULL);
  g_assert_cmpint (g_mkdir_with_parents (p, 0755), ==, 0);
  f->have_opaque = lsetxattr (p, "user.overlay.opaque", "y", 1, 0) == 0;
  g_free (p);
}

static void
teardown (Fixture *f, gconstpointer data)
{
  g_free (f->host);
  g_free (f->user_dir);
}

static const char *
kind_of (GPtrArray *changes, const char *path)
{
  for (guint i = 0; i < changes->len; i++)
    {
      GlChange *c = changes->pdata[i];
      if (g_str_equal (c->path, path))
        return gl_change_kind_to_string (c->kind);
    }
  return NULL;
}

static void
test_list (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) changes = gl_changes_list (f->user_dir, "/home/u", 1000, f->host, NULL, &error);
  guint expected = 4;

  g_assert_no_error (error);
  g_assert_cmpstr (kind_of (changes, "/home/u/edit"), ==, "modified");
  g_assert_cmpstr (kind_of (changes, "/home/u/sub"), ==, "added");
  g_assert_cmpstr (kind_of (changes, "/home/u/sub/new file"), ==, "added");
  g_assert_cmpstr (kind_of (changes, "/tmp/n"), ==, "added");
  g_assert_null (kind_of (changes, "/home/u/keep"));
  if (f->have_whiteouts)
    {
      g_assert_cmpstr (kind_of (changes, "/home/u/gone"), ==, "deleted");
      expected++;
    }
  if (f->have_opaque)
    {
      g_assert_cmpstr (kind_of (changes, "/home/u/dir"), ==, "replaced");
      expected++;
    }
  g_assert_cmpuint (changes->len, ==, expected);
  if (!f->have_whiteouts)
    gl_test_skip ("mknod of a whiteout is not permitted here (run as root): deletions not checked");
  if (!f->have_opaque)
    gl_test_skip ("no user xattrs on this file system (user.overlay.opaque): replaced directories not checked");

  /* sorted by path */
  for (guint i = 1; i < changes->len; i++)
    g_assert_cmpint (g_strcmp0 (((GlChange *) changes->pdata[i - 1])->path,
                                ((GlChange *) changes->pdata[i])->path), <, 0);
}

static void
test_filter (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) changes = gl_changes_list (f->user_dir, "/home/u", 1000, f->host, "/home/u/sub", &error);

  g_assert_no_error (error);
  g_assert_cmpuint (changes->len, ==, 2);
  g_assert_cmpstr (kind_of (changes, "/home/u/sub/new file"), ==, "added");
  g_clear_pointer (&changes, g_ptr_array_unref);

  /* /home/u/subway is not under /home/u/sub */
  changes = gl_changes_list (f->user_dir, "/home/u", 1000, f->host, "/home/u/su", &error);
  g_assert_cmpuint (changes->len, ==, 0);
  g_clear_pointer (&changes, g_ptr_array_unref);

  g_assert_null (gl_changes_list (f->user_dir, "/home/u", 1000, f->host, "relative", &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
}

static void
test_purge (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) changes = NULL;
  g_autofree char *host_edit = g_build_filename (f->host, "home/u/edit", NULL);
  g_autofree char *content = NULL;

  /* part: only under /home/u/sub */
  g_assert_true (gl_changes_purge (f->user_dir, "/home/u", 1000, "/home/u/sub", NULL, &error));
  g_assert_no_error (error);
  changes = gl_changes_list (f->user_dir, "/home/u", 1000, f->host, NULL, &error);
  g_assert_null (kind_of (changes, "/home/u/sub/new file"));
  g_assert_cmpstr (kind_of (changes, "/home/u/edit"), ==, "modified");
  g_assert_cmpstr (kind_of (changes, "/tmp/n"), ==, "added");
  g_clear_pointer (&changes, g_ptr_array_unref);

  /* all, including overlayfs' mode-0 work directory */
  g_assert_true (gl_changes_purge (f->user_dir, "/home/u", 1000, NULL, NULL, &error));
  g_assert_no_error (error);
  changes = gl_changes_list (f->user_dir, "/home/u", 1000, f->host, NULL, &error);
  g_assert_cmpuint (changes->len, ==, 0);

  /* the host was never touched */
  g_assert_true (g_file_get_contents (host_edit, &content, NULL, NULL));
  g_assert_cmpstr (content, ==, "old");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add ("/changes/list", Fixture, NULL, setup, test_list, teardown);
  g_test_add ("/changes/filter", Fixture, NULL, setup, test_filter, teardown);
  g_test_add ("/changes/purge", Fixture, NULL, setup, test_purge, teardown);
  return g_test_run ();
}
