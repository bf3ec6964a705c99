/* gl-updates-result.c: one sandbox's update check between
 * glimpse-updates-check and the agent
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-updates-result.h"

#include "gl-updates.h"

#include <string.h>

#define RESULT_TYPE "(uusa(sssssbb))"
#define FETCHING    "glimpse-updates-check: fetching "
#define FETCHED     "glimpse-updates-check: fetched "

GlUpdate *
gl_update_new (const char *name,
               const char *arch,
               const char *installed,
               const char *candidate,
               const char *suites)
{
  GlUpdate *u = g_new0 (GlUpdate, 1);

  u->name = g_strdup (name);
  u->arch = g_strdup (arch);
  u->installed = g_strdup (installed);
  u->candidate = g_strdup (candidate);
  u->suites = g_strdup (suites);
  return u;
}

void
gl_update_free (GlUpdate *u)
{
  if (u == NULL)
    return;
  g_free (u->name);
  g_free (u->arch);
  g_free (u->installed);
  g_free (u->candidate);
  g_free (u->suites);
  g_free (u);
}

void
gl_updates_result_free (GlUpdatesResult *result)
{
  if (result == NULL)
    return;
  g_free (result->message);
  g_clear_pointer (&result->updates, g_ptr_array_unref);
  g_free (result);
}

GBytes *
gl_updates_result_serialize (GlUpdatesOutcome  outcome,
                             guint             generation,
                             const char       *message,
                             GPtrArray        *updates)
{
  g_autoptr(GVariant) v = NULL;
  GVariantBuilder b;

  g_variant_builder_init (&b, G_VARIANT_TYPE ("a(sssssbb)"));
  for (guint i = 0; updates != NULL && i < updates->len; i++)
    {
      const GlUpdate *u = updates->pdata[i];

      g_variant_builder_add (&b, "(sssssbb)", u->name, u->arch, u->installed, u->candidate,
                             u->suites, u->held, u->phased);
    }
  v = g_variant_ref_sink (g_variant_new ("(uus@a(sssssbb))", (guint32) outcome, (guint32) generation,
                                         message != NULL ? message : "", g_variant_builder_end (&b)));
  return g_variant_get_data_as_bytes (v);
}

GlUpdatesResult *
gl_updates_result_parse (GBytes   *bytes,
                         GError  **error)
{
  g_autoptr(GVariant) v = g_variant_ref_sink (g_variant_new_from_bytes (G_VARIANT_TYPE (RESULT_TYPE), bytes, FALSE));
  g_autoptr(GlUpdatesResult) r = g_new0 (GlUpdatesResult, 1);
  g_autoptr(GVariantIter) it = NULL;
  guint32 outcome, generation;
  const char *name, *arch, *installed, *candidate, *suites;
  gboolean held, phased;

  if (g_bytes_get_size (bytes) == 0 || !g_variant_is_normal_form (v))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "The update check gave no result (%" G_GSIZE_FORMAT " bytes that are not one)",
                   g_bytes_get_size (bytes));
      return NULL;
    }
  g_variant_get (v, "(uusa(sssssbb))", &outcome, &generation, &r->message, &it);
  if (outcome > GL_UPDATES_RESULT_FAILED)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "The update check gave an unknown outcome (%u)",
                   outcome);
      return NULL;
    }
  r->outcome = outcome;
  r->generation = generation;
  r->updates = g_ptr_array_new_with_free_func ((GDestroyNotify) gl_update_free);
  while (g_variant_iter_next (it, "(&s&s&s&s&sbb)", &name, &arch, &installed, &candidate, &suites, &held, &phased))
    {
      GlUpdate *u = gl_update_new (name, arch, installed, candidate, suites);

      u->held = held;
      u->phased = phased;
      g_ptr_array_add (r->updates, u);
    }
  return g_steal_pointer (&r);
}

char *
gl_updates_result_format_fetch (const char *url,
                                gboolean    done)
{
  return g_strconcat (done ? FETCHED : FETCHING, url, "\n", NULL);
}

char *
gl_updates_result_pending_fetch (GBytes  *err,
                                 GString *other)
{
  g_autofree char *pending = NULL;
  const char *p, *end;
  gsize size = 0;

  if (err == NULL)
    return NULL;
  p = g_bytes_get_data (err, &size);
  end = p + size;
  while (p < end)
    {
      const char *nl = memchr (p, '\n', end - p);
      gsize len = nl != NULL ? (gsize) (nl - p) : (gsize) (end - p);

      /* (a line cut short by the helper's end is no progress line) */
      if (nl != NULL && len > strlen (FETCHING) && strncmp (p, FETCHING, strlen (FETCHING)) == 0)
        {
          g_free (pending);
          pending = g_utf8_make_valid (p + strlen (FETCHING), len - strlen (FETCHING));
        }
      else if (nl != NULL && len > strlen (FETCHED) && strncmp (p, FETCHED, strlen (FETCHED)) == 0)
        {
          g_autofree char *url = g_utf8_make_valid (p + strlen (FETCHED), len - strlen (FETCHED));

          if (g_strcmp0 (url, pending) == 0)
            g_clear_pointer (&pending, g_free);
        }
      else if (other != NULL)
        {
          g_string_append_len (other, p, len);
          g_string_append_c (other, '\n');
        }
      p += len + (nl != NULL ? 1 : 0);
    }
  return g_steal_pointer (&pending);
}
