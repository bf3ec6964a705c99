/* test-base-image.c: resolving a channel's release and its signed checksum
 * list against a real HTTP server on 127.0.0.1 that lists directories as
 * Apache's mod_autoindex does (the format Fedora's mirrors serve), with
 * OpenPGP keys made here and checked by gpgv
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-apt-release.h"
#include "gl-base-image.h"
#include "gl-checksum.h"
#include "gl-download.h"
#include "gl-fsutil.h"
#include "gl-gpgv.h"
#include "gl-test-http.h"
#include "gl-test-skip.h"

#include <string.h>

#include <gio/gio.h>
#include <glib/gstdio.h>

/* Made once: a GnuPG home with the key the profile trusts and another. */
static char *gnupg_home;
static char *good_fpr;
static char *good_key;   /* its public key, armored */

typedef enum {
  SIGNED,      /* the CHECKSUMs clear-signed by the profile's key */
  TAMPERED,    /* signed, then a sum changed */
  OTHER_KEY,   /* signed by a key the profile's keyring lacks */
  UNSIGNED,    /* a bare CHECKSUM */
} Signing;

typedef struct {
  GSubprocess *server;
  char        *root;       /* served directory */
  char        *work;
  char        *base;       /* http://127.0.0.1:PORT */
  char        *profile_path;
  char        *sum43;      /* the SHA-256 of release 43's image */
} Fixture;

static void
run (const char * const *argv)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *err = NULL;
  int status = 0;

  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL,
                NULL, NULL, NULL, &err, &status, &error);
  g_assert_no_error (error);
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("%s failed: %s", argv[0], err);
}

static void
write_file (const char *path, const char *text)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_path_get_dirname (path);

  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  g_file_set_contents (path, text, -1, &error);
  g_assert_no_error (error);
}

/* A Fedora images directory under @top for release @release (build @build):
 * the image and its CHECKSUM, signed as @signing says.  Returns the image's sum. */
