/* gl-paths.c: where Glimpse keeps things, and the tests' overrides
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gl-paths.h"

/* The value of the environment variable @name when set and not empty. */
static const char *
override (const char *name)
{
  const char *value = g_getenv (name);

  return value != NULL && *value != '\0' ? value : NULL;
}

const char *
gl_paths_store_dir (void)
{
  const char *dir = override ("GLIMPSE_SANDBOX_DIR");

  return dir != NULL ? dir : GL_SANDBOX_DIR;
}

const char *
gl_paths_cache_dir (void)
{
  const char *dir = override ("GLIMPSE_CACHE_DIR");

  return dir != NULL ? dir : GL_CACHE_DIR;
}

const char *
gl_paths_launcher (void)
{
  const char *path = override ("GLIMPSE_LAUNCHER");

  return path != NULL ? path : GL_LAUNCHER_PATH;
}

const char *
gl_paths_glimpse (void)
{
  const char *path = override ("GLIMPSE_BIN");

  return path != NULL ? path : GL_BINDIR "/glimpse";
}

const char *
gl_paths_pkgns (void)
{
  const char *path = override ("GLIMPSE_PKGNS");

  return path != NULL ? path : GL_LIBEXECDIR "/glimpse-pkgns";
}

const char *
gl_paths_remove_trash (void)
{
  const char *path = override ("GLIMPSE_REMOVE_TRASH");

  return path != NULL ? path : GL_LIBEXECDIR "/glimpse-remove-trash";
}

const char *
gl_paths_updates_check (void)
{
  const char *path = override ("GLIMPSE_UPDATES_CHECK");

  return path != NULL ? path : GL_LIBEXECDIR "/glimpse-updates-check";
}

const char *
gl_paths_update_helper (void)
{
  const char *path = override ("GLIMPSE_UPDATE_HELPER");

  return path != NULL ? path : GL_UPDATE_HELPER;
}

const char *
gl_paths_config_file (void)
{
  const char *path = override ("GLIMPSE_CONF");

  return path != NULL ? path : "/etc/glimpse/glimpse.conf";
}

GStrv
gl_paths_profile_dirs (void)
{
  const char *env = override ("GLIMPSE_PROFILES_PATH");

  if (env != NULL)
    return g_strsplit (env, ":", -1);
  return g_strdupv ((char *[]) { (char *) GL_ETC_PROFILES_DIR, (char *) GL_PROFILES_DIR, NULL });
}

const char *
gl_paths_distro_info_dir (void)
{
  const char *dir = override ("GLIMPSE_DISTRO_INFO_DIR");

  return dir != NULL ? dir : "/usr/share/distro-info";
}
