/* glimpse-run.c: glimpse run, changes, purge
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "glimpse-run.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <unistd.h>

#include "gl-changes.h"
#include "gl-paths.h"
#include "gl-store.h"

int
gl_cmd_run (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GlSandbox) sandbox = NULL;
  g_autoptr(GPtrArray) args = g_ptr_array_new ();
  const char *launcher = gl_paths_launcher ();
  int first = 2;

  if (argc >= 2 && (g_str_equal (argv[1], "--help") || g_str_equal (argv[1], "-h")))
    {
      g_print ("Usage:\n  glimpse run ID [--] COMMAND [ARG…]\n\n"
               "Run COMMAND in sandbox ID as you, with your files readable and every change\n"
               "kept in your layer of the sandbox (see “glimpse changes”).\n"
               "The exit status is COMMAND's; glimpse-launch(1) lists its own.\n");
      return GL_EXIT_OK;
    }
  if (argc < 2)
    return gl_cli_usage ("run", "give a sandbox id and a command");
  if (argc > 2 && g_str_equal (argv[2], "--"))
    first = 3;
  if (first >= argc)
    return gl_cli_usage ("run", "give the command to run in sandbox “%s”", argv[1]);

  /* Check here for a friendlier message; the launcher checks again, for real. */
  sandbox = gl_sandbox_load (gl_paths_store_dir (), argv[1], &error);
  if (sandbox == NULL)
    return gl_cli_fail (error);

  g_ptr_array_add (args, (char *) launcher);
  g_ptr_array_add (args, argv[1]);
  g_ptr_array_add (args, "--");
  for (int i = first; i < argc; i++)
    g_ptr_array_add (args, argv[i]);
  g_ptr_array_add (args, NULL);

  fflush (stdout);
  execv (launcher, (char **) args->pdata);
  g_printerr ("glimpse: cannot run the launcher %s: %s; is Glimpse installed?\n",
              launcher, g_strerror (errno));
  return errno == ENOENT ? GL_EXIT_NOT_FOUND : GL_EXIT_FAILED;
}

typedef struct {
  GlSandbox *sandbox;
  char *user_dir;
  char *home;
  uid_t uid;
} UserLayer;

static void
user_layer_clear (UserLayer *l)
{
  g_clear_pointer (&l->sandbox, gl_sandbox_free);
  g_clear_pointer (&l->user_dir, g_free);
  g_clear_pointer (&l->home, g_free);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (UserLayer, user_layer_clear)

static gboolean
user_layer_init (UserLayer *l, const char *id, GError **error)
{
  struct passwd *pw;

  l->uid = getuid ();
  pw = getpwuid (l->uid);
  if (pw == NULL || pw->pw_dir == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                   "uid %u has no entry in the password database", (unsigned) l->uid);
      return FALSE;
    }
  l->sandbox = gl_sandbox_load (gl_paths_store_dir (), id, error);
  if (l->sandbox == NULL)
    return FALSE;
  l->user_dir = gl_sandbox_get_user_dir (l->sandbox, l->uid);
  l->home = g_strdup (pw->pw_dir);
  return TRUE;
}

/* A path as the user means it: absolute, relative to the working directory
 * otherwise, canonical (no . or ..), without following links. */
static char *
inside_path (const char *arg)
{
  g_autofree char *cwd = g_get_current_dir ();

  return g_canonicalize_filename (arg, cwd);
}

static void
json_string (GString *out, const char *s)
{
  g_string_append_c (out, '"');
  for (const unsigned char *p = (const unsigned char *) s; *p; p++)
    {
      if (*p == '"' || *p == '\\')
        g_string_append_printf (out, "\\%c", *p);
      else if (*p < 0x20)
        g_string_append_printf (out, "\\u%04x", *p);
      else
        g_string_append_c (out, *p);
    }
  g_string_append_c (out, '"');
}

/* What changes and purge share: the arguments ID [PATH], the caller's
 * layer of that sandbox and what it holds (under PATH).  FALSE with
 * *status set when the command is over. */
static gboolean
load_changes (GOptionContext *context, const char *cmd, int argc, char **argv,
              UserLayer *l, char **filter, GPtrArray **changes, int *status)
{
  g_autoptr(GError) error = NULL;

  if (!gl_cli_parse (context, &argc, &argv, status))
    return FALSE;
  if (argc < 2 || argc > 3)
    {
      *status = gl_cli_usage (cmd, "give a sandbox id and optionally a path");
      return FALSE;
    }
  if (!user_layer_init (l, argv[1], &error))
    {
      *status = gl_cli_fail (error);
      return FALSE;
    }
  if (argc == 3)
    *filter = inside_path (argv[2]);
  *changes = gl_changes_list (l->user_dir, l->home, l->uid, "/", *filter, &error);
  if (*changes == NULL)
    {
      *status = gl_cli_fail (error);
      return FALSE;
    }
  return TRUE;
}

