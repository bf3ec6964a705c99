/* Unit tests: gl-pkg (flattening generations, the id range), gl-repo
 * (source parsing, names, keys) and gl-rebase (what a rebase keeps).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include <errno.h>
#include <linux/fs.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "gl-fsutil.h"
#include "gl-pkg.h"
#include "gl-pkg-private.h"
#include "gl-apt-sources.h"
#include "gl-rebase-private.h"
#include "gl-reclaim.h"
#include "gl-repo-private.h"
#include "gl-test-skip.h"
#include "gl-test-tmpdir.h"

#define write_file gl_test_write_file

static char *
read_file (const char *root, const char *rel)
{
  g_autofree char *p = g_build_filename (root, rel, NULL);
  char *text = NULL;
  if (!g_file_get_contents (p, &text, NULL, NULL))
    return NULL;
  return text;
}

static gboolean
has_file (const char *root, const char *rel)
{
  g_autofree char *text = read_file (root, rel);
  return text != NULL;
}

static gboolean
whiteout (const char *root, const char *rel)
{
  g_autofree char *p = g_build_filename (root, rel, NULL);
  struct stat st;
  return lstat (p, &st) == 0 && S_ISCHR (st.st_mode) && st.st_rdev == makedev (0, 0);
}

static gboolean
make_whiteout (const char *root, const char *rel)
{
  g_autofree char *p = g_build_filename (root, rel, NULL);
  return mknod (p, S_IFCHR | 0, makedev (0, 0)) == 0;
}

/* gl_pkg_upper_changes: what counts as a change to the sandbox's system */
static void
test_upper_changes (void)
{
  g_autoptr(GlTestTmpdir) tmp = gl_test_tmpdir_new ("gl-pkg-XXXXXX");
  g_autofree char *base = g_build_filename (tmp, "base", NULL);
  g_autofree char *gen = g_build_filename (tmp, "gen", NULL);
  g_autofree char *upper = g_build_filename (tmp, "upper", NULL);
  g_autofree char *p = NULL;
  const char *lowers[] = { gen, base, NULL };
  struct timespec old_times[2] = { { 1000, 0 }, { 1000, 0 } };

  write_file (base, "etc/conf", "base conf");
  write_file (base, "etc/other", "other");
  write_file (base, "var/lib/apt/lists/index", "index");
  write_file (base, "usr/bin/gone", "gone");
  write_file (gen, "etc/conf", "gen conf");
  write_file (gen, "etc/added-before", "added");
  g_assert_cmpint (g_mkdir_with_parents (upper, 0755), ==, 0);
  /* nothing, or only directories copied up, their times changed */
  g_assert_false (gl_pkg_upper_changes (upper, lowers, 0, 0));
  p = g_build_filename (upper, "var/lib/apt/lists", NULL);
  g_assert_cmpint (g_mkdir_with_parents (p, 0755), ==, 0);
  g_assert_cmpint (utimensat (AT_FDCWD, p, old_times, 0), ==, 0);
  g_assert_false (gl_pkg_upper_changes (upper, lowers, 0, 0));
  /* a file copied up as it was: the generation's version, not the base's */
  write_file (upper, "etc/conf", "gen conf");
  g_assert_false (gl_pkg_upper_changes (upper, lowers, 0, 0));
  g_assert_true (gl_pkg_upper_changes (upper, lowers + 1, 0, 0));
  write_file (upper, "etc/other", "other");
  g_assert_false (gl_pkg_upper_changes (upper, lowers, 0, 0));
  /* its bytes, its mode, an attribute */
  write_file (upper, "etc/other", "othe!");
  g_assert_true (gl_pkg_upper_changes (upper, lowers, 0, 0));
  write_file (upper, "etc/other", "other");
  g_clear_pointer (&p, g_free);
  p = g_build_filename (upper, "etc/other", NULL);
  g_assert_cmpint (chmod (p, 0600), ==, 0);
  g_assert_true (gl_pkg_upper_changes (upper, lowers, 0, 0));
  g_assert_cmpint (chmod (p, 0644), ==, 0);
  g_assert_false (gl_pkg_upper_changes (upper, lowers, 0, 0));
  if (setxattr (p, "user.glimpse-test", "x", 1, 0) == 0)
    {
      g_assert_true (gl_pkg_upper_changes (upper, lowers, 0, 0));
      g_assert_cmpint (removexattr (p, "user.glimpse-test"), ==, 0);
    }
  /* a directory's mode */
  g_clear_pointer (&p, g_free);
  p = g_build_filename (upper, "var/lib/apt", NULL);
  g_assert_cmpint (chmod (p, 0700), ==, 0);
  g_assert_true (gl_pkg_upper_changes (upper, lowers, 0, 0));
  g_assert_cmpint (chmod (p, 0755), ==, 0);
  /* a new file (a new index) */
  write_file (upper, "var/lib/apt/lists/new-index", "new");
  g_assert_true (gl_pkg_upper_changes (upper, lowers, 0, 0));
  g_clear_pointer (&p, g_free);
  p = g_build_filename (upper, "var/lib/apt/lists/new-index", NULL);
  g_assert_cmpint (unlink (p), ==, 0);
  g_assert_false (gl_pkg_upper_changes (upper, lowers, 0, 0));
  /* AppStream's caches, which apt's hook rewrites on every run: alone
   * they are no change (an add-repo or update that changed nothing else
   * makes no generation); a directory beside them is one */
  write_file (base, "var/cache/swcatalog/cache/C-local-metainfo.xb", "the base's cache");
  write_file (upper, "var/cache/swcatalog/cache/C-local-metainfo.xb", "a cache built anew, longer");
  write_file (upper, "var/cache/app-info/xmls/new.xml", "new");
  g_assert_false (gl_pkg_upper_changes (upper, lowers, 0, 0));
  write_file (upper, "var/cache/swcatalog2/x", "x");
  g_assert_true (gl_pkg_upper_changes (upper, lowers, 0, 0));
  g_clear_pointer (&p, g_free);
  p = g_build_filename (upper, "var/cache/swcatalog2", NULL);
  g_assert_true (gl_rm_rf (p, NULL, NULL));
  g_assert_false (gl_pkg_upper_changes (upper, lowers, 0, 0));
  /* whiteouts: over nothing no change, over a file one */
  if (make_whiteout (upper, "etc/never-was"))
    {
      g_assert_false (gl_pkg_upper_changes (upper, lowers, 0, 0));
      g_assert_true (make_whiteout (upper, "etc/added-before"));
      g_assert_true (gl_pkg_upper_changes (upper, lowers, 0, 0));
    }
  else
    g_test_message ("cannot make whiteouts (mknod 0:0) here: not tested");
}

