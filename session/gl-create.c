/* gl-create.c: building a sandbox from a profile, all or nothing
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-create.h"
#include "gl-repo.h"
#include "gl-pkg.h"

#include <errno.h>
#include <pwd.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "gl-apt-sources.h"
#include "gl-base-image.h"
#include "gl-fsutil.h"
#include "gl-paths.h"
#include "gl-pkg-limits.h"
#include "gl-spawn.h"
#include "gl-unpack.h"

static void
status (const GlCreateOptions *options, const char *format, ...) G_GNUC_PRINTF (2, 3);

static void
status (const GlCreateOptions *options, const char *format, ...)
{
  va_list args;
  g_autofree char *msg = NULL;

  if (options->status == NULL)
    return;
  va_start (args, format);
  msg = g_strdup_vprintf (format, args);
  va_end (args);
  options->status (msg, options->status_data);
}

static void
output_line (const char *line, gpointer user_data)
{
  const GlCreateOptions *options = user_data;

  if (options->output != NULL)
    options->output (line, options->output_data);
  else
    g_debug ("%s", line);
}

/* The sha256 digests named after "key" in a small OCI JSON document, in
 * order.  OCI index and manifest files are machine-written and flat enough
 * that this needs no JSON library. */
static GStrv
oci_digests (const char *json, const char *key)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  g_autofree char *quoted = g_strdup_printf ("\"%s\"", key);
  const char *start = strstr (json, quoted);
  g_autoptr(GRegex) regex = g_regex_new ("\"digest\"\\s*:\\s*\"sha256:([0-9a-f]{64})\"", 0, 0, NULL);
  g_autoptr(GMatchInfo) match = NULL;

  if (start == NULL)
    return g_strv_builder_end (builder);
  g_regex_match (regex, start, 0, &match);
  while (g_match_info_matches (match))
    {
      g_autofree char *digest = g_match_info_fetch (match, 1);
      g_strv_builder_add (builder, digest);
      if (g_str_equal (key, "manifests"))
        break;  /* the first manifest is the image */
      g_match_info_next (match, NULL);
    }
  return g_strv_builder_end (builder);
}

/* The unpacked layout is the image's: its index, manifest and config are
 * read without following links, regular files of at most 1 MiB only
 * (a link to a host file, a FIFO or a huge file is refused). */
static char *
read_blob (const char *layout, const char *digest, GError **error)
{
  g_autofree char *rel = g_build_filename ("blobs", "sha256", digest, NULL);
  char *text = NULL;

  if (!gl_tree_read_file (layout, rel, &text, NULL, error))
    return NULL;
  return text;
}

/* The Go architecture names OCI configs use, for the kernel's machine names. */
static const char *
oci_arch (const char *machine)
{
  static const struct { const char *machine, *go; } map[] = {
    { "x86_64", "amd64" }, { "aarch64", "arm64" }, { "armv7l", "arm" }, { "armv6l", "arm" },
    { "i686", "386" }, { "i386", "386" }, { "ppc64le", "ppc64le" }, { "s390x", "s390x" },
    { "riscv64", "riscv64" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (map); i++)
    if (g_str_equal (machine, map[i].machine))
      return map[i].go;
  return machine;
}

/* The first string value of "key" after @from in a flat JSON document. */
static char *
json_string_after (const char *json, const char *from, const char *key)
{
  g_autofree char *pattern = g_strdup_printf ("\"%s\"\\s*:\\s*\"([^\"]*)\"", key);
  g_autoptr(GRegex) regex = g_regex_new (pattern, 0, 0, NULL);
  g_autoptr(GMatchInfo) match = NULL;
  const char *start = from != NULL ? strstr (json, from) : json;

  if (start == NULL || !g_regex_match (regex, start, 0, &match))
    return NULL;
  return g_match_info_fetch (match, 1);
}

/* What this version unpacks: tar layers, plain or compressed, and an
 * image for this machine. */
static gboolean
check_oci_image (const char *archive, const char *layout, const char *manifest, GError **error)
{
  static const char * const layer_types[] = {
    "application/vnd.oci.image.layer.v1.tar",
    "application/vnd.oci.image.layer.v1.tar+gzip",
    "application/vnd.oci.image.layer.v1.tar+zstd",
    "application/vnd.docker.image.rootfs.diff.tar.gzip",
    NULL
  };
  g_autofree char *layer_type = json_string_after (manifest, "\"layers\"", "mediaType");
  g_auto(GStrv) config = oci_digests (manifest, "config");
  g_autofree char *config_text = NULL;
  g_autofree char *arch = NULL;
  struct utsname u;
  const char *want;

  if (layer_type == NULL || !g_strv_contains (layer_types, layer_type))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                   "%s: its layer is of media type “%s”; only tar layers (plain, gzip or "
                   "zstd) can be unpacked", archive, layer_type ? layer_type : "(none)");
      return FALSE;
    }
  if (config[0] == NULL || (config_text = read_blob (layout, config[0], NULL)) == NULL ||
      (arch = json_string_after (config_text, NULL, "architecture")) == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "%s: its image configuration (with the architecture it is for) is missing", archive);
      return FALSE;
    }
  want = oci_arch (uname (&u) == 0 ? u.machine : "x86_64");
  if (!g_str_equal (arch, want))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                   "%s is an image for %s; this machine needs %s (check the profile's {arch})",
                   archive, arch, want);
      return FALSE;
    }
  return TRUE;
}

