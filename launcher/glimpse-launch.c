/* glimpse-launch: run a command inside a Glimpse sandbox, as the user.
 *
 * Installed setuid root.  Root is used only to check the sandbox store, take
 * the sandbox lock, create the user's per-user directory and to create the
 * user/mount/PID namespaces and write their id maps; it is then dropped for
 * good.  Every mount is made inside the new user namespace with the user's
 * credentials.  Read shared/SECURITY.md before changing anything here.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE

#include "gl-launch-util.h"
#include "utils.h"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/fsuid.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/ioctl.h>
#include <sys/types.h>
#include <sys/wait.h>

#ifndef GL_LAUNCH_SANDBOX_DIR
#error "GL_LAUNCH_SANDBOX_DIR must be defined by the build"
#endif
#ifndef GL_LAUNCH_BINDIR
#error "GL_LAUNCH_BINDIR must be defined by the build"
#endif
#ifndef GL_LAUNCH_VERSION
#define GL_LAUNCH_VERSION "unknown"
#endif

extern char **environ;

/* ---------------------------------------------------------------------- */
/* State of the top-level process                                          */

/* A host directory shown as an overlay, and the directories the view is
 * built from: non-recursive copies of their mounts, made by the top-level
 * process (detached, never attached in the host's namespace). */
typedef struct {
  const char *layer;
  char *path;
  int host_fd;         /* detached copy of the host directory */
} Overlaid;

typedef struct {
  uid_t uid;
  gid_t gid;
  gid_t *groups;
  int n_groups;
  char *user;
  char *home;
  char *shell;
  char *cwd;
  bool privileged;     /* started with euid 0 (setuid, or run by root) */
  bool dropped;
  char **app_env;      /* allow-listed caller environment, completed later */
  char **notify_env;
  const char *id;
  bool host_base;
  int sandbox_fd, rootfs_fd, sysupper_fd, userdir_fd, lock_fd, user_lock_fd;
  int sandbox_copy, base_copy;
  /* /tmp/.X11-unix and /tmp/.ICE-unix as checked on the host (root's or
   * yours, sticky): st_ino 0 when not to be passed */
  struct stat sockdir[2];
  Overlaid ov[8];
  size_t n_ov;
} Launch;

static Launch L = {
  .sandbox_fd = -1, .rootfs_fd = -1, .sysupper_fd = -1, .userdir_fd = -1, .lock_fd = -1,
  .user_lock_fd = -1,
  .sandbox_copy = -1, .base_copy = -1,
};

static const char usage_text[] =
  "Usage: glimpse-launch ID -- COMMAND [ARG...]\n"
  "       glimpse-launch --help | --version\n"
  "\n"
  "Run COMMAND as you inside the Glimpse sandbox ID: the sandbox tree is \"/\"\n"
  "(read-only), your home, /tmp, /var/tmp, /run/user/UID, /dev/shm, /media,\n"
  "/run/media and /mnt are overlays whose changes land in your layer of the\n"
  "sandbox; the host is never written.\n"
  "\n"
  "Exit status: the command's own status (128+N, or the same signal, when it\n"
  "was killed by signal N); 125 when glimpse-launch itself failed (bad usage,\n"
  "unknown or unusable sandbox, sandbox busy, missing kernel feature); 126 when\n"
  "COMMAND was found but could not be executed; 127 when it was not found.\n"
  "\n"
  "Sandboxes are read from " GL_LAUNCH_SANDBOX_DIR ".\n"
  "See glimpse-launch(1).\n";

/* ---------------------------------------------------------------------- */
/* Privileges                                                              */

/* The terminal the app shares with its caller must not become a way out:
 * TIOCSTI pushes input that the caller's shell then runs on the host, and
 * TIOCLINUX can do the same on a virtual console.  A seccomp filter makes
 * both ioctls fail with EPERM, for the native and the compat system-call
 * ABI (old 32-bit binaries are a reason to use Glimpse). */
#if defined(__x86_64__)
# define GL_ARCH AUDIT_ARCH_X86_64
# define GL_IOCTL_2 (0x40000000 | 514)          /* the x32 ABI's ioctl */
# define GL_COMPAT_ARCH AUDIT_ARCH_I386
# define GL_COMPAT_IOCTL 54
#elif defined(__aarch64__)
# define GL_ARCH AUDIT_ARCH_AARCH64
# define GL_IOCTL_2 __NR_ioctl
# define GL_COMPAT_ARCH AUDIT_ARCH_ARM
# define GL_COMPAT_IOCTL 54
#elif defined(__i386__)
# define GL_ARCH AUDIT_ARCH_I386
#elif defined(__arm__)
# define GL_ARCH AUDIT_ARCH_ARM
#elif defined(__riscv) && __riscv_xlen == 64
# define GL_ARCH AUDIT_ARCH_RISCV64
#else
# error "glimpse-launch: add this architecture's AUDIT_ARCH to the terminal filter"
#endif
#ifndef GL_IOCTL_2
# define GL_IOCTL_2 __NR_ioctl
# define GL_COMPAT_ARCH 0                        /* none */
# define GL_COMPAT_IOCTL __NR_ioctl
#endif
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
# define GL_ARG1_LOW (offsetof (struct seccomp_data, args[1]) + 4)
#else
# define GL_ARG1_LOW offsetof (struct seccomp_data, args[1])
#endif

static void
install_tty_filter (void)
{
  struct sock_filter code[] = {
    /* 0 */ BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, arch)),
    /* 1 */ BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, GL_ARCH, 0, 3),
    /* 2 */ BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)),
    /* 3 */ BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 4, 0),
    /* 4 */ BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, GL_IOCTL_2, 3, 6),
    /* 5 */ BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, GL_COMPAT_ARCH, 0, 5),
    /* 6 */ BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)),
    /* 7 */ BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, GL_COMPAT_IOCTL, 0, 3),
    /* 8: an ioctl; its request is an int, the low 32 bits of the argument */
    /* 8 */ BPF_STMT (BPF_LD | BPF_W | BPF_ABS, GL_ARG1_LOW),
    /* 9 */ BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, TIOCSTI, 2, 0),
    /* 10 */ BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, TIOCLINUX, 1, 0),
    /* 11 */ BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    /* 12 */ BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
  };
  struct sock_fprog prog = { (unsigned short) (sizeof code / sizeof code[0]), code };

  if (prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0)
    die_with_error ("cannot install the terminal filter (seccomp); refusing to run the command");
}

static int
gl_capget (struct __user_cap_data_struct data[2])
{
  struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
  return (int) syscall (SYS_capget, &hdr, data);
}

static int
gl_capset (uint64_t eff, uint64_t perm)
{
  struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
  struct __user_cap_data_struct data[2] = { { 0 } };
  data[0].effective = (uint32_t) eff;
  data[1].effective = (uint32_t) (eff >> 32);
  data[0].permitted = (uint32_t) perm;
  data[1].permitted = (uint32_t) (perm >> 32);
  return (int) syscall (SYS_capset, &hdr, data);
}

static bool
no_caps_left (void)
{
  struct __user_cap_data_struct data[2] = { { 0 } };
  if (gl_capget (data) != 0)
    return false;
  for (int i = 0; i < 2; i++)
    if (data[i].effective || data[i].permitted || data[i].inheritable)
      return false;
  return true;
}

/* Empties the bounding and ambient sets (needs CAP_SETPCAP in the current
 * user namespace; silently does nothing without it). */
