/* glimpse-store-cmds.c: glimpse profiles, create, list, info, remove
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "glimpse-store-cmds.h"

#include <pwd.h>
#include <unistd.h>
#include <glib-unix.h>

#include "gl-base-image.h"
#include "gl-gpgv.h"
#include "gl-create.h"
#include "gl-fsutil.h"
#include "gl-paths.h"
#include "gl-apt-sources.h"
#include "gl-profile.h"
#include "gl-spawn.h"
#include "gl-store.h"
#include "gl-export-store.h"
#include "glimpse-progress.h"

/* ---- glimpse profiles ---- */

/* What the profile's base is now: its channel resolved, the image and
 * its sum (the signature of the checksum list checked on the way). */
static void
print_resolution (GlProfile *p)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GlBaseImage) image = NULL;

  if (p->base_type != GL_PROFILE_BASE_TARBALL)
    return;
  image = gl_base_image_resolve (p, NULL, NULL, NULL, &error);
  if (image == NULL)
    {
      if (g_error_matches (error, GL_GPGV_ERROR, GL_GPGV_ERROR_KEYRING))
        g_print ("  Resolves to: cannot check its signature here: %s\n", error->message);
      else
        g_print ("  Resolves to: cannot look it up now (offline?): %s\n", error->message);
      return;
    }
  g_print ("  Resolves to: %s%s%s%s (%s)\n", image->release ? image->release : image->file_name,
           image->version ? " (" : "", image->version ? image->version : "", image->version ? ")" : "",
           image->how);
  g_print ("  Image:       %s\n", image->url);
  g_print ("  SHA-256:     %s\n", image->sha256);
  if (image->signature_url != NULL)
    g_print ("  Signature:   %s (checked after the download)\n", image->signature_url);
  g_print ("  Checked:     %s\n", image->checked);
}

static void
print_profile_verbose (GlProfile *p, gboolean resolve)
{
  g_autofree char *launchers = g_strjoinv (" ", p->launchers);

  g_print ("%s\n", p->name);
  g_print ("  Name:        %s\n", p->display_name);
  if (p->description)
    g_print ("  Description: %s\n", p->description);
  g_print ("  File:        %s\n", p->path);
  g_print ("  Family:      %s\n", p->family);
  if (p->release)
    g_print ("  Release:     %s\n", p->release);
  if (p->architectures[0] != NULL)
    {
      g_autofree char *archs = g_strjoinv (" ", p->architectures);
      g_print ("  Machines:    %s only\n", archs);
    }
  g_print ("  Base:        %s\n", gl_profile_base_type_to_string (p->base_type));
  if (p->base_type == GL_PROFILE_BASE_TARBALL)
    {
      g_autofree char *url = gl_profile_expand (p, p->url);
      g_autofree char *pattern = gl_profile_expand (p, p->file_pattern);
      g_autofree char *checksum_url = gl_profile_expand (p, p->checksum_url);
      g_print ("  Download:    %s%s\n", url, pattern ? pattern : "");
      if (p->channel)
        g_print ("  Channel:     %s%s%s\n", p->channel, p->channel_url ? " " : "",
                 p->channel_url ? p->channel_url : "");
      if (p->checksum)
        g_print ("  Checksum:    %s\n", p->checksum);
      else if (checksum_url != NULL)
        g_print ("  Checksums:   %s\n", checksum_url);
      else
        g_print ("  Checksums:   the sha256 the channel's index names\n");
      if (p->signature)
        {
          g_autofree char *keyrings = g_strjoinv (" ", p->keyrings);
          g_autofree char *signers = g_strjoinv (" ", p->signed_by);
          g_print ("  Signed:      %s%s%s, keyring %s%s%s\n", p->signature,
                   p->signature_url ? " " : "", p->signature_url ? p->signature_url : "",
                   keyrings, *signers ? ", by " : "", signers);
        }
      else if (!p->checksum)
        g_print ("  Signed:      no: the image is checked only by the SHA-256 its own server publishes; "
                 "no signature is verified\n");
      if (resolve)
        print_resolution (p);
    }
  else if (p->base_type == GL_PROFILE_BASE_BOOTSTRAP)
    {
      g_autofree char *mirror = p->mirror ? g_strdup (p->mirror) : gl_apt_sources_find_debian_mirror ("/");
      g_print ("  Bootstrap:   %s %s\n", p->bootstrap_tool ? p->bootstrap_tool : "mmdebstrap",
               p->suite);
      g_print ("  Mirror:      %s\n", mirror ? mirror : "(the tool's default)");
    }
  for (guint i = 0; i < p->repositories->len; i++)
    {
      GlProfileRepo *repo = p->repositories->pdata[i];
      g_print ("  Repository:  %s: %s%s%s\n", repo->name, repo->source, repo->key ? ", key " : "",
               repo->key ? repo->key : "");
    }
  g_print ("  Launchers:   %s\n", *launchers ? launchers : "(every application)");
  g_print ("  Refresh:     %s\n", p->cmd_refresh);
  g_print ("  Upgrade:     %s\n", p->cmd_upgrade);
  g_print ("  Install:     %s PACKAGE…\n", p->cmd_install);
  if (p->cmd_list_upgradable)
    g_print ("  Upgradable:  %s (not used: update checks run the family's own tool)\n",
             p->cmd_list_upgradable);
  for (guint i = 0; p->hooks_post_create[i]; i++)
    g_print ("  Hook:        post-create %s\n", p->hooks_post_create[i]);
  if (g_hash_table_size (p->tweaks) > 0)
    {
      g_autoptr(GList) keys = g_hash_table_get_keys (p->tweaks);
      keys = g_list_sort (keys, (GCompareFunc) g_strcmp0);
      for (GList *l = keys; l; l = l->next)
        g_print ("  Tweak:       %s=%s\n", (char *) l->data, (char *) g_hash_table_lookup (p->tweaks, l->data));
    }
}

