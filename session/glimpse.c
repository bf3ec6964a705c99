/* glimpse.c: the glimpse command line
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <fcntl.h>
#include <locale.h>
#include <stdio.h>
#include <unistd.h>

#include "gl-notification.h"
#include "gl-profile.h"
#include "gl-store.h"
#include "glimpse-cli.h"
#include "glimpse-run.h"
#include "glimpse-store-cmds.h"
#include "glimpse-export.h"
#include "glimpse-agent-cmds.h"
#include "glimpse-pkg-cmds.h"
#include "glimpse-updates-cmds.h"

typedef struct {
  const char *name;
  const char *args;
  const char *summary;
  GlCommandFunc func;
  gboolean hidden;
} GlCommand;

static int cmd_notify_error (int argc, char **argv);

static const GlCommand commands[] = {
  { "profiles", "[--verbose] [NAME…]", "List the distribution profiles", gl_cmd_profiles, FALSE },
  { "create", "PROFILE [--name ID] [--release RELEASE] [--display-name NAME] [--keyring KEYRING] [--image FILE [--sha256 SUM] [--signature SIG]]", "Create a sandbox (root)", gl_cmd_create, FALSE },
  { "list", "[--ids]", "List the sandboxes", gl_cmd_list, FALSE },
  { "info", "ID", "Show a sandbox", gl_cmd_info, FALSE },
  { "remove", "ID… [--force]", "Remove sandboxes (root)", gl_cmd_remove, FALSE },
  { "rename", "ID NAME", "Change a sandbox's display name (root)", gl_cmd_rename, FALSE },
  { "run", "ID [--] COMMAND [ARG…]", "Run a command in a sandbox, as you", gl_cmd_run, FALSE },
  { "changes", "ID [PATH] [--json]", "Show what apps changed in your files", gl_cmd_changes, FALSE },
  { "purge", "ID [PATH] [--yes]", "Drop those changes", gl_cmd_purge, FALSE },
  { "export", "[--quiet] [ID…]", "Put sandboxes' applications into the menu", gl_cmd_export, FALSE },
  { "unexport", "ID…", "Take a sandbox's applications out of the menu", gl_cmd_unexport, FALSE },
  { "apps", "ID", "List a sandbox's applications and which are exported", gl_cmd_apps, FALSE },
  { "add-launcher", "ID DESKTOP-ID…", "Show applications in the menu", gl_cmd_add_launcher, FALSE },
  { "remove-launcher", "ID DESKTOP-ID…", "Hide applications from the menu", gl_cmd_remove_launcher, FALSE },
  { "install", "ID PACKAGE…", "Install packages into a sandbox (root)", gl_cmd_install, FALSE },
  { "uninstall", "ID PACKAGE…", "Remove packages from a sandbox (root)", gl_cmd_uninstall, FALSE },
  { "update", "ID", "Refresh and upgrade a sandbox's packages (root)", gl_cmd_update, FALSE },
  { "repos", "ID", "List a sandbox's package repositories", gl_cmd_repos, FALSE },
  { "add-repo", "ID SPEC [--key FILE|URL] [--name NAME]", "Add a repository (root)", gl_cmd_add_repo, FALSE },
  { "remove-repo", "ID NAME", "Remove a repository (root)", gl_cmd_remove_repo, FALSE },
  { "reset", "ID [--yes]", "Drop every package change and added repository (root)", gl_cmd_reset, FALSE },
  { "rebase", "ID", "Move a sandbox onto its profile's current base, keeping packages (root)", gl_cmd_rebase, FALSE },
  { "open", "ID [--app DESKTOP-ID] [FILE|URL…]", "Open files with a sandbox's application", gl_cmd_open, FALSE },
  { "status", "", "Show what the session agent keeps in the menu", gl_cmd_status, FALSE },
  { "updates", "[--check] [ID…]", "Show pending package updates (--check: check now)", gl_cmd_updates, FALSE },
  { "control", "ID ACTION", "Ask the session agent to act on a sandbox (menu entries)", gl_cmd_control, TRUE },
  { "notify-error", "[--title T] MESSAGE", "Show an error as a desktop notification", cmd_notify_error, TRUE },
  { NULL }
};

int
gl_cli_fail (const GError *error)
{
  g_printerr ("glimpse: %s\n", error->message);

  if (error->domain == GL_STORE_ERROR)
    switch (error->code)
      {
      case GL_STORE_ERROR_NOT_FOUND:
        return GL_EXIT_NOT_FOUND;
      case GL_STORE_ERROR_IN_USE:
        return GL_EXIT_IN_USE;
      case GL_STORE_ERROR_PERMISSION:
        return GL_EXIT_PERMISSION;
      case GL_STORE_ERROR_INVALID_ID:
        return GL_EXIT_USAGE;
      case GL_STORE_ERROR_MALFORMED:
        return GL_EXIT_INVALID;
      default:
        return GL_EXIT_FAILED;
      }
  if (error->domain == GL_PROFILE_ERROR)
    return error->code == GL_PROFILE_ERROR_NOT_FOUND ? GL_EXIT_NOT_FOUND : GL_EXIT_INVALID;
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED))
    return GL_EXIT_PERMISSION;
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return GL_EXIT_CANCELLED;
  return GL_EXIT_FAILED;
}

int
gl_cli_usage (const char *command, const char *format, ...)
{
  va_list args;
  g_autofree char *msg = NULL;

  va_start (args, format);
  msg = g_strdup_vprintf (format, args);
  va_end (args);
  g_printerr ("glimpse %s: %s\nTry “glimpse %s --help”.\n", command, msg, command);
  return GL_EXIT_USAGE;
}

gboolean
gl_cli_parse (GOptionContext *context, int *argc, char ***argv, int *exit_code)
{
  g_autoptr(GError) error = NULL;

  if (!g_option_context_parse (context, argc, argv, &error))
    {
      g_printerr ("glimpse: %s\nTry “glimpse --help”.\n", error->message);
      *exit_code = GL_EXIT_USAGE;
      return FALSE;
    }
  return TRUE;
}

gboolean
gl_cli_require_root (const char *what)
{
  if (geteuid () == 0)
    return TRUE;
  g_printerr ("glimpse: %s needs root; rerun it with sudo\n", what);
  return FALSE;
}

GOptionContext *
gl_cli_context_new (const char *parameters, const char *summary)
{
  /* (the program name is already "glimpse COMMAND") */
  GOptionContext *context = g_option_context_new (parameters);

  g_option_context_set_summary (context, summary);
  g_option_context_set_description (context, "See glimpse(1) for exit codes and files.");
  return context;
}