static void
drop_bounding_and_ambient (bool must)
{
  (void) prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  for (int cap = 0; cap <= 63; cap++)
    {
      int r = prctl (PR_CAPBSET_READ, cap, 0, 0, 0);
      if (r < 0)
        break;          /* past CAP_LAST_CAP */
      if (r == 0)
        continue;
      if (prctl (PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && must)
        die_with_error ("cannot drop capability %d from the bounding set", cap);
    }
}

/* Becomes the user for good in the top-level process.  Idempotent. */
static void
drop_privs_for_good (void)
{
  if (L.dropped)
    return;
  L.dropped = true;

  if (L.privileged)
    {
      drop_bounding_and_ambient (true);
      if (setgroups ((size_t) L.n_groups, L.groups) != 0)
        die_with_error ("cannot set supplementary groups");
      if (setresgid (L.gid, L.gid, L.gid) != 0)
        die_with_error ("cannot set group id %u", (unsigned) L.gid);
      if (setresuid (L.uid, L.uid, L.uid) != 0)
        die_with_error ("cannot set user id %u", (unsigned) L.uid);
    }
  if (L.uid != 0)
    {
      if (setuid (0) == 0 || seteuid (0) == 0)
        die ("could regain root after dropping it; refusing to continue");
      if (!no_caps_left ())
        {
          /* Unprivileged run: nothing to keep; make sure. */
          if (gl_capset (0, 0) != 0 || !no_caps_left ())
            die ("capabilities left after dropping privileges; refusing to continue");
        }
    }
  (void) prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
}

/* The die() hook of the top-level process: after dropping privileges
 * completely, show the error on the desktop when there is no terminal. */
static void
report_error (const char *message)
{
  pid_t pid;

  if (isatty (STDERR_FILENO) || L.notify_env == NULL)
    return;
  drop_privs_for_good ();
  if (getuid () == 0 || geteuid () == 0)
    return;             /* never run anything as root */

  pid = fork ();
  if (pid == 0)
    {
      char *argv[] = {
        (char *) "glimpse", (char *) "notify-error", (char *) "--title",
        (char *) "Glimpse could not start the application", (char *) message, NULL
      };
      int null = open ("/dev/null", O_RDWR | O_CLOEXEC);
      sigset_t none;
      /* not with the signals the launcher blocks for its own waiting */
      sigemptyset (&none);
      sigprocmask (SIG_SETMASK, &none, NULL);
      if (null >= 0)
        {
          dup2 (null, STDIN_FILENO);
          dup2 (null, STDOUT_FILENO);
        }
      (void) syscall (SYS_close_range, 3U, ~0U, 0U);
      execve (GL_LAUNCH_BINDIR "/glimpse", argv, L.notify_env);
      _exit (1);
    }
  /* Its failure is ignored; it outlives us as an orphan if slow. */
}

/* ---------------------------------------------------------------------- */
/* Checking the sandbox store (as root, on root's own state only)          */

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
static void
check_trusted (int fd, const char *what, mode_t type)
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
static int
open_trusted_path (const char *path)
{
  cleanup_fd int fd = -1;
  cleanup_free char *copy = xstrdup (path);
  char *save = NULL;

  if (!gl_launch_path_is_canonical (path))
    die ("built-in sandbox directory %s is not a canonical absolute path", path);
  fd = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    die_with_error ("cannot open /");
  check_trusted (fd, "/", S_IFDIR);
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
      check_trusted (fd, what, S_IFDIR);
    }
  return steal_fd (&fd);
}

static int
open_trusted_at (int dirfd, const char *name, const char *what, mode_t type, bool missing_ok)
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
  check_trusted (fd, what, type);
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

static void
open_sandbox (void)
{
  cleanup_fd int store = open_trusted_path (GL_LAUNCH_SANDBOX_DIR);
  cleanup_fd int conf_fd = -1;
  cleanup_fd int system_fd = -1;
  cleanup_fd int users_fd = -1;
  cleanup_free char *conf = NULL;
  cleanup_free char *base = NULL;
  cleanup_free char *what = NULL;
  char uidname[32];
  struct stat st;
  int fd;

  what = xasprintf ("sandbox \"%s\"", L.id);
  fd = openat (store, L.id, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT)
    die ("unknown sandbox \"%s\": no such sandbox in %s; see \"glimpse list\" for the "
         "sandboxes you have", L.id, GL_LAUNCH_SANDBOX_DIR);
  if (fd < 0)
    die_with_error ("cannot open sandbox \"%s\"", L.id);
  L.sandbox_fd = fd;
  check_trusted (L.sandbox_fd, what, S_IFDIR);

  conf_fd = open_trusted_at (L.sandbox_fd, "sandbox.conf", "sandbox.conf", S_IFREG, false);
  conf = read_small_file (conf_fd, "sandbox.conf");
  base = gl_launch_conf_get_base (conf);
  L.rootfs_fd = open_trusted_at (L.sandbox_fd, "rootfs", "rootfs/", S_IFDIR, true);
  if (base != NULL && strcmp (base, "host") == 0)
    {
      if (L.rootfs_fd >= 0)
        die ("sandbox not usable: sandbox.conf says Base=host but rootfs/ exists; ask "
             "your administrator to repair the sandbox");
      L.host_base = true;
    }
  else if (base != NULL && strcmp (base, "rootfs") == 0)
    {
      if (L.rootfs_fd < 0)
        die ("sandbox not usable: rootfs/ is missing; ask your administrator to recreate "
             "the sandbox");
    }
  else
    die ("sandbox not usable: sandbox.conf has no valid Base= (host or rootfs); ask your "
         "administrator to recreate the sandbox");

  system_fd = open_trusted_at (L.sandbox_fd, "system", "system/", S_IFDIR, false);
  L.sysupper_fd = open_trusted_at (system_fd, "upper", "system/upper/", S_IFDIR, false);

  /* The sandbox's lock (root's, 0600 so that no user can take it):
   * shared while any app of the sandbox runs.  Without privilege it cannot
   * be opened; your own lock (below) then stands for it, and the
   * administrator's operations take every user's lock too. */
  if (L.privileged)
    {
      L.lock_fd = open_trusted_at (L.sandbox_fd, "lock", "lock", S_IFREG, false);
      if (flock (L.lock_fd, LOCK_SH | LOCK_NB) != 0)
        {
          if (errno == EWOULDBLOCK)
            die ("sandbox \"%s\" is being changed (an update or remove is running); "
                 "try again when it has finished", L.id);
          die_with_error ("cannot lock sandbox \"%s\"", L.id);
        }
    }

  /* users/<uid>: made here by root, fd-relative, on the checked tree. */
  users_fd = openat (L.sandbox_fd, "users", O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (users_fd < 0 && errno == ENOENT && L.privileged)
    {
      if (mkdirat (L.sandbox_fd, "users", 0755) != 0 && errno != EEXIST)
        die_with_error ("cannot create users/ in sandbox \"%s\"", L.id);
      users_fd = openat (L.sandbox_fd, "users", O_PATH | O_NOFOLLOW | O_CLOEXEC);
    }
  if (users_fd < 0)
    {
      if (errno == ENOENT)
        die ("sandbox not usable: users/ is missing and glimpse-launch is not setuid "
             "root, so it cannot create it; ask your administrator");
      die_with_error ("cannot open users/ in sandbox \"%s\"", L.id);
    }
  check_trusted (users_fd, "users/", S_IFDIR);

  snprintf (uidname, sizeof uidname, "%u", (unsigned) L.uid);
  if (fstatat (users_fd, uidname, &st, AT_SYMLINK_NOFOLLOW) != 0)
    {
      if (errno != ENOENT)
        die_with_error ("cannot check users/%s", uidname);
      if (!L.privileged)
        die ("your layer users/%s of sandbox \"%s\" does not exist and glimpse-launch "
             "is not setuid root, so it cannot create it; run the installed (setuid) "
             "glimpse-launch once", uidname, L.id);
      /* Made under a temporary name and given to you before it gets its
       * real one: stopped half-way, it never leaves a users/<uid> that is
       * not yours (only root creates entries in users/). */
      char tmpname[48];
      snprintf (tmpname, sizeof tmpname, ".new-%s", uidname);
      if (mkdirat (users_fd, tmpname, 0700) != 0 && errno != EEXIST)
        die_with_error ("cannot create users/%s", tmpname);
      if (fchownat (users_fd, tmpname, L.uid, L.gid, AT_SYMLINK_NOFOLLOW) != 0
          || fchmodat (users_fd, tmpname, 0700, 0) != 0
          || renameat2 (users_fd, tmpname, users_fd, uidname, RENAME_NOREPLACE) != 0)
        {
          /* Another first launch of yours may have made it meanwhile. */
          if (fstatat (users_fd, uidname, &st, AT_SYMLINK_NOFOLLOW) != 0)
            die_with_error ("cannot create users/%s for uid %u", uidname, (unsigned) L.uid);
          (void) unlinkat (users_fd, tmpname, AT_REMOVEDIR);
        }
    }
  fd = openat (users_fd, uidname, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    die_with_error ("sandbox not usable: cannot open users/%s (a symbolic link?); ask "
                    "your administrator to remove it", uidname);
  if (fstat (fd, &st) != 0 || !S_ISDIR (st.st_mode) || st.st_uid != L.uid
      || (st.st_mode & 07777) != 0700)
    die ("sandbox not usable: users/%s is not a directory owned by you with mode 0700; "
         "ask your administrator to remove it", uidname);
  L.userdir_fd = fd;
}

/* Your lock, users/<uid>/lock, made and opened with your ids: shared while
 * an app runs; glimpse purge (as you) and the administrator's operations
 * take it exclusively. */
static void
lock_user_layer (void)
{
  struct stat st;
  int fd = openat (L.userdir_fd, "lock", O_RDONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK
                   | O_NOCTTY | O_CLOEXEC, 0600);

  if (fd < 0)
    die_with_error ("cannot open your lock users/%u/lock in sandbox \"%s\"",
                    (unsigned) L.uid, L.id);
  if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode) || st.st_uid != L.uid)
    die ("sandbox not usable: users/%u/lock is not a regular file of yours; remove it "
         "(\"glimpse purge %s\" removes your whole layer)", (unsigned) L.uid, L.id);
  if (flock (fd, LOCK_SH | LOCK_NB) != 0)
    {
      if (errno == EWOULDBLOCK)
        die ("your layer of sandbox \"%s\" is being changed (a purge, update or remove is "
             "running); try again when it has finished", L.id);
      die_with_error ("cannot lock your layer of sandbox \"%s\"", L.id);
    }
  L.user_lock_fd = fd;
}

