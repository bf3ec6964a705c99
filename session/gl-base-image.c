/* gl-base-image.c: what a tarball profile's base image is today
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-base-image.h"

#include <string.h>
#include <sys/utsname.h>
#include <glib/gstdio.h>

#include "gl-checksum.h"
#include "gl-download.h"
#include "gl-fsutil.h"
#include "gl-gpgv.h"
#include "gl-paths.h"

void
gl_base_image_free (GlBaseImage *image)
{
  if (image == NULL)
    return;
  g_free (image->release);
  g_free (image->version);
  g_free (image->how);
  g_free (image->url);
  g_free (image->file_name);
  g_free (image->sha256);
  g_free (image->signature_url);
  g_free (image->checked);
  g_free (image);
}

static const char *
machine_or_this (const char *machine)
{
  static char name[sizeof ((struct utsname *) NULL)->machine];
  struct utsname u;

  if (machine != NULL)
    return machine;
  if (name[0] == '\0')
    g_strlcpy (name, uname (&u) == 0 ? u.machine : "x86_64", sizeof name);
  return name;
}

/* The last path segment of a URL, without query or fragment. */
static char *
url_file_name (const char *url)
{
  g_autofree char *path = g_strndup (url, strcspn (url, "?#"));
  const char *slash = strrchr (path, '/');
  const char *name = slash ? slash + 1 : path;

  /* it names a file in the cache: never a directory or a way out of it */
  if (*name == '\0' || g_str_equal (name, ".") || g_str_equal (name, ".."))
    return g_strdup ("base-image");
  return g_strdup (name);
}

/* The directory part of a URL, with its trailing '/'. */
static char *
url_dir (const char *url)
{
  const char *slash = strrchr (url, '/');

  return slash != NULL ? g_strndup (url, (gsize) (slash - url) + 1) : g_strdup (url);
}

/* ---- Ubuntu LTS: distro-info-data ---- */

static gboolean
resolve_ubuntu_lts (GlProfile *profile, const char *pin, char **release, char **version,
                    char **how, GError **error)
{
  g_autofree char *csv = g_build_filename (gl_paths_distro_info_dir (), "ubuntu.csv", NULL);
  g_autofree char *text = NULL;
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GDateTime) now = g_date_time_new_now_utc ();
  g_autofree char *today = g_date_time_format (now, "%Y-%m-%d");
  g_auto(GStrv) lines = NULL;
  g_autofree char *best_series = NULL, *best_version = NULL;

  if (!g_file_get_contents (csv, &text, NULL, &local_error))
    {
      if (pin != NULL)
        {
          *release = g_strdup (pin);
          *how = g_strdup_printf ("pinned with --release (%s unreadable)", csv);
          return TRUE;
        }
      g_set_error (error, G_IO_ERROR, g_io_error_from_file_error (local_error->code),
                   "Cannot find Ubuntu's current LTS release: %s; install distro-info-data "
                   "(apt install distro-info-data) or name the release with --release CODENAME",
                   local_error->message);
      return FALSE;
    }
  /* version,codename,series,created,release,eol,… */
  lines = g_strsplit (text, "\n", -1);
  for (guint i = 1; lines[i] != NULL; i++)
    {
      g_auto(GStrv) f = g_strsplit (lines[i], ",", -1);
      g_autofree char *number = NULL;

      if (g_strv_length (f) < 5)
        continue;
      number = g_strdup (f[0]);
      if (strstr (number, " LTS") != NULL)
        *strstr (number, " LTS") = '\0';
      if (pin != NULL)
        {
          if (g_str_equal (pin, f[2]) || g_str_equal (pin, number))
            {
              *release = g_strdup (f[2]);
              *version = g_strdup (number);
              *how = g_strdup_printf ("pinned with --release (%s %s in %s)", number, f[2], csv);
              return TRUE;
            }
          continue;
        }
      if (strstr (f[0], "LTS") == NULL || strcmp (f[4], today) > 0)
        continue;
      g_free (best_series);
      g_free (best_version);
      best_series = g_strdup (f[2]);
      best_version = g_strdup (number);
    }
  if (pin != NULL)
    {
      *release = g_strdup (pin);
      *how = g_strdup_printf ("pinned with --release (not in %s)", csv);
      return TRUE;
    }
  if (best_series == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                   "%s lists no Ubuntu LTS release out by today; name one with --release CODENAME", csv);
      return FALSE;
    }
  *release = g_steal_pointer (&best_series);
  *version = g_steal_pointer (&best_version);
  *how = g_strdup_printf ("the newest LTS released by %s, from %s", today, csv);
  return TRUE;
}

