/* gl-gpgv.h: checking OpenPGP signatures with gpgv, against given keyrings
 *
 * gpgv runs through gl-spawn with a private, empty home directory: only the
 * keyrings named here count, never a user's or root's trust database.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define GL_GPGV_ERROR (gl_gpgv_error_quark ())

typedef enum {
  GL_GPGV_ERROR_BAD_SIGNATURE,  /* missing, damaged, or not made by a key of the keyrings */
  GL_GPGV_ERROR_WRONG_KEY,      /* a good signature, but not by a key SignedBy names */
  GL_GPGV_ERROR_KEYRING,        /* no keyring, or one that cannot be read */
  GL_GPGV_ERROR_NOT_INSTALLED,  /* no gpgv */
} GlGpgvError;

GQuark gl_gpgv_error_quark (void);

/* Checks that @signature_path is a good detached signature (binary or
 * ASCII-armored) of @data_path by a key of @keyrings (binary or armored
 * key files), and, when @fingerprints is not empty, that the key (or its
 * primary key) has one of those fingerprints.  @what names the signed
 * file in messages. */
gboolean gl_gpgv_verify_detached (const char          *data_path,
                                  const char          *signature_path,
                                  const char * const  *keyrings,
                                  const char * const  *fingerprints,
                                  const char          *what,
                                  GCancellable        *cancellable,
                                  GError             **error);

/* Checks the clear-signed @data the same way and returns only the text
 * gpgv vouches for (what is outside the signed part never reaches the
 * caller). */
GBytes  *gl_gpgv_verify_clearsigned (GBytes              *data,
                                     const char * const  *keyrings,
                                     const char * const  *fingerprints,
                                     const char          *what,
                                     GCancellable        *cancellable,
                                     GError             **error);

/* gpgv's command line up to the files it checks, for every caller that
 * checks a signature (here and gl_apt_release_verify): "gpgv --homedir
 * DIR --quiet --status-fd 2 --keyring DIR/keyring-0.gpg …", where DIR is
 * a new private temporary directory (gpgv's empty home) and each keyring
 * is written into it as gpgv is to read it (armored ones dearmored): the
 * key files @paths, read first, then @keyrings (GlAptKeyring, nullable),
 * already read.  The caller may write its input into DIR too.
 * GL_GPGV_ERROR_KEYRING when there is no keyring or one cannot be read,
 * its message naming the keyring. */
typedef struct {
  char      *dir;    /* removed, with everything in it, by gl_gpgv_args_clear */
  GPtrArray *argv;   /* of char *, not NULL-terminated */
} GlGpgvArgs;

gboolean gl_gpgv_args_init  (GlGpgvArgs          *args,
                             const char * const  *paths,
                             GPtrArray           *keyrings,
                             GError             **error);
void     gl_gpgv_args_clear (GlGpgvArgs          *args);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (GlGpgvArgs, gl_gpgv_args_clear)

G_END_DECLS