static void
test_flatten (void)
{
  g_autoptr(GlTestTmpdir) tmp = gl_test_tmpdir_new ("gl-pkg-XXXXXX");
  g_autofree char *base = g_build_filename (tmp, "base", NULL);
  g_autofree char *old = g_build_filename (tmp, "old", NULL);
  g_autofree char *upper = g_build_filename (tmp, "upper", NULL);
  g_autofree char *next = g_build_filename (tmp, "next", NULL);
  g_autofree char *kept = NULL, *changed = NULL, *old_changed = NULL;
  g_autofree char *p1 = NULL, *p2 = NULL;
  g_autoptr(GError) error = NULL;
  struct stat a, b;
  guint n_files = 0;

  write_file (base, "etc/base-file", "base");
  write_file (base, "usr/share/doc/x", "base doc");
  write_file (old, "etc/kept", "old kept");
  write_file (old, "etc/changed", "old");
  write_file (old, "usr/share/opaque/gone", "old");
  write_file (old, "usr/bin/removed", "old");
  write_file (upper, "etc/changed", "new");
  write_file (upper, "etc/added", "added");
  write_file (upper, "usr/share/opaque/new", "new");
  g_assert_cmpint (g_mkdir_with_parents (next, 0755), ==, 0);
  {
    g_autofree char *op = g_build_filename (upper, "usr/share/opaque", NULL);
    if (setxattr (op, "user.overlay.opaque", "y", 1, 0) != 0)
      {
        gl_test_skip ("user xattrs not supported here");
        return;
      }
  }
  if (!make_whiteout (tmp, "probe"))
    {
      gl_test_skip ("cannot make whiteouts (mknod 0:0) here");
      return;
    }
  {
    g_autofree char *bin = g_build_filename (upper, "usr/bin", NULL);
    g_assert_cmpint (g_mkdir_with_parents (bin, 0755), ==, 0);
  }
  g_assert_true (make_whiteout (upper, "usr/bin/removed"));
  write_file (upper, "usr/bin/suid", "#!/bin/sh\n");
  {
    g_autofree char *p = g_build_filename (upper, "usr/bin/suid", NULL);
    g_assert_cmpint (chmod (p, 06777), ==, 0);
  }
  g_assert_true (make_whiteout (upper, "etc/base-file"));

  g_assert_true (gl_pkg_tree_link_copy (old, next, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (gl_pkg_tree_merge_upper (upper, next, base, &n_files, NULL, &error));
  g_assert_cmpuint (n_files, ==, 4);
  {
    g_autofree char *p = g_build_filename (next, "usr/bin/suid", NULL);
    g_assert_cmpint (stat (p, &a), ==, 0);
    g_assert_cmpint (a.st_mode & 07777, ==, 0755);   /* no set-id, no group/other write */
  }
  g_assert_no_error (error);

  kept = read_file (next, "etc/kept");
  changed = read_file (next, "etc/changed");
  old_changed = read_file (old, "etc/changed");
  g_assert_cmpstr (kept, ==, "old kept");
  g_assert_cmpstr (changed, ==, "new");
  g_assert_cmpstr (old_changed, ==, "old");            /* the old generation is untouched */
  p1 = g_build_filename (old, "etc/kept", NULL);
  p2 = g_build_filename (next, "etc/kept", NULL);
  g_assert_cmpint (stat (p1, &a), ==, 0);
  g_assert_cmpint (stat (p2, &b), ==, 0);
  g_assert_cmpuint (a.st_ino, ==, b.st_ino);           /* a hard link, not a copy */
  g_assert_false (has_file (next, "usr/share/opaque/gone"));   /* opaque: replaced whole */
  g_assert_true (has_file (next, "usr/share/opaque/new"));
  g_assert_false (whiteout (next, "usr/bin/removed"));  /* nothing of the base to hide */
  g_assert_false (has_file (next, "usr/bin/removed"));
  g_assert_true (has_file (old, "usr/bin/removed"));
  g_assert_true (whiteout (next, "etc/base-file"));     /* hides the base's file */
  g_assert_true (has_file (next, "etc/added"));
}

static void
test_free_range (void)
{
  /* (the lookups of accounts: /pkg/free-range-accounts) */
  g_assert_cmpuint (gl_pkg_free_range_start_full ("", "", 65536, NULL, NULL), ==, 100000);
  g_assert_cmpuint (gl_pkg_free_range_start_full ("a:100000:65536\nb:165536:65536\n", "a:100000:65536\n", 65536, NULL, NULL),
                    ==, 231072);
  /* an entry only in subgid counts too; malformed lines are ignored */
  g_assert_cmpuint (gl_pkg_free_range_start_full ("x:y:z\n", "c:100000:10\n", 65536, NULL, NULL), ==, 165536);
}

static gboolean
known_ids (guint32 id, gpointer data)
{
  return id == GPOINTER_TO_UINT (data) || id == 231072 + 65535;
}

/* A range holding an account's id (of NSS: LDAP, SSSD, not only /etc/passwd)
 * is skipped: the range's root would own that account's files. */
static void
test_free_range_accounts (void)
{
  g_assert_cmpuint (gl_pkg_free_range_start_full ("", "", 65536, known_ids, GUINT_TO_POINTER (100000)), ==, 165536);
  g_assert_cmpuint (gl_pkg_free_range_start_full ("", "", 65536, known_ids, GUINT_TO_POINTER (165535)), ==, 165536);
  g_assert_cmpuint (gl_pkg_free_range_start_full ("", "", 65536, known_ids, GUINT_TO_POINTER (165536)), ==, 100000);
  /* an account in the next free range too: the one after */
  g_assert_cmpuint (gl_pkg_free_range_start_full ("a:100000:65536\n", "", 65536, known_ids,
                                                  GUINT_TO_POINTER (170000)), ==, 296608);
  g_assert_true (gl_pkg_id_is_account (0, NULL));
  /* which sources of nsswitch.conf list every account they know */
  g_assert_true (gl_pkg_nss_lists_all (NULL));
  g_assert_true (gl_pkg_nss_lists_all ("passwd:         files systemd\ngroup:          files [SUCCESS=merge] systemd\n"
                                       "hosts: files dns mdns4_minimal\n"));
  g_assert_true (gl_pkg_nss_lists_all ("# passwd: ldap\npasswd: compat # ldap\n"));
  g_assert_false (gl_pkg_nss_lists_all ("passwd: files sss\ngroup: files sss\n"));
  g_assert_false (gl_pkg_nss_lists_all ("passwd: files\ngroup:files ldap\n"));

  /* a local user with a high uid (and its group), through the system's
   * own lookups: in a mount namespace of this test whose /etc/passwd and
   * /etc/group name them */
  if (g_test_subprocess ())
    {
      g_autoptr(GlTestTmpdir) tmp = gl_test_tmpdir_new ("gl-ids-XXXXXX");
      g_autofree char *passwd = g_build_filename (tmp, "passwd", NULL);
      g_autofree char *group = g_build_filename (tmp, "group", NULL);
      g_autofree char *real_passwd = NULL, *real_group = NULL, *p = NULL, *g = NULL;

      g_assert_true (g_file_get_contents ("/etc/passwd", &real_passwd, NULL, NULL));
      g_assert_true (g_file_get_contents ("/etc/group", &real_group, NULL, NULL));
      p = g_strconcat (real_passwd, "glhigh:x:100042:200042::/nonexistent:/usr/sbin/nologin\n", NULL);
      g = g_strconcat (real_group, "glhighg:x:165600:\n", NULL);
      g_assert_true (g_file_set_contents (passwd, p, -1, NULL));
      g_assert_true (g_file_set_contents (group, g, -1, NULL));
      g_assert_cmpint (unshare (CLONE_NEWNS), ==, 0);
      g_assert_cmpint (mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), ==, 0);
      g_assert_cmpint (mount (passwd, "/etc/passwd", NULL, MS_BIND, NULL), ==, 0);
      g_assert_cmpint (mount (group, "/etc/group", NULL, MS_BIND, NULL), ==, 0);
      g_assert_true (gl_pkg_id_is_account (100042, NULL));
      g_assert_true (gl_pkg_id_is_account (165600, NULL));
      /* 100000… holds the user, 165536… the group: the next (ranges of
       * 1000 ids here: a lookup of each of 65536 takes seconds) */
      g_assert_cmpuint (gl_pkg_free_range_start_full ("", "", 1000, gl_pkg_id_is_account, NULL), ==, 231072);
      /* listed at once: the same answer for whole ranges, without a
       * lookup per id where the system's sources list all they know */
      {
        g_autoptr(GlPkgAccounts) accounts = gl_pkg_accounts_new ("/etc/nsswitch.conf");
        g_autofree char *nss = NULL;
        g_assert_true (gl_pkg_accounts_known (100042, accounts));
        g_assert_true (gl_pkg_accounts_known (165600, accounts));
        g_assert_false (gl_pkg_accounts_known (100043, accounts));
        g_file_get_contents ("/etc/nsswitch.conf", &nss, NULL, NULL);
        if (gl_pkg_nss_lists_all (nss))
          {
            gint64 t0 = g_get_monotonic_time ();
            g_assert_cmpuint (gl_pkg_free_range_start ("", "", 65536), ==, 231072);
            /* (a lookup per id took ≈ 30 s with nss-systemd) */
            g_assert_cmpint (g_get_monotonic_time () - t0, <, 5 * G_USEC_PER_SEC);
          }
      }
      return;
    }
  {
    pid_t pid = fork ();
    int st = 0;
    if (pid == 0)
      _exit (unshare (CLONE_NEWNS) == 0 ? 0 : 1);
    g_assert_cmpint (waitpid (pid, &st, 0), ==, pid);
    if (!WIFEXITED (st) || WEXITSTATUS (st) != 0)
      {
        gl_test_skip ("a local user of this test's own needs a mount namespace (run as root)");
        return;
      }
  }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_test_trap_assert_passed ();
}

static void
test_parse_sources (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GlRepoSource) s = gl_repo_source_parse ("deb [arch=amd64] https://example.org/apt stable main contrib", &error);
  g_autofree char *text = NULL;

  g_assert_no_error (error);
  g_assert_cmpstr (s->uris[0], ==, "https://example.org/apt");
  g_assert_cmpstr (s->suites[0], ==, "stable");
  g_assert_cmpstr (s->components[1], ==, "contrib");
  g_assert_cmpstr (s->architectures[0], ==, "amd64");
  text = gl_repo_source_to_deb822 (s, "/etc/apt/keyrings/glimpse-x.asc");
  g_assert_nonnull (strstr (text, "Types: deb\nURIs: https://example.org/apt\nSuites: stable\n"
                                  "Components: main contrib\nArchitectures: amd64\n"
                                  "Signed-By: /etc/apt/keyrings/glimpse-x.asc\n"));
  g_clear_pointer (&s, gl_repo_source_free);

  s = gl_repo_source_parse ("Types: deb\nURIs: http://127.0.0.1:8000/r\nSuites: ./\n", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (s->suites[0], ==, "./");
  g_assert_null (s->components[0]);
  g_clear_pointer (&s, gl_repo_source_free);

  /* bad input: each refused with a message */
  {
    const char *bad[] = {
      "deb ftp://example.org/ stable main",
      "deb [signed-by=/usr/share/keyrings/x.gpg] https://example.org/ stable main",
      "deb https://example.org/ stable",
      "deb https://example.org/ stable main;rm",
      "Types: deb\nURIs: https://a/\nSuites: s\nComponents: main\nSigned-By: /x",
      "Types: deb\nURIs: https://a/ https://b/\nSuites: s\nComponents: main",
      "Types: deb\nURIs: https://a/\nSuites: s\nComponents: main\nTrusted: yes",
      "hello",
      "",
    };
    for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
      {
        g_autoptr(GError) e = NULL;
        g_autoptr(GlRepoSource) r = gl_repo_source_parse (bad[i], &e);
        g_assert_null (r);
        g_assert_error (e, GL_PKG_ERROR, GL_PKG_ERROR_INVALID);
      }
  }

  /* a syntax error says what was wrong and what a spec looks like */
  {
    const char *malformed[][2] = {
      { "deb", "needs a URI and a suite" },
      { "  deb\n", "needs a URI and a suite" },
      { "debb http://127.0.0.1:8122/repo ./", "lacks Types" },
      { "Types: deb\nURIs: http://127.0.0.1/r\nSuites ./", "not a field" },
    };
    for (gsize i = 0; i < G_N_ELEMENTS (malformed); i++)
      {
        g_autoptr(GError) e = NULL;
        g_autoptr(GlRepoSource) r = gl_repo_source_parse (malformed[i][0], &e);
        g_assert_null (r);
        g_assert_error (e, GL_PKG_ERROR, GL_PKG_ERROR_INVALID);
        g_assert_nonnull (strstr (e->message, malformed[i][1]));
        g_assert_nonnull (strstr (e->message, "give a “deb URI SUITE [COMPONENT…]” line"));
      }
  }
}

static void
test_names (void)
{
  g_autofree char *n = gl_repo_name_from_uri ("https://Example.org:8443/apt/Daily/");
  g_assert_cmpstr (n, ==, "example.org-8443-apt-daily");
  g_assert_true (gl_repo_name_validate ("test", NULL));
  g_assert_false (gl_repo_name_validate ("../x", NULL));
  g_assert_false (gl_repo_name_validate ("-x", NULL));
  g_assert_false (gl_repo_name_validate ("A", NULL));
  g_assert_true (gl_pkg_name_validate ("libfoo1:amd64=1.2-3", NULL));
  g_assert_false (gl_pkg_name_validate ("--force-yes", NULL));
  g_assert_false (gl_pkg_name_validate ("a b", NULL));
  g_assert_false (gl_pkg_name_validate ("a;b", NULL));
}

static void
test_key_garbage (void)
{
  g_autoptr(GBytes) junk = g_bytes_new_static ("not a key\n", 10);
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) f = NULL;

  g_autofree char *gpg = g_find_program_in_path ("gpg");

  if (gpg == NULL)
    {
      gl_test_skip ("gpg is not installed");
      return;
    }
  f = gl_repo_key_fingerprints (junk, &error);
  g_assert_null (f);
  g_assert_error (error, GL_PKG_ERROR, GL_PKG_ERROR_INVALID);
  /* one line, gpg's reason once, no temporary home, and what to give */
  g_assert_nonnull (strstr (error->message, "not an OpenPGP public key (gpg: "));
  g_assert_null (strchr (error->message, '\n'));
  g_assert_null (strstr (error->message, "gpg: gpg:"));
  g_assert_null (strstr (error->message, "glimpse-gpg-"));
  g_assert_nonnull (strstr (error->message, "--key"));
}

#define PKG(name, status) "Package: " name "\nStatus: " status "\nArchitecture: amd64\nDescription: x\n multi-line\n .\n\n"

/* The packages a rebase puts back: installed in the view, not in the base,
 * not installed as a dependency (apt's Auto-Installed). */
static void
test_kept_packages (void)
{
  g_autoptr(GlTestTmpdir) tmp = gl_test_tmpdir_new ("gl-rebase-XXXXXX");
  g_autoptr(GlSandbox) s = g_new0 (GlSandbox, 1);
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) kept = NULL;
  g_autofree char *joined = NULL;

  s->id = g_strdup ("t");
  s->path = g_strdup (tmp);
  s->base = g_strdup (GL_BASE_ROOTFS);
  s->family = g_strdup ("apt");
  write_file (tmp, "rootfs/var/lib/dpkg/status",
              PKG ("base-a", "install ok installed") PKG ("base-b", "install ok installed"));
  /* no system layer: nothing to keep */
  kept = gl_rebase_kept_packages (s, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (g_strv_length (kept), ==, 0);
  g_clear_pointer (&kept, g_strfreev);

  write_file (tmp, "system/current", "1\n");
  write_file (tmp, "system/1/tree/var/lib/dpkg/status",
              PKG ("base-a", "install ok installed") PKG ("base-b", "install ok installed")
              PKG ("zeta", "install ok installed") PKG ("mine", "install ok installed")
              PKG ("a-dep", "install ok installed") PKG ("gone", "deinstall ok config-files")
              PKG ("broken", "install reinstreq half-installed"));
  write_file (tmp, "system/1/tree/var/lib/apt/extended_states",
              "Package: a-dep\nArchitecture: amd64\nAuto-Installed: 1\n\n"
              "Package: mine\nArchitecture: amd64\nAuto-Installed: 0\n");
  kept = gl_rebase_kept_packages (s, &error);
  g_assert_no_error (error);
  joined = g_strjoinv (" ", kept);
  g_assert_cmpstr (joined, ==, "mine zeta");
  g_clear_pointer (&kept, g_strfreev);
  g_clear_pointer (&joined, g_free);

  /* after a rebase, the base is system/base/tree */
  write_file (tmp, "system/base/tree/var/lib/dpkg/status",
              PKG ("base-a", "install ok installed") PKG ("zeta", "install ok installed"));
  kept = gl_rebase_kept_packages (s, &error);
  g_assert_no_error (error);
  joined = g_strjoinv (" ", kept);
  g_assert_cmpstr (joined, ==, "base-b mine");
  g_clear_pointer (&kept, g_strfreev);
  g_clear_pointer (&joined, g_free);

  /* apk: what the world asks for that the base's did not */
  g_free (s->family);
  s->family = g_strdup ("apk");
  write_file (tmp, "system/base/tree/etc/apk/world", "alpine-base\nbusybox\n");
  write_file (tmp, "system/1/tree/etc/apk/world", "alpine-base\nbusybox\nmousepad\nfoo@testing>=1.2\n");
  kept = gl_rebase_kept_packages (s, &error);
  g_assert_no_error (error);
  joined = g_strjoinv (" ", kept);
  g_assert_cmpstr (joined, ==, "foo@testing>=1.2 mousepad");
  g_clear_pointer (&kept, g_strfreev);
  g_clear_pointer (&joined, g_free);

  /* pacman: installed explicitly (not %REASON% 1) and not in the base;
   * a whiteout of the system layer hides a package of the base */
  g_free (s->family);
  s->family = g_strdup ("pacman");
#define DESC(n, reason) "%NAME%\n" n "\n\n%VERSION%\n1-1\n\n" reason
  write_file (tmp, "system/base/tree/var/lib/pacman/local/base-1-1/desc", DESC ("base", ""));
  write_file (tmp, "system/base/tree/var/lib/pacman/local/gone-1-1/desc", DESC ("gone", ""));
  write_file (tmp, "system/1/tree/var/lib/pacman/local/mousepad-1-1/desc", DESC ("mousepad", ""));
  write_file (tmp, "system/1/tree/var/lib/pacman/local/gtk3-1-1/desc", DESC ("gtk3", "%REASON%\n1\n"));
  write_file (tmp, "system/1/tree/var/lib/pacman/local/vim-1-1/desc", DESC ("vim", "%REASON%\n0\n"));
#undef DESC
  {
    g_autofree char *dir = g_build_filename (tmp, "system/1/tree/var/lib/pacman/local", NULL);
    g_assert_true (make_whiteout (dir, "gone-1-1"));
  }
  kept = gl_rebase_kept_packages (s, &error);
  g_assert_no_error (error);
  joined = g_strjoinv (" ", kept);
  g_assert_cmpstr (joined, ==, "mousepad vim");
  g_clear_pointer (&kept, g_strfreev);
  g_clear_pointer (&joined, g_free);

  /* another family with packages: refused, saying what to do */
  g_free (s->family);
  s->family = g_strdup ("dnf");
  kept = gl_rebase_kept_packages (s, &error);
  g_assert_null (kept);
  g_assert_error (error, GL_PKG_ERROR, GL_PKG_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (error->message, "glimpse reset t"));

}

