/* test-profile.c: profile parsing, good and malformed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <glib/gstdio.h>

#include "gl-profile.h"

static const char good[] =
  "[Profile]\n"
  "Name=Test distro\n"
  "Description=A test\n"
  "Family=apk\n"
  "Release=1.0\n"
  "Launchers=a.desktop;b.desktop;\n"
  "# (an apk profile: no [Repository NAME] groups)\n"
  "\n"
  "[Base]\n"
  "Type=tarball\n"
  "Url=https://example.invalid/{uname_arch}/root-{release}-{arch}.tar.gz\n"
  "Checksum=sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n"
  "StripComponents=1\n"
  "\n"
  "[Packages]\n"
  "Refresh=apk update\n"
  "Upgrade=apk upgrade\n"
  "Install=apk add\n"
  "ListUpgradable=apk list --upgradable\n"
  "\n"
  "[Hooks]\n"
  "PostCreate=hooks/x.sh;\n"
  "\n"
  "[Tweaks]\n"
  "Locale=C.UTF-8\n";

/* good, as an apt profile with two repositories */
static const char good_apt_repos[] =
  "[Profile]\nName=Repos\nFamily=apt\n\n[Base]\nType=host\n\n"
  "[Packages]\nRefresh=r\nUpgrade=u\nInstall=i\nListUpgradable=l\n\n"
  "[Repository extra]\nSource=deb https://example.invalid/debian stable main\nKey=keys/extra.asc\n\n"
  "[Repository team.ppa]\nSource=ppa:team/tools\n";

static void
test_good (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GlProfile) p = gl_profile_load_from_data ("test", "/x/test.profile", good, -1, &error);
  g_autofree char *url = NULL;

  g_assert_no_error (error);
  g_assert_nonnull (p);
  g_assert_cmpstr (p->name, ==, "test");
  g_assert_cmpstr (p->display_name, ==, "Test distro");
  g_assert_cmpstr (p->family, ==, "apk");
  g_assert_cmpint (p->base_type, ==, GL_PROFILE_BASE_TARBALL);
  g_assert_cmpuint (p->strip_components, ==, 1);
  g_assert_cmpuint (g_strv_length (p->launchers), ==, 2);
  g_assert_cmpstr (p->launchers[1], ==, "b.desktop");
  g_assert_cmpuint (p->repositories->len, ==, 0);
  g_assert_cmpstr (p->cmd_install, ==, "apk add");
  g_assert_cmpstr (p->hooks_post_create[0], ==, "hooks/x.sh");
  g_assert_cmpstr (g_hash_table_lookup (p->tweaks, "Locale"), ==, "C.UTF-8");

  url = gl_profile_expand (p, p->url);
  g_assert_null (strchr (url, '{'));
  g_assert_true (strstr (url, "root-1.0-") != NULL);
}

/* ListUpgradable= is optional (nothing runs it: update checks run the
 * family's own tool); a profile without it loads, one with it keeps it. */
static void
test_list_upgradable_optional (void)
{
  g_autoptr(GString) text = g_string_new (good);
  g_autoptr(GError) error = NULL;
  g_autoptr(GlProfile) with = gl_profile_load_from_data ("test", "/x/test.profile", good, -1, &error);
  g_autoptr(GlProfile) without = NULL;

  g_assert_no_error (error);
  g_assert_cmpstr (with->cmd_list_upgradable, ==, "apk list --upgradable");
  g_assert_cmpuint (g_string_replace (text, "ListUpgradable=apk list --upgradable\n", "", 1), ==, 1);
  without = gl_profile_load_from_data ("test", "/x/test.profile", text->str, text->len, &error);
  g_assert_no_error (error);
  g_assert_nonnull (without);
  g_assert_null (without->cmd_list_upgradable);
  g_assert_cmpstr (without->cmd_refresh, ==, "apk update");
}

/* Each malformed variant: the text substitution, and what the error must name. */
typedef struct {
  const char *name;
  const char *from;
  const char *to;
  const char *expect_key;
  int expect_line;   /* 0: no line expected */
} Malformed;