static gboolean
unpack_oci (const char *archive, const char *rootfs, GCancellable *cancellable, GError **error)
{
  g_autofree char *parent = g_path_get_dirname (rootfs);
  g_autofree char *layout = g_build_filename (parent, "oci-image", NULL);
  g_autofree char *index = NULL;
  g_autofree char *manifest = NULL;
  g_auto(GStrv) manifests = NULL;
  g_auto(GStrv) layers = NULL;
  g_autoptr(GError) cleanup_error = NULL;
  g_autoptr(GError) read_error = NULL;
  gboolean ok = TRUE;

  if (!gl_mkdir (layout, 0700, error))
    return FALSE;
  if (!gl_unpack_archive (archive, layout, cancellable, error))
    return FALSE;

  if (!gl_tree_read_file (layout, "index.json", &index, NULL, &read_error) ||
      (manifests = oci_digests (index, "manifests"))[0] == NULL ||
      (manifest = read_blob (layout, manifests[0], &read_error)) == NULL ||
      (layers = oci_digests (manifest, "layers"))[0] == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "%s is not an OCI image archive with a manifest and layers "
                   "(index.json or the manifest is missing or empty%s%s)", archive,
                   read_error ? ": " : "", read_error ? read_error->message : "");
      ok = FALSE;
    }
  else if (!check_oci_image (archive, layout, manifest, error))
    ok = FALSE;
  for (guint i = 0; ok && layers[i] != NULL; i++)
    {
      g_autofree char *rel = g_build_filename ("blobs", "sha256", layers[i], NULL);
      g_autofree char *blob = g_build_filename (layout, rel, NULL);
      g_autofree char *sum = NULL;
      int fd = gl_tree_open_file (layout, rel, error);

      /* The layer, a regular file reached without a link, is summed
       * through that descriptor; tar then opens the same path, which
       * nothing else writes (the layout is private to root, 0700, and its
       * tar has ended). */
      if (fd >= 0)
        {
          sum = gl_checksum_fd_sha256 (fd, blob, cancellable, error);
          close (fd);
        }
      if (sum == NULL)
        ok = FALSE;
      else if (!g_str_equal (sum, layers[i]))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                       "Layer %s of %s is damaged (its SHA-256 is %s)", layers[i], archive, sum);
          ok = FALSE;
        }
      else if (i > 0)
        {
          /* Later layers would need whiteout handling; base images have one. */
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                       "%s has %u layers; only single-layer base images are supported",
                       archive, g_strv_length (layers));
          ok = FALSE;
        }
      else
        ok = gl_unpack_archive (blob, rootfs, cancellable, error);
    }

  if (!gl_rm_rf (layout, NULL, &cleanup_error) && ok)
    {
      g_propagate_error (error, g_steal_pointer (&cleanup_error));
      return FALSE;
    }
  return ok;
}

/* Signature=file: the image's detached signature, fetched beside it. */
static gboolean
verify_image_signature (GlProfile *profile, GlBaseImage *image, const char *archive,
                        GCancellable *cancellable, GError **error)
{
  g_autofree char *sig = g_strconcat (archive, ".sig", NULL);

  if (!gl_download_file (image->signature_url, sig, NULL, NULL, NULL, cancellable, error))
    {
      g_prefix_error (error, "Cannot fetch the signature of %s: ", image->url);
      return FALSE;
    }
  return gl_base_image_verify_file (profile, image->release, archive, sig, cancellable, error);
}