/* A sandbox of @family at @path, on a base of its own (rootfs/) */
static GlSandbox *
new_sandbox (const char *path, const char *family)
{
  GlSandbox *s = g_new0 (GlSandbox, 1);
  s->id = g_strdup ("t");
  s->path = g_strdup (path);
  s->base = g_strdup (GL_BASE_ROOTFS);
  s->family = g_strdup (family);
  return s;
}

/* The old view's files are the sandbox's, read as root: a link (here on
 * the way to dpkg's status, pacman's database or the added repositories,
 * towards files the sandbox does not own) is never followed. */
static void
test_kept_links (void)
{
  g_autoptr(GlTestTmpdir) tmp = gl_test_tmpdir_new ("gl-rebase-XXXXXX");
  g_autofree char *host = g_build_filename (tmp, "host", NULL);
  g_autofree char *out = g_build_filename (tmp, "out", NULL);
  g_autofree char *link = NULL;
  g_autoptr(GlSandbox) s = new_sandbox (tmp, "apt");
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) kept = NULL;
  guint n = 0;

  s->repositories = g_strsplit ("ppa", ",", -1);
  write_file (tmp, "rootfs/var/lib/dpkg/status", PKG ("base-a", "install ok installed"));
  write_file (tmp, "system/current", "1\n");
  write_file (host, "dpkg/status", PKG ("base-a", "install ok installed") PKG ("host-only", "install ok installed"));
  write_file (host, "glimpse-ppa.sources", "Types: deb\nURIs: http://host.invalid/\n");
  write_file (host, "keyrings/glimpse-ppa.asc", "host key\n");
  write_file (host, "local/host-only-1-1/desc", "%NAME%\nhost-only\n");
  write_file (tmp, "system/1/tree/etc/apt/placeholder", "");
  write_file (tmp, "system/1/tree/var/lib/placeholder", "");

  link = g_build_filename (tmp, "system/1/tree/var/lib/dpkg", NULL);
  g_assert_cmpint (symlink ("../../../../../host/dpkg", link), ==, 0);
  g_clear_pointer (&link, g_free);
  link = g_build_filename (tmp, "system/1/tree/etc/apt/sources.list.d", NULL);
  g_assert_cmpint (symlink (host, link), ==, 0);
  g_clear_pointer (&link, g_free);
  link = g_build_filename (tmp, "system/1/tree/etc/apt/keyrings", NULL);
  g_assert_cmpint (symlink ("../../../../../host/keyrings", link), ==, 0);
  g_clear_pointer (&link, g_free);
  link = g_build_filename (tmp, "system/1/tree/var/lib/pacman", NULL);
  g_assert_cmpint (symlink (host, link), ==, 0);

  /* (and the database it cannot read stops the rebase: see /rebase/unreadable-db) */
  kept = gl_rebase_kept_packages (s, &error);
  g_assert_null (kept);
  g_assert_error (error, GL_PKG_ERROR, GL_PKG_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "/var/lib/dpkg/status"));
  g_assert_null (strstr (error->message, "host-only"));
  g_clear_error (&error);

  g_free (s->family);
  s->family = g_strdup ("pacman");
  kept = gl_rebase_kept_packages (s, &error);
  g_assert_null (kept);
  g_assert_error (error, GL_PKG_ERROR, GL_PKG_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "/var/lib/pacman/local"));
  g_clear_error (&error);

  g_assert_true (gl_rebase_copy_repositories (s, out, &n, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (n, ==, 0);
  g_assert_false (has_file (out, "glimpse-ppa.sources"));
  g_assert_false (has_file (out, "glimpse-ppa.asc"));

  /* the same files, where they belong, are copied */
  {
    g_autofree char *dir = g_build_filename (tmp, "system/1/tree/etc/apt/sources.list.d", NULL);
    g_autofree char *out2 = g_build_filename (tmp, "out2", NULL);
    g_assert_cmpint (unlink (dir), ==, 0);
    write_file (tmp, "system/1/tree/etc/apt/sources.list.d/glimpse-ppa.sources", "Types: deb\n");
    g_assert_true (gl_rebase_copy_repositories (s, out2, &n, &error));
    g_assert_no_error (error);
    g_assert_cmpuint (n, ==, 1);
    g_assert_true (has_file (out2, "glimpse-ppa.sources"));
    g_assert_false (has_file (out2, "glimpse-ppa.asc"));
  }

}

/* kept packages of @s fail, naming @rel and what it is (@why) */
static void
assert_db_refused (GlSandbox *s, const char *rel, const char *why)
{
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) kept = gl_rebase_kept_packages (s, &error);

  g_assert_null (kept);
  g_assert_error (error, GL_PKG_ERROR, GL_PKG_ERROR_INVALID);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, rel));
  g_assert_nonnull (strstr (error->message, why));
  g_assert_nonnull (strstr (error->message, "nothing was changed"));
  g_assert_nonnull (strstr (error->message, "glimpse reset t"));
}

/* A package database a rebase cannot read (a link, a FIFO, not dpkg's
 * format, cut short, gone or emptied where the base has one) stops it
 * with an error naming the file: read as no packages, the rebase would put
 * nothing back on the new base and call that success.  (On the old code
 * each case gave an empty list; checked.)  None at all, in the view and
 * the base, is no package. */
