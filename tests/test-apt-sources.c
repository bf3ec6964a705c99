/* test-apt-sources.c: apt's one-line and deb822 sources, and the host's
 * Debian mirror
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <glib/gstdio.h>

#include "gl-apt-sources.h"

static void
write_file (const char *dir, const char *name, const char *text)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);

  g_assert_true (g_file_set_contents (path, text, -1, NULL));
}

static void
test_one_line (void)
{
  const char *text =
    "# comment\n"
    "\n"
    "deb [ arch=amd64,i386 signed-by=/usr/share/keyrings/k.gpg trusted=yes ] http://a.example.invalid/debian bookworm main contrib # tail\n"
    "deb-src\thttp://a.example.invalid/debian  bookworm main\n"
    "deb http://flat.example.invalid/repo ./\n";
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) sources = gl_apt_sources_parse_one_line ("/etc/apt/sources.list", text, &error);
  GlAptSource *s;

  g_assert_no_error (error);
  g_assert_cmpuint (sources->len, ==, 3);
  s = sources->pdata[0];
  g_assert_false (s->deb_src);
  g_assert_true (s->enabled);
  g_assert_true (s->trusted);
  g_assert_cmpstr (s->uri, ==, "http://a.example.invalid/debian");
  g_assert_cmpstr (s->suite, ==, "bookworm");
  g_assert_cmpstrv (s->components, ((const char *[]) { "main", "contrib", NULL }));
  g_assert_cmpstrv (s->archs, ((const char *[]) { "amd64", "i386", NULL }));
  g_assert_cmpstrv (s->signed_by, ((const char *[]) { "/usr/share/keyrings/k.gpg", NULL }));
  g_assert_cmpstr (s->where, ==, "/etc/apt/sources.list:3");
  s = sources->pdata[1];
  g_assert_true (s->deb_src);
  g_assert_false (s->trusted);
  g_assert_null (s->archs);
  s = sources->pdata[2];
  g_assert_cmpstr (s->suite, ==, "./");
  g_assert_cmpuint (g_strv_length (s->components), ==, 0);
}

static void
test_one_line_malformed (void)
{
  const char *bad[] = {
    "rpm http://x.example.invalid/ stable\n",
    "deb http://x.example.invalid/\n",
    "deb [arch=amd64 http://x.example.invalid/ stable main\n",
    "deb [arch] http://x.example.invalid/ stable main\n",
    "debhttp://x.example.invalid/ stable main\n",
  };

  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *text = g_strconcat ("# one\n", bad[i], NULL);
      g_autoptr(GPtrArray) sources = gl_apt_sources_parse_one_line ("f.list", text, &error);

      g_assert_null (sources);
      g_assert_error (error, GL_APT_SOURCES_ERROR, GL_APT_SOURCES_ERROR_MALFORMED);
      g_assert_true (g_str_has_prefix (error->message, "f.list:2: "));
    }
}

static void
test_deb822 (void)
{
  const char *text =
    "# a comment\n"
    "Types: deb deb-src\n"
    "URIs: http://a.example.invalid/debian http://b.example.invalid/debian\n"
    "Suites: trixie trixie-updates\n"
    "Components: main\n"
    " contrib\n"
    "Architectures: amd64\n"
    "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n"
    "  0123456789ABCDEF0123456789ABCDEF01234567!\n"
    "\n"
    "Types: deb\n"
    "URIs: http://off.example.invalid/\n"
    "Suites: sid\n"
    "Enabled: no\n"
    "Trusted: yes\n"
    "\n"
    "Types: deb\n"
    "URIs: http://key.example.invalid/\n"
    "Suites: ./\n"
    "Signed-By:\n"
    " -----BEGIN PGP PUBLIC KEY BLOCK-----\n"
    " .\n"
    " mQINBF\n"
    " -----END PGP PUBLIC KEY BLOCK-----\n";
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) sources = gl_apt_sources_parse_deb822 ("d.sources", text, &error);
  GlAptSource *s;

  g_assert_no_error (error);
  /* 2 types x 2 URIs x 2 suites, then the disabled one, then the keyed one */
  g_assert_cmpuint (sources->len, ==, 10);
  s = sources->pdata[0];
  g_assert_false (s->deb_src);
  g_assert_cmpstr (s->uri, ==, "http://a.example.invalid/debian");
  g_assert_cmpstr (s->suite, ==, "trixie");
  g_assert_cmpstrv (s->components, ((const char *[]) { "main", "contrib", NULL }));
  g_assert_cmpstrv (s->archs, ((const char *[]) { "amd64", NULL }));
  g_assert_cmpstrv (s->signed_by, ((const char *[]) { "/usr/share/keyrings/debian-archive-keyring.gpg", NULL }));
  g_assert_cmpstrv (s->fingerprints, ((const char *[]) { "0123456789ABCDEF0123456789ABCDEF01234567!", NULL }));
  g_assert_cmpstr (s->where, ==, "d.sources:2");
  s = sources->pdata[1];
  g_assert_cmpstr (s->suite, ==, "trixie-updates");
  s = sources->pdata[2];
  g_assert_cmpstr (s->uri, ==, "http://b.example.invalid/debian");
  s = sources->pdata[4];
  g_assert_true (s->deb_src);
  s = sources->pdata[8];
  g_assert_false (s->enabled);
  g_assert_true (s->trusted);
  g_assert_cmpstr (s->where, ==, "d.sources:11");
  s = sources->pdata[9];
  g_assert_true (s->enabled);
  g_assert_null (s->signed_by);
  g_assert_nonnull (s->inline_key);
  g_assert_nonnull (strstr (s->inline_key, "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQINBF\n"));
}

