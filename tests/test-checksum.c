/* test-checksum.c: checksum lists and file hashing
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "gl-checksum.h"

#define SUM_A "a3f1c0e2d4b5968778695a4b3c2d1e0f00112233445566778899aabbccddeeff"
#define SUM_B "B3F1C0E2D4B5968778695A4B3C2D1E0F00112233445566778899AABBCCDDEEFF"
#define SUM_C "c3f1c0e2d4b5968778695a4b3c2d1e0f00112233445566778899aabbccddeeff"

static void
test_checksum_list (void)
{
  static const struct {
    const char *list;
    const char *name;
    const char *sum;   /* NULL: an error naming the file */
  } cases[] = {
    /* GNU text mode */
    { SUM_A "  rootfs.tar.xz\n" SUM_C "  other.tar.xz\n", "rootfs.tar.xz", SUM_A },
    { SUM_A "  rootfs.tar.xz\n" SUM_C "  other.tar.xz\n", "other.tar.xz", SUM_C },
    /* GNU binary mode, upper case sum, CRLF */
    { SUM_B " *ubuntu-base-24.04-base-amd64.tar.gz\r\n", "ubuntu-base-24.04-base-amd64.tar.gz",
      "b3f1c0e2d4b5968778695a4b3c2d1e0f00112233445566778899aabbccddeeff" },
    /* BSD style, inside a PGP clear-signed list (Fedora CHECKSUM) */
    { "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\n"
      "# Fedora-Container-Base.x86_64.tar.xz: 1234 bytes\n"
      "SHA256 (Fedora-Container-Base.x86_64.tar.xz) = " SUM_A "\n"
      "-----BEGIN PGP SIGNATURE-----\nabc\n", "Fedora-Container-Base.x86_64.tar.xz", SUM_A },
    /* "./name" and "dir/name" entries */
    { SUM_A "  ./alpine-minirootfs.tar.gz\n", "alpine-minirootfs.tar.gz", SUM_A },
    { SUM_C "  iso/archlinux-bootstrap-x86_64.tar.zst\n", "archlinux-bootstrap-x86_64.tar.zst", SUM_C },
    /* an exact entry wins over a basename one */
    { SUM_C "  sub/a.tar\n" SUM_A "  a.tar\n", "a.tar", SUM_A },
    /* other algorithms and a similar name do not count */
    { "MD5 (a.tar) = 0123456789abcdef0123456789abcdef\n" SUM_A "  a.tar.sig\n", "a.tar", NULL },
    { "", "a.tar", NULL },
    { SUM_A "  b.tar\n", "a.tar", NULL },
    /* conflicting sums for one name */
    { SUM_A "  a.tar\n" SUM_C "  a.tar\n", "a.tar", NULL },
  };
  gsize i;

  for (i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *sum = gl_checksum_find_in_list (cases[i].list, cases[i].name, &error);

      if (cases[i].sum != NULL)
        {
          g_assert_no_error (error);
          g_assert_cmpstr (sum, ==, cases[i].sum);
        }
      else
        {
          g_assert_null (sum);
          g_assert_error (error, GL_CHECKSUM_ERROR, GL_CHECKSUM_ERROR_NOT_LISTED);
          g_assert_nonnull (strstr (error->message, cases[i].name));
        }
    }
}

static void
test_checksum_file (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *path = g_build_filename (g_get_user_cache_dir (), "hello", NULL);
  g_autofree char *missing = g_build_filename (g_get_user_cache_dir (), "missing", NULL);
  g_autofree char *sum = NULL;

  g_assert_cmpint (g_mkdir_with_parents (g_get_user_cache_dir (), 0755), ==, 0);
  g_file_set_contents (path, "hello\n", -1, &error);
  g_assert_no_error (error);
  sum = gl_checksum_file_sha256 (path, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (sum, ==, "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03");

  g_assert_null (gl_checksum_file_sha256 (missing, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  g_assert_nonnull (strstr (error->message, missing));
  g_clear_error (&error);

  /* through a descriptor, which stays open */
  {
    int fd = open (path, O_RDONLY | O_CLOEXEC);
    g_autofree char *fd_sum = NULL;

    g_assert_cmpint (fd, >=, 0);
    fd_sum = gl_checksum_fd_sha256 (fd, path, NULL, &error);
    g_assert_no_error (error);
    g_assert_cmpstr (fd_sum, ==, sum);
    g_assert_cmpint (fcntl (fd, F_GETFD), >=, 0);
    close (fd);
  }
}

/* Only real entries are names: a clear-signed list's "Hash: SHA256"
 * header, comments, signature lines and other algorithms are not files. */
static void
test_checksum_names (void)
{
  const char *list =
    "-----BEGIN PGP SIGNED MESSAGE-----\n"
    "Hash: SHA256\n"
    "\n"
    "# Fedora-Container-Base.x86_64.oci.tar.xz: 1234 bytes\n"
    "SHA256 (Fedora-Container-Base.x86_64.oci.tar.xz) = " SUM_A "\n"
    "- " SUM_C "  ./dash-escaped.tar\n"
    "MD5 (a.tar) = 0123456789abcdef0123456789abcdef\n"
    "deadbeef  short-sum.tar\n"
    "SHA256  word-pair\n"
    "-----BEGIN PGP SIGNATURE-----\n"
    "iQIzBAEBCAAdFiEE abc\n"
    "-----END PGP SIGNATURE-----\n";
  const char *want[] = { "Fedora-Container-Base.x86_64.oci.tar.xz", "dash-escaped.tar", NULL };
  g_auto(GStrv) names = gl_checksum_list_names (list);

  g_assert_cmpstrv (names, want);
  g_assert_true (gl_checksum_is_sha256 (SUM_B));
  g_assert_false (gl_checksum_is_sha256 ("SHA256"));
  g_assert_false (gl_checksum_is_sha256 (SUM_A "0"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/checksum/list", test_checksum_list);
  g_test_add_func ("/checksum/names", test_checksum_names);
  g_test_add_func ("/checksum/file", test_checksum_file);
  return g_test_run ();
}