static void
test_kept_unreadable (void)
{
  g_autoptr(GlTestTmpdir) tmp = gl_test_tmpdir_new ("gl-rebase-XXXXXX");
  g_autoptr(GlSandbox) s = new_sandbox (tmp, "apt");
  g_autofree char *status = g_build_filename (tmp, "system/1/tree/var/lib/dpkg/status", NULL);
  g_autofree char *base_status = g_build_filename (tmp, "rootfs/var/lib/dpkg/status", NULL);
  g_autofree char *host = g_build_filename (tmp, "host-status", NULL);
  const char *good = PKG ("base-a", "install ok installed") PKG ("mine", "install ok installed");
#define NUL_STATUS PKG ("base-a", "install ok installed") "Package: mi\0ne\nStatus: install ok installed\n"
  struct {
    const char *text, *why;
    gssize len;
  } bad[] = {
    { "", "lists no package, though its base's lists some", -1 },
    { PKG ("base-a", "deinstall ok config-files"), "lists no package", -1 },
    { "this is not dpkg's status\n", "no “Field: value”", -1 },
    { PKG ("base-a", "install ok installed") "Package: mine\nArchitecture: amd64\n", "without a Package or a Status", -1 },
    { NUL_STATUS, "NUL", sizeof NUL_STATUS - 1 },
  };
#undef NUL_STATUS
  g_auto(GStrv) kept = NULL;
  g_autoptr(GError) error = NULL;

  write_file (tmp, "rootfs/var/lib/dpkg/status", PKG ("base-a", "install ok installed"));
  write_file (tmp, "system/current", "1\n");
  write_file (tmp, "system/1/tree/var/lib/dpkg/status", good);
  kept = gl_rebase_kept_packages (s, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (kept[0], ==, "mine");
  g_clear_pointer (&kept, g_strfreev);

  /* malformed, or emptied */
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_assert_true (g_file_set_contents (status, bad[i].text, bad[i].len, NULL));
      assert_db_refused (s, "/var/lib/dpkg/status", bad[i].why);
    }
  /* a link (to a status with more packages, or /etc/shadow), a FIFO:
   * never followed nor waited on */
  g_assert_cmpint (g_unlink (status), ==, 0);
  write_file (tmp, "host-status", good);
  g_assert_cmpint (symlink (host, status), ==, 0);
  assert_db_refused (s, "/var/lib/dpkg/status", "link");
  g_assert_cmpint (g_unlink (status), ==, 0);
  g_assert_cmpint (mkfifo (status, 0644), ==, 0);
  assert_db_refused (s, "/var/lib/dpkg/status", "not a regular file");
  g_assert_cmpint (g_unlink (status), ==, 0);
  /* the layer removed it (a whiteout), the base has one */
  if (make_whiteout (tmp, "system/1/tree/var/lib/dpkg/status"))
    {
      assert_db_refused (s, "/var/lib/dpkg/status", "is missing, though its base has one");
      g_assert_cmpint (g_unlink (status), ==, 0);
    }
  else
    g_test_message ("cannot make whiteouts (mknod 0:0) here: that case not tested");
  /* the base's own, a link, when the layer's is fine */
  write_file (tmp, "system/1/tree/var/lib/dpkg/status", good);
  g_assert_cmpint (g_unlink (base_status), ==, 0);
  g_assert_cmpint (symlink (host, base_status), ==, 0);
  assert_db_refused (s, "/var/lib/dpkg/status", "of its base");
  /* none in the base: each package of the view is put back; none at
   * all: there is nothing to put back */
  g_assert_cmpint (g_unlink (base_status), ==, 0);
  kept = gl_rebase_kept_packages (s, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (g_strv_length (kept), ==, 2);
  g_clear_pointer (&kept, g_strfreev);
  g_assert_cmpint (g_unlink (status), ==, 0);
  kept = gl_rebase_kept_packages (s, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (g_strv_length (kept), ==, 0);
  g_clear_pointer (&kept, g_strfreev);
  /* unreadable (as root, a mode is no bar) */
  write_file (tmp, "rootfs/var/lib/dpkg/status", PKG ("base-a", "install ok installed"));
  write_file (tmp, "system/1/tree/var/lib/dpkg/status", good);
  if (getuid () != 0)
    {
      g_assert_cmpint (chmod (status, 0), ==, 0);
      assert_db_refused (s, "/var/lib/dpkg/status", "cannot be read");
      g_assert_cmpint (chmod (status, 0644), ==, 0);
    }

  /* apk's world and pacman's database likewise */
  g_free (s->family);
  s->family = g_strdup ("apk");
  write_file (tmp, "rootfs/etc/apk/world", "alpine-base\n");
  write_file (tmp, "system/1/tree/etc/apk/placeholder", "");
  {
    g_autofree char *world = g_build_filename (tmp, "system/1/tree/etc/apk/world", NULL);
    g_assert_cmpint (symlink (host, world), ==, 0);
    assert_db_refused (s, "/etc/apk/world", "cannot be read");
  }
  g_free (s->family);
  s->family = g_strdup ("pacman");
  write_file (tmp, "rootfs/var/lib/pacman/local/base-1-1/desc", "%NAME%\nbase\n");
  write_file (tmp, "system/1/tree/var/lib/pacman/local/placeholder", "");
  {
    g_autofree char *local = g_build_filename (tmp, "system/1/tree/var/lib/pacman/local", NULL);
    g_assert_true (gl_rm_rf (local, NULL, NULL));
    if (make_whiteout (tmp, "system/1/tree/var/lib/pacman/local"))
      assert_db_refused (s, "/var/lib/pacman/local", "is missing, though its base has one");
  }
}

/* What the system layer removed is not read from the base below it:
 * neither a stale extended_states (which would make a package installed by
 * hand look automatic, and lose it) nor a removed repository, whether the
 * layer has a whiteout there or an opaque directory (one removed and made
 * again). */
static void
check_kept_hidden (const char *tmp, const char *out)
{
  g_autoptr(GlSandbox) s = new_sandbox (tmp, "apt");
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) kept = NULL;
  guint n = 0;

  s->repositories = g_strsplit ("ppa", ",", -1);
  kept = gl_rebase_kept_packages (s, &error);
  g_assert_no_error (error);
  g_assert_true (g_strv_contains ((const char * const *) kept, "mine"));
  g_assert_true (gl_rebase_copy_repositories (s, out, &n, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (n, ==, 0);
  g_assert_false (has_file (out, "glimpse-ppa.sources"));
}

static void
test_kept_hidden (void)
{
  g_autoptr(GlTestTmpdir) tmp = gl_test_tmpdir_new ("gl-rebase-XXXXXX");
  g_autofree char *tree = g_build_filename (tmp, "system/1/tree", NULL);
  g_autofree char *out = g_build_filename (tmp, "out", NULL);
  g_autofree char *out2 = g_build_filename (tmp, "out2", NULL);
  const char *dirs[] = { "var/lib/apt", "etc/apt/sources.list.d" };
  const char *files[] = { "var/lib/apt/extended_states", "etc/apt/sources.list.d/glimpse-ppa.sources" };

  write_file (tmp, "rootfs/var/lib/dpkg/status", PKG ("base-a", "install ok installed"));
  write_file (tmp, "rootfs/var/lib/apt/extended_states", "Package: mine\nAuto-Installed: 1\n");
  write_file (tmp, "rootfs/etc/apt/sources.list.d/glimpse-ppa.sources", "Types: deb\n");
  write_file (tmp, "system/current", "1\n");
  write_file (tmp, "system/1/tree/var/lib/dpkg/status",
              PKG ("base-a", "install ok installed") PKG ("mine", "install ok installed"));
  write_file (tmp, "system/1/tree/var/lib/apt/placeholder", "");
  write_file (tmp, "system/1/tree/etc/apt/sources.list.d/placeholder", "");
  for (gsize i = 0; i < G_N_ELEMENTS (dirs); i++)
    {
      g_autofree char *dir = g_build_filename (tree, dirs[i], NULL);
      if (setxattr (dir, "user.overlay.opaque", "y", 1, 0) != 0)
        {
          g_test_message ("cannot set user.overlay.opaque here: opaque directories not tested");
          break;
        }
      if (i == G_N_ELEMENTS (dirs) - 1)
        check_kept_hidden (tmp, out);
    }
  for (gsize i = 0; i < G_N_ELEMENTS (dirs); i++)
    {
      g_autofree char *dir = g_build_filename (tree, dirs[i], NULL);
      (void) removexattr (dir, "user.overlay.opaque");
      if (!make_whiteout (tree, files[i]))
        {
          gl_test_skip ("cannot make whiteouts (mknod 0:0) here");
          return;
        }
    }
  check_kept_hidden (tmp, out2);
}

/* The repositories the proxy allows, from a base that is an image's tree:
 * its links are not followed (to the host's configuration, which would
 * allow its repositories), and nothing but regular files is read. */
static void
test_repository_uris_links (void)
{
  g_autoptr(GlTestTmpdir) tmp = gl_test_tmpdir_new ("gl-uris-XXXXXX");
  g_autofree char *host = g_build_filename (tmp, "host", NULL);
  g_autofree char *base = g_build_filename (tmp, "rootfs", NULL);
  g_autofree char *link = NULL;
  g_autofree char *fifo = NULL;
  g_autoptr(GlSandbox) s = new_sandbox (tmp, "apt");
  g_auto(GStrv) uris = NULL;

  write_file (host, "host.list", "deb http://host-only.invalid/debian stable main\n");
  write_file (host, "host.repo", "[host]\nbaseurl=http://host-only.invalid/fedora\n");
  write_file (base, "etc/apt/sources.list", "deb http://image.invalid/debian stable main\n");
  write_file (base, "etc/dnf/placeholder", "");
  link = g_build_filename (base, "etc/apt/sources.list.d", NULL);
  g_assert_cmpint (symlink (host, link), ==, 0);
  g_clear_pointer (&link, g_free);
  link = g_build_filename (base, "etc/yum.repos.d", NULL);
  g_assert_cmpint (symlink (host, link), ==, 0);
  g_clear_pointer (&link, g_free);
  link = g_build_filename (base, "etc/dnf/dnf.conf", NULL);
  g_assert_cmpint (symlink ("../../../host/host.repo", link), ==, 0);
  /* (a FIFO would block the read) */
  fifo = g_build_filename (base, "etc/pacman.conf", NULL);
  g_assert_cmpint (mkfifo (fifo, 0644), ==, 0);

  uris = gl_pkg_repository_uris (s, base, NULL);
  g_assert_true (g_strv_contains ((const char * const *) uris, "http://image.invalid/debian"));
  for (char **u = uris; *u; u++)
    g_assert_null (strstr (*u, "host-only"));
  g_clear_pointer (&uris, g_strfreev);

  g_free (s->family);
  s->family = g_strdup ("dnf");
  uris = gl_pkg_repository_uris (s, base, NULL);
  for (char **u = uris; *u; u++)
    g_assert_null (strstr (*u, "host-only"));
  g_clear_pointer (&uris, g_strfreev);

}

/* A sandbox's file as its view shows it (os-release, apt's sources):
 * read as root without following a link of the sandbox's tree */
static void
test_read_sandbox_file_links (void)
{
  g_autoptr(GlTestTmpdir) tmp = gl_test_tmpdir_new ("gl-sbfile-XXXXXX");
  g_autofree char *host = g_build_filename (tmp, "host", NULL);
  g_autofree char *link = NULL;
  g_autofree char *text = NULL;
  g_autoptr(GlSandbox) s = new_sandbox (tmp, "apt");

  write_file (host, "sources.list.d/host.sources", "Types: deb\nURIs: http://host-only.invalid/\n");
  write_file (tmp, "rootfs/usr/lib/os-release", "ID=image\n");
  write_file (tmp, "system/current", "1\n");
  write_file (tmp, "system/1/tree/etc/apt/placeholder", "");
  link = g_build_filename (tmp, "system/1/tree/etc/apt/sources.list.d", NULL);
  g_assert_cmpint (symlink ("../../../../../host/sources.list.d", link), ==, 0);
  g_clear_pointer (&link, g_free);
  link = g_build_filename (tmp, "rootfs/etc/os-release", NULL);
  write_file (tmp, "rootfs/etc/placeholder", "");
  g_assert_cmpint (symlink ("../usr/lib/os-release", link), ==, 0);

  g_assert_null (gl_repo_read_sandbox_file (s, "etc/apt/sources.list.d/host.sources"));
  /* (nor is the directory listed through the link) */
  {
    const char *suffixes[] = { ".sources", ".list", NULL };
    g_autoptr(GHashTable) files = gl_repo_view_dir (s, "etc/apt/sources.list.d", suffixes);

    g_assert_false (g_hash_table_contains (files, "host"));
  }
  /* (os-release, a link, is read where it points in the tree) */
  text = gl_repo_read_os_release (s);
  g_assert_cmpstr (text, ==, "ID=image\n");
}

/* os-release as the view shows it: etc/os-release a link, relative or
 * absolute (taken from the view's root, not the host's), to a file the
 * system layer may replace; a link that leaves the tree stays inside it */
static void
test_read_os_release (void)
{
  g_autoptr(GlTestTmpdir) tmp = gl_test_tmpdir_new ("gl-osrel-XXXXXX");
  g_autofree char *link = g_build_filename (tmp, "rootfs/etc/os-release", NULL);
  g_autoptr(GlSandbox) s = new_sandbox (tmp, "apt");
  g_autofree char *text = NULL;

  write_file (tmp, "rootfs/usr/lib/os-release", "ID=image\n");
  write_file (tmp, "rootfs/etc/placeholder", "");
  g_assert_cmpint (symlink ("/usr/lib/os-release", link), ==, 0);
  text = gl_repo_read_os_release (s);
  g_assert_cmpstr (text, ==, "ID=image\n");
  g_clear_pointer (&text, g_free);

  /* (the system layer's os-release wins over the base's) */
  write_file (tmp, "system/current", "1\n");
  write_file (tmp, "system/1/tree/usr/lib/os-release", "ID=layer\n");
  text = gl_repo_read_os_release (s);
  g_assert_cmpstr (text, ==, "ID=layer\n");
  g_clear_pointer (&text, g_free);

  /* (a link out of the tree never reads the host's file) */
  write_file (tmp, "host-os-release", "ID=host\n");
  g_assert_cmpint (unlink (link), ==, 0);
  g_assert_cmpint (symlink ("../../../../../../../../host-os-release", link), ==, 0);
  text = gl_repo_read_os_release (s);
  g_assert_cmpstr (text, !=, "ID=host\n");
  g_clear_pointer (&text, g_free);

  /* (a link of the system layer to a file outside /usr is not read: as
   * root, over a base that is the host's /, that is the host's secret) */
  write_file (tmp, "rootfs/etc/shadow", "ID=ubuntu\nUBUNTU_CODENAME=s3cret\n");
  write_file (tmp, "rootfs/root/notes", "ID=ubuntu\nUBUNTU_CODENAME=s3cret\n");
  {
    g_autofree char *upper_link = g_build_filename (tmp, "system/1/tree/etc/os-release", NULL);
    g_autofree char *layer_osr = g_build_filename (tmp, "system/1/tree/usr/lib/os-release", NULL);
    const char *targets[] = { "/etc/shadow", "shadow", "../root/notes", "../usr/../etc/shadow", NULL };

    write_file (tmp, "system/1/tree/etc/placeholder", "");
    for (guint i = 0; targets[i] != NULL; i++)
      {
        g_assert_cmpint (symlink (targets[i], upper_link), ==, 0);
        text = gl_repo_read_os_release (s);
        g_assert_null (text);
        g_assert_cmpint (unlink (upper_link), ==, 0);
      }
    /* (a link through usr/lib to it neither) */
    write_file (tmp, "system/1/tree/usr/lib/placeholder", "");
    g_assert_cmpint (unlink (layer_osr), ==, 0);
    g_assert_cmpint (symlink ("../../etc/shadow", layer_osr), ==, 0);
    g_assert_cmpint (symlink ("../usr/lib/os-release", upper_link), ==, 0);
    text = gl_repo_read_os_release (s);
    g_assert_null (text);
    g_assert_cmpint (unlink (upper_link), ==, 0);
  }

  /* (a plain file is read as it is) */
  g_assert_cmpint (unlink (link), ==, 0);
  write_file (tmp, "rootfs/etc/os-release", "ID=plain\n");
  text = gl_repo_read_os_release (s);
  g_assert_cmpstr (text, ==, "ID=plain\n");
}

/* The same files as the view shows them: a directory the system layer
 * removed and made again (opaque) hides the base's files in it, a
 * whiteout on the way hides them too.  (On the old code the base's were
 * read through both: it fails at the first check; checked.) */
static void
test_read_sandbox_file_hidden (void)
{
  g_autoptr(GlTestTmpdir) tmp = gl_test_tmpdir_new ("gl-sbfile-XXXXXX");
  g_autofree char *apk = g_build_filename (tmp, "system/1/tree/etc/apk", NULL);
  g_autofree char *parts = g_build_filename (tmp, "system/1/tree/etc/apt/sources.list.d", NULL);
  g_autoptr(GlSandbox) s = new_sandbox (tmp, "apt");
  const char *suffixes[] = { ".sources", ".list", NULL };
  g_autofree char *text = NULL;

  write_file (tmp, "rootfs/etc/apk/repositories", "http://base.invalid/alpine\n");
  write_file (tmp, "rootfs/etc/apt/sources.list.d/old.sources", "Types: deb\n");
  write_file (tmp, "system/current", "1\n");
  write_file (tmp, "system/1/tree/etc/apk/placeholder", "");
  write_file (tmp, "system/1/tree/etc/apt/sources.list.d/new.list", "deb http://new.invalid/ sid main\n");
  if (setxattr (apk, "user.overlay.opaque", "y", 1, 0) != 0 || setxattr (parts, "user.overlay.opaque", "y", 1, 0) != 0)
    {
      gl_test_skip ("cannot set user.overlay.opaque here");
      return;
    }
  g_assert_null (gl_repo_read_sandbox_file (s, "etc/apk/repositories"));
  {
    g_autoptr(GHashTable) files = gl_repo_view_dir (s, "etc/apt/sources.list.d", suffixes);

    g_assert_false (g_hash_table_contains (files, "old"));
    g_assert_cmpstr (g_hash_table_lookup (files, "new"), ==, "/etc/apt/sources.list.d/new.list");
  }
  /* (not opaque: the base's show) */
  g_assert_cmpint (removexattr (apk, "user.overlay.opaque"), ==, 0);
  text = gl_repo_read_sandbox_file (s, "etc/apk/repositories");
  g_assert_cmpstr (text, ==, "http://base.invalid/alpine\n");
  /* a whiteout of etc/apk */
  g_assert_true (gl_rm_rf (apk, NULL, NULL));
  if (!make_whiteout (tmp, "system/1/tree/etc/apk"))
    {
      g_test_message ("cannot make whiteouts (mknod 0:0) here: not tested");
      return;
    }
  g_assert_null (gl_repo_read_sandbox_file (s, "etc/apk/repositories"));
}

static const GlRepoEntry *
find_entry (GPtrArray *list, const char *name)
{
  for (guint i = 0; i < list->len; i++)
    if (g_str_equal (((GlRepoEntry *) list->pdata[i])->name, name))
      return list->pdata[i];
  return NULL;
}

/* gl_repo_list of a sandbox of @family in @tmp that records adding the
 * repository "test", its tree holding @files (path, text, …, NULL) */
static GPtrArray *
list_repos (const char *tmp, const char *family, const char * const *files)
{
  g_autoptr(GlSandbox) s = new_sandbox (tmp, family);
  g_autoptr(GError) error = NULL;
  const char *added[] = { "test", NULL };
  GPtrArray *list;

  s->repositories = g_strdupv ((char **) added);
  write_file (tmp, "system/current", "1\n");
  for (gsize i = 0; files[i] != NULL; i += 2)
    write_file (tmp, files[i], files[i + 1]);
  list = gl_repo_list (s, &error);
  g_assert_no_error (error);
  return list;
}

/* glimpse repos: "(added)" is what glimpse added and recorded, not any
 * file whose name starts with glimpse- (the base's own, or a package's) */
static void
test_repo_list_added (void)
{
  g_autoptr(GlTestTmpdir) tmp = gl_test_tmpdir_new ("gl-repolist-XXXXXX");
  const char *files[] = {
    "rootfs/etc/apt/sources.list", "deb http://base.invalid/ stable main\n",
    "system/1/tree/etc/apt/sources.list.d/glimpse-test.sources",
    "Types: deb\nURIs: http://added.invalid/\nSuites: ./\n",
    "system/1/tree/etc/apt/sources.list.d/glimpse-vendor.list", "deb http://vendor.invalid/ stable main\n",
    "system/1/tree/etc/apt/sources.list.d/debian.sources",
    "Types: deb\nURIs: http://deb.invalid/\nSuites: stable\n",
    NULL
  };
  g_autoptr(GPtrArray) list = list_repos (tmp, "apt", files);

  g_assert_true (find_entry (list, "test")->added);
  g_assert_false (find_entry (list, "debian")->added);
  g_assert_false (find_entry (list, "sources")->added);
  /* not added by glimpse: shown by its file's own name */
  g_assert_nonnull (find_entry (list, "glimpse-vendor"));
  g_assert_false (find_entry (list, "glimpse-vendor")->added);
  g_assert_null (find_entry (list, "vendor"));
}

/* The same of dnf: a base's glimpse-NAME.repo is not one glimpse added */
static void
test_repo_list_added_dnf (void)
{
  g_autoptr(GlTestTmpdir) tmp = gl_test_tmpdir_new ("gl-repolist-XXXXXX");
  const char *files[] = {
    "system/1/tree/etc/yum.repos.d/glimpse-test.repo", "[test]\nbaseurl=http://added.invalid/\n",
    "system/1/tree/etc/yum.repos.d/glimpse-vendor.repo", "[vendor]\nbaseurl=http://vendor.invalid/\n",
    NULL
  };
  g_autoptr(GPtrArray) list = list_repos (tmp, "dnf", files);

  g_assert_true (find_entry (list, "test")->added);
  g_assert_false (find_entry (list, "vendor")->added);
}

typedef struct {
  int dfd;
  gint stop;
} Swapper;

/* Exchanges the names "f" (a file) and "l" (a link) until told to stop */
static gpointer
swap_names (gpointer data)
{
  Swapper *sw = data;
  while (!g_atomic_int_get (&sw->stop))
    syscall (SYS_renameat2, sw->dfd, "f", sw->dfd, "l", RENAME_EXCHANGE);
  return NULL;
}

/* Defanging changes a file's mode by its name, after looking at it: a link
 * put in its place in between is not followed (the file it points to, here
 * outside the tree, keeps its set-uid bit).  A race, run many times: it
 * fails within a few rounds if the chmod follows links. */
static void
test_defang_no_follow (void)
{
  g_autoptr(GlTestTmpdir) tmp = gl_test_tmpdir_new ("gl-defang-XXXXXX");
  g_autofree char *tree = g_build_filename (tmp, "tree", NULL);
  g_autofree char *target = g_build_filename (tmp, "target", NULL);
  g_autofree char *file = g_build_filename (tree, "f", NULL);
  g_autofree char *link = g_build_filename (tree, "l", NULL);
  Swapper sw = { -1, 0 };
  GThread *thread;
  struct stat st;
  int fd;

  g_assert_cmpint (g_mkdir (tree, 0755), ==, 0);
  g_assert_true (g_file_set_contents (target, "#!/bin/sh\n", -1, NULL));
  g_assert_cmpint (chmod (target, 04755), ==, 0);
  g_assert_true (g_file_set_contents (file, "#!/bin/sh\n", -1, NULL));
  g_assert_cmpint (symlink (target, link), ==, 0);
  fd = open (file, O_RDONLY | O_CLOEXEC);
  g_assert_cmpint (fd, >=, 0);
  sw.dfd = open (tree, O_PATH | O_DIRECTORY | O_CLOEXEC);
  g_assert_cmpint (sw.dfd, >=, 0);
  if (syscall (SYS_renameat2, sw.dfd, "f", sw.dfd, "l", RENAME_EXCHANGE) != 0)
    {
      gl_test_skip ("renameat2 (RENAME_EXCHANGE) is not supported here");
      close (fd);
      close (sw.dfd);
      return;
    }
  thread = g_thread_new ("swap", swap_names, &sw);
  for (int i = 0; i < 2000; i++)
    {
      g_autoptr(GError) error = NULL;
      g_assert_cmpint (fchmod (fd, 04755), ==, 0);
      /* (it may fail: a name that became a link cannot change its mode) */
      gl_pkg_tree_defang (tree, &error);
      g_assert_cmpint (stat (target, &st), ==, 0);
      if ((st.st_mode & 07777) != 04755)
        break;
    }
  g_atomic_int_set (&sw.stop, 1);
  g_thread_join (thread);
  close (fd);
  close (sw.dfd);
  g_assert_cmpint (st.st_mode & 07777, ==, 04755);
}

static void
test_apt_index_missing (void)
{
  g_autoptr(GlTestTmpdir) tmp = gl_test_tmpdir_new ("gl-pkg-XXXXXX");
  g_autofree char *base = g_build_filename (tmp, "base", NULL);
  g_autofree char *tree = g_build_filename (tmp, "tree", NULL);
  g_autofree char *link = g_build_filename (tree, "etc/apt/sources.list.d/d.list", NULL);
  struct {
    const char *line, *name;
  } names[] = {
    /* as apt-get update --print-uris names them */
    { "deb http://user:pw@Example.org:8080/deb_ian~x/ stable main", "Example.org:8080_deb%5fian%7ex_dists_stable_" },
    { "deb http://[::1]:3142/debian sid main", "::1:3142_debian_dists_sid_" },
    { "deb https://example.org/a/b ./", "example.org_a_b_._" },
    { "deb http://example.org/flat sub/dir/", "example.org_flat_sub_dir_" },
    { "deb file:/srv/repo ./", "_srv_repo_._" },
    { "deb file:///srv/repo2 bookworm main", "_srv_repo2_dists_bookworm_" },
    { "deb http://example.org/x /", "example.org_x_" },
    { "deb http://example.org:80/y bookworm-updates main", "example.org:80_y_dists_bookworm-updates_" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autoptr(GPtrArray) one = gl_apt_sources_parse_one_line ("t.list", names[i].line, NULL);
      g_autofree char *name = NULL;
      g_assert_nonnull (one);
      name = gl_apt_source_index_name (one->pdata[0]);
      g_assert_cmpstr (name, ==, names[i].name);
    }

  /* the base's source has its index; no generation yet */
  write_file (base, "etc/apt/sources.list", "deb http://a.example/debian sid main\n");
  write_file (base, "var/lib/apt/lists/a.example_debian_dists_sid_InRelease", "x");
  g_assert_false (gl_pkg_apt_index_missing (NULL, base, FALSE));
  g_assert_false (gl_pkg_apt_index_missing (NULL, base, TRUE));
  /* a repository added in the generation, without its index; then with
   * an old-style Release */
  write_file (tree, "etc/apt/sources.list.d/b.sources",
              "Types: deb\nURIs: http://b.example/repo\nSuites: ./\n");
  g_assert_true (gl_pkg_apt_index_missing (tree, base, FALSE));
  write_file (tree, "var/lib/apt/lists/b.example_repo_._Release", "x");
  g_assert_false (gl_pkg_apt_index_missing (tree, base, FALSE));
  /* a disabled source needs none */
  write_file (tree, "etc/apt/sources.list.d/c.sources",
              "Types: deb\nURIs: http://c.example/repo\nSuites: ./\nEnabled: no\n");
  g_assert_false (gl_pkg_apt_index_missing (tree, base, FALSE));
  if (!make_whiteout (tree, "var/lib/apt/lists/a.example_debian_dists_sid_InRelease"))
    {
      g_test_message ("cannot make whiteouts (mknod 0:0) here: not tested");
      return;
    }
  /* the generation removed the base's index; then the base's source too */
  g_assert_true (gl_pkg_apt_index_missing (tree, base, FALSE));
  g_assert_true (make_whiteout (tree, "etc/apt/sources.list"));
  g_assert_false (gl_pkg_apt_index_missing (tree, base, FALSE));
  /* a link in the generation where a source file was is not followed:
   * refreshed, to be sure */
  g_assert_cmpint (symlink ("/etc/apt/sources.list", link), ==, 0);
  g_assert_true (gl_pkg_apt_index_missing (tree, base, FALSE));
}

/* The sources a read of @tree over @base finds: their URIs, joined; NULL
 * with the error's message in *@message */
static char *
layered_uris (const char *tree, const char *base, char **message)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) sources = gl_apt_sources_read_layers (tree, base, TRUE, &error);
  g_autoptr(GString) uris = g_string_new (NULL);

  *message = NULL;
  if (sources == NULL)
    {
      *message = g_strdup (error->message);
      return NULL;
    }
  for (guint i = 0; i < sources->len; i++)
    g_string_append_printf (uris, "%s%s", i ? " " : "", ((GlAptSource *) sources->pdata[i])->uri);
  return g_string_free (g_steal_pointer (&uris), FALSE);
}

/* A fresh tree @root with @rel a link to @target (NULL: a FIFO) */
static void
make_hostile (const char *root, const char *rel, const char *target)
{
  g_autofree char *path = g_build_filename (root, rel, NULL);
  g_autofree char *dir = g_path_get_dirname (path);

  g_assert_true (gl_rm_rf (root, NULL, NULL));
  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  if (target != NULL)
    g_assert_cmpint (symlink (target, path), ==, 0);
  else
    g_assert_cmpint (mkfifo (path, 0644), ==, 0);
}

/* The apt sources and lists of a sandbox's system layer (and its base),
 * as host root reads them before an install, are hostile: a maintainer
 * script, root in the namespace, made them links to the host's secrets,
 * to /proc/self/fd/1, or FIFOs, or links of their directories.  None is
 * followed, printed or waited on (a wait would hang this test); the index
 * is refreshed rather than trusted.  And the layer is read as apt's view
 * shows it: an opaque etc/apt, or a whiteout of etc, hides the base's
 * sources (on the old code the base's source was still read: it fails
 * there, checked). */
static void
test_apt_sources_hostile (void)
{
  g_autoptr(GlTestTmpdir) tmp = gl_test_tmpdir_new ("gl-pkg-XXXXXX");
  g_autofree char *base = g_build_filename (tmp, "base", NULL);
  g_autofree char *tree = g_build_filename (tmp, "tree", NULL);
  g_autofree char *host = g_build_filename (tmp, "host", NULL);
  g_autofree char *shadow = g_build_filename (host, "shadow", NULL);
  g_autofree char *host_dir = g_build_filename (host, "sources.list.d", NULL);
  g_autofree char *host_lists = g_build_filename (host, "lists", NULL);
  const struct {
    const char *rel, *target;   /* a link to target; NULL: a FIFO */
  } links[] = {
    { "etc/apt/sources.list.d/x.sources", shadow },
    { "etc/apt/sources.list.d/x.list", "/proc/self/fd/1" },
    { "etc/apt/sources.list.d/y.list", "/dev/stdout" },
    { "etc/apt/sources.list.d/z.sources", NULL },
    { "etc/apt/sources.list", shadow },
    { "etc/apt/sources.list", NULL },
    { "etc/apt/sources.list.d", host_dir },
    { "etc/apt", host },
    { "etc", host },
  };

  write_file (host, "shadow", "root:$6$SECRET:19000:0:99999:7:::\n");
  write_file (host, "sources.list.d/host.sources",
              "Types: deb\nURIs: http://host-only.invalid/debian\nSuites: sid\n");
  write_file (host, "lists/host-only.invalid_debian_dists_sid_InRelease", "x");
  write_file (host, "lists/a.example_debian_dists_sid_InRelease", "x");
  write_file (base, "etc/apt/sources.list", "deb http://a.example/debian sid main\n");
  write_file (base, "var/lib/apt/lists/a.example_debian_dists_sid_InRelease", "x");

  for (gsize i = 0; i < G_N_ELEMENTS (links); i++)
    {
      g_autofree char *base_copy = g_build_filename (tmp, "base2", NULL);
      g_autofree char *uris = NULL, *message = NULL;

      make_hostile (tree, links[i].rel, links[i].target);
      uris = layered_uris (tree, base, &message);
      g_test_message ("%s -> %s: %s", links[i].rel, links[i].target ? links[i].target : "(a FIFO)",
                      uris ? uris : message);
      g_assert_true ((uris == NULL) != (message == NULL));
      g_assert_null (strstr (uris ? uris : message, "SECRET"));
      g_assert_null (strstr (uris ? uris : message, "host-only"));
      /* (refreshed, to be sure, unless what the link replaced is a part
       * apt does not read: its other sources are seen) */
      if (uris == NULL)
        g_assert_true (gl_pkg_apt_index_missing (tree, base, FALSE));
      /* the same in the base, an image's tree */
      make_hostile (base_copy, links[i].rel, links[i].target);
      g_clear_pointer (&uris, g_free);
      g_clear_pointer (&message, g_free);
      uris = layered_uris (NULL, base_copy, &message);
      g_assert_null (strstr (uris ? uris : message, "SECRET"));
      g_assert_null (strstr (uris ? uris : message, "host-only"));
    }

  /* the lists: a linked lists directory or index is no index */
  g_assert_true (gl_rm_rf (tree, NULL, NULL));
  write_file (tree, "var/lib/placeholder", "");
  {
    g_autofree char *lists = g_build_filename (tree, "var/lib/apt", NULL);
    g_autofree char *index = NULL;

    g_assert_false (gl_pkg_apt_index_missing (tree, base, FALSE));
    g_assert_cmpint (symlink (host, lists), ==, 0);
    g_assert_true (gl_pkg_apt_index_missing (tree, base, FALSE));
    g_assert_cmpint (g_unlink (lists), ==, 0);
    write_file (tree, "var/lib/apt/lists/placeholder", "");
    index = g_build_filename (tree, "var/lib/apt/lists/a.example_debian_dists_sid_InRelease", NULL);
    g_assert_cmpint (symlink (host_lists, index), ==, 0);
    g_assert_true (gl_pkg_apt_index_missing (tree, base, FALSE));
  }

  /* the view's opaque directories and whiteouts on the way */
  g_assert_true (gl_rm_rf (tree, NULL, NULL));
  write_file (tree, "etc/apt/sources.list.d/t.list", "deb http://t.example/debian sid main\n");
  {
    g_autofree char *apt = g_build_filename (tree, "etc/apt", NULL);
    g_autofree char *uris = NULL, *message = NULL;

    uris = layered_uris (tree, base, &message);
    g_assert_cmpstr (uris, ==, "http://a.example/debian http://t.example/debian");
    g_clear_pointer (&uris, g_free);
    if (setxattr (apt, "user.overlay.opaque", "y", 1, 0) != 0)
      g_test_message ("cannot set user.overlay.opaque here: opaque directories not tested");
    else
      {
        uris = layered_uris (tree, base, &message);
        g_assert_cmpstr (uris, ==, "http://t.example/debian");
        g_clear_pointer (&uris, g_free);
      }
    g_assert_true (gl_rm_rf (tree, NULL, NULL));
    write_file (tree, "placeholder", "");
    if (!make_whiteout (tree, "etc"))
      {
        g_test_message ("cannot make whiteouts (mknod 0:0) here: not tested");
        return;
      }
    uris = layered_uris (tree, base, &message);
    g_assert_cmpstr (uris, ==, "");
  }
}

/* gl_pkg_apt_architectures: what the view's dpkg would tell apt, or NULL
 * where apt must ask it */
static void
assert_archs (const char *tree, const char *base, const char *expected)
{
  g_autofree char *archs = gl_pkg_apt_architectures (tree, base);
  g_assert_cmpstr (archs, ==, expected);
}

static void
test_apt_architectures (void)
{
  g_autoptr(GlTestTmpdir) tmp = gl_test_tmpdir_new ("gl-pkg-XXXXXX");
  g_autofree char *base = g_build_filename (tmp, "base", NULL);
  g_autofree char *tree = g_build_filename (tmp, "tree", NULL);
  g_autofree char *fifo = g_build_filename (tree, "var/lib/dpkg/arch", NULL);
  g_autofree char *native_file = g_build_filename (base, "var/lib/dpkg/arch-native", NULL);
  const char *status =
    "Package: dpkg-dev\nStatus: install ok installed\nArchitecture: all\n\n"
    "Package: dpkg\nStatus: deinstall ok config-files\nArchitecture: i386\n\n"
    "Package: dpkg\nStatus: install ok installed\nPriority: required\nArchitecture: arm64\nVersion: 1\n\n";

  /* no dpkg status: apt asks */
  assert_archs (NULL, base, NULL);
  write_file (base, "var/lib/dpkg/status", status);
  /* the installed dpkg's architecture, not the host's; its arch file's
   * others after it */
  assert_archs (NULL, base, "arm64");
  write_file (base, "var/lib/dpkg/arch", "arm64\narmhf\n");
  write_file (base, "etc/apt/apt.conf.d/50appstream",
              "Acquire::IndexTargets::deb::DEP-11 { MetaKey \"dep11/Components-$(NATIVE_ARCHITECTURE).yml\"; };\n");
  assert_archs (NULL, base, "arm64 armhf");
  /* the generation's files over the base's */
  write_file (tree, "var/lib/dpkg/arch", "arm64\nriscv64\narmhf\n");
  assert_archs (tree, base, "arm64 riscv64 armhf");
  /* a configuration that names architectures (in any case), moves dpkg's
   * database or includes another file: apt asks dpkg itself */
  write_file (tree, "etc/apt/apt.conf.d/90arch", "apt::architectures { \"amd64\"; };\n");
  assert_archs (tree, base, NULL);
  write_file (tree, "etc/apt/apt.conf.d/90arch", "DPkg::Options { \"--admindir=/x\"; };\n");
  assert_archs (tree, base, NULL);
  write_file (tree, "etc/apt/apt.conf.d/90arch", "#include \"/etc/x.conf\";\n");
  assert_archs (tree, base, NULL);
  write_file (tree, "etc/apt/apt.conf.d/90arch", "APT::Get::Show-Versions \"1\";\n");
  assert_archs (tree, base, "arm64 riscv64 armhf");
  /* a NUL before a setting that names architectures does not hide it */
  {
    static const char nul_part[] = "// x\0\nAPT::Architectures { \"amd64\"; };\n";
    g_autofree char *path = g_build_filename (tree, "etc/apt/apt.conf.d/90arch", NULL);
    g_assert_true (g_file_set_contents (path, nul_part, sizeof nul_part - 1, NULL));
    assert_archs (tree, base, NULL);
    write_file (tree, "etc/apt/apt.conf.d/90arch", "APT::Get::Show-Versions \"1\";\n");
  }
  /* a part that is not a regular file is left to apt: a FIFO (not
   * waited on), a link (not followed), a directory */
  {
    g_autofree char *part = g_build_filename (tree, "etc/apt/apt.conf.d/95odd", NULL);
    g_assert_cmpint (mkfifo (part, 0644), ==, 0);
    assert_archs (tree, base, NULL);
    g_assert_cmpint (g_unlink (part), ==, 0);
    g_assert_cmpint (symlink ("90arch", part), ==, 0);
    assert_archs (tree, base, NULL);
    g_assert_cmpint (g_unlink (part), ==, 0);
    g_assert_cmpint (g_mkdir (part, 0755), ==, 0);
    assert_archs (tree, base, NULL);
    g_assert_cmpint (g_rmdir (part), ==, 0);
    assert_archs (tree, base, "arm64 riscv64 armhf");
  }
  /* a newer dpkg's own native architecture; a name that is none */
  write_file (base, "var/lib/dpkg/arch-native", "riscv64\n");
  assert_archs (tree, base, NULL);
  g_assert_cmpint (g_unlink (native_file), ==, 0);
  write_file (tree, "var/lib/dpkg/arch", "arm64\n\"; x\n");
  assert_archs (tree, base, NULL);
  /* a FIFO is not read (nor waited on); a link is not followed */
  g_assert_cmpint (g_unlink (fifo), ==, 0);
  g_assert_cmpint (mkfifo (fifo, 0644), ==, 0);
  assert_archs (tree, base, NULL);
  g_assert_cmpint (g_unlink (fifo), ==, 0);
  g_assert_cmpint (symlink ("/var/lib/dpkg/arch", fifo), ==, 0);
  assert_archs (tree, base, NULL);
  g_assert_cmpint (g_unlink (fifo), ==, 0);
  if (!make_whiteout (tree, "var/lib/dpkg/arch"))
    {
      g_test_message ("cannot make whiteouts (mknod 0:0) here: not tested");
      return;
    }
  /* the generation removed the base's arch file; then its configuration */
  assert_archs (tree, base, "arm64");
  write_file (base, "etc/apt/apt.conf.d/10arch", "APT::Architecture \"amd64\";\n");
  assert_archs (tree, base, NULL);
  g_assert_true (make_whiteout (tree, "etc/apt/apt.conf.d/10arch"));
  assert_archs (tree, base, "arm64");
  /* an opaque directory of the generation hides the base's */
  {
    g_autofree char *white = g_build_filename (tree, "etc/apt/apt.conf.d/10arch", NULL);
    g_autofree char *dir = g_build_filename (tree, "etc/apt/apt.conf.d", NULL);
    g_assert_cmpint (g_unlink (white), ==, 0);
    assert_archs (tree, base, NULL);
    if (setxattr (dir, "user.overlay.opaque", "y", 1, 0) != 0)
      {
        g_test_message ("cannot set user.overlay.opaque here: not tested");
        return;
      }
    assert_archs (tree, base, "arm64");
  }
}

/* A status the sandbox wrote (a hostile package's apt hook rewrites it
 * after dpkg) with a "Package: dpkg" line on every line and no blank
 * line: the scan for the installed dpkg's stanza is read once, not from
 * each of those lines to the end of the file again (root's glimpse spun
 * for hours there, before the operation's MaxSeconds= applies) */
static void
test_apt_architectures_big (void)
{
  g_autoptr(GlTestTmpdir) tmp = gl_test_tmpdir_new ("gl-pkg-XXXXXX");
  g_autofree char *base = g_build_filename (tmp, "base", NULL);
  g_autoptr(GString) status = g_string_new (NULL);

  while (status->len < 8 * 1024 * 1024)
    g_string_append (status, "Package: dpkg\n");
  write_file (base, "var/lib/dpkg/status", status->str);
  assert_archs (NULL, base, NULL);
  /* and the installed dpkg after such lines is still found */
  g_string_append (status, "Status: install ok installed\nArchitecture: arm64\n\n");
  write_file (base, "var/lib/dpkg/status", status->str);
  assert_archs (NULL, base, "arm64");
  g_string_printf (status, "Package: dpkg\nStatus: install ok config-files\nArchitecture: i386\n\n");
  while (status->len < 8 * 1024 * 1024)
    g_string_append (status, "Package: dpkg\nStatus: deinstall ok config-files\nArchitecture: i386\n\n");
  g_string_append (status, "Package: dpkg\nStatus: install ok installed\nArchitecture: arm64\n");
  write_file (base, "var/lib/dpkg/status", status->str);
  assert_archs (NULL, base, "arm64");  /* read in pieces: a line longer than a piece before the stanza, a
   * stanza across pieces, its fields read whole; nothing after a NUL byte */
  g_string_assign (status, "Package: x\nDescription: ");
  while (status->len < 200 * 1024)
    g_string_append (status, "long ");
  g_string_append (status, "\n\n");
  while (status->len % (64 * 1024) != 64 * 1024 - 20)
    g_string_append_c (status, '\n');
  g_string_append (status, "Package: dpkg\nStatus: install ok installed\nArchitecture: riscv64\n\n");
  write_file (base, "var/lib/dpkg/status", status->str);
  assert_archs (NULL, base, "riscv64");
  g_string_insert_c (status, status->len - 30, '\0');
  {
    g_autofree char *path = g_build_filename (base, "var/lib/dpkg/status", NULL);
    g_assert_true (g_file_set_contents (path, status->str, (gssize) status->len, NULL));
  }
  assert_archs (NULL, base, NULL);
}

/* Hard links PATH-FROM … PATH-TO to PATH (DROP: removes them instead) */
static void
part_links (const char *path, int from, int to, gboolean drop)
{
  for (int i = from; i <= to; i++)
    {
      g_autofree char *name = g_strdup_printf ("%s-%d", path, i);
      g_assert_cmpint (drop ? g_unlink (name) : link (path, name), ==, 0);
    }
}

/* apt.conf.d of a generation the sandbox wrote, with parts enough to keep
 * root's glimpse reading for minutes (20,000 hard links to a part of
 * 1 MiB: a minute): more than 256 parts, or more than 4 MiB of them in
 * all, are left to apt, not read */
static void
test_apt_architectures_many_parts (void)
{
  g_autoptr(GlTestTmpdir) tmp = gl_test_tmpdir_new ("gl-pkg-XXXXXX");
  g_autofree char *base = g_build_filename (tmp, "base", NULL);
  g_autofree char *tree = g_build_filename (tmp, "tree", NULL);
  g_autofree char *small = g_build_filename (tree, "etc/apt/apt.conf.d/small", NULL);
  g_autofree char *large = g_build_filename (tree, "etc/apt/apt.conf.d/large", NULL);
  g_autoptr(GString) text = g_string_new (NULL);

  write_file (base, "var/lib/dpkg/status", "Package: dpkg\nStatus: install ok installed\nArchitecture: arm64\n\n");
  write_file (tree, "etc/apt/apt.conf.d/small", "APT::Get::Show-Versions \"1\";\n");
  part_links (small, 1, 255, FALSE);
  assert_archs (tree, base, "arm64");
  part_links (small, 256, 256, FALSE);
  assert_archs (tree, base, NULL);
  part_links (small, 1, 256, TRUE);
  /* parts of 1 MiB less a little: four are read, five are not */
  while (text->len < 1024 * 1024 - 64)
    g_string_append (text, "// a comment that names nothing at all, long\n");
  write_file (tree, "etc/apt/apt.conf.d/large", text->str);
  part_links (large, 1, 3, FALSE);
  assert_archs (tree, base, "arm64");
  part_links (large, 4, 4, FALSE);
  assert_archs (tree, base, NULL);
}

/* apt's commands get glimpse's settings of the operation on their command
 * line (-c, read after every configuration file); a command that does not
 * run apt is refused, naming it */
static void
test_apt_command (void)
{
  struct { const char *in, *out; } good[] = {
    { "apt-get install -y", "apt-get -c " GL_PKG_APT_LAST_CONF " install -y" },
    { "apt-get update", "apt-get -c " GL_PKG_APT_LAST_CONF " update" },
    { "apt", "apt -c " GL_PKG_APT_LAST_CONF },
    { "  /usr/bin/apt-get  -y dist-upgrade", "  /usr/bin/apt-get -c " GL_PKG_APT_LAST_CONF "  -y dist-upgrade" },
    { "DEBIAN_FRONTEND=noninteractive A_1=x apt-get install",
      "DEBIAN_FRONTEND=noninteractive A_1=x apt-get -c " GL_PKG_APT_LAST_CONF " install" },
  };
  const char *bad[] = { "", "   ", "aptitude install", "env apt-get install", "sh -c 'apt-get install'",
                        "1A=x apt-get install", "\"apt-get\" install", "apt-get;rm install", NULL };

  for (guint i = 0; i < G_N_ELEMENTS (good); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *got = gl_pkg_apt_command (good[i].in, &error);

      g_assert_no_error (error);
      g_assert_cmpstr (got, ==, good[i].out);
    }
  for (guint i = 0; bad[i]; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *got = gl_pkg_apt_command (bad[i], &error);

      g_assert_null (got);
      g_assert_error (error, GL_PKG_ERROR, GL_PKG_ERROR_INVALID);
      g_assert_nonnull (strstr (error->message, bad[i]));
    }
}

/* What apt itself reads last (the apt of the machine the tests run on):
 * glimpse's $APT_CONFIG first, then the sandbox's apt.conf.d, then the
 * file given with -c (gl_pkg_apt_command).  A sandbox's
 * `Dir::Etc::main "/dev/null";`, `Dir::Etc::parts` or
 * `#clear DPkg::Pre-Invoke;` keeps glimpse's hook from being read or
 * from running last. */
static void
test_apt_command_read_last (void)
{
  g_autoptr(GlTestTmpdir) dir = gl_test_tmpdir_new ("gl-apt-XXXXXX");
  g_autofree char *parts = g_build_filename (dir, "etc", "apt", "apt.conf.d", NULL);
  g_autofree char *first = g_build_filename (dir, "apt.conf", NULL);
  g_autofree char *last = g_build_filename (dir, "apt-proxy.conf", NULL);
  g_autofree char *sandbox = g_build_filename (parts, "99sandbox", NULL);
  g_autofree char *apt_config = g_find_program_in_path ("apt-config");
  g_autofree char *text = NULL, *out = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) env = NULL;
  int status;

  if (apt_config == NULL)
    {
      gl_test_skip ("apt-config is not installed");
      return;
    }
  g_assert_cmpint (g_mkdir_with_parents (parts, 0755), ==, 0);
  text = g_strdup_printf ("Dir \"%s/\";\n%s", dir, gl_pkg_apt_conf);
  g_assert_true (g_file_set_contents (first, text, -1, NULL));
  g_assert_true (g_file_set_contents (last, "DPkg::Pre-Invoke { \"glimpse-cut\"; };\n", -1, NULL));
  g_assert_true (g_file_set_contents (sandbox, "Dir::Etc::main \"/dev/null\";\nDir::Etc::parts \"/nonexistent\";\n"
                                      "#clear DPkg::Pre-Invoke;\nDPkg::Pre-Invoke { \"sandbox-hook\"; };\n", -1, NULL));
  env = g_environ_setenv (g_get_environ (), "APT_CONFIG", first, TRUE);
  {
    const char *argv[] = { apt_config, "-c", last, "dump", "DPkg::Pre-Invoke", NULL };

    g_assert_true (g_spawn_sync (NULL, (char **) argv, env, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
                                 &out, NULL, &status, &error));
  }
  g_assert_no_error (error);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (out, "DPkg::Pre-Invoke:: \"sandbox-hook\";\n"
                                 "DPkg::Pre-Invoke:: \"glimpse-cut\";\n"));
  g_clear_pointer (&out, g_free);
  /* (glimpse's file named as the main file, as before: never read) */
  g_clear_pointer (&text, g_free);
  text = g_strdup_printf ("Dir \"%s/\";\nDir::Etc::main \"%s\";\n", dir, last);
  g_assert_true (g_file_set_contents (first, text, -1, NULL));
  {
    const char *argv[] = { apt_config, "dump", "DPkg::Pre-Invoke", NULL };

    g_assert_true (g_spawn_sync (NULL, (char **) argv, env, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
                                 &out, NULL, &status, &error));
  }
  g_assert_no_error (error);
  g_assert_nonnull (strstr (out, "sandbox-hook"));
  g_assert_null (strstr (out, "glimpse-cut"));
}