static const Malformed malformed[] = {
  { "missing-name", "Name=Test distro\n", "", "[Profile] Name", 0 },
  { "bad-family", "Family=apk", "Family=rpm", "Family", 4 },
  { "bad-type", "Type=tarball", "Type=iso", "Type", 10 },
  { "bootstrap-not-apt", "Type=tarball", "Type=bootstrap\nSuite=stable", "Family=apt only", 10 },
  { "bad-checksum", "sha256:0123", "md5:0123", "Checksum", 12 },
  { "short-checksum", "0123456789abcdef\n", "\n", "Checksum", 12 },
  { "bad-strip", "StripComponents=1", "StripComponents=x", "StripComponents", 13 },
  { "no-install", "Install=apk add\n", "", "Install", 0 },
  { "bad-launcher", "b.desktop;", "b.exe;", "Launchers", 6 },
  { "unknown-group", "[Tweaks]", "[Tweeks]", "[Tweeks]", 24 },
  { "no-checksum", "Checksum=sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n", "", "Url", 11 },
  { "no-base", "[Base]\nType=tarball\n", "[Hooks]\n", "[Base]", 0 },
  { "syntax", "Release=1.0\n", "Release 1.0\n", "test.profile", 5 },
  { "syntax-group", "[Tweaks]", "[Tweaks", "test.profile", 24 },
};

static void
test_malformed (gconstpointer user_data)
{
  const Malformed *m = user_data;
  g_autoptr(GString) text = g_string_new (good);
  g_autoptr(GError) error = NULL;
  g_autoptr(GlProfile) p = NULL;

  g_assert_cmpuint (g_string_replace (text, m->from, m->to, 1), ==, 1);
  p = gl_profile_load_from_data ("test", "/x/test.profile", text->str, text->len, &error);
  g_assert_null (p);
  g_assert_error (error, GL_PROFILE_ERROR, GL_PROFILE_ERROR_MALFORMED);
  g_test_message ("%s: %s", m->name, error->message);
  g_assert_true (g_str_has_prefix (error->message, "/x/test.profile"));
  g_assert_nonnull (strstr (error->message, m->expect_key));
  if (m->expect_line > 0)
    {
      g_autofree char *where = g_strdup_printf ("/x/test.profile:%d:", m->expect_line);
      g_assert_true (g_str_has_prefix (error->message, where));
    }
}

/* [Repository NAME]: what create hands to add-repo, files beside the profile */
static void
test_repositories (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GlProfile) p = gl_profile_load_from_data ("r", "/x/r.profile", good_apt_repos, -1, &error);
  const GlProfileRepo *r;
  const struct { const char *from, *to, *expect; } bad[] = {
    { "Family=apt", "Family=apt\nRepositories=deb https://example.invalid/x y z;", "[Profile] Repositories: is replaced by one [Repository NAME] group" },
    { "Key=keys/extra.asc\n", "", "[Repository extra] Key: is required" },
    { "Source=ppa:team/tools\n", "Source=ppa:team/tools\nKey=k.asc\n", "[Repository team.ppa] Key: a PPA's key comes from Launchpad" },
    { "[Repository extra]", "[Repository Extra Repo]", "[Repository Extra Repo]" },
    { "Family=apt", "Family=dnf", "only an apt profile (Family=apt) can add repositories" },
    { "Source=deb https://example.invalid/debian stable main\n", "", "[Repository extra] Source" },
  };

  g_assert_no_error (error);
  g_assert_cmpuint (p->repositories->len, ==, 2);
  r = p->repositories->pdata[0];
  g_assert_cmpstr (r->name, ==, "extra");
  g_assert_cmpstr (r->source, ==, "deb https://example.invalid/debian stable main");
  g_assert_cmpstr (r->key, ==, "/x/keys/extra.asc");
  r = p->repositories->pdata[1];
  g_assert_cmpstr (r->name, ==, "team.ppa");
  g_assert_cmpstr (r->source, ==, "ppa:team/tools");
  g_assert_null (r->key);

  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GString) text = g_string_new (good_apt_repos);
      g_autoptr(GlProfile) q = NULL;
      g_autoptr(GError) e = NULL;

      g_assert_cmpuint (g_string_replace (text, bad[i].from, bad[i].to, 1), ==, 1);
      q = gl_profile_load_from_data ("r", "/x/r.profile", text->str, text->len, &e);
      g_assert_null (q);
      g_assert_error (e, GL_PROFILE_ERROR, GL_PROFILE_ERROR_MALFORMED);
      g_test_message ("%s", e->message);
      g_assert_nonnull (strstr (e->message, bad[i].expect));
    }
}

static void
write_file (const char *dir, const char *name, const char *content)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autoptr(GError) error = NULL;

  g_file_set_contents (path, content, -1, &error);
  g_assert_no_error (error);
}

