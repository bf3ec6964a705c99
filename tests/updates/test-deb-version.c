/* test-deb-version.c: Debian version ordering, differential against dpkg
 *
 * The oracle is dpkg itself: its library (libdpkg, linked in, so 200,000
 * generated pairs take well under a second) for every pair, and the
 * installed `dpkg --compare-versions` for a sample, which shows the library
 * agrees with the dpkg on this machine.  Pairs come from g_test_rand_*,
 * so a failure is reproduced with the --seed the run printed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-deb-version.h"
#include "gl-test-skip.h"

#include <gio/gio.h>
#include <string.h>

#ifdef HAVE_LIBDPKG
#define LIBDPKG_VOLATILE_API 1
#include <dpkg/dpkg.h>
#include <dpkg/varbuf.h>
#include <dpkg/dpkg-db.h>
#include <dpkg/version.h>
#include <dpkg/parsedump.h>
#endif

#define N_PAIRS 200000
#define N_DPKG_SAMPLE 400

static int
sign (int v)
{
  return (v > 0) - (v < 0);
}

/* Fixed cases from deb-version(7) and dpkg's own test suite. */
static void
test_known (void)
{
  static const struct { const char *a, *b; int r; } cases[] = {
    { "1.0", "1.0", 0 },
    { "1.0", "1.00", 0 },
    { "1.0", "1.0-0", 0 },
    { "0:1.0", "1.0", 0 },
    { "1.0~rc1", "1.0", -1 },
    { "1.0~~", "1.0~", -1 },
    { "1.0~~a", "1.0~~", 1 },
    { "1.0~", "1.0", -1 },
    { "1.0", "1.0a", -1 },
    { "1.0a", "1.0+", -1 },
    { "1.0+", "1.0.", -1 },
    { "1.0.", "1.0.1", -1 },
    { "1:0.1", "2.0", 1 },
    { "2:0", "10:0", -1 },
    { "1.2-3", "1.2-10", -1 },
    { "1.2-3ubuntu1", "1.2-3", 1 },
    { "1.2-3+deb12u1", "1.2-3", 1 },
    { "1.2-3~bpo12+1", "1.2-3", -1 },
    { "7.6p2-4", "7.6-0", 1 },
    { "1.0.3-3", "1.0-1", 1 },
    { "1.3", "1.2.2-2", 1 },
    { "1.3", "1.2.2", 1 },
    { "0-pre", "0-pre", 0 },
    { "0-pre", "0-pree", -1 },
    { "1.1.6r2-2", "1.1.6r-1", 1 },
    { "2.6b2-1", "2.6b-2", 1 },
    { "98.1p5-1", "98.1-pre2-b6-2", -1 },
    { "0.4a6-2", "0.4-1", 1 },
    { "1:3.0.5-2", "1:3.0.5.1", -1 },
    { "10.11.1.3-2", "10.11.1.3-1", 1 },
    { "4.4.3-2", "4.4.3-2", 0 },
    { "1:2.14.2-1", "1:2.14.2-1", 0 },
    { "0000000000000000000000000001", "1", 0 },
    { "18446744073709551616", "18446744073709551615", 1 },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      int r = sign (gl_deb_version_compare (cases[i].a, cases[i].b));
      int back = sign (gl_deb_version_compare (cases[i].b, cases[i].a));

      if (r != cases[i].r || back != -cases[i].r)
        g_error ("compare(%s, %s) = %d (reverse %d), expected %d",
                 cases[i].a, cases[i].b, r, back, cases[i].r);
    }
}

static void
test_check (void)
{
  static const char *good[] = {
    "1", "0", "1.0-1", "1:2.3", "2:1.0~rc1+dfsg-3ubuntu0.1", "1.0-1-2",
    "1:2:3-4", "0.0.0~", "9-a", "1.0+really0.9-1~bpo1",
  };
  static const char *bad[] = {
    "", "a1", "1 0", ":1", "a:1", "1:", "1.0-", "1.0-a_b", "1_0", "1.0\t",
    "1:a", "1234567890:1",
  };

  for (gsize i = 0; i < G_N_ELEMENTS (good); i++)
    {
      g_autoptr(GError) error = NULL;

      if (!gl_deb_version_check (good[i], &error))
        g_error ("\"%s\" rejected: %s", good[i], error->message);
    }
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GError) error = NULL;

      if (gl_deb_version_check (bad[i], &error))
        g_error ("\"%s\" accepted", bad[i]);
      g_assert_error (error, GL_DEB_VERSION_ERROR, GL_DEB_VERSION_ERROR_INVALID);
      g_assert_nonnull (strstr (error->message, "\""));
    }
}

