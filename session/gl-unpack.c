/* gl-unpack.c: unpacking root file system tarballs with GNU tar
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-unpack.h"
#include "gl-spawn.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

G_DEFINE_QUARK (gl-unpack-error-quark, gl_unpack_error)

typedef struct {
  const char *name;     /* for messages */
  const char *tar_flag; /* NULL: plain tar, or let tar find out */
  const char *program;  /* the helper tar runs, NULL if none */
  const char *package;  /* the Debian package with it */
} GlCompression;

static const GlCompression compression_none = { "uncompressed", NULL, NULL, NULL };
static const GlCompression compression_gzip = { "gzip", "--gzip", "gzip", "gzip" };
static const GlCompression compression_bzip2 = { "bzip2", "--bzip2", "bzip2", "bzip2" };
static const GlCompression compression_xz = { "xz", "--xz", "xz", "xz-utils" };
static const GlCompression compression_zstd = { "zstd", "--zstd", "zstd", "zstd" };

static const GlCompression *
detect_compression (const char *archive_path, GCancellable *cancellable, GError **error)
{
  g_autoptr(GFile) file = g_file_new_for_path (archive_path);
  g_autoptr(GFileInputStream) in = NULL;
  guint8 magic[6] = { 0 };
  gsize n = 0;

  in = g_file_read (file, cancellable, error);
  if (in == NULL)
    return NULL;
  if (!g_input_stream_read_all (G_INPUT_STREAM (in), magic, sizeof magic, &n, cancellable, error))
    {
      g_prefix_error (error, "Cannot read %s: ", archive_path);
      return NULL;
    }

  if (n >= 2 && magic[0] == 0x1f && magic[1] == 0x8b)
    return &compression_gzip;
  if (n >= 3 && memcmp (magic, "BZh", 3) == 0)
    return &compression_bzip2;
  if (n >= 6 && memcmp (magic, "\xfd" "7zXZ\0", 6) == 0)
    return &compression_xz;
  if (n >= 4 && memcmp (magic, "\x28\xb5\x2f\xfd", 4) == 0)
    return &compression_zstd;
  return &compression_none;
}

static gboolean
dir_is_empty (const char *dest_dir, GError **error)
{
  g_autoptr(GDir) dir = g_dir_open (dest_dir, 0, error);

  if (dir == NULL)
    {
      g_prefix_error (error, "Cannot unpack into %s: ", dest_dir);
      return FALSE;
    }
  if (g_dir_read_name (dir) != NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_EMPTY,
                   "Cannot unpack into %s: the directory is not empty", dest_dir);
      return FALSE;
    }
  return TRUE;
}

/* Runs tar with argv; returns its stdout, or NULL with an error quoting
 * its stderr.  what ("Reading X", "Unpacking X into D") starts messages. */
static char *
run_tar (const char *const *argv, const char *archive_path, const char *what,
         GCancellable *cancellable, GError **error)
{
  /* Names are bytes; keep tar from transcoding or quoting them. */
  const char *setenv[] = { "LC_ALL", "C.UTF-8", NULL };
  GlSpawnOptions options = { .output = GL_SPAWN_OUTPUT_CAPTURE, .setenv = setenv };
  g_auto(GlSpawnResult) result = { 0 };
  g_autoptr(GError) local_error = NULL;
  g_autofree char *err = NULL;
  gsize len = 0;
  const char *data;

  if (!gl_spawn_run (argv, &options, &result, cancellable, &local_error)
      && !g_error_matches (local_error, GL_SPAWN_ERROR, GL_SPAWN_ERROR_FAILED))
    {
      if (g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED,
                     "Unpacking %s cancelled", archive_path);
      else
        g_set_error (error, GL_UNPACK_ERROR, GL_UNPACK_ERROR_FAILED,
                     "%s failed: %s", what, local_error->message);
      return NULL;
    }

  data = g_bytes_get_data (result.err, &len);
  err = g_utf8_make_valid (data != NULL ? data : "", (gssize) len);
  if (local_error != NULL)
    {
      g_set_error (error, GL_UNPACK_ERROR, GL_UNPACK_ERROR_FAILED,
                   "%s failed; the archive may be corrupt, truncated or unsafe: delete it and rerun "
                   "to download it again. tar said: %s",
                   what, *err != '\0' ? g_strstrip (err) : "(nothing)");
      return NULL;
    }
  if (*err != '\0')
    g_debug ("tar on %s: %s", archive_path, err);

  data = g_bytes_get_data (result.out, &len);
  return g_strndup (data != NULL ? data : "", len);
}

static gboolean
check_member_names (const char *listing, const char *archive_path, GError **error)
{
  g_auto(GStrv) names = g_strsplit (listing, "\n", -1);
  gsize i;

  for (i = 0; names[i] != NULL; i++)
    {
      const char *name = names[i];
      g_auto(GStrv) parts = NULL;
      gsize j;

      if (*name == '\0')
        continue;
      if (name[0] == '/')
        {
          g_set_error (error, GL_UNPACK_ERROR, GL_UNPACK_ERROR_UNSAFE,
                       "Refusing to unpack %s: the member “%s” has an absolute path; "
                       "the archive is not a root file system tarball or was tampered with",
                       archive_path, name);
          return FALSE;
        }
      parts = g_strsplit (name, "/", -1);
      for (j = 0; parts[j] != NULL; j++)
        if (g_str_equal (parts[j], ".."))
          {
            g_set_error (error, GL_UNPACK_ERROR, GL_UNPACK_ERROR_UNSAFE,
                         "Refusing to unpack %s: the member “%s” points outside the "
                         "archive with '..'; the archive was tampered with",
                         archive_path, name);
            return FALSE;
          }
    }

  return TRUE;
}

