/* gl-profile.c: distribution profiles
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-profile.h"
#include "gl-fsutil.h"
#include "gl-repo.h"

#include <sys/utsname.h>

G_DEFINE_QUARK (gl-profile-error-quark, gl_profile_error)

static const char * const known_families[] = { "apt", "dnf", "pacman", "apk", NULL };
static const char * const known_groups[] = { "Profile", "Base", "Packages", "Hooks", "Tweaks", NULL };

static void
profile_repo_free (GlProfileRepo *repo)
{
  g_free (repo->name);
  g_free (repo->source);
  g_free (repo->key);
  g_free (repo);
}

void
gl_profile_free (GlProfile *profile)
{
  if (profile == NULL)
    return;
  g_free (profile->name);
  g_free (profile->path);
  g_free (profile->display_name);
  g_free (profile->description);
  g_free (profile->family);
  g_free (profile->release);
  g_strfreev (profile->architectures);
  g_free (profile->channel);
  g_free (profile->channel_url);
  g_free (profile->archive_url);
  g_free (profile->signature);
  g_free (profile->signature_url);
  g_strfreev (profile->signed_by);
  g_strfreev (profile->keyrings);
  g_free (profile->url);
  g_free (profile->file_pattern);
  g_free (profile->checksum);
  g_free (profile->checksum_url);
  g_free (profile->bootstrap_tool);
  g_free (profile->suite);
  g_free (profile->mirror);
  g_strfreev (profile->include);
  g_clear_pointer (&profile->repositories, g_ptr_array_unref);
  g_strfreev (profile->launchers);
  g_free (profile->cmd_refresh);
  g_free (profile->cmd_upgrade);
  g_free (profile->cmd_install);
  g_free (profile->cmd_list_upgradable);
  g_strfreev (profile->hooks_post_create);
  g_clear_pointer (&profile->tweaks, g_hash_table_unref);
  g_free (profile);
}

const char *
gl_profile_base_type_to_string (GlProfileBaseType type)
{
  switch (type)
    {
    case GL_PROFILE_BASE_HOST:
      return "host";
    case GL_PROFILE_BASE_TARBALL:
      return "tarball";
    case GL_PROFILE_BASE_BOOTSTRAP:
      return "bootstrap";
    default:
      g_assert_not_reached ();
    }
}

/* The 1-based line of "key=" inside [group] of data, or 0. */
static guint
find_line (const char *data, const char *group, const char *key)
{
  g_auto(GStrv) lines = g_strsplit (data, "\n", -1);
  g_autofree char *header = g_strdup_printf ("[%s]", group);
  gboolean in_group = FALSE;
  guint group_line = 0;

  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_autofree char *line = g_strstrip (g_strdup (lines[i]));

      if (line[0] == '[')
        {
          in_group = g_str_equal (line, header);
          if (in_group)
            group_line = i + 1;
          continue;
        }
      if (in_group && key != NULL && g_str_has_prefix (line, key))
        {
          const char *rest = line + strlen (key);
          while (*rest == ' ' || *rest == '\t')
            rest++;
          if (*rest == '=')
            return i + 1;
        }
    }
  return key == NULL ? group_line : 0;
}

typedef struct {
  const char *path;
  const char *data;
  GKeyFile *kf;
} Parser;

G_GNUC_PRINTF (5, 6) static gboolean
fail (Parser *p, GError **error, const char *group, const char *key, const char *format, ...)
{
  va_list args;
  g_autofree char *msg = NULL;
  guint line = find_line (p->data, group, key);

  va_start (args, format);
  msg = g_strdup_vprintf (format, args);
  va_end (args);

  g_autofree char *where = line > 0 ? g_strdup_printf ("%s:%u", p->path, line) : g_strdup (p->path);

  if (key != NULL)
    g_set_error (error, GL_PROFILE_ERROR, GL_PROFILE_ERROR_MALFORMED,
                 "%s: [%s] %s: %s", where, group, key, msg);
  else
    g_set_error (error, GL_PROFILE_ERROR, GL_PROFILE_ERROR_MALFORMED,
                 "%s: [%s]: %s", where, group, msg);
  return FALSE;
}

