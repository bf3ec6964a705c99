/* gl-gpgv.c: checking OpenPGP signatures with gpgv, against given keyrings
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-gpgv.h"

#include <glib/gstdio.h>

#include "gl-apt-release.h"
#include "gl-fsutil.h"
#include "gl-spawn.h"

G_DEFINE_QUARK (gl-gpgv-error-quark, gl_gpgv_error)

void
gl_gpgv_args_clear (GlGpgvArgs *args)
{
  if (args->dir != NULL)
    gl_rm_rf (args->dir, NULL, NULL);
  g_clear_pointer (&args->dir, g_free);
  g_clear_pointer (&args->argv, g_ptr_array_unref);
}

/* Writes the keyring @data (binary or armored), the @i-th, into the
 * directory as gpgv will read it, and adds it to the command line. */
static gboolean
add_keyring (GlGpgvArgs *args, guint i, const char *name, GBytes *data, GError **error)
{
  gsize len = 0;
  const char *contents = g_bytes_get_data (data, &len);
  g_autofree char *file = g_strdup_printf ("keyring-%u.gpg", i);
  g_autofree char *path = g_build_filename (args->dir, file, NULL);
  g_autoptr(GBytes) binary = NULL;
  g_autoptr(GError) local_error = NULL;

  if (contents != NULL &&
      g_strstr_len (contents, MIN (len, 4096), "-----BEGIN PGP PUBLIC KEY BLOCK-----") != NULL)
    binary = gl_apt_dearmor (contents, len, &local_error);
  else
    binary = g_bytes_ref (data);
  if (binary == NULL ||
      !g_file_set_contents_full (path, g_bytes_get_data (binary, NULL), g_bytes_get_size (binary),
                                 G_FILE_SET_CONTENTS_NONE, 0600, &local_error))
    {
      g_set_error (error, GL_GPGV_ERROR, GL_GPGV_ERROR_KEYRING, "the keyring %s: %s", name,
                   local_error->message);
      return FALSE;
    }
  g_ptr_array_add (args->argv, g_strdup ("--keyring"));
  g_ptr_array_add (args->argv, g_steal_pointer (&path));
  return TRUE;
}

gboolean
gl_gpgv_args_init (GlGpgvArgs          *args,
                   const char * const  *paths,
                   GPtrArray           *keyrings,
                   GError             **error)
{
  guint n = 0;

  args->argv = g_ptr_array_new_with_free_func (g_free);
  args->dir = g_dir_make_tmp ("glimpse-gpgv-XXXXXX", error);
  if (args->dir == NULL)
    return FALSE;
  g_ptr_array_add (args->argv, g_strdup ("gpgv"));
  g_ptr_array_add (args->argv, g_strdup ("--homedir"));
  g_ptr_array_add (args->argv, g_strdup (args->dir));
  g_ptr_array_add (args->argv, g_strdup ("--quiet"));
  g_ptr_array_add (args->argv, g_strdup ("--status-fd"));
  g_ptr_array_add (args->argv, g_strdup ("2"));
  for (guint i = 0; paths != NULL && paths[i] != NULL; i++)
    {
      g_autofree char *contents = NULL;
      g_autoptr(GBytes) data = NULL;
      g_autoptr(GError) local_error = NULL;
      gsize len = 0;

      if (!g_file_get_contents (paths[i], &contents, &len, &local_error))
        {
          g_set_error (error, GL_GPGV_ERROR, GL_GPGV_ERROR_KEYRING, "cannot read the keyring %s: %s",
                       paths[i], local_error->message);
          return FALSE;
        }
      data = g_bytes_new_take (g_steal_pointer (&contents), len);
      if (!add_keyring (args, n++, paths[i], data, error))
        return FALSE;
    }
  for (guint i = 0; keyrings != NULL && i < keyrings->len; i++)
    {
      const GlAptKeyring *k = keyrings->pdata[i];

      if (!add_keyring (args, n++, k->name, k->data, error))
        return FALSE;
    }
  if (n == 0)
    {
      g_set_error (error, GL_GPGV_ERROR, GL_GPGV_ERROR_KEYRING, "no keyring to check it against");
      return FALSE;
    }
  return TRUE;
}

static gboolean
fingerprint_matches (char **fields, const char * const *fingerprints)
{
  guint n = g_strv_length (fields);

  for (guint k = 0; fingerprints[k] != NULL; k++)
    {
      g_autofree char *want = g_ascii_strup (fingerprints[k], -1);

      /* VALIDSIG <key fpr> … <primary key fpr> (the last field) */
      if ((n > 1 && g_ascii_strcasecmp (fields[1], want) == 0) ||
          (n >= 11 && g_ascii_strcasecmp (fields[n - 1], want) == 0))
        return TRUE;
    }
  return FALSE;
}

/* Runs gpgv with @args after the common ones; reads its verdict from the
 * status lines.  @out receives its stdout. */
