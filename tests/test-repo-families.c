/* Unit tests: the repositories of the dnf, pacman and apk families
 * (gl-repo-dnf, gl-repo-pacman, gl-repo-apk: what files glimpse writes and
 * takes out, what it refuses).  pacman and apk are not packaged for the Debian the tests run
 * on, so these are their only tests; dnf also runs end to end
 * (tests/pkg/test-pkg-dnf.sh).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-repo-private.h"

static void
assert_refused (GlRepoIniSection *r, GError *error, const char *needle)
{
  g_assert_null (r);
  g_assert_error (error, GL_PKG_ERROR, GL_PKG_ERROR_INVALID);
  if (strstr (error->message, needle) == NULL)
    g_error ("“%s” does not say “%s”", error->message, needle);
}

static void
test_ini (void)
{
  const char *text = "# head\n[a]\nx = 1\n  continued\n\n# about b\n[b]\ny=2\n# tail of b\n\n[c]\nz\n";
  g_autoptr(GPtrArray) s = gl_repo_ini_parse (text, TRUE);
  g_autofree char *without_b = NULL, *without_a = NULL, *without_x = NULL;

  g_assert_cmpuint (s->len, ==, 3);
  g_assert_cmpstr (gl_repo_ini_get (s->pdata[0], "x"), ==, "1 continued");
  g_assert_cmpstr (gl_repo_ini_get (s->pdata[1], "y"), ==, "2");
  g_assert_null (gl_repo_ini_get (s->pdata[2], "z"));
  g_assert_cmpuint (((GlRepoIniSection *) s->pdata[2])->keys->len, ==, 2);
  /* the section's header to its last key; comments around it stay */
  without_b = gl_repo_ini_drop_section (text, "b", TRUE);
  g_assert_cmpstr (without_b, ==, "# head\n[a]\nx = 1\n  continued\n\n# about b\n# tail of b\n\n[c]\nz\n");
  without_a = gl_repo_ini_drop_section (text, "a", TRUE);
  g_assert_cmpstr (without_a, ==, "# head\n\n# about b\n[b]\ny=2\n# tail of b\n\n[c]\nz\n");
  without_x = gl_repo_ini_drop_section (text, "x", TRUE);
  g_assert_cmpstr (without_x, ==, text);
}

static void
test_dnf (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GlRepoIniSection) r = NULL;
  g_autofree char *out = NULL;

  r = gl_repo_dnf_parse ("[copr-x]\nname = Copr X\nbaseurl = https://example.org/x/$releasever/$basearch/\n"
                         "  https://mirror.example.org/x/\ngpgcheck=1\nrepo_gpgcheck=1\n"
                         "gpgkey=https://example.org/x/pubkey.gpg\n", FALSE, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (r->id, ==, "copr-x");
  /* with --key: its own key file replaces the text's gpgkey */
  out = gl_repo_dnf_render (r, "x", "/etc/pki/rpm-gpg/glimpse-x.asc");
  g_assert_cmpstr (out, ==,
                   "# Added by glimpse add-repo; its key is trusted for this repository only.\n"
                   "[x]\nname=Copr X\n"
                   "baseurl=https://example.org/x/$releasever/$basearch/ https://mirror.example.org/x/\n"
                   "repo_gpgcheck=1\ngpgcheck=1\ngpgkey=file:///etc/pki/rpm-gpg/glimpse-x.asc\n");
  g_clear_pointer (&out, g_free);
  /* without: the repository's own key, gpgcheck forced on */
  out = gl_repo_dnf_render (r, "copr-x", NULL);
  g_assert_nonnull (strstr (out, "[copr-x]\n"));
  g_assert_nonnull (strstr (out, "gpgkey=https://example.org/x/pubkey.gpg\ngpgcheck=1\n"));
  g_clear_pointer (&r, gl_repo_ini_section_free);

  r = gl_repo_dnf_parse ("[k]\nmetalink=https://example.org/metalink?repo=x&arch=$basearch\n"
                         "gpgkey=file:///etc/pki/rpm-gpg/RPM-GPG-KEY-x\n", FALSE, &error);
  g_assert_no_error (error);
  g_clear_pointer (&r, gl_repo_ini_section_free);

  {
    const struct { const char *text; gboolean key; const char *says; } bad[] = {
      { "[a]\nbaseurl=https://example.org/\ngpgcheck=0\n", TRUE, "gpgcheck=0" },
      { "[a]\nbaseurl=https://example.org/\ngpgcheck=False\n", TRUE, "gpgcheck=False" },
      { "[a]\nbaseurl=https://example.org/\nsslverify=0\n", TRUE, "sslverify" },
      { "[a]\nbaseurl=https://example.org/\nsslcacert=/root/ca\n", TRUE, "sslcacert" },
      { "[a]\nbaseurl=https://example.org/\nproxy=http://evil/\n", TRUE, "proxy" },
      { "[a]\nbaseurl=https://example.org/\n", FALSE, "--key" },
      { "[a]\nbaseurl=ftp://example.org/\n", TRUE, "ftp://example.org/" },
      { "[a]\nbaseurl=file:///srv/repo\n", TRUE, "file:///srv/repo" },
      { "[a]\nbaseurl=https://example.org/\ngpgkey=file:///root/key\n", TRUE, "file:///root/key" },
      { "[a]\nbaseurl=https://example.org/\ngpgkey=file:///etc/pki/rpm-gpg/../../../root/k\n", TRUE, "rpm-gpg" },
      { "[a]\nname=x\n", TRUE, "no baseurl" },
      { "[a]\nbaseurl=https://a/\n[b]\nbaseurl=https://b/\n", TRUE, "one repository at a time" },
      { "baseurl=https://a/\n", TRUE, "no [repository]" },
      { "[a]\nbaseurl=https://a/\x01\n", TRUE, "control" },
      { "[a]\nbaseurl\n", TRUE, "no value" },
    };
    for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
      {
        g_autoptr(GError) e = NULL;
        GlRepoIniSection *x = gl_repo_dnf_parse (bad[i].text, bad[i].key, &e);
        assert_refused (x, e, bad[i].says);
      }
  }
}