int
gl_cmd_profiles (int argc, char **argv)
{
  gboolean verbose = FALSE;
  GOptionEntry entries[] = {
    { "verbose", 'v', 0, G_OPTION_ARG_NONE, &verbose, "Show every field; with NAME, also what its base resolves to now", NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) context = gl_cli_context_new ("[NAME…]",
                                                          "List the distribution profiles sandboxes are made from.");
  g_auto(GStrv) path = gl_paths_profile_dirs ();
  g_autoptr(GPtrArray) errors = g_ptr_array_new_with_free_func ((GDestroyNotify) g_error_free);
  g_autoptr(GPtrArray) profiles = NULL;
  int status = GL_EXIT_OK;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!gl_cli_parse (context, &argc, &argv, &status))
    return status;

  if (argc > 1)
    {
      for (int i = 1; i < argc; i++)
        {
          g_autoptr(GError) error = NULL;
          g_autoptr(GlProfile) p = gl_profile_find ((const char * const *) path, argv[i], &error);

          if (p == NULL)
            {
              status = gl_cli_fail (error);
              continue;
            }
          if (verbose)
            print_profile_verbose (p, TRUE);
          else
            g_print ("%-18s %-10s %-9s %s\n", p->name, p->family,
                     gl_profile_base_type_to_string (p->base_type), p->display_name);
        }
      return status;
    }

  profiles = gl_profile_list ((const char * const *) path, errors);
  if (!verbose && profiles->len > 0)
    g_print ("%-18s %-10s %-9s %s\n", "PROFILE", "FAMILY", "BASE", "NAME");
  for (guint i = 0; i < profiles->len; i++)
    {
      GlProfile *p = profiles->pdata[i];
      if (verbose)
        {
          print_profile_verbose (p, FALSE);
          g_print ("\n");
        }
      else
        g_print ("%-18s %-10s %-9s %s\n", p->name, p->family,
                 gl_profile_base_type_to_string (p->base_type), p->display_name);
    }
  /* Malformed files are reported, and do not hide the good ones. */
  for (guint i = 0; i < errors->len; i++)
    status = gl_cli_fail (errors->pdata[i]);
  if (profiles->len == 0 && errors->len == 0)
    {
      g_autofree char *dirs = g_strjoinv (", ", path);
      g_printerr ("glimpse: no profiles found in %s\n", dirs);
      return GL_EXIT_NOT_FOUND;
    }
  return status;
}

/* ---- glimpse create ---- */

typedef struct {
  GlProfile *profile;
  GlStore *store;
  GlCreateOptions options;
  char *id;
  GError *error;
  gboolean done;
  GlCliProgress *progress;
} CreateData;

/* Set (to the signal) once create is interrupted: what the bootstrap tool
 * and the store say from then on (mmdebstrap's own failure, the command
 * line "was stopped") is the interruption's echo, not news; create says
 * one line at the end instead. */
static gint create_interrupted;