static void
test_staged (void)
{
  g_autofree char *apt = gl_pkg_staged_script ("apt", NULL, "apt-get install -y", TRUE);
  g_autofree char *apt_refresh = gl_pkg_staged_script ("apt", "apt-get update", "apt-get install -y", TRUE);
  g_autofree char *apt_up = gl_pkg_staged_script ("apt", "apt-get update", "apt-get -y dist-upgrade", FALSE);
  g_autofree char *dnf = gl_pkg_staged_script ("dnf", NULL, "dnf -y install", TRUE);
  g_autofree char *dnf_up = gl_pkg_staged_script ("dnf", "dnf -y makecache", "dnf -y upgrade", FALSE);
  g_autofree char *pac = gl_pkg_staged_script ("pacman", NULL, "pacman -Syu --noconfirm", TRUE);
  g_autofree char *pac_s = gl_pkg_staged_script ("pacman", NULL, "pacman -S --noconfirm --needed", TRUE);
  g_autofree char *pac_up = gl_pkg_staged_script ("pacman", "pacman -Sy", "pacman -Syu --noconfirm", FALSE);
  g_autofree char *apk = gl_pkg_staged_script ("apk", NULL, "apk add", TRUE);
  g_autofree char *apk_up = gl_pkg_staged_script ("apk", "apk update", "apk upgrade", FALSE);
#define STAGES(f, a) "if [ \"$GLIMPSE_STAGE\" = fetch ]; then " f "; else " a "; fi"
  /* apt: one run (the network cut before dpkg: GL_PKG_NETWORK_UNTIL_CUT) */
  g_assert_cmpint (gl_pkg_staged_network ("apt"), ==, GL_PKG_NETWORK_UNTIL_CUT);
  g_assert_cmpint (gl_pkg_staged_network ("dnf"), ==, GL_PKG_NETWORK_FETCH_FIRST);
  g_assert_cmpint (gl_pkg_staged_network ("pacman"), ==, GL_PKG_NETWORK_FETCH_FIRST);
  g_assert_cmpint (gl_pkg_staged_network ("apk"), ==, GL_PKG_NETWORK_FETCH_FIRST);
  g_assert_cmpstr (apt, ==, "apt-get install -y \"$@\"");
  /* an install given Refresh= (a source has no index) refreshes first */
  g_assert_cmpstr (apt_refresh, ==,
                   "echo 'glimpse: some sources have no package index yet: "
                   "refreshing the indexes first'; apt-get update || echo 'glimpse: refreshing the "
                   "indexes failed (see above); installing with the ones there are'; "
                   "apt-get install -y \"$@\"");
  g_assert_cmpstr (apt_up, ==, "apt-get update; apt-get -y dist-upgrade");
  /* dnf: the apply stage from the cache only */
  g_assert_cmpstr (dnf, ==, STAGES ("dnf -y install --downloadonly \"$@\"", "dnf -y install -C \"$@\""));
  g_assert_cmpstr (dnf_up, ==, STAGES ("dnf -y makecache; dnf -y upgrade --downloadonly", "dnf -y upgrade -C"));
  /* pacman: -Syuw, then -Su from the cache; never a partial upgrade, never -y offline */
  g_assert_cmpstr (pac, ==, STAGES ("pacman -Syuw --noconfirm \"$@\"", "pacman -Su --noconfirm \"$@\""));
  g_assert_cmpstr (pac_s, ==, STAGES ("pacman -Syuw --noconfirm --needed \"$@\"",
                                      "pacman -Su --noconfirm --needed \"$@\""));
  g_assert_cmpstr (pac_up, ==, STAGES ("pacman -Syuw --noconfirm", "pacman -Su --noconfirm"));
  /* apk: a cache of the operation's own, then apk without network */
  g_assert_cmpstr (apk, ==, STAGES ("mkdir -p /var/cache/glimpse-apk; apk --cache-dir /var/cache/glimpse-apk update; "
                                    "apk --cache-dir /var/cache/glimpse-apk cache --add-dependencies download \"$@\"",
                                    "apk add --cache-dir /var/cache/glimpse-apk --no-network \"$@\""));
  g_assert_cmpstr (apk_up, ==, STAGES ("mkdir -p /var/cache/glimpse-apk; apk --cache-dir /var/cache/glimpse-apk update; "
                                       "apk --cache-dir /var/cache/glimpse-apk cache --upgrade download",
                                       "apk upgrade --cache-dir /var/cache/glimpse-apk --no-network"));
  /* its cache goes after the apply stage */
  g_assert_cmpstr (gl_pkg_staged_cleanup ("apk"), ==,
                   "[ \"$GLIMPSE_STAGE\" = fetch ] || rm -rf /var/cache/glimpse-apk\n");
  g_assert_cmpstr (gl_pkg_staged_cleanup ("dnf"), ==, "");
#undef STAGES
}

