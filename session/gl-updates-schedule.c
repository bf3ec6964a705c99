/* gl-updates-schedule.c: when the agent checks for updates, and what it
 * tells the user
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-updates-schedule.h"

#include "gl-agent-actions.h"
#include "gl-fsutil.h"
#include "gl-notify.h"
#include "gl-sandbox.h"
#include "gl-paths.h"
#include "gl-updates.h"
#include "gl-updates-result.h"

#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#define DEFAULT_INTERVAL_HOURS 6.0
#define DEFAULT_FIRST_DELAY_S  120
#define JITTER_S               60
#define NETWORK_DEBOUNCE_S     10
#define RETRY_FIRST_S          300   /* back-off: 5 min, 10, 20, … up to the interval */
/* The longest one sandbox's check may take.  libcurl gives up only below
 * 100 B/s for a minute, so a repository that drips faster, or any hang,
 * would otherwise hold every later check up until the agent restarts.
 * A slow but honest mirror (20 KB/s) needs about 10 minutes for a large
 * index (Debian's main Packages.xz, ~10 MB); twice that. */
#define DEFAULT_CHECK_TIMEOUT_S 1200
#define CHECK_KILL_GRACE_S     5     /* SIGTERM, this long, SIGKILL */

typedef struct {
  char      *id;
  GPtrArray *updates;         /* GlUpdate, of the last good check; NULL: none yet */
  char      *announced;       /* key of the set last notified */
  char      *snoozed;         /* key of the set the user said "Later" to */
  char      *reported;        /* the problem the user must act on, last notified */
  guint      failures;
  gint64     retry_at;        /* monotonic µs, 0: none */
  guint      generation;      /* the system generation the last check saw */
} SandboxState;

struct _GlUpdatesSchedule {
  GlAgent        *agent;
  char           *config_file;
  char           *cache_dir;
  GlNotify       *notify;
  GNetworkMonitor *monitor;
  gboolean        network_was_up;
  guint           first_source;
  guint           interval_source;
  guint           network_source;
  guint           retry_source;
  guint           interval_s;
  guint           first_delay_s;
  guint           check_timeout_s;
  GHashTable     *states;     /* id → SandboxState */
  GQueue          pending;    /* GTask of checks waiting for the running one */
  gboolean        running;
  GCancellable   *cancellable;
  gulong          changed_handler;
  gulong          network_handler;
};

static void
sandbox_state_free (SandboxState *st)
{
  g_free (st->id);
  g_clear_pointer (&st->updates, g_ptr_array_unref);
  g_free (st->announced);
  g_free (st->snoozed);
  g_free (st->reported);
  g_free (st);
}

static char *
state_file (GlUpdatesSchedule *self, const char *id)
{
  return g_build_filename (self->cache_dir, "sandboxes", id, "announced", NULL);
}

static SandboxState *
get_state (GlUpdatesSchedule *self, const char *id)
{
  SandboxState *st = g_hash_table_lookup (self->states, id);

  if (st == NULL)
    {
      g_autoptr(GKeyFile) kf = g_key_file_new ();
      g_autofree char *path = state_file (self, id);

      st = g_new0 (SandboxState, 1);
      st->id = g_strdup (id);
      /* what was announced survives the agent (a new login does not
       * repeat a notification the user has seen) */
      if (g_key_file_load_from_file (kf, path, G_KEY_FILE_NONE, NULL))
        {
          st->announced = g_key_file_get_string (kf, "Updates", "Announced", NULL);
          st->snoozed = g_key_file_get_string (kf, "Updates", "Snoozed", NULL);
          st->reported = g_key_file_get_string (kf, "Updates", "Reported", NULL);
        }
      g_hash_table_insert (self->states, st->id, st);
    }
  return st;
}