/* The X11 and ICE socket directories in /tmp are passed in only when they
 * are root's (or yours) and sticky, as a desktop makes them: anyone can
 * create them when they are missing, and fill them. */
static void
check_socket_dirs (void)
{
  static const char *const paths[] = { "/tmp/.X11-unix", "/tmp/.ICE-unix" };

  for (size_t k = 0; k < 2; k++)
    {
      struct stat st;
      memset (&L.sockdir[k], 0, sizeof L.sockdir[k]);
      if (lstat (paths[k], &st) != 0 || !S_ISDIR (st.st_mode))
        continue;
      if ((st.st_uid != 0 && st.st_uid != L.uid)
          || ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)))
        {
          fprintf (stderr, "glimpse-launch: warning: not passing the sockets of %s: it is "
                   "not root's (or yours) and sticky\n", paths[k]);
          continue;
        }
      L.sockdir[k] = st;
    }
}

/* The host directories the view is made of, as detached non-recursive
 * copies of their mounts (without the mounts below them, which the child
 * adds back read-only).  The copies must be made here: inside the new user
 * namespace the kernel refuses to copy a mount without its (locked) child
 * mounts.  Host paths are resolved with the user's filesystem ids, so only
 * what the user can reach is copied; nothing is attached anywhere. */
static void
make_copies (void)
{
  static const struct { const char *layer; const char *path; } dirs[] = {
    { "home", NULL }, { "tmp", "/tmp" }, { "var-tmp", "/var/tmp" },
    { "run-user", NULL }, { "dev-shm", "/dev/shm" }, { "media", "/media" },
    { "run-media", "/run/media" }, { "mnt", "/mnt" },
  };
  const unsigned copy_flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_NO_AUTOMOUNT;

  if (L.privileged)
    {
      L.sandbox_copy = open_tree (L.sandbox_fd, "", copy_flags | AT_EMPTY_PATH);
      if (L.sandbox_copy < 0)
        die_with_error ("cannot copy the mount of sandbox \"%s\"", L.id);
      setfsgid (L.gid);
      setfsuid (L.uid);
      if ((uid_t) setfsuid ((uid_t) -1) != L.uid || (gid_t) setfsgid ((gid_t) -1) != L.gid)
        die ("cannot switch to your filesystem ids");
      if (L.host_base)
        {
          L.base_copy = open_tree (AT_FDCWD, "/", copy_flags);
          if (L.base_copy < 0)
            die_with_error ("cannot copy the host's / for the sandbox base");
        }
    }

  for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
    {
      cleanup_free char *path = NULL;
      bool dup_path = false;
      struct stat st;
      int fd = -1;

      if (strcmp (dirs[i].layer, "home") == 0)
        {
          if (!gl_launch_path_is_canonical (L.home) || strcmp (L.home, "/") == 0)
            continue;
          path = xstrdup (L.home);
        }
      else if (strcmp (dirs[i].layer, "run-user") == 0)
        path = xasprintf ("/run/user/%u", (unsigned) L.uid);
      else
        path = xstrdup (dirs[i].path);
      for (size_t k = 0; k < L.n_ov; k++)
        if (strcmp (L.ov[k].path, path) == 0)
          dup_path = true;
      if (dup_path || stat (path, &st) != 0 || !S_ISDIR (st.st_mode))
        continue;       /* absent on the host (or not reachable by you) */
      if (L.privileged)
        {
          fd = open_tree (AT_FDCWD, path, copy_flags);
          if (fd < 0 && (errno == ENOENT || errno == EACCES || errno == ENOTDIR))
            continue;
          if (fd < 0)
            die_with_error ("cannot copy the host directory %s", path);
        }
      L.ov[L.n_ov++] = (Overlaid) { dirs[i].layer, steal_pointer (&path), fd };
    }

  /* Still with your filesystem ids, as they need. */
  lock_user_layer ();
  check_socket_dirs ();

  if (L.privileged)
    {
      setfsuid (0);
      setfsgid (0);
    }
}

/* ---------------------------------------------------------------------- */
/* Inside the namespaces: building the view, as the user                   */

typedef enum { OP_PROC, OP_BIND, OP_OVERLAY, OP_MERGE } OpKind;

typedef struct {
  char *path;           /* absolute path in the view */
  OpKind kind;
  int src_fd;           /* OP_BIND: detached tree; OP_OVERLAY/OP_MERGE: host dir */
  const char *layer;    /* OP_OVERLAY: layer name in users/<uid>/ */
  int mnt;              /* OP_OVERLAY: the overlay, made before the attaching */
} MountOp;

typedef struct {
  MountOp *ops;
  size_t n, cap;
} OpList;

static void
ops_add (OpList *l, const char *path, OpKind kind, int src_fd, const char *layer)
{
  if (l->n == l->cap)
    {
      l->cap = l->cap ? 2 * l->cap : 32;
      l->ops = xrealloc (l->ops, l->cap * sizeof (MountOp));
    }
  l->ops[l->n++] = (MountOp) { xstrdup (path), kind, src_fd, layer, -1 };
}

static bool
ops_has_path (const OpList *l, const char *path)
{
  for (size_t i = 0; i < l->n; i++)
    if (strcmp (l->ops[i].path, path) == 0)
      return true;
  return false;
}

static int
cmp_ops (const void *a, const void *b)
{
  const MountOp *x = a, *y = b;
  size_t lx = strlen (x->path), ly = strlen (y->path);
  if (lx != ly)
    return lx < ly ? -1 : 1;
  return strcmp (x->path, y->path);
}

typedef struct {
  char **paths;
  size_t n;
} MountTable;

static MountTable
read_mount_table (void)
{
  MountTable t = { NULL, 0 };
  size_t cap = 0;
  FILE *f = fopen ("/proc/self/mountinfo", "re");
  char *line = NULL;
  size_t len = 0;

  if (f == NULL)
    die_with_error ("cannot read /proc/self/mountinfo");
  while (getline (&line, &len, f) > 0)
    {
      char *fstype = NULL;
      char *mp = gl_launch_mountinfo_mountpoint (line, &fstype);
      free (fstype);
      if (mp == NULL)
        continue;
      if (t.n == cap)
        {
          cap = cap ? 2 * cap : 64;
          t.paths = xrealloc (t.paths, cap * sizeof (char *));
        }
      t.paths[t.n++] = mp;
    }
  free (line);
  fclose (f);
  return t;
}

static ssize_t
fs_log (int fsfd, char *buf, size_t size)
{
  ssize_t n = read (fsfd, buf, size - 1);
  if (n <= 0)
    return 0;
  buf[n] = '\0';
  if (n > 0 && buf[n - 1] == '\n')
    buf[--n] = '\0';
  return n;
}

static GL_NORETURN void
die_fs (int fsfd, const char *what)
{
  int errsv = errno;
  char log[512] = "";
  if (fsfd >= 0 && fs_log (fsfd, log, sizeof log) > 0)
    die ("%s: %s (%s); your kernel may lack overlayfs in user namespaces (Linux >= 5.11 "
         "needed)", what, strerror (errsv), log);
  errno = errsv;
  die_with_error ("%s", what);
}

/* A new overlay from layer descriptors (top lower first); upper/work may be
 * -1 for a read-only overlay.  Returns a detached mount. */