static gboolean
build_tarball (GlProfile *profile, const GlCreateOptions *options, const char *rootfs,
               char **release, GCancellable *cancellable, GError **error)
{
  g_autofree char *archive = NULL;

  if (options->image != NULL)
    {
      g_autofree char *expected = NULL;
      g_autofree char *actual = NULL;

      if (options->sha256 != NULL)
        expected = g_ascii_strdown (options->sha256, -1);
      else if (profile->checksum != NULL)
        expected = g_ascii_strdown (profile->checksum + strlen ("sha256:"), -1);

      status (options, "Verifying %s", options->image);
      actual = gl_checksum_file_sha256 (options->image, cancellable, error);
      if (actual == NULL)
        return FALSE;
      if (options->signature != NULL)
        {
          if (!gl_base_image_verify_file (profile, options->release ? options->release : profile->release,
                                          options->image, options->signature, cancellable, error))
            return FALSE;
          if (expected == NULL)
            expected = g_strdup (actual);
        }
      if (expected == NULL)
        {
          g_autoptr(GError) local_error = NULL;
          g_autoptr(GlBaseImage) image = gl_base_image_resolve (profile, options->release, NULL,
                                                                cancellable, &local_error);

          if (image == NULL)
            {
              g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                           "Cannot verify %s: %s. Its SHA-256 is %s: if that is the sum "
                           "the project publishes for it, pass that sum with --sha256 "
                           "(or its signature with --signature); or rerun when the network is back",
                           options->image, local_error->message, actual);
              return FALSE;
            }
          expected = g_strdup (image->sha256);
          *release = g_strdup (image->release);
        }
      if (g_ascii_strcasecmp (actual, expected) != 0)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                       "%s does not match: its SHA-256 is %s, expected %s; "
                       "the file is damaged or not the image of profile “%s”",
                       options->image, actual, expected, profile->name);
          return FALSE;
        }
      if (*release == NULL && options->release != NULL)
        *release = g_strdup (options->release);
      archive = g_strdup (options->image);
    }
  else
    {
      g_autoptr(GlBaseImage) image = NULL;
      g_autofree char *cache = NULL;
      const char *cache_dir = options->cache_dir ? options->cache_dir : gl_paths_cache_dir ();

      status (options, "Looking up the image of %s", profile->display_name);
      image = gl_base_image_resolve (profile, options->release, NULL, cancellable, error);
      if (image == NULL)
        return FALSE;
      if (image->release != NULL)
        status (options, "Release %s (%s)", image->release, image->how);
      status (options, "The image is checked %s", image->checked);
      /* Cached under its SHA-256: a moving name (…/current/, latest) that
       * now means another file never resumes yesterday's half download. */
      cache = g_build_filename (cache_dir, profile->name, image->sha256, NULL);
      if (!gl_mkdir_with_parents (cache, 0755, error))
        return FALSE;
      archive = g_build_filename (cache, image->file_name, NULL);
      status (options, "Downloading %s", image->url);
      if (!gl_download_file (image->url, archive, image->sha256, options->progress, options->progress_data,
                             cancellable, error))
        {
          (void) g_rmdir (cache);   /* only when nothing is kept for a resume */
          return FALSE;
        }
      if (image->signature_url != NULL)
        {
          status (options, "Checking the signature %s", image->signature_url);
          if (!verify_image_signature (profile, image, archive, cancellable, error))
            return FALSE;
        }
      *release = g_strdup (image->release);
    }

  status (options, "Unpacking %s", archive);
  if (profile->oci)
    return unpack_oci (archive, rootfs, cancellable, error);
  return gl_unpack_archive_strip (archive, rootfs, profile->strip_components, cancellable, error);
}

static void add_line (GStrvBuilder *lines, const char *format, ...) G_GNUC_PRINTF (2, 3);

static void
add_line (GStrvBuilder *lines, const char *format, ...)
{
  g_autofree char *line = NULL;
  va_list args;

  va_start (args, format);
  line = g_strdup_vprintf (format, args);
  va_end (args);
  g_strv_builder_add (lines, line);
}

/* The sources of a Debian suite: the suite, its -updates and -security
 * (which Debian's suites other than unstable and experimental have), from
 * @mirror and the security archive of the host's apt configuration.  NULL
 * when no mirror is given (the tool's defaults then apply). */
static GStrv
debian_sources (const char *suite, const char *mirror, const char *apt_root)
{
  g_autoptr(GStrvBuilder) lines = g_strv_builder_new ();
  g_autoptr(GPtrArray) host = NULL;
  const char *security = NULL;

  if (mirror == NULL)
    return NULL;
  add_line (lines, "deb %s %s main", mirror, suite);
  if (g_str_equal (suite, "unstable") || g_str_equal (suite, "sid") || g_str_equal (suite, "experimental"))
    return g_strv_builder_end (lines);
  add_line (lines, "deb %s %s-updates main", mirror, suite);
  host = gl_apt_sources_read (apt_root, NULL);
  for (guint i = 0; host != NULL && i < host->len && security == NULL; i++)
    {
      GlAptSource *s = host->pdata[i];
      if (s->enabled && !s->deb_src && g_str_has_suffix (s->suite, "-security"))
        security = s->uri;
    }
  if (security != NULL)
    add_line (lines, "deb %s %s-security main", security, suite);
  else
    g_debug ("No security archive in the host's apt configuration: %s-security is not added", suite);
  return g_strv_builder_end (lines);
}

/* (The tree is the packages', built in a user namespace: never through a
 * link of it, which could name a host path.) */