static void
save_state (GlUpdatesSchedule *self, SandboxState *st)
{
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  g_autofree char *path = state_file (self, st->id);
  g_autofree char *dir = g_path_get_dirname (path);
  g_autoptr(GError) error = NULL;

  if (st->announced)
    g_key_file_set_string (kf, "Updates", "Announced", st->announced);
  if (st->snoozed)
    g_key_file_set_string (kf, "Updates", "Snoozed", st->snoozed);
  if (st->reported)
    g_key_file_set_string (kf, "Updates", "Reported", st->reported);
  if (!gl_mkdir_with_parents (dir, 0700, &error) || !g_key_file_save_to_file (kf, path, &error))
    /* (the daemon's own state, not a library's report: without it a
     * "Later" is forgotten and the same updates notified again after a
     * restart, so the log says so) */
    g_warning ("Cannot save %s, what was notified and put off with “Later” for “%s”: %s",
               path, st->id, error->message);
}

/* The set of updates as a string: "name:arch=candidate" sorted, held and
 * phased left out (they are not what the user is asked to act on). */
static char *
updates_key (GPtrArray *updates)
{
  g_autoptr(GString) s = g_string_new (NULL);

  for (guint i = 0; i < updates->len; i++)
    {
      const GlUpdate *u = updates->pdata[i];

      if (u->held || u->phased)
        continue;
      g_string_append_printf (s, "%s:%s=%s\n", u->name, u->arch, u->candidate);
    }
  return g_string_free (g_steal_pointer (&s), FALSE);
}

/* Something in now that neither announced nor snoozed had. */
static gboolean
has_news (const char *now, const char *announced, const char *snoozed)
{
  g_auto(GStrv) lines = g_strsplit (now, "\n", -1);

  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_autofree char *needle = g_strconcat (lines[i], "\n", NULL);

      if (lines[i][0] == '\0')
        continue;
      if ((announced == NULL || strstr (announced, needle) == NULL) &&
          (snoozed == NULL || strstr (snoozed, needle) == NULL))
        return TRUE;
    }
  return FALSE;
}

static const char *
display_name (GlUpdatesSchedule *self, const char *id)
{
  GlAgentSandbox *s = gl_agent_lookup (self->agent, id);

  return s != NULL && s->name != NULL ? s->name : id;
}

static void
publish (GlUpdatesSchedule *self, const char *id, const char *state, GPtrArray *updates, const char *error)
{
  gl_agent_set_sandbox_property (self->agent, id, "update-state", g_variant_new_string (state));
  if (updates != NULL)
    {
      GVariantBuilder b;

      g_variant_builder_init (&b, G_VARIANT_TYPE ("a(sssssbb)"));
      for (guint i = 0; i < updates->len; i++)
        {
          const GlUpdate *u = updates->pdata[i];

          g_variant_builder_add (&b, "(sssssbb)", u->name, u->arch, u->installed, u->candidate,
                                 u->suites, u->held, u->phased);
        }
      gl_agent_set_sandbox_property (self->agent, id, "updates", g_variant_builder_end (&b));
    }
  gl_agent_set_sandbox_property (self->agent, id, "update-error", error ? g_variant_new_string (error) : NULL);
  if (g_strcmp0 (state, "checking") != 0)
    gl_agent_set_sandbox_property (self->agent, id, "update-checked", g_variant_new_int64 (g_get_real_time ()));
}

/* --- the check of one sandbox, in glimpse-updates-check --- */

/* The check runs in its own short-lived process (glimpse-updates-check):
 * the HTTP client and its TLS stack, the indexes and the tools' output
 * are never mapped into the agent, which stays small between checks. */
typedef struct {
  char        *id;
  GSubprocess *proc;
  GlUpdatesResult *result;   /* out */
  guint        timer;        /* the check's time is up */
  guint        kill_timer;   /* SIGTERM was not enough */
  guint        timeout_s;
  gboolean     timed_out;
} CheckJob;