/* The bare base a generation lies over: the one its N/base names, else
 * (the layout before) system/base/tree, else rootfs/; none without a
 * generation, whatever system/ holds. */
static void
test_generation_base (void)
{
  g_autoptr(GlTestTmpdir) tmp = gl_test_tmpdir_new ("genbase-XXXXXX");
  g_autofree char *system = g_build_filename (tmp, "system", NULL);
  g_autofree char *rootfs = g_build_filename (tmp, "rootfs", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GlSandbox) s = gl_sandbox_load_from_data ("g", tmp, "[Sandbox]\nProfile=x\nBase=rootfs\n", -1, &error);
  g_autofree char *got = NULL;
  g_autofree char *want = NULL;

  g_assert_no_error (error);
  write_file (rootfs, "etc/x", "first base");
  /* no generation: the first base, even beside a bare base (a crash of
   * the older layout between its two steps) */
  write_file (system, "base/tree/etc/x", "legacy");
  g_assert_null (gl_pkg_saved_base_tree (s));
  got = gl_pkg_base_tree (s);
  g_assert_cmpstr (got, ==, rootfs);
  g_clear_pointer (&got, g_free);
  /* a generation without N/base: the older layout's system/base */
  write_file (system, "1/tree/etc/x", "gen 1");
  write_file (system, "current", "1\n");
  got = gl_pkg_saved_base_tree (s);
  want = g_build_filename (system, "base", "tree", NULL);
  g_assert_cmpstr (got, ==, want);
  g_clear_pointer (&got, g_free);
  g_clear_pointer (&want, g_free);
  /* a generation naming its base: that one, whatever else is there */
  write_file (system, "2/tree/etc/x", "gen 2");
  write_file (system, "2/base", "2\n");
  write_file (system, "base-2/tree/etc/x", "rebased");
  write_file (system, "current", "2\n");
  got = gl_pkg_base_tree (s);
  want = g_build_filename (system, "base-2", "tree", NULL);
  g_assert_cmpstr (got, ==, want);
  g_clear_pointer (&got, g_free);
  /* … and not when the generation before it is current */
  write_file (system, "current", "1\n");
  got = gl_pkg_base_tree (s);
  g_assert_cmpstr (got, !=, want);
  g_clear_pointer (&got, g_free);
}

