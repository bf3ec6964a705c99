/* test-apt-index.c: Release and Packages parsing, decompression, dates
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-apt-index.h"
#include "gl-apt-release.h"
#include "gl-test-http.h"
#include "gl-test-tmpdir.h"

#include <lzma.h>
#include <string.h>
#include <glib/gstdio.h>

static const char packages[] =
  "Package: hello\r\n"
  "Version: 2.10-3\r\n"
  "Architecture: amd64\r\n"
  "Description: the classic greeting\r\n"
  " a continuation line: Version: 9.9 must not count\r\n"
  "\r\n"
  "Package: docs\n"
  "Architecture: all\n"
  "Version: 1:1.1-1\n"
  "Phased-Update-Percentage: 30\n"
  "\n\n"
  "package: lower\n"
  "version: 0.1~rc1\n"
  "architecture: i386\n";

static void
check_entries (GlAptIndex *index)
{
  const GlAptIndexEntry *e;

  g_assert_cmpuint (gl_apt_index_get_size (index), ==, 3);
  e = gl_apt_index_get (index, 0);
  g_assert_cmpstr (e->name, ==, "hello");
  g_assert_cmpstr (e->version, ==, "2.10-3");
  g_assert_cmpstr (e->arch, ==, "amd64");
  g_assert_cmpuint (e->phased, ==, 100);
  e = gl_apt_index_get (index, 1);
  g_assert_cmpstr (e->name, ==, "docs");
  g_assert_cmpstr (e->version, ==, "1:1.1-1");
  g_assert_cmpstr (e->arch, ==, "all");
  g_assert_cmpuint (e->phased, ==, 30);
  e = gl_apt_index_get (index, 2);
  g_assert_cmpstr (e->name, ==, "lower");
  g_assert_cmpstr (e->version, ==, "0.1~rc1");
}

/* Every way of cutting the text into two or three pieces parses alike. */
static void
test_parser_chunks (void)
{
  gsize len = strlen (packages);

  for (gsize step = 1; step <= len; step += (step < 8 ? 1 : 7))
    {
      g_autoptr(GlAptIndex) index = gl_apt_index_new ();
      g_autoptr(GlAptIndexParser) p = gl_apt_index_parser_new (index, "test");
      g_autoptr(GError) error = NULL;

      for (gsize off = 0; off < len; off += step)
        g_assert_true (gl_apt_index_parser_feed (p, packages + off, MIN (step, len - off), &error));
      g_assert_true (gl_apt_index_parser_finish (p, &error));
      g_assert_no_error (error);
      check_entries (index);
    }
}

static void
test_parser_errors (void)
{
  static const struct { const char *text; const char *says; } bad[] = {
    { "Package: a\nArchitecture: all\n\n", "lacks Version" },
    { "Version: 1\nArchitecture: all\n\n", "lacks Package" },
    { "Package: a\nVersion: 1\n\n", "lacks Architecture" },
    { "Package: a\nVersion: x1\nArchitecture: all\n\n", "does not start with a digit" },
    { " continued\n", "continues no field" },
    { "Package: a\nno colon here\n", "not a field" },
    { "Package: a\nVersion: 1\nArchitecture: all\nPhased-Update-Percentage: 101\n", "0…100" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GlAptIndex) index = gl_apt_index_new ();
      g_autoptr(GlAptIndexParser) p = gl_apt_index_parser_new (index, "Packages-test");
      g_autoptr(GError) error = NULL;

      if (gl_apt_index_parser_feed (p, bad[i].text, strlen (bad[i].text), &error))
        gl_apt_index_parser_finish (p, &error);
      g_assert_error (error, GL_APT_ERROR, GL_APT_ERROR_MALFORMED);
      if (strstr (error->message, bad[i].says) == NULL || strstr (error->message, "Packages-test") == NULL)
        g_error ("case %zu: \"%s\" does not say \"%s\" and name the file", i, error->message, bad[i].says);
    }
}

static char *
write_tmp (const char *name, const void *data, gsize len)
{
  g_autofree char *dir = g_dir_make_tmp ("test-apt-index-XXXXXX", NULL);
  char *path = g_build_filename (dir, name, NULL);

  g_assert_true (g_file_set_contents (path, data, len, NULL));
  return path;
}

static void
remove_tmp (const char *path)
{
  g_autofree char *dir = g_path_get_dirname (path);

  g_unlink (path);
  g_rmdir (dir);
}