static char *
fedora_release (Fixture *f, const char *top, const char *release, const char *build, Signing signing)
{
  g_autofree char *dir = g_build_filename (f->root, top, release, "Container", "x86_64", "images", NULL);
  g_autofree char *image_name = g_strdup_printf ("Fedora-Container-Base-Generic-%s-%s.x86_64.oci.tar.xz",
                                                 release, build);
  g_autofree char *image = g_build_filename (dir, image_name, NULL);
  g_autofree char *content = g_strdup_printf ("the image of Fedora %s-%s", release, build);
  g_autofree char *sum = g_compute_checksum_for_string (G_CHECKSUM_SHA256, content, -1);
  g_autofree char *sums_name = g_strdup_printf ("Fedora-Container-%s-%s-x86_64-CHECKSUM", release, build);
  g_autofree char *sums = g_build_filename (dir, sums_name, NULL);
  g_autofree char *plain = g_strconcat (sums, ".txt", NULL);
  g_autofree char *text = g_strdup_printf ("# Fedora-Container-Base-Generic-%s-%s.x86_64.oci.tar.xz: %zu bytes\n"
                                           "SHA256 (%s) = %s\n",
                                           release, build, strlen (content), image_name, sum);

  write_file (image, content);
  write_file (plain, text);
  if (signing == UNSIGNED)
    g_assert_cmpint (g_rename (plain, sums), ==, 0);
  else
    {
      const char *argv[] = { "gpg", "--homedir", gnupg_home, "--batch", "--yes", "--quiet",
                             "--pinentry-mode", "loopback", "--passphrase", "",
                             "--local-user", signing == OTHER_KEY ? "other@glimpse.invalid" : "good@glimpse.invalid",
                             "--clearsign", "--output", sums, plain, NULL };
      run (argv);
      g_assert_cmpint (g_unlink (plain), ==, 0);
    }
  if (signing == TAMPERED)
    {
      g_autofree char *signed_text = NULL;
      g_autoptr(GError) error = NULL;
      g_autoptr(GString) s = NULL;

      g_file_get_contents (sums, &signed_text, NULL, &error);
      g_assert_no_error (error);
      s = g_string_new (signed_text);
      g_assert_cmpuint (g_string_replace (s, sum, "0000000000000000000000000000000000000000000000000000000000000000", 1), ==, 1);
      write_file (sums, s->str);
    }
  else if (signing == SIGNED)
    {
      /* a forged line outside the signed part: never read */
      g_autofree char *signed_text = NULL;
      g_autofree char *forged = NULL;
      g_autoptr(GError) error = NULL;

      g_file_get_contents (sums, &signed_text, NULL, &error);
      g_assert_no_error (error);
      forged = g_strdup_printf ("SHA256 (%s) = %s\n%s", image_name,
                                "1111111111111111111111111111111111111111111111111111111111111111", signed_text);
      write_file (sums, forged);
    }
  return g_steal_pointer (&sum);
}

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  Signing signing = GPOINTER_TO_INT (data);
  g_autofree char *profile = NULL;
  g_autofree char *sum42 = NULL, *sum40 = NULL, *old43 = NULL;

  f->root = g_build_filename (g_get_user_cache_dir (), "served", NULL);
  f->work = g_build_filename (g_get_user_cache_dir (), "work", NULL);
  g_assert_cmpint (g_mkdir_with_parents (f->root, 0755), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (f->work, 0755), ==, 0);

  /* releases/: 42 and 43 have container images (43 two builds), 44 is
   * there without one yet, "test" is no release; 40 moved to the archive */
  sum42 = fedora_release (f, "fedora/releases", "42", "1.1", signing);
  old43 = fedora_release (f, "fedora/releases", "43", "1.2", signing);
  f->sum43 = fedora_release (f, "fedora/releases", "43", "1.6", signing);
  {
    g_autofree char *everything = g_build_filename (f->root, "fedora/releases/44/Everything/x86_64/os/README", NULL);
    g_autofree char *test = g_build_filename (f->root, "fedora/releases/test/45_Beta/README", NULL);
    write_file (everything, "not a container\n");
    write_file (test, "a pre-release\n");
  }
  sum40 = fedora_release (f, "archive/releases", "40", "1.14", signing);

  f->server = gl_test_http_start (f->root, &f->base);

  /* the bundled fedora profile's keys, on loopback; the keyring per
   * release, relative to the profile, as distribution-gpg-keys names them */
  profile = g_strdup_printf ("[Profile]\nName=Test Fedora\nFamily=dnf\n\n"
                             "[Base]\nType=tarball\nFormat=oci\nChannel=fedora\n"
                             "ChannelUrl=%1$s/fedora/releases/\n"
                             "Url=%1$s/fedora/releases/{release}/Container/{arch}/images/\n"
                             "ArchiveUrl=%1$s/archive/releases/{release}/Container/{arch}/images/\n"
                             "FilePattern=Fedora-Container-Base-Generic-{release}-*.{arch}.oci.tar.xz\n"
                             "ChecksumUrl=%1$s/fedora/releases/{release}/Container/{arch}/images/"
                             "Fedora-Container-{release}-*-{arch}-CHECKSUM\n"
                             "Signature=clearsigned\nSignedBy=%2$s\n"
                             "Keyring=keys/RPM-GPG-KEY-test-{release}-primary\n\n"
                             "[Packages]\nRefresh=true\nUpgrade=true\nInstall=true\nListUpgradable=true\n",
                             f->base, good_fpr);
  f->profile_path = g_build_filename (f->work, "fedora.profile", NULL);
  write_file (f->profile_path, profile);
  for (guint i = 0; i < 4; i++)
    {
      const char *releases[] = { "40", "42", "43", "44" };
      g_autofree char *name = g_strdup_printf ("keys/RPM-GPG-KEY-test-%s-primary", releases[i]);
      g_autofree char *path = g_build_filename (f->work, name, NULL);

      write_file (path, good_key);
    }
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  gl_test_http_stop (&f->server);
  g_free (f->root);
  g_free (f->work);
  g_free (f->base);
  g_free (f->profile_path);
  g_free (f->sum43);
}