/* Random versions built from the pieces that make orderings interesting:
 * digit runs with leading zeros, letters of both cases, '~' '+' '.' '-'. */
static void
append_token (GString *s, gboolean upstream, gboolean may_hyphen, gboolean may_colon)
{
  static const char *letters = "abzABZ";
  guint kind = g_test_rand_int_range (0, upstream ? 8 : 7);

  switch (kind)
    {
    case 0: case 1:
      if (g_test_rand_int_range (0, 6) == 0)
        g_string_append_c (s, '0');
      g_string_append_printf (s, "%d", g_test_rand_int_range (0, 12));
      break;
    case 2:
      g_string_append_c (s, '.');
      break;
    case 3:
      g_string_append_c (s, letters[g_test_rand_int_range (0, 6)]);
      break;
    case 4:
      g_string_append_c (s, '~');
      break;
    case 5:
      g_string_append_c (s, '+');
      break;
    case 6:
      g_string_append_printf (s, "%d", g_test_rand_int_range (0, 1000));
      break;
    default:
      if (may_hyphen && g_test_rand_bit ())
        g_string_append_c (s, '-');
      else if (may_colon)
        g_string_append_c (s, ':');
      else
        g_string_append_c (s, '.');
      break;
    }
}

static char *
random_version (void)
{
  GString *s = g_string_new (NULL);
  gboolean epoch = g_test_rand_int_range (0, 5) == 0;
  gboolean revision = g_test_rand_bit ();
  guint n;

  if (epoch)
    g_string_append_printf (s, "%d:", g_test_rand_int_range (0, 4));
  g_string_append_printf (s, "%d", g_test_rand_int_range (0, 4));
  n = g_test_rand_int_range (0, 6);
  for (guint i = 0; i < n; i++)
    append_token (s, TRUE, revision, epoch);
  if (revision)
    {
      g_string_append_c (s, '-');
      if (g_test_rand_bit ())
        g_string_append_printf (s, "%d", g_test_rand_int_range (0, 4));
      else
        append_token (s, FALSE, FALSE, FALSE);
      n = g_test_rand_int_range (0, 4);
      for (guint i = 0; i < n; i++)
        append_token (s, FALSE, FALSE, FALSE);
    }
  return g_string_free (s, FALSE);
}

/* A near neighbour of v: one character changed, inserted or removed, or a
 * suffix appended, so that most pairs share a long prefix. */
static char *
mutate_version (const char *v)
{
  static const char *chars = "0123456789~+.aZ";
  GString *s = g_string_new (v);
  gsize pos = g_test_rand_int_range (1, s->len + 1);
  char c = chars[g_test_rand_int_range (0, strlen (chars))];

  switch (g_test_rand_int_range (0, 4))
    {
    case 0:
      if (pos < s->len && s->str[pos] != '-' && s->str[pos] != ':')
        s->str[pos] = c;
      break;
    case 1:
      g_string_insert_c (s, pos, c);
      break;
    case 2:
      if (pos < s->len && s->str[pos] != '-' && s->str[pos] != ':')
        g_string_erase (s, pos, 1);
      break;
    default:
      g_string_append_c (s, c);
      break;
    }
  return g_string_free (s, FALSE);
}

#ifdef HAVE_LIBDPKG
/* dpkg's verdict on a version: 0 valid, 1 warning (dpkg accepts it but
 * complains), -1 rejected. */
static int
dpkg_parse (const char *v, struct dpkg_version *out)
{
  struct dpkg_error err = DPKG_ERROR_INIT;
  int r = parseversion (out, v, &err);
  int verdict = r < 0 ? -1 : err.type == DPKG_MSG_WARN ? 1 : 0;

  dpkg_error_destroy (&err);
  return verdict;
}