static int
make_overlay (const int *lowers, size_t n_lowers, int upper, int work,
              unsigned attrs, const char *what)
{
  cleanup_fd int fs = fsopen ("overlay", FSOPEN_CLOEXEC);
  char lowerdir[1024] = "";
  size_t off = 0;
  int mnt;

  if (fs < 0)
    die_fs (-1, "cannot use overlayfs");
  for (size_t i = 0; i < n_lowers; i++)
    off += (size_t) snprintf (lowerdir + off, sizeof lowerdir - off, "%s/proc/self/fd/%d",
                              i ? ":" : "", lowers[i]);
  if (fsconfig (fs, FSCONFIG_SET_STRING, "lowerdir", lowerdir, 0) != 0)
    die_fs (fs, what);
  if (upper >= 0)
    {
      char p[64];
      snprintf (p, sizeof p, "/proc/self/fd/%d", upper);
      if (fsconfig (fs, FSCONFIG_SET_STRING, "upperdir", p, 0) != 0)
        die_fs (fs, what);
      snprintf (p, sizeof p, "/proc/self/fd/%d", work);
      if (fsconfig (fs, FSCONFIG_SET_STRING, "workdir", p, 0) != 0)
        die_fs (fs, what);
    }
  if (fsconfig (fs, FSCONFIG_SET_FLAG, "userxattr", NULL, 0) != 0
      || fsconfig (fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) != 0)
    die_fs (fs, what);
  mnt = fsmount (fs, FSMOUNT_CLOEXEC, attrs);
  if (mnt < 0)
    die_fs (fs, what);
  return mnt;
}

static long
gl_openat2 (int dirfd, const char *path, uint64_t flags, uint64_t resolve)
{
  struct open_how how = { .flags = flags, .mode = 0, .resolve = resolve };
  return syscall (SYS_openat2, dirfd, path, &how, sizeof how);
}

/* Opens PATH (absolute in the view) under root ROOTFD without following any
 * symbolic link.  Returns -1 with errno set. */