/* glimpse notify-error: glimpse-launch runs this (as the user, with every
 * privilege dropped) when it fails without a terminal, so a menu click
 * that cannot start an app says why instead of doing nothing. */
static int
cmd_notify_error (int argc, char **argv)
{
  char *title = NULL;
  GOptionEntry entries[] = {
    { "title", 0, 0, G_OPTION_ARG_STRING, &title, "Notification title", "TITLE" },
    { NULL }
  };
  g_autoptr(GOptionContext) context = gl_cli_context_new ("MESSAGE",
                                                          "Show an error as a desktop notification.");
  g_autoptr(GError) error = NULL;
  g_autoptr(GlNotification) n = NULL;
  g_autofree char *body = NULL;
  int status = GL_EXIT_OK;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!gl_cli_parse (context, &argc, &argv, &status))
    return status;
  if (argc < 2)
    return gl_cli_usage ("notify-error", "give the message");
  body = g_strjoinv (" ", argv + 1);

  /* Always also on stderr: the session's journal keeps it. */
  g_printerr ("%s: %s\n", title ? title : "Glimpse", body);
  gl_notification_set_app_name ("Glimpse");
  n = gl_notification_new (title ? title : "Glimpse could not start the app", body, "dialog-error");
  gl_notification_set_urgency (n, GL_NOTIFICATION_URGENCY_CRITICAL);
  gl_notification_set_hint (n, "desktop-entry", g_variant_new_string ("glimpse"));
  if (!gl_notification_show (n, &error))
    {
      g_printerr ("glimpse: cannot show a notification: %s\n", error->message);
      status = GL_EXIT_FAILED;
    }
  g_clear_object (&n);
  gl_notification_shutdown ();
  g_free (title);
  return status;
}

