/* glimpse-launch: checks of the sandbox store.  See gl-launch-store.h.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE

#include "gl-launch-store.h"
#include "gl-launch-die.h"
#include "gl-launch-pure.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

static bool
fs_is_refused (int fd, const char **name)
{
  struct statfs sfs;
  static const struct { long magic; const char *name; } bad[] = {
    { 0x65735546, "FUSE" }, { NFS_SUPER_MAGIC, "NFS" }, { SMB_SUPER_MAGIC, "SMB" },
    { (long) 0xFF534D42, "CIFS" }, { (long) 0xFE534D42, "SMB2" }, { 0x00c36400, "Ceph" },
    { V9FS_MAGIC, "9p" }, { AFS_SUPER_MAGIC, "AFS" }, { CODA_SUPER_MAGIC, "Coda" },
    { 0x01161970, "GFS2" }, { 0x7461636f, "OCFS2" }, { 0x19830326, "FhGFS" },
    { 0x47504653, "GPFS" }, { 0x0BD00BD0, "Lustre" },
  };
  if (fstatfs (fd, &sfs) != 0)
    {
      *name = "unknown (fstatfs failed)";
      return true;
    }
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    if ((long) sfs.f_type == bad[i].magic)
      {
        *name = bad[i].name;
        return true;
      }
  return false;
}

/* fd must be root-owned, not group/world-writable, of the given type, on a
 * local filesystem. */
void
gl_launch_store_check_trusted (int fd, const char *what, mode_t type)
{
  struct stat st;
  const char *fsname = NULL;

  if (fstat (fd, &st) != 0)
    die_with_error ("cannot check %s", what);
  if ((st.st_mode & S_IFMT) != type)
    die ("sandbox not usable: %s is %s; ask your administrator to recreate the sandbox",
         what, S_ISLNK (st.st_mode) ? "a symbolic link" : "not of the expected type");
  if (st.st_uid != 0)
    die ("sandbox not usable: %s is owned by uid %u, not root; ask your administrator "
         "to fix the ownership or recreate the sandbox", what, (unsigned) st.st_uid);
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    die ("sandbox not usable: %s is group- or world-writable; ask your administrator "
         "to fix its mode (chmod go-w)", what);
  if (fs_is_refused (fd, &fsname))
    die ("sandbox not usable: %s is on a %s filesystem, which is not trusted; keep "
         "sandboxes on a local filesystem", what, fsname);
}

/* Opens an absolute path one component at a time without following links,
 * checking each directory on the way. */
int
gl_launch_store_open_trusted_path (const char *path)
{
  cleanup_fd int fd = -1;
  cleanup_free char *copy = xstrdup (path);
  char *save = NULL;

  if (!gl_launch_path_is_canonical (path))
    die ("built-in sandbox directory %s is not a canonical absolute path", path);
  fd = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    die_with_error ("cannot open /");
  gl_launch_store_check_trusted (fd, "/", S_IFDIR);
  for (char *c = strtok_r (copy, "/", &save); c != NULL; c = strtok_r (NULL, "/", &save))
    {
      int next = openat (fd, c, O_PATH | O_NOFOLLOW | O_CLOEXEC);
      cleanup_free char *what = NULL;
      if (next < 0)
        {
          if (errno == ENOENT)
            die ("no sandboxes: %s does not exist; create one with \"glimpse create\"", path);
          die_with_error ("cannot open the sandbox directory %s (at \"%s\")", path, c);
        }
      close (fd);
      fd = next;
      what = xasprintf ("component \"%s\" of %s", c, path);
      gl_launch_store_check_trusted (fd, what, S_IFDIR);
    }
  return steal_fd (&fd);
}

int
gl_launch_store_open_trusted_at (int dirfd, const char *name, const char *what, mode_t type, bool missing_ok)
{
  int flags = (type == S_IFDIR ? O_PATH : O_RDONLY | O_NONBLOCK | O_NOCTTY)
              | O_NOFOLLOW | O_CLOEXEC;
  int fd = openat (dirfd, name, flags);
  if (fd < 0 && errno == ELOOP)
    die ("sandbox not usable: %s is a symbolic link; ask your administrator to recreate "
         "the sandbox", what);
  if (fd < 0 && errno == ENOENT && missing_ok)
    return -1;
  if (fd < 0 && errno == ENOENT)
    die ("sandbox not usable: %s is missing; ask your administrator to recreate the sandbox",
         what);
  if (fd < 0)
    die_with_error ("cannot open %s", what);
  gl_launch_store_check_trusted (fd, what, type);
  return fd;
}