static int
dpkg_binary_compare (const char *a, const char *b)
{
  const char *lt[] = { "dpkg", "--compare-versions", a, "lt", b, NULL };
  const char *eq[] = { "dpkg", "--compare-versions", a, "eq", b, NULL };
  g_autoptr(GError) error = NULL;
  int status = 0;

  if (!g_spawn_sync (NULL, (char **) lt, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDERR_TO_DEV_NULL,
                     NULL, NULL, NULL, NULL, &status, &error))
    g_error ("dpkg: %s", error->message);
  if (g_spawn_check_wait_status (status, NULL))
    return -1;
  if (!g_spawn_sync (NULL, (char **) eq, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDERR_TO_DEV_NULL,
                     NULL, NULL, NULL, NULL, &status, &error))
    g_error ("dpkg: %s", error->message);
  return g_spawn_check_wait_status (status, NULL) ? 0 : 1;
}

static void
test_differential (void)
{
  guint compared = 0, invalid = 0, sampled = 0, lt = 0, eq = 0, gt = 0;
  gint64 start = g_get_monotonic_time ();

  dpkg_set_progname ("test-deb-version");

  for (guint i = 0; i < N_PAIRS; i++)
    {
      g_autofree char *a = random_version ();
      g_autofree char *b = g_test_rand_int_range (0, 10) < 7 ? mutate_version (a) : random_version ();
      struct dpkg_version da, db;
      int va = dpkg_parse (a, &da), vb = dpkg_parse (b, &db);
      int mine, theirs;

      /* Validation: what dpkg rejects, we reject; what it takes without a
       * warning, we take (we also refuse what dpkg only warns about). */
      if ((va < 0 && gl_deb_version_check (a, NULL)) || (va == 0 && !gl_deb_version_check (a, NULL)))
        g_error ("validity of \"%s\": dpkg %d, ours %d", a, va, gl_deb_version_check (a, NULL));
      if (va < 0 || vb < 0)
        {
          invalid++;
          continue;
        }

      mine = sign (gl_deb_version_compare (a, b));
      theirs = sign (dpkg_version_compare (&da, &db));
      if (mine != theirs)
        g_error ("compare(\"%s\", \"%s\"): ours %d, dpkg %d", a, b, mine, theirs);
      if (sign (gl_deb_version_compare (b, a)) != -theirs)
        g_error ("compare(\"%s\", \"%s\") is not antisymmetric", b, a);
      compared++;
      lt += theirs < 0;
      eq += theirs == 0;
      gt += theirs > 0;

      if (sampled < N_DPKG_SAMPLE && i % (N_PAIRS / N_DPKG_SAMPLE) == 0)
        {
          int bin = dpkg_binary_compare (a, b);

          if (bin != theirs)
            g_error ("dpkg --compare-versions \"%s\" \"%s\" gives %d, libdpkg %d", a, b, bin, theirs);
          sampled++;
        }
    }

  g_test_message ("%u pairs compared (%u <, %u =, %u >), %u with an invalid side skipped, "
                  "%u checked with the dpkg program too, %.2f s",
                  compared, lt, eq, gt, invalid, sampled,
                  (g_get_monotonic_time () - start) / 1e6);
  g_assert_cmpuint (compared, >=, 100000);
  g_assert_cmpuint (sampled, >=, N_DPKG_SAMPLE / 2);
  /* the generator must exercise all three outcomes in earnest */
  g_assert_cmpuint (lt, >, compared / 10);
  g_assert_cmpuint (gt, >, compared / 10);
  g_assert_cmpuint (eq, >, 100);
}
#else
static void
test_differential (void)
{
  gl_test_skip ("libdpkg-dev is not installed: dpkg's library is the oracle (apt-get install libdpkg-dev)");
}
#endif

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/deb-version/known", test_known);
  g_test_add_func ("/deb-version/check", test_check);
  g_test_add_func ("/deb-version/differential", test_differential);

  return g_test_run ();
}