static void
test_compressed (void)
{
  gsize len = strlen (packages);
  guint8 *xz = g_malloc (len + 1024);
  gsize xz_len = 0;
  g_autoptr(GConverter) gz = G_CONVERTER (g_zlib_compressor_new (G_ZLIB_COMPRESSOR_FORMAT_GZIP, 6));
  guint8 gzbuf[4096];
  gsize read = 0, gz_len = 0;
  const struct { const char *name; const guint8 *data; gsize len; } files[3] = {
    { "Packages", (const guint8 *) packages, len },
    { "Packages.xz", xz, 0 },
    { "Packages.gz", gzbuf, 0 },
  };

  g_assert_cmpint (lzma_easy_buffer_encode (1, LZMA_CHECK_CRC64, NULL, (const guint8 *) packages, len,
                                            xz, &xz_len, len + 1024), ==, LZMA_OK);
  g_assert_cmpint (g_converter_convert (gz, packages, len, gzbuf, sizeof gzbuf, G_CONVERTER_INPUT_AT_END,
                                        &read, &gz_len, NULL), ==, G_CONVERTER_FINISHED);

  for (guint i = 0; i < 3; i++)
    {
      gsize flen = i == 0 ? len : i == 1 ? xz_len : gz_len;
      g_autofree char *path = write_tmp (files[i].name, files[i].data, flen);
      g_autofree char *cut = write_tmp (files[i].name, files[i].data, flen - 10);
      g_autoptr(GError) error = NULL;
      g_autoptr(GlAptIndex) index = gl_apt_index_load_file (path, NULL, &error);
      g_autoptr(GlAptIndex) cut_index = NULL;

      g_assert_no_error (error);
      check_entries (index);
      /* a cut compressed file is an error, never a shorter list */
      cut_index = gl_apt_index_load_file (cut, NULL, &error);
      if (i > 0)
        {
          g_assert_null (cut_index);
          g_assert_error (error, GL_APT_ERROR, GL_APT_ERROR_MALFORMED);
        }
      remove_tmp (path);
      remove_tmp (cut);
    }
  g_free (xz);
}

static const char release_text[] =
  "Origin: Debian\n"
  "Label: Debian\n"
  "Suite: unstable\n"
  "Codename: sid\n"
  "Date: Sat, 01 Jan 2022 00:00:00 UTC\n"
  "Valid-Until: Sat, 08 Jan 2022 00:00:00 UTC\n"
  "NotAutomatic: yes\n"
  "ButAutomaticUpgrades: yes\n"
  "Acquire-By-Hash: yes\n"
  "Architectures: amd64 i386  all\n"
  "Components: main contrib\n"
  "MD5Sum:\n"
  " d41d8cd98f00b204e9800998ecf8427e 0 main/binary-amd64/Packages\n"
  "SHA256:\n"
  " e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 0 main/binary-amd64/Packages\n"
  " 0123456789abcdef0123456789abcdef0123456789ABCDEF0123456789abcdef 1234 main/binary-amd64/Packages.xz\n";

static void
test_release (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GlAptRelease) r = gl_apt_release_parse (release_text, strlen (release_text), "test", &error);
  g_autoptr(GlAptRelease) older = NULL;
  const GlAptReleaseFile *f;
  g_autofree char *older_text = NULL;

  g_assert_no_error (error);
  g_assert_cmpstr (r->suite, ==, "unstable");
  g_assert_cmpstr (r->codename, ==, "sid");
  g_assert_cmpint (r->date, ==, 1640995200);
  g_assert_cmpint (r->valid_until, ==, 1640995200 + 7 * 86400);
  g_assert_true (r->not_automatic && r->but_automatic_upgrades && r->acquire_by_hash);
  g_assert_cmpuint (g_strv_length (r->architectures), ==, 3);
  g_assert_cmpuint (g_hash_table_size (r->files), ==, 2);
  f = g_hash_table_lookup (r->files, "main/binary-amd64/Packages.xz");
  g_assert_nonnull (f);
  g_assert_cmpuint (f->size, ==, 1234);
  g_assert_cmpstr (f->sha256, ==, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");

  /* fresh within Valid-Until, expired after it */
  g_assert_true (gl_apt_release_check_fresh (r, NULL, r->date + 60, "test", &error));
  g_assert_false (gl_apt_release_check_fresh (r, NULL, r->valid_until + 1, "test", &error));
  g_assert_error (error, GL_APT_ERROR, GL_APT_ERROR_EXPIRED);
  g_clear_error (&error);

  /* older than the cached one: a rollback */
  older_text = g_strdup (release_text);
  memcpy (strstr (older_text, "Sat, 01 Jan 2022"), "Fri, 31 Dec 2021", 16);
  older = gl_apt_release_parse (older_text, strlen (older_text), "test", &error);
  g_assert_no_error (error);
  g_assert_true (gl_apt_release_check_fresh (r, older, r->date, "test", &error));
  g_assert_false (gl_apt_release_check_fresh (older, r, r->date, "test", &error));
  g_assert_error (error, GL_APT_ERROR, GL_APT_ERROR_ROLLBACK);
}