static void
check_job_free (CheckJob *j)
{
  g_clear_handle_id (&j->timer, g_source_remove);
  g_clear_handle_id (&j->kill_timer, g_source_remove);
  g_free (j->id);
  g_clear_object (&j->proc);
  g_clear_pointer (&j->result, gl_updates_result_free);
  g_free (j);
}

static gboolean
on_check_kill (gpointer data)
{
  CheckJob *j = data;

  j->kill_timer = 0;
  g_debug ("The update check of %s did not end on SIGTERM: killing it", j->id);
  g_subprocess_force_exit (j->proc);
  return G_SOURCE_REMOVE;
}

/* The check's time is up: it is stopped, and its end (the pipe closed,
 * the process reaped) completes it as any other, as a failure. */
static gboolean
on_check_timeout (gpointer data)
{
  CheckJob *j = data;

  j->timer = 0;
  j->timed_out = TRUE;
  g_debug ("The update check of %s has run for %u s: stopping it", j->id, j->timeout_s);
  g_subprocess_send_signal (j->proc, SIGTERM);
  j->kill_timer = g_timeout_add_seconds (CHECK_KILL_GRACE_S, on_check_kill, j);
  return G_SOURCE_REMOVE;
}

static char *
format_duration (guint s)
{
  return s % 60 == 0 ? g_strdup_printf ("%u min", s / 60) : g_strdup_printf ("%u s", s);
}

static void
on_helper_done (GObject *source, GAsyncResult *res, gpointer data)
{
  g_autoptr(GTask) task = data;
  CheckJob *j = g_task_get_task_data (task);
  g_autoptr(GBytes) out = NULL;
  g_autoptr(GBytes) err = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GString) other = g_string_new (NULL);
  g_autofree char *pending = NULL;

  g_clear_handle_id (&j->timer, g_source_remove);
  g_clear_handle_id (&j->kill_timer, g_source_remove);
  if (!g_subprocess_communicate_finish (j->proc, res, &out, &err, &error))
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_subprocess_force_exit (j->proc);   /* the agent is quitting: no check outlives it */
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  /* what the check said on its standard error besides where it was goes
   * where it went before the agent read it: the agent's own */
  pending = gl_updates_result_pending_fetch (err, other);
  if (other->len > 0)
    g_printerr ("%s", other->str);
  j->result = gl_updates_result_parse (out, &error);
  if (j->timed_out && (j->result == NULL || j->result->outcome != GL_UPDATES_RESULT_OK))
    {
      /* (a family check answers SIGTERM with a failure of its tool: not
       * what the user needs to hear) */
      g_autofree char *limit = format_duration (j->timeout_s);

      g_clear_pointer (&j->result, gl_updates_result_free);
      /* the address only when the check said it was fetching it and had
       * not finished: a family's tool fetches unseen */
      if (pending != NULL)
        g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_TIMED_OUT,
                                 "The update check of %s took longer than %s and was stopped while fetching %s, "
                                 "whose repository may be slow or unreachable (glimpse repos %s lists them). "
                                 "It is tried again at the next check.", j->id, limit, pending, j->id);
      else
        g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_TIMED_OUT,
                                 "The update check of %s took longer than %s and was stopped; its repositories "
                                 "(glimpse repos %s lists them) may be slow or unreachable. It is tried again "
                                 "at the next check.", j->id, limit, j->id);
      return;
    }
  if (j->result == NULL)
    {
      g_autofree char *why = !g_subprocess_get_if_exited (j->proc)
                             ? g_strdup_printf ("it was killed by signal %d", g_subprocess_get_term_sig (j->proc))
                             : g_strdup_printf ("it exited with status %d", g_subprocess_get_exit_status (j->proc));

      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_FAILED, "%s: %s (%s)",
                               gl_paths_updates_check (), error->message, why);
      return;
    }
  g_task_return_boolean (task, TRUE);
}

/* In the check, before it runs: it dies with the agent.  GLib sends
 * g_subprocess_force_exit's signal from its worker thread, later: an agent
 * that quits right after asking may be gone before it is sent, and the
 * check, blocked on a slow repository, would go on without it. */