/* The GETs the server saw for @path, with their status: "GET - 404" … */
static char *
requests (Fixture *f, const char *path)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *url = g_strdup_printf ("%s/__stats?path=%s", f->base, path);
  g_autofree char *text = gl_download_to_string (url, NULL, NULL, &error);

  g_assert_no_error (error);
  return g_steal_pointer (&text);
}

static GlProfile *
load (Fixture *f)
{
  g_autoptr(GError) error = NULL;
  GlProfile *p = gl_profile_load_file (f->profile_path, &error);

  g_assert_no_error (error);
  return p;
}

/* The newest releases/N whose images directory has a CHECKSUM: 44 (none
 * yet) is passed over, "test" is no number, and of 43's two builds the newer is taken. */
static void
test_fedora_newest (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GlProfile) p = load (f);
  g_autoptr(GlBaseImage) image = gl_base_image_resolve (p, NULL, "x86_64", NULL, &error);
  g_autofree char *url = NULL;
  g_autofree char *seen44 = NULL;
  g_autofree char *release = NULL, *version = NULL, *how = NULL;

  g_assert_no_error (error);
  g_assert_nonnull (image);
  g_assert_cmpstr (image->release, ==, "43");
  url = g_strdup_printf ("%s/fedora/releases/43/Container/x86_64/images/"
                         "Fedora-Container-Base-Generic-43-1.6.x86_64.oci.tar.xz", f->base);
  g_assert_cmpstr (image->url, ==, url);
  g_assert_cmpstr (image->file_name, ==, "Fedora-Container-Base-Generic-43-1.6.x86_64.oci.tar.xz");
  /* the signed sum, not the forged line before the signed part */
  g_assert_cmpstr (image->sha256, ==, f->sum43);
  g_assert_nonnull (strstr (image->how, "newest release with a container CHECKSUM"));
  g_assert_true (g_str_has_prefix (image->checked, "by its SHA-256 from "));
  g_assert_nonnull (strstr (image->checked, "-CHECKSUM, whose signature gpgv checked against "));
  seen44 = requests (f, "/fedora/releases/44/Container/x86_64/images/");
  g_assert_true (g_str_has_prefix (seen44, "GET - 404 "));

  /* what `glimpse profiles --verbose` shows */
  g_assert_true (gl_base_image_resolve_release (p, NULL, "x86_64", &release, &version, &how, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (release, ==, "43");
}

/* A pinned release still in releases/ is taken from there. */
static void
test_fedora_pinned (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GlProfile) p = load (f);
  g_autoptr(GlBaseImage) image = gl_base_image_resolve (p, "42", "x86_64", NULL, &error);
  g_autofree char *archive = NULL;

  g_assert_no_error (error);
  g_assert_cmpstr (image->release, ==, "42");
  g_assert_true (g_str_has_prefix (image->url + strlen (f->base), "/fedora/releases/42/"));
  g_assert_cmpstr (image->how, ==, "pinned with --release");
  archive = requests (f, "/archive/releases/42/Container/x86_64/images/");
  g_assert_cmpstr (archive, ==, "");
}

/* A release that has ended lives in the archive: found there, and its
 * CHECKSUM beside the image there, checked the same way. */
static void
test_fedora_archive (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GlProfile) p = load (f);
  g_autoptr(GlBaseImage) image = gl_base_image_resolve (p, "40", "x86_64", NULL, &error);
  g_autofree char *url = NULL;

  g_assert_no_error (error);
  g_assert_cmpstr (image->release, ==, "40");
  url = g_strdup_printf ("%s/archive/releases/40/Container/x86_64/images/"
                         "Fedora-Container-Base-Generic-40-1.14.x86_64.oci.tar.xz", f->base);
  g_assert_cmpstr (image->url, ==, url);
  g_assert_cmpstr (image->how, ==, "pinned with --release, from the archive");
  g_assert_true (gl_checksum_is_sha256 (image->sha256));
}

