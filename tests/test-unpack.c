/* test-unpack.c: gl-unpack with archives built by the test
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-unpack.h"
#include "gl-test-skip.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <gio/gio.h>
#include <glib/gstdio.h>

typedef struct {
  char *top;       /* the per-test directory */
  char *src;       /* a tree to pack */
  char *dest;      /* an empty directory to unpack into */
  gboolean has_xattr;
} Fixture;

static void
run_ok (const char *const *argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) proc = g_subprocess_newv (argv, G_SUBPROCESS_FLAGS_NONE, &error);

  g_assert_no_error (error);
  g_subprocess_wait_check (proc, NULL, &error);
  g_assert_no_error (error);
}

static char *
child (Fixture *f, const char *dir, const char *name)
{
  return g_build_filename (dir, name, NULL);
}

static void
make_file (const char *path, const char *contents, mode_t mode)
{
  g_autoptr(GError) error = NULL;

  g_file_set_contents (path, contents, -1, &error);
  g_assert_no_error (error);
  g_assert_cmpint (g_chmod (path, mode), ==, 0);
}

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  g_autofree char *etc = NULL;
  g_autofree char *bin = NULL;
  g_autofree char *private_dir = NULL;
  g_autofree char *path = NULL;

  f->top = g_build_filename (g_get_user_cache_dir (), "unpack", NULL);
  f->src = g_build_filename (f->top, "src", NULL);
  f->dest = g_build_filename (f->top, "dest", NULL);
  etc = g_build_filename (f->src, "etc", NULL);
  bin = g_build_filename (f->src, "bin", NULL);
  private_dir = g_build_filename (f->src, "private", NULL);
  g_assert_cmpint (g_mkdir_with_parents (etc, 0755), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (bin, 0755), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (private_dir, 0750), ==, 0);
  g_assert_cmpint (g_chmod (private_dir, 0750), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (f->dest, 0755), ==, 0);

  path = child (f, etc, "secret");
  make_file (path, "secret\n", 0600);
  if (geteuid () == 0)
    g_assert_cmpint (lchown (path, 1234, 5678), ==, 0);
  f->has_xattr = setxattr (path, "user.glimpse", "hello", 5, 0) == 0;
  g_free (path);

  path = child (f, bin, "tool");
  make_file (path, "#!/bin/sh\necho hi\n", 0755);
  g_free (path);
  path = child (f, f->src, "link");
  g_assert_cmpint (symlink ("etc/secret", path), ==, 0);
  g_free (path);
  path = child (f, f->src, "abslink");
  g_assert_cmpint (symlink ("/etc/os-release", path), ==, 0);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  g_free (f->top);
  g_free (f->src);
  g_free (f->dest);
}

/* Packs f->src as ARCHIVE with tar and the given compression flag. */
static char *
pack (Fixture *f, const char *name, const char *flag)
{
  g_autofree char *archive = g_build_filename (f->top, name, NULL);
  const char *argv[] = { "tar", "--create", "--numeric-owner", "--xattrs",
                         "--file", archive, "--directory", f->src,
                         flag != NULL ? flag : ".", flag != NULL ? "." : NULL, NULL };

  run_ok (argv);
  return g_steal_pointer (&archive);
}

static void
assert_mode (const char *path, mode_t type, mode_t mode)
{
  GStatBuf st;

  g_assert_cmpint (g_lstat (path, &st), ==, 0);
  g_assert_cmpint (st.st_mode & S_IFMT, ==, type);
  if (type != S_IFLNK)
    g_assert_cmpint (st.st_mode & 07777, ==, mode);
}