static void
check_dies_with_agent (gpointer data)
{
  if (prctl (PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid () != (pid_t) GPOINTER_TO_INT (data))
    _exit (127);
}

static void
check_spawn (GlUpdatesSchedule *self, GTask *task)
{
  CheckJob *j = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocessLauncher) launcher =
    g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  const char *argv[] = { gl_paths_updates_check (), gl_agent_get_store_dir (self->agent), self->cache_dir,
                         j->id, NULL };

  g_subprocess_launcher_set_child_setup (launcher, check_dies_with_agent, GINT_TO_POINTER (getpid ()), NULL);
  j->proc = g_subprocess_launcher_spawnv (launcher, argv, &error);
  if (j->proc == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      g_object_unref (task);
      return;
    }
  j->timer = g_timeout_add_seconds (j->timeout_s, on_check_timeout, j);
  g_subprocess_communicate_async (j->proc, NULL, g_task_get_cancellable (task), on_helper_done, task);
}

static void run_next (GlUpdatesSchedule *self);
static void arm_retry (GlUpdatesSchedule *self);

static void
notify_if_new (GlUpdatesSchedule *self, SandboxState *st)
{
  g_autofree char *key = updates_key (st->updates);
  g_autoptr(GError) error = NULL;

  if (key[0] == '\0')
    {
      /* nothing to do any more: take the notification away */
      gl_notify_withdraw (self->notify, st->id);
      g_clear_pointer (&st->announced, g_free);
      g_clear_pointer (&st->snoozed, g_free);
      save_state (self, st);
      return;
    }
  if (!has_news (key, st->announced, st->snoozed))
    return;
  if (!gl_notify_updates (self->notify, st->id, display_name (self, st->id), NULL, st->updates, &error))
    {
      g_debug ("Cannot notify the updates of %s: %s", st->id, error->message);
      return;
    }
  g_free (st->announced);
  st->announced = g_steal_pointer (&key);
  save_state (self, st);
}

/* The check of a list of ids: a GTask whose data is the remaining ids. */
typedef struct {
  GPtrArray *ids;
  guint      next;
} Round;

static void
round_free (Round *r)
{
  g_ptr_array_unref (r->ids);
  g_free (r);
}

static void check_one (GlUpdatesSchedule *self, GTask *round_task);

static void
on_checked (GObject *source, GAsyncResult *res, gpointer user_data)
{
  GTask *round_task = user_data;
  GlUpdatesSchedule *self = g_object_get_data (G_OBJECT (round_task), "schedule");
  CheckJob *j = g_task_get_task_data (G_TASK (res));
  g_autoptr(GError) error = NULL;
  GlUpdatesResult *r;
  SandboxState *st;

  if (!g_task_propagate_boolean (G_TASK (res), &error) && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      g_task_return_error (round_task, g_steal_pointer (&error));
      g_object_unref (round_task);
      self->running = FALSE;
      return;
    }
  r = j->result;
  if (r != NULL && r->outcome == GL_UPDATES_RESULT_NO_TOOL)
    {
      /* the user must act: said once (not at every check), and not
       * retried before the next scheduled check or a change of the
       * sandbox (installing the tool is one) */
      st = get_state (self, j->id);
      publish (self, j->id, "error", NULL, r->message);
      if (g_strcmp0 (st->reported, r->message) != 0)
        {
          g_autofree char *summary = g_strdup_printf ("Cannot check %s for updates",
                                                      display_name (self, j->id));

          gl_notify_message (self->notify, j->id, "dialog-warning", summary, r->message, NULL);
          g_free (st->reported);
          st->reported = g_strdup (r->message);
          save_state (self, st);
        }
    }
  else if (r == NULL || r->outcome == GL_UPDATES_RESULT_FAILED)
    {
      const char *message = r != NULL ? r->message : error->message;

      st = get_state (self, j->id);
      st->failures++;
      st->retry_at = g_get_monotonic_time () +
                     (gint64) MIN ((guint64) RETRY_FIRST_S << MIN (st->failures - 1, 10), self->interval_s) * G_USEC_PER_SEC;
      g_debug ("Update check of %s failed (%u in a row; retrying later): %s", j->id, st->failures, message);
      /* the last good answer stays published; the error beside it */
      publish (self, j->id, "error", NULL, message);
      arm_retry (self);
    }
  else if (r->outcome == GL_UPDATES_RESULT_UNSUPPORTED)
    publish (self, j->id, "unsupported", NULL, NULL);
  else
    {
      st = get_state (self, j->id);
      st->failures = 0;
      if (st->reported != NULL)
        {
          g_clear_pointer (&st->reported, g_free);
          save_state (self, st);
        }
      st->retry_at = 0;
      st->generation = r->generation;
      g_clear_pointer (&st->updates, g_ptr_array_unref);
      st->updates = g_steal_pointer (&r->updates);
      g_debug ("Update check of %s: %u update(s)", j->id, st->updates->len);
      publish (self, j->id, st->updates->len ? "updates" : "up-to-date", st->updates, NULL);
      notify_if_new (self, st);
    }
  check_one (self, round_task);
}