/* ---- Alpine: latest-releases.yaml ---- */

typedef struct {
  char *file;
  char *version;
  char *sha256;
  char *url;
  char *index_url;   /* the latest-releases.yaml it came from */
} AlpineEntry;

static void
alpine_entry_clear (AlpineEntry *e)
{
  g_clear_pointer (&e->file, g_free);
  g_clear_pointer (&e->version, g_free);
  g_clear_pointer (&e->sha256, g_free);
  g_clear_pointer (&e->url, g_free);
  g_clear_pointer (&e->index_url, g_free);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (AlpineEntry, alpine_entry_clear)

/* The minirootfs entry of a latest-releases.yaml: a list of flat maps. */
static gboolean
parse_alpine_yaml (const char *text, AlpineEntry *out)
{
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  g_autofree char *flavor = NULL, *file = NULL, *version = NULL, *sha = NULL;

  for (guint i = 0; ; i++)
    {
      const char *line = lines[i];
      const char *p;

      if (line == NULL || g_str_has_prefix (line, "-"))
        {
          if (g_strcmp0 (flavor, "alpine-minirootfs") == 0 && file != NULL && version != NULL &&
              sha != NULL && gl_checksum_is_sha256 (sha) && strchr (file, '/') == NULL)
            {
              out->file = g_steal_pointer (&file);
              out->version = g_steal_pointer (&version);
              out->sha256 = g_ascii_strdown (sha, -1);
              return TRUE;
            }
          g_clear_pointer (&flavor, g_free);
          g_clear_pointer (&file, g_free);
          g_clear_pointer (&version, g_free);
          g_clear_pointer (&sha, g_free);
          if (line == NULL)
            return FALSE;
        }
      p = line;
      while (*p == ' ' || *p == '-')
        p++;
#define FIELD(name, var) \
      if (g_str_has_prefix (p, name ":")) { g_free (var); var = g_strstrip (g_strdup (p + strlen (name ":"))); continue; }
      FIELD ("flavor", flavor)
      FIELD ("file", file)
      FIELD ("version", version)
      FIELD ("sha256", sha)
#undef FIELD
    }
}

static gboolean
resolve_alpine (GlProfile *profile, const char *pin, const char *machine, AlpineEntry *out,
                char **release, char **how, GCancellable *cancellable, GError **error)
{
  g_autofree char *branch = NULL;
  g_autofree char *yaml_url = NULL;
  g_autofree char *text = NULL;
  const char *branch_vars[3] = { "branch", NULL, NULL };

  if (pin == NULL)
    branch = g_strdup ("latest-stable");
  else
    {
      g_auto(GStrv) parts = g_strsplit (pin, ".", -1);
      if (g_strv_length (parts) < 2)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       "“%s” is not an Alpine release; give one as 3.22 or 3.22.1", pin);
          return FALSE;
        }
      branch = g_strdup_printf ("v%s.%s", parts[0], parts[1]);
    }
  branch_vars[1] = branch;
  yaml_url = gl_profile_expand_full (profile, profile->channel_url, machine, pin, branch_vars);
  text = gl_download_to_string (yaml_url, NULL, cancellable, error);
  if (text == NULL)
    {
      g_prefix_error (error, "Cannot look up Alpine's %s release: ", branch);
      return FALSE;
    }
  if (!parse_alpine_yaml (text, out))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "%s lists no alpine-minirootfs with a file, version and sha256", yaml_url);
      return FALSE;
    }
  if (pin != NULL && strchr (strchr (pin, '.') + 1, '.') != NULL && !g_str_equal (pin, out->version))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                   "Alpine %s is no longer the newest of its branch (%s is); use --release %s",
                   pin, out->version, branch + 1);
      return FALSE;
    }
  {
    g_autofree char *dir = url_dir (yaml_url);
    out->url = g_strconcat (dir, out->file, NULL);
  }
  out->index_url = g_strdup (yaml_url);
  *release = g_strdup (out->version);
  *how = g_strdup_printf ("%s of %s", pin != NULL ? "pinned with --release, the newest" : "the newest",
                          yaml_url);
  return TRUE;
}

