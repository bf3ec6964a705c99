/* test-updates-family.c: the parsers of dnf check-update, checkupdates
 * and apk list --upgradable output (the tools' own formats; the dnf check
 * itself runs for real in test-family-updates.sh)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-updates.h"
#include "gl-updates-family.h"
#include "gl-updates-result.h"
#include "gl-notify.h"

static char *
dump (GPtrArray *updates)
{
  g_autoptr(GString) s = g_string_new (NULL);

  for (guint i = 0; i < updates->len; i++)
    {
      const GlUpdate *u = updates->pdata[i];

      g_string_append_printf (s, "%s|%s|%s|%s|%s\n", u->name, u->arch, u->installed, u->candidate, u->suites);
    }
  return g_string_free (g_steal_pointer (&s), FALSE);
}

typedef GPtrArray *(*ParseFunc) (const char *out, GError **error);

/* @parse reads @out as @expected (dump()'s lines) */
static void
assert_parsed (ParseFunc parse, const char *out, const char *expected)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) u = parse (out, &error);
  g_autofree char *d = NULL;

  g_assert_no_error (error);
  d = dump (u);
  g_assert_cmpstr (d, ==, expected);
}

/* @parse refuses each of the @n outputs @bad, the message naming @tool
 * when given */
static void
assert_refused (ParseFunc parse, const char * const *bad, gsize n, const char *tool)
{
  for (gsize i = 0; i < n; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GPtrArray) u = parse (bad[i], &error);

      g_assert_null (u);
      g_assert_error (error, GL_UPDATES_FAMILY_ERROR, GL_UPDATES_FAMILY_ERROR_FAILED);
      if (tool != NULL)
        g_assert_nonnull (strstr (error->message, tool));
    }
}

static void
test_dnf (void)
{
  /* dnf 4's layout: a blank line, one package a line; a name too long
   * for its column pushes the rest onto the next line; obsoletes after */
  const char *out =
    "\n"
    "glibc.x86_64                           2.39-22.fc40                 updates\n"
    "kernel-core.x86_64                     6.11.5-200.fc40              updates\n"
    "python3-some-really-long-package-name-for-wrapping.noarch\n"
    "                                       1:3.2-1.fc40                 updates-testing\n"
    "Obsoleting Packages\n"
    "grub2-tools.x86_64                     1:2.06-1.fc40                updates\n"
    "    grub2-tools-efi.x86_64             1:2.02-1.fc40                @fedora\n";

  assert_parsed (gl_updates_family_parse_dnf, out,
                 "glibc|x86_64||2.39-22.fc40|updates\n"
                 "kernel-core|x86_64||6.11.5-200.fc40|updates\n"
                 "python3-some-really-long-package-name-for-wrapping|noarch||1:3.2-1.fc40|updates-testing\n");
}

static void
test_dnf_bad (void)
{
  const char *bad[] = {
    "glibc.x86_64 2.39-22.fc40 updates extra\n",   /* four fields */
    "glibc 2.39-22.fc40 updates\n",                /* no arch */
    "glibc.x86_64 2.39 updates\n",                 /* no release */
    "glibc.x86_64 2.39-1\n",                       /* cut short */
  };

  assert_refused (gl_updates_family_parse_dnf, bad, G_N_ELEMENTS (bad), "dnf check-update");
}

static void
test_checkupdates (void)
{
  const char *out =
    "linux 6.11.4.arch1-1 -> 6.11.5.arch1-1\n"
    "python-pip 24.2-1 -> 24.3.1-1\n"
    "\n";
  const char *bad[] = { "==> ERROR: Cannot fetch updates\n" };

  assert_parsed (gl_updates_family_parse_checkupdates, out,
                 "linux||6.11.4.arch1-1|6.11.5.arch1-1|\npython-pip||24.2-1|24.3.1-1|\n");
  assert_refused (gl_updates_family_parse_checkupdates, bad, G_N_ELEMENTS (bad), NULL);
}

static void
test_apk (void)
{
  const char *out =
    "busybox-1.36.1-r29 x86_64 {busybox} (GPL-2.0-only) [upgradable from: busybox-1.36.1-r28]\n"
    "py3-3to2-1.1.1-r9 noarch {py3-3to2} (Apache-2.0) [upgradable from: py3-3to2-1.1.1-r8]\n"
    "libcrypto3-3.3.2-r1 aarch64 {openssl} (Apache-2.0) [upgradable from: libcrypto3-3.3.1-r3]\n";

  assert_parsed (gl_updates_family_parse_apk, out,
                 "busybox|x86_64|1.36.1-r28|1.36.1-r29|\n"
                 "py3-3to2|noarch|1.1.1-r8|1.1.1-r9|\n"
                 "libcrypto3|aarch64|3.3.1-r3|3.3.2-r1|\n");
}