gboolean
gl_unpack_archive_strip (const char    *archive_path,
                         const char    *dest_dir,
                         guint          strip_components,
                         GCancellable  *cancellable,
                         GError       **error)
{
  const GlCompression *compression;
  g_autofree char *tar = NULL;
  g_autofree char *listing = NULL;
  g_autofree char *strip = NULL;
  g_autofree char *output = NULL;
  g_autofree char *what = NULL;
  g_autoptr(GPtrArray) argv = NULL;

  g_return_val_if_fail (archive_path != NULL, FALSE);
  g_return_val_if_fail (dest_dir != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!dir_is_empty (dest_dir, error))
    return FALSE;

  compression = detect_compression (archive_path, cancellable, error);
  if (compression == NULL)
    return FALSE;

  tar = g_find_program_in_path ("tar");
  if (tar == NULL)
    {
      g_set_error (error, GL_UNPACK_ERROR, GL_UNPACK_ERROR_MISSING_TOOL,
                   "Cannot unpack %s: tar is not installed; install it (apt install tar) and rerun",
                   archive_path);
      return FALSE;
    }
  if (compression->program != NULL)
    {
      g_autofree char *helper = g_find_program_in_path (compression->program);

      if (helper == NULL)
        {
          g_set_error (error, GL_UNPACK_ERROR, GL_UNPACK_ERROR_MISSING_TOOL,
                       "Cannot unpack %s: it is compressed with %s, but the %s program is "
                       "not installed; install %s (apt install %s) and rerun",
                       archive_path, compression->name, compression->program,
                       compression->package, compression->package);
          return FALSE;
        }
    }

  /* First pass: list the raw member names and refuse unsafe ones before
   * anything is written.  GNU tar would also strip them, but silently. */
  argv = g_ptr_array_new ();
  g_ptr_array_add (argv, (char *) "tar");
  g_ptr_array_add (argv, (char *) "--list");
  g_ptr_array_add (argv, (char *) "--absolute-names");
  g_ptr_array_add (argv, (char *) "--quoting-style=literal");
  if (compression->tar_flag != NULL)
    g_ptr_array_add (argv, (char *) compression->tar_flag);
  g_ptr_array_add (argv, (char *) "--file");
  g_ptr_array_add (argv, (char *) archive_path);
  g_ptr_array_add (argv, NULL);

  what = g_strdup_printf ("Reading %s", archive_path);
  listing = run_tar ((const char *const *) argv->pdata, archive_path, what,
                     cancellable, error);
  if (listing == NULL)
    return FALSE;
  if (!check_member_names (listing, archive_path, error))
    return FALSE;

  g_ptr_array_set_size (argv, 0);
  g_ptr_array_add (argv, (char *) "tar");
  g_ptr_array_add (argv, (char *) "--extract");
  g_ptr_array_add (argv, (char *) "--numeric-owner");
  g_ptr_array_add (argv, (char *) "--preserve-permissions");
  g_ptr_array_add (argv, (char *) "--xattrs");
  g_ptr_array_add (argv, (char *) "--xattrs-include=*");
  g_ptr_array_add (argv, (char *) (geteuid () == 0 ? "--same-owner" : "--no-same-owner"));
  g_ptr_array_add (argv, (char *) "--delay-directory-restore");
  /* the top keeps the caller's owner and mode (private until the tree is
   * defanged), whatever the archive's "./" says */
  g_ptr_array_add (argv, (char *) "--no-overwrite-dir");
  if (strip_components > 0)
    {
      strip = g_strdup_printf ("--strip-components=%u", strip_components);
      g_ptr_array_add (argv, strip);
    }
  if (compression->tar_flag != NULL)
    g_ptr_array_add (argv, (char *) compression->tar_flag);
  g_ptr_array_add (argv, (char *) "--file");
  g_ptr_array_add (argv, (char *) archive_path);
  g_ptr_array_add (argv, (char *) "--directory");
  g_ptr_array_add (argv, (char *) dest_dir);
  g_ptr_array_add (argv, NULL);

  g_debug ("unpacking %s (%s) into %s", archive_path, compression->name, dest_dir);
  g_free (what);
  what = g_strdup_printf ("Unpacking %s into %s", archive_path, dest_dir);
  output = run_tar ((const char *const *) argv->pdata, archive_path, what,
                    cancellable, error);
  if (output == NULL)
    return FALSE;

  return TRUE;
}

gboolean
gl_unpack_archive (const char    *archive_path,
                   const char    *dest_dir,
                   GCancellable  *cancellable,
                   GError       **error)
{
  return gl_unpack_archive_strip (archive_path, dest_dir, 0, cancellable, error);
}
