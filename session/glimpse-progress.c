/* glimpse-progress.c: the download progress bar of the command line
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "glimpse-progress.h"

#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>

struct _GlCliProgress {
  char     *label;
  gboolean  is_terminal;
  gboolean  started;
  gboolean  drawn;         /* a bar is on the terminal line */
  gint64    start_time;
  guint64   start_received;
  gint64    last_draw;
  int       last_bucket;   /* last 10% step printed */
  guint64   last_mark;     /* last size printed when the total is unknown */
  guint64   received;
  guint64   total;
};

GlCliProgress *
gl_cli_progress_new (const char *label, gboolean is_terminal)
{
  GlCliProgress *self = g_new0 (GlCliProgress, 1);

  self->label = g_strdup (label != NULL ? label : "download");
  self->is_terminal = is_terminal;
  self->last_bucket = 0;
  return self;
}

static int
terminal_width (void)
{
  struct winsize ws;

  if (ioctl (STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
    return ws.ws_col;
  return 80;
}

static void
progress_draw (GlCliProgress *self, gint64 now)
{
  g_autoptr(GString) right = g_string_new (NULL);
  g_autoptr(GString) line = g_string_new ("\r");
  g_autofree char *received = g_format_size_full (self->received, G_FORMAT_SIZE_IEC_UNITS);
  double elapsed = (now - self->start_time) / (double) G_USEC_PER_SEC;
  int width = terminal_width () - 1;
  int label_len = MIN ((int) g_utf8_strlen (self->label, -1), width / 3);
  int bar;

  if (self->total > 0)
    {
      g_autofree char *total = g_format_size_full (self->total, G_FORMAT_SIZE_IEC_UNITS);
      g_string_append_printf (right, " %3d%% %s of %s",
                              (int) (self->received * 100 / self->total), received, total);
    }
  else
    g_string_append_printf (right, " %s", received);

  if (elapsed >= 0.5 && self->received >= self->start_received)
    {
      g_autofree char *rate =
        g_format_size_full ((guint64) ((self->received - self->start_received) / elapsed),
                            G_FORMAT_SIZE_IEC_UNITS);
      g_string_append_printf (right, " %s/s", rate);
    }

  g_string_append_len (line, self->label,
                       g_utf8_offset_to_pointer (self->label, label_len) - self->label);
  bar = width - label_len - (int) right->len - 3;
  if (self->total > 0 && bar >= 10)
    {
      int filled = (int) (self->received * (guint64) bar / self->total);
      int i;

      g_string_append (line, " [");
      for (i = 0; i < bar; i++)
        g_string_append_c (line, i < filled ? '#' : '-');
      g_string_append_c (line, ']');
    }
  g_string_append (line, right->str);
  g_string_append (line, "\033[K");

  fputs (line->str, stderr);
  fflush (stderr);
  self->drawn = TRUE;
  self->last_draw = now;
}

void
gl_cli_progress_update (guint64 received, guint64 total, gpointer user_data)
{
  GlCliProgress *self = user_data;
  gint64 now = g_get_monotonic_time ();

  g_return_if_fail (self != NULL);

  if (!self->started)
    {
      self->started = TRUE;
      self->start_time = now;
      self->start_received = received;
    }
  self->received = received;
  self->total = total;

  if (self->is_terminal)
    {
      if (!self->drawn || now - self->last_draw >= G_USEC_PER_SEC / 10 ||
          (total > 0 && received == total))
        progress_draw (self, now);
      return;
    }

  if (total > 0)
    {
      int bucket = (int) (MIN (received, total) * 10 / total);

      if (bucket > self->last_bucket)
        {
          g_autofree char *r = g_format_size_full (received, G_FORMAT_SIZE_IEC_UNITS);
          g_autofree char *t = g_format_size_full (total, G_FORMAT_SIZE_IEC_UNITS);

          self->last_bucket = bucket;
          fprintf (stderr, "%s: %d%% (%s of %s)\n", self->label,
                   (int) (MIN (received, total) * 100 / total), r, t);
          fflush (stderr);
        }
    }
  else if (received >= self->last_mark + 16 * 1024 * 1024)
    {
      g_autofree char *r = g_format_size_full (received, G_FORMAT_SIZE_IEC_UNITS);

      self->last_mark = received;
      fprintf (stderr, "%s: %s\n", self->label, r);
      fflush (stderr);
    }
}

void
gl_cli_progress_free (GlCliProgress *self)
{
  if (self == NULL)
    return;

  if (self->is_terminal && self->drawn)
    {
      progress_draw (self, g_get_monotonic_time ());
      fputc ('\n', stderr);
      fflush (stderr);
    }
  g_free (self->label);
  g_free (self);
}