static char *
read_small_file (int fd, const char *what)
{
  size_t cap = 65536, len = 0;
  char *buf = xmalloc (cap + 1);
  for (;;)
    {
      ssize_t n = read (fd, buf + len, cap - len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        die_with_error ("cannot read %s", what);
      if (n == 0)
        break;
      len += (size_t) n;
      if (len == cap)
        die ("sandbox not usable: %s is larger than 64 KiB", what);
    }
  buf[len] = '\0';
  return buf;
}

/* The first uid of the `glimpse` user's range in /etc/subuid (package
 * operations write system generations as root of a user namespace mapped
 * there), or (uid_t) -1. */
static uid_t
glimpse_subuid_base (void)
{
  cleanup_fd int fd = open ("/etc/subuid", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  cleanup_free char *text = NULL;
  struct stat st;

  if (fd < 0 || fstat (fd, &st) != 0 || !S_ISREG (st.st_mode) || st.st_uid != 0
      || (st.st_mode & 022) != 0)
    return (uid_t) -1;
  text = read_small_file (fd, "/etc/subuid");
  for (char *line = text; line != NULL && *line != '\0';)
    {
      char *next = strchr (line, '\n');
      unsigned long start;
      char *end;
      if (next != NULL)
        *next++ = '\0';
      if (strncmp (line, "glimpse:", 8) == 0 && line[8] >= '0' && line[8] <= '9')
        {
          errno = 0;
          start = strtoul (line + 8, &end, 10);
          if (errno == 0 && *end == ':' && start > 0 && start < (uid_t) -1)
            return (uid_t) start;
        }
      line = next;
    }
  return (uid_t) -1;
}

/* The generation system/current names, or 0 without one (no system
 * layer); dies if it names none */
static unsigned long
read_current (int system_fd)
{
  cleanup_fd int cur = gl_launch_store_open_trusted_at (system_fd, "current", "system/current",
                                                        S_IFREG, true);
  cleanup_free char *text = NULL;
  char *end;
  unsigned long n;

  if (cur < 0)
    return 0;
  text = read_small_file (cur, "system/current");
  errno = 0;
  n = strtoul (text, &end, 10);
  if (text[0] < '1' || text[0] > '9' || errno != 0 || n > 1000000000UL
      || strcmp (end, "\n") != 0)
    die ("sandbox not usable: system/current does not name a generation (one line "
         "\"N\"); ask your administrator to repair the sandbox");
  return n;
}

/* The system layer: system/current names generation N; system/N/tree is
 * the layer (root's, or the package-operation range's first uid), and
 * system/N/lock is held shared for as long as a view built from it lives.
 * No current: no system layer, the base only.
 * An operation switches `current` to a new generation first, then moves
 * each old one that it can lock exclusively into a trash, where it is
 * deleted: a part of N found missing, or N's lock taken only after N left
 * system/, means `current` has moved on; it is read again (a few times at
 * most).  A part missing while `current` still names N is a broken
 * sandbox. */
static void
open_generation (GlLaunchSandbox *sb, int system_fd, bool privileged)
{
  for (int attempt = 0;; attempt++)
    {
      cleanup_fd int gen = -1;
      cleanup_free char *text = NULL;
      cleanup_free char *what = NULL;
      unsigned long n;
      struct stat st;
      uid_t owner;

      n = read_current (system_fd);
      sb->generation = n;
      if (n == 0)
        return;
      text = xasprintf ("%lu", n);
      what = xasprintf ("system/%lu/", n);
      gen = gl_launch_store_open_trusted_at (system_fd, text, what, S_IFDIR, true);
      if (gen < 0 && read_current (system_fd) != n)
        goto retry;
      if (gen < 0)
        die ("sandbox not usable: %s is missing; ask your administrator to recreate the "
             "sandbox", what);
      free (what);
      what = xasprintf ("system/%lu/tree/", n);
      sb->sysupper_fd = openat (gen, "tree", O_PATH | O_NOFOLLOW | O_CLOEXEC);
      if (sb->sysupper_fd < 0)
        {
          int err = errno;
          if (err == ENOENT && read_current (system_fd) != n)
            goto retry;
          errno = err;
          die_with_error ("sandbox not usable: cannot open %s (ask your administrator to "
                          "repair the sandbox)", what);
        }
      if (fstat (sb->sysupper_fd, &st) != 0 || !S_ISDIR (st.st_mode)
          || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
        die ("sandbox not usable: %s is not a directory, or is group- or world-writable; "
             "ask your administrator to repair the sandbox", what);
      owner = st.st_uid;
      if (owner != 0 && owner != glimpse_subuid_base ())
        die ("sandbox not usable: %s is owned by uid %u, neither root nor the first id of "
             "the glimpse range in /etc/subuid; ask your administrator", what,
             (unsigned) owner);
      {
        const char *fsname = NULL;
        if (fs_is_refused (sb->sysupper_fd, &fsname))
          die ("sandbox not usable: %s is on a %s filesystem, which is not trusted", what,
               fsname);
      }
      if (!privileged || sb->query)
        return;         /* root's 0600 lock: the user lock stands for it */
      free (what);
      what = xasprintf ("system/%lu/lock", n);
      sb->gen_lock_fd = gl_launch_store_open_trusted_at (gen, "lock", what, S_IFREG, true);
      if (sb->gen_lock_fd < 0 && read_current (system_fd) != n)
        goto retry;
      if (sb->gen_lock_fd < 0)
        die ("sandbox not usable: %s is missing; ask your administrator to recreate the "
             "sandbox", what);
      if (flock (sb->gen_lock_fd, LOCK_SH | LOCK_NB) == 0)
        {
          /* Locked in time only if it is still system/N: an operation
           * that got its lock first may have moved it out of system/
           * (into a trash) and deleted it before we got here; then
           * current has moved on too. */
          struct stat was, now, lock;
          cleanup_fd int again = openat (system_fd, text, O_PATH | O_NOFOLLOW | O_CLOEXEC);
          if (again >= 0 && fstat (again, &now) == 0 && fstat (gen, &was) == 0
              && fstat (sb->gen_lock_fd, &lock) == 0 && lock.st_nlink > 0
              && now.st_dev == was.st_dev && now.st_ino == was.st_ino)
            return;
        }
      else if (errno != EWOULDBLOCK)
        die_with_error ("cannot lock %s", what);
      /* Being deleted: current has moved on meanwhile; read it again. */
    retry:
      if (sb->gen_lock_fd >= 0)
        close (sb->gen_lock_fd);
      sb->gen_lock_fd = -1;
      if (sb->sysupper_fd >= 0)
        close (sb->sysupper_fd);
      sb->sysupper_fd = -1;
      if (attempt == 2)
        die ("sandbox \"%s\" is being changed (its system layer is being replaced); try "
             "again when the update has finished", sb->id);
    }
}

void
gl_launch_store_open (GlLaunchSandbox *sb, const char *store, const char *id,
                      uid_t uid, gid_t gid, bool privileged)
{
  cleanup_fd int store_fd = gl_launch_store_open_trusted_path (store);
  cleanup_fd int conf_fd = -1;
  cleanup_fd int system_fd = -1;
  cleanup_fd int users_fd = -1;
  cleanup_free char *conf = NULL;
  cleanup_free char *base = NULL;
  cleanup_free char *what = NULL;
  char uidname[32];
  struct stat st;
  int fd;

  sb->id = id;
  what = xasprintf ("sandbox \"%s\"", sb->id);
  fd = openat (store_fd, sb->id, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT)
    die ("unknown sandbox \"%s\": no such sandbox in %s; see \"glimpse list\" for the "
         "sandboxes you have", sb->id, store);
  if (fd < 0)
    die_with_error ("cannot open sandbox \"%s\"", sb->id);
  sb->sandbox_fd = fd;
  gl_launch_store_check_trusted (sb->sandbox_fd, what, S_IFDIR);

  conf_fd = gl_launch_store_open_trusted_at (sb->sandbox_fd, "sandbox.conf", "sandbox.conf", S_IFREG, false);
  conf = read_small_file (conf_fd, "sandbox.conf");
  base = gl_launch_conf_get_base (conf);
  sb->rootfs_fd = gl_launch_store_open_trusted_at (sb->sandbox_fd, "rootfs", "rootfs/", S_IFDIR, true);
  if (base != NULL && strcmp (base, "host") == 0)
    {
      if (sb->rootfs_fd >= 0)
        die ("sandbox not usable: sandbox.conf says Base=host but rootfs/ exists; ask "
             "your administrator to repair the sandbox");
      sb->host_base = true;
    }
  else if (base != NULL && strcmp (base, "rootfs") == 0)
    {
      if (sb->rootfs_fd < 0)
        die ("sandbox not usable: rootfs/ is missing; ask your administrator to recreate "
             "the sandbox");
    }
  else
    die ("sandbox not usable: sandbox.conf has no valid Base= (host or rootfs); ask your "
         "administrator to recreate the sandbox");

  system_fd = gl_launch_store_open_trusted_at (sb->sandbox_fd, "system", "system/", S_IFDIR, false);
  open_generation (sb, system_fd, privileged);

  /* The sandbox's lock (root's, 0600 so that no user can take it):
   * shared while any app of the sandbox runs.  Without privilege it cannot
   * be opened; your own lock (below) then stands for it, and the
   * administrator's operations take every user's lock too. */
  if (privileged && !sb->query)
    {
      sb->lock_fd = gl_launch_store_open_trusted_at (sb->sandbox_fd, "lock", "lock", S_IFREG, false);
      if (flock (sb->lock_fd, LOCK_SH | LOCK_NB) != 0)
        {
          if (errno == EWOULDBLOCK)
            die ("sandbox \"%s\" is being changed (an update or remove is running); "
                 "try again when it has finished", sb->id);
          die_with_error ("cannot lock sandbox \"%s\"", sb->id);
        }
    }

  /* users/<uid>: made here by root, fd-relative, on the checked tree. */
  users_fd = openat (sb->sandbox_fd, "users", O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (users_fd < 0 && errno == ENOENT && privileged)
    {
      if (mkdirat (sb->sandbox_fd, "users", 0711) != 0 && errno != EEXIST)
        die_with_error ("cannot create users/ in sandbox \"%s\"", sb->id);
      users_fd = openat (sb->sandbox_fd, "users", O_PATH | O_NOFOLLOW | O_CLOEXEC);
    }
  if (users_fd < 0)
    {
      if (errno == ENOENT)
        die ("sandbox not usable: users/ is missing and glimpse-launch is not setuid "
             "root, so it cannot create it; ask your administrator");
      die_with_error ("cannot open users/ in sandbox \"%s\"", sb->id);
    }
  gl_launch_store_check_trusted (users_fd, "users/", S_IFDIR);
  /* Who uses a sandbox is nobody else's business: users/ is 0711 (older
   * sandboxes had 0755). */
  if (privileged && fstat (users_fd, &st) == 0 && (st.st_mode & 0066) != 0)
    {
      char fdpath[40];
      snprintf (fdpath, sizeof fdpath, "/proc/self/fd/%d", users_fd);
      if (chmod (fdpath, 0711) != 0)
        die_with_error ("cannot make users/ of sandbox \"%s\" mode 0711", sb->id);
    }

  /* users/.views/: root's, 0700.  Not in users/<uid>/, which is yours: a
   * record or lock you could delete or replace would let the next launch
   * build a second view on the same layer. */
  if (privileged)
    {
      if (mkdirat (users_fd, GL_LAUNCH_VIEWS_DIR, 0700) != 0 && errno != EEXIST)
        die_with_error ("cannot create users/" GL_LAUNCH_VIEWS_DIR " in sandbox \"%s\"", sb->id);
      sb->views_fd = gl_launch_store_open_trusted_at (users_fd, GL_LAUNCH_VIEWS_DIR,
                                                      "users/" GL_LAUNCH_VIEWS_DIR "/", S_IFDIR,
                                                      false);
      if (fstat (sb->views_fd, &st) != 0 || (st.st_mode & 07777) != 0700)
        die ("sandbox not usable: users/" GL_LAUNCH_VIEWS_DIR "/ is not mode 0700; ask your "
             "administrator to remove it");
    }

  snprintf (uidname, sizeof uidname, "%u", (unsigned) uid);
  if (fstatat (users_fd, uidname, &st, AT_SYMLINK_NOFOLLOW) != 0)
    {
      if (errno != ENOENT)
        die_with_error ("cannot check users/%s", uidname);
      if (!privileged)
        die ("your layer users/%s of sandbox \"%s\" does not exist and glimpse-launch "
             "is not setuid root, so it cannot create it; run the installed (setuid) "
             "glimpse-launch once", uidname, sb->id);
      /* Made under a temporary name and given to you before it gets its
       * real one: stopped half-way, it never leaves a users/<uid> that is
       * not yours (only root creates entries in users/). */
      char tmpname[48];
      snprintf (tmpname, sizeof tmpname, ".new-%s", uidname);
      if (mkdirat (users_fd, tmpname, 0700) != 0 && errno != EEXIST)
        die_with_error ("cannot create users/%s", tmpname);
      if (fchownat (users_fd, tmpname, uid, gid, AT_SYMLINK_NOFOLLOW) != 0
          || fchmodat (users_fd, tmpname, 0700, 0) != 0
          || renameat2 (users_fd, tmpname, users_fd, uidname, RENAME_NOREPLACE) != 0)
        {
          /* Another first launch of yours may have made it meanwhile. */
          if (fstatat (users_fd, uidname, &st, AT_SYMLINK_NOFOLLOW) != 0)
            die_with_error ("cannot create users/%s for uid %u", uidname, (unsigned) uid);
          (void) unlinkat (users_fd, tmpname, AT_REMOVEDIR);
        }
    }
  fd = openat (users_fd, uidname, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    die_with_error ("sandbox not usable: cannot open users/%s (a symbolic link?); ask "
                    "your administrator to remove it", uidname);
  if (fstat (fd, &st) != 0 || !S_ISDIR (st.st_mode) || st.st_uid != uid
      || (st.st_mode & 07777) != 0700)
    die ("sandbox not usable: users/%s is not a directory owned by you with mode 0700; "
         "ask your administrator to remove it", uidname);
  sb->userdir_fd = fd;
}

void
gl_launch_store_recheck_generation (GlLaunchSandbox *sb)
{
  cleanup_fd int system_fd = gl_launch_store_open_trusted_at (sb->sandbox_fd, "system", "system/",
                                                              S_IFDIR, false);
  if (read_current (system_fd) == sb->generation)
    return;
  if (sb->sysupper_fd >= 0)
    close (sb->sysupper_fd);
  sb->sysupper_fd = -1;
  open_generation (sb, system_fd, false);
}

/* Your lock, users/<uid>/lock, made and opened with your ids: shared while
 * an app runs; glimpse purge (as you) and the administrator's operations
 * take it exclusively. */
void
gl_launch_store_lock_user (GlLaunchSandbox *sb, uid_t uid)
{
  struct stat st;
  int fd = openat (sb->userdir_fd, "lock", O_RDONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK
                   | O_NOCTTY | O_CLOEXEC, 0600);

  if (fd < 0)
    die_with_error ("cannot open your lock users/%u/lock in sandbox \"%s\"",
                    (unsigned) uid, sb->id);
  if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode) || st.st_uid != uid)
    die ("sandbox not usable: users/%u/lock is not a regular file of yours; remove it "
         "(\"glimpse purge %s\" removes your whole layer)", (unsigned) uid, sb->id);
  if (flock (fd, LOCK_SH | LOCK_NB) != 0)
    {
      if (errno == EWOULDBLOCK)
        die ("your layer of sandbox \"%s\" is being changed (a purge, update or remove is "
             "running); try again when it has finished", sb->id);
      die_with_error ("cannot lock your layer of sandbox \"%s\"", sb->id);
    }
  sb->user_lock_fd = fd;
}
