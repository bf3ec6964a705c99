/* glimpse-launch: checks of the sandbox store, made as root on root's own
 * state: the trusted path walk, sandbox.conf, users/<uid>, the locks.
 * Failures die() with a message saying what to do.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

/* users/.views/: root's records and locks of the users' running views. */
#define GL_LAUNCH_VIEWS_DIR ".views"

/* One sandbox as checked, held by descriptors (-1: none). */
typedef struct {
  const char *id;
  bool host_base;       /* Base=host: the host's / is the base */
  int sandbox_fd;       /* <store>/<id>/ */
  int rootfs_fd;        /* rootfs/, or -1 for Base=host */
  int sysupper_fd;      /* system/<N>/tree, or -1: no system layer */
  unsigned long generation; /* N, or 0 */
  int gen_lock_fd;      /* system/<N>/lock, shared (privileged only: without
                         * privilege users/<uid>/lock stands for it, and
                         * gl_launch_store_recheck_generation) */
  int userdir_fd;       /* users/<uid>/, the caller's */
  int lock_fd;          /* lock, shared (privileged only) */
  int user_lock_fd;     /* users/<uid>/lock, shared */
  int views_fd;         /* users/.views/ (root's, 0700; privileged only) */
  bool query;           /* set before opening: only looked at (--held), no lock
                         * of the sandbox or its generation taken (an
                         * administrator's operation may hold them) */
} GlLaunchSandbox;

#define GL_LAUNCH_SANDBOX_INIT { NULL, false, -1, -1, -1, 0, -1, -1, -1, -1, -1, false }

/* Dies unless FD is owned by root, not group/world-writable, of TYPE
 * (S_IFDIR, S_IFREG) and on a local filesystem. */
void gl_launch_store_check_trusted (int fd, const char *what, mode_t type);
/* Opens the absolute, canonical PATH one component at a time without
 * following links, checking each directory on the way. */
int gl_launch_store_open_trusted_path (const char *path);
/* Opens NAME below DIRFD (O_PATH for directories) and checks it as above;
 * -1 when missing and MISSING_OK. */
int gl_launch_store_open_trusted_at (int dirfd, const char *name, const char *what,
                                     mode_t type, bool missing_ok);

/* Opens and checks sandbox ID of the store at STORE for UID/GID: its
 * sandbox.conf and layers, the sandbox lock (shared, when PRIVILEGED and
 * not SB->query),
 * users/<uid>/ (made by root when PRIVILEGED and missing) and, when
 * PRIVILEGED, users/.views/ (made by root when missing): where root keeps
 * what no user may change, the record of each user's running view and the
 * lock that serialises finding, building and joining it. */
void gl_launch_store_open (GlLaunchSandbox *sb, const char *store, const char *id,
                           uid_t uid, gid_t gid, bool privileged);
/* Takes the caller's lock users/<uid>/lock, shared; run with the caller's
 * filesystem ids (it is made as theirs). */
void gl_launch_store_lock_user (GlLaunchSandbox *sb, uid_t uid);
/* Without privilege, once the caller's lock is held: the generation's lock
 * (root's) cannot be held, and the caller's lock stands for it (package
 * operations keep every old generation while a view without privilege may
 * hold it); a generation an operation switched away from before the lock
 * was held may be going, so if system/current names another one now, that
 * one is opened instead. */
void gl_launch_store_recheck_generation (GlLaunchSandbox *sb);