/* A string key; required keys fail when missing or empty. */
static gboolean
get_string (Parser *p, const char *group, const char *key, gboolean required,
            char **out, GError **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autofree char *value = NULL;

  if (!g_key_file_has_key (p->kf, group, key, NULL))
    {
      if (required)
        return fail (p, error, group, key, "required key is missing; add “%s=…” to the [%s] group",
                     key, group);
      *out = NULL;
      return TRUE;
    }
  value = g_key_file_get_locale_string (p->kf, group, key, NULL, &local_error);
  if (value == NULL)
    return fail (p, error, group, key, "%s", local_error->message);
  g_strstrip (value);
  if (required && *value == '\0')
    return fail (p, error, group, key, "must not be empty");
  *out = g_steal_pointer (&value);
  return TRUE;
}

static gboolean
get_list (Parser *p, const char *group, const char *key, char ***out, GError **error)
{
  g_autoptr(GError) local_error = NULL;
  g_auto(GStrv) value = NULL;

  if (!g_key_file_has_key (p->kf, group, key, NULL))
    {
      *out = g_new0 (char *, 1);
      return TRUE;
    }
  value = g_key_file_get_string_list (p->kf, group, key, NULL, &local_error);
  if (value == NULL)
    return fail (p, error, group, key, "%s", local_error->message);
  *out = g_steal_pointer (&value);
  return TRUE;
}