/* A malformed file is reported and does not hide the good ones; an admin
 * file in the first directory overrides the bundled one of the same name. */
static void
test_list_and_override (void)
{
  g_autofree char *base = g_build_filename (g_get_user_cache_dir (), "profiles", NULL);
  g_autofree char *etc = g_build_filename (base, "etc", NULL);
  g_autofree char *share = g_build_filename (base, "share", NULL);
  g_autoptr(GString) admin = g_string_new (good);
  g_autoptr(GPtrArray) errors = g_ptr_array_new_with_free_func ((GDestroyNotify) g_error_free);
  g_autoptr(GPtrArray) list = NULL;
  const char *path[] = { etc, share, NULL };
  GError *first;

  g_assert_cmpint (g_mkdir_with_parents (etc, 0755), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (share, 0755), ==, 0);
  g_string_replace (admin, "Name=Test distro", "Name=Admin's distro", 1);
  write_file (share, "one.profile", good);
  write_file (share, "two.profile", good);
  write_file (etc, "two.profile", admin->str);
  write_file (share, "broken.profile", "[Profile]\nName=x\n");
  write_file (share, "README", "not a profile");

  list = gl_profile_list (path, errors);
  g_assert_cmpuint (list->len, ==, 2);
  g_assert_cmpstr (((GlProfile *) list->pdata[0])->name, ==, "one");
  g_assert_cmpstr (((GlProfile *) list->pdata[1])->name, ==, "two");
  g_assert_cmpstr (((GlProfile *) list->pdata[1])->display_name, ==, "Admin's distro");
  g_assert_cmpuint (errors->len, ==, 1);
  first = errors->pdata[0];
  g_assert_nonnull (strstr (first->message, "broken.profile"));

  {
    g_autoptr(GError) error = NULL;
    g_autoptr(GlProfile) p = gl_profile_find (path, "nope", &error);
    g_assert_null (p);
    g_assert_error (error, GL_PROFILE_ERROR, GL_PROFILE_ERROR_NOT_FOUND);
    g_clear_error (&error);
    p = gl_profile_find (path, "../share/one", &error);
    g_assert_null (p);
    g_assert_error (error, GL_PROFILE_ERROR, GL_PROFILE_ERROR_NOT_FOUND);
  }
}

/* Every bundled profile parses. */
static void
test_bundled (void)
{
  const char *dir = g_getenv ("GLIMPSE_BUNDLED_PROFILES");
  const char *path[] = { dir, NULL };
  g_autoptr(GPtrArray) errors = g_ptr_array_new_with_free_func ((GDestroyNotify) g_error_free);
  g_autoptr(GPtrArray) list = NULL;
  const char *expected[] = { "alpine", "archlinux", "debian-stable", "debian-testing",
                             "debian-unstable", "fedora", "host", "ubuntu-devel", "ubuntu-lts" };

  g_assert_nonnull (dir);
  list = gl_profile_list (path, errors);
  for (guint i = 0; i < errors->len; i++)
    g_test_message ("%s", ((GError *) errors->pdata[i])->message);
  g_assert_cmpuint (errors->len, ==, 0);
  g_assert_cmpuint (list->len, ==, G_N_ELEMENTS (expected));
  for (guint i = 0; i < list->len; i++)
    {
      GlProfile *p = list->pdata[i];
      g_assert_cmpstr (p->name, ==, expected[i]);
      if (g_str_equal (p->name, "host"))
        g_assert_cmpint (p->base_type, ==, GL_PROFILE_BASE_HOST);
      else if (g_str_has_prefix (p->name, "debian"))
        {
          g_assert_cmpint (p->base_type, ==, GL_PROFILE_BASE_BOOTSTRAP);
          g_assert_null (p->mirror);  /* taken from the host, never written in */
        }
      else
        {
          g_assert_cmpint (p->base_type, ==, GL_PROFILE_BASE_TARBALL);
          g_assert_true (g_str_has_prefix (p->url, "https://"));
          /* verified: a checksum list, or Alpine's index that carries the sum */
          g_assert_true (p->checksum_url != NULL || g_strcmp0 (p->channel, "alpine") == 0);
          /* no pinned release that goes stale, but a channel or a dated name */
          g_assert_true (p->channel != NULL || p->file_pattern != NULL);
        }
    }
}