static gboolean
write_sources_list (const char *rootfs, GStrv lines, GError **error)
{
  g_autofree char *joined = g_strjoinv ("\n", lines);
  g_autofree char *text = g_strconcat (joined, "\n", NULL);

  return gl_tree_write_file (rootfs, "etc/apt/sources.list", text, -1, 0644, error);
}

/* VERSION_CODENAME of the tree's os-release, or NULL. */
static char *
os_release_codename (const char *rootfs)
{
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;

  /* (etc/os-release is mostly a link to usr/lib/os-release: links of the
   * tree are not followed) */
  if (!gl_tree_read_file (rootfs, "etc/os-release", &text, NULL, NULL)
      && !gl_tree_read_file (rootfs, "usr/lib/os-release", &text, NULL, NULL))
    return NULL;
  lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    if (g_str_has_prefix (lines[i], "VERSION_CODENAME="))
      {
        g_autofree char *v = g_strstrip (g_strdup (lines[i] + strlen ("VERSION_CODENAME=")));
        if (v[0] == '"' && strlen (v) >= 2)
          return g_strndup (v + 1, strlen (v) - 2);
        return *v != '\0' ? g_steal_pointer (&v) : NULL;
      }
  return NULL;
}

/* Every tree gets a working resolver configuration: one without a
 * nameserver line (Arch's filesystem package ships one of comments only;
 * Fedora's and Alpine's images have none; a link may point anywhere) is
 * replaced by a copy of the host's.  (The views and package operations
 * may show the host's own over it; this makes the tree work by itself.)
 * Glimpse's own code, run as root on the tree before anything of it runs:
 * no link of the tree is followed, no FIFO or device read. */
static gboolean
ensure_resolv_conf (const char *rootfs, GError **error)
{
  g_autofree char *etc = g_build_filename (rootfs, "etc", NULL);
  g_autofree char *text = NULL;
  g_autofree char *host = NULL;
  gsize len = 0;

  if (!g_file_test (etc, G_FILE_TEST_IS_DIR) || g_file_test (etc, G_FILE_TEST_IS_SYMLINK))
    return TRUE;
  if (gl_tree_read_file (rootfs, "etc/resolv.conf", &text, NULL, NULL))
    {
      g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
      for (guint i = 0; lines[i] != NULL; i++)
        if (g_str_has_prefix (g_strchug (lines[i]), "nameserver"))
          return TRUE;
    }
  if (!g_file_get_contents ("/etc/resolv.conf", &host, &len, NULL))
    return TRUE;    /* the host has none either */
  return gl_tree_write_file (rootfs, "etc/resolv.conf", host, (gssize) len, 0644, error);
}

/* mmdebstrap without the host's root: run as the `glimpse` system user in
 * its unshare mode, so the bootstrap's maintainer scripts are root only of
 * a user namespace mapped to that user's subordinate range (the range
 * package operations use), writing a tarball; unpacked here, its members
 * carry the tree's own ids (root's files root's), as the store wants.
 * Its scratch (the tarball, mmdebstrap's temporary tree) lies beside
 * @rootfs, inside the directory the caller removes on failure. */
static void
cancel_too (GCancellable *cancellable, gpointer other)
{
  g_cancellable_cancel (other);
}