static gboolean
parse_base (Parser *p, GlProfile *profile, GError **error)
{
  g_autofree char *type = NULL;
  g_autofree char *strip = NULL;
  g_autofree char *format = NULL;

  if (!g_key_file_has_group (p->kf, "Base"))
    return fail (p, error, "Base", NULL, "the [Base] group is missing; add one with “Type=host”, "
                 "“Type=tarball” or “Type=bootstrap”");
  if (!get_string (p, "Base", "Type", TRUE, &type, error))
    return FALSE;

  if (g_str_equal (type, "host"))
    profile->base_type = GL_PROFILE_BASE_HOST;
  else if (g_str_equal (type, "tarball"))
    profile->base_type = GL_PROFILE_BASE_TARBALL;
  else if (g_str_equal (type, "bootstrap"))
    profile->base_type = GL_PROFILE_BASE_BOOTSTRAP;
  else
    return fail (p, error, "Base", "Type", "unknown base type “%s”; use host, tarball or bootstrap", type);
  /* mmdebstrap builds a Debian-style tree: an apt sandbox's */
  if (profile->base_type == GL_PROFILE_BASE_BOOTSTRAP && !g_str_equal (profile->family, "apt"))
    return fail (p, error, "Base", "Type", "a bootstrap base is a Debian-style tree built by mmdebstrap, "
                 "for Family=apt only; a %s profile needs Type=tarball (or host)", profile->family);

  if (!get_string (p, "Base", "Url", profile->base_type == GL_PROFILE_BASE_TARBALL, &profile->url, error) ||
      !get_string (p, "Base", "FilePattern", FALSE, &profile->file_pattern, error) ||
      !get_string (p, "Base", "Checksum", FALSE, &profile->checksum, error) ||
      !get_string (p, "Base", "ChecksumUrl", FALSE, &profile->checksum_url, error) ||
      !get_string (p, "Base", "StripComponents", FALSE, &strip, error) ||
      !get_string (p, "Base", "Format", FALSE, &format, error) ||
      !get_string (p, "Base", "Tool", FALSE, &profile->bootstrap_tool, error) ||
      !get_string (p, "Base", "Suite", profile->base_type == GL_PROFILE_BASE_BOOTSTRAP, &profile->suite, error) ||
      !get_string (p, "Base", "Mirror", FALSE, &profile->mirror, error) ||
      !get_list (p, "Base", "Include", &profile->include, error) ||
      !get_string (p, "Base", "Channel", FALSE, &profile->channel, error) ||
      !get_string (p, "Base", "ChannelUrl", FALSE, &profile->channel_url, error) ||
      !get_string (p, "Base", "ArchiveUrl", FALSE, &profile->archive_url, error) ||
      !get_string (p, "Base", "Signature", FALSE, &profile->signature, error) ||
      !get_string (p, "Base", "SignatureUrl", FALSE, &profile->signature_url, error) ||
      !get_list (p, "Base", "SignedBy", &profile->signed_by, error) ||
      !get_list (p, "Base", "Keyring", &profile->keyrings, error))
    return FALSE;

  if (profile->channel != NULL)
    {
      static const char * const channels[] = { "ubuntu-lts", "alpine", "fedora", NULL };

      if (!g_strv_contains (channels, profile->channel))
        return fail (p, error, "Base", "Channel", "unknown channel “%s”; use ubuntu-lts, alpine or fedora",
                     profile->channel);
      if (!g_str_equal (profile->channel, "ubuntu-lts") && profile->channel_url == NULL)
        return fail (p, error, "Base", "ChannelUrl", "channel “%s” needs “ChannelUrl=”", profile->channel);
    }
  if (profile->signature != NULL)
    {
      static const char * const kinds[] = { "checksums", "clearsigned", "file", NULL };

      if (!g_strv_contains (kinds, profile->signature))
        return fail (p, error, "Base", "Signature", "“%s” is not known; use checksums (a detached "
                     "signature of the checksum list), clearsigned (a clear-signed list) or file "
                     "(a detached signature of the image)", profile->signature);
      if (profile->keyrings[0] == NULL)
        return fail (p, error, "Base", "Keyring", "a signed base needs “Keyring=” (the keyring "
                     "files to check the signature against)");
      if (!g_str_equal (profile->signature, "clearsigned") && profile->signature_url == NULL)
        return fail (p, error, "Base", "SignatureUrl", "“Signature=%s” needs “SignatureUrl=”",
                     profile->signature);
      if (!g_str_equal (profile->signature, "file") && profile->checksum_url == NULL)
        return fail (p, error, "Base", "ChecksumUrl", "“Signature=%s” signs the checksum list: "
                     "it needs “ChecksumUrl=”", profile->signature);
    }
  for (guint i = 0; profile->signed_by[i] != NULL; i++)
    {
      gsize n = strlen (profile->signed_by[i]);
      if (n != 40 || strspn (profile->signed_by[i], "0123456789abcdefABCDEF") != n)
        return fail (p, error, "Base", "SignedBy", "“%s” is not a key fingerprint (40 hex digits)",
                     profile->signed_by[i]);
    }

  if (profile->base_type == GL_PROFILE_BASE_TARBALL)
    {
      if (profile->checksum == NULL && profile->checksum_url == NULL &&
          g_strcmp0 (profile->channel, "alpine") != 0)
        return fail (p, error, "Base", "Url", "a tarball base needs “Checksum=sha256:…” or "
                     "“ChecksumUrl=…” (or “Channel=alpine”, whose index has the sum) so the "
                     "download can be verified");
      if (profile->file_pattern != NULL && profile->checksum_url == NULL)
        return fail (p, error, "Base", "FilePattern", "needs “ChecksumUrl=”: the file name is "
                     "taken from the checksum list");
      if (profile->file_pattern != NULL && !g_str_has_suffix (profile->url, "/"))
        return fail (p, error, "Base", "Url", "with FilePattern, Url must be a directory ending in “/”");
    }
  if (profile->checksum != NULL)
    {
      const char *hex = profile->checksum + strlen ("sha256:");
      gsize len;

      if (!g_str_has_prefix (profile->checksum, "sha256:"))
        return fail (p, error, "Base", "Checksum", "must start with “sha256:”");
      len = strlen (hex);
      if (len != 64)
        return fail (p, error, "Base", "Checksum", "a SHA-256 sum has 64 hex digits, this has %zu", len);
      for (gsize i = 0; i < len; i++)
        if (!g_ascii_isxdigit (hex[i]))
          return fail (p, error, "Base", "Checksum", "“%c” is not a hex digit", hex[i]);
    }
  if (strip != NULL)
    {
      guint64 n;
      if (!g_ascii_string_to_unsigned (strip, 10, 0, 16, &n, NULL))
        return fail (p, error, "Base", "StripComponents", "“%s” is not a number from 0 to 16", strip);
      profile->strip_components = n;
    }
  if (format != NULL)
    {
      if (g_str_equal (format, "oci"))
        profile->oci = TRUE;
      else if (!g_str_equal (format, "tar"))
        return fail (p, error, "Base", "Format", "“%s” is not a known format; use tar or oci", format);
    }
  if (profile->bootstrap_tool != NULL &&
      !g_str_equal (profile->bootstrap_tool, "mmdebstrap") &&
      !g_str_equal (profile->bootstrap_tool, "debootstrap"))
    return fail (p, error, "Base", "Tool", "“%s” is not supported; use mmdebstrap or debootstrap",
                 profile->bootstrap_tool);
  return TRUE;
}