static void
check_one (GlUpdatesSchedule *self, GTask *round_task)
{
  Round *r = g_task_get_task_data (round_task);
  g_autoptr(GTask) task = NULL;
  CheckJob *j;

  if (r->next >= r->ids->len)
    {
      g_task_return_boolean (round_task, TRUE);
      g_object_unref (round_task);
      self->running = FALSE;
      run_next (self);
      return;
    }
  j = g_new0 (CheckJob, 1);
  j->id = g_strdup (r->ids->pdata[r->next++]);
  j->timeout_s = self->check_timeout_s;
  publish (self, j->id, "checking", NULL, NULL);
  task = g_task_new (NULL, self->cancellable, on_checked, round_task);
  g_task_set_task_data (task, j, (GDestroyNotify) check_job_free);
  check_spawn (self, g_steal_pointer (&task));
}

static void
run_next (GlUpdatesSchedule *self)
{
  GTask *task;

  if (self->running || g_queue_is_empty (&self->pending))
    return;
  task = g_queue_pop_head (&self->pending);
  self->running = TRUE;
  check_one (self, task);
}

void
gl_updates_schedule_check (GlUpdatesSchedule   *self,
                           const char * const  *ids,
                           GAsyncReadyCallback  callback,
                           gpointer             user_data)
{
  /* the schedule is no GObject: the agent is the task's source, the
   * schedule rides along as data */
  GTask *task = g_task_new (G_OBJECT (self->agent), self->cancellable, callback, user_data);
  Round *r = g_new0 (Round, 1);

  g_task_set_source_tag (task, gl_updates_schedule_check);
  r->ids = g_ptr_array_new_with_free_func (g_free);
  if (ids != NULL && ids[0] != NULL)
    for (guint i = 0; ids[i] != NULL; i++)
      g_ptr_array_add (r->ids, g_strdup (ids[i]));
  else
    {
      GPtrArray *list = gl_agent_list (self->agent);

      for (guint i = 0; i < list->len; i++)
        {
          GlAgentSandbox *s = list->pdata[i];

          g_ptr_array_add (r->ids, g_strdup (s->id));
        }
    }
  g_task_set_task_data (task, r, (GDestroyNotify) round_free);
  g_object_set_data (G_OBJECT (task), "schedule", self);
  g_queue_push_tail (&self->pending, task);
  run_next (self);
}

gboolean
gl_updates_schedule_check_finish (GlUpdatesSchedule  *self,
                                  GAsyncResult       *result,
                                  GError            **error)
{
  return g_task_propagate_boolean (G_TASK (result), error);
}

/* --- when --- */