static void
test_release_errors (void)
{
  static const char *bad[] = {
    "",
    "Suite: x\n",                                             /* no SHA256 */
    "Suite: x\nSHA256:\n nothex 12 main/Packages\n",
    "Suite: x\nSHA256:\n e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 12 ../escape\n",
    "Suite: x\nDate: not a date at all\nSHA256:\n e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 1 P\n",
    "Suite: x\nSHA256:\n e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 1 P\n\nSuite: y\n",
    " leading continuation\n",
  };

  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GlAptRelease) r = gl_apt_release_parse (bad[i], strlen (bad[i]), "Release-test", &error);

      if (r != NULL)
        g_error ("case %zu parsed", i);
      g_assert_error (error, GL_APT_ERROR, GL_APT_ERROR_MALFORMED);
      g_assert_nonnull (strstr (error->message, "Release-test"));
    }
}

/* An index fetched over HTTP, its size and SHA256 checked against the
 * Release, parsed (GTest makes GLib's warnings fatal: a checksum updated
 * after it was read is one) */
static void
test_fetch (void)
{
  g_autoptr(GlTestTmpdir) tmp = gl_test_tmpdir_new ("gl-fetch-XXXXXX");
  g_autofree char *dir = g_build_filename (tmp, "dists", "sid", "main", "binary-amd64", NULL);
  g_autofree char *path = g_build_filename (dir, "Packages", NULL);
  g_autofree char *cache = g_build_filename (tmp, "cache", NULL);
  g_autofree char *sum = g_compute_checksum_for_string (G_CHECKSUM_SHA256, packages, -1);
  g_autofree char *text = g_strdup_printf ("Suite: unstable\nCodename: sid\n"
                                           "Date: Sat, 01 Jan 2022 00:00:00 UTC\n"
                                           "SHA256:\n %s %zu main/binary-amd64/Packages\n",
                                           sum, strlen (packages));
  g_autofree char *base = NULL, *dist_url = NULL;
  g_autoptr(GSubprocess) server = NULL;
  g_autoptr(GlAptRelease) release = NULL;
  g_autoptr(GlAptIndex) index = NULL;
  g_autoptr(GError) error = NULL;
  gboolean downloaded = FALSE;

  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  g_assert_true (g_file_set_contents (path, packages, -1, NULL));
  release = gl_apt_release_parse (text, strlen (text), "test", &error);
  g_assert_no_error (error);
  server = gl_test_http_start (tmp, &base);
  dist_url = g_strconcat (base, "/dists/sid/", NULL);
  index = gl_apt_index_fetch (dist_url, release, "main/binary-amd64/Packages", cache, &downloaded,
                              NULL, &error);
  gl_test_http_stop (&server);
  g_assert_no_error (error);
  g_assert_true (downloaded);
  check_entries (index);
}

static void
test_dearmor (void)
{
  static const char armored[] =
    "-----BEGIN PGP PUBLIC KEY BLOCK-----\n"
    "Comment: a header\n"
    "\n"
    "AAEC\n"
    "AwQF\n"
    "=abcd\n"
    "-----END PGP PUBLIC KEY BLOCK-----\n"
    "-----BEGIN PGP PUBLIC KEY BLOCK-----\n"
    " .\n"
    "Bg==\n"
    "-----END PGP PUBLIC KEY BLOCK-----\n";
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bin = gl_apt_dearmor (armored, strlen (armored), &error);
  static const guint8 want[] = { 0, 1, 2, 3, 4, 5, 6 };
  g_autoptr(GBytes) none = NULL;

  g_assert_no_error (error);
  g_assert_cmpmem (g_bytes_get_data (bin, NULL), g_bytes_get_size (bin), want, sizeof want);
  none = gl_apt_dearmor ("just text", 9, &error);
  g_assert_null (none);
  g_assert_error (error, GL_APT_ERROR, GL_APT_ERROR_KEYRING);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/apt-index/parser/chunks", test_parser_chunks);
  g_test_add_func ("/apt-index/parser/errors", test_parser_errors);
  g_test_add_func ("/apt-index/compressed", test_compressed);
  g_test_add_func ("/apt-release/parse", test_release);
  g_test_add_func ("/apt-release/errors", test_release_errors);
  g_test_add_func ("/apt-release/dearmor", test_dearmor);
  g_test_add_func ("/apt-index/fetch", test_fetch);

  return g_test_run ();
}