static void
print_status (const char *message, gpointer user_data)
{
  if (g_atomic_int_get (&create_interrupted) == 0)
    g_printerr ("%s\n", message);
}

static void
create_task_func (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  CreateData *data = task_data;

  data->id = gl_create_sandbox (data->store, data->profile, &data->options,
                                cancellable, &data->error);
  g_task_return_boolean (task, TRUE);
}

static void
create_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  CreateData *data = user_data;

  data->done = TRUE;
  g_main_context_wakeup (NULL);
}

static gboolean
on_interrupt (gpointer user_data)
{
  GCancellable *cancellable = user_data;

  g_atomic_int_compare_and_exchange (&create_interrupted, 0, 1);
  g_cancellable_cancel (cancellable);
  return G_SOURCE_CONTINUE;
}

int
gl_cmd_create (int argc, char **argv)
{
  char *name = NULL, *image = NULL, *sha256 = NULL, *signature = NULL, *release = NULL;
  char *display_name = NULL, *keyring = NULL;
  GOptionEntry entries[] = {
    { "name", 'n', 0, G_OPTION_ARG_STRING, &name, "The new sandbox's id (default: PROFILE, PROFILE-2, …)", "ID" },
    { "display-name", 0, 0, G_OPTION_ARG_STRING, &display_name, "The name menus show (default: the id for a sandbox of the host, else the profile's)", "NAME" },
    { "image", 0, 0, G_OPTION_ARG_FILENAME, &image, "Use this local copy of the base image instead of downloading", "FILE" },
    { "sha256", 0, 0, G_OPTION_ARG_STRING, &sha256, "The SHA-256 the --image must have (default: the profile's)", "SUM" },
    { "signature", 0, 0, G_OPTION_ARG_FILENAME, &signature, "A detached signature of the --image, checked with the profile's keyring", "FILE" },
    { "release", 0, 0, G_OPTION_ARG_STRING, &release, "The release to use instead of the one the profile's channel resolves to", "RELEASE" },
    { "keyring", 0, 0, G_OPTION_ARG_FILENAME, &keyring, "Check the base's signature against this keyring file instead of the profile's Keyring= (the key must still be one SignedBy= names)", "FILE" },
    { NULL }
  };
  g_autoptr(GOptionContext) context = gl_cli_context_new ("PROFILE",
                                                          "Create a sandbox from a profile (needs root).");
  g_auto(GStrv) path = gl_paths_profile_dirs ();
  g_autoptr(GError) error = NULL;
  g_autoptr(GlProfile) profile = NULL;
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GlStore) store = gl_store_new_default ();
  g_autoptr(GTask) task = NULL;
  CreateData data = { 0 };
  guint sigint, sigterm, sighup;
  int status = GL_EXIT_OK;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!gl_cli_parse (context, &argc, &argv, &status))
    return status;
  if (argc != 2)
    return gl_cli_usage ("create", "give one profile name (“glimpse profiles” lists them)");
  if (name != NULL && !gl_sandbox_id_validate (name, &error))
    return gl_cli_fail (error);
  if (display_name != NULL && !gl_sandbox_name_validate (display_name, &error))
    return gl_cli_fail (error);
  if (sha256 != NULL && image == NULL)
    return gl_cli_usage ("create", "--sha256 goes with --image");
  if (signature != NULL && image == NULL)
    return gl_cli_usage ("create", "--signature goes with --image");
  if (sha256 != NULL && !gl_checksum_is_sha256 (sha256))
    return gl_cli_usage ("create", "--sha256 takes 64 hexadecimal digits (sha256sum FILE prints them)");

  profile = gl_profile_find ((const char * const *) path, argv[1], &error);
  if (profile == NULL)
    return gl_cli_fail (error);
  if (!gl_cli_require_root ("Creating a sandbox"))
    return GL_EXIT_PERMISSION;
  if (keyring != NULL)
    {
      if (profile->signature == NULL)
        return gl_cli_usage ("create", "profile's base is not signed: it takes no --keyring");
      if (!g_file_test (keyring, G_FILE_TEST_IS_REGULAR))
        return gl_cli_usage ("create", "--keyring takes a keyring file (binary or ASCII-armored)");
      g_strfreev (profile->keyrings);
      profile->keyrings = g_new0 (char *, 2);
      profile->keyrings[0] = g_canonicalize_filename (keyring, NULL);
    }

  data.profile = profile;
  data.store = store;
  data.progress = gl_cli_progress_new (profile->name, isatty (STDERR_FILENO));
  data.options.id = name;
  data.options.display_name = display_name;
  data.options.image = image;
  data.options.sha256 = sha256;
  data.options.signature = signature;
  data.options.release = release;
  data.options.progress = gl_cli_progress_update;
  data.options.progress_data = data.progress;
  data.options.status = print_status;
  data.options.output = print_status;
  /* (on_interrupt: so that what the bootstrap tool says of its stopping
   * comes after create_interrupted is set) */
  data.options.signals_cancel = TRUE;

  sigint = g_unix_signal_add (SIGINT, on_interrupt, cancellable);
  sigterm = g_unix_signal_add (SIGTERM, on_interrupt, cancellable);
  sighup = g_unix_signal_add (SIGHUP, on_interrupt, cancellable);

  task = g_task_new (NULL, cancellable, create_done, &data);
  g_task_set_task_data (task, &data, NULL);
  g_task_run_in_thread (task, create_task_func);
  while (!data.done)
    g_main_context_iteration (NULL, TRUE);

  g_source_remove (sigint);
  g_source_remove (sigterm);
  g_source_remove (sighup);
  gl_cli_progress_free (data.progress);
  g_free (name);
  g_free (image);
  g_free (sha256);
  g_free (signature);
  g_free (release);
  g_free (display_name);

  if (data.id == NULL)
    {
      int code;
      /* One line, as an interrupted install says it (whatever the
       * interrupted step made of it: a cancelled download, a bootstrap
       * tool that failed on the signal); what was built goes now or, after
       * a kill -9, at the next store command. */
      if (g_atomic_int_get (&create_interrupted) != 0
          || g_error_matches (data.error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        {
          g_printerr ("glimpse: Interrupted while creating a sandbox from profile %s; nothing was created\n",
                      profile->name);
          code = GL_EXIT_CANCELLED;
        }
      else
        code = gl_cli_fail (data.error);
      g_clear_error (&data.error);
      return code;
    }
  g_print ("%s\n", data.id);
  g_printerr ("Created sandbox “%s” from profile %s. Run an app in it with: glimpse run %s -- COMMAND\n",
              data.id, profile->name, data.id);
  g_free (data.id);
  return GL_EXIT_OK;
}

/* ---- glimpse list / info ---- */

static char *
format_time (GDateTime *t)
{
  g_autoptr(GDateTime) local = NULL;

  if (t == NULL)
    return g_strdup ("-");
  local = g_date_time_to_local (t);
  return g_date_time_format (local, "%Y-%m-%d %H:%M");
}

int
gl_cmd_list (int argc, char **argv)
{
  gboolean ids = FALSE;
  GOptionEntry entries[] = {
    { "ids", 0, 0, G_OPTION_ARG_NONE, &ids, "Print only the ids, one a line (for scripts and completion)", NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) context = gl_cli_context_new ("", "List the sandboxes.");
  g_autoptr(GPtrArray) errors = g_ptr_array_new_with_free_func ((GDestroyNotify) g_error_free);
  g_autoptr(GPtrArray) sandboxes = NULL;
  g_autoptr(GlStore) store = gl_store_new_default ();
  g_autoptr(GError) error = NULL;
  int status = GL_EXIT_OK;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!gl_cli_parse (context, &argc, &argv, &status))
    return status;
  if (argc != 1)
    return gl_cli_usage ("list", "takes no arguments");

  sandboxes = gl_store_list (store, errors, &error);
  if (sandboxes == NULL)
    return gl_cli_fail (error);

  if (ids)  /* no header, no sizes (which walk every tree): fast enough for a Tab */
    {
      for (guint i = 0; i < sandboxes->len; i++)
        g_print ("%s\n", ((GlSandbox *) sandboxes->pdata[i])->id);
      for (guint i = 0; i < errors->len; i++)
        status = gl_cli_fail (errors->pdata[i]);
      return status;
    }

  if (sandboxes->len == 0 && errors->len == 0)
    {
      g_printerr ("No sandboxes yet. Create one with: sudo glimpse create host\n");
      return GL_EXIT_OK;
    }
  g_print ("%-20s %-16s %10s  %-16s  %-16s  %s\n", "ID", "PROFILE", "SIZE", "CREATED", "UPDATED", "IN USE");
  for (guint i = 0; i < sandboxes->len; i++)
    {
      GlSandbox *s = sandboxes->pdata[i];
      g_autofree char *size = gl_format_size (gl_sandbox_get_size (s));
      g_autofree char *created = format_time (s->created);
      g_autofree char *updated = format_time (s->updated);

      /* (the no-break space in the size is two bytes, one column) */
      int size_width = 10 + (int) (strlen (size) - (gsize) g_utf8_strlen (size, -1));

      g_print ("%-20s %-16s %*s  %-16s  %-16s  %s\n", s->id, s->profile, size_width, size,
               created, updated, gl_sandbox_is_in_use (s) ? "yes" : "no");
    }
  for (guint i = 0; i < errors->len; i++)
    status = gl_cli_fail (errors->pdata[i]);
  return status;
}

int
gl_cmd_info (int argc, char **argv)
{
  g_autoptr(GOptionContext) context = gl_cli_context_new ("ID", "Show one sandbox.");
  g_autoptr(GError) error = NULL;
  g_autoptr(GlSandbox) s = NULL;
  g_autofree char *rootfs = NULL;
  g_autofree char *size = NULL;
  g_autofree char *created = NULL;
  g_autofree char *updated = NULL;
  g_autofree char *launchers = NULL;
  g_autofree char *users_dir = NULL;
  g_autoptr(GDir) users = NULL;
  const char *uid;
  int status = GL_EXIT_OK;

  if (!gl_cli_parse (context, &argc, &argv, &status))
    return status;
  if (argc != 2)
    return gl_cli_usage ("info", "give one sandbox id (“glimpse list” lists them)");

  s = gl_sandbox_load (gl_paths_store_dir (), argv[1], &error);
  if (s == NULL)
    return gl_cli_fail (error);

  rootfs = gl_sandbox_get_base_tree (s);
  size = gl_format_size (gl_sandbox_get_size (s));
  created = format_time (s->created);
  updated = format_time (s->updated);
  launchers = g_strjoinv (" ", s->launchers ? s->launchers : (char *[]) { NULL });

  g_print ("ID:           %s\n", s->id);
  g_print ("Name:         %s\n", s->name);
  g_print ("Profile:      %s\n", s->profile);
  g_print ("Family:       %s\n", s->family ? s->family : "-");
  if (s->release != NULL && s->follows != NULL)
    g_print ("Release:      %s (follows “%s”, which was %s when it was created; it moves on "
             "at the distribution's next release)\n", s->release, s->follows, s->release);
  else if (s->follows != NULL)
    g_print ("Release:      follows “%s”\n", s->follows);
  else if (s->release != NULL)
    g_print ("Release:      %s\n", s->release);
  g_print ("Base:         %s\n", g_str_equal (s->base, GL_BASE_HOST) ? "the host (read-only)" : rootfs);
  g_print ("Path:         %s\n", s->path);
  g_print ("Size:         %s\n", size);
  g_print ("Created:      %s\n", created);
  g_print ("Updated:      %s\n", updated);
  g_print ("In use:       %s\n", gl_sandbox_is_in_use (s) ? "yes" : "no");
  if (*launchers)
    g_print ("Launchers:    %s and the apps the sandbox's packages add to the base\n", launchers);
  else
    g_print ("Launchers:    (every application)\n");
  for (guint i = 0; s->added_launchers && s->added_launchers[i]; i++)
    g_print ("  Added:      %s\n", s->added_launchers[i]);
  for (guint i = 0; s->hidden_launchers && s->hidden_launchers[i]; i++)
    g_print ("  Hidden:     %s\n", s->hidden_launchers[i]);
  for (guint i = 0; s->repositories && s->repositories[i]; i++)
    g_print ("Repository:   %s\n", s->repositories[i]);

  users_dir = g_build_filename (s->path, "users", NULL);
  users = g_dir_open (users_dir, 0, NULL);
  while (users != NULL && (uid = g_dir_read_name (users)) != NULL)
    if (g_ascii_isdigit (uid[0]))       /* not users/.views/, root's records */
      g_print ("User layer:   %s/%s\n", users_dir, uid);
  return GL_EXIT_OK;
}

/* ---- glimpse remove ---- */

/* Under sudo, the user who asked keeps no menu entries of a removed
 * sandbox: their exports are resynced, as them, right away (other users'
 * at their next "glimpse export" or agent sync). */
static void
resync_sudo_user_exports (void)
{
  const char *sudo_uid = g_getenv ("SUDO_UID");
  guint64 uid;
  struct passwd *pw;
  g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);
  g_autofree char *home = NULL, *user = NULL, *runtime = NULL;
  g_autofree gid_t *groups = NULL;
  g_autoptr(GError) error = NULL;
  GlSpawnOptions options = { .output = GL_SPAWN_OUTPUT_INHERIT, .as_user = TRUE };

  if (geteuid () != 0 || sudo_uid == NULL || self == NULL ||
      !g_ascii_string_to_unsigned (sudo_uid, 10, 1, G_MAXUINT32 - 1, &uid, NULL) ||
      (pw = getpwuid ((uid_t) uid)) == NULL)
    return;
  options.uid = pw->pw_uid;
  options.gid = pw->pw_gid;
  home = g_strdup_printf ("HOME=%s", pw->pw_dir);
  user = g_strdup_printf ("USER=%s", pw->pw_name);
  runtime = g_strdup_printf ("XDG_RUNTIME_DIR=/run/user/%u", (unsigned) pw->pw_uid);
  /* (looked up here: NSS must not run between fork and exec) */
  groups = gl_spawn_get_groups (pw->pw_name, pw->pw_gid, &options.n_groups, &error);
  options.groups = groups;
  {
    const char *argv[] = { self, "export", "--quiet", NULL };
    const char *envp[] = { home, user, runtime, "PATH=/usr/local/bin:/usr/bin:/bin", NULL };

    options.envp = envp;
    if (groups == NULL || !gl_spawn_run (argv, &options, NULL, NULL, &error))
      g_printerr ("glimpse: the menu entries of %s were not resynced (%s); run “glimpse export” as %s\n",
                  pw->pw_name, error->message, pw->pw_name);
  }
}