/* ---- Fedora: releases/N with a Container CHECKSUM ---- */

/* The names linked from an HTML directory index. */
static GStrv
index_names (const char *html)
{
  g_autoptr(GStrvBuilder) b = g_strv_builder_new ();
  g_autoptr(GRegex) re = g_regex_new ("href=\"([^\"?#/]+)/?\"", G_REGEX_CASELESS, 0, NULL);
  g_autoptr(GMatchInfo) m = NULL;

  g_regex_match (re, html, 0, &m);
  while (g_match_info_matches (m))
    {
      g_autofree char *name = g_match_info_fetch (m, 1);
      g_strv_builder_add (b, name);
      g_match_info_next (m, NULL);
    }
  return g_strv_builder_end (b);
}

/* The CHECKSUM in the images directory of release N (Url, or ArchiveUrl
 * when @archive), or NULL. */
static char *
fedora_checksum_url (GlProfile *profile, const char *machine, const char *release,
                     gboolean archive, GCancellable *cancellable, GError **error)
{
  g_autofree char *dir = gl_profile_expand_full (profile, archive ? profile->archive_url : profile->url,
                                                 machine, release, NULL);
  g_autofree char *pattern_url = gl_profile_expand_full (profile, profile->checksum_url, machine, release, NULL);
  g_autofree char *pattern = url_file_name (pattern_url);
  g_autoptr(GPatternSpec) spec = g_pattern_spec_new (pattern);
  g_autofree char *html = gl_download_to_string (dir, NULL, cancellable, error);
  g_auto(GStrv) names = NULL;
  g_autofree char *best = NULL;

  if (html == NULL)
    return NULL;
  names = index_names (html);
  for (guint i = 0; names[i] != NULL; i++)
    if (g_pattern_spec_match_string (spec, names[i]) &&
        (best == NULL || strverscmp (names[i], best) > 0))
      {
        g_free (best);
        best = g_strdup (names[i]);
      }
  if (best == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "%s has no file matching %s", dir, pattern);
      return NULL;
    }
  return g_strconcat (dir, best, NULL);
}