static void
test_apk_bad (void)
{
  const char *bad[] = {
    "busybox-1.36.1-r29 x86_64 {busybox} (GPL-2.0-only) [installed]\n",           /* not an upgrade */
    "busybox x86_64 {busybox} (GPL-2.0-only) [upgradable from: busybox-1.36.1-r28]\n", /* no version */
    "busybox-1.36.1-r29 x86_64 {busybox} (GPL-2.0-only) [upgradable from: toybox-1.0-r0]\n",
    "WARNING: fetching https://example.invalid/main: temporary error (try again later)\n",
  };

  assert_refused (gl_updates_family_parse_apk, bad, G_N_ELEMENTS (bad), NULL);
}

static void
test_supported (void)
{
  g_assert_true (gl_updates_family_supported ("dnf"));
  g_assert_true (gl_updates_family_supported ("pacman"));
  g_assert_true (gl_updates_family_supported ("apk"));
  g_assert_false (gl_updates_family_supported ("apt"));   /* checked in C: gl-updates.h */
  g_assert_false (gl_updates_family_supported ("zypper"));
  g_assert_false (gl_updates_family_supported (NULL));
}

/* the notification of a dnf check that could not tell the installed version */
static void
test_notify_without_installed (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) u = gl_updates_family_parse_dnf ("\nglimpse-hello.noarch  1.1-1  glimpse-test\n", &error);
  g_autofree char *summary = NULL;
  g_autofree char *body = NULL;

  g_assert_no_error (error);
  gl_notify_format_updates ("f40", "Fedora", u, TRUE, &summary, &body);
  g_assert_cmpstr (summary, ==, "1 update for Fedora");
  g_assert_nonnull (strstr (body, "glimpse-hello → 1.1-1"));
}

/* glimpse-updates-check's progress lines, as the agent reads them back */
static char *
pending_of (const char *err, GString *other)
{
  g_autoptr(GBytes) b = g_bytes_new (err, strlen (err));

  return gl_updates_result_pending_fetch (b, other);
}

static void
test_pending_fetch (void)
{
  g_autofree char *a = gl_updates_result_format_fetch ("http://a.invalid/dists/x/InRelease", FALSE);
  g_autofree char *a_done = gl_updates_result_format_fetch ("http://a.invalid/dists/x/InRelease", TRUE);
  g_autofree char *b = gl_updates_result_format_fetch ("http://b.invalid/main/Packages.xz", FALSE);
  g_autoptr(GString) other = g_string_new (NULL);
  g_autofree char *text = NULL;
  g_autofree char *p = NULL;

  g_assert_null (pending_of ("", NULL));
  g_assert_null (p = pending_of (a_done, NULL));
  /* started and not ended: that one */
  p = pending_of (a, NULL);
  g_assert_cmpstr (p, ==, "http://a.invalid/dists/x/InRelease");
  g_clear_pointer (&p, g_free);
  /* ended: none; the next one started: it */
  text = g_strconcat (a, a_done, NULL);
  g_assert_null (p = pending_of (text, NULL));
  g_free (text);
  text = g_strconcat (a, a_done, "glimpse-updates-check: something else\n", b, "no newline", NULL);
  p = pending_of (text, other);
  g_assert_cmpstr (p, ==, "http://b.invalid/main/Packages.xz");
  g_assert_cmpstr (other->str, ==, "glimpse-updates-check: something else\nno newline\n");
  g_clear_pointer (&p, g_free);
  /* a line the helper's end cut short is not taken for an address */
  g_assert_null (p = pending_of ("glimpse-updates-check: fetching http://a.inv", NULL));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/updates-family/dnf", test_dnf);
  g_test_add_func ("/updates-family/dnf-bad", test_dnf_bad);
  g_test_add_func ("/updates-family/checkupdates", test_checkupdates);
  g_test_add_func ("/updates-family/apk", test_apk);
  g_test_add_func ("/updates-family/apk-bad", test_apk_bad);
  g_test_add_func ("/updates-family/supported", test_supported);
  g_test_add_func ("/updates-family/notify-without-installed", test_notify_without_installed);
  g_test_add_func ("/updates-result/pending-fetch", test_pending_fetch);
  return g_test_run ();
}
