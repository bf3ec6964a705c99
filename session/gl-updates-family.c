/* gl-updates-family.c: pending updates of dnf, pacman and apk sandboxes,
 * by the family's own tool run in the sandbox through the launcher
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-updates-family.h"

#include <string.h>
#include <sys/wait.h>

#include "gl-paths.h"
#include "gl-spawn.h"
#include "gl-updates.h"

G_DEFINE_QUARK (gl-updates-family-error-quark, gl_updates_family_error)

/* dnf's metadata cache inside the view: /var/tmp there is the user's own
 * layer of the sandbox, so the cache is private to the user and kept
 * between checks (dnf then asks only whether repomd.xml changed). */
#define DNF_CACHE "/var/tmp/glimpse-updates-dnf"

/* ...but not dnf's locks on it.  dnf (4) run as a user keeps them in
 * /var/tmp/dnf-USER-XXXXXX/locks/<sha1 of the cachedir>/, each naming the
 * pid of its holder, and takes one over only when no process of that pid
 * lives.  A check the agent stops (SIGTERM, past CheckTimeout=) leaves its
 * lock behind, naming its pid in its view: 2 in a view of its own.  In a
 * view an app of the sandbox holds, pid 2 is that app, and the next check's
 * dnf waited on it until it timed out, every time, while the app ran.
 * The agent runs one check at a time, so a lock of the check's cache found
 * when a check starts is one a stopped check left: it goes before dnf
 * starts.  ("%s": the sha1; the command follows as "$@") */
#define DNF_UNLOCK "rm -f /var/tmp/dnf-*/locks/%s/*_lock.pid; exec \"$@\""

typedef struct {
  const char *family;
  const char *tool;          /* what the user installs when it is missing */
  const char *package;
  const char *argv[8];
  gboolean unlock;           /* dnf: its stale locks removed first (DNF_UNLOCK) */
} FamilyCheck;

static const FamilyCheck checks[] = {
  { "dnf", "dnf", "dnf",
    { "dnf", "-q", "check-update", "--refresh", "--setopt=cachedir=" DNF_CACHE, NULL }, TRUE },
  { "pacman", "checkupdates", "pacman-contrib",
    { "checkupdates", NULL }, FALSE },
  { "apk", "apk", "apk-tools",
    { "apk", "--no-cache", "list", "--upgradable", NULL }, FALSE },
};

static const FamilyCheck *
lookup (const char *family)
{
  for (gsize i = 0; i < G_N_ELEMENTS (checks); i++)
    if (g_strcmp0 (checks[i].family, family) == 0)
      return &checks[i];
  return NULL;
}

gboolean
gl_updates_family_supported (const char *family)
{
  return lookup (family) != NULL;
}

static GPtrArray *
updates_new (void)
{
  return g_ptr_array_new_with_free_func ((GDestroyNotify) gl_update_free);
}

static gboolean
bad_line (const char *tool, const char *line, GError **error)
{
  g_set_error (error, GL_UPDATES_FAMILY_ERROR, GL_UPDATES_FAMILY_ERROR_FAILED,
               "%s printed a line that is not an update: “%s”", tool, line);
  return FALSE;
}

/* --- dnf check-update ---
 *
 *   name.arch   [epoch:]version-release   repository
 *
 * one package a line, or split over two when the name is long; a blank
 * line first; "Obsoleting Packages" starts a list that is no upgrade. */
GPtrArray *
gl_updates_family_parse_dnf (const char *out, GError **error)
{
  g_autoptr(GPtrArray) updates = updates_new ();
  g_auto(GStrv) lines = g_strsplit (out, "\n", -1);
  g_autoptr(GPtrArray) fields = g_ptr_array_new_with_free_func (g_free);
  const char *first_line = NULL;

  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_auto(GStrv) words = NULL;

      if (g_str_has_prefix (lines[i], "Obsoleting Packages"))
        break;
      if (g_str_has_prefix (lines[i], "Security:") || g_str_has_prefix (lines[i], "Last metadata expiration"))
        continue;
      words = g_strsplit_set (g_strstrip (lines[i]), " \t", -1);
      for (guint k = 0; words[k] != NULL; k++)
        if (words[k][0] != '\0')
          {
            if (fields->len == 0)
              first_line = lines[i];
            g_ptr_array_add (fields, g_strdup (words[k]));
          }
      if (fields->len >= 3)
        {
          const char *na = fields->pdata[0];
          const char *dot = strrchr (na, '.');
          g_autofree char *name = NULL;

          if (fields->len > 3 || dot == NULL || dot == na || dot[1] == '\0' ||
              strchr (fields->pdata[1], '-') == NULL)
            {
              bad_line ("dnf check-update", first_line, error);
              return NULL;
            }
          name = g_strndup (na, dot - na);
          g_ptr_array_add (updates, gl_update_new (name, dot + 1, "", fields->pdata[1], fields->pdata[2]));
          g_ptr_array_set_size (fields, 0);
        }
    }
  if (fields->len != 0)
    {
      bad_line ("dnf check-update", first_line, error);
      return NULL;
    }
  return g_steal_pointer (&updates);
}