static gboolean
resolve_fedora (GlProfile *profile, const char *pin, const char *machine, char **checksum_url,
                char **release, char **how, GCancellable *cancellable, GError **error)
{
  g_autofree char *html = NULL;
  g_auto(GStrv) names = NULL;
  g_autoptr(GPtrArray) numbers = g_ptr_array_new ();
  g_autoptr(GError) last_error = NULL;

  if (pin != NULL)
    {
      *checksum_url = fedora_checksum_url (profile, machine, pin, FALSE, cancellable, &last_error);
      if (*checksum_url == NULL && profile->archive_url != NULL &&
          !g_error_matches (last_error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        {
          g_clear_error (&last_error);
          *checksum_url = fedora_checksum_url (profile, machine, pin, TRUE, cancellable, &last_error);
          if (*checksum_url != NULL)
            *how = g_strdup ("pinned with --release, from the archive");
        }
      if (*checksum_url == NULL)
        {
          g_propagate_prefixed_error (error, g_steal_pointer (&last_error),
                                      "Fedora %s has no container image here or in the archive: ", pin);
          return FALSE;
        }
      if (*how == NULL)
        *how = g_strdup ("pinned with --release");
      *release = g_strdup (pin);
      return TRUE;
    }

  html = gl_download_to_string (profile->channel_url, NULL, cancellable, error);
  if (html == NULL)
    {
      g_prefix_error (error, "Cannot look up Fedora's releases: ");
      return FALSE;
    }
  names = index_names (html);
  for (guint i = 0; names[i] != NULL; i++)
    if (names[i][0] != '\0' && strspn (names[i], "0123456789") == strlen (names[i]))
      g_ptr_array_add (numbers, names[i]);
  /* newest first: try the three newest numbers */
  for (guint tries = 0; tries < 3 && numbers->len > 0; tries++)
    {
      guint best = 0;

      for (guint i = 1; i < numbers->len; i++)
        if (atoi (numbers->pdata[i]) > atoi (numbers->pdata[best]))
          best = i;
      g_clear_error (&last_error);
      *checksum_url = fedora_checksum_url (profile, machine, numbers->pdata[best], FALSE,
                                           cancellable, &last_error);
      if (*checksum_url != NULL)
        {
          *release = g_strdup (numbers->pdata[best]);
          *how = g_strdup_printf ("the newest release with a container CHECKSUM under %s",
                                  profile->channel_url);
          return TRUE;
        }
      if (g_error_matches (last_error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        break;
      g_ptr_array_remove_index (numbers, best);
    }
  if (last_error != NULL)
    g_propagate_prefixed_error (error, g_steal_pointer (&last_error),
                                "No Fedora release with a container image under %s: ", profile->channel_url);
  else
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                 "%s lists no release directories", profile->channel_url);
  return FALSE;
}

/* ---- the release ---- */

static gboolean
resolve_release_full (GlProfile *profile, const char *pin, const char *machine, char **release,
                      char **version, char **how, AlpineEntry *alpine, char **checksum_url,
                      GCancellable *cancellable, GError **error)
{
  if (profile->channel == NULL)
    {
      *release = g_strdup (pin != NULL ? pin : profile->release);
      *how = g_strdup (pin != NULL ? "pinned with --release" : "fixed by the profile (Release=)");
      return TRUE;
    }
  if (g_str_equal (profile->channel, "ubuntu-lts"))
    return resolve_ubuntu_lts (profile, pin, release, version, how, error);
  if (g_str_equal (profile->channel, "alpine"))
    return resolve_alpine (profile, pin, machine, alpine, release, how, cancellable, error);
  return resolve_fedora (profile, pin, machine, checksum_url, release, how, cancellable, error);
}

gboolean
gl_base_image_resolve_release (GlProfile *profile, const char *release_pin, const char *machine,
                               char **release, char **version, char **how,
                               GCancellable *cancellable, GError **error)
{
  g_auto(AlpineEntry) alpine = { NULL };
  g_autofree char *checksum_url = NULL;

  *release = *version = *how = NULL;
  return resolve_release_full (profile, release_pin, machine_or_this (machine), release, version, how,
                               &alpine, &checksum_url, cancellable, error);
}

/* ---- signatures ---- */

GStrv
gl_base_image_keyrings (GlProfile *profile, const char *release, GError **error)
{
  g_autoptr(GStrvBuilder) found = g_strv_builder_new ();
  g_autofree char *dir = g_path_get_dirname (profile->path);
  g_auto(GStrv) result = NULL;
  g_autoptr(GStrvBuilder) all = g_strv_builder_new ();
  g_auto(GStrv) paths = NULL;

  for (guint i = 0; profile->keyrings[i] != NULL; i++)
    {
      g_autofree char *name = gl_profile_expand_full (profile, profile->keyrings[i], machine_or_this (NULL),
                                                      release, NULL);
      g_autofree char *path = g_path_is_absolute (name) ? g_strdup (name)
                                                         : g_build_filename (dir, name, NULL);
      if (g_file_test (path, G_FILE_TEST_IS_REGULAR))
        g_strv_builder_add (found, path);
      g_strv_builder_add (all, path);
    }
  paths = g_strv_builder_end (all);
  result = g_strv_builder_end (found);
  if (result[0] == NULL)
    {
      g_autofree char *tried = g_strjoinv (", ", paths);
      const char *first = paths[0] != NULL ? paths[0] : "the path Keyring= names";
      g_autofree char *signers = g_strjoinv (" or ", profile->signed_by);
      g_autofree char *key = profile->signed_by[0] != NULL
                             ? g_strdup_printf ("the key %s", signers) : g_strdup ("its signing key");

      g_set_error (error, GL_GPGV_ERROR, GL_GPGV_ERROR_KEYRING,
                   "Cannot check the signature of profile “%s”'s base: none of its keyrings "
                   "exists (%s). Put a keyring holding %s at %s (a copy of that file from a "
                   "system of the distribution, or from its keyring package), or pass one with "
                   "“sudo glimpse create %s --keyring FILE”; or use an image you verified "
                   "yourself with --image FILE --sha256 SUM",
                   profile->name, tried, key, first, profile->name);
      return NULL;
    }
  return g_steal_pointer (&result);
}

gboolean
gl_base_image_verify_file (GlProfile *profile, const char *release, const char *path,
                           const char *signature_path, GCancellable *cancellable, GError **error)
{
  g_auto(GStrv) keyrings = gl_base_image_keyrings (profile, release, error);

  if (keyrings == NULL)
    return FALSE;
  return gl_gpgv_verify_detached (path, signature_path, (const char * const *) keyrings,
                                  (const char * const *) profile->signed_by, path,
                                  cancellable, error);
}

/* The checksum list at @url, its signature checked as the profile says. */
static char *
fetch_checksum_list (GlProfile *profile, const char *url, const char *machine, const char *release,
                     GCancellable *cancellable, GError **error)
{
  gsize length = 0;
  g_autofree char *list = gl_download_to_string (url, &length, cancellable, error);
  g_auto(GStrv) keyrings = NULL;

  if (list == NULL)
    return NULL;
  if (profile->signature == NULL || g_str_equal (profile->signature, "file"))
    return g_steal_pointer (&list);

  keyrings = gl_base_image_keyrings (profile, release, error);
  if (keyrings == NULL)
    return NULL;
  if (g_str_equal (profile->signature, "clearsigned"))
    {
      g_autoptr(GBytes) data = g_bytes_new_take (g_steal_pointer (&list), length);
      g_autoptr(GBytes) text = gl_gpgv_verify_clearsigned (data, (const char * const *) keyrings,
                                                           (const char * const *) profile->signed_by,
                                                           url, cancellable, error);
      if (text == NULL)
        return NULL;
      return g_strndup (g_bytes_get_data (text, NULL), g_bytes_get_size (text));
    }
  /* a detached signature of the list */
  {
    const char *vars[] = { "checksum_url", url, NULL };
    g_autofree char *sig_url = gl_profile_expand_full (profile, profile->signature_url, machine, release, vars);
    g_autofree char *tmp = g_dir_make_tmp ("glimpse-sums-XXXXXX", error);
    g_autofree char *list_path = NULL, *sig_path = NULL, *sig = NULL;
    gsize sig_len = 0;
    gboolean ok;

    if (tmp == NULL)
      return NULL;
    list_path = g_build_filename (tmp, "list", NULL);
    sig_path = g_build_filename (tmp, "list.sig", NULL);
    sig = gl_download_to_string (sig_url, &sig_len, cancellable, error);
    ok = sig != NULL &&
         g_file_set_contents (list_path, list, (gssize) length, error) &&
         g_file_set_contents (sig_path, sig, (gssize) sig_len, error) &&
         gl_gpgv_verify_detached (list_path, sig_path, (const char * const *) keyrings,
                                  (const char * const *) profile->signed_by, url,
                                  cancellable, error);
    if (sig == NULL)
      g_prefix_error (error, "Cannot fetch the signature of %s: ", url);
    gl_rm_rf (tmp, NULL, NULL);
    if (!ok)
      return NULL;
    return g_steal_pointer (&list);
  }
}

/* How the image is checked, in words: what the sum comes from and
 * whether a signature vouches for it.  Without a signature the sum is
 * only as good as the connection it came over: said plainly. */
static char *
describe_checks (GlProfile *profile, GlBaseImage *image, const char *sums_from)
{
  g_autofree char *keyrings = g_strjoinv (", ", profile->keyrings);
  const char *over = sums_from != NULL && g_str_has_prefix (sums_from, "https://") ? "HTTPS" : "plain HTTP";

  if (profile->checksum != NULL && profile->signature == NULL)
    return g_strdup ("by the SHA-256 written in the profile (Checksum=)");
  if (profile->signature != NULL && g_str_equal (profile->signature, "file"))
    return g_strdup_printf ("by its SHA-256 from %s and its signature %s, checked with gpgv against %s",
                            sums_from ? sums_from : "the profile", image->signature_url, keyrings);
  if (profile->signature != NULL)
    return g_strdup_printf ("by its SHA-256 from %s, whose signature gpgv checked against %s",
                            sums_from ? sums_from : "the profile", keyrings);
  return g_strdup_printf ("only by its SHA-256 from %s, fetched over %s; no signature is verified "
                          "(the profile names no signing key), so the image is as trustworthy "
                          "as that connection and that server",
                          sums_from, over);
}

GlBaseImage *
gl_base_image_resolve (GlProfile *profile, const char *release_pin, const char *machine,
                       GCancellable *cancellable, GError **error)
{
  g_autoptr(GlBaseImage) image = g_new0 (GlBaseImage, 1);
  g_auto(AlpineEntry) alpine = { NULL };
  g_autofree char *checksum_url = NULL;
  g_autofree char *list = NULL;
  g_autofree char *url = NULL;

  machine = machine_or_this (machine);
  if (!resolve_release_full (profile, release_pin, machine, &image->release, &image->version,
                             &image->how, &alpine, &checksum_url, cancellable, error))
    return NULL;
  /* no keyring to check the signature with: say so before any download */
  if (profile->signature != NULL)
    {
      g_auto(GStrv) keyrings = gl_base_image_keyrings (profile, image->release, error);
      if (keyrings == NULL)
        return NULL;
    }

  if (alpine.url != NULL)
    {
      image->url = g_strdup (alpine.url);
      image->file_name = g_strdup (alpine.file);
      image->sha256 = g_strdup (alpine.sha256);
    }
  else
    {
      const char *vars[] = { "version", image->version, NULL };

      url = gl_profile_expand_full (profile, profile->url, machine, image->release, vars);
      if (checksum_url != NULL)
        {
          /* (fedora: the images are beside the CHECKSUM found) */
          g_free (url);
          url = url_dir (checksum_url);
        }
      if (profile->checksum != NULL)
        {
          image->url = g_steal_pointer (&url);
          image->file_name = url_file_name (image->url);
          image->sha256 = g_ascii_strdown (profile->checksum + strlen ("sha256:"), -1);
        }
      else
        {
          if (checksum_url == NULL)
            checksum_url = gl_profile_expand_full (profile, profile->checksum_url, machine, image->release, vars);
          list = fetch_checksum_list (profile, checksum_url, machine, image->release, cancellable, error);
          if (list == NULL)
            {
              g_prefix_error (error, "Cannot fetch the checksum list of profile “%s”: ", profile->name);
              return NULL;
            }
          if (profile->file_pattern != NULL)
            {
              g_autofree char *pattern = gl_profile_expand_full (profile, profile->file_pattern, machine,
                                                                 image->release, vars);
              g_autoptr(GPatternSpec) spec = g_pattern_spec_new (pattern);
              g_auto(GStrv) names = gl_checksum_list_names (list);

              for (guint i = 0; names[i] != NULL; i++)
                if (g_pattern_spec_match_string (spec, names[i]) &&
                    (image->file_name == NULL || strverscmp (names[i], image->file_name) > 0))
                  {
                    g_free (image->file_name);
                    image->file_name = g_strdup (names[i]);
                  }
              if (image->file_name == NULL)
                {
                  g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                               "No file matching “%s” in the checksum list %s; the profile %s may be out of date",
                               pattern, checksum_url, profile->path);
                  return NULL;
                }
              image->url = g_strconcat (url, image->file_name, NULL);
            }
          else
            {
              image->url = g_steal_pointer (&url);
              image->file_name = url_file_name (image->url);
            }
          image->sha256 = gl_checksum_find_in_list (list, image->file_name, error);
          if (image->sha256 == NULL)
            {
              g_prefix_error (error, "%s: ", checksum_url);
              return NULL;
            }
        }
    }

  if (profile->signature != NULL && g_str_equal (profile->signature, "file"))
    {
      const char *vars[] = { "file", image->file_name, "url", image->url, "version", image->version, NULL };
      image->signature_url = gl_profile_expand_full (profile, profile->signature_url, machine,
                                                     image->release, vars);
    }
  image->checked = describe_checks (profile, image, alpine.index_url ? alpine.index_url : checksum_url);
  return g_steal_pointer (&image);
}