static void
check_all_quietly (GlUpdatesSchedule *self)
{
  gl_updates_schedule_check (self, NULL, NULL, NULL);
}

static gboolean
on_interval (gpointer data)
{
  check_all_quietly (data);
  return G_SOURCE_CONTINUE;
}

static gboolean
on_first (gpointer data)
{
  GlUpdatesSchedule *self = data;

  self->first_source = 0;
  check_all_quietly (self);
  self->interval_source = g_timeout_add_seconds (self->interval_s, on_interval, self);
  return G_SOURCE_REMOVE;
}

static gboolean
on_retry (gpointer data)
{
  GlUpdatesSchedule *self = data;
  g_autoptr(GPtrArray) due = g_ptr_array_new ();
  GHashTableIter it;
  gpointer value;
  gint64 now = g_get_monotonic_time ();

  self->retry_source = 0;
  g_hash_table_iter_init (&it, self->states);
  while (g_hash_table_iter_next (&it, NULL, &value))
    {
      SandboxState *st = value;

      if (st->retry_at != 0 && st->retry_at <= now)
        {
          st->retry_at = 0;
          g_ptr_array_add (due, st->id);
        }
    }
  g_ptr_array_add (due, NULL);
  if (due->len > 1)
    gl_updates_schedule_check (self, (const char * const *) due->pdata, NULL, NULL);
  arm_retry (self);
  return G_SOURCE_REMOVE;
}

static void
arm_retry (GlUpdatesSchedule *self)
{
  GHashTableIter it;
  gpointer value;
  gint64 earliest = 0;

  g_hash_table_iter_init (&it, self->states);
  while (g_hash_table_iter_next (&it, NULL, &value))
    {
      SandboxState *st = value;

      if (st->retry_at != 0 && (earliest == 0 || st->retry_at < earliest))
        earliest = st->retry_at;
    }
  g_clear_handle_id (&self->retry_source, g_source_remove);
  if (earliest != 0)
    self->retry_source = g_timeout_add_seconds (MAX (1, (earliest - g_get_monotonic_time ()) / G_USEC_PER_SEC),
                                                on_retry, self);
}

static gboolean
on_network_settled (gpointer data)
{
  GlUpdatesSchedule *self = data;

  self->network_source = 0;
  g_debug ("The network is back: checking for updates");
  check_all_quietly (self);
  return G_SOURCE_REMOVE;
}

static void
on_network_changed (GNetworkMonitor *monitor, gboolean available, gpointer data)
{
  GlUpdatesSchedule *self = data;

  if (available && !self->network_was_up && self->network_source == 0)
    self->network_source = g_timeout_add_seconds (NETWORK_DEBOUNCE_S, on_network_settled, self);
  self->network_was_up = available;
}

/* A sandbox changed (the agent re-exported it): when its system
 * generation is a new one, a `glimpse update` (or install) finished —
 * check it again.  Only that: our own property changes come here too. */
static void
on_agent_changed (GlAgent *agent, GStrv ids, gpointer data)
{
  GlUpdatesSchedule *self = data;
  g_autoptr(GPtrArray) again = g_ptr_array_new_with_free_func (g_free);

  for (guint i = 0; ids != NULL && ids[i] != NULL; i++)
    {
      SandboxState *st = g_hash_table_lookup (self->states, ids[i]);
      g_autoptr(GlSandbox) sb = NULL;
      guint gen = 0;

      if (st == NULL || st->updates == NULL)
        continue;
      sb = gl_sandbox_load (gl_agent_get_store_dir (agent), ids[i], NULL);
      if (sb != NULL && gl_sandbox_get_system_generation (sb, &gen, NULL) && gen != st->generation)
        {
          st->generation = gen;
          g_ptr_array_add (again, g_strdup (ids[i]));
        }
    }
  if (again->len > 0)
    {
      g_ptr_array_add (again, NULL);
      gl_updates_schedule_check (self, (const char * const *) again->pdata, NULL, NULL);
    }
}