static gboolean
bootstrap_rootless (GPtrArray *argv, const char *rootfs, const GlCreateOptions *options,
                    GCancellable *cancellable, GError **error)
{
  g_autofree char *parent = g_path_get_dirname (rootfs);
  g_autofree char *scratch = g_build_filename (parent, "bootstrap", NULL);
  g_autofree char *tarball = g_build_filename (scratch, "rootfs.tar", NULL);
  g_autofree char *home = g_strconcat ("HOME=", scratch, NULL);
  g_autofree char *tmpdir = g_strconcat ("TMPDIR=", scratch, NULL);
  g_autofree char *newuidmap = g_find_program_in_path ("newuidmap");
  g_autofree gid_t *groups = NULL;
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GError) cleanup_error = NULL;
  g_autoptr(GPtrArray) limit_args = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GlPkgLimits) limits = NULL;
  g_autoptr(GCancellable) stop = g_cancellable_new ();
  g_autofree char *warning = NULL;
  GlPkgLimitsWatch *watch;
  const char *reached;
  gulong forward = 0;
  const char *envp[] = { "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                         "LANG=C.UTF-8", home, tmpdir, NULL };
  GlSpawnOptions spawn = {
    .output = GL_SPAWN_OUTPUT_LINES,
    .line_func = output_line,
    .line_data = (gpointer) options,
    .envp = envp,
    .cwd = scratch,
    .as_user = TRUE,
    .no_signal_forward = options->signals_cancel,
  };
  struct passwd *pw;
  struct stat parent_st;
  guint32 range_uid, range_gid;
  gsize n_groups = 0;
  gboolean ok;

  if (!gl_pkg_ensure_range ("/etc", &range_uid, &range_gid, error))
    return FALSE;
  if ((pw = getpwnam ("glimpse")) == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "The system user “glimpse” is missing");
      return FALSE;
    }
  if (newuidmap == NULL && !g_file_test ("/usr/bin/newuidmap", G_FILE_TEST_IS_EXECUTABLE))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                   "Building a tree without the host's root needs newuidmap and newgidmap; "
                   "install them (apt install uidmap) and try again");
      return FALSE;
    }
  groups = gl_spawn_get_groups ("glimpse", pw->pw_gid, &n_groups, error);
  if (groups == NULL)
    return FALSE;
  /* and the range's group, through which it reaches its scratch */
  groups = g_renew (gid_t, groups, n_groups + 1);
  groups[n_groups++] = range_gid;
  spawn.uid = pw->pw_uid;
  spawn.gid = pw->pw_gid;
  spawn.groups = groups;
  spawn.n_groups = n_groups;
  /* Only the user and mmdebstrap's namespace (whose root is the range's
   * first id, to which it hands its temporary tree) may reach the scratch:
   * 0710 with the range's group, the parent too (never searchable by
   * others: the tree being built has set-id programs of the range's ids,
   * which would give any user the range's uid, owner of every sandbox's
   * sealed generations).  The user has the range's group for it. */
  if (!gl_mkdir (scratch, 0710, error))
    return FALSE;
  if (stat (parent, &parent_st) != 0 || chown (scratch, pw->pw_uid, range_gid) != 0
      || chmod (scratch, 0710) != 0 || chown (parent, 0, range_gid) != 0 || chmod (parent, 0710) != 0)
    {
      int saved = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "Cannot hand %s to the user “glimpse”: %s", scratch, g_strerror (saved));
      return FALSE;
    }
  g_ptr_array_insert (argv, 1, g_strdup ("--mode=unshare"));
  g_ptr_array_insert (argv, 2, g_strdup ("--format=tar"));
  for (guint i = 3; i < argv->len; i++)
    if (g_strcmp0 (argv->pdata[i], rootfs) == 0)
      {
        g_free (argv->pdata[i]);
        argv->pdata[i] = g_strdup (tarball);
      }
  /* the limits of a package operation (gl-pkg-limits.h): its maintainer
   * scripts are the packages' as much as an install's */
  limits = gl_pkg_limits_prepare (limit_args, &warning, error);
  if (limits == NULL)
    return FALSE;
  if (warning != NULL)
    output_line (warning, (gpointer) options);
  spawn.cgroups = gl_pkg_limits_get_cgroups (limits);
  if (cancellable != NULL)
    forward = g_cancellable_connect (cancellable, G_CALLBACK (cancel_too), stop, NULL);
  watch = gl_pkg_limits_watch_start (limits, parent, stop);
  ok = gl_spawn_run ((const char * const *) argv->pdata, &spawn, NULL, stop, &local_error);
  reached = gl_pkg_limits_watch_end (watch);
  if (forward != 0)
    g_cancellable_disconnect (cancellable, forward);
  if (reached != NULL)
    {
      g_autofree char *why = gl_pkg_limits_describe (limits, reached);
      g_clear_error (&local_error);
      g_set_error (&local_error, GL_PKG_ERROR, GL_PKG_ERROR_LIMIT, "%s was stopped: %s",
                   (const char *) argv->pdata[0], why);
      ok = FALSE;
    }
  /* the parent's own owner and mode again */
  if (chown (parent, parent_st.st_uid, parent_st.st_gid) != 0
      || chmod (parent, parent_st.st_mode & 07777) != 0)
    {
      int saved = errno;
      if (ok)
        {
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                       "Cannot set the mode of %s: %s", parent, g_strerror (saved));
          return FALSE;
        }
    }
  if (!ok)
    {
      if (g_error_matches (local_error, GL_SPAWN_ERROR, GL_SPAWN_ERROR_FAILED))
        g_set_error (error, local_error->domain, local_error->code,
                     "%s (run as the user “glimpse”, in a user namespace); see its messages above",
                     local_error->message);
      else
        g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }
  status (options, "Unpacking the tree %s built", (const char *) argv->pdata[0]);
  ok = gl_unpack_archive (tarball, rootfs, cancellable, error);
  if (!gl_rm_rf (scratch, NULL, &cleanup_error) && ok)
    {
      g_propagate_error (error, g_steal_pointer (&cleanup_error));
      return FALSE;
    }
  return ok;
}