/* Neither here nor in the archive: an error naming the release. */
static void
test_fedora_unknown (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GlProfile) p = load (f);
  g_autoptr(GlBaseImage) image = gl_base_image_resolve (p, "39", "x86_64", NULL, &error);

  g_assert_null (image);
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "Fedora 39 has no container image here or in the archive"));
}

/* A CHECKSUM that is not good by the profile's key refuses the base, naming the file. */
static void
test_fedora_refused (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GlProfile) p = load (f);
  g_autoptr(GlBaseImage) image = gl_base_image_resolve (p, NULL, "x86_64", NULL, &error);
  g_autofree char *name = g_strdup_printf ("%s/fedora/releases/43/Container/x86_64/images/"
                                           "Fedora-Container-43-1.6-x86_64-CHECKSUM", f->base);

  g_assert_null (image);
  g_assert_error (error, GL_GPGV_ERROR, GL_GPGV_ERROR_BAD_SIGNATURE);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, name));
}

/* A releases/ listing with no release in it says so. */
static void
test_fedora_no_releases (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GlProfile) p = load (f);
  g_autofree char *release = NULL, *version = NULL, *how = NULL;

  g_free (p->channel_url);
  p->channel_url = g_strdup_printf ("%s/fedora/releases/test/", f->base);
  g_assert_false (gl_base_image_resolve_release (p, NULL, "x86_64", &release, &version, &how, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  g_assert_nonnull (strstr (error->message, "lists no release directories"));
}

/* Alpine: the minirootfs and its sha256 from latest-releases.yaml, and,
 * as no signing key is shipped, the plain word that no signature is
 * verified and over what connection the sum came. */
static void
test_alpine_unsigned (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *root = g_build_filename (g_get_user_cache_dir (), "served", NULL);
  g_autofree char *yaml = g_build_filename (root, "alpine/latest-stable/releases/x86_64/latest-releases.yaml", NULL);
  g_autofree char *sum = g_compute_checksum_for_string (G_CHECKSUM_SHA256, "minirootfs", -1);
  g_autofree char *text = g_strdup_printf ("---\n-\n  title: \"Mini root filesystem\"\n  flavor: alpine-minirootfs\n"
                                           "  file: alpine-minirootfs-3.100.2-x86_64.tar.gz\n  version: 3.100.2\n"
                                           "  sha256: %s\n", sum);
  g_autofree char *base = NULL;
  g_autoptr(GSubprocess) server = NULL;
  g_autofree char *data = NULL;
  g_autofree char *expected = NULL;
  g_autoptr(GlProfile) p = NULL;
  g_autoptr(GlBaseImage) image = NULL;

  write_file (yaml, text);
  server = gl_test_http_start (root, &base);
  data = g_strdup_printf ("[Profile]\nName=Test Alpine\nFamily=apk\n\n[Base]\nType=tarball\nChannel=alpine\n"
                          "ChannelUrl=%1$s/alpine/{branch}/releases/{arch}/latest-releases.yaml\n"
                          "Url=%1$s/alpine/{branch}/releases/{arch}/\n\n"
                          "[Packages]\nRefresh=true\nUpgrade=true\nInstall=true\nListUpgradable=true\n", base);
  p = gl_profile_load_from_data ("alpine", "/nonexistent/alpine.profile", data, -1, &error);
  g_assert_no_error (error);
  image = gl_base_image_resolve (p, NULL, "x86_64", NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (image->release, ==, "3.100.2");
  g_assert_cmpstr (image->sha256, ==, sum);
  g_assert_null (image->signature_url);
  expected = g_strdup_printf ("only by its SHA-256 from %s/alpine/latest-stable/releases/x86_64/latest-releases.yaml, "
                              "fetched over plain HTTP; no signature is verified", base);
  g_assert_true (g_str_has_prefix (image->checked, expected));
  g_subprocess_force_exit (server);
  g_subprocess_wait (server, NULL, NULL);
}

static gboolean
make_keys (void)
{
  const char *users[] = { "Glimpse Test <good@glimpse.invalid>", "Someone Else <other@glimpse.invalid>" };
  g_autofree char *out = NULL;
  g_auto(GStrv) lines = NULL;
  g_autofree char *gpg = g_find_program_in_path ("gpg");
  g_autofree char *gpgv = g_find_program_in_path ("gpgv");

  if (gpg == NULL || gpgv == NULL)
    return FALSE;
  gnupg_home = g_dir_make_tmp ("glimpse-gnupg-XXXXXX", NULL);
  g_assert_nonnull (gnupg_home);
  for (guint i = 0; i < G_N_ELEMENTS (users); i++)
    {
      const char *argv[] = { "gpg", "--homedir", gnupg_home, "--batch", "--quiet", "--pinentry-mode",
                             "loopback", "--passphrase", "", "--quick-gen-key", users[i], "ed25519",
                             "sign", "never", NULL };
      run (argv);
    }
  {
    const char *argv[] = { "gpg", "--homedir", gnupg_home, "--with-colons", "--list-keys",
                           "good@glimpse.invalid", NULL };
    g_autoptr(GError) error = NULL;
    int status = 0;

    g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDERR_TO_DEV_NULL,
                  NULL, NULL, &out, NULL, &status, &error);
    g_assert_no_error (error);
  }
  {
    g_autofree char *path = g_build_filename (gnupg_home, "good.asc", NULL);
    const char *argv[] = { "gpg", "--homedir", gnupg_home, "--batch", "--yes", "--armor",
                           "--output", path, "--export", "good@glimpse.invalid", NULL };
    g_autoptr(GError) error = NULL;

    run (argv);
    g_file_get_contents (path, &good_key, NULL, &error);
    g_assert_no_error (error);
  }
  lines = g_strsplit (out, "\n", -1);
  for (guint i = 0; lines[i] != NULL && good_fpr == NULL; i++)
    if (g_str_has_prefix (lines[i], "fpr:"))
      {
        g_auto(GStrv) fields = g_strsplit (lines[i], ":", -1);
        good_fpr = g_strdup (fields[9]);
      }
  g_assert_nonnull (good_fpr);
  return TRUE;
}

static void
drop_keys (void)
{
  const char *argv[] = { "gpgconf", "--homedir", gnupg_home, "--kill", "gpg-agent", NULL };

  if (gnupg_home == NULL)
    return;
  g_spawn_sync (NULL, (char **) argv, NULL,
                G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL,
                NULL, NULL, NULL, NULL, NULL, NULL);
  gl_rm_rf (gnupg_home, NULL, NULL);
  g_clear_pointer (&gnupg_home, g_free);
  g_clear_pointer (&good_fpr, g_free);
  g_clear_pointer (&good_key, g_free);
}

/* --- gpgv itself: the keyrings given as paths (gl_gpgv_*) and as bytes
 * (gl_apt_release_verify), armored or binary, each in a private
 * directory that is gone afterwards --- */

/* @text clear-signed by @user */
static GBytes *
clearsigned (const char *text, const char *user)
{
  g_autofree char *dir = g_dir_make_tmp ("gl-sign-XXXXXX", NULL);
  g_autofree char *plain = g_build_filename (dir, "plain", NULL);
  g_autofree char *signed_path = g_build_filename (dir, "signed", NULL);
  const char *argv[] = { "gpg", "--homedir", gnupg_home, "--batch", "--yes", "--local-user", user,
                         "--clearsign", "--output", signed_path, plain, NULL };
  g_autoptr(GError) error = NULL;
  g_autofree char *data = NULL;
  gsize len = 0;

  write_file (plain, text);
  run (argv);
  g_file_get_contents (signed_path, &data, &len, &error);
  g_assert_no_error (error);
  gl_rm_rf (dir, NULL, NULL);
  return g_bytes_new_take (g_steal_pointer (&data), len);
}

/* The good key, binary, in a file under @dir */
static char *
binary_key (const char *dir)
{
  g_autofree char *path = g_build_filename (dir, "good.gpg", NULL);
  const char *argv[] = { "gpg", "--homedir", gnupg_home, "--batch", "--yes", "--output", path,
                         "--export", "good@glimpse.invalid", NULL };

  run (argv);
  return g_steal_pointer (&path);
}

/* How many of gpgv's private directories are in the temporary directory */
static guint
gpgv_dirs (void)
{
  g_autoptr(GDir) d = g_dir_open (g_get_tmp_dir (), 0, NULL);
  const char *name;
  guint n = 0;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    if (g_str_has_prefix (name, "glimpse-gpgv-"))
      n++;
  return n;
}

static void
test_gpgv_keyring_paths (void)
{
  g_autofree char *dir = g_dir_make_tmp ("gl-keys-XXXXXX", NULL);
  g_autofree char *armored = g_build_filename (dir, "good.asc", NULL);
  g_autofree char *binary = binary_key (dir);
  g_autofree char *missing = g_build_filename (dir, "missing.gpg", NULL);
  g_autofree char *broken = g_build_filename (dir, "broken.asc", NULL);
  g_autoptr(GBytes) data = clearsigned ("Release text\n", "good@glimpse.invalid");
  g_autoptr(GBytes) other = clearsigned ("Release text\n", "other@glimpse.invalid");
  const char *fprs[] = { good_fpr, NULL };
  guint before = gpgv_dirs ();

  write_file (armored, good_key);
  write_file (broken, "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n-----END PGP PUBLIC KEY BLOCK-----\n");
  for (guint i = 0; i < 2; i++)
    {
      const char *rings[] = { i == 0 ? armored : binary, NULL };
      g_autoptr(GError) error = NULL;
      g_autoptr(GBytes) text = gl_gpgv_verify_clearsigned (data, rings, fprs, "the test", NULL, &error);
      g_autoptr(GBytes) none = NULL;

      g_assert_no_error (error);
      g_assert_cmpmem (g_bytes_get_data (text, NULL), g_bytes_get_size (text), "Release text\n", 13);
      none = gl_gpgv_verify_clearsigned (other, rings, NULL, "the test", NULL, &error);
      g_assert_null (none);
      g_assert_error (error, GL_GPGV_ERROR, GL_GPGV_ERROR_BAD_SIGNATURE);
    }
  {
    const char *rings[] = { armored, missing, NULL };
    g_autoptr(GError) error = NULL;
    g_autoptr(GBytes) none = gl_gpgv_verify_clearsigned (data, rings, NULL, "the test", NULL, &error);

    g_assert_null (none);
    g_assert_error (error, GL_GPGV_ERROR, GL_GPGV_ERROR_KEYRING);
    g_assert_nonnull (strstr (error->message, "Cannot check the signature of the test: cannot read the keyring "));
    g_assert_nonnull (strstr (error->message, missing));
  }
  {
    const char *rings[] = { broken, NULL };
    g_autoptr(GError) error = NULL;
    g_autoptr(GBytes) none = gl_gpgv_verify_clearsigned (data, rings, NULL, "the test", NULL, &error);

    g_assert_null (none);
    g_assert_error (error, GL_GPGV_ERROR, GL_GPGV_ERROR_KEYRING);
    g_assert_nonnull (strstr (error->message, broken));
  }
  {
    const char *rings[] = { NULL };
    g_autoptr(GError) error = NULL;
    g_autoptr(GBytes) none = gl_gpgv_verify_clearsigned (data, rings, NULL, "the test", NULL, &error);

    g_assert_null (none);
    g_assert_error (error, GL_GPGV_ERROR, GL_GPGV_ERROR_KEYRING);
  }
  g_assert_cmpuint (gpgv_dirs (), ==, before);
  gl_rm_rf (dir, NULL, NULL);
}

static void
test_gpgv_keyring_bytes (void)
{
  g_autofree char *dir = g_dir_make_tmp ("gl-keys-XXXXXX", NULL);
  g_autofree char *binary = binary_key (dir);
  g_autofree char *binary_data = NULL;
  gsize binary_len = 0;
  g_autoptr(GBytes) data = clearsigned ("Origin: test\n", "good@glimpse.invalid");
  g_autoptr(GBytes) other = clearsigned ("Origin: test\n", "other@glimpse.invalid");
  const char *broken = "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n-----END PGP PUBLIC KEY BLOCK-----\n";
  const char *fprs[] = { good_fpr, NULL };
  guint before = gpgv_dirs ();

  g_assert_true (g_file_get_contents (binary, &binary_data, &binary_len, NULL));
  for (guint i = 0; i < 2; i++)
    {
      g_autoptr(GPtrArray) rings = g_ptr_array_new_with_free_func ((GDestroyNotify) gl_apt_keyring_free);
      g_autoptr(GBytes) key = i == 0 ? g_bytes_new (good_key, strlen (good_key))
                                     : g_bytes_new (binary_data, binary_len);
      g_autoptr(GError) error = NULL;
      g_autoptr(GBytes) text = NULL;
      g_autoptr(GBytes) none = NULL;

      g_ptr_array_add (rings, gl_apt_keyring_new ("the good key", key));
      text = gl_apt_release_verify (data, rings, fprs, "the test", NULL, &error);
      g_assert_no_error (error);
      g_assert_cmpmem (g_bytes_get_data (text, NULL), g_bytes_get_size (text), "Origin: test\n", 13);
      none = gl_apt_release_verify (other, rings, NULL, "the test", NULL, &error);
      g_assert_null (none);
      g_assert_error (error, GL_APT_ERROR, GL_APT_ERROR_SIGNATURE);
    }
  {
    g_autoptr(GPtrArray) rings = g_ptr_array_new_with_free_func ((GDestroyNotify) gl_apt_keyring_free);
    g_autoptr(GBytes) good = g_bytes_new (good_key, strlen (good_key));
    g_autoptr(GBytes) bad = g_bytes_new (broken, strlen (broken));
    g_autoptr(GError) error = NULL;
    g_autoptr(GBytes) none = NULL;

    g_ptr_array_add (rings, gl_apt_keyring_new ("the good key", good));
    g_ptr_array_add (rings, gl_apt_keyring_new ("the broken key", bad));
    none = gl_apt_release_verify (data, rings, NULL, "the test", NULL, &error);
    g_assert_null (none);
    g_assert_error (error, GL_APT_ERROR, GL_APT_ERROR_KEYRING);
    g_assert_nonnull (strstr (error->message, "the test: "));
    g_assert_nonnull (strstr (error->message, "the broken key"));
  }
  g_assert_cmpuint (gpgv_dirs (), ==, before);
  gl_rm_rf (dir, NULL, NULL);
}

static void
test_no_gpg (void)
{
  gl_test_skip ("gpg and gpgv are needed to sign and check the test's CHECKSUM files (apt install gpg gpgv)");
}

int
main (int argc, char **argv)
{
  int status;

  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_test_add_func ("/base-image/alpine/unsigned", test_alpine_unsigned);
  if (!make_keys ())
    {
      g_test_add_func ("/base-image/fedora", test_no_gpg);
      return g_test_run ();
    }
#define ADD(path, signing, func) \
  g_test_add (path, Fixture, GINT_TO_POINTER (signing), fixture_setup, func, fixture_teardown)
  ADD ("/base-image/fedora/newest", SIGNED, test_fedora_newest);
  ADD ("/base-image/fedora/pinned", SIGNED, test_fedora_pinned);
  ADD ("/base-image/fedora/archive", SIGNED, test_fedora_archive);
  ADD ("/base-image/fedora/unknown", SIGNED, test_fedora_unknown);
  ADD ("/base-image/fedora/no-releases", SIGNED, test_fedora_no_releases);
  ADD ("/base-image/fedora/tampered", TAMPERED, test_fedora_refused);
  ADD ("/base-image/fedora/other-key", OTHER_KEY, test_fedora_refused);
  ADD ("/base-image/fedora/unsigned", UNSIGNED, test_fedora_refused);
#undef ADD
  g_test_add_func ("/gpgv/keyring-paths", test_gpgv_keyring_paths);
  g_test_add_func ("/gpgv/keyring-bytes", test_gpgv_keyring_bytes);
  status = g_test_run ();
  drop_keys ();
  return status;
}