/* --- "Update now" / "Later" --- */

typedef struct {
  GlUpdatesSchedule *self;
  char              *id;
} UpdateNow;

/* Without polkit: the user's terminal running `sudo glimpse update ID`
 * (sudo asks for the password there; the terminal stays open until
 * Enter, so the outcome can be read).  No terminal either: a notification
 * saying what to run.  A finished update changes the sandbox's system
 * generation, which the agent sees and checks again. */
static void
update_in_terminal (GlUpdatesSchedule *self, const char *id, const char *why)
{
  const char *glimpse = gl_agent_get_export_context (self->agent)->glimpse;
  const char *script = "sudo \"$0\" update \"$1\"; printf '\\nPress Enter to close. '; read x";
  g_auto(GStrv) argv = gl_agent_terminal_argv ((const char *[]) { "/bin/sh", "-c", script, glimpse, id, NULL });
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) p = NULL;
  g_autofree char *summary = g_strdup_printf ("Update %s in a terminal", display_name (self, id));
  g_autofree char *body = NULL;

  if (argv != NULL &&
      (p = g_subprocess_newv ((const char * const *) argv, G_SUBPROCESS_FLAGS_STDIN_INHERIT, &error)) != NULL)
    {
      g_debug ("Update of %s in a terminal (%s)", id, why);
      g_subprocess_wait_async (p, NULL, NULL, NULL);   /* reaped by GLib's child watch */
      return;
    }
  body = g_strdup_printf ("%s.%s%s", why, error ? " No terminal could be opened: " : " No terminal emulator was found.",
                          error ? error->message : "");
  g_debug ("Update of %s: %s", id, body);
  gl_notify_message (self->notify, id, "dialog-information", summary, body, NULL);
}

static void
on_update_done (GObject *source, GAsyncResult *res, gpointer data)
{
  UpdateNow *u = data;
  g_autoptr(GError) error = NULL;
  GlUpdatesRunResult r = gl_updates_run_update_finish (res, &error);
  const char *name;
  g_autofree char *summary = NULL;

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      /* the agent is quitting: the schedule may be gone */
      g_free (u->id);
      g_free (u);
      return;
    }
  name = display_name (u->self, u->id);

  switch (r)
    {
    case GL_UPDATES_RUN_OK:
      summary = g_strdup_printf ("%s is up to date", name);
      gl_notify_message (u->self->notify, u->id, "software-update-available", summary, NULL, NULL);
      {
        const char *ids[] = { u->id, NULL };

        gl_updates_schedule_check (u->self, ids, NULL, NULL);
      }
      break;
    case GL_UPDATES_RUN_DISMISSED:
      g_debug ("Update of %s: authentication dismissed or refused", u->id);
      break;
    case GL_UPDATES_RUN_FAILED:
      summary = g_strdup_printf ("Updating %s failed", name);
      gl_notify_message (u->self->notify, u->id, "dialog-error", summary, error->message, NULL);
      break;
    case GL_UPDATES_RUN_NO_POLKIT:
      update_in_terminal (u->self, u->id, error->message);
      break;
    }
  g_free (u->id);
  g_free (u);
}

static void
on_notify_action (const char *id, GlNotifyAction action, gpointer data)
{
  GlUpdatesSchedule *self = data;
  SandboxState *st = get_state (self, id);

  if (action == GL_NOTIFY_ACTION_LATER)
    {
      /* this set is snoozed until a check finds something new */
      g_free (st->snoozed);
      st->snoozed = st->updates ? updates_key (st->updates) : NULL;
      save_state (self, st);
      gl_notify_withdraw (self->notify, id);
      return;
    }
  {
    UpdateNow *u = g_new0 (UpdateNow, 1);

    u->self = self;
    u->id = g_strdup (id);
    gl_updates_run_update (id, gl_paths_update_helper (), self->cancellable, on_update_done, u);
  }
}