static void
test_pacman (void)
{
  const char *conf = "[options]\nArchitecture = auto\nSigLevel = Required DatabaseOptional\n\n"
                     "[core]\nInclude = /etc/pacman.d/mirrorlist\n\n[extra]\nInclude = /etc/pacman.d/mirrorlist\n";
  const char *fprs[] = { "AAAA1111", NULL };
  g_autoptr(GError) error = NULL;
  g_autofree char *name = NULL, *added = NULL, *twice = NULL, *back = NULL, *only_core = NULL;
  g_auto(GStrv) servers = NULL, keys = NULL;

  g_assert_true (gl_repo_pacman_parse ("[chaotic]\nSigLevel = Required\nServer = https://example.org/$repo/$arch\n"
                                       "Server = https://mirror.example.org/$repo/$arch\n", NULL, &name, &servers, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (name, ==, "chaotic");
  g_assert_cmpuint (g_strv_length (servers), ==, 2);
  added = gl_repo_pacman_conf_add (conf, "chaotic", (const char * const *) servers, fprs);
  g_assert_cmpstr (added + strlen (conf), ==,
                   "\n# glimpse add-repo chaotic: begin; keys AAAA1111\n"
                   "[chaotic]\nSigLevel = Required\nServer = https://example.org/$repo/$arch\n"
                   "Server = https://mirror.example.org/$repo/$arch\n"
                   "# glimpse add-repo chaotic: end\n");
  g_assert_true (g_str_has_prefix (added, conf));
  /* a second block with the same key: removing one keeps the key, whether
   * glimpse recorded adding the other or not (an unrecorded one, the base's
   * or a package's, still needs it; only the removed one's record counts) */
  twice = gl_repo_pacman_conf_add (added, "other", (const char * const *) servers, fprs);
  back = gl_repo_pacman_conf_remove (twice, "other", TRUE, &keys);
  g_assert_cmpstr (back, ==, added);
  g_assert_cmpuint (g_strv_length (keys), ==, 0);
  g_clear_pointer (&keys, g_strfreev);
  g_clear_pointer (&back, g_free);
  back = gl_repo_pacman_conf_remove (added, "chaotic", TRUE, &keys);
  g_assert_cmpstr (back, ==, conf);
  g_assert_cmpstr (keys[0], ==, "AAAA1111");
  g_assert_null (keys[1]);
  g_clear_pointer (&keys, g_strfreev);
  g_clear_pointer (&back, g_free);
  /* a block like glimpse's that glimpse did not record adding (the base's,
   * a package's): it goes, the keys it names are not glimpse's to delete */
  back = gl_repo_pacman_conf_remove (added, "chaotic", FALSE, &keys);
  g_assert_cmpstr (back, ==, conf);
  g_assert_null (keys);
  /* a repository of the base: its section, no key */
  only_core = gl_repo_pacman_conf_remove (conf, "extra", TRUE, &keys);
  g_assert_null (keys);
  g_assert_null (strstr (only_core, "[extra]"));
  g_assert_nonnull (strstr (only_core, "[core]\nInclude = /etc/pacman.d/mirrorlist\n"));
  g_clear_pointer (&name, g_free);
  g_clear_pointer (&servers, g_strfreev);

  /* a server's address alone, named by --name or from the address */
  g_assert_true (gl_repo_pacman_parse ("https://repo.example.org/arch/$repo/os/$arch", NULL, &name, &servers, &error));
  g_assert_cmpstr (name, ==, "repo.example.org-arch-repo-os-arch");
  g_assert_cmpstr (servers[0], ==, "https://repo.example.org/arch/$repo/os/$arch");
  {
    const char *bad[][2] = {
      { "[x]\nSigLevel = Never\nServer = https://a/\n", "SigLevel = Never" },
      { "[x]\nSigLevel = Optional TrustAll\nServer = https://a/\n", "SigLevel" },
      { "[x]\nInclude = /etc/shadow\n", "Include" },
      { "[x]\nServer = file:///srv/repo\n", "file:///srv/repo" },
      { "[x]\nServer = https://a/\n[y]\nServer = https://b/\n", "one [repository]" },
      { "[options]\nServer = https://a/\n", "[options]" },
      { "[x]\nSigLevel = Required\n", "no Server" },
      { "ftp://example.org/", "[repository]" },
    };
    for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
      {
        g_autoptr(GError) e = NULL;
        g_autofree char *n = NULL;
        g_auto(GStrv) sv = NULL;
        g_assert_false (gl_repo_pacman_parse (bad[i][0], NULL, &n, &sv, &e));
        g_assert_error (e, GL_PKG_ERROR, GL_PKG_ERROR_INVALID);
        if (strstr (e->message, bad[i][1]) == NULL)
          g_error ("“%s” does not say “%s”", e->message, bad[i][1]);
      }
  }
}

static void
test_apk (void)
{
  const char *base = "https://dl.example.org/alpine/v3.20/main\nhttps://dl.example.org/alpine/v3.20/community\n";
  g_autofree char *added = NULL, *twice = NULL, *back = NULL, *key = NULL, *no_community = NULL;

  g_assert_true (gl_repo_apk_key_name_validate ("builder@example.org-5f1e2d3c.rsa.pub", NULL));
  g_assert_false (gl_repo_apk_key_name_validate ("key.asc", NULL));
  g_assert_false (gl_repo_apk_key_name_validate ("../x.rsa.pub", NULL));
  g_assert_false (gl_repo_apk_key_name_validate (".rsa.pub", NULL));

  added = gl_repo_apk_repositories_add (base, "testing", "https://dl.example.org/alpine/edge/testing",
                                        "b@example.org-1.rsa.pub");
  g_assert_cmpstr (added + strlen (base), ==,
                   "# glimpse add-repo testing key b@example.org-1.rsa.pub\n"
                   "https://dl.example.org/alpine/edge/testing\n");
  back = gl_repo_apk_repositories_remove (added, "testing", TRUE, &key);
  g_assert_cmpstr (back, ==, base);
  g_assert_cmpstr (key, ==, "b@example.org-1.rsa.pub");
  g_clear_pointer (&back, g_free);
  g_clear_pointer (&key, g_free);
  /* a marker glimpse did not record adding (the base's, a package's): its
   * line goes, its key is not glimpse's to delete */
  back = gl_repo_apk_repositories_remove (added, "testing", FALSE, &key);
  g_assert_cmpstr (back, ==, base);
  g_assert_null (key);
  g_clear_pointer (&back, g_free);
  /* a key two added repositories share stays with the other */
  twice = gl_repo_apk_repositories_add (added, "more", "https://example.org/more", "b@example.org-1.rsa.pub");
  back = gl_repo_apk_repositories_remove (twice, "testing", TRUE, &key);
  g_assert_null (key);
  g_assert_nonnull (strstr (back, "# glimpse add-repo more key b@example.org-1.rsa.pub\nhttps://example.org/more\n"));
  g_assert_null (strstr (back, "edge/testing"));
  g_clear_pointer (&back, g_free);
  /* a line of the base, by the name repos shows */
  no_community = gl_repo_apk_repositories_remove (base, "dl.example.org-alpine-v3.20-community", TRUE, &key);
  g_assert_cmpstr (no_community, ==, "https://dl.example.org/alpine/v3.20/main\n");
  g_assert_null (key);
  g_assert_null (gl_repo_apk_repositories_remove (base, "nosuch", TRUE, &key));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_test_add_func ("/repo/ini", test_ini);
  g_test_add_func ("/repo/dnf", test_dnf);
  g_test_add_func ("/repo/pacman", test_pacman);
  g_test_add_func ("/repo/apk", test_apk);
  return g_test_run ();
}