/* A relative file name of a profile is taken from the profile's directory. */
static char *
beside_profile (GlProfile *profile, const char *name)
{
  g_autofree char *dir = NULL;

  if (g_path_is_absolute (name))
    return g_strdup (name);
  dir = g_path_get_dirname (profile->path);
  return g_build_filename (dir, name, NULL);
}

/* [Repository NAME] groups: what glimpse add-repo would be given. */
static gboolean
parse_repositories (Parser *p, GlProfile *profile, const char * const *groups, GError **error)
{
  profile->repositories = g_ptr_array_new_with_free_func ((GDestroyNotify) profile_repo_free);
  if (g_key_file_has_key (p->kf, "Profile", "Repositories", NULL))
    return fail (p, error, "Profile", "Repositories", "is replaced by one [Repository NAME] group "
                 "per repository, with Source= (a “deb URI SUITE COMPONENT…” line, a file holding "
                 "one, or ppa:OWNER/NAME) and Key= (its signing key: a file or an https address)");
  for (guint i = 0; groups[i] != NULL; i++)
    {
      g_autoptr(GError) local_error = NULL;
      g_autofree char *source = NULL, *key = NULL;
      const char *group = groups[i];
      const char *name = group + strlen ("Repository ");
      GlProfileRepo *repo;

      if (!g_str_has_prefix (group, "Repository "))
        continue;
      if (!gl_repo_name_validate (name, &local_error))
        return fail (p, error, group, NULL, "%s", local_error->message);
      if (!g_str_equal (profile->family, "apt"))
        return fail (p, error, group, NULL, "only an apt profile (Family=apt) can add repositories");
      if (!get_string (p, group, "Source", TRUE, &source, error) ||
          !get_string (p, group, "Key", FALSE, &key, error))
        return FALSE;
      if (g_str_has_prefix (source, "ppa:") && key != NULL)
        return fail (p, error, group, "Key", "a PPA's key comes from Launchpad; remove “Key=”");
      if (!g_str_has_prefix (source, "ppa:") && key == NULL)
        return fail (p, error, group, "Key", "is required: the repository's signing key (a file, "
                     "relative to the profile's directory, or an https address); each repository "
                     "is trusted with its own key only");
      repo = g_new0 (GlProfileRepo, 1);
      repo->name = g_strdup (name);
      if (g_str_has_prefix (source, "deb") || g_str_has_prefix (source, "ppa:"))
        repo->source = g_steal_pointer (&source);
      else
        repo->source = beside_profile (profile, source);
      if (key != NULL && !g_str_has_prefix (key, "https://") && !g_str_has_prefix (key, "http://"))
        repo->key = beside_profile (profile, key);
      else
        repo->key = g_steal_pointer (&key);
      g_ptr_array_add (profile->repositories, repo);
    }
  return TRUE;
}