static gboolean
build_bootstrap (GlProfile *profile, const GlCreateOptions *options, const char *rootfs,
                 char **release, GCancellable *cancellable, GError **error)
{
  g_auto(GStrv) sources = NULL;
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *tool = NULL;
  g_autofree char *mirror = NULL;
  g_autofree char *include = NULL;

  /* Only mmdebstrap builds a tree without the host's root (its unshare
   * mode); debootstrap would run every maintainer script as the host's
   * root, which a glimpse bootstrap never does. */
  if (profile->bootstrap_tool != NULL && !g_str_equal (profile->bootstrap_tool, "mmdebstrap"))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                   "Profile “%s” asks for %s, which runs the packages' maintainer scripts as the "
                   "host's root; glimpse builds trees only with mmdebstrap, as root of a user "
                   "namespace (remove Tool= from the profile, and apt install mmdebstrap uidmap)",
                   profile->name, profile->bootstrap_tool);
      return FALSE;
    }
  tool = g_find_program_in_path ("mmdebstrap");
  if (tool == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                   "Profile “%s” needs mmdebstrap to build its tree without the host's root; "
                   "install it (apt install mmdebstrap uidmap) and try again", profile->name);
      return FALSE;
    }

  mirror = g_strdup (profile->mirror);
  if (mirror == NULL)
    mirror = gl_apt_sources_find_debian_mirror (options->apt_root ? options->apt_root : "/");
  include = g_strv_length (profile->include) > 0 ? g_strjoinv (",", profile->include) : NULL;

  g_ptr_array_add (argv, g_strdup (tool));
  g_ptr_array_add (argv, g_strdup ("--variant=apt"));
  if (include != NULL)
    g_ptr_array_add (argv, g_strdup_printf ("--include=%s", include));
  g_ptr_array_add (argv, g_strdup (profile->suite));
  g_ptr_array_add (argv, g_strdup (rootfs));
  sources = debian_sources (profile->suite, mirror, options->apt_root ? options->apt_root : "/");
  /* the full lines: the tree is built with the updates and security
   * suites too (a given mirror turns mmdebstrap's own off) */
  for (guint i = 0; sources != NULL && sources[i] != NULL; i++)
    g_ptr_array_add (argv, g_strdup (sources[i]));
  g_ptr_array_add (argv, NULL);

  status (options, "Building %s with %s%s%s, as root of a user namespace", profile->suite, tool,
          mirror ? " from " : " from its default mirror", mirror ? mirror : "");
  if (!bootstrap_rootless (argv, rootfs, options, cancellable, error))
    return FALSE;
  /* written again, as the tool's own may differ: for the first update */
  if (sources != NULL && !write_sources_list (rootfs, sources, error))
    return FALSE;
  *release = os_release_codename (rootfs);
  return TRUE;
}

/* A profile's post-create hooks run the way package operations run, never
 * as the host's root: the tree is downloaded or built from packages, and a
 * hook runs its programs (pacman-key, gpg) or writes through its paths.
 * Each is a shell script of the administrator's, run by the tree's own
 * /bin/sh inside the new tree (as $1 and GLIMPSE_ROOTFS it is "/"). */
static const char hook_script[] =
  "GLIMPSE_SANDBOX=$1 GLIMPSE_PROFILE=$2 GLIMPSE_ROOTFS=/\n"
  "export GLIMPSE_SANDBOX GLIMPSE_PROFILE GLIMPSE_ROOTFS\n"
  "exec /bin/sh /run/glimpse-input/0 /\n";

static char *
hook_path (GlProfile *profile, const char *hook)
{
  g_autofree char *profile_dir = g_path_get_dirname (profile->path);

  return g_path_is_absolute (hook) ? g_strdup (hook) : g_build_filename (profile_dir, hook, NULL);
}

/* A tree's: inside the new tree itself, as root of the package namespace
 * (glimpse-pkgns --tree): what they write lands in the tree with its own
 * owners, before it is defanged. */
static gboolean
run_tree_hooks (GlProfile *profile, const GlCreateOptions *options, const char *rootfs,
                const char *id, GCancellable *cancellable, GError **error)
{
  for (guint i = 0; profile->hooks_post_create[i] != NULL; i++)
    {
      g_autofree char *path = hook_path (profile, profile->hooks_post_create[i]);
      g_autofree char *what = g_strdup_printf ("running the hook %s", path);
      const char *args[] = { id, profile->name, NULL };
      const char *inputs[] = { path, NULL };

      status (options, "Running the hook %s inside the new tree, as root of a user namespace", path);
      if (!gl_pkg_run_in_tree (rootfs, what, hook_script, args, inputs, output_line, (gpointer) options,
                               cancellable, error))
        {
          g_prefix_error (error, "Hook %s of profile %s: ", path, profile->path);
          return FALSE;
        }
    }
  return TRUE;
}

/* A sandbox of the host's: as a package operation over the host's / (its
 * result the first system generation). */