static int
open_in_view (int rootfd, const char *path)
{
  const char *rel = path + strspn (path, "/");
  return (int) gl_openat2 (rootfd, *rel ? rel : ".", O_PATH | O_DIRECTORY | O_CLOEXEC,
                           RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
}

static GL_NORETURN void
die_target (const char *path)
{
  if (errno == ELOOP)
    die ("sandbox not usable: %s inside the sandbox is or passes through a symbolic "
         "link; ask your administrator to repair the sandbox", path);
  if (errno == ENOTDIR)
    die ("sandbox not usable: %s inside the sandbox is not a directory; ask your "
         "administrator to repair the sandbox, or purge your layer", path);
  die_with_error ("cannot find the mount point %s inside the sandbox", path);
}

/* Makes the directory PATH (absolute) inside the user's mount-point layer. */
static void
skel_mkdir_p (int skelfd, const char *path)
{
  cleanup_free char *copy = xstrdup (path);
  cleanup_fd int dir = dup (skelfd);
  char *save = NULL;

  for (char *c = strtok_r (copy, "/", &save); c != NULL; c = strtok_r (NULL, "/", &save))
    {
      int next;
      if (mkdirat (dir, c, 0755) != 0 && errno != EEXIST)
        die_with_error ("cannot create mount point %s in your layer", path);
      next = openat (dir, c, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
      if (next < 0)
        die_with_error ("cannot open mount point %s in your layer", path);
      close (dir);
      dir = next;
    }
}

static int
open_user_dir (int parent, const char *name, const char *what)
{
  struct stat st;
  int fd;
  if (mkdirat (parent, name, 0700) != 0 && errno != EEXIST)
    die_with_error ("cannot create %s in your layer", what);
  fd = openat (parent, name, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    die_with_error ("cannot open %s in your layer (purge your layer with \"glimpse purge\")",
                    what);
  if (fstat (fd, &st) != 0 || st.st_uid != L.uid)
    die ("%s in your layer is not owned by you; purge your layer with \"glimpse purge\"",
         what);
  return fd;
}

static int
make_root (const int lowers[3])
{
  int r = make_overlay (lowers, 3, -1, -1,
                        MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
                        "cannot build the sandbox root (overlay of system/upper and the base)");
  return r;
}

static void
attach (int mnt, int target, const char *path)
{
  if (move_mount (mnt, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0)
    die_with_error ("cannot mount %s inside the sandbox", path);
}

static int
clone_tree (const char *path, unsigned attrs, bool missing_ok)
{
  struct mount_attr attr = { .attr_set = attrs };
  int fd = open_tree (AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE
                      | AT_NO_AUTOMOUNT | AT_SYMLINK_NOFOLLOW);
  if (fd < 0 && missing_ok && (errno == ENOENT || errno == EACCES || errno == ENOTDIR))
    return -1;
  if (fd < 0)
    die_with_error ("cannot copy the host mount %s", path);
  if (mount_setattr (fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) != 0)
    die_with_error ("cannot make the copy of %s read-only/nosuid", path);
  return fd;
}

/* The deepest overlaid directory strictly containing PATH, or NULL. */
static const Overlaid *
owner_of (const Overlaid *ov, size_t n_ov, const char *path)
{
  const Overlaid *best = NULL;
  for (size_t i = 0; i < n_ov; i++)
    if (gl_launch_path_has_prefix (path, ov[i].path) && strcmp (path, ov[i].path) != 0
        && (best == NULL || strlen (ov[i].path) > strlen (best->path)))
      best = &ov[i];
  return best;
}

static bool
at_overlaid (const Overlaid *ov, size_t n_ov, const char *path)
{
  for (size_t i = 0; i < n_ov; i++)
    if (gl_launch_path_has_prefix (path, ov[i].path))
      return true;
  return false;
}

/* Attaches detached mount FD at a new directory NAME of the staging tmpfs;
 * afterwards FD refers to a mount of this namespace. */
static void
stage_copy (int stage, int fd, const char *name)
{
  cleanup_fd int dir = -1;
  if (mkdirat (stage, name, 0700) != 0)
    die_with_error ("cannot create staging directory %s", name);
  dir = openat (stage, name, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0 || move_mount (fd, "", dir, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0)
    die_with_error ("cannot stage a copy of a host directory (%s)", name);
}

/* Reopens NAME (checked by the top-level process as SAME) through this
 * namespace's copy; it must be the very same directory.  (Ownership cannot
 * be re-checked here: root is not mapped in this user namespace.) */
static int
reopen_same (int dirfd, const char *name, int same, const char *what)
{
  struct stat a, b;
  int fd = openat (dirfd, name, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 || fstat (fd, &a) != 0 || fstat (same, &b) != 0
      || a.st_dev != b.st_dev || a.st_ino != b.st_ino)
    die ("sandbox not usable: %s changed while starting; try again", what);
  return fd;
}

/* Unix sockets cannot be connected through an overlay (the socket is found
 * by inode, and the overlay's inode is not the socket's), so every socket in
 * the host directory DIR (an overlay lower) down to DEPTH levels is bound
 * over its own overlay entry.  Only sockets the user can reach, and at most
 * *BUDGET of them (each is a mount, and mounts are a limited resource). */
#define MAX_SOCKETS 256
static void
bind_sockets (int root, int dir, const char *view_path, int depth, size_t *budget)
{
  cleanup_fd int rd = openat (dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d;
  struct dirent *e;

  if (rd < 0 || (d = fdopendir (rd)) == NULL)
    return;
  rd = -1;
  while ((e = readdir (d)) != NULL)
    {
      cleanup_free char *vp = NULL;
      struct stat st;
      mode_t type;
      if (strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0)
        continue;
      /* The type as the directory gives it (tmpfs and ext4 do), saving a
       * stat per entry; the socket itself is checked again below. */
      if (e->d_type != DT_UNKNOWN)
        type = DTTOIF (e->d_type);
      else if (fstatat (dirfd (d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
        type = st.st_mode & S_IFMT;
      else
        continue;
      if (!S_ISDIR (type) && !S_ISSOCK (type))
        continue;
      vp = xasprintf ("%s/%s", view_path, e->d_name);
      if (S_ISDIR (type) && depth > 1)
        {
          cleanup_fd int sub = openat (dirfd (d), e->d_name, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
          if (sub >= 0)
            bind_sockets (root, sub, vp, depth - 1, budget);
        }
      else if (S_ISSOCK (type))
        {
          struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID
                                     | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC };
          cleanup_fd int src = open_tree (dirfd (d), e->d_name, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC
                                          | AT_SYMLINK_NOFOLLOW);
          const char *rel = vp + strspn (vp, "/");
          cleanup_fd int target = (int) gl_openat2 (root, rel, O_PATH | O_NOFOLLOW | O_CLOEXEC,
                                                    RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS
                                                    | RESOLVE_NO_MAGICLINKS);
          struct stat tst, sst;
          if (src < 0 || target < 0 || fstat (target, &tst) != 0 || !S_ISSOCK (tst.st_mode)
              || fstat (src, &sst) != 0 || !S_ISSOCK (sst.st_mode))
            continue;   /* gone, replaced, or deleted in your layer: nothing to pass */
          if (*budget == 0)
            {
              static bool warned;
              if (!warned)
                fprintf (stderr, "glimpse-launch: warning: more than %d sockets below %s; "
                         "the rest are not passed\n", MAX_SOCKETS, view_path);
              warned = true;
              break;
            }
          (*budget)--;
          if (mount_setattr (src, "", AT_EMPTY_PATH, &attr, sizeof attr) != 0)
            die_with_error ("cannot restrict the socket %s", vp);
          if (move_mount (src, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0)
            die_with_error ("cannot pass the socket %s into the sandbox", vp);
        }
    }
  closedir (d);
}

/* The writable overlay for OP (the host directory under the user's layer
 * users/<uid>/<layer>/), as a detached mount. */
static int
make_layer_overlay (const MountOp *op, int userdir_fd)
{
  cleanup_fd int layer = open_user_dir (userdir_fd, op->layer, op->layer);
  cleanup_fd int upper = open_user_dir (layer, "upper", "upper/");
  cleanup_fd int work = open_user_dir (layer, "work", "work/");
  cleanup_free char *what = xasprintf ("cannot overlay %s", op->path);
  struct stat host, up;

  /* The overlay's root shows the upper directory's mode: the host's.  (Not
   * rewritten when it already is: that would dirty the layer's filesystem
   * on every launch, to be synced when the overlay goes away.) */
  if (fstat (op->src_fd, &host) != 0 || fstat (upper, &up) != 0)
    die_with_error ("cannot set the mode of your layer for %s", op->path);
  if ((host.st_mode ^ up.st_mode) & 07777)
    {
      /* on the directory checked, not on whatever the name is now */
      char fdpath[40];
      snprintf (fdpath, sizeof fdpath, "/proc/self/fd/%d", upper);
      if (chmod (fdpath, host.st_mode & 07777) != 0)
        die_with_error ("cannot set the mode of your layer for %s", op->path);
    }
  return make_overlay (&op->src_fd, 1, upper, work, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, what);
}

/* Making a writable overlay costs the kernel far more than anything else
 * here (it cleans and tests the work directory, partly waiting for the
 * disk), and they do not depend on each other: they are shared out between
 * the main thread and N_HELPERS threads, each taking the next one from the
 * list until none is left. */
#define N_HELPERS 2
typedef struct {
  OpList *ops;
  int userdir_fd;
  size_t next;          /* taken with an atomic add */
} OverlayJobs;

static void
make_overlays (OverlayJobs *jobs)
{
  for (;;)
    {
      size_t i = __atomic_fetch_add (&jobs->next, 1, __ATOMIC_RELAXED);
      if (i >= jobs->ops->n)
        return;
      if (jobs->ops->ops[i].kind == OP_OVERLAY)
        jobs->ops->ops[i].mnt = make_layer_overlay (&jobs->ops->ops[i], jobs->userdir_fd);
    }
}

static void *
overlay_thread (void *jobs)
{
  make_overlays (jobs);
  return NULL;
}

/* Builds the view and pivots into it.  Runs as the user, with CAP_SYS_ADMIN
 * in the new user namespace only. */
static void
build_view (void)
{
  static const char *const merged[] = {
    "/usr/share/themes", "/usr/share/icons", "/usr/share/fonts",
  };
  const Overlaid *ov = L.ov;
  size_t n_ov = L.n_ov;
  OpList ops = { NULL, 0, 0 };
  MountTable mt;
  int base_fd, skel_fd, root, stage, tmp, sysdir, rootfs_fd, sysupper_fd, userdir_fd;
  int lowers[3];
  bool skel_changed = false;
  char uidname[32];
  OverlayJobs jobs;
  pthread_t helpers[N_HELPERS];
  bool helped[N_HELPERS];

  if (mount (NULL, "/", NULL, MS_SLAVE | MS_REC, NULL) != 0)
    die_with_error ("cannot make the mount namespace private");

  mt = read_mount_table ();

  /* Without privilege the copies could not be made: use this namespace's
   * own view (directories with mounts below them then cannot be layers). */
  if (!L.privileged)
    {
      struct stat a, b;
      cleanup_free char *sbpath = xasprintf ("%s/%s", GL_LAUNCH_SANDBOX_DIR, L.id);
      L.sandbox_copy = open (sbpath, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
      if (L.sandbox_copy < 0 || fstat (L.sandbox_copy, &a) != 0 || fstat (L.sandbox_fd, &b) != 0
          || a.st_dev != b.st_dev || a.st_ino != b.st_ino)
        die ("sandbox not usable: %s changed while starting; try again", sbpath);
      if (L.host_base)
        die ("sandbox \"%s\" is based on the host's /, which has mounts below it: only "
             "the setuid-root glimpse-launch can show it; ask your administrator to "
             "install glimpse-launch setuid root", L.id);
      for (size_t i = 0; i < L.n_ov; i++)
        {
          bool below = false;
          for (size_t k = 0; k < mt.n; k++)
            if (gl_launch_path_has_prefix (mt.paths[k], L.ov[i].path)
                && strcmp (mt.paths[k], L.ov[i].path) != 0)
              below = true;
          if (below)
            {
              /* Not shown rather than shown wrongly; the sandbox's own
               * directory stays, read-only. */
              fprintf (stderr, "glimpse-launch: warning: not showing the host's %s: it has "
                       "mounts below it, which needs the setuid-root glimpse-launch\n",
                       L.ov[i].path);
              L.ov[i--] = L.ov[--L.n_ov];
              continue;
            }
          if ((L.ov[i].host_fd = open (L.ov[i].path, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
            die_with_error ("cannot open %s", L.ov[i].path);
        }
      n_ov = L.n_ov;
    }

  /* Fresh /proc, the host's /sys (read-only) and /dev (nosuid). */
  ops_add (&ops, "/proc", OP_PROC, -1, NULL);
  ops_add (&ops, "/sys", OP_BIND, clone_tree ("/sys", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID
                                              | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, false),
           NULL);
  ops_add (&ops, "/dev", OP_BIND, clone_tree ("/dev", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC,
                                              false), NULL);
  for (size_t i = 0; i < n_ov; i++)
    ops_add (&ops, ov[i].path, OP_OVERLAY, ov[i].host_fd, ov[i].layer);

  /* Host mounts: under an overlaid directory they are bound (read-only) on
   * the overlay, so they are not silently hidden; for a host base, every
   * other host mount is bound read-only at its place. */
  for (size_t i = 0; i < mt.n; i++)
    {
      const char *mp = mt.paths[i];
      const Overlaid *own;
      bool outer = true;
      int fd;

      if (strcmp (mp, "/") == 0 || ops_has_path (&ops, mp))
        continue;
      if (gl_launch_path_has_prefix (mp, "/proc") || gl_launch_path_has_prefix (mp, "/sys")
          || gl_launch_path_has_prefix (mp, "/dev"))
        continue;
      own = owner_of (ov, n_ov, mp);
      if (own == NULL && (!L.host_base || at_overlaid (ov, n_ov, mp)))
        continue;
      /* Only the outermost: a recursive copy carries the ones below. */
      for (size_t k = 0; k < mt.n && outer; k++)
        {
          const char *up = mt.paths[k];
          if (strcmp (up, mp) == 0 || strcmp (up, "/") == 0 || !gl_launch_path_has_prefix (mp, up))
            continue;
          if (gl_launch_path_has_prefix (up, "/proc") || gl_launch_path_has_prefix (up, "/sys")
              || gl_launch_path_has_prefix (up, "/dev"))
            continue;
          if (owner_of (ov, n_ov, up) != own)
            continue;
          if (own == NULL && at_overlaid (ov, n_ov, up))
            continue;
          outer = false;
        }
      if (!outer)
        continue;
      fd = clone_tree (mp, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, true);
      if (fd >= 0)
        ops_add (&ops, mp, OP_BIND, fd, NULL);
    }

  /* Host look: themes, icons and fonts over the sandbox's own. */
  if (!L.host_base)
    for (size_t i = 0; i < sizeof merged / sizeof merged[0]; i++)
      {
        int fd = open (merged[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd >= 0)
          ops_add (&ops, merged[i], OP_MERGE, fd, NULL);
      }
  qsort (ops.ops, ops.n, sizeof (MountOp), cmp_ops);

  /* Staging: a private tmpfs over /tmp of this namespace (everything from
   * the host is already held by descriptor).  The top-level process's
   * copies are attached there, which makes them usable as layers here. */
  {
    cleanup_fd int fs = fsopen ("tmpfs", FSOPEN_CLOEXEC);
    if (fs < 0 || fsconfig (fs, FSCONFIG_SET_STRING, "mode", "0700", 0) != 0
        || fsconfig (fs, FSCONFIG_SET_STRING, "size", "1m", 0) != 0
        || fsconfig (fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) != 0)
      die_fs (fs, "cannot create the staging tmpfs");
    stage = fsmount (fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
    if (stage < 0)
      die_fs (fs, "cannot create the staging tmpfs");
  }
  tmp = (int) gl_openat2 (AT_FDCWD, "/tmp", O_PATH | O_DIRECTORY | O_CLOEXEC, RESOLVE_NO_SYMLINKS);
  if (tmp < 0)
    die_with_error ("cannot open /tmp to stage the sandbox");
  attach (stage, tmp, "the staging area");
  close (tmp);
  if (L.privileged)
    {
      stage_copy (stage, L.sandbox_copy, "sandbox");
      if (L.host_base)
        stage_copy (stage, L.base_copy, "base");
      for (size_t i = 0; i < n_ov; i++)
        stage_copy (stage, ov[i].host_fd, ov[i].layer);
    }
  if (mkdirat (stage, "root", 0700) != 0)
    die_with_error ("cannot create the staging root");

  /* The sandbox's layers, through this namespace's copy. */
  rootfs_fd = L.host_base ? -1 : reopen_same (L.sandbox_copy, "rootfs", L.rootfs_fd, "rootfs/");
  sysdir = openat (L.sandbox_copy, "system", O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
  if (sysdir < 0)
    die ("sandbox not usable: system/ changed while starting; try again");
  sysupper_fd = reopen_same (sysdir, "upper", L.sysupper_fd, "system/upper/");
  snprintf (uidname, sizeof uidname, "users/%u", (unsigned) L.uid);
  userdir_fd = reopen_same (L.sandbox_copy, uidname, L.userdir_fd, uidname);

  /* The writable overlays are made meanwhile (a failure ends the process).
   * This is the only place with threads: they start after every credential
   * change (we are already the user, holding capabilities of the new user
   * namespace only), touch nothing but their own overlays, and are joined
   * below, before anything else happens; capset() is per thread, so no
   * capability is dropped while one runs. */
  jobs = (OverlayJobs) { &ops, userdir_fd, 0 };
  for (int t = 0; t < N_HELPERS; t++)
    helped[t] = pthread_create (&helpers[t], NULL, overlay_thread, &jobs) == 0;

  /* The root: read-only overlay of (mount points) : system/upper : base.
   * The host's / cannot be a layer beside directories inside it (overlayfs
   * refuses overlapping layers), so a host base is first wrapped in an
   * overlay of its own: a different filesystem, no overlap. */
  if (L.host_base)
    {
      cleanup_fd int empty = -1;
      int two[2];
      if (mkdirat (stage, "empty", 0700) != 0 || mkdirat (stage, "host", 0700) != 0
          || (empty = openat (stage, "empty", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
        die_with_error ("cannot prepare the host base");
      two[0] = L.base_copy;
      two[1] = empty;
      base_fd = make_overlay (two, 2, -1, -1, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID
                              | MOUNT_ATTR_NODEV, "cannot use the host's / as the base");
      {
        cleanup_fd int dir = openat (stage, "host", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dir < 0)
          die_with_error ("cannot prepare the host base");
        attach (base_fd, dir, "the host base");
      }
    }
  else
    base_fd = rootfs_fd;
  skel_fd = open_user_dir (userdir_fd, "mountpoints", "mountpoints/");
  lowers[0] = skel_fd;
  lowers[1] = sysupper_fd;
  lowers[2] = base_fd;
  root = make_root (lowers);

  /* Mount points that do not exist in the tree (e.g. your home in a
   * foreign rootfs) are made in your own mount-point layer, never by root;
   * symbolic links and non-directories are refused. */
  for (size_t i = 0; i < ops.n; i++)
    {
      bool nested = false;
      int fd;
      for (size_t k = 0; k < i; k++)
        if (gl_launch_path_has_prefix (ops.ops[i].path, ops.ops[k].path))
          nested = true;
      if (nested)
        continue;
      fd = open_in_view (root, ops.ops[i].path);
      if (fd >= 0)
        {
          close (fd);
          continue;
        }
      /* (A merged directory the sandbox lacks still shows the host's.) */
      if (errno == ENOENT)
        {
          skel_mkdir_p (skel_fd, ops.ops[i].path);
          skel_changed = true;
        }
      else if (errno != ENOENT)
        die_target (ops.ops[i].path);
    }
  if (skel_changed)
    {
      close (root);
      root = make_root (lowers);
    }
  {
    cleanup_fd int dir = openat (stage, "root", O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0)
      die_with_error ("cannot open the staging root");
    attach (root, dir, "/");
  }

  make_overlays (&jobs);
  for (int t = 0; t < N_HELPERS; t++)
    if (helped[t] && pthread_join (helpers[t], NULL) != 0)
      die ("internal error: cannot wait for the overlays");

  for (size_t i = 0; i < ops.n; i++)
    {
      MountOp *op = &ops.ops[i];
      int target = open_in_view (root, op->path);
      int mnt = -1;

      if (target < 0)
        {
          die_target (op->path);
        }
      switch (op->kind)
        {
        case OP_PROC:
          {
            cleanup_fd int fs = fsopen ("proc", FSOPEN_CLOEXEC);
            if (fs < 0 || fsconfig (fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) != 0)
              die_fs (fs, "cannot mount a new /proc");
            mnt = fsmount (fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV
                           | MOUNT_ATTR_NOEXEC);
            if (mnt < 0)
              die_fs (fs, "cannot mount a new /proc");
          }
          break;
        case OP_BIND:
          mnt = op->src_fd;
          break;
        case OP_OVERLAY:
          mnt = op->mnt;
          break;
        case OP_MERGE:
          {
            int two[2] = { op->src_fd, target };
            cleanup_free char *what = xasprintf ("cannot merge the host's %s", op->path);
            mnt = make_overlay (two, 2, -1, -1, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID
                                | MOUNT_ATTR_NODEV, what);
          }
          break;
        default:
          die ("internal error: unknown mount kind");
        }
      attach (mnt, target, op->path);
      close (mnt);
      close (target);
    }

  /* Display, sound and bus sockets: the X11 directory in /tmp and the
   * runtime directory. */
  for (size_t i = 0; i < n_ov; i++)
    {
      if (strcmp (ov[i].layer, "run-user") == 0)
        {
          size_t budget = MAX_SOCKETS;
          bind_sockets (root, ov[i].host_fd, ov[i].path, 3, &budget);
        }
      else if (strcmp (ov[i].layer, "tmp") == 0)
        {
          static const char *const sockdirs[] = { ".X11-unix", ".ICE-unix" };
          for (size_t k = 0; k < 2; k++)
            {
              cleanup_fd int sd = -1;
              cleanup_free char *vp = xasprintf ("/tmp/%s", sockdirs[k]);
              struct stat st;
              if (L.sockdir[k].st_ino == 0)
                continue;
              sd = openat (ov[i].host_fd, sockdirs[k], O_PATH | O_NOFOLLOW | O_DIRECTORY
                           | O_CLOEXEC);
              if (sd >= 0 && fstat (sd, &st) == 0 && st.st_dev == L.sockdir[k].st_dev
                  && st.st_ino == L.sockdir[k].st_ino)
                {
                  size_t budget = MAX_SOCKETS;
                  bind_sockets (root, sd, vp, 1, &budget);
                }
            }
        }
    }

  /* Into the view; the old root goes away entirely. */
  if (fchdir (root) != 0)
    die_with_error ("cannot enter the sandbox root");
  if (syscall (SYS_pivot_root, ".", ".") != 0)
    die_with_error ("cannot pivot into the sandbox root");
  if (umount2 (".", MNT_DETACH) != 0)
    die_with_error ("cannot detach the host root");
  if (chdir ("/") != 0)
    die_with_error ("cannot enter the sandbox root");
}

/* ---------------------------------------------------------------------- */
/* The app                                                                 */

static GL_NORETURN void
exec_app (char *const *command, char **env)
{
  const char *path = gl_launch_env_get (env, "PATH");
  bool saw_eacces = false;
  int last = ENOENT;

  for (size_t i = 0;; i++)
    {
      cleanup_free char *cand = gl_launch_path_candidate (path, command[0], i);
      if (cand == NULL)
        break;
      execve (cand, command, env);
      if (errno == EACCES)
        saw_eacces = true;
      else if (errno != ENOENT && errno != ENOTDIR)
        last = errno;
      if (strchr (command[0], '/') != NULL && errno != ENOENT && errno != ENOTDIR)
        break;
    }
  if (last != ENOENT)
    die_status (GL_EXIT_NOEXEC, "cannot run %s inside sandbox \"%s\": %s; check that it "
                "is a program for this sandbox's system", command[0], L.id, strerror (last));
  if (saw_eacces)
    die_status (GL_EXIT_NOEXEC, "cannot run %s inside sandbox \"%s\": permission denied; "
                "check that it is executable", command[0], L.id);
  die_status (GL_EXIT_NOTFOUND, "command not found inside sandbox \"%s\": %s; install it "
              "in the sandbox or check the name", L.id, command[0]);
}

static const int forwarded[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGWINCH };

static void
noop_handler (int sig)
{
  (void) sig;
}

/* PID 1 of the sandbox: reaps everything, forwards signals to the app,
 * exits when nothing is left, with the app's status. */
static GL_NORETURN void
run_init (pid_t app, int sigfd, int status_fd)
{
  int app_status = 0;
  bool app_done = false;

  for (;;)
    {
      struct signalfd_siginfo si;
      ssize_t n = read (sigfd, &si, sizeof si);
      if (n < 0 && errno == EINTR)
        continue;
      if (n != (ssize_t) sizeof si)
        break;
      if (si.ssi_signo == SIGCHLD)
        {
          for (;;)
            {
              int st;
              pid_t p = waitpid (-1, &st, WNOHANG);
              if (p == app)
                {
                  app_status = st;
                  app_done = true;
                }
              if (p > 0)
                continue;
              if (p < 0 && errno == ECHILD && app_done)
                {
                  (void) gl_write_all (status_fd, &app_status, sizeof app_status);
                  if (WIFEXITED (app_status))
                    _exit (WEXITSTATUS (app_status));
                  _exit (128 + WTERMSIG (app_status));
                }
              break;
            }
        }
      else if (si.ssi_code != SI_KERNEL && !app_done)
        kill (app, (int) si.ssi_signo);
    }
  _exit (GL_EXIT_LAUNCHER);
}

/* The first process in the namespaces. */
static GL_NORETURN void
child_main (int sync_fd, int err_fd, int status_fd, char *const *command)
{
  char byte;
  sigset_t set;
  int sigfd;
  pid_t app;
  /* All capabilities, but of the new user namespace only: they count on
   * nothing but the user's own files (overlayfs copy-up needs them). */
  uint64_t keep = (1ULL << (CAP_LAST_CAP + 1)) - 1;

  gl_die_hook = NULL;
  gl_error_fd = err_fd;

  if (read (sync_fd, &byte, 1) != 1)
    die ("the launcher's parent went away while setting up");
  close (sync_fd);

  /* Become the user. */
  if (prctl (PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0)
    die_with_error ("cannot keep capabilities");
  if (L.privileged && setgroups ((size_t) L.n_groups, L.groups) != 0)
    die_with_error ("cannot set supplementary groups in the sandbox");
  if (setresgid (L.gid, L.gid, L.gid) != 0 || setresuid (L.uid, L.uid, L.uid) != 0)
    die_with_error ("cannot become uid %u in the sandbox", (unsigned) L.uid);
  (void) prctl (PR_SET_KEEPCAPS, 0, 0, 0, 0);
  if (gl_capset (keep, keep) != 0)
    die_with_error ("cannot raise capabilities in the new user namespace");
  if (prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
    die_with_error ("cannot set the parent-death signal");
  {
    /* The parent (which holds the locks) may have gone before that: its
     * end of the error pipe is then closed. */
    struct pollfd p = { err_fd, 0, 0 };
    if (poll (&p, 1, 0) != 0 && (p.revents & (POLLERR | POLLHUP)))
      _exit (125);
  }
  (void) prctl (PR_SET_DUMPABLE, 0, 0, 0, 0);

  build_view ();

  /* Nothing of the host stays open: keep only the two pipes, as 3 and 4. */
  {
    int e = fcntl (err_fd, F_DUPFD_CLOEXEC, 5);
    int s = fcntl (status_fd, F_DUPFD_CLOEXEC, 5);
    if (e < 0 || s < 0 || dup3 (e, 3, O_CLOEXEC) != 3 || dup3 (s, 4, O_CLOEXEC) != 4)
      die_with_error ("cannot rearrange descriptors");
    gl_error_fd = err_fd = 3;
    status_fd = 4;
    if (syscall (SYS_close_range, 5U, ~0U, 0U) != 0)
      for (int fd = 5; fd < 4096; fd++)
        close (fd);
  }

  /* Drop everything: no capability in any set, no way back. */
  drop_bounding_and_ambient (true);
  if (gl_capset (0, 0) != 0 || !no_caps_left ())
    die ("cannot drop all capabilities; refusing to run the command");
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    die_with_error ("cannot set no-new-privs");
  if (L.uid != 0 && (setuid (0) == 0 || seteuid (0) == 0))
    die ("could regain root inside the sandbox; refusing to run the command");

  L.app_env = gl_launch_build_env (L.app_env, L.home, L.user, L.shell, L.id);

  sigemptyset (&set);
  sigaddset (&set, SIGCHLD);
  for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
    {
      struct sigaction sa;
      memset (&sa, 0, sizeof sa);
      sa.sa_handler = noop_handler;
      sigaction (forwarded[i], &sa, NULL);
      sigaddset (&set, forwarded[i]);
    }
  sigprocmask (SIG_BLOCK, &set, NULL);
  sigfd = signalfd (-1, &set, SFD_CLOEXEC);
  if (sigfd < 0)
    die_with_error ("cannot watch signals");

  app = fork ();
  if (app < 0)
    die_with_error ("cannot start the command");
  if (app == 0)
    {
      sigset_t none;
      struct sigaction sa;
      memset (&sa, 0, sizeof sa);
      sa.sa_handler = SIG_DFL;
      for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
        sigaction (forwarded[i], &sa, NULL);
      sigemptyset (&none);
      sigprocmask (SIG_SETMASK, &none, NULL);
      close (sigfd);
      close (status_fd);
      /* Without a terminal to keep (a menu click, a script), a session of
       * its own: kill (0, ...) then reaches nothing outside the sandbox. */
      if (!isatty (STDIN_FILENO))
        (void) setsid ();
      install_tty_filter ();
      if (L.cwd == NULL || chdir (L.cwd) != 0)
        if (chdir (L.home) != 0)
          (void) chdir ("/");
      exec_app (command, L.app_env);
    }
  close (err_fd);
  gl_error_fd = -1;
  run_init (app, sigfd, status_fd);
}

/* ---------------------------------------------------------------------- */
/* The top-level process                                                   */

static void
write_proc_file (pid_t pid, const char *name, const char *content)
{
  char path[64];
  cleanup_fd int fd = -1;
  snprintf (path, sizeof path, "/proc/%d/%s", (int) pid, name);
  fd = open (path, O_WRONLY | O_CLOEXEC);
  if (fd < 0 || gl_write_all (fd, content, strlen (content)) != 0)
    die_with_error ("cannot write %s of the sandbox's user namespace", name);
}

static void
write_id_maps (pid_t pid)
{
  size_t cap = 64 + 32 * ((size_t) L.n_groups + 1), off = 0;
  cleanup_free char *gmap = xmalloc (cap);
  char umap[64];
  int lines = 1;

  snprintf (umap, sizeof umap, "%u %u 1\n", (unsigned) L.uid, (unsigned) L.uid);
  off += (size_t) snprintf (gmap, cap, "%u %u 1\n", (unsigned) L.gid, (unsigned) L.gid);
  if (L.privileged)
    {
      /* Root may map the user's supplementary groups too (never 0 unless
       * the caller is root, whose own groups these are). */
      for (int i = 0; i < L.n_groups; i++)
        {
          bool seen = L.groups[i] == L.gid;
          for (int k = 0; k < i && !seen; k++)
            seen = L.groups[k] == L.groups[i];
          if (seen)
            continue;
          if (++lines > 340)
            die ("you are in too many groups (more than 339) to keep them in the sandbox");
          off += (size_t) snprintf (gmap + off, cap - off, "%u %u 1\n",
                                    (unsigned) L.groups[i], (unsigned) L.groups[i]);
        }
    }
  else
    write_proc_file (pid, "setgroups", "deny");
  write_proc_file (pid, "uid_map", umap);
  write_proc_file (pid, "gid_map", gmap);
}

static void
sanitize_fds (void)
{
  for (int fd = 0; fd <= 2; fd++)
    if (fcntl (fd, F_GETFD) < 0 && errno == EBADF)
      {
        int n = open ("/dev/null", O_RDWR);
        if (n < 0)
          _exit (GL_EXIT_LAUNCHER);
        if (n != fd)
          {
            if (dup2 (n, fd) != fd)
              _exit (GL_EXIT_LAUNCHER);
            close (n);
          }
      }
  if (syscall (SYS_close_range, 3U, ~0U, 0U) != 0)
    for (int fd = 3; fd < 4096; fd++)
      close (fd);
}

static void
lookup_user (void)
{
  struct passwd *pw;

  errno = 0;
  pw = getpwuid (L.uid);
  if (pw == NULL)
    die ("cannot find your user (uid %u) in the password database; ask your "
         "administrator", (unsigned) L.uid);
  L.user = xstrdup (pw->pw_name);
  L.home = xstrdup (pw->pw_dir && pw->pw_dir[0] ? pw->pw_dir : "/");
  L.shell = xstrdup (pw->pw_shell && pw->pw_shell[0] ? pw->pw_shell : "/bin/sh");
  while (strlen (L.home) > 1 && L.home[strlen (L.home) - 1] == '/')
    L.home[strlen (L.home) - 1] = '\0';

}

/* The caller's supplementary groups, as the kernel has them (not from the
 * group database: a group the caller dropped stays dropped). */
static void
read_groups (void)
{
  int n = getgroups (0, NULL);
  if (n < 0)
    die_with_error ("cannot read your groups");
  L.groups = xcalloc ((size_t) n + 1, sizeof (gid_t));
  L.n_groups = getgroups (n, L.groups);
  if (L.n_groups < 0)
    die_with_error ("cannot read your groups");
}

int
main (int argc, char **argv)
{
  GlLaunchArgs args;
  GlLaunchAction action;
  uid_t ruid, euid, suid;
  gid_t rgid, egid, sgid;
  int sync_p[2], err_p[2], status_p[2];
  struct clone_args ca;
  sigset_t set;
  int sigfd, child_status = 0, app_status = -1;
  pid_t pid;
  char cwdbuf[PATH_MAX];
  size_t errlen = 0;
  char errbuf[4096];

  /* Hygiene first: argv, fds, no new privileges, not dumpable. */
  /* (Linux >= 5.18 turns an empty argv into { "" }.) */
  if (argc < 1 || argv == NULL || argv[0] == NULL || (argc == 1 && argv[0][0] == '\0'))
    {
      static const char msg[] = "glimpse-launch: called with an empty argument list; "
                                "run it as: glimpse-launch ID -- COMMAND\n";
      sanitize_fds ();
      (void) gl_write_all (2, msg, sizeof msg - 1);
      return GL_EXIT_LAUNCHER;
    }
  sanitize_fds ();
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    die_with_error ("cannot set no-new-privs");
  umask (022);

  if (getresuid (&ruid, &euid, &suid) != 0 || getresgid (&rgid, &egid, &sgid) != 0)
    die_with_error ("cannot read your ids");
  L.uid = ruid;
  L.gid = rgid;
  L.privileged = euid == 0;
  /* Not dumpable while privileged (the unprivileged child's id maps are
   * written by its parent, which needs /proc/PID to be the user's). */
  if (L.privileged)
    (void) prctl (PR_SET_DUMPABLE, 0, 0, 0, 0);
  read_groups ();
  if (!L.privileged && (euid != ruid || suid != ruid))
    die ("installed setuid to a user other than root; reinstall glimpse-launch");

  /* The caller's environment: only the allow-list survives, and nothing of
   * it is seen by the launcher itself. */
  L.app_env = gl_launch_filter_env (environ);
  L.notify_env = gl_launch_build_notify_env (environ);
  clearenv ();
  gl_die_hook = report_error;

  action = gl_launch_parse_args (argc, argv, &args);
  switch (action)
    {
    case GL_LAUNCH_ACTION_HELP:
      fputs (usage_text, stdout);
      return 0;
    case GL_LAUNCH_ACTION_VERSION:
      puts ("glimpse-launch " GL_LAUNCH_VERSION);
      return 0;
    case GL_LAUNCH_ACTION_ERROR:
      die ("%s", args.error);
    case GL_LAUNCH_ACTION_RUN:
    default:
      break;
    }
  L.id = args.id;

  L.cwd = getcwd (cwdbuf, sizeof cwdbuf) ? xstrdup (cwdbuf) : NULL;
  lookup_user ();
  open_sandbox ();
  make_copies ();

  if (pipe2 (sync_p, O_CLOEXEC) != 0 || pipe2 (err_p, O_CLOEXEC) != 0
      || pipe2 (status_p, O_CLOEXEC) != 0)
    die_with_error ("cannot create pipes");

  sigemptyset (&set);
  sigaddset (&set, SIGCHLD);
  for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
    sigaddset (&set, forwarded[i]);
  sigprocmask (SIG_BLOCK, &set, NULL);

  memset (&ca, 0, sizeof ca);
  ca.flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID;
  ca.exit_signal = SIGCHLD;
  pid = (pid_t) syscall (SYS_clone3, &ca, sizeof ca);
  if (pid < 0)
    {
      if (errno == EPERM || errno == ENOSPC || errno == EINVAL)
        die_with_error ("cannot create the sandbox's namespaces (user namespaces "
                        "disabled? glimpse-launch must be setuid root where unprivileged "
                        "user namespaces are not allowed)");
      die_with_error ("cannot create the sandbox's namespaces");
    }
  if (pid == 0)
    {
      close (sync_p[1]);
      close (err_p[0]);
      close (status_p[0]);
      child_main (sync_p[0], err_p[1], status_p[1], args.command);
    }

  close (sync_p[0]);
  close (err_p[1]);
  close (status_p[1]);
  write_id_maps (pid);
  drop_privs_for_good ();
  if (gl_write_all (sync_p[1], "x", 1) != 0)
    die_with_error ("cannot start the sandbox");

  /* Wait, holding the lock; forward signals; collect errors. */
  sigfd = signalfd (-1, &set, SFD_CLOEXEC);
  if (sigfd < 0)
    die_with_error ("cannot watch signals");
  for (bool child_done = false, err_open = true; !child_done || err_open;)
    {
      struct pollfd pfd[2] = { { sigfd, POLLIN, 0 }, { err_open ? err_p[0] : -1, POLLIN, 0 } };
      if (poll (pfd, 2, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          die_with_error ("cannot wait for the sandbox");
        }
      if (pfd[1].revents)
        {
          ssize_t n = read (err_p[0], errbuf + errlen, sizeof errbuf - 1 - errlen);
          if (n > 0)
            errlen += (size_t) n;
          else if (n == 0 || (errno != EINTR && errno != EAGAIN))
            err_open = false;
          if (errlen == sizeof errbuf - 1)
            err_open = false;
        }
      if (pfd[0].revents)
        {
          struct signalfd_siginfo si;
          if (read (sigfd, &si, sizeof si) != (ssize_t) sizeof si)
            continue;
          if (si.ssi_signo == SIGCHLD)
            {
              if (waitpid (pid, &child_status, WNOHANG) == pid)
                child_done = true;
            }
          else if (si.ssi_code != SI_KERNEL)
            kill (pid, (int) si.ssi_signo);
        }
    }
  if (read (status_p[0], &app_status, sizeof app_status) != (ssize_t) sizeof app_status)
    app_status = -1;
  close (L.lock_fd);
  close (L.user_lock_fd);

  if (errlen > 0)
    {
      errbuf[errlen] = '\0';
      fputs (errbuf, stderr);
      fflush (stderr);
      if (errbuf[errlen - 1] == '\n')
        errbuf[errlen - 1] = '\0';
      report_error (strncmp (errbuf, "glimpse-launch: ", 16) == 0 ? errbuf + 16 : errbuf);
    }

  if (app_status != -1 && WIFSIGNALED (app_status))
    {
      int sig = WTERMSIG (app_status);
      struct sigaction sa;
      sigset_t one;
      memset (&sa, 0, sizeof sa);
      sa.sa_handler = SIG_DFL;
      sigaction (sig, &sa, NULL);
      sigemptyset (&one);
      sigaddset (&one, sig);
      sigprocmask (SIG_UNBLOCK, &one, NULL);
      (void) prctl (PR_SET_DUMPABLE, 0, 0, 0, 0);
      raise (sig);
      return 128 + sig;
    }
  if (WIFEXITED (child_status))
    return WEXITSTATUS (child_status);
  if (WIFSIGNALED (child_status))
    return 128 + WTERMSIG (child_status);
  return GL_EXIT_LAUNCHER;
}