GlProfile *
gl_profile_load_from_data (const char *name, const char *path,
                           const char *data, gsize length, GError **error)
{
  g_autoptr(GlProfile) profile = g_new0 (GlProfile, 1);
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  g_autoptr(GError) local_error = NULL;
  g_auto(GStrv) groups = NULL;
  g_auto(GStrv) tweak_keys = NULL;
  g_autofree char *text = length == (gsize) -1 ? g_strdup (data) : g_strndup (data, length);
  Parser p = { path, text, kf };

  if (!g_key_file_load_from_data (kf, data, length, G_KEY_FILE_NONE, &local_error))
    {
      guint line = gl_keyfile_bad_line (data, length);
      g_autofree char *where = line ? g_strdup_printf ("%s:%u", path, line) : g_strdup (path);
      g_set_error (error, GL_PROFILE_ERROR, GL_PROFILE_ERROR_MALFORMED,
                   "%s: %s; fix that line or remove the file", where, local_error->message);
      return NULL;
    }

  groups = g_key_file_get_groups (kf, NULL);
  for (guint i = 0; groups[i] != NULL; i++)
    if (!g_strv_contains (known_groups, groups[i]) && !g_str_has_prefix (groups[i], "Repository "))
      {
        fail (&p, error, groups[i], NULL, "unknown group; known groups are [Profile], [Base], "
              "[Packages], [Hooks], [Tweaks] and [Repository NAME]");
        return NULL;
      }

  profile->name = g_strdup (name);
  profile->path = g_strdup (path);
  if (!get_string (&p, "Profile", "Name", TRUE, &profile->display_name, error) ||
      !get_string (&p, "Profile", "Description", FALSE, &profile->description, error) ||
      !get_string (&p, "Profile", "Family", TRUE, &profile->family, error) ||
      !get_string (&p, "Profile", "Release", FALSE, &profile->release, error) ||
      !get_list (&p, "Profile", "Architectures", &profile->architectures, error) ||
      !get_list (&p, "Profile", "Launchers", &profile->launchers, error))
    return NULL;

  if (!g_strv_contains (known_families, profile->family))
    {
      fail (&p, error, "Profile", "Family", "unknown package family “%s”; use apt, dnf, pacman or apk",
            profile->family);
      return NULL;
    }
  for (guint i = 0; profile->launchers[i] != NULL; i++)
    if (!g_str_has_suffix (profile->launchers[i], ".desktop"))
      {
        fail (&p, error, "Profile", "Launchers", "“%s” is not a desktop file id (it must end in .desktop)",
              profile->launchers[i]);
        return NULL;
      }

  if (!parse_base (&p, profile, error))
    return NULL;
  if (!parse_repositories (&p, profile, (const char * const *) groups, error))
    return NULL;

  if (!get_string (&p, "Packages", "Refresh", TRUE, &profile->cmd_refresh, error) ||
      !get_string (&p, "Packages", "Upgrade", TRUE, &profile->cmd_upgrade, error) ||
      !get_string (&p, "Packages", "Install", TRUE, &profile->cmd_install, error) ||
      /* optional, and not run: update checks run the family's own tool
       * (gl-updates-family.c); still read so older profiles keep loading */
      !get_string (&p, "Packages", "ListUpgradable", FALSE, &profile->cmd_list_upgradable, error))
    return NULL;

  if (!get_list (&p, "Hooks", "PostCreate", &profile->hooks_post_create, error))
    return NULL;

  profile->tweaks = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  tweak_keys = g_key_file_get_keys (kf, "Tweaks", NULL, NULL);
  for (guint i = 0; tweak_keys != NULL && tweak_keys[i] != NULL; i++)
    g_hash_table_insert (profile->tweaks, g_strdup (tweak_keys[i]),
                         g_key_file_get_string (kf, "Tweaks", tweak_keys[i], NULL));

  return g_steal_pointer (&profile);
}

