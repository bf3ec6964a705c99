/* glimpse-launch: the mount machinery, from descriptors (as bubblewrap keeps
 * bind-mount.c apart from bubblewrap.c).  Every function takes what it works
 * on as parameters; nothing here keeps state.  Failures die().
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

/* The mount points of a mount table, in table order. */
typedef struct {
  char **paths;
  char **fstypes;       /* the filesystem type of each */
  char **fsopts;        /* its superblock options ("" when none) */
  size_t n;
} GlLaunchMountTable;

/* Reads a mountinfo-format table from F.  Returns 0, or a
 * negative errno with *ERROR set to a message (malloc'd): a read error part
 * of the way through is an error, never a shorter table. */
int gl_launch_mount_table_parse (FILE *f, const char *name, GlLaunchMountTable *out,
                                 char **error);
/* The SOURCE (mountinfo's field after the type) of every overlay the
 * launcher makes: how a view's own overlays are told from host mounts
 * bound into it (a host's container overlays, say). */
#define GL_LAUNCH_OVERLAY_SOURCE "glimpse"
/* The mount IDs of the overlays named GL_LAUNCH_OVERLAY_SOURCE in the
 * mountinfo-format table F: at most MAX into IDS, *N of them, and (unless
 * TARGETS is NULL) their mount points into TARGETS (the caller frees
 * them).  0, or a negative errno: the read's (EIO when it says none) when
 * reading fails part of the way, -EINVAL for a line not in the format,
 * -E2BIG for more than MAX; never a shorter list. */
int gl_launch_mount_table_overlay_ids (FILE *f, unsigned *ids, char **targets, size_t max,
                                       size_t *n);
/* /proc/self/mountinfo; dies on any error. */
GlLaunchMountTable gl_launch_mount_table_read (void);
/* Gives F (a /proc mount table) a buffer that holds it whole. */
void gl_launch_mount_table_buffer (FILE *f);
void gl_launch_mount_table_clear (GlLaunchMountTable *t);

long gl_launch_mount_openat2 (int dirfd, const char *path, uint64_t flags, uint64_t resolve);

/* Dies with the filesystem context's log (FSFD, or -1) and errno. */
void gl_launch_mount_die_fs (int fsfd, const char *what) __attribute__((noreturn));

/* A new overlay from layer descriptors (top lower first); upper/work may be
 * -1 for a read-only overlay.  Returns a detached mount; -1 with errno
 * EBUSY when the upper or work directory is in use by another overlay.
 * Other failures die. */
int gl_launch_mount_overlay (const int *lowers, size_t n_lowers, int upper, int work,
                             unsigned attrs, const char *what);
/* A new tmpfs (detached) with the given mode and size options. */
int gl_launch_mount_tmpfs (const char *mode, const char *size, unsigned attrs,
                           const char *what);
/* A new proc (detached), nosuid, nodev, noexec. */
int gl_launch_mount_proc (void);
/* A recursive copy of the mount at PATH with ATTRS set; -1 when the path
 * is missing or unreachable and MISSING_OK. */
int gl_launch_mount_clone_tree (const char *path, unsigned attrs, bool missing_ok);
/* Attaches the detached mount MNT on directory TARGET (PATH: for messages). */
void gl_launch_mount_attach (int mnt, int target, const char *path);
/* Attaches detached mount FD at a new directory NAME of the staging
 * directory STAGE; afterwards FD refers to a mount of this namespace. */
void gl_launch_mount_stage_copy (int stage, int fd, const char *name);
/* Reopens directory NAME below DIRFD; it must be the very directory SAME. */
int gl_launch_mount_reopen_same (int dirfd, const char *name, int same, const char *what);
/* Opens PATH (absolute in the view) under root ROOTFD as a directory without
 * following any symbolic link.  Returns -1 with errno set. */
int gl_launch_mount_open_in_view (int rootfd, const char *path);
/* Dies with the right message for a mount point PATH open_in_view refused. */
void gl_launch_mount_die_target (const char *path) __attribute__((noreturn));
/* Makes the directory PATH (absolute) below SKELFD, component by component. */
void gl_launch_mount_skel_mkdir_p (int skelfd, const char *path);
/* Whether the parent directory of PATH (absolute in the view under ROOTFD)
 * is found there, and this process may search it. */
bool gl_launch_mount_parent_searchable (int rootfd, const char *path);
/* Marks directory PATH (absolute) below SKELFD opaque to the overlay: a
 * lookup of PATH in the view stops in SKELFD, below it is not looked at. */
void gl_launch_mount_skel_opaque (int skelfd, const char *path);
/* Makes (0700) and opens directory NAME below PARENT; it must be UID's. */
int gl_launch_mount_open_user_dir (int parent, const char *name, const char *what, uid_t uid);

/* Binds socket NAME of directory DIRFD (SAME, when not NULL: it must be
 * that very socket) over its entry VIEW_PATH in the view under ROOT,
 * read-only and private.  False when there is nothing to pass. */
bool gl_launch_mount_bind_socket (int root, int dirfd, const char *name, const char *view_path,
                                  const struct stat *same);
/* Binds every socket in directory DIR (a host directory shown at VIEW_PATH
 * in the view under ROOT) down to DEPTH levels over its own entry in the
 * view, read-only; at most *BUDGET of them. */
#define GL_LAUNCH_MAX_SOCKETS 256
void gl_launch_mount_bind_sockets (int root, int dir, const char *view_path, int depth,
                                   size_t *budget);