/* --- checkupdates ---
 *
 *   name oldversion -> newversion */
GPtrArray *
gl_updates_family_parse_checkupdates (const char *out, GError **error)
{
  g_autoptr(GPtrArray) updates = updates_new ();
  g_auto(GStrv) lines = g_strsplit (out, "\n", -1);

  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_auto(GStrv) w = NULL;

      if (g_strstrip (lines[i])[0] == '\0')
        continue;
      w = g_strsplit (lines[i], " ", -1);
      if (g_strv_length (w) != 4 || !g_str_equal (w[2], "->") || !w[0][0] || !w[1][0] || !w[3][0])
        {
          bad_line ("checkupdates", lines[i], error);
          return NULL;
        }
      g_ptr_array_add (updates, gl_update_new (w[0], "", w[1], w[3], ""));
    }
  return g_steal_pointer (&updates);
}

/* --- apk list --upgradable ---
 *
 *   name-1.2.3-r4 x86_64 {origin} (license) [upgradable from: name-1.2.3-r3]
 *
 * An apk version is the last two dash-separated parts ("1.2.3-r4"), as
 * apk splits a package's file name. */
static gboolean
apk_split (const char *s, char **name, char **version)
{
  const char *r = strrchr (s, '-');
  const char *v;

  if (r == NULL || r == s || r[1] != 'r' || !g_ascii_isdigit (r[2]))
    return FALSE;
  for (v = r - 1; v > s && *v != '-'; v--)
    ;
  if (v == s || !g_ascii_isdigit (v[1]))
    return FALSE;
  *name = g_strndup (s, v - s);
  *version = g_strdup (v + 1);
  return TRUE;
}

GPtrArray *
gl_updates_family_parse_apk (const char *out, GError **error)
{
  g_autoptr(GPtrArray) updates = updates_new ();
  g_auto(GStrv) lines = g_strsplit (out, "\n", -1);

  for (guint i = 0; lines[i] != NULL; i++)
    {
      const char *line = g_strstrip (lines[i]);
      const char *from = strstr (line, " [upgradable from: ");
      g_auto(GStrv) w = NULL;
      g_autofree char *name = NULL;
      g_autofree char *version = NULL;
      g_autofree char *old_name = NULL;
      g_autofree char *old_version = NULL;
      g_autofree char *old = NULL;

      if (line[0] == '\0')
        continue;
      w = g_strsplit (line, " ", 3);
      if (from == NULL || g_strv_length (w) < 2 || !g_str_has_suffix (line, "]") ||
          !apk_split (w[0], &name, &version))
        {
          bad_line ("apk list --upgradable", line, error);
          return NULL;
        }
      from += strlen (" [upgradable from: ");
      old = g_strndup (from, strlen (from) - 1);
      if (!apk_split (old, &old_name, &old_version) || !g_str_equal (old_name, name))
        {
          bad_line ("apk list --upgradable", line, error);
          return NULL;
        }
      g_ptr_array_add (updates, gl_update_new (name, w[1], old_version, version, ""));
    }
  return g_steal_pointer (&updates);
}

/* --- running them --- */