static gboolean
run_gpgv (GPtrArray *argv, const char * const *fingerprints, const char *what,
          GBytes **out, GCancellable *cancellable, GError **error)
{
  GlSpawnOptions options = { .output = GL_SPAWN_OUTPUT_CAPTURE };
  g_auto(GlSpawnResult) result = { 0 };
  g_autoptr(GError) local_error = NULL;
  g_autofree char *status = NULL;
  g_autofree char *valid_key = NULL;
  g_autofree char *bad = NULL;
  g_auto(GStrv) lines = NULL;
  gboolean valid = FALSE, right_key = (fingerprints == NULL || fingerprints[0] == NULL);
  gboolean ran;

  g_ptr_array_add (argv, NULL);
  ran = gl_spawn_run ((const char * const *) argv->pdata, &options, &result, cancellable, &local_error);
  if (!ran && !g_error_matches (local_error, GL_SPAWN_ERROR, GL_SPAWN_ERROR_FAILED))
    {
      if (g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_propagate_error (error, g_steal_pointer (&local_error));
      else
        g_set_error (error, GL_GPGV_ERROR, GL_GPGV_ERROR_NOT_INSTALLED,
                     "Cannot check the signature of %s: %s; install gpgv (apt install gpgv)",
                     what, local_error->message);
      return FALSE;
    }
  status = g_strndup (g_bytes_get_data (result.err, NULL), g_bytes_get_size (result.err));
  lines = g_strsplit (status, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      const char *l = lines[i];

      if (!g_str_has_prefix (l, "[GNUPG:] "))
        continue;
      l += strlen ("[GNUPG:] ");
      if (g_str_has_prefix (l, "VALIDSIG "))
        {
          g_auto(GStrv) fields = g_strsplit (l, " ", -1);

          valid = TRUE;
          g_free (valid_key);
          valid_key = g_strdup (fields[g_strv_length (fields) - 1]);
          if (!right_key)
            right_key = fingerprint_matches (fields, fingerprints);
        }
      else if (g_str_has_prefix (l, "BADSIG") || g_str_has_prefix (l, "ERRSIG") ||
               g_str_has_prefix (l, "EXPSIG") || g_str_has_prefix (l, "EXPKEYSIG") ||
               g_str_has_prefix (l, "REVKEYSIG") || g_str_has_prefix (l, "NO_PUBKEY") ||
               g_str_has_prefix (l, "NODATA"))
        {
          if (bad == NULL)
            bad = g_strdup (l);
        }
    }
  if (!ran || !valid || bad != NULL)
    {
      g_set_error (error, GL_GPGV_ERROR, GL_GPGV_ERROR_BAD_SIGNATURE,
                   "The signature of %s does not verify (%s): the file is damaged, was "
                   "tampered with, or was signed by a key not in the profile's keyring",
                   what, bad != NULL ? bad : "gpgv found no good signature");
      return FALSE;
    }
  if (!right_key)
    {
      g_autofree char *want = g_strjoinv (", ", (char **) fingerprints);
      g_set_error (error, GL_GPGV_ERROR, GL_GPGV_ERROR_WRONG_KEY,
                   "%s is signed by key %s, not by the key the profile names (SignedBy=%s)",
                   what, valid_key, want);
      return FALSE;
    }
  if (out != NULL)
    *out = g_bytes_ref (result.out);
  return TRUE;
}

/* gpgv's command line with @keyrings, or FALSE with a message naming @what */
static gboolean
args_init (GlGpgvArgs *args, const char * const *keyrings, const char *what, GError **error)
{
  if (gl_gpgv_args_init (args, keyrings, NULL, error))
    return TRUE;
  g_prefix_error (error, "Cannot check the signature of %s: ", what);
  return FALSE;
}

gboolean
gl_gpgv_verify_detached (const char          *data_path,
                         const char          *signature_path,
                         const char * const  *keyrings,
                         const char * const  *fingerprints,
                         const char          *what,
                         GCancellable        *cancellable,
                         GError             **error)
{
  g_auto(GlGpgvArgs) args = { NULL, NULL };

  if (!args_init (&args, keyrings, what, error))
    return FALSE;
  g_ptr_array_add (args.argv, g_strdup ("--"));
  g_ptr_array_add (args.argv, g_strdup (signature_path));
  g_ptr_array_add (args.argv, g_strdup (data_path));
  return run_gpgv (args.argv, fingerprints, what, NULL, cancellable, error);
}

GBytes *
gl_gpgv_verify_clearsigned (GBytes              *data,
                            const char * const  *keyrings,
                            const char * const  *fingerprints,
                            const char          *what,
                            GCancellable        *cancellable,
                            GError             **error)
{
  g_auto(GlGpgvArgs) args = { NULL, NULL };
  g_autofree char *input = NULL;
  GBytes *out = NULL;

  if (!args_init (&args, keyrings, what, error))
    return NULL;
  input = g_build_filename (args.dir, "signed", NULL);
  if (!g_file_set_contents_full (input, g_bytes_get_data (data, NULL), g_bytes_get_size (data),
                                 G_FILE_SET_CONTENTS_NONE, 0600, error))
    return NULL;
  g_ptr_array_add (args.argv, g_strdup ("--output"));
  g_ptr_array_add (args.argv, g_strdup ("-"));
  g_ptr_array_add (args.argv, g_strdup ("--"));
  g_ptr_array_add (args.argv, g_strdup (input));
  if (!run_gpgv (args.argv, fingerprints, what, &out, cancellable, error))
    return NULL;
  return out;
}