static gboolean
run_host_hooks (GlProfile *profile, const GlCreateOptions *options, GlSandbox *sandbox,
                GCancellable *cancellable, GError **error)
{
  for (guint i = 0; profile->hooks_post_create[i] != NULL; i++)
    {
      g_autofree char *path = hook_path (profile, profile->hooks_post_create[i]);
      g_autofree char *what = g_strdup_printf ("running the hook %s", path);
      const char *args[] = { sandbox->id, profile->name, NULL };
      g_autoptr(GlPkgOp) op = NULL;
      g_autofree char *input = NULL;
      g_autofree char *text = NULL;
      gsize len = 0;

      status (options, "Running the hook %s as a package operation", path);
      op = gl_pkg_op_begin (sandbox, output_line, (gpointer) options, error);
      if (op != NULL)
        input = g_build_filename (gl_pkg_op_get_input_dir (op), "0", NULL);
      if (op == NULL || !g_file_get_contents (path, &text, &len, error)
          || !g_file_set_contents_full (input, text, (gssize) len, G_FILE_SET_CONTENTS_NONE, 0644, error)
          || !gl_pkg_op_run (op, what, hook_script, args, cancellable, error)
          || !gl_pkg_op_commit (op, cancellable, error))
        {
          g_prefix_error (error, "Hook %s of profile %s: ", path, profile->path);
          return FALSE;
        }
    }
  return TRUE;
}

/* 0600: any user who could open the lock could also hold it, and so keep
 * everyone's apps from starting. */
static gboolean
write_lock (const char *path, GError **error)
{
  return g_file_set_contents_full (path, "", 0, G_FILE_SET_CONTENTS_NONE, 0600, error);
}

gboolean
gl_create_build_base (GlProfile *profile, const GlCreateOptions *options, const char *sandbox_path,
                      const char *id, const char *rootfs, char **release,
                      GCancellable *cancellable, GError **error)
{
  g_return_val_if_fail (profile->base_type != GL_PROFILE_BASE_HOST, FALSE);

  /* Private until defanged: tar as root restores set-id bits, file
   * capabilities and device nodes, and the scratch around the tree is
   * reachable by every user (the bootstrap's 0711, a package operation's);
   * anyone who got inside now could keep a descriptor in it. */
  if (!gl_mkdir (rootfs, 0700, error))
    return FALSE;
  if (profile->base_type == GL_PROFILE_BASE_TARBALL &&
      !build_tarball (profile, options, rootfs, release, cancellable, error))
    return FALSE;
  if (profile->base_type == GL_PROFILE_BASE_BOOTSTRAP &&
      !build_bootstrap (profile, options, rootfs, release, cancellable, error))
    return FALSE;
  if (!ensure_resolv_conf (rootfs, error))
    return FALSE;
  if (!run_tree_hooks (profile, options, rootfs, id, cancellable, error))
    return FALSE;
  /* The tree lies in the store where every host user can reach it: an
   * image's setuid binaries (su, mount, an old pkexec) must not give root
   * there.  Inside a view all is nosuid anyway. */
  if (!gl_pkg_tree_defang (rootfs, error))
    {
      g_prefix_error (error, "Cannot clear set-id bits of the new tree: ");
      return FALSE;
    }
  /* only now reachable: root's, and not writable by others */
  if (chown (rootfs, 0, 0) != 0 || chmod (rootfs, 0755) != 0)
    {
      int saved = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "Cannot set owner and mode of %s: %s", rootfs, g_strerror (saved));
      return FALSE;
    }
  return TRUE;
}