GlProfile *
gl_profile_load_file (const char *path, GError **error)
{
  g_autofree char *data = NULL;
  g_autofree char *base = g_path_get_basename (path);
  gsize length;
  g_autoptr(GError) local_error = NULL;

  if (!g_str_has_suffix (base, ".profile"))
    {
      g_set_error (error, GL_PROFILE_ERROR, GL_PROFILE_ERROR_MALFORMED,
                   "%s: a profile's file name must end in .profile", path);
      return NULL;
    }
  base[strlen (base) - strlen (".profile")] = '\0';
  if (!g_file_get_contents (path, &data, &length, &local_error))
    {
      g_set_error (error, GL_PROFILE_ERROR, GL_PROFILE_ERROR_MALFORMED,
                   "Cannot read profile %s: %s", path, local_error->message);
      return NULL;
    }
  return gl_profile_load_from_data (base, path, data, length, error);
}

static gint
compare_profiles (gconstpointer a, gconstpointer b)
{
  const GlProfile *pa = *(const GlProfile * const *) a;
  const GlProfile *pb = *(const GlProfile * const *) b;

  return g_strcmp0 (pa->name, pb->name);
}

GPtrArray *
gl_profile_list (const char * const *search_path, GPtrArray *errors)
{
  g_autoptr(GPtrArray) result = g_ptr_array_new_with_free_func ((GDestroyNotify) gl_profile_free);
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  for (guint i = 0; search_path[i] != NULL; i++)
    {
      g_autoptr(GDir) dir = g_dir_open (search_path[i], 0, NULL);
      g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
      const char *name;

      if (dir == NULL)
        continue;
      while ((name = g_dir_read_name (dir)) != NULL)
        if (g_str_has_suffix (name, ".profile"))
          g_ptr_array_add (names, g_strdup (name));
      g_ptr_array_sort (names, (GCompareFunc) g_strcmp0);

      for (guint j = 0; j < names->len; j++)
        {
          g_autofree char *path = g_build_filename (search_path[i], names->pdata[j], NULL);
          g_autofree char *key = g_strndup (names->pdata[j], strlen (names->pdata[j]) - strlen (".profile"));
          g_autoptr(GError) local_error = NULL;
          GlProfile *profile;

          if (g_hash_table_contains (seen, key))
            continue;  /* overridden by a directory earlier in the path */
          g_hash_table_add (seen, g_strdup (key));
          profile = gl_profile_load_file (path, &local_error);
          if (profile == NULL)
            {
              g_debug ("%s", local_error->message);
              if (errors != NULL)
                g_ptr_array_add (errors, g_steal_pointer (&local_error));
              continue;
            }
          g_ptr_array_add (result, profile);
        }
    }

  g_ptr_array_sort (result, compare_profiles);
  return g_steal_pointer (&result);
}

GlProfile *
gl_profile_find (const char * const *search_path, const char *name, GError **error)
{
  g_autofree char *file = NULL;

  if (name == NULL || *name == '\0' || strchr (name, '/') != NULL || name[0] == '.')
    {
      g_set_error (error, GL_PROFILE_ERROR, GL_PROFILE_ERROR_NOT_FOUND,
                   "“%s” is not a profile name; “glimpse profiles” lists them", name ? name : "");
      return NULL;
    }
  file = g_strconcat (name, ".profile", NULL);
  for (guint i = 0; search_path[i] != NULL; i++)
    {
      g_autofree char *path = g_build_filename (search_path[i], file, NULL);

      if (g_file_test (path, G_FILE_TEST_EXISTS))
        return gl_profile_load_file (path, error);
    }

  g_set_error (error, GL_PROFILE_ERROR, GL_PROFILE_ERROR_NOT_FOUND,
               "No profile “%s”; “glimpse profiles” lists them", name);
  return NULL;
}

/* The machine names of each family: the kernel's (uname -m) → the
 * distribution's, as their download trees and package managers spell it. */