int
gl_cmd_remove (int argc, char **argv)
{
  gboolean force = FALSE;
  GOptionEntry entries[] = {
    { "force", 'f', 0, G_OPTION_ARG_NONE, &force, "Remove even while an app runs in it", NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) context = gl_cli_context_new (
    "ID…", "Remove sandboxes and everything in them (needs root).\n\n"
           "Refuses while an app runs in one, or while a user's ended view is still kept;\n"
           "each user's glimpse-launch --held gets 60 s to answer, else “Not removed”.");
  int status = GL_EXIT_OK;
  guint removed = 0;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!gl_cli_parse (context, &argc, &argv, &status))
    return status;
  if (argc < 2)
    return gl_cli_usage ("remove", "give the id of the sandbox to remove");

  for (int i = 1; i < argc; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GlSandbox) s = gl_sandbox_load (gl_paths_store_dir (), argv[i], &error);

      if (s == NULL)
        {
          status = gl_cli_fail (error);
          continue;
        }
      if (!gl_cli_require_root ("Removing a sandbox"))
        return GL_EXIT_PERMISSION;
      if (!gl_sandbox_remove (s, force, print_status, NULL, NULL, &error))
        {
          status = gl_cli_fail (error);
          continue;
        }
      g_printerr ("Removed sandbox “%s”.\n", s->id);
      removed++;
      /* Its menu entries go with it; other users' go at their next sync. */
      if (!gl_export_store_remove_sandbox (s->id, &error))
        status = gl_cli_fail (error);
    }
  if (removed > 0)
    resync_sudo_user_exports ();
  return status;
}

int
gl_cmd_rename (int argc, char **argv)
{
  g_autoptr(GOptionContext) context = gl_cli_context_new ("ID NAME",
    "Change the name menus show for a sandbox (needs root; menus follow on each user's next sync).");
  g_autoptr(GlStore) store = gl_store_new_default ();
  g_autoptr(GlSandbox) sandbox = NULL;
  g_autoptr(GError) error = NULL;
  int status = GL_EXIT_OK;

  if (!gl_cli_parse (context, &argc, &argv, &status))
    return status;
  if (argc != 3)
    return gl_cli_usage ("rename", "give the sandbox ID and its new display name");
  if (!gl_sandbox_name_validate (argv[2], &error))
    return gl_cli_fail (error);
  sandbox = gl_store_load (store, argv[1], &error);
  if (sandbox == NULL)
    return gl_cli_fail (error);
  if (!gl_cli_require_root ("Renaming a sandbox"))
    return GL_EXIT_PERMISSION;
  g_free (sandbox->name);
  sandbox->name = g_strdup (argv[2]);
  if (!gl_sandbox_save (sandbox, &error))
    return gl_cli_fail (error);
  return GL_EXIT_OK;
}