static void
test_deb822_malformed (void)
{
  const struct { const char *text; const char *where; } bad[] = {
    { "Types: deb\nSuites: sid\n", "f.sources:1: the entry lacks URIs" },
    { "\nTypes: deb\nURIs: http://x.example.invalid/\n", "f.sources:2: the entry lacks Suites" },
    { " continued\n", "f.sources:1: a continuation line" },
    { "Types: deb\nnot a field\n", "f.sources:2: not a field" },
    { "Types: rpm\nURIs: http://x.example.invalid/\nSuites: a\n", "f.sources:1: unknown type" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GPtrArray) sources = gl_apt_sources_parse_deb822 ("f.sources", bad[i].text, &error);

      g_assert_null (sources);
      g_assert_error (error, GL_APT_SOURCES_ERROR, GL_APT_SOURCES_ERROR_MALFORMED);
      g_assert_true (g_str_has_prefix (error->message, bad[i].where));
    }
}

/* apt's order: sources.list, then the parts by name; names apt skips are skipped */
static void
test_read (void)
{
  g_autofree char *root = g_build_filename (g_get_user_cache_dir (), "readroot", NULL);
  g_autofree char *d = g_build_filename (root, "etc", "apt", "sources.list.d", NULL);
  g_autofree char *apt = g_build_filename (root, "etc", "apt", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) sources = NULL;
  const char *want[] = { "http://list/", "http://a/", "http://b/", NULL };

  g_assert_cmpint (g_mkdir_with_parents (d, 0755), ==, 0);
  sources = gl_apt_sources_read (root, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (sources->len, ==, 0);
  g_clear_pointer (&sources, g_ptr_array_unref);

  write_file (apt, "sources.list", "deb http://list/ stable main\n");
  write_file (d, "b.list", "deb http://b/ stable main\n");
  write_file (d, "a.sources", "Types: deb\nURIs: http://a/\nSuites: stable\n");
  write_file (d, "c.list.save", "deb http://skipped/ stable main\n");
  write_file (d, "d~.list", "deb http://skipped/ stable main\n");
  sources = gl_apt_sources_read (root, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (sources->len, ==, 3);
  for (guint i = 0; want[i] != NULL; i++)
    g_assert_cmpstr (((GlAptSource *) sources->pdata[i])->uri, ==, want[i]);
  g_clear_pointer (&sources, g_ptr_array_unref);

  write_file (d, "e.list", "nonsense\n");
  g_assert_null (gl_apt_sources_read (root, &error));
  g_assert_error (error, GL_APT_SOURCES_ERROR, GL_APT_SOURCES_ERROR_MALFORMED);
  g_assert_nonnull (strstr (error->message, "e.list:1"));
}

static void
test_host_mirror (void)
{
  g_autofree char *root = g_build_filename (g_get_user_cache_dir (), "aptroot", NULL);
  g_autofree char *d = g_build_filename (root, "etc", "apt", "sources.list.d", NULL);
  g_autofree char *mirror = NULL;
  g_autofree char *list = g_build_filename (root, "etc", "apt", "sources.list", NULL);

  g_assert_cmpint (g_mkdir_with_parents (d, 0755), ==, 0);
  g_assert_null (gl_apt_sources_find_debian_mirror (root));

  write_file (d, "debian.sources",
              "Types: deb\nURIs: http://security.example.invalid/debian-security\nSuites: bookworm-security\n"
              "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n"
              "Types: deb deb-src\nURIs: http://mirror.example.invalid/debian\nSuites: bookworm bookworm-updates\n"
              "Components: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n");
  write_file (d, "other.sources",
              "Types: deb\nURIs: http://third.example.invalid/apt\nSuites: stable\nSigned-By: /etc/x.gpg\n");
  mirror = gl_apt_sources_find_debian_mirror (root);
  g_assert_cmpstr (mirror, ==, "http://mirror.example.invalid/debian");
  g_clear_pointer (&mirror, g_free);

  g_file_set_contents (list, "# comment\ndeb [arch=amd64 signed-by=/k.gpg] http://list.example.invalid/debian bookworm main\n",
                       -1, NULL);
  mirror = gl_apt_sources_find_debian_mirror (root);
  g_assert_cmpstr (mirror, ==, "http://list.example.invalid/debian");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/apt-sources/one-line", test_one_line);
  g_test_add_func ("/apt-sources/one-line-malformed", test_one_line_malformed);
  g_test_add_func ("/apt-sources/deb822", test_deb822);
  g_test_add_func ("/apt-sources/deb822-malformed", test_deb822_malformed);
  g_test_add_func ("/apt-sources/read", test_read);
  g_test_add_func ("/apt-sources/host-mirror", test_host_mirror);
  return g_test_run ();
}