/* Each family's name for each machine, as its download trees spell it. */
static void
test_family_arch (void)
{
  static const struct { const char *family, *machine, *name; } table[] = {
    { "apt", "x86_64", "amd64" }, { "apt", "aarch64", "arm64" }, { "apt", "armv7l", "armhf" },
    { "apt", "i686", "i386" }, { "apt", "ppc64le", "ppc64el" },
    { "apk", "x86_64", "x86_64" }, { "apk", "aarch64", "aarch64" }, { "apk", "armv7l", "armv7" },
    { "apk", "i686", "x86" }, { "apk", "armv6l", "armhf" },
    { "dnf", "x86_64", "x86_64" }, { "dnf", "aarch64", "aarch64" }, { "dnf", "i686", NULL },
    { "dnf", "armv7l", NULL },
    { "pacman", "x86_64", "x86_64" }, { "pacman", "aarch64", NULL }, { "pacman", "i686", NULL },
    { "apt", "mips", NULL },
  };
  g_autoptr(GError) error = NULL;
  g_autoptr(GlProfile) p = NULL;
  g_autofree char *url = NULL;
  const char *text =
    "[Profile]\nName=T\nFamily=apk\nArchitectures=x86_64;aarch64\n"
    "[Base]\nType=tarball\nUrl=https://example.invalid/{arch}/{uname_arch}/{release}/{file}\n"
    "Checksum=sha256:" "0000000000000000000000000000000000000000000000000000000000000000\n"
    "[Packages]\nRefresh=a\nUpgrade=b\nInstall=c\nListUpgradable=d\n";

  for (gsize i = 0; i < G_N_ELEMENTS (table); i++)
    g_assert_cmpstr (gl_profile_family_arch (table[i].family, table[i].machine), ==, table[i].name);

  p = gl_profile_load_from_data ("t", "/x/t.profile", text, -1, &error);
  g_assert_no_error (error);
  url = gl_profile_expand_full (p, p->url, "armv7l", "3.22", (const char *[]) { "file", "f.tar", NULL });
  g_assert_cmpstr (url, ==, "https://example.invalid/armv7/armv7l/3.22/f.tar");
  g_assert_true (gl_profile_check_machine (p, "aarch64", &error));
  g_assert_false (gl_profile_check_machine (p, "armv7l", &error));
  g_assert_error (error, GL_PROFILE_ERROR, GL_PROFILE_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (error->message, "x86_64, aarch64"));
  g_clear_error (&error);
  g_assert_false (gl_profile_check_machine (p, "mips", &error));
}

/* Follows= (create and rebase): a bootstrap profile's suite when the
 * release is another name for it, nothing for a tarball's */
static void
test_follows (void)
{
  static const char bootstrap[] =
    "[Profile]\nName=B\nFamily=apt\n\n[Base]\nType=bootstrap\nSuite=stable\n\n"
    "[Packages]\nRefresh=r\nUpgrade=u\nInstall=i\n";
  g_autoptr(GError) error = NULL;
  g_autoptr(GlProfile) b = gl_profile_load_from_data ("b", "/x/b.profile", bootstrap, -1, &error);
  g_autoptr(GlProfile) t = NULL;
  g_autofree char *follows = NULL;

  g_assert_no_error (error);
  follows = gl_profile_follows (b, "13");
  g_assert_cmpstr (follows, ==, "stable");
  g_clear_pointer (&follows, g_free);
  follows = gl_profile_follows (b, NULL);
  g_assert_cmpstr (follows, ==, "stable");
  g_assert_null (gl_profile_follows (b, "stable"));
  t = gl_profile_load_from_data ("test", "/x/test.profile", good, -1, &error);
  g_assert_no_error (error);
  g_assert_null (gl_profile_follows (t, "1.0"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/profile/good", test_good);
  g_test_add_func ("/profile/list-upgradable-optional", test_list_upgradable_optional);
  for (gsize i = 0; i < G_N_ELEMENTS (malformed); i++)
    {
      g_autofree char *name = g_strdup_printf ("/profile/malformed/%s", malformed[i].name);
      g_test_add_data_func (name, &malformed[i], test_malformed);
    }
  g_test_add_func ("/profile/repositories", test_repositories);
  g_test_add_func ("/profile/list-and-override", test_list_and_override);
  g_test_add_func ("/profile/bundled", test_bundled);
  g_test_add_func ("/profile/family-arch", test_family_arch);
  g_test_add_func ("/profile/follows", test_follows);
  return g_test_run ();
}