/* gl-reclaim: rootfs/ after a rebase becomes a skeleton of its
 * directories once no older generation is left and no view holds the
 * sandbox's lock; until then it stays. */
static void
test_reclaim (void)
{
  g_autoptr(GlTestTmpdir) tmp = gl_test_tmpdir_new ("reclaim-XXXXXX");
  g_autofree char *rootfs = g_build_filename (tmp, "rootfs", NULL);
  g_autofree char *system = g_build_filename (tmp, "system", NULL);
  g_autofree char *lock = g_build_filename (tmp, "lock", NULL);
  g_autofree char *old_gen = g_build_filename (system, "1", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GlSandbox) s = gl_sandbox_load_from_data ("r", tmp, "[Sandbox]\nProfile=x\nBase=rootfs\n", -1, &error);
  guint64 freed = 1;
  gboolean in_use = TRUE;
  char big[65536];
  int held;

  g_assert_no_error (error);
  memset (big, 'x', sizeof big);
  write_file (rootfs, "usr/bin/old-program", "#!/bin/sh\n");
  write_file (rootfs, "usr/share/empty/.keep", "");
  {
    g_autofree char *p = g_build_filename (rootfs, "usr/share/big", NULL);
    g_assert_true (g_file_set_contents (p, big, sizeof big, NULL));
  }
  write_file (tmp, "lock", "");
  write_file (system, "1/tree/etc/x", "old generation");
  write_file (system, "2/tree/etc/x", "the new base");
  write_file (system, "base/tree/etc/x", "the new base");
  write_file (system, "current", "2\n");

  /* never rebased: nothing to do */
  g_assert_true (gl_reclaim_old_base (s, &freed, &in_use, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (freed, ==, 0);
  g_assert_false (in_use);
  g_assert_true (gl_reclaim_mark_rebased (system, 2, &error));
  /* a generation older than the rebase is left (a view holds it) */
  g_assert_true (gl_reclaim_old_base (s, &freed, &in_use, &error));
  g_assert_true (in_use);
  g_assert_cmpuint (freed, ==, 0);
  g_assert_true (has_file (rootfs, "usr/bin/old-program"));
  {
    g_autoptr(GError) rm_error = NULL;
    g_assert_true (gl_rm_rf (old_gen, NULL, &rm_error));
  }
  /* a view is up (the launcher holds the sandbox's lock shared) */
  held = open (lock, O_RDONLY | O_CLOEXEC);
  g_assert_cmpint (flock (held, LOCK_SH), ==, 0);
  g_assert_true (gl_reclaim_old_base (s, &freed, &in_use, &error));
  g_assert_true (in_use);
  g_assert_true (has_file (rootfs, "usr/share/big"));
  close (held);
  /* nothing holds it: the files go, the directories stay */
  g_assert_true (gl_reclaim_old_base (s, &freed, &in_use, &error));
  g_assert_no_error (error);
  g_assert_false (in_use);
  g_assert_cmpuint (freed, >=, sizeof big);
  g_assert_false (has_file (rootfs, "usr/bin/old-program"));
  g_assert_false (has_file (rootfs, "usr/share/big"));
  g_assert_true (g_file_test (rootfs, G_FILE_TEST_IS_DIR));
  {
    g_autofree char *d = g_build_filename (rootfs, "usr/share/empty", NULL);
    g_autofree char *r = read_file (system, "reclaimed");
    g_autoptr(GDir) dir = g_dir_open (system, 0, NULL);
    const char *name;
    g_assert_true (g_file_test (d, G_FILE_TEST_IS_DIR));
    g_assert_cmpstr (r, ==, "2\n");
    while ((name = g_dir_read_name (dir)) != NULL)
      g_assert_false (g_str_has_prefix (name, ".op-"));
  }
  /* once is enough */
  g_assert_true (gl_reclaim_old_base (s, &freed, &in_use, &error));
  g_assert_cmpuint (freed, ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_test_add_func ("/pkg/flatten", test_flatten);
  g_test_add_func ("/pkg/upper-changes", test_upper_changes);
  g_test_add_func ("/pkg/free-range", test_free_range);
  g_test_add_func ("/pkg/free-range-accounts", test_free_range_accounts);
  g_test_add_func ("/repo/parse-sources", test_parse_sources);
  g_test_add_func ("/repo/names", test_names);
  g_test_add_func ("/repo/key-garbage", test_key_garbage);
  g_test_add_func ("/rebase/kept-packages", test_kept_packages);
  g_test_add_func ("/rebase/links", test_kept_links);
  g_test_add_func ("/rebase/hidden", test_kept_hidden);
  g_test_add_func ("/rebase/unreadable-db", test_kept_unreadable);
  g_test_add_func ("/pkg/repository-uris-links", test_repository_uris_links);
  g_test_add_func ("/pkg/defang-no-follow", test_defang_no_follow);
  g_test_add_func ("/repo/sandbox-file-links", test_read_sandbox_file_links);
  g_test_add_func ("/repo/os-release", test_read_os_release);
  g_test_add_func ("/repo/sandbox-file-hidden", test_read_sandbox_file_hidden);
  g_test_add_func ("/repo/list-added", test_repo_list_added);
  g_test_add_func ("/repo/list-added-dnf", test_repo_list_added_dnf);
  /* (pacman and apk are not packaged for the Debian the tests run on:
   * their two stages are checked here only) */
  g_test_add_func ("/pkg/staged", test_staged);
  g_test_add_func ("/pkg/apt-command", test_apt_command);
  g_test_add_func ("/pkg/apt-command-read-last", test_apt_command_read_last);
  g_test_add_func ("/pkg/apt-index-missing", test_apt_index_missing);
  g_test_add_func ("/pkg/apt-sources-hostile", test_apt_sources_hostile);
  g_test_add_func ("/pkg/apt-architectures", test_apt_architectures);
  g_test_add_func ("/pkg/apt-architectures-big", test_apt_architectures_big);
  g_test_add_func ("/pkg/apt-architectures-many-parts", test_apt_architectures_many_parts);
  g_test_add_func ("/pkg/generation-base", test_generation_base);
  g_test_add_func ("/pkg/reclaim", test_reclaim);
  return g_test_run ();
}