/* --- life --- */

GlUpdatesSchedule *
gl_updates_schedule_new (GlAgent    *agent,
                         const char *config_file,
                         const char *cache_dir)
{
  GlUpdatesSchedule *self = g_new0 (GlUpdatesSchedule, 1);
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  double hours = DEFAULT_INTERVAL_HOURS;
  int first = DEFAULT_FIRST_DELAY_S;
  int timeout = DEFAULT_CHECK_TIMEOUT_S;

  self->agent = g_object_ref (agent);
  self->config_file = g_strdup (config_file);
  self->cache_dir = g_strdup (cache_dir);
  self->states = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) sandbox_state_free);
  self->cancellable = g_cancellable_new ();
  self->notify = gl_notify_new ("Glimpse", on_notify_action, self);
  g_queue_init (&self->pending);
  if (g_key_file_load_from_file (kf, config_file, G_KEY_FILE_NONE, NULL))
    {
      g_autoptr(GError) e1 = NULL;
      g_autoptr(GError) e2 = NULL;
      g_autoptr(GError) e3 = NULL;
      double h = g_key_file_get_double (kf, "Updates", "Interval", &e1);
      int f = g_key_file_get_integer (kf, "Updates", "FirstDelay", &e2);
      int t = g_key_file_get_integer (kf, "Updates", "CheckTimeout", &e3);

      if (e1 == NULL && h > 0)
        hours = h;
      if (e2 == NULL && f >= 0)
        first = f;
      if (e3 == NULL && t > 0)
        timeout = t;
    }
  self->interval_s = MAX (60, (guint) (hours * 3600));
  self->first_delay_s = first;
  self->check_timeout_s = timeout;
  return self;
}

void
gl_updates_schedule_start (GlUpdatesSchedule *self)
{
  guint jitter = self->first_delay_s > 0 ? g_random_int_range (0, JITTER_S) : 0;

  self->first_source = g_timeout_add_seconds (self->first_delay_s + jitter, on_first, self);
  self->monitor = g_object_ref (g_network_monitor_get_default ());
  self->network_was_up = g_network_monitor_get_network_available (self->monitor);
  self->network_handler = g_signal_connect (self->monitor, "network-changed", G_CALLBACK (on_network_changed), self);
  self->changed_handler = g_signal_connect (self->agent, "changed", G_CALLBACK (on_agent_changed), self);
  g_debug ("Update checks: the first in %u s, then every %u s", self->first_delay_s + jitter, self->interval_s);
}

void
gl_updates_schedule_free (GlUpdatesSchedule *self)
{
  if (self == NULL)
    return;
  g_cancellable_cancel (self->cancellable);
  g_clear_handle_id (&self->first_source, g_source_remove);
  g_clear_handle_id (&self->interval_source, g_source_remove);
  g_clear_handle_id (&self->network_source, g_source_remove);
  g_clear_handle_id (&self->retry_source, g_source_remove);
  if (self->network_handler)
    g_signal_handler_disconnect (self->monitor, self->network_handler);
  if (self->changed_handler)
    g_signal_handler_disconnect (self->agent, self->changed_handler);
  g_clear_object (&self->monitor);
  /* a running check finishes in its thread; its callbacks must not come
   * back to a freed schedule: let the main context run them out */
  while (self->running || !g_queue_is_empty (&self->pending))
    {
      if (!self->running)
        {
          GTask *t = g_queue_pop_head (&self->pending);

          g_task_return_new_error (t, G_IO_ERROR, G_IO_ERROR_CANCELLED, "The agent is quitting");
          g_object_unref (t);
          continue;
        }
      g_main_context_iteration (NULL, TRUE);
    }
  gl_notify_free (self->notify);
  g_hash_table_unref (self->states);
  g_clear_object (&self->cancellable);
  g_object_unref (self->agent);
  g_free (self->config_file);
  g_free (self->cache_dir);
  g_free (self);
}