int
gl_cmd_changes (int argc, char **argv)
{
  gboolean json = FALSE;
  GOptionEntry entries[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print JSON", NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) context =
    gl_cli_context_new ("ID [PATH]",
                        "List what apps in the sandbox changed in your files: added, modified, "
                        "deleted, per overlaid directory. The host's files are never changed.");
  g_auto(UserLayer) l = { 0 };
  g_autoptr(GPtrArray) changes = NULL;
  g_autofree char *filter = NULL;
  int status = GL_EXIT_OK;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!load_changes (context, "changes", argc, argv, &l, &filter, &changes, &status))
    return status;

  if (json)
    {
      g_autoptr(GString) out = g_string_new ("[");
      for (guint i = 0; i < changes->len; i++)
        {
          GlChange *c = changes->pdata[i];
          g_string_append (out, i ? ",\n " : "\n ");
          g_string_append_printf (out, "{\"change\": \"%s\", \"layer\": \"%s\", \"type\": \"%s\", \"path\": ",
                                  gl_change_kind_to_string (c->kind), c->layer,
                                  c->is_dir ? "directory" : "file");
          json_string (out, c->path);
          g_string_append_c (out, '}');
        }
      g_string_append (out, changes->len ? "\n]\n" : "]\n");
      fputs (out->str, stdout);
      return GL_EXIT_OK;
    }

  if (changes->len == 0)
    {
      g_printerr ("No changes in your layer of “%s”%s%s.\n", l.sandbox->id,
                  filter ? " under " : "", filter ? filter : "");
      return GL_EXIT_OK;
    }
  for (guint i = 0; i < changes->len; i++)
    {
      GlChange *c = changes->pdata[i];
      g_print ("%-9s %s%s\n", gl_change_kind_to_string (c->kind), c->path, c->is_dir ? "/" : "");
    }
  return GL_EXIT_OK;
}

int
gl_cmd_purge (int argc, char **argv)
{
  gboolean yes = FALSE;
  GOptionEntry entries[] = {
    { "yes", 'y', 0, G_OPTION_ARG_NONE, &yes, "Do not ask for confirmation", NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) context =
    gl_cli_context_new ("ID [PATH]",
                        "Drop the changes apps in the sandbox made to your files (all, or under PATH), "
                        "so the sandbox shows the host's files again.");
  g_autoptr(GError) error = NULL;
  g_auto(UserLayer) l = { 0 };
  g_autoptr(GPtrArray) changes = NULL;
  g_autofree char *filter = NULL;
  int lock_fd;
  gboolean ok;
  int status = GL_EXIT_OK;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!load_changes (context, "purge", argc, argv, &l, &filter, &changes, &status))
    return status;
  if (changes->len == 0 && !g_file_test (l.user_dir, G_FILE_TEST_IS_DIR))
    {
      g_printerr ("Nothing to purge: you have no layer in “%s” yet.\n", l.sandbox->id);
      return GL_EXIT_OK;
    }

  if (!yes)
    {
      char answer[16] = "";

      if (!isatty (STDIN_FILENO))
        return gl_cli_usage ("purge", "not asking without a terminal; pass --yes to purge");
      g_print ("This drops %u change%s in your layer of “%s”%s%s. Continue? [y/N] ",
               changes->len, changes->len == 1 ? "" : "s", l.sandbox->id,
               filter ? " under " : "", filter ? filter : "");
      fflush (stdout);
      if (fgets (answer, sizeof answer, stdin) == NULL || (answer[0] != 'y' && answer[0] != 'Y'))
        {
          g_printerr ("Nothing purged.\n");
          return GL_EXIT_CANCELLED;
        }
    }

  /* No app of the sandbox may run meanwhile: their overlays use the layer. */
  lock_fd = gl_sandbox_lock_user (l.sandbox, l.uid, &error);
  if (lock_fd < 0)
    {
      g_prefix_error (&error, "Nothing purged: ");
      return gl_cli_fail (error);
    }
  ok = gl_sandbox_layer_free (l.sandbox, l.uid, &error);
  if (!ok)
    {
      close (lock_fd);
      g_prefix_error (&error, "Nothing purged: ");
      return gl_cli_fail (error);
    }
  ok = gl_changes_purge (l.user_dir, l.home, l.uid, filter, NULL, &error);
  close (lock_fd);
  if (!ok)
    return gl_cli_fail (error);
  g_printerr ("Purged %u change%s in “%s”.\n", changes->len, changes->len == 1 ? "" : "s", l.sandbox->id);
  return GL_EXIT_OK;
}