static void
assert_unpacked (Fixture *f, const char *root)
{
  g_autofree char *secret = g_build_filename (root, "etc", "secret", NULL);
  g_autofree char *tool = g_build_filename (root, "bin", "tool", NULL);
  g_autofree char *private_dir = g_build_filename (root, "private", NULL);
  g_autofree char *link = g_build_filename (root, "link", NULL);
  g_autofree char *abslink = g_build_filename (root, "abslink", NULL);
  g_autofree char *contents = NULL;
  g_autofree char *target = NULL;
  g_autoptr(GError) error = NULL;

  assert_mode (secret, S_IFREG, 0600);
  assert_mode (tool, S_IFREG, 0755);
  assert_mode (private_dir, S_IFDIR, 0750);
  assert_mode (link, S_IFLNK, 0);
  assert_mode (abslink, S_IFLNK, 0);

  g_file_get_contents (secret, &contents, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (contents, ==, "secret\n");
  target = g_file_read_link (link, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (target, ==, "etc/secret");
  g_free (target);
  target = g_file_read_link (abslink, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (target, ==, "/etc/os-release");

  if (geteuid () == 0)
    {
      GStatBuf st;

      g_assert_cmpint (g_lstat (secret, &st), ==, 0);
      g_assert_cmpint (st.st_uid, ==, 1234);
      g_assert_cmpint (st.st_gid, ==, 5678);
    }
  else
    gl_test_skip ("not root: owners not checked (run as root)");

  if (f->has_xattr)
    {
      char value[16] = "";
      ssize_t n = getxattr (secret, "user.glimpse", value, sizeof value - 1);

      g_assert_cmpint (n, ==, 5);
      g_assert_cmpstr (value, ==, "hello");
    }
  else
    gl_test_skip ("no user xattrs on this file system: xattrs not checked");
}

static void
test_formats (Fixture *f, gconstpointer data)
{
  const char *flag = data;   /* NULL, --gzip, --xz, --zstd */
  g_autoptr(GError) error = NULL;
  g_autofree char *name = g_strdup_printf ("rootfs.tar%s",
                                           flag == NULL ? "" :
                                           g_str_equal (flag, "--gzip") ? ".gz" :
                                           g_str_equal (flag, "--xz") ? ".xz" : ".zst");
  g_autofree char *archive = NULL;

  if (flag != NULL && g_str_equal (flag, "--zstd"))
    {
      g_autofree char *zstd = g_find_program_in_path ("zstd");
      if (zstd == NULL)
        {
          gl_test_skip ("zstd is not installed (apt install zstd)");
          return;
        }
    }

  archive = pack (f, name, flag);
  g_assert_true (gl_unpack_archive (archive, f->dest, NULL, &error));
  g_assert_no_error (error);
  assert_unpacked (f, f->dest);
}

static void
test_strip (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *archive = g_build_filename (f->top, "bootstrap.tar.gz", NULL);
  g_autofree char *rootdir = g_build_filename (f->top, "root.x86_64", NULL);
  g_autofree char *stray = g_build_filename (f->dest, "root.x86_64", NULL);
  const char *argv[] = { "tar", "--create", "--gzip", "--xattrs", "--file", archive,
                         "--directory", f->top, "root.x86_64", NULL };

  /* the Arch bootstrap layout: one top-level directory */
  g_assert_cmpint (g_rename (f->src, rootdir), ==, 0);
  run_ok (argv);
  g_assert_true (gl_unpack_archive_strip (archive, f->dest, 1, NULL, &error));
  g_assert_no_error (error);
  assert_unpacked (f, f->dest);
  g_assert_false (g_file_test (stray, G_FILE_TEST_EXISTS));
}

static void
test_hostile_names (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *script = NULL;
  g_autofree char *evil = g_build_filename (f->top, "evil", NULL);
  g_autofree char *abs_target = g_build_filename (f->top, "abs-evil", NULL);
  g_autofree char *dest_abs = g_build_filename (f->dest, abs_target, NULL);
  const char *cases[] = { "../evil", "a/../../evil", NULL /* absolute, below */ };
  gsize i;

  for (i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      const char *member = cases[i] != NULL ? cases[i] : abs_target;
      g_autofree char *archive = g_build_filename (f->top, "hostile.tar", NULL);
      g_autoptr(GDir) dir = NULL;

      g_free (script);
      script = g_strdup_printf ("import io, sys, tarfile\n"
                                "with tarfile.open(sys.argv[1], 'w') as t:\n"
                                "    i = tarfile.TarInfo('fine'); i.size = 2\n"
                                "    t.addfile(i, io.BytesIO(b'ok'))\n"
                                "    i = tarfile.TarInfo(sys.argv[2]); i.size = 5\n"
                                "    t.addfile(i, io.BytesIO(b'evil\\n'))\n");
      {
        const char *argv[] = { "python3", "-c", script, archive, member, NULL };
        run_ok (argv);
      }

      g_assert_false (gl_unpack_archive (archive, f->dest, NULL, &error));
      g_assert_error (error, GL_UNPACK_ERROR, GL_UNPACK_ERROR_UNSAFE);
      g_test_message ("%s", error->message);
      g_assert_nonnull (strstr (error->message, archive));
      g_assert_nonnull (strstr (error->message, member));
      g_clear_error (&error);

      /* nothing was written, inside or outside */
      g_assert_false (g_file_test (evil, G_FILE_TEST_EXISTS));
      g_assert_false (g_file_test (abs_target, G_FILE_TEST_EXISTS));
      g_assert_false (g_file_test (dest_abs, G_FILE_TEST_EXISTS));
      dir = g_dir_open (f->dest, 0, &error);
      g_assert_no_error (error);
      g_assert_null (g_dir_read_name (dir));
    }
}

static void
test_hostile_symlink (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *archive = g_build_filename (f->top, "symlink.tar", NULL);
  g_autofree char *outside = g_build_filename (f->top, "outside", NULL);
  g_autofree char *pwned = g_build_filename (outside, "pwned", NULL);
  const char *script =
    "import io, sys, tarfile\n"
    "with tarfile.open(sys.argv[1], 'w') as t:\n"
    "    i = tarfile.TarInfo('link'); i.type = tarfile.SYMTYPE; i.linkname = sys.argv[2]\n"
    "    t.addfile(i)\n"
    "    i = tarfile.TarInfo('link/pwned'); i.size = 5\n"
    "    t.addfile(i, io.BytesIO(b'evil\\n'))\n";
  const char *argv[] = { "python3", "-c", script, archive, outside, NULL };

  /* names are harmless, but the second member goes through a link */
  g_assert_cmpint (g_mkdir (outside, 0755), ==, 0);
  run_ok (argv);
  g_assert_false (gl_unpack_archive (archive, f->dest, NULL, &error));
  g_assert_error (error, GL_UNPACK_ERROR, GL_UNPACK_ERROR_FAILED);
  g_test_message ("%s", error->message);
  g_assert_false (g_file_test (pwned, G_FILE_TEST_EXISTS));
}

static void
test_corrupt (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *gz = g_build_filename (f->top, "corrupt.tar.gz", NULL);
  g_autofree char *junk = g_build_filename (f->top, "junk.tar", NULL);
  g_autofree char *good = pack (f, "good.tar.xz", "--xz");
  g_autofree char *truncated = g_build_filename (f->top, "truncated.tar.xz", NULL);
  g_autofree char *contents = NULL;
  gsize len = 0;
  const char *archives[3];
  gsize i;

  /* gzip magic, then garbage */
  g_file_set_contents (gz, "\x1f\x8b\x08\x00garbage garbage garbage garbage", 36, &error);
  g_assert_no_error (error);
  g_file_set_contents (junk, "this is not a tar archive at all\n", -1, &error);
  g_assert_no_error (error);
  g_file_get_contents (good, &contents, &len, &error);
  g_assert_no_error (error);
  g_file_set_contents (truncated, contents, len / 2, &error);
  g_assert_no_error (error);

  archives[0] = gz;
  archives[1] = junk;
  archives[2] = truncated;
  for (i = 0; i < G_N_ELEMENTS (archives); i++)
    {
      g_assert_false (gl_unpack_archive (archives[i], f->dest, NULL, &error));
      g_assert_error (error, GL_UNPACK_ERROR, GL_UNPACK_ERROR_FAILED);
      g_test_message ("%s", error->message);
      g_assert_nonnull (strstr (error->message, archives[i]));
      g_assert_nonnull (strstr (error->message, "tar said: "));
      g_clear_error (&error);
    }
}

static void
test_bad_dest (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *archive = pack (f, "rootfs.tar.gz", "--gzip");
  g_autofree char *missing = g_build_filename (f->top, "missing", NULL);
  g_autofree char *missing_archive = g_build_filename (f->top, "missing.tar", NULL);

  /* not empty */
  g_assert_false (gl_unpack_archive (archive, f->src, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_EMPTY);
  g_assert_nonnull (strstr (error->message, f->src));
  g_clear_error (&error);

  g_assert_false (gl_unpack_archive (archive, missing, NULL, &error));
  g_assert_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT);
  g_assert_nonnull (strstr (error->message, missing));
  g_clear_error (&error);

  g_assert_false (gl_unpack_archive (missing_archive, f->dest, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  g_assert_nonnull (strstr (error->message, missing_archive));
}

static void
test_missing_tool (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *archive = g_build_filename (f->top, "fake.tar.zst", NULL);
  g_autofree char *bindir = g_build_filename (f->top, "bin-tar-only", NULL);
  g_autofree char *tar = g_find_program_in_path ("tar");
  g_autofree char *tar_link = g_build_filename (bindir, "tar", NULL);
  g_autofree char *old_path = g_strdup (g_getenv ("PATH"));

  g_assert_nonnull (tar);
  g_assert_cmpint (g_mkdir (bindir, 0755), ==, 0);
  g_assert_cmpint (symlink (tar, tar_link), ==, 0);
  g_file_set_contents (archive, "\x28\xb5\x2f\xfd rest", 9, &error);
  g_assert_no_error (error);

  g_setenv ("PATH", bindir, TRUE);
  g_assert_false (gl_unpack_archive (archive, f->dest, NULL, &error));
  g_setenv ("PATH", old_path, TRUE);
  g_assert_error (error, GL_UNPACK_ERROR, GL_UNPACK_ERROR_MISSING_TOOL);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, "install zstd"));
  g_assert_nonnull (strstr (error->message, archive));
}

static void
test_cancelled (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autofree char *archive = pack (f, "rootfs.tar", NULL);

  g_cancellable_cancel (cancellable);
  g_assert_false (gl_unpack_archive (archive, f->dest, cancellable, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

#define ADD(path, data, func) \
  g_test_add (path, Fixture, data, fixture_setup, func, fixture_teardown)
  ADD ("/unpack/tar", NULL, test_formats);
  ADD ("/unpack/tar.gz", "--gzip", test_formats);
  ADD ("/unpack/tar.xz", "--xz", test_formats);
  ADD ("/unpack/tar.zst", "--zstd", test_formats);
  ADD ("/unpack/strip-components", NULL, test_strip);
  ADD ("/unpack/hostile-names", NULL, test_hostile_names);
  ADD ("/unpack/hostile-symlink", NULL, test_hostile_symlink);
  ADD ("/unpack/corrupt", NULL, test_corrupt);
  ADD ("/unpack/bad-dest", NULL, test_bad_dest);
  ADD ("/unpack/missing-tool", NULL, test_missing_tool);
  ADD ("/unpack/cancelled", NULL, test_cancelled);
#undef ADD

  return g_test_run ();
}
