/* gl-paths.h: where Glimpse keeps things, and the tests' overrides
 *
 * Every location the session programs use comes from here.  The defaults
 * are meson options compiled in (config.h); each has an environment
 * override for the test suite, which counts only when set and not empty.  The setuid launcher honours none of these:
 * its paths are compile-time constants only.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The sandbox store: $GLIMPSE_SANDBOX_DIR, else -Dsandboxdir. */
const char *gl_paths_store_dir (void);

/* The download cache of base images: $GLIMPSE_CACHE_DIR, else -Dcachedir. */
const char *gl_paths_cache_dir (void);

/* The launcher: $GLIMPSE_LAUNCHER, else <bindir>/glimpse-launch. */
const char *gl_paths_launcher (void);

/* The glimpse program itself (for Exec= lines of exports): $GLIMPSE_BIN,
 * else <bindir>/glimpse. */
const char *gl_paths_glimpse (void);

/* The package-operation helper: $GLIMPSE_PKGNS, else
 * <libexecdir>/glimpse-pkgns. */
const char *gl_paths_pkgns (void);

/* What removes a package operation's trash once it has returned:
 * $GLIMPSE_REMOVE_TRASH, else <libexecdir>/glimpse-remove-trash. */
const char *gl_paths_remove_trash (void);

/* The agent's update check, run once per sandbox and check:
 * $GLIMPSE_UPDATES_CHECK, else <libexecdir>/glimpse-updates-check. */
const char *gl_paths_updates_check (void);

/* What the agent's "Update now" runs through pkexec:
 * $GLIMPSE_UPDATE_HELPER, else <libexecdir>/glimpse-update-helper. */
const char *gl_paths_update_helper (void);

/* The administrator's settings (gl-pkg-limits.h, gl-repo.h, …):
 * $GLIMPSE_CONF, else /etc/glimpse/glimpse.conf. */
const char *gl_paths_config_file (void);

/* The profile directories, highest precedence first:
 * $GLIMPSE_PROFILES_PATH (colon-separated), else
 * <sysconfdir>/glimpse/profiles, <datadir>/glimpse/profiles. */
GStrv gl_paths_profile_dirs (void);

/* distro-info-data's tables (ubuntu.csv, debian.csv): $GLIMPSE_DISTRO_INFO_DIR,
 * else /usr/share/distro-info. */
const char *gl_paths_distro_info_dir (void);

G_END_DECLS