/* Through g_print/g_printerr, so the plain handlers below apply. */
static void
print_help (gboolean to_stderr)
{
  g_autoptr(GString) out = g_string_new ("Usage: glimpse COMMAND [OPTION…]\n\n"
    "Try software from another distribution release in a sandbox on your own desktop.\n\n"
    "Commands:\n");
  glong width = 0;

  /* Columns counted in characters, not bytes ("…" is three) */
  for (const GlCommand *c = commands; c->name; c++)
    if (!c->hidden)
      {
        glong len = (glong) strlen (c->name) + 1 + g_utf8_strlen (c->args, -1);
        if (len <= 40)
          width = MAX (width, len);
      }
  for (const GlCommand *c = commands; c->name; c++)
    if (!c->hidden)
      {
        g_autofree char *usage = g_strdup_printf ("%s %s", c->name, c->args);
        glong len = g_utf8_strlen (usage, -1);
        if (len > width)  /* too long for the column: the summary below it */
          g_string_append_printf (out, "  %s\n  %*s %s\n", usage, (int) width, "", c->summary);
        else
          g_string_append_printf (out, "  %s%*s %s\n", usage, (int) (width - len), "", c->summary);
      }
  g_string_append (out, "\n“glimpse COMMAND --help” shows a command's options; glimpse(1) the rest.\n");
  if (to_stderr)
    g_printerr ("%s", out->str);
  else
    g_print ("%s", out->str);
}

/* In a locale that is not UTF-8 (a bare "su -" login has LANG unset),
 * GLib would turn the typographic quotes, ellipses and no-break spaces of
 * the messages into "?": those become their ASCII forms, and everything
 * else (file names above all) is written as it is. */
static void
write_plain (FILE *out, const char *s)
{
  static const struct { const char *from, *to; } plain[] = {
    { "“", "\"" }, { "”", "\"" }, { "‘", "'" }, { "’", "'" }, { "…", "..." },
    { "\u00a0", " " }, { "→", "->" }, { "—", "-" }, { "–", "-" },
  };

  while (*s)
    {
      gsize i;
      for (i = 0; i < G_N_ELEMENTS (plain); i++)
        if (g_str_has_prefix (s, plain[i].from))
          break;
      if (i < G_N_ELEMENTS (plain))
        {
          fputs (plain[i].to, out);
          s += strlen (plain[i].from);
        }
      else
        fputc (*s++, out);
    }
  fflush (out);
}

static void
print_plain (const char *s)
{
  write_plain (stdout, s);
}

static void
printerr_plain (const char *s)
{
  write_plain (stderr, s);
}

int
main (int argc, char **argv)
{
  /* 0-2 open, on /dev/null where the caller closed them: what we open
   * must not take their numbers (a child's stdin or output, the trash
   * remover's locks, whose 0-2 go to /dev/null, would be lost) */
  for (;;)
    {
      int fd = open ("/dev/null", O_RDWR | O_CLOEXEC);

      if (fd < 0 || fd > 2)
        {
          if (fd > 2)
            close (fd);
          break;
        }
      /* (without close-on-exec: 0-2 are given to what we run) */
      (void) fcntl (fd, F_SETFD, 0);
    }
  /* The commands that ask whether a user's layer is held (purge, remove)
   * keep nothing the caller left open but 0-2: a descriptor a shell
   * passes on (of an ended view's mount namespace, or a file of it) would
   * make us one of the processes that keep that view, and we would name
   * ourselves as the one to close.  The others keep them: a file given as
   * /dev/fd/N (the shell's <(…), e.g. add-repo --key) is one. */
  if (argc >= 2 && (g_str_equal (argv[1], "purge") || g_str_equal (argv[1], "remove")))
    (void) close_range (3, ~0U, 0);
  setlocale (LC_ALL, "");
  if (!g_get_charset (NULL))
    {
      g_set_print_handler (print_plain);
      g_set_printerr_handler (printerr_plain);
    }

  if (argc < 2)
    {
      print_help (TRUE);
      return GL_EXIT_USAGE;
    }
  if (g_str_equal (argv[1], "--help") || g_str_equal (argv[1], "-h") || g_str_equal (argv[1], "help"))
    {
      print_help (FALSE);
      return GL_EXIT_OK;
    }
  if (g_str_equal (argv[1], "--version"))
    {
      g_print ("glimpse %s\n", PACKAGE_VERSION);
      return GL_EXIT_OK;
    }
  if (g_getenv ("GLIMPSE_DEBUG") != NULL)
    g_log_set_debug_enabled (TRUE);

  for (const GlCommand *c = commands; c->name; c++)
    if (g_str_equal (argv[1], c->name))
      {
        g_autofree char *prgname = g_strdup_printf ("glimpse %s", c->name);
        g_set_prgname (prgname);
        return c->func (argc - 1, argv + 1);
      }

  g_printerr ("glimpse: unknown command “%s”; “glimpse --help” lists the commands\n", argv[1]);
  return GL_EXIT_USAGE;
}