static char *
tail_of (GBytes *bytes, guint n)
{
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;
  guint len;

  if (bytes == NULL || g_bytes_get_size (bytes) == 0)
    return g_strdup ("");
  text = g_utf8_make_valid (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
  lines = g_strsplit (g_strstrip (text), "\n", -1);
  len = g_strv_length (lines);
  return g_strjoinv ("\n", lines + (len > n ? len - n : 0));
}

static char *
bytes_text (GBytes *bytes)
{
  if (bytes == NULL)
    return g_strdup ("");
  return g_utf8_make_valid (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
}

/* Runs argv in the sandbox; the exit status in *status (-1: killed).
 * FALSE only when the launcher could not be started or was cancelled. */
static gboolean
run_in_sandbox (const char *sandbox_id, const char * const *argv, GlSpawnResult *res, int *status,
                GCancellable *cancellable, GError **error)
{
  g_autoptr(GPtrArray) args = g_ptr_array_new ();
  GlSpawnOptions opts = { .output = GL_SPAWN_OUTPUT_CAPTURE };
  g_autoptr(GError) local = NULL;

  g_ptr_array_add (args, (char *) gl_paths_launcher ());
  g_ptr_array_add (args, (char *) sandbox_id);
  g_ptr_array_add (args, "--");
  for (guint i = 0; argv[i] != NULL; i++)
    g_ptr_array_add (args, (char *) argv[i]);
  g_ptr_array_add (args, NULL);

  if (!gl_spawn_run ((const char * const *) args->pdata, &opts, res, cancellable, &local) &&
      !g_error_matches (local, GL_SPAWN_ERROR, GL_SPAWN_ERROR_FAILED))
    {
      g_propagate_prefixed_error (error, g_steal_pointer (&local), "Cannot run the launcher %s: ",
                                  gl_paths_launcher ());
      return FALSE;
    }
  *status = WIFEXITED (res->wait_status) ? WEXITSTATUS (res->wait_status) : -1;
  return TRUE;
}

/* The installed versions of dnf's updates, from the sandbox's rpmdb:
 * one rpm -q for all of them.  A package rpm cannot tell keeps "". */
static void
fill_rpm_installed (const char *sandbox_id, GPtrArray *updates, GCancellable *cancellable)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_auto(GlSpawnResult) res = { 0, NULL, NULL };
  g_autoptr(GHashTable) installed = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr(GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;
  int status;

  if (updates->len == 0)
    return;
  g_ptr_array_add (argv, g_strdup ("rpm"));
  g_ptr_array_add (argv, g_strdup ("-q"));
  g_ptr_array_add (argv, g_strdup ("--qf"));
  g_ptr_array_add (argv, g_strdup ("%{NAME}.%{ARCH} %|EPOCH?{%{EPOCH}:}:{}|%{VERSION}-%{RELEASE}\\n"));
  for (guint i = 0; i < updates->len; i++)
    {
      const GlUpdate *u = updates->pdata[i];

      if (!g_hash_table_contains (seen, u->name))
        {
          g_hash_table_add (seen, u->name);
          g_ptr_array_add (argv, g_strdup (u->name));
        }
    }
  g_ptr_array_add (argv, NULL);
  if (!run_in_sandbox (sandbox_id, (const char * const *) argv->pdata, &res, &status, cancellable, &error))
    {
      g_debug ("rpm -q in %s: %s", sandbox_id, error->message);
      return;
    }
  text = bytes_text (res.out);
  lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      const char *sp = strchr (lines[i], ' ');

      if (sp != NULL && strchr (sp + 1, ' ') == NULL && sp[1] != '\0')
        g_hash_table_replace (installed, g_strndup (lines[i], sp - lines[i]), g_strdup (sp + 1));
    }
  for (guint i = 0; i < updates->len; i++)
    {
      GlUpdate *u = updates->pdata[i];
      g_autofree char *key = g_strdup_printf ("%s.%s", u->name, u->arch);
      const char *v = g_hash_table_lookup (installed, key);

      if (v != NULL)
        {
          g_free (u->installed);
          u->installed = g_strdup (v);
        }
    }
}

static int
compare_updates (gconstpointer a, gconstpointer b)
{
  const GlUpdate *x = *(const GlUpdate * const *) a;
  const GlUpdate *y = *(const GlUpdate * const *) b;
  int c = strcmp (x->name, y->name);

  return c != 0 ? c : strcmp (x->arch, y->arch);
}

GPtrArray *
gl_updates_family_check (const char    *sandbox_id,
                         const char    *family,
                         GCancellable  *cancellable,
                         GError       **error)
{
  const FamilyCheck *c = lookup (family);
  g_auto(GlSpawnResult) res = { 0, NULL, NULL };
  g_autoptr(GPtrArray) updates = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autofree char *cmd = NULL;
  gboolean ok;
  int status;

  if (c == NULL)
    {
      g_set_error (error, GL_UPDATES_FAMILY_ERROR, GL_UPDATES_FAMILY_ERROR_UNSUPPORTED,
                   "Glimpse cannot check sandboxes of the “%s” family for updates", family);
      return NULL;
    }
  cmd = g_strjoinv (" ", (char **) c->argv);
  if (c->unlock)
    {
      /* /bin/sh -c 'rm …; exec "$@"' sh dnf …: a missing dnf is still 127 */
      g_autofree char *sha1 = g_compute_checksum_for_string (G_CHECKSUM_SHA1, DNF_CACHE, -1);
      g_autofree char *script = g_strdup_printf (DNF_UNLOCK, sha1);
      g_autoptr(GPtrArray) argv = g_ptr_array_new ();

      g_ptr_array_add (argv, "/bin/sh");
      g_ptr_array_add (argv, "-c");
      g_ptr_array_add (argv, script);
      g_ptr_array_add (argv, "sh");
      for (guint i = 0; c->argv[i] != NULL; i++)
        g_ptr_array_add (argv, (char *) c->argv[i]);
      g_ptr_array_add (argv, NULL);
      ok = run_in_sandbox (sandbox_id, (const char * const *) argv->pdata, &res, &status,
                           cancellable, error);
    }
  else
    ok = run_in_sandbox (sandbox_id, c->argv, &res, &status, cancellable, error);
  if (!ok)
    return NULL;
  out = bytes_text (res.out);
  err = bytes_text (res.err);
  g_debug ("%s in %s: exit %d", cmd, sandbox_id, status);

  /* the launcher's own statuses (glimpse-launch(1)) */
  if (status == 127)
    {
      g_set_error (error, GL_UPDATES_FAMILY_ERROR, GL_UPDATES_FAMILY_ERROR_NO_TOOL,
                   "%s is not installed in sandbox “%s”, so its updates cannot be checked: "
                   "install it with “sudo glimpse install %s %s”",
                   c->tool, sandbox_id, sandbox_id, c->package);
      return NULL;
    }
  if (status == 125 || status == 126)
    {
      g_autofree char *tail = tail_of (res.err, 2);

      g_set_error (error, GL_UPDATES_FAMILY_ERROR, GL_UPDATES_FAMILY_ERROR_FAILED,
                   "Cannot run “%s” in sandbox “%s”: %s", cmd, sandbox_id,
                   tail[0] ? tail : "the launcher failed");
      return NULL;
    }

  if (g_str_equal (family, "dnf"))
    ok = status == 0 || status == 100;
  else if (g_str_equal (family, "pacman"))
    ok = status == 0 || status == 2;
  else
    /* apk says it could not fetch an index only as a warning and goes
     * on with what it has: that answer would be wrong */
    ok = status == 0 && strstr (err, "WARNING") == NULL && strstr (err, "ERROR") == NULL;
  if (!ok)
    {
      g_autofree char *tail = tail_of (res.err && g_bytes_get_size (res.err) ? res.err : res.out, 3);

      g_set_error (error, GL_UPDATES_FAMILY_ERROR, GL_UPDATES_FAMILY_ERROR_FAILED,
                   "“%s” in sandbox “%s” failed (exit status %d)%s%s", cmd, sandbox_id, status,
                   tail[0] ? ": " : "", tail);
      return NULL;
    }

  if (g_str_equal (family, "dnf"))
    {
      updates = status == 0 ? updates_new () : gl_updates_family_parse_dnf (out, error);
      if (updates != NULL)
        fill_rpm_installed (sandbox_id, updates, cancellable);
    }
  else if (g_str_equal (family, "pacman"))
    updates = status == 2 ? updates_new () : gl_updates_family_parse_checkupdates (out, error);
  else
    updates = gl_updates_family_parse_apk (out, error);
  if (updates == NULL)
    {
      g_prefix_error (error, "In sandbox “%s”: ", sandbox_id);
      return NULL;
    }
  g_ptr_array_sort (updates, compare_updates);
  return g_steal_pointer (&updates);
}