static gboolean
build_tree (const char *tmp, const char *id, GlProfile *profile,
            const GlCreateOptions *options, GCancellable *cancellable, GError **error)
{
  g_autofree char *system = g_build_filename (tmp, "system", NULL);
  g_autofree char *users = g_build_filename (tmp, "users", NULL);
  g_autofree char *lock = g_build_filename (tmp, "lock", NULL);
  g_autofree char *rootfs = NULL;
  g_autoptr(GlSandbox) sandbox = g_new0 (GlSandbox, 1);
  g_autoptr(GDateTime) now = g_date_time_new_now_utc ();
  g_autofree char *release = NULL;

  if (!gl_profile_check_machine (profile, NULL, error))
    return FALSE;
  /* system/ without `current`: no system layer yet, the base only (the
   * first package operation writes generation 1) */
  if (!gl_mkdir (system, 0755, error) || !gl_mkdir (users, 0755, error) ||
      !write_lock (lock, error))
    return FALSE;

  if (profile->base_type != GL_PROFILE_BASE_HOST)
    {
      rootfs = g_build_filename (tmp, "rootfs", NULL);
      if (!gl_create_build_base (profile, options, tmp, id, rootfs, &release, cancellable, error))
        return FALSE;
    }
  else if (options->image != NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "Profile “%s” uses the host as its base and takes no --image", profile->name);
      return FALSE;
    }

  sandbox->id = g_strdup (id);
  sandbox->path = g_strdup (tmp);
  sandbox->profile = g_strdup (profile->name);
  /* a name a person would write: theirs, else the id for a sandbox of the
   * host ("Mousepad — dk-host" in the menu), else the profile's */
  if (options->display_name != NULL)
    sandbox->name = g_strdup (options->display_name);
  else if (profile->base_type == GL_PROFILE_BASE_HOST)
    sandbox->name = g_strdup (id);
  else if (!g_str_equal (id, profile->name))
    sandbox->name = g_strdup_printf ("%s [%s]", profile->display_name, id);
  else
    sandbox->name = g_strdup (profile->display_name);
  sandbox->base = g_strdup (profile->base_type == GL_PROFILE_BASE_HOST ? GL_BASE_HOST : GL_BASE_ROOTFS);
  sandbox->family = g_strdup (profile->family);
  sandbox->release = release != NULL ? g_steal_pointer (&release) : g_strdup (profile->release);
  sandbox->follows = gl_profile_follows (profile, sandbox->release);
  sandbox->launchers = g_strdupv (profile->launchers);
  sandbox->created = g_date_time_ref (now);
  sandbox->updated = g_date_time_ref (now);
  if (!gl_sandbox_save (sandbox, error))
    return FALSE;
  /* the profile's repositories, as add-repo adds them (each fetched and
   * verified against its own key; a failure fails the creation).  The
   * package namespace's mapped root must reach the tree: the directory
   * gets its final mode now that the tree is defanged. */
  if ((profile->repositories->len > 0 || (rootfs == NULL && profile->hooks_post_create[0] != NULL))
      && chmod (tmp, 0755) != 0)
    {
      int saved = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "Cannot set the mode of %s: %s", tmp, g_strerror (saved));
      return FALSE;
    }
  if (rootfs == NULL && !run_host_hooks (profile, options, sandbox, cancellable, error))
    return FALSE;
  for (guint i = 0; i < profile->repositories->len; i++)
    {
      GlProfileRepo *repo = profile->repositories->pdata[i];

      status (options, "Adding the repository %s (%s)", repo->name, repo->source);
      if (!gl_repo_add (sandbox, repo->source, repo->key, repo->name, options->status,
                        options->status_data, cancellable, error))
        {
          g_prefix_error (error, "Repository %s of profile %s: ", repo->name, profile->path);
          return FALSE;
        }
    }
  return TRUE;
}

char *
gl_create_sandbox (GlStore *store, GlProfile *profile, const GlCreateOptions *options,
                   GCancellable *cancellable, GError **error)
{
  g_autofree char *id = NULL;
  g_autofree char *final = NULL;
  g_autofree char *tmp = NULL;
  g_autoptr(GError) local_error = NULL;
  const char *store_dir = gl_store_get_dir (store);
  int work;

  if (!gl_store_ensure (store, error))
    return NULL;
  gl_store_clean_abandoned (store, NULL);

  if (options->id != NULL)
    {
      if (!gl_sandbox_id_validate (options->id, error))
        return NULL;
      id = g_strdup (options->id);
      final = g_build_filename (store_dir, id, NULL);
      if (g_file_test (final, G_FILE_TEST_EXISTS) || g_file_test (final, G_FILE_TEST_IS_SYMLINK))
        {
          g_set_error (error, GL_STORE_ERROR, GL_STORE_ERROR_EXISTS,
                       "A sandbox “%s” exists already; choose another name with --name, "
                       "or remove it with “glimpse remove %s”", id, id);
          return NULL;
        }
    }
  else
    {
      id = gl_store_allocate_id (store, profile->name, error);
      if (id == NULL)
        return NULL;
      final = g_build_filename (store_dir, id, NULL);
    }

  /* Beside the final place, so the rename is atomic; a leading '.' keeps
   * it out of every listing, and its lock, held until we are done, tells
   * the next store operation whether it was abandoned (kill -9). */
  work = gl_store_make_work_dir (store, "creating", &tmp, error);
  if (work < 0)
    return NULL;

  if (!build_tree (tmp, id, profile, options, cancellable, &local_error) ||
      chmod (tmp, 0755) != 0 ||
      /* RENAME_NOREPLACE: a sandbox made meanwhile under the same name wins */
      renameat2 (AT_FDCWD, tmp, AT_FDCWD, final, RENAME_NOREPLACE) != 0)
    {
      g_autoptr(GError) cleanup_error = NULL;

      if (local_error == NULL)
        {
          int saved = errno;
          g_set_error (&local_error, G_IO_ERROR, g_io_error_from_errno (saved),
                       "Cannot move the new sandbox into place at %s: %s", final, g_strerror (saved));
        }
      if (!gl_rm_rf (tmp, NULL, &cleanup_error))
        g_prefix_error (&local_error, "the half-built tree %s could not be removed (%s); "
                        "remove it by hand. The build failed: ", tmp, cleanup_error->message);
      close (work);
      g_propagate_prefixed_error (error, g_steal_pointer (&local_error),
                                  "Cannot create sandbox “%s”: ", id);
      return NULL;
    }

  close (work);
  return g_steal_pointer (&id);
}