static const struct {
  const char *family;
  const char *machine;
  const char *name;
} family_arch[] = {
  { "apt", "x86_64", "amd64" }, { "apt", "aarch64", "arm64" }, { "apt", "i686", "i386" },
  { "apt", "i386", "i386" }, { "apt", "armv7l", "armhf" }, { "apt", "ppc64le", "ppc64el" },
  { "apt", "s390x", "s390x" }, { "apt", "riscv64", "riscv64" },
  { "apk", "x86_64", "x86_64" }, { "apk", "aarch64", "aarch64" }, { "apk", "armv7l", "armv7" },
  { "apk", "armv6l", "armhf" }, { "apk", "i686", "x86" }, { "apk", "i386", "x86" },
  { "apk", "ppc64le", "ppc64le" }, { "apk", "s390x", "s390x" }, { "apk", "riscv64", "riscv64" },
  { "dnf", "x86_64", "x86_64" }, { "dnf", "aarch64", "aarch64" }, { "dnf", "ppc64le", "ppc64le" },
  { "dnf", "s390x", "s390x" },
  { "pacman", "x86_64", "x86_64" },
};

char *
gl_profile_follows (const GlProfile *profile, const char *release)
{
  if (profile->base_type != GL_PROFILE_BASE_BOOTSTRAP || g_strcmp0 (profile->suite, release) == 0)
    return NULL;
  return g_strdup (profile->suite);
}

const char *
gl_profile_family_arch (const char *family, const char *machine)
{
  for (gsize i = 0; i < G_N_ELEMENTS (family_arch); i++)
    if (g_str_equal (family, family_arch[i].family) && g_str_equal (machine, family_arch[i].machine))
      return family_arch[i].name;
  return NULL;
}

static const char *
this_machine (void)
{
  static char machine[sizeof ((struct utsname *) NULL)->machine];
  struct utsname u;

  if (machine[0] == '\0')
    g_strlcpy (machine, uname (&u) == 0 ? u.machine : "x86_64", sizeof machine);
  return machine;
}

gboolean
gl_profile_check_machine (GlProfile *profile, const char *machine, GError **error)
{
  const char *name;

  if (machine == NULL)
    machine = this_machine ();
  if (profile->base_type == GL_PROFILE_BASE_HOST)
    return TRUE;
  name = gl_profile_family_arch (profile->family, machine);
  if (name != NULL && (profile->architectures[0] == NULL ||
                       g_strv_contains ((const char * const *) profile->architectures, name)))
    return TRUE;
  {
    g_autofree char *supported = profile->architectures[0] != NULL
                                 ? g_strjoinv (", ", profile->architectures) : NULL;
    g_set_error (error, GL_PROFILE_ERROR, GL_PROFILE_ERROR_UNSUPPORTED,
                 "Profile “%s” has no image for this machine (%s)%s%s", profile->name, machine,
                 supported ? "; it supports " : "", supported ? supported : "");
  }
  return FALSE;
}

char *
gl_profile_expand_full (GlProfile *profile, const char *template_str, const char *machine,
                        const char *release, const char * const *extra)
{
  g_autoptr(GString) s = NULL;
  const char *name;

  if (template_str == NULL)
    return NULL;
  name = gl_profile_family_arch (profile->family, machine);
  s = g_string_new (template_str);
  g_string_replace (s, "{arch}", name != NULL ? name : machine, 0);
  g_string_replace (s, "{uname_arch}", machine, 0);
  g_string_replace (s, "{release}", release != NULL ? release : "", 0);
  for (gsize i = 0; extra != NULL && extra[i] != NULL; i += 2)
    {
      g_autofree char *var = g_strdup_printf ("{%s}", extra[i]);
      g_string_replace (s, var, extra[i + 1] != NULL ? extra[i + 1] : "", 0);
    }
  return g_string_free (g_steal_pointer (&s), FALSE);
}

char *
gl_profile_expand (GlProfile *profile, const char *template_str)
{
  /* a release its channel resolves at creation stays a {release} here */
  return gl_profile_expand_full (profile, template_str, this_machine (),
                                 profile->release != NULL || profile->channel == NULL
                                 ? profile->release : "{release}", NULL);
}
