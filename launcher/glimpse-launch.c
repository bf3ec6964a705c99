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

#include "gl-launch-pure.h"
#include "gl-launch-die.h"
#include "gl-launch-mount.h"
#include "gl-launch-store.h"

#include <dirent.h>
#include <sys/fsuid.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/magic.h>
#include <linux/nsfs.h>
#include <linux/openat2.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/fsuid.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/ioctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>

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

#define GL_MAX_PASSED 64

/* In users/.views/ (root's, 0700): <uid>, root's record of that user's
 * running view, and <uid>.lock, the lock that serialises finding, building
 * and joining it (both root's, 0600: nothing the user can delete or
 * replace).  Without privilege (no views are shared) the lock is the
 * user's own users/<uid>/view.lock. */
#define GL_VIEW_LOCK_UNPRIV "view.lock"
/* At most this many mount IDs (of the view's own overlays: its root, at
 * most 8 writable ones and 3 merged directories) in the record. */
#define GL_VIEW_MAX_MOUNTS 32
/* (Linux 6.8; the mount IDs statx gives with it are never reused, while
 * the 32-bit ones of mountinfo and STATX_MNT_ID are, lowest free first) */
#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x00004000U
#endif
/* (Linux 6.9: a mount namespace's 64-bit ID, never reused, while its
 * inode number is given out again, lowest free first) */
#ifndef NS_GET_MNTNS_ID
#define NS_GET_MNTNS_ID _IOR (0xb7, 0x5, uint64_t)
#endif

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
  GlLaunchSandbox sb;
  int sandbox_copy, base_copy;
  /* /tmp/.X11-unix and /tmp/.ICE-unix as checked on the host (root's or
   * yours, sticky): st_ino 0 when not to be passed */
  struct stat sockdir[2];
  /* single sockets to pass, checked on the host (path = path in the view):
   * yours or root's in the X11/ICE directories (for X11 only $DISPLAY's),
   * and your session bus wherever it lives */
  struct { char *path; struct stat st; } socks[GL_MAX_PASSED];
  size_t n_socks;
  Overlaid ov[8];
  size_t n_ov;
  int pid1_lock;       /* the view lock again (its own open file), for PID 1 */
  /* the mount namespace (device, inode) of a recorded view that is gone,
   * and the mount IDs of its overlays (and their unique IDs, where the
   * record has them: then those are the ones compared) */
  unsigned long long stale_mnt_dev, stale_mnt;
  unsigned stale_mounts[GL_VIEW_MAX_MOUNTS];
  unsigned long long stale_unique[GL_VIEW_MAX_MOUNTS];
  size_t n_stale_mounts;
  bool stale_by_unique;
  /* and its mount namespace's ID (NS_GET_MNTNS_ID), where the record has
   * it (0: only the device and inode are compared) */
  unsigned long long stale_mntns_id;
  /* What starting the app needs that no view is needed for (prepare_app):
   * a first launch makes it while its view is being built. */
  char **start_env;     /* the app's whole environment */
  char **start_cands;   /* where its command is looked for */
  bool tty_filter;      /* install_tty_filter done: the app inherits it */
  int share_memory;     /* may_share_memory (), read once; -1: not yet */
} Launch;

static Launch L = {
  .sb = GL_LAUNCH_SANDBOX_INIT,
  .sandbox_copy = -1, .base_copy = -1, .pid1_lock = -1, .share_memory = -1,
};

static const char usage_text[] =
  "Usage: glimpse-launch ID -- COMMAND [ARG...]\n"
  "       glimpse-launch --held ID\n"
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
  "--held ID (for glimpse purge and remove) mounts nothing: it exits 0 when\n"
  "no view of yours uses your layer of sandbox ID, 124 (naming what holds it)\n"
  "when one runs or an ended one is kept by a process outside it.\n"
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
 * user namespace; silently does nothing without it).  Dropping a
 * capability the set no longer holds succeeds, so each is dropped without
 * reading it first (one system call per capability, not two). */
static void
drop_bounding_and_ambient (bool must)
{
  (void) prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  for (int cap = 0; cap <= 63; cap++)
    if (prctl (PR_CAPBSET_DROP, cap, 0, 0, 0) != 0)
      {
        if (errno == EINVAL)
          break;        /* past CAP_LAST_CAP */
        if (must)
          die_with_error ("cannot drop capability %d from the bounding set", cap);
      }
}

/* Becomes the user for good (writes no memory: the app's process runs it
 * in the launcher's).  BOUNDING: empty the bounding and ambient sets too
 * (false only in a process that enters a user namespace next, which fills
 * the bounding set again, and empties them there: app_main). */
static void
become_user (bool bounding)
{
  if (L.privileged)
    {
      if (bounding)
        drop_bounding_and_ambient (true);
      if (setgroups ((size_t) L.n_groups, L.groups) != 0)
        die_with_error ("cannot set supplementary groups");
      if (setresgid (L.gid, L.gid, L.gid) != 0)
        die_with_error ("cannot set group id %u", (unsigned) L.gid);
      /* A change of the effective uid makes the process dumpable where
       * fs.suid_dumpable is 1 ("debug"), and then any process of yours
       * could trace it or open its /proc entries (what root opened, the
       * memory a vfork-style child shares).  The saved uid stays root's
       * until it is not dumpable again, so no process of yours can reach
       * it in between (the kernel lets you list its descriptor numbers
       * then, as the owner of its /proc entries, but not follow them);
       * giving up the saved uid makes nothing dumpable. */
      if (setresuid (L.uid, L.uid, (uid_t) -1) != 0)
        die_with_error ("cannot set user id %u", (unsigned) L.uid);
      if (prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) != 0 || setresuid ((uid_t) -1, (uid_t) -1, L.uid) != 0)
        die_with_error ("cannot set user id %u", (unsigned) L.uid);
      if (prctl (PR_GET_DUMPABLE, 0, 0, 0, 0) != 0)
        die ("dumpable after dropping root; refusing to continue");
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

/* Becomes the user for good in the top-level process.  Idempotent.
 * BOUNDING: as become_user's. */
static void
drop_privs (bool bounding)
{
  if (L.dropped)
    return;
  L.dropped = true;
  become_user (bounding);
}

static void
drop_privs_for_good (void)
{
  drop_privs (true);
}

/* Whether a notification can be shown at all: there is a session bus to
 * send it on (DBUS_SESSION_BUS_ADDRESS, or the socket GDBus looks for
 * without it, $XDG_RUNTIME_DIR/bus).  Without one, the helper could only
 * say that it cannot ("Cannot autolaunch D-Bus without X11 $DISPLAY"), the
 * error itself being on stderr already.  As the user. */
static bool
notify_has_bus (void)
{
  const char *runtime = NULL;
  char bus[PATH_MAX];
  struct stat st;

  for (char **e = L.notify_env; *e != NULL; e++)
    {
      if (strncmp (*e, "DBUS_SESSION_BUS_ADDRESS=", 25) == 0 && (*e)[25] != '\0')
        return true;
      if (strncmp (*e, "XDG_RUNTIME_DIR=", 16) == 0)
        runtime = *e + 16;
    }
  if (runtime == NULL || runtime[0] != '/'
      || snprintf (bus, sizeof bus, "%s/bus", runtime) >= (int) sizeof bus)
    return false;
  return lstat (bus, &st) == 0 && S_ISSOCK (st.st_mode);
}

/* How long the launcher waits for the notification helper before it
 * stops it: a notification server answers at once; a bus that does not
 * answer would make GDBus wait 25 s */
#define NOTIFY_WAIT_MS 5000

/* The die() hook of the top-level process: after dropping privileges
 * completely, show the error on the desktop when there is no terminal and
 * there is a session bus to show it on.  The helper is waited for (at most
 * NOTIFY_WAIT_MS), so that nothing it prints comes after the launcher (and
 * `glimpse run`) has returned. */
static void
report_error (const char *message)
{
  pid_t pid;
  int pidfd;

  if (isatty (STDERR_FILENO) || L.notify_env == NULL)
    return;
  drop_privs_for_good ();
  if (getuid () == 0 || geteuid () == 0)
    return;             /* never run anything as root */
  if (!notify_has_bus ())
    return;

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
  if (pid < 0)
    return;
  /* Its failure is ignored; a helper that takes too long is stopped */
  pidfd = (int) syscall (SYS_pidfd_open, pid, 0);
  if (pidfd >= 0)
    {
      struct pollfd p = { .fd = pidfd, .events = POLLIN };
      int r;
      do
        r = poll (&p, 1, NOTIFY_WAIT_MS);
      while (r < 0 && errno == EINTR);
      if (r == 0)
        kill (pid, SIGKILL);
      close (pidfd);
    }
  while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
    ;
}

/* ---------------------------------------------------------------------- */
/* Checking the sandbox store (as root, on root's own state only)          */

/* The X11 and ICE socket directories in /tmp are passed in only when they
 * are root's (or yours) and sticky, as a desktop makes them: anyone can
 * create them when they are missing, and fill them. */
static void
pass_socket (const char *path, uid_t owner_ok)
{
  struct stat st;
  if (L.n_socks == GL_MAX_PASSED || lstat (path, &st) != 0 || !S_ISSOCK (st.st_mode)
      || (st.st_uid != L.uid && st.st_uid != owner_ok))
    return;
  L.socks[L.n_socks].path = xstrdup (path);
  L.socks[L.n_socks++].st = st;
}

/* The X11 display number $DISPLAY names for a local socket, or -1. */
static long
display_number (void)
{
  const char *d = gl_launch_env_get (L.app_env, "DISPLAY");
  char *end;
  long n;
  if (d == NULL)
    return -1;
  if (strncmp (d, "unix:", 5) == 0)
    d += 4;
  if (d[0] != ':' || d[1] < '0' || d[1] > '9')
    return -1;
  n = strtol (d + 1, &end, 10);
  return (*end == '\0' || *end == '.') && n < 100000 ? n : -1;
}

/* The X11 and ICE socket directories in /tmp are passed in only when they
 * are root's (or yours) and sticky, as a desktop makes them: anyone can
 * create them when they are missing, and fill them.  Of their sockets only
 * root's and yours are passed (another user's thousands cannot crowd yours
 * out), and of X11's only the one $DISPLAY names (its abstract twin is in
 * the network namespace, which the view shares).  Your session bus is
 * passed wherever its socket lives, when it is yours. */
static void
check_socket_dirs (void)
{
  static const char *const paths[] = { "/tmp/.X11-unix", "/tmp/.ICE-unix" };
  long display = display_number ();
  const char *bus = gl_launch_env_get (L.app_env, "DBUS_SESSION_BUS_ADDRESS");

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
      if (k == 0 && display >= 0)
        {
          cleanup_free char *p = xasprintf ("%s/X%ld", paths[k], display);
          pass_socket (p, 0);
        }
      else if (k == 1)
        {
          DIR *d = opendir (paths[k]);
          struct dirent *e;
          while (d != NULL && (e = readdir (d)) != NULL)
            if (e->d_type == DT_SOCK || e->d_type == DT_UNKNOWN)
              {
                cleanup_free char *p = xasprintf ("%s/%s", paths[k], e->d_name);
                pass_socket (p, 0);
              }
          if (d != NULL)
            closedir (d);
        }
    }

  /* unix:path=/some/where[,guid=...][;next address] */
  if (bus != NULL && strncmp (bus, "unix:", 5) == 0)
    {
      const char *p = strstr (bus, "path=");
      if (p != NULL && (p == bus + 5 || p[-1] == ','))
        {
          cleanup_free char *path = xstrdup (p + 5);
          path[strcspn (path, ",;")] = '\0';
          if (gl_launch_path_is_canonical (path))
            pass_socket (path, L.uid);
        }
    }
}

/* Copies are private before use: no mount of the view stays in a peer
 * group with the host (nothing propagates either way). */
static void
make_private (int fd, const char *what)
{
  struct mount_attr attr = { .propagation = MS_PRIVATE };
  if (mount_setattr (fd, "", AT_EMPTY_PATH, &attr, sizeof attr) != 0)
    die_with_error ("cannot make the copy of %s private", what);
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
  const GlLaunchLayer *dirs = gl_launch_layers;
  const unsigned copy_flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_NO_AUTOMOUNT;

  if (L.privileged)
    {
      L.sandbox_copy = open_tree (L.sb.sandbox_fd, "", copy_flags | AT_EMPTY_PATH);
      if (L.sandbox_copy < 0)
        die_with_error ("cannot copy the mount of sandbox \"%s\"", L.id);
      make_private (L.sandbox_copy, "the sandbox");
      setfsgid (L.gid);
      setfsuid (L.uid);
      if ((uid_t) setfsuid ((uid_t) -1) != L.uid || (gid_t) setfsgid ((gid_t) -1) != L.gid)
        die ("cannot switch to your filesystem ids");
      if (L.sb.host_base)
        {
          L.base_copy = open_tree (AT_FDCWD, "/", copy_flags);
          if (L.base_copy < 0)
            die_with_error ("cannot copy the host's / for the sandbox base");
          make_private (L.base_copy, "/");
        }
    }

  for (size_t i = 0; dirs[i].layer != NULL; i++)
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
          make_private (fd, path);
        }
      L.ov[L.n_ov++] = (Overlaid) { dirs[i].layer, steal_pointer (&path), fd };
    }

  /* Still with your filesystem ids, as they need. */
  gl_launch_store_lock_user (&L.sb, L.uid);
  /* Without privilege your lock stands for the generation's (root's):
   * what an operation switched away from before it was held may go */
  if (!L.privileged && !L.sb.query)
    gl_launch_store_recheck_generation (&L.sb);
  check_socket_dirs ();

  if (L.privileged)
    {
      setfsuid (0);
      setfsgid (0);
    }
}

/* ---------------------------------------------------------------------- */
/* Inside the namespaces: building the view, as the user                   */

typedef enum { OP_PROC, OP_DEV, OP_BIND, OP_OVERLAY, OP_MERGE } OpKind;

typedef struct {
  char *path;           /* absolute path in the view */
  OpKind kind;
  int src_fd;           /* OP_BIND: detached tree; OP_OVERLAY/OP_MERGE: host dir */
  const char *layer;    /* OP_OVERLAY: layer name in users/<uid>/ */
  int mnt;              /* OP_OVERLAY: the overlay, made before the attaching */
  int old_work;         /* OP_OVERLAY: the work directory's previous "work" (see
                         * make_layer_overlay), held until the view is ready */
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
  l->ops[l->n++] = (MountOp) { xstrdup (path), kind, src_fd, layer, -1, -1 };
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

static int
make_root (const int *lowers, size_t n_lowers)
{
  return gl_launch_mount_overlay (lowers, n_lowers, -1, -1,
                                  MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
                                  "cannot build the sandbox root (overlay of the system "
                                  "layer and the base)");
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

/* True if ST is the mount namespace of the recorded view that is gone
 * (device and inode). */
static bool
is_stale_mnt (const struct stat *st)
{
  return (unsigned long long) st->st_dev == L.stale_mnt_dev
         && (unsigned long long) st->st_ino == L.stale_mnt;
}

/* True if the mount namespace at NAME below DIRFD (a magic link of
 * /proc/PID/: ns/mnt, or a descriptor) is the one of the recorded view
 * that is gone.  Its inode number is given out again, lowest free first,
 * once it is gone (to a view of another sandbox, a browser's or
 * Flatpak's sandbox): where the record has the namespace's ID, that is
 * compared too.  (Runs as you: opening your own process's namespace gives
 * you nothing you could not open yourself.) */
static bool
is_stale_mnt_at (int dirfd, const char *name)
{
  struct stat st;
  cleanup_fd int fd = -1;
  uint64_t id = 0;

  if (fstatat (dirfd, name, &st, 0) != 0 || !is_stale_mnt (&st))
    return false;
  if (L.stale_mntns_id == 0)
    return true;
  fd = openat (dirfd, name, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  return fd >= 0 && fstat (fd, &st) == 0 && is_stale_mnt (&st)
         && ioctl (fd, NS_GET_MNTNS_ID, &id) == 0 && id == L.stale_mntns_id;
}

/* True if process PID (a /proc entry name) is in the mount namespace of
 * the recorded view that is gone, or holds a descriptor of it. */
static bool
holds_stale_mnt (const char *pid)
{
  char path[300];
  DIR *d;
  struct dirent *e;
  bool found = false;

  snprintf (path, sizeof path, "/proc/%s/ns/mnt", pid);
  if (is_stale_mnt_at (AT_FDCWD, path))
    return true;
  snprintf (path, sizeof path, "/proc/%s/fd", pid);
  d = opendir (path);
  while (!found && d != NULL && (e = readdir (d)) != NULL)
    {
      char link[64];
      ssize_t n;
      if (e->d_name[0] == '.')
        continue;
      /* (only namespace descriptors are looked at: nothing else opened) */
      n = readlinkat (dirfd (d), e->d_name, link, sizeof link - 1);
      if (n <= 0 || (link[n] = '\0', strncmp (link, "mnt:[", 5) != 0))
        continue;
      found = is_stale_mnt_at (dirfd (d), e->d_name);
    }
  if (d != NULL)
    closedir (d);
  return found;
}

/* True if the file at NAME below DIRFD (a magic link of /proc/PID/: a
 * descriptor, cwd, root) is on one of the recorded view's overlays
 * (STATX_MNT_ID, or STATX_MNT_ID_UNIQUE where the record has those: it
 * is only looked at, never opened).  The 32-bit IDs are given out again,
 * lowest free first, once a mount is gone: an old record's may be those
 * of any mount now, a view of another sandbox's say. */
static bool
on_stale_mount (int dirfd, const char *name)
{
  unsigned mask = L.stale_by_unique ? STATX_MNT_ID_UNIQUE : STATX_MNT_ID;
  struct statx stx;
  if (L.n_stale_mounts == 0 || statx (dirfd, name, AT_NO_AUTOMOUNT, mask, &stx) != 0
      || !(stx.stx_mask & mask))
    return false;
  for (size_t i = 0; i < L.n_stale_mounts; i++)
    if (L.stale_by_unique ? stx.stx_mnt_id == L.stale_unique[i]
        : stx.stx_mnt_id == L.stale_mounts[i])
      return true;
  return false;
}

/* True if process PID (a /proc entry name) has a file of the recorded
 * view's overlays open, or its working or root directory there. */
static bool
holds_stale_file (const char *pid)
{
  char path[300];
  cleanup_fd int pfd = -1;
  DIR *d;
  struct dirent *e;
  bool found = false;

  if (L.n_stale_mounts == 0)
    return false;
  snprintf (path, sizeof path, "/proc/%s", pid);
  pfd = open (path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (pfd < 0)
    return false;
  if (on_stale_mount (pfd, "cwd") || on_stale_mount (pfd, "root"))
    return true;
  snprintf (path, sizeof path, "/proc/%s/fd", pid);
  d = opendir (path);
  while (!found && d != NULL && (e = readdir (d)) != NULL)
    found = e->d_name[0] != '.' && on_stale_mount (dirfd (d), e->d_name);
  if (d != NULL)
    closedir (d);
  return found;
}

/* What keeps the previous view (its mount namespace, a descriptor of it,
 * or a file of its overlays) after the kernel refused to mount a layer
 * still in use, or for glimpse purge (--held): the processes that you may
 * see (yours; at most GL_MAX_HOLDERS), each as "process N (NAME)" and
 * whether it has a file of the view open, into HOLDERS.  How many.  Runs
 * as you, after dropping privileges. */
#define GL_MAX_HOLDERS 5
typedef struct {
  char pid[16];
  char comm[64];
  bool by_file;
} Holder;

static int
view_holders (Holder holders[GL_MAX_HOLDERS])
{
  DIR *d;
  struct dirent *e;
  int found = 0;

  if (L.stale_mnt == 0 || (d = opendir ("/proc")) == NULL)
    return 0;
  while (found < GL_MAX_HOLDERS && (e = readdir (d)) != NULL)
    {
      char path[300];
      Holder *h = &holders[found];
      cleanup_fd int fd = -1;
      ssize_t n;
      if (e->d_name[0] < '1' || e->d_name[0] > '9' || strlen (e->d_name) >= sizeof h->pid)
        continue;
      h->by_file = false;
      if (!holds_stale_mnt (e->d_name) && !(h->by_file = holds_stale_file (e->d_name)))
        continue;
      found++;
      /* (shorter than h->pid: checked above) */
      memcpy (h->pid, e->d_name, strlen (e->d_name) + 1);
      h->comm[0] = '\0';
      snprintf (path, sizeof path, "/proc/%s/comm", e->d_name);
      fd = open (path, O_RDONLY | O_CLOEXEC);
      if (fd >= 0 && (n = read (fd, h->comm, sizeof h->comm - 1)) > 0)
        h->comm[n - (h->comm[n - 1] == '\n')] = '\0';
      gl_launch_printable_name (h->comm);
    }
  closedir (d);
  return found;
}

/* For glimpse purge (--held): names the processes that keep the previous
 * view, one line each, asking you to close them and then try again.  How
 * many it named. */
static int
report_view_holders (void)
{
  Holder holders[GL_MAX_HOLDERS];
  int n = view_holders (holders);

  for (int i = 0; i < n; i++)
    fprintf (stderr, "glimpse-launch: the previous view of sandbox \"%s\" is still held by "
             "process %s (%s)%s; close it, then try again\n", L.id, holders[i].pid,
             holders[i].comm, holders[i].by_file ? ", which has a file of it open" : "");
  return n;
}

/* A launch the kernel refused because your layer is still in use by the
 * previous view: one line into BUF (SIZE bytes) naming what keeps that
 * view and what to do, or 0 (BUF untouched) when no process of yours is
 * seen keeping it (the child's own message then stands).  Its length. */
static size_t
view_held_message (char *buf, size_t size)
{
  Holder holders[GL_MAX_HOLDERS];
  int n = view_holders (holders);
  size_t len;

  if (n == 0)
    return 0;
  len = (size_t) snprintf (buf, size, "glimpse-launch: cannot launch in sandbox \"%s\": your "
                           "layer is still in use by an earlier view of this sandbox, still "
                           "held by", L.id);
  for (int i = 0; i < n && len < size; i++)
    len += (size_t) snprintf (buf + len, size - len, "%s process %s (%s)%s",
                              i == 0 ? "" : i == n - 1 ? " and" : ",", holders[i].pid,
                              holders[i].comm,
                              holders[i].by_file ? ", which has a file of it open" : "");
  if (len < size)
    len += (size_t) snprintf (buf + len, size - len, "; close %s, then launch again\n",
                              n == 1 ? "it" : "them");
  return len < size ? len : size - 1;
}

/* The writable overlay for OP (the host directory under the user's layer
 * users/<uid>/<layer>/), as a detached mount.
 *
 * The kernel removes the "work" directory that the previous overlay left
 * in the work directory, and makes a new one.  Freeing that directory's
 * block can wait for the disk (a file system mounted with "discard"
 * trims it there and then: 1-4 ms per overlay here, most of the cost of
 * a first launch), so the old one is held open (*OLD_WORK, O_PATH): it is
 * let go, and its block freed, by PID 1 once the view is ready and the
 * launcher has gone on to start the app.  Only held, never used; -1 when
 * there is none (or not a directory: the kernel then says so). */
static int
make_layer_overlay (const MountOp *op, int userdir_fd, int *old_work)
{
  cleanup_fd int layer = gl_launch_mount_open_user_dir (userdir_fd, op->layer, op->layer, L.uid);
  cleanup_fd int upper = gl_launch_mount_open_user_dir (layer, "upper", "upper/", L.uid);
  cleanup_fd int work = gl_launch_mount_open_user_dir (layer, "work", "work/", L.uid);
  cleanup_free char *what = xasprintf ("cannot overlay %s", op->path);
  struct stat host, up;
  int mnt;

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
  *old_work = openat (work, "work", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  mnt = gl_launch_mount_overlay (&op->src_fd, 1, upper, work, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
                                 what);
  if (mnt >= 0)
    {
      /* The kernel mounts a layer whose work directory it cannot prepare
       * (an inode table or disk full even for it, the directory made
       * immutable) read-only, and says so only in its log: say it here. */
      struct statvfs sv, lsv;
      if (fstatvfs (mnt, &sv) == 0 && (sv.f_flag & ST_RDONLY))
        fprintf (stderr, "glimpse-launch: warning: %s is read-only in this view: %s\n", op->path,
                 fstatvfs (upper, &lsv) == 0 && (lsv.f_bavail == 0 || lsv.f_favail == 0)
                 ? "the file system that holds your layers is full (free some space, or "
                   "\"glimpse purge\" a layer)"
                 : "the kernel could not prepare the work directory of your layer (see its "
                   "log; \"glimpse purge\" resets the layer)");
      return mnt;
    }
  /* The kernel refused: the layer's upper or work directory is in use by
   * another overlay.  Without privilege every launch builds its own view,
   * so that is simply your other view of this sandbox. */
  if (!L.privileged)
    die ("%s: another view of sandbox \"%s\" of yours is running; without the setuid bit "
         "glimpse-launch runs one view of a sandbox at a time: close it first", what, L.id);
  die_status (GL_EXIT_VIEW_HELD, "%s: your layer is still in use by an earlier view of this "
              "sandbox, which a process outside it keeps (it holds the view's mount namespace, "
              "e.g. through nsenter, or a file of it open); close that process and launch again",
              what);
}

/* The writable overlays of OPS, one after the other.  Not in threads,
 * measured twice on the 2-core VM: the first thread of a process costs
 * 0.3-0.6 ms to start there, about what two overlays at a time could save
 * at best, and overlays created side by side held each other up for 1-10
 * ms.  (A thread would also have to be gone from the thread group, not
 * only joined, before lock_view: unshare (CLONE_NEWUSER) fails with
 * EINVAL in a process with more than one thread.) */
static void
make_overlays (OpList *ops, int userdir_fd)
{
  for (size_t i = 0; i < ops->n; i++)
    if (ops->ops[i].kind == OP_OVERLAY)
      ops->ops[i].mnt = make_layer_overlay (&ops->ops[i], userdir_fd, &ops->ops[i].old_work);
}

/* What the steps of building a view share. */
typedef struct {
  OpList ops;
  GlLaunchMountTable mt;
  int stage;            /* staging tmpfs, attached over this namespace's /tmp */
  int root;             /* the view's root, attached in the staging area */
  int userdir_fd;       /* users/<uid>/ through this namespace's copy */
} View;

/* Without privilege the copies could not be made: use this namespace's
 * own view (directories with mounts below them then cannot be layers). */
static void
view_unprivileged_sources (const GlLaunchMountTable *mt)
{
  struct stat a, b;
  cleanup_free char *sbpath = xasprintf ("%s/%s", GL_LAUNCH_SANDBOX_DIR, L.id);
  L.sandbox_copy = open (sbpath, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
  if (L.sandbox_copy < 0 || fstat (L.sandbox_copy, &a) != 0 || fstat (L.sb.sandbox_fd, &b) != 0
      || a.st_dev != b.st_dev || a.st_ino != b.st_ino)
    die ("sandbox not usable: %s changed while starting; try again", sbpath);
  if (L.sb.host_base)
    die ("sandbox \"%s\" is based on the host's /, which has mounts below it: only "
         "the setuid-root glimpse-launch can show it; ask your administrator to "
         "install glimpse-launch setuid root", L.id);
  for (size_t i = 0; i < L.n_ov; i++)
    {
      bool below = false;
      for (size_t k = 0; k < mt->n; k++)
        if (gl_launch_path_has_prefix (mt->paths[k], L.ov[i].path)
            && strcmp (mt->paths[k], L.ov[i].path) != 0)
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
}

/* A mount below an overlaid directory (/tmp, /var/tmp, /dev/shm: anyone
 * can mount there with fusermount3) is shown only when it is a directory
 * and, for FUSE, yours: another user's mount never decides whether your
 * launch starts.  Another user's FUSE mount is judged by the mount table
 * alone, never looked at: with allow_other, an lstat() of it waits for
 * that user's daemon, which need never answer.  One warning line for all
 * that are skipped. */
static bool
submount_is_yours (const GlLaunchMountTable *mt, size_t i, bool *warned)
{
  struct stat st;
  const char *why = NULL;
  char mine[32];
  snprintf (mine, sizeof mine, "user_id=%u", (unsigned) L.uid);
  if (strncmp (mt->fstypes[i], "fuse", 4) == 0)
    {
      const char *o = strstr (mt->fsopts[i], mine);
      if (o == NULL || (o != mt->fsopts[i] && o[-1] != ',')
          || (o[strlen (mine)] != '\0' && o[strlen (mine)] != ','))
        why = "another user's";
    }
  if (why == NULL && lstat (mt->paths[i], &st) != 0)
    return true;        /* unreachable: the copy skips it */
  if (why == NULL && !S_ISDIR (st.st_mode))
    why = "not a directory";
  if (why == NULL)
    return true;
  if (!*warned)
    fprintf (stderr, "glimpse-launch: warning: not showing the mount on %s (%s) or others "
             "like it inside the sandbox\n", mt->paths[i], why);
  *warned = true;
  return false;
}

/* Plan: the list of mounts of the view, outermost first. */
static void
view_plan (View *v)
{
  static const char *const merged[] = {
    "/usr/share/themes", "/usr/share/icons", "/usr/share/fonts",
  };
  const Overlaid *ov = L.ov;
  size_t n_ov = L.n_ov;
  OpList *ops = &v->ops;
  const GlLaunchMountTable *mt = &v->mt;
  bool warned = false;

  /* Fresh /proc, the host's /sys (read-only), a minimal /dev. */
  ops_add (ops, "/proc", OP_PROC, -1, NULL);
  ops_add (ops, "/sys", OP_BIND, gl_launch_mount_clone_tree ("/sys", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID
                                              | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, false),
           NULL);
  ops_add (ops, "/dev", OP_DEV, -1, NULL);
  for (size_t i = 0; i < n_ov; i++)
    ops_add (ops, ov[i].path, OP_OVERLAY, ov[i].host_fd, ov[i].layer);

  /* Host mounts: under an overlaid directory they are bound (read-only) on
   * the overlay, so they are not silently hidden; for a host base, every
   * other host mount is bound read-only at its place. */
  for (size_t i = 0; i < mt->n; i++)
    {
      const char *mp = mt->paths[i];
      const Overlaid *own;
      bool outer = true;
      int fd;

      if (strcmp (mp, "/") == 0 || ops_has_path (ops, mp))
        continue;
      if (gl_launch_path_has_prefix (mp, "/proc") || gl_launch_path_has_prefix (mp, "/sys")
          || gl_launch_path_has_prefix (mp, "/dev"))
        continue;
      own = owner_of (ov, n_ov, mp);
      if (own == NULL && (!L.sb.host_base || at_overlaid (ov, n_ov, mp)))
        continue;
      /* Only the outermost: a recursive copy carries the ones below. */
      for (size_t k = 0; k < mt->n && outer; k++)
        {
          const char *up = mt->paths[k];
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
      if (own != NULL && !submount_is_yours (mt, i, &warned))
        continue;
      fd = gl_launch_mount_clone_tree (mp, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, true);
      if (fd >= 0)
        ops_add (ops, mp, OP_BIND, fd, NULL);
    }

  /* Host look: themes, icons and fonts over the sandbox's own. */
  if (!L.sb.host_base)
    for (size_t i = 0; i < sizeof merged / sizeof merged[0]; i++)
      {
        int fd = open (merged[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd >= 0)
          ops_add (ops, merged[i], OP_MERGE, fd, NULL);
      }
  qsort (ops->ops, ops->n, sizeof (MountOp), cmp_ops);
}

/* Stage: a private tmpfs over /tmp of this namespace (everything from the
 * host is already held by descriptor).  The top-level process's copies are
 * attached there, which makes them usable as layers here. */
static void
view_stage (View *v)
{
  int tmp;

  v->stage = gl_launch_mount_tmpfs ("0700", "1m", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV
                                    | MOUNT_ATTR_NOEXEC, "cannot create the staging tmpfs");
  tmp = (int) gl_launch_mount_openat2 (AT_FDCWD, "/tmp", O_PATH | O_DIRECTORY | O_CLOEXEC,
                                       RESOLVE_NO_SYMLINKS);
  if (tmp < 0)
    die_with_error ("cannot open /tmp to stage the sandbox");
  gl_launch_mount_attach (v->stage, tmp, "the staging area");
  close (tmp);
  if (L.privileged)
    {
      gl_launch_mount_stage_copy (v->stage, L.sandbox_copy, "sandbox");
      if (L.sb.host_base)
        gl_launch_mount_stage_copy (v->stage, L.base_copy, "base");
      for (size_t i = 0; i < L.n_ov; i++)
        gl_launch_mount_stage_copy (v->stage, L.ov[i].host_fd, L.ov[i].layer);
    }
  if (mkdirat (v->stage, "root", 0700) != 0)
    die_with_error ("cannot create the staging root");
}

/* Root: a read-only overlay of (mount points) : system layer : base,
 * attached in the staging area.  Mount points that do not exist in the
 * tree (e.g. your home in a foreign rootfs) are made in your own
 * mount-point layer, never by root; symbolic links and non-directories are
 * refused. */
static void
view_root (View *v)
{
  int base_fd, skel_fd, rootfs_fd, sysupper_fd = -1;
  int lowers[3];
  size_t n_lowers = 0;
  bool skel_changed = false;

  /* The sandbox's layers, through this namespace's copy. */
  rootfs_fd = L.sb.host_base ? -1 : gl_launch_mount_reopen_same (L.sandbox_copy, "rootfs", L.sb.rootfs_fd, "rootfs/");
  if (L.sb.sysupper_fd >= 0)
    {
      cleanup_free char *gen = xasprintf ("system/%lu/tree", L.sb.generation);
      sysupper_fd = gl_launch_mount_reopen_same (L.sandbox_copy, gen, L.sb.sysupper_fd, gen);
    }

  /* The host's / cannot be a layer beside directories inside it (overlayfs
   * refuses overlapping layers), so a host base is first wrapped in an
   * overlay of its own: a different filesystem, no overlap. */
  if (L.sb.host_base)
    {
      cleanup_fd int empty = -1;
      cleanup_fd int dir = -1;
      int two[2];
      if (mkdirat (v->stage, "empty", 0700) != 0 || mkdirat (v->stage, "host", 0700) != 0
          || (empty = openat (v->stage, "empty", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
        die_with_error ("cannot prepare the host base");
      two[0] = L.base_copy;
      two[1] = empty;
      base_fd = gl_launch_mount_overlay (two, 2, -1, -1, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID
                                         | MOUNT_ATTR_NODEV,
                                         "cannot use the host's / as the base");
      dir = openat (v->stage, "host", O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (dir < 0)
        die_with_error ("cannot prepare the host base");
      gl_launch_mount_attach (base_fd, dir, "the host base");
    }
  else
    base_fd = rootfs_fd;
  skel_fd = gl_launch_mount_open_user_dir (v->userdir_fd, "mountpoints", "mountpoints/", L.uid);
  lowers[n_lowers++] = skel_fd;
  if (sysupper_fd >= 0)
    lowers[n_lowers++] = sysupper_fd;
  lowers[n_lowers++] = base_fd;
  v->root = make_root (lowers, n_lowers);

  for (size_t i = 0; i < v->ops.n; i++)
    {
      bool nested = false;
      int fd, err;
      for (size_t k = 0; k < i; k++)
        if (gl_launch_path_has_prefix (v->ops.ops[i].path, v->ops.ops[k].path))
          nested = true;
      if (nested)
        continue;
      fd = gl_launch_mount_open_in_view (v->root, v->ops.ops[i].path);
      if (fd >= 0)
        {
          close (fd);
          continue;
        }
      err = errno;
      /* (A merged directory the sandbox lacks still shows the host's.) */
      if (err == ENOENT)
        {
          gl_launch_mount_skel_mkdir_p (skel_fd, v->ops.ops[i].path);
          skel_changed = true;
        }
      /* A mount point in a layer below the first that you may not read
       * (root's /root in a base the package namespace wrote, owned by
       * the subordinate range, 0700): the overlay reads its user.overlay.*
       * attributes as you, without power over the range's files, and
       * fails.  It is made in your layer, opaque, so nothing below it is
       * looked at; what is mounted over it hides the same anyway.  Only
       * the last component, below a directory you may search.  Not a
       * merge: it shows the sandbox's directory too, and the mark, which
       * stays in your layer, would hide it for good (refused as before). */
      else if (err == EACCES && v->ops.ops[i].kind != OP_MERGE
               && gl_launch_mount_parent_searchable (v->root, v->ops.ops[i].path))
        {
          gl_launch_mount_skel_mkdir_p (skel_fd, v->ops.ops[i].path);
          gl_launch_mount_skel_opaque (skel_fd, v->ops.ops[i].path);
          skel_changed = true;
        }
      else
        {
          errno = err;
          gl_launch_mount_die_target (v->ops.ops[i].path);
        }
    }
  if (skel_changed)
    {
      close (v->root);
      v->root = make_root (lowers, n_lowers);
    }
  {
    cleanup_fd int dir = openat (v->stage, "root", O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0)
      die_with_error ("cannot open the staging root");
    gl_launch_mount_attach (v->root, dir, "/");
  }
}

/* Binds the host's device node PATH (of this namespace's copy of the
 * host) on a new empty file NAME below DIR; false when it is not there. */
static bool
bind_node (int dir, const char *name, const char *path, unsigned attrs)
{
  struct mount_attr attr = { .attr_set = attrs | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC,
                             .propagation = MS_PRIVATE };
  cleanup_fd int src = open_tree (AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC
                                  | AT_SYMLINK_NOFOLLOW);
  cleanup_fd int target = -1;
  struct stat st;
  if (src < 0 || fstat (src, &st) != 0 || !S_ISCHR (st.st_mode))
    return false;
  target = openat (dir, name, O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (target < 0)
    die_with_error ("cannot create /dev/%s in the sandbox", name);
  if (mount_setattr (src, "", AT_EMPTY_PATH, &attr, sizeof attr) != 0
      || move_mount (src, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0)
    die_with_error ("cannot pass %s into the sandbox", path);
  return true;
}

/* A minimal /dev (DEV: the new tmpfs, attached): the standard nodes bound
 * from the host read-only (device nodes stay writable), a new devpts, the
 * usual links, a directory for the /dev/shm overlay, and the GPU, sound
 * and video nodes read-write, as nodes only.  Nothing the app writes under
 * /dev reaches the host's devtmpfs. */
static void
populate_dev (int dev)
{
  static const char *const std_nodes[] = { "null", "zero", "full", "random", "urandom", "tty" };
  static const char *const links[][2] = {
    { "fd", "/proc/self/fd" }, { "stdin", "/proc/self/fd/0" }, { "stdout", "/proc/self/fd/1" },
    { "stderr", "/proc/self/fd/2" }, { "ptmx", "pts/ptmx" },
  };
  static const char *const subdirs[] = { "dri", "snd" };
  cleanup_fd int pts = -1;
  DIR *d;
  struct dirent *e;

  for (size_t i = 0; i < sizeof std_nodes / sizeof std_nodes[0]; i++)
    {
      cleanup_free char *path = xasprintf ("/dev/%s", std_nodes[i]);
      (void) bind_node (dev, std_nodes[i], path, MOUNT_ATTR_RDONLY);
    }
  for (size_t i = 0; i < sizeof links / sizeof links[0]; i++)
    if (symlinkat (links[i][1], dev, links[i][0]) != 0)
      die_with_error ("cannot create /dev/%s in the sandbox", links[i][0]);
  if (mkdirat (dev, "shm", 01777) != 0 || mkdirat (dev, "pts", 0755) != 0)
    die_with_error ("cannot create /dev/shm or /dev/pts in the sandbox");
  {
    cleanup_fd int fs = fsopen ("devpts", FSOPEN_CLOEXEC);
    int m;
    if (fs < 0 || fsconfig (fs, FSCONFIG_SET_STRING, "ptmxmode", "0666", 0) != 0
        || fsconfig (fs, FSCONFIG_SET_STRING, "mode", "0620", 0) != 0)
      gl_launch_mount_die_fs (fs, "cannot create the sandbox's /dev/pts");
    if (fsconfig (fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) != 0
        || (m = fsmount (fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC)) < 0)
      gl_launch_mount_die_fs (fs, "cannot create the sandbox's /dev/pts");
    pts = openat (dev, "pts", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (pts < 0)
      die_with_error ("cannot open /dev/pts in the sandbox");
    gl_launch_mount_attach (m, pts, "/dev/pts");
    close (m);
  }
  /* GPU, sound and video: nodes only, read-write. */
  for (size_t k = 0; k < sizeof subdirs / sizeof subdirs[0]; k++)
    {
      cleanup_free char *host = xasprintf ("/dev/%s", subdirs[k]);
      cleanup_fd int sub = -1;
      d = opendir (host);
      if (d == NULL)
        continue;
      if (mkdirat (dev, subdirs[k], 0755) != 0
          || (sub = openat (dev, subdirs[k], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
        die_with_error ("cannot create /dev/%s in the sandbox", subdirs[k]);
      while ((e = readdir (d)) != NULL)
        if (e->d_type == DT_CHR)
          {
            cleanup_free char *p = xasprintf ("%s/%s", host, e->d_name);
            (void) bind_node (sub, e->d_name, p, 0);
          }
      closedir (d);
    }
  d = opendir ("/dev");
  while (d != NULL && (e = readdir (d)) != NULL)
    if (e->d_type == DT_CHR && (strncmp (e->d_name, "video", 5) == 0
                                || strncmp (e->d_name, "nvidia", 6) == 0))
      {
        cleanup_free char *p = xasprintf ("/dev/%s", e->d_name);
        (void) bind_node (dev, e->d_name, p, 0);
      }
  if (d != NULL)
    closedir (d);
}

/* Attach: every planned mount at its place in the view. */
static void
view_attach (View *v)
{
  for (size_t i = 0; i < v->ops.n; i++)
    {
      MountOp *op = &v->ops.ops[i];
      int target = gl_launch_mount_open_in_view (v->root, op->path);
      int mnt = -1;

      if (target < 0)
        gl_launch_mount_die_target (op->path);
      switch (op->kind)
        {
        case OP_PROC:
          mnt = gl_launch_mount_proc ();
          break;
        case OP_DEV:
          mnt = gl_launch_mount_tmpfs ("0755", "64k", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC,
                                       "cannot create the sandbox's /dev");
          gl_launch_mount_attach (mnt, target, op->path);
          populate_dev (mnt);
          close (mnt);
          close (target);
          continue;
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
            mnt = gl_launch_mount_overlay (two, 2, -1, -1, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID
                                           | MOUNT_ATTR_NODEV, what);
          }
          break;
        default:
          die ("internal error: unknown mount kind");
        }
      gl_launch_mount_attach (mnt, target, op->path);
      close (mnt);
      close (target);
    }
}

/* Sockets: display, sound and bus sockets of the X11 and ICE directories
 * in /tmp and of the runtime directory. */
static void
view_sockets (View *v)
{
  for (size_t i = 0; i < L.n_ov; i++)
    {
      const Overlaid *ov = &L.ov[i];
      if (strcmp (ov->layer, "run-user") == 0)
        {
          size_t budget = GL_LAUNCH_MAX_SOCKETS;
          gl_launch_mount_bind_sockets (v->root, ov->host_fd, ov->path, 3, &budget);
        }
    }
  /* The single sockets checked on the host: the deepest overlaid
   * directory holding each gives the copy to take it from. */
  for (size_t k = 0; k < L.n_socks; k++)
    {
      const Overlaid *own = owner_of (L.ov, L.n_ov, L.socks[k].path);
      if (own == NULL || strcmp (own->layer, "run-user") == 0)
        continue;       /* not reachable, or passed with the runtime directory */
      (void) gl_launch_mount_bind_socket (v->root, own->host_fd,
                                          L.socks[k].path + strlen (own->path) + 1,
                                          L.socks[k].path, &L.socks[k].st);
    }
}

/* The first steps, made while the launcher writes the new user
 * namespace's id maps (they need no id of it): propagation cut off, the
 * mount table read, the view planned.  Runs with your real, effective and
 * filesystem ids already, and capabilities of the new user namespace only,
 * which count on nothing while it maps no id; nothing is created or
 * attached. */
static void
plan_view (View *v)
{
  if (mount (NULL, "/", NULL, MS_SLAVE | MS_REC, NULL) != 0)
    die_with_error ("cannot make the mount namespace private");

  v->mt = gl_launch_mount_table_read ();
  if (!L.privileged)
    view_unprivileged_sources (&v->mt);
  view_plan (v);
}

/* Builds the view planned in V and pivots into it.  Runs as the user,
 * with CAP_SYS_ADMIN in the new user namespace only. */
static void
build_view (View *v)
{
  char uidname[32];

  view_stage (v);
  snprintf (uidname, sizeof uidname, "users/%u", (unsigned) L.uid);
  v->userdir_fd = gl_launch_mount_reopen_same (L.sandbox_copy, uidname, L.sb.userdir_fd, uidname);

  view_root (v);
  make_overlays (&v->ops, v->userdir_fd);   /* (a failure ends the process) */
  view_attach (v);
  view_sockets (v);

  /* Into the view; the old root goes away entirely. */
  if (fchdir (v->root) != 0)
    die_with_error ("cannot enter the sandbox root");
  if (syscall (SYS_pivot_root, ".", ".") != 0)
    die_with_error ("cannot pivot into the sandbox root");
  if (umount2 (".", MNT_DETACH) != 0)
    die_with_error ("cannot detach the host root");
  /* No mount of the view in a peer group with anything outside. */
  if (mount (NULL, "/", NULL, MS_PRIVATE | MS_REC, NULL) != 0)
    die_with_error ("cannot make the sandbox's mounts private");
  if (chdir ("/") != 0)
    die_with_error ("cannot enter the sandbox root");
}

/* ---------------------------------------------------------------------- */
/* The app                                                                 */

/* The places COMMAND is looked for (PATH of ENV; COMMAND itself when it
 * names a path), NULL-terminated: made before the app's process starts,
 * which then only execs. */
static char **
exec_candidates (char *const *command, char **env)
{
  const char *path = gl_launch_env_get (env, "PATH");
  size_t n = 0;
  char **cands = NULL;

  for (char *cand; (cand = gl_launch_path_candidate (path, command[0], n)) != NULL; n++)
    {
      cands = xrealloc (cands, (n + 2) * sizeof (char *));
      cands[n] = cand;
    }
  cands = xrealloc (cands, (n + 1) * sizeof (char *));
  cands[n] = NULL;
  return cands;
}

static GL_NORETURN void
exec_app (char *const *command, char *const *cands, char **env)
{
  bool saw_eacces = false;
  int last = ENOENT;

  for (size_t i = 0; cands[i] != NULL; i++)
    {
      execve (cands[i], command, env);
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

/* True if PID (an entry of the proc directory PROC_DIR) is gone, or a
 * zombie whose threads are all gone.  Not a zombie thread-group leader
 * whose other threads still run (an app whose main thread exited):
 * "Threads:" in its status counts them, and it. */
static bool
proc_is_dead (int proc_dir, const char *pid)
{
  char path[300], buf[4096];
  cleanup_fd int fd = -1;
  ssize_t n;
  char *rp;
  snprintf (path, sizeof path, "%s/stat", pid);
  fd = openat (proc_dir, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return true;
  n = read (fd, buf, sizeof buf - 1);
  if (n <= 0)
    return true;
  buf[n] = '\0';
  rp = strrchr (buf, ')');
  if (rp == NULL || rp[1] != ' ')
    return true;
  if (rp[2] != 'Z' && rp[2] != 'X')
    return false;
  close (fd);
  snprintf (path, sizeof path, "%s/status", pid);
  fd = openat (proc_dir, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 || (n = read (fd, buf, sizeof buf - 1)) <= 0)
    return true;
  buf[n] = '\0';
  rp = strstr (buf, "\nThreads:\t");
  return rp == NULL || strtoul (rp + 10, NULL, 10) <= 1;
}

/* PID 1 of a view: keeps it while any process of it lives.  The apps are
 * children of their launchers (outside), so they are watched by pidfd;
 * what they leave behind is reparented here and reaped.  The view ends
 * only after a look at this namespace's /proc shows nobody else, taken
 * under the view lock (users/.views/<uid>.lock), which every launcher holds from finding the
 * view until its app exists: no launch can join a view that is ending. */
#define MAX_WATCHED 512
static GL_NORETURN void
run_view_init (int view_lock, int sigfd)
{
  for (;;)
    {
      struct pollfd pfd[MAX_WATCHED + 1];
      size_t n = 1;
      bool others = false, truncated = false;
      DIR *d;
      struct dirent *e;

      while (flock (view_lock, LOCK_EX) != 0)
        if (errno != EINTR)
          _exit (GL_EXIT_LAUNCHER);
      while (waitpid (-1, NULL, WNOHANG) > 0)
        ;
      d = opendir ("/proc");
      if (d == NULL)
        _exit (GL_EXIT_LAUNCHER);
      pfd[0] = (struct pollfd) { sigfd, POLLIN, 0 };
      while ((e = readdir (d)) != NULL)
        {
          int pidfd;
          if (e->d_name[0] < '1' || e->d_name[0] > '9' || strcmp (e->d_name, "1") == 0
              || strspn (e->d_name, "0123456789") != strlen (e->d_name))
            continue;
          if (proc_is_dead (dirfd (d), e->d_name))
            continue;   /* a zombie its launcher will reap */
          if (n == MAX_WATCHED + 1)
            {
              others = truncated = true;
              continue;
            }
          pidfd = (int) syscall (SYS_pidfd_open, atoi (e->d_name), 0);
          if (pidfd < 0 && errno == ESRCH)
            continue;   /* ended (and reaped) since the look at its stat */
          others = true;
          if (pidfd >= 0)
            pfd[n++] = (struct pollfd) { pidfd, POLLIN, 0 };
          else
            truncated = true;   /* not watched: look again in a while */
        }
      closedir (d);
      if (!others)
        _exit (0);      /* still holding the lock: nobody joins meanwhile */
      (void) flock (view_lock, LOCK_UN);
      (void) poll (pfd, n, truncated ? 1000 : -1);
      if (pfd[0].revents)
        {
          struct signalfd_siginfo si;
          while (read (sigfd, &si, sizeof si) == (ssize_t) sizeof si)
            ;
        }
      for (size_t i = 1; i < n; i++)
        close (pfd[i].fd);
    }
}

/* F4: the view's mounts are locked.  They were made in the user namespace
 * the launcher created, which the caller owns, so the caller (entering it
 * from outside, as they may) could unmount the read-only binds over the
 * host's mount points - showing what the copies made as root have
 * beneath them, which the kernel hides from every user - or make them
 * writable.  PID 1 therefore moves into a user, mount and IPC namespace of
 * its own, nested in the first: the kernel copies the mount table into
 * the new namespace with every mount locked (MNT_LOCKED: a mount there
 * cannot be unmounted from its place; read-only, nosuid, nodev stay) -
 * as bubblewrap does in setuid mode.  The first mount namespace is then
 * left to nobody (PID 1 is not dumpable: no process of the caller can
 * have opened it), and the kernel ends it.  The launcher writes the new
 * user namespace's id maps (the same ids, groups included; see
 * write_nested_maps) when told through MAPS_FD, meanwhile: nothing PID 1
 * does from here on needs them (no id of it is looked up; what it drops
 * and sets is its own), and no other process enters the namespace before
 * the launcher has written them - or, failing, ends PID 1. */
static void
lock_view (int maps_fd)
{
  /* The user namespace first, then the launcher is asked for its maps,
   * and only then the mount and IPC namespaces (what one unshare of all
   * three does, in that order): leaving the first mount namespace ends it
   * (every mount of it, and an expedited RCU grace period: 0.1-0.2 ms),
   * which now runs while the launcher writes the maps, not before.  The
   * new mount namespace is owned by the new user namespace either way, so
   * the mounts copied into it are locked. */
  if (unshare (CLONE_NEWUSER) != 0)
    die_with_error ("cannot lock the view's mounts (a user namespace inside the sandbox's)");
  if (write (maps_fd, "u", 1) != 1)
    die_with_error ("cannot lock the view's mounts: cannot ask for the id maps of its user "
                    "namespace");
  close (maps_fd);
  if (unshare (CLONE_NEWNS | CLONE_NEWIPC) != 0)
    die_with_error ("cannot lock the view's mounts (a mount namespace inside the sandbox's)");
}

/* The first process in the namespaces: builds the view, tells the
 * launcher it is ready by closing ERR_FD, and stays as the view's PID 1.
 * BUILDER_LOCK is the launcher's own open file of the view lock, whose
 * lock it holds (flock locks belong to open files): kept until the
 * launcher's last word, see below. */
static GL_NORETURN void
child_main (int sync_fd, int err_fd, int maps_fd, int builder_lock)
{
  char byte;
  sigset_t set;
  int sigfd, null;
  View v = { { NULL, 0, 0 }, { NULL, 0 }, -1, -1, -1 };
  /* All capabilities, but of the new user namespace only: they count on
   * nothing but the user's own files (overlayfs copy-up needs them). */
  uint64_t keep = (1ULL << (CAP_LAST_CAP + 1)) - 1;
  int keep_fds[4];

  gl_die_hook = NULL;
  gl_error_fd = err_fd;

  plan_view (&v);
  if (read (sync_fd, &byte, 1) != 1)
    die ("the launcher's parent went away while setting up");

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
  /* (None of that may have made us dumpable: you own this user
   * namespace, so any process of yours could trace us - and what root
   * opened and copied for the view - while we are.  See main.) */
  if (L.privileged && prctl (PR_GET_DUMPABLE, 0, 0, 0, 0) != 0)
    die ("the sandbox's first process became dumpable; refusing to continue");
  if (prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
    die_with_error ("cannot set the parent-death signal");
  {
    /* The parent (which holds the locks) may have gone before that: its
     * end of the error pipe is then closed. */
    struct pollfd p = { err_fd, 0, 0 };
    if (poll (&p, 1, 0) != 0 && (p.revents & (POLLERR | POLLHUP)))
      _exit (125);
  }
  /* (Unprivileged, the launcher reads our namespaces through /proc.) */
  if (L.privileged)
    (void) prctl (PR_SET_DUMPABLE, 0, 0, 0, 0);

  build_view (&v);
  if (L.privileged)
    lock_view (maps_fd);
  else
    close (maps_fd);
  /* (both out of the way of what follows: the error pipe is closed on
   * its own when the view is ready, and the launcher's last word comes on
   * the sync pipe after that) */
  {
    int e2 = fcntl (err_fd, F_DUPFD_CLOEXEC, 64), s2 = fcntl (sync_fd, F_DUPFD_CLOEXEC, 64);
    int b2 = fcntl (builder_lock, F_DUPFD_CLOEXEC, 64);
    if (e2 < 0 || s2 < 0 || b2 < 0)
      die_with_error ("cannot rearrange descriptors");
    close (err_fd);
    close (sync_fd);
    close (builder_lock);
    gl_error_fd = err_fd = e2;
    sync_fd = s2;
    builder_lock = b2;
  }

  /* Nothing of the host stays open: only the locks the view holds for its
   * whole life (the sandbox's, the user's layer's, the system
   * generation's) and its own hold on the view lock, as 3 to 6. */
  keep_fds[0] = L.pid1_lock;     /* opened for us by the launcher */
  keep_fds[1] = L.sb.lock_fd;
  keep_fds[2] = L.sb.user_lock_fd;
  keep_fds[3] = L.sb.gen_lock_fd;
  for (int i = 0; i < 4; i++)
    if (keep_fds[i] >= 0 && (keep_fds[i] = fcntl (keep_fds[i], F_DUPFD_CLOEXEC, 64)) < 0)
      die_with_error ("cannot rearrange descriptors");
  for (int i = 0; i < 4; i++)
    if (keep_fds[i] >= 0 && dup3 (keep_fds[i], 3 + i, O_CLOEXEC) != 3 + i)
      die_with_error ("cannot rearrange descriptors");
  null = open ("/dev/null", O_RDWR | O_CLOEXEC);
  if (null < 0)
    die_with_error ("cannot open /dev/null in the sandbox");

  /* Drop everything: PID 1 needs no capability to wait. */
  drop_bounding_and_ambient (true);
  if (gl_capset (0, 0) != 0 || !no_caps_left ())
    die ("cannot drop all capabilities in the sandbox's PID 1");
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    die_with_error ("cannot set no-new-privs");

  sigemptyset (&set);
  sigaddset (&set, SIGCHLD);
  sigprocmask (SIG_BLOCK, &set, NULL);
  sigfd = signalfd (-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sigfd < 0)
    die_with_error ("cannot watch signals");
  /* (out of the way first: either may already be 7 or 8) */
  {
    int s2 = fcntl (sigfd, F_DUPFD_CLOEXEC, 64), n2 = fcntl (null, F_DUPFD_CLOEXEC, 64);
    close (sigfd);
    close (null);
    sigfd = s2;
    null = n2;
  }
  if (sigfd < 0 || null < 0 || dup3 (sigfd, 7, O_CLOEXEC) != 7 || dup3 (null, 8, O_CLOEXEC) != 8)
    die_with_error ("cannot rearrange descriptors");

  /* Ready: the launcher sees the error pipe close (closed on its own,
   * first: what else is let go - the old work directories
   * make_layer_overlay held - may wait for the disk, and the launcher
   * need not).  It records the view (as root, for the launches to come
   * and for glimpse-launch --held), starts the app and then says so on
   * the sync pipe; only from then on does the view outlive the launcher
   * that built it.  A launcher that dies before (a kill -9, a record it
   * cannot write) takes the view with it, its app and whatever that
   * started included: no view runs that later launches cannot find (they
   * would build a second one over the same layers).
   * From here on the launcher's death is told by the sync pipe's end,
   * not by a death signal: it says its word and then lets the next
   * launch take the view lock and join, and it may end (its app a quick
   * one) before we have been scheduled to read that word - a death
   * signal then ended the view under an app that had joined it.
   * Until that word we hold the launcher's view lock with it
   * (BUILDER_LOCK, the same open file): a launcher that dies before (a
   * kill -9 while building, or stopped first with a launch waiting) lets
   * go of the lock only once we have too, when we exit.  Before, the
   * next launch could take the lock while we had not even been told of
   * our launcher's end: it joined the view (recorded) that was about to
   * end under its app, or (not recorded yet) was refused because the
   * view still had your layer mounted.  Our files are closed before the
   * kernel drops our namespaces, so that launch still waits for us to
   * have exited (view_find, view_wait_unrecorded). */
  (void) prctl (PR_SET_PDEATHSIG, 0, 0, 0, 0);
  gl_error_fd = -1;
  close (err_fd);
  {
    char word = 0;
    ssize_t n;
    while ((n = read (sync_fd, &word, 1)) < 0 && errno == EINTR)
      ;
    if (n != 1 || word != 'r')
      _exit (0);
    close (sync_fd);
    close (builder_lock);
  }
  for (int fd = 0; fd <= 2; fd++)
    (void) dup2 (8, fd);
  if (syscall (SYS_close_range, 8U, ~0U, 0U) != 0)
    for (int fd = 8; fd < 4096; fd++)
      close (fd);
  run_view_init (3, 7);
}

/* ---------------------------------------------------------------------- */
/* Joining a view: every launch runs its app this way                      */

/* Reads what a child wrote on error pipe FD into BUF; false at its end. */
static bool
read_errors (int fd, char *buf, size_t size, size_t *len)
{
  ssize_t n = read (fd, buf + *len, size - 1 - *len);
  if (n > 0)
    *len += (size_t) n;
  else if (n == 0 || (errno != EINTR && errno != EAGAIN))
    return false;
  return *len < size - 1;
}

/* Prints a child's error messages and shows them on the desktop. */
static void
show_errors (char *buf, size_t len)
{
  buf[len] = '\0';
  fputs (buf, stderr);
  fflush (stderr);
  if (buf[len - 1] == '\n')
    buf[len - 1] = '\0';
  report_error (strncmp (buf, "glimpse-launch: ", 16) == 0 ? buf + 16 : buf);
}

/* A view's namespaces, as descriptors. */
typedef struct {
  int user, mnt, pid, ipc;
  int outer;    /* the user namespace the view's is nested in (-1: none) */
} ViewNs;

static const char *const ns_names[4] = { "user", "mnt", "pid", "ipc" };

static void
view_ns_close (ViewNs *ns)
{
  int *fds[5] = { &ns->user, &ns->mnt, &ns->pid, &ns->ipc, &ns->outer };
  for (int i = 0; i < 5; i++)
    if (*fds[i] >= 0)
      {
        close (*fds[i]);
        *fds[i] = -1;
      }
}

/* Reads the file NAME below DIR (a /proc file: one read gives it whole)
 * into BUF (SIZE bytes, NUL-terminated).  Its length, or -1 (and BUF
 * empty) when it cannot be opened or read, or is empty. */
static ssize_t
read_proc_at (int dir, const char *name, char *buf, size_t size)
{
  cleanup_fd int fd = openat (dir, name, O_RDONLY | O_CLOEXEC);
  ssize_t n = fd >= 0 ? read (fd, buf, size - 1) : -1;

  buf[n > 0 ? n : 0] = '\0';
  return n > 0 ? n : -1;
}

/* The start time of PID (clock ticks after boot, /proc/PID/stat field 22),
 * or 0. */
static unsigned long long
proc_start_time (pid_t pid)
{
  char path[64], buf[1024];
  char *p;
  unsigned long long t = 0;
  snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
  if (read_proc_at (AT_FDCWD, path, buf, sizeof buf) < 0)
    return 0;
  p = strrchr (buf, ')');
  /* after ")": state is field 3; the start time is field 22 */
  for (int field = 2; p != NULL && field < 22; field++)
    p = strchr (p + 1, ' ');
  if (p == NULL || sscanf (p + 1, "%llu", &t) != 1)
    return 0;
  return t;
}

/* True if PID is exiting (PF_EXITING in the flags, /proc/PID/stat field
 * 9) or gone. */
static bool
proc_is_exiting (pid_t pid)
{
  char path[64], buf[1024];
  char *p;
  unsigned long flags = 0;
  snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
  if (read_proc_at (AT_FDCWD, path, buf, sizeof buf) < 0)
    return true;
  p = strrchr (buf, ')');
  for (int field = 2; p != NULL && field < 9; field++)
    p = strchr (p + 1, ' ');
  if (p == NULL || sscanf (p + 1, "%lu", &flags) != 1)
    return true;
  return (flags & 0x4UL) != 0;  /* PF_EXITING */
}

/* Opens the namespaces of PID into NS and their identities into ID
 * (device, inode: 8 numbers).  Root (or the owner, unprivileged) only. */
static bool
open_proc_ns (pid_t pid, ViewNs *ns, unsigned long long id[8])
{
  int *fds[4] = { &ns->user, &ns->mnt, &ns->pid, &ns->ipc };
  for (int i = 0; i < 4; i++)
    {
      char path[64];
      struct stat st;
      snprintf (path, sizeof path, "/proc/%d/ns/%s", (int) pid, ns_names[i]);
      *fds[i] = open (path, O_RDONLY | O_CLOEXEC);
      if (*fds[i] < 0 || fstat (*fds[i], &st) != 0)
        {
          view_ns_close (ns);
          return false;
        }
      id[2 * i] = (unsigned long long) st.st_dev;
      id[2 * i + 1] = (unsigned long long) st.st_ino;
    }
  {
    /* The user namespace the view's is nested in (F4: lock_view), unless
     * that is ours (a view without the nesting). */
    struct stat a, b;
    ns->outer = ioctl (ns->user, NS_GET_PARENT);
    if (ns->outer >= 0 && fstat (ns->outer, &a) == 0 && stat ("/proc/self/ns/user", &b) == 0
        && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
      {
        close (ns->outer);
        ns->outer = -1;
      }
  }
  return true;
}

/* The numbers of a record line "KEY ID...\n" at *REST (at most
 * GL_VIEW_MAX_MOUNTS, none 0 or above MAX) into IDS, *N of them; *REST
 * then after the line.  False if it is anything else. */
static bool
view_record_ids (const char **rest, const char *key, unsigned long long max,
                 unsigned long long *ids, size_t *n)
{
  const char *p = *rest;
  size_t len = strlen (key);
  *n = 0;
  if (strncmp (p, key, len) != 0)
    return false;
  p += len;
  while (*p == ' ')
    {
      char *end;
      unsigned long long v;
      if (*n == GL_VIEW_MAX_MOUNTS || p[1] < '0' || p[1] > '9')
        return false;
      errno = 0;
      v = strtoull (p + 1, &end, 10);
      if (errno != 0 || v == 0 || v > max)
        return false;
      ids[(*n)++] = v;
      p = end;
    }
  if (*p != '\n')
    return false;
  *rest = p + 1;
  return true;
}

/* The record's optional second line, "mounts ID...\n": the mount IDs of
 * the view's own overlays (for naming a process that keeps one), and
 * optional third, "unique ID...\n": the same mounts' unique IDs (0 in
 * *N_UNIQUE when there are none); then, optional, "mntns ID\n": its mount
 * namespace's ID (0 in *MNTNS when there is none).  REST is what follows
 * the first line; false if it is anything else. */
static bool
view_record_mounts (const char *rest, unsigned *ids, size_t *n, unsigned long long *unique,
                    size_t *n_unique, unsigned long long *mntns)
{
  unsigned long long v[GL_VIEW_MAX_MOUNTS];
  size_t one = 0;
  *n = *n_unique = 0;
  *mntns = 0;
  if (strncmp (rest, "mounts", 6) == 0)
    {
      if (!view_record_ids (&rest, "mounts", UINT_MAX, v, n))
        return false;
      for (size_t i = 0; i < *n; i++)
        ids[i] = (unsigned) v[i];
      if (strncmp (rest, "unique", 6) == 0
          && !(view_record_ids (&rest, "unique", ULLONG_MAX - 1, unique, n_unique)
               && *n_unique == *n))
        return false;
    }
  if (strncmp (rest, "mntns", 5) == 0)
    {
      if (!view_record_ids (&rest, "mntns", ULLONG_MAX - 1, v, &one) || one != 1)
        return false;
      *mntns = v[0];
    }
  return *rest == '\0';
}

/* The recorded view is gone: what may still keep its layers. */
static void
view_set_stale (const unsigned long long rec[8], const unsigned *mounts, size_t n_mounts,
                const unsigned long long *unique, size_t n_unique, unsigned long long mntns)
{
  L.stale_mntns_id = mntns;
  L.stale_mnt_dev = rec[2];
  L.stale_mnt = rec[3];
  memcpy (L.stale_mounts, mounts, n_mounts * sizeof mounts[0]);
  memcpy (L.stale_unique, unique, n_unique * sizeof unique[0]);
  L.n_stale_mounts = n_mounts;
  L.stale_by_unique = n_unique > 0 && n_unique == n_mounts;
}

#define GL_VIEW_RECORD_FMT "glimpse-view 2 boot %36s sandbox %64s uid %u pid %d start %llu " \
  "user %llu:%llu mnt %llu:%llu pid %llu:%llu ipc %llu:%llu\n"
/* (as written before the boot was recorded: see view_record_this_boot) */
#define GL_VIEW_RECORD_FMT_1 "glimpse-view 1 sandbox %64s uid %u pid %d start %llu user %llu:%llu " \
  "mnt %llu:%llu pid %llu:%llu ipc %llu:%llu\n"

/* This boot's ID (/proc/sys/kernel/random/boot_id: 36 characters, a new
 * random UUID at every boot), or NULL when it cannot be read. */
static const char *
boot_id (void)
{
  static char id[40];
  char buf[64];

  if (id[0] == '\0')
    {
      ssize_t n = read_proc_at (AT_FDCWD, "/proc/sys/kernel/random/boot_id", buf, sizeof buf);
      if (n != 37 || buf[36] != '\n' || strspn (buf, "0123456789abcdef-") != 36)
        return NULL;
      memcpy (id, buf, 36);
      id[36] = '\0';
    }
  return id;
}

/* True if the record (open as FD) was written in this boot: it names
 * BOOT, this boot's ID, or (a record of the first version, written before
 * the launcher recorded the boot: a view that was already running when it
 * was upgraded) it was last written after this boot began.  A record
 * from before a reboot names a pid, a start time and namespaces that
 * mean nothing now - or another process that happens to match them. */
static bool
view_record_this_boot (int fd, const char *boot)
{
  struct stat st;
  struct timespec now, up;

  if (boot[0] != '\0')
    return boot_id () != NULL && strcmp (boot, boot_id ()) == 0;
  return fstat (fd, &st) == 0 && clock_gettime (CLOCK_REALTIME, &now) == 0
         && clock_gettime (CLOCK_BOOTTIME, &up) == 0
         && st.st_mtim.tv_sec > now.tv_sec - up.tv_sec;
}

/* Finds the running view of this user through root's record
 * users/.views/<uid> and checks it as SECURITY.md says: the record is a
 * regular file of root's (0600, in root's 0700 directory: the user can
 * neither read, delete nor replace it), for this sandbox and user, of
 * this boot (its boot_id); the recorded process is alive (pidfd), started
 * at the recorded time, and its user, mount, PID and IPC namespaces are the
 * recorded ones; the user namespace is the caller's.  Its PID 1, with NS
 * open; 0 (with a reason in *WHY) when there is no usable view. */
static pid_t
view_find (ViewNs *ns, const char **why)
{
  cleanup_fd int fd = -1;
  cleanup_fd int pidfd = -1;
  char buf[1024];
  ssize_t len;
  struct stat st;
  unsigned uid;
  int pid, used = 0;
  unsigned long long start, rec[8], id[8];
  char sandbox[GL_LAUNCH_ID_MAX + 1];
  char boot[37] = "";
  char name[32];
  unsigned mounts[GL_VIEW_MAX_MOUNTS];
  unsigned long long unique[GL_VIEW_MAX_MOUNTS];
  size_t n_mounts = 0, n_unique = 0;
  unsigned long long mntns = 0;

  *why = "no record";
  snprintf (name, sizeof name, "%u", (unsigned) L.uid);
  fd = openat (L.sb.views_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  *why = "the record is not root's";
  if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode) || st.st_uid != 0 || st.st_nlink != 1
      || (st.st_mode & 077) != 0 || st.st_size >= (off_t) sizeof buf)
    return 0;
  len = read (fd, buf, sizeof buf - 1);
  *why = "the record is malformed";
  if (len <= 0)
    return 0;
  buf[len] = '\0';
  if ((sscanf (buf, GL_VIEW_RECORD_FMT "%n", boot, sandbox, &uid, &pid, &start, &rec[0],
               &rec[1], &rec[2], &rec[3], &rec[4], &rec[5], &rec[6], &rec[7], &used) != 13
       || strlen (boot) != 36)
      && (boot[0] = '\0', used = 0,
          sscanf (buf, GL_VIEW_RECORD_FMT_1 "%n", sandbox, &uid, &pid, &start, &rec[0], &rec[1],
                  &rec[2], &rec[3], &rec[4], &rec[5], &rec[6], &rec[7], &used) != 12))
    return 0;
  if (used == 0
      || !view_record_mounts (buf + used, mounts, &n_mounts, unique, &n_unique, &mntns)
      || strcmp (sandbox, L.id) != 0 || uid != L.uid || pid <= 1)
    return 0;
  /* (nothing of it is taken as a stale view's either: its namespaces'
   * inodes and mount IDs may be anyone's now) */
  *why = "the record is of an earlier boot";
  if (!view_record_this_boot (fd, boot))
    return 0;
  *why = "the recorded view is gone";
  pidfd = (int) syscall (SYS_pidfd_open, pid, 0);
  if (pidfd < 0 || proc_start_time (pid) != start || start == 0)
    {
      /* (it may still be held) */
      view_set_stale (rec, mounts, n_mounts, unique, n_unique, mntns);
      return 0;
    }
  if (!open_proc_ns (pid, ns, id) || proc_is_exiting (pid))
    {
      /* Exited (a zombie has no namespaces) or exiting: PID 1 ends holding
       * the view lock, and lets go of it before it lets go of its
       * namespaces.  Once it has exited the kernel has let go of its
       * overlays too - unless a process outside keeps them - so the new
       * view can be built at once, without retries. */
      struct pollfd p = { pidfd, POLLIN, 0 };
      view_ns_close (ns);
      while (poll (&p, 1, 10000) < 0 && errno == EINTR)
        ;
      view_set_stale (rec, mounts, n_mounts, unique, n_unique, mntns);
      return 0;
    }
  *why = "the recorded process is another one now";
  for (int i = 0; i < 8; i++)
    if (id[i] != rec[i])
      {
        view_ns_close (ns);
        return 0;
      }
  {
    /* The user namespace is the caller's own. */
    uid_t owner = (uid_t) -1, outer_owner = L.uid;
    if (ns->outer >= 0 && ioctl (ns->outer, NS_GET_OWNER_UID, &outer_owner) != 0)
      outer_owner = (uid_t) -1;
    if (ioctl (ns->user, NS_GET_OWNER_UID, &owner) != 0 || owner != L.uid
        || outer_owner != L.uid)
      {
        view_ns_close (ns);
        return 0;
      }
  }
  /* Still the same process now that its namespaces are held: the pid was
   * not reused while they were opened. */
  if (syscall (SYS_pidfd_send_signal, pidfd, 0, NULL, 0) != 0)
    {
      view_ns_close (ns);
      return 0;
    }
  return (pid_t) pid;
}

/* The record users/.views/NAME, opened for writing: the one there when it
 * is a regular file of root's, mode 0600, with one link (only root writes
 * in root's 0700 users/.views/); anything else in its place (a link, a
 * FIFO) is removed first.  -1 (errno set) on failure. */
static int
open_view_record (const char *name)
{
  for (int attempt = 0; attempt < 2; attempt++)
    {
      struct stat st;
      int fd = openat (L.sb.views_fd, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK
                       | O_NOCTTY | O_CLOEXEC, 0600);
      if (fd >= 0 && fstat (fd, &st) == 0 && S_ISREG (st.st_mode) && st.st_uid == 0
          && st.st_nlink == 1 && (st.st_mode & 07777) == 0600)
        return fd;
      if (fd >= 0)
        close (fd);
      if (unlinkat (L.sb.views_fd, name, 0) != 0 && errno != ENOENT)
        return -1;
    }
  errno = EEXIST;
  return -1;
}

/* As root, before the app starts: root's record of the view whose PID 1
 * is PID (namespaces ID), in users/.views/<uid>: its first line, and
 * "mounts ID...\n", the mount IDs of the view's own overlays (the root,
 * the merged directories and the writable ones: what a process that
 * keeps one holds, and what glimpse purge and the package operations
 * must not change under it), from its PID 1's mount table.  Complete
 * before anything of the view runs that a process of yours could reach:
 * once the app runs, it can hand the view's mount namespace (or a file of
 * it) to a process outside, and a launcher killed before its record was
 * written would leave a view kept alive that no record names, and that
 * glimpse-launch --held could not see.  A table that cannot be read whole
 * fails the launch, before the app (SECURITY.md case 28): a shorter list
 * would let a layer pass for free.
 *
 * In place, not by renaming a new file over it (a create and a rename
 * for the journal): the record is read and written only under the view
 * lock, and one left half-written (a full disk, a crash) is malformed,
 * so view_find refuses it and the next launch builds a view.
 *
 * Always GL_VIEW_RECORD_SIZE bytes, the text followed by NUL bytes (where
 * view_find's parsing stops), written with one write over the whole file:
 * no step leaves the new record's start followed by the end of a longer
 * old one, so the file need not be emptied first.  Emptying it (its block
 * freed, for the journal, to be allocated again by the write) took 0.4 ms
 * of every first launch here. */
#define GL_VIEW_RECORD_SIZE 1000

/* The unique IDs (STATX_MNT_ID_UNIQUE) of the mounts MOUNTS at TARGETS
 * (N of them, from the mount table of PID, the view's PID 1) into
 * UNIQUE: each opened (O_PATH, in PID's root, no link followed) and
 * taken only if it is the mount of that ID.  False if one is not. */
static bool
view_unique_ids (pid_t pid, const unsigned *mounts, char *const *targets, size_t n,
                 unsigned long long *unique)
{
  char path[64];
  cleanup_fd int root = -1;

  snprintf (path, sizeof path, "/proc/%d/root", (int) pid);
  root = open (path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0)
    return false;
  for (size_t i = 0; i < n; i++)
    {
      struct statx a, b;
      cleanup_fd int fd = -1;
      if (targets[i][0] != '/')
        return false;
      fd = (int) gl_launch_mount_openat2 (root, targets[i][1] ? targets[i] + 1 : ".",
                                          O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
                                          RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS
                                          | RESOLVE_NO_MAGICLINKS);
      if (fd < 0 || statx (fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &a) != 0
          || !(a.stx_mask & STATX_MNT_ID) || a.stx_mnt_id != mounts[i]
          || statx (fd, "", AT_EMPTY_PATH, STATX_MNT_ID_UNIQUE, &b) != 0
          || !(b.stx_mask & STATX_MNT_ID_UNIQUE) || b.stx_mnt_id == 0)
        return false;
      unique[i] = b.stx_mnt_id;
    }
  return true;
}

static GL_NORETURN void
die_record_fsize (void)
{
  die ("cannot start sandbox \"%s\": your file size limit (ulimit -f; RLIMIT_FSIZE) is below "
       "the %d bytes of the record root keeps of your view; raise it (ulimit -f unlimited) and "
       "launch again", L.id, GL_VIEW_RECORD_SIZE);
}

/* Before a view is built: the caller's RLIMIT_FSIZE lets its record be
 * written whole (a soft limit is the caller's, and a setuid process's
 * cannot be changed from outside by the caller meanwhile). */
static void
check_record_fits (void)
{
  struct rlimit rl;
  if (getrlimit (RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
      && rl.rlim_cur < GL_VIEW_RECORD_SIZE)
    die_record_fsize ();
}

static void
view_record (pid_t pid, const unsigned long long id[8], int mnt_ns)
{
  char path[64], name[32], buf[1024];
  struct stat st;
  uint64_t mntns = 0;
  unsigned long long start = proc_start_time (pid);
  unsigned mounts[GL_VIEW_MAX_MOUNTS];
  unsigned long long unique[GL_VIEW_MAX_MOUNTS];
  char *targets[GL_VIEW_MAX_MOUNTS];
  char line[GL_VIEW_MAX_MOUNTS * 21 + 16];
  size_t n_mounts = 0, line_len = 0;
  bool have_unique;
  cleanup_fd int fd = -1;
  struct sigaction ign = { .sa_handler = SIG_IGN }, old_xfsz;
  FILE *f;
  int len, rc;

  if (start == 0)
    die ("the sandbox's first process went away while starting");
  if (boot_id () == NULL)
    die ("cannot read this boot's ID (/proc/sys/kernel/random/boot_id) for the record of "
         "the view");
  len = snprintf (buf, sizeof buf, GL_VIEW_RECORD_FMT, boot_id (), L.id, (unsigned) L.uid,
                  (int) pid, start, id[0], id[1], id[2], id[3], id[4], id[5], id[6], id[7]);
  snprintf (path, sizeof path, "/proc/%d/mountinfo", (int) pid);
  f = fopen (path, "re");
  if (f == NULL)
    die_with_error ("cannot read the mount table of the sandbox's first process");
  gl_launch_mount_table_buffer (f);
  rc = gl_launch_mount_table_overlay_ids (f, mounts, targets, GL_VIEW_MAX_MOUNTS, &n_mounts);
  fclose (f);
  have_unique = rc == 0 && n_mounts > 0 && view_unique_ids (pid, mounts, targets, n_mounts, unique);
  for (size_t i = 0; rc == 0 && i < n_mounts; i++)
    free (targets[i]);
  if (rc != 0)
    die ("cannot read the mount table of the sandbox's first process: %s; not starting "
         "a view that later launches could not fully account for",
         rc == -EINVAL ? "a line is not in the mountinfo format"
         : rc == -E2BIG ? "more overlays than a view makes" : strerror (-rc));
  for (size_t i = 0; i < n_mounts; i++)
    len += snprintf (buf + len, sizeof buf - (size_t) len, "%s %u", i ? "" : "mounts",
                     mounts[i]);
  if (n_mounts > 0)
    len += snprintf (buf + len, sizeof buf - (size_t) len, "\n");
  if ((size_t) len >= GL_VIEW_RECORD_SIZE)
    die ("internal error: the view's record does not fit");
  /* (the unique IDs where they fit: without them the 32-bit ones are used) */
  for (size_t i = 0; have_unique && i < n_mounts; i++)
    line_len += (size_t) snprintf (line + line_len, sizeof line - line_len, "%s %llu",
                                   i ? "" : "unique", unique[i]);
  if (have_unique && (size_t) len + line_len + 1 < GL_VIEW_RECORD_SIZE)
    len += snprintf (buf + len, sizeof buf - (size_t) len, "%s\n", line);
  /* (and its mount namespace's ID where the kernel gives it: the inode,
   * recorded above, is given out again once the namespace is gone) */
  if (ioctl (mnt_ns, NS_GET_MNTNS_ID, &mntns) == 0 && mntns != 0 && mntns < ULLONG_MAX
      && (size_t) len + 27 < GL_VIEW_RECORD_SIZE)
    len += snprintf (buf + len, sizeof buf - (size_t) len, "mntns %llu\n",
                     (unsigned long long) mntns);
  memset (buf + len, 0, GL_VIEW_RECORD_SIZE - (size_t) len);

  snprintf (name, sizeof name, "%u", (unsigned) L.uid);
  fd = open_view_record (name);
  if (fd < 0)
    die_with_error ("cannot record the view in users/" GL_LAUNCH_VIEWS_DIR "/%s of sandbox "
                    "\"%s\" (ask your administrator to remove it if it is not a file)", name, L.id);
  /* One write of less than a page from offset 0: all of it or (killed:
   * its caller may SIGKILL it) none of it.  A longer file (never written
   * by glimpse-launch) is emptied first; a write that fails empties it,
   * leaving no mixture either.  The caller's RLIMIT_FSIZE (a soft limit
   * below GL_VIEW_RECORD_SIZE is refused before the view is built:
   * check_record_fits) would cut the write short, or, below its offset,
   * send SIGXFSZ, whose default action ends the launcher between the
   * view and its record: ignored here, so such a write fails with EFBIG
   * like any other. */
  errno = 0;
  if (fstat (fd, &st) != 0 || sigaction (SIGXFSZ, &ign, &old_xfsz) != 0)
    die_with_error ("cannot record the view in users/" GL_LAUNCH_VIEWS_DIR "/%s of sandbox "
                    "\"%s\"", name, L.id);
  if ((st.st_size > GL_VIEW_RECORD_SIZE && ftruncate (fd, 0) != 0)
      || pwrite (fd, buf, GL_VIEW_RECORD_SIZE, 0) != GL_VIEW_RECORD_SIZE)
    {
      int errsv = errno ? errno : EFBIG;
      (void) ftruncate (fd, 0);
      (void) sigaction (SIGXFSZ, &old_xfsz, NULL);
      errno = errsv;
      if (errno == ENOSPC || errno == EDQUOT)
        die_with_error ("cannot start sandbox \"%s\": the file system that holds it (and your "
                        "layers) is full; free some space, or \"glimpse purge\" a layer", L.id);
      if (errno == EFBIG)
        die_record_fsize ();
      die_with_error ("cannot record the view in users/" GL_LAUNCH_VIEWS_DIR "/%u of sandbox "
                      "\"%s\"", (unsigned) L.uid, L.id);
    }
  (void) sigaction (SIGXFSZ, &old_xfsz, NULL);
}

/* users/.views/<uid>.building (root's, 0600, beside the record): root's
 * note of the PID 1 of the view a first launch builds, "glimpse-building
 * 1 boot BOOT_ID pid PID start START\n" (then NUL bytes, as the record),
 * written before that PID 1 mounts anything; never removed.  A launcher
 * killed before it has recorded its view leaves a PID 1 that ends on its
 * own (its parent-death signal, or the end of the sync pipe), but that
 * only this note names: the next launch waits for it
 * (view_wait_unrecorded) instead of mounting your layer while it is
 * still mounted there. */
#define GL_VIEW_BUILDING_SIZE 128
#define GL_VIEW_BUILDING_FMT "glimpse-building 1 boot %36s pid %d start %llu\n"
/* How long a launch waits for such a PID 1 to end (ms). */
#define GL_VIEW_UNRECORDED_WAIT_MS 2000

/* As root, before PID 1 (PID) is told to build: the note above.  Not
 * written (a full disk): nothing is waited for later, as before. */
static void
view_note_building (pid_t pid)
{
  char name[48], buf[GL_VIEW_BUILDING_SIZE];
  cleanup_fd int fd = -1;
  unsigned long long start = proc_start_time (pid);
  int len;

  if (start == 0 || boot_id () == NULL)
    return;
  len = snprintf (buf, sizeof buf, "glimpse-building 1 boot %s pid %d start %llu\n", boot_id (),
                  (int) pid, start);
  if (len <= 0 || (size_t) len >= sizeof buf)
    return;
  memset (buf + len, 0, sizeof buf - (size_t) len);
  snprintf (name, sizeof name, "%u.building", (unsigned) L.uid);
  fd = open_view_record (name);
  /* (one write of less than a page at offset 0, as the record's; the
   * caller's file size limit is at least the record's: check_record_fits) */
  if (fd >= 0)
    (void) pwrite (fd, buf, sizeof buf, 0);
}

/* Under the view lock, as root, when there is no view to join: if root's
 * note names a PID 1 that is still there (alive or a zombie: the same
 * pid, start time and boot), its launcher ended before it recorded the
 * view - a launcher holds the view lock from before the note until after
 * the record and its last word - so that PID 1 is ending, and the view
 * with it (the lock is ours only once PID 1 has begun to exit: it holds
 * its launcher's; see child_main).  Waits for it to have ended, for at
 * most GL_VIEW_UNRECORDED_WAIT_MS: until then the kernel may not have let
 * go of its overlays, your layer.  Nothing of the user's is read. */
static void
view_wait_unrecorded (void)
{
  char name[48], buf[GL_VIEW_BUILDING_SIZE + 1], boot[37] = "";
  cleanup_fd int fd = -1;
  cleanup_fd int pidfd = -1;
  struct stat st;
  unsigned long long start = 0;
  int pid = 0;
  ssize_t len;
  struct pollfd p;

  snprintf (name, sizeof name, "%u.building", (unsigned) L.uid);
  fd = openat (L.sb.views_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0 || fstat (fd, &st) != 0 || !S_ISREG (st.st_mode) || st.st_uid != 0
      || st.st_nlink != 1 || (st.st_mode & 077) != 0 || st.st_size > GL_VIEW_BUILDING_SIZE)
    return;
  len = read (fd, buf, sizeof buf - 1);
  if (len <= 0)
    return;
  buf[len] = '\0';
  if (sscanf (buf, GL_VIEW_BUILDING_FMT, boot, &pid, &start) != 3 || pid <= 1 || start == 0
      || boot_id () == NULL || strcmp (boot, boot_id ()) != 0)
    return;
  pidfd = (int) syscall (SYS_pidfd_open, pid, 0);
  if (pidfd < 0 || proc_start_time (pid) != start)
    return;
  p = (struct pollfd) { pidfd, POLLIN, 0 };
  while (poll (&p, 1, GL_VIEW_UNRECORDED_WAIT_MS) < 0 && errno == EINTR)
    ;
}

/* What the app's process needs, all made before it starts (setuid, it
 * runs in the launcher's memory until it execs, and writes none of it
 * but the die() globals, which the launcher sets back). */
typedef struct {
  const ViewNs *ns;
  int err_fd;           /* its errors, for the launcher */
  int tty;              /* the terminal it gets, or -1 */
  char *const *command;
  char **env;           /* its whole environment */
  char **cands;         /* where command[0] is looked for */
  int pid_fd;           /* the helper tells the launcher the app's pid here */
} AppStart;

/* The app, in the view (start_app entered the view's namespaces): drop
 * everything, exec. */
static GL_NORETURN void
app_main (const AppStart *a)
{
  struct sigaction sa;
  sigset_t none;

  gl_die_hook = NULL;
  gl_error_fd = a->err_fd;

  /* A process group of its own: kill (0, ...) then reaches nothing
   * outside the sandbox.  On a terminal it becomes the foreground group
   * (job control keeps working; the launcher gives the terminal back);
   * without one, a session of its own. */
  if (a->tty >= 0)
    {
      if (setpgid (0, 0) != 0 || tcsetpgrp (a->tty, getpid ()) != 0)
        die_with_error ("cannot give the terminal to the command");
    }
  else
    (void) setsid ();

  /* Drop everything: no capability in any set, no way back.  (Entering
   * the view's user namespace filled the bounding set again.) */
  drop_bounding_and_ambient (true);
  if (gl_capset (0, 0) != 0 || !no_caps_left ())
    die ("cannot drop all capabilities; refusing to run the command");
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    die_with_error ("cannot set no-new-privs");
  if (L.uid != 0 && (setuid (0) == 0 || seteuid (0) == 0))
    die ("could regain root inside the sandbox; refusing to run the command");
  if (getuid () != L.uid || geteuid () != L.uid || getgid () != L.gid)
    die ("not running as uid %u in the sandbox; refusing to run the command", (unsigned) L.uid);

  /* Nothing of the host stays open but the error pipe (closed by exec). */
  if (dup3 (a->err_fd, 3, O_CLOEXEC) != 3)
    die_with_error ("cannot rearrange descriptors");
  gl_error_fd = 3;
  if (syscall (SYS_close_range, 4U, ~0U, 0U) != 0)
    for (int fd = 4; fd < 4096; fd++)
      close (fd);

  memset (&sa, 0, sizeof sa);
  sa.sa_handler = SIG_DFL;
  for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
    sigaction (forwarded[i], &sa, NULL);
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  /* (the terminal filter: the launcher's, inherited - prepare_app) */
  if (prctl (PR_GET_SECCOMP, 0, 0, 0, 0) != 2)
    die ("the terminal filter (seccomp) is missing; refusing to run the command");
  if (L.cwd == NULL || chdir (L.cwd) != 0)
    if (chdir (L.home) != 0)
      (void) chdir ("/");
  exec_app (a->command, a->cands, a->env);
}

/* Enters the view NS's namespaces: its user namespace, nested in the one
 * the launcher made (F4, lock_view: the PID namespace belongs to the outer
 * one), on the way its PID namespace for the children to come, then its
 * mount and IPC namespaces.  Yours: no privilege needed. */
static void
view_enter (const ViewNs *ns)
{
  /* (The app is started from here in the view's PID namespace, and holds
   * descriptors root opened until app_main closes them: it is not
   * dumpable, so that no app can trace it or open its /proc entries.) */
  if (setns (ns->outer >= 0 ? ns->outer : ns->user, CLONE_NEWUSER) != 0)
    die_with_error ("cannot enter the sandbox's user namespace");
  if (setns (ns->pid, CLONE_NEWPID) != 0)
    die_with_error ("cannot enter the sandbox's PID namespace");
  if (ns->outer >= 0 && setns (ns->user, CLONE_NEWUSER) != 0)
    die_with_error ("cannot enter the sandbox's user namespace");
  if (prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
    die_with_error ("cannot make the launcher not dumpable");
  if (setns (ns->mnt, CLONE_NEWNS) != 0)
    die_with_error ("cannot enter the sandbox's mount namespace");
  if (setns (ns->ipc, CLONE_NEWIPC) != 0)
    die_with_error ("cannot enter the sandbox's IPC namespace");
}

/* The app's process (A: what it needs), started by app_helper in the
 * view. */
static int
app_child (void *a)
{
  app_main (a);
}

/* True unless fs.suid_dumpable is 1 ("debug"), where a process that
 * changes its ids becomes dumpable (traceable by you) for a moment: a
 * child must not share the launcher's memory then. */
static bool
may_share_memory (void)
{
  char b[4] = "";
  cleanup_fd int fd = -1;

  /* (read once per launch, by the launcher: its first start_child, or
   * prepare_app, comes before any child that could write it) */
  if (L.share_memory >= 0)
    return L.share_memory;
  fd = open ("/proc/sys/fs/suid_dumpable", O_RDONLY | O_CLOEXEC);
  L.share_memory = fd >= 0 && read (fd, b, sizeof b - 1) >= 1 && (b[0] == '0' || b[0] == '2')
                   && (b[1] == '\n' || b[1] == '\0');
  return L.share_memory;
}

#define GL_CHILD_STACK (128 * 1024)

/* The stacks of start_child's children, mapped by the launcher itself
 * (prepare_app) and kept: [0] for its own children (one at a time: it
 * waits for each), [1] for the app its helper starts meanwhile.  A child
 * on a stack mapped for it alone cost a map and an unmap (and the unmap a
 * flush of the TLB of every CPU it ran on) on the way to the app. */
static char *child_stacks[2];

/* Runs FN (ARG) in a child of ours that only sets up and execs or ends,
 * started as vfork() would (CLONE_VM | CLONE_VFORK, on a stack of its
 * own): copying the launcher's page tables for it was most of the cost of
 * starting it.  We wait meanwhile; FN writes nothing of our memory but
 * the die() globals, set back here, and allocates nothing.  The memory
 * stays not dumpable all along (see may_share_memory; the user, mount
 * and IPC namespaces are entered with setns, which a process sharing
 * memory may do).  Where it may not, FN runs in a forked child.  FLAGS:
 * 0, or CLONE_PARENT (the child is our parent's).  Its pid, or -1 (errno
 * set). */
static pid_t
start_child (int (*fn) (void *), void *arg, int flags)
{
  void (*hook) (const char *) = gl_die_hook;
  int error_fd = gl_error_fd, errsv;
  char *stack;
  pid_t pid;

  if (!may_share_memory ())
    {
      struct clone_args ca;
      memset (&ca, 0, sizeof ca);
      ca.flags = (unsigned) flags;
      ca.exit_signal = flags & CLONE_PARENT ? 0 : SIGCHLD;
      pid = flags ? (pid_t) syscall (SYS_clone3, &ca, sizeof ca) : fork ();
      if (pid == 0)
        _exit (fn (arg));
      return pid;
    }
  stack = child_stacks[flags & CLONE_PARENT ? 1 : 0];
  if (stack == NULL)
    stack = mmap (NULL, GL_CHILD_STACK, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED)
    return -1;
  pid = clone (fn, stack + GL_CHILD_STACK, CLONE_VM | CLONE_VFORK | flags | SIGCHLD, arg);
  errsv = errno;
  gl_die_hook = hook;
  gl_error_fd = error_fd;
  if (stack != child_stacks[flags & CLONE_PARENT ? 1 : 0])
    (void) munmap (stack, GL_CHILD_STACK);
  errno = errsv;
  return pid;
}

/* What starting COMMAND needs that no view is needed for, made once: its
 * environment, where it is looked for, may_share_memory's answer, the
 * children's stacks, and the terminal filter (SECURITY.md case 13), installed on the launcher
 * itself: the helper and the app it starts inherit it (a filter stays
 * with every child and across exec), and nothing of the launcher's uses
 * the two ioctls it refuses.  A first launch makes all of it while its
 * PID 1 builds the view (the filter alone was 0.05-0.15 ms on the way to
 * the app); a joining launch when it starts the app, as before. */
static void
prepare_app (char *const *command)
{
  if (L.start_env == NULL)
    {
      L.start_env = gl_launch_build_env (L.app_env, L.home, L.user, L.shell, L.id);
      L.start_cands = exec_candidates (command, L.start_env);
    }
  for (int i = 0; i < 2 && may_share_memory (); i++)
    if (child_stacks[i] == NULL)
      {
        char *stack = mmap (NULL, GL_CHILD_STACK, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
        if (stack != MAP_FAILED)
          child_stacks[i] = stack;
      }
  if (!L.tty_filter)
    install_tty_filter ();
  L.tty_filter = true;
}

/* The helper (P: the AppStart): enters the view and starts the app in it
 * as the launcher's child (CLONE_PARENT); tells the launcher its pid. */
static int
app_helper (void *p)
{
  AppStart *a = p;
  pid_t app;
  gl_die_hook = NULL;
  gl_error_fd = a->err_fd;
  view_enter (a->ns);
  app = start_child (app_child, a, CLONE_PARENT);
  if (app < 0)
    die_with_error ("cannot start the command in the sandbox");
  return gl_write_all (a->pid_fd, &app, sizeof app) == 0 ? 0 : GL_EXIT_LAUNCHER;
}

/* Starts COMMAND in the view NS as a child of ours, its errors on the
 * error pipe ERR_P (whose write end it closes); returns its pid, or dies.
 *
 * The launcher drops every privilege first; then a helper, in the host's
 * PID namespace where nothing in the view sees it, enters the view's
 * namespaces as you and starts the app in them as our child
 * (CLONE_PARENT), and tells us its pid; both by start_child.  So nothing
 * of the launcher is in the view before it is yours and in the view's
 * mount namespace: an app already there cannot signal, trace or open the
 * /proc entries of a launch that is still root or still sees the host.
 * (A child that root started straight in the view's PID namespace, its
 * real uid yours, could be stopped by the app there, in the host's mount
 * namespace.) */
static pid_t
start_app (const ViewNs *ns, int err_p[2], int tty, char *const *command)
{
  int pid_p[2];
  pid_t app = -1, helper;
  AppStart a = { ns, err_p[1], tty, command, NULL, NULL, -1 };

  prepare_app (command);
  a.env = L.start_env;
  a.cands = L.start_cands;
  drop_privs_for_good ();
  if (pipe2 (pid_p, O_CLOEXEC) != 0)
    die_with_error ("cannot set up starting the command");
  a.pid_fd = pid_p[1];
  helper = start_child (app_helper, &a, 0);
  if (helper < 0)
    die_with_error ("cannot start the command in the sandbox");
  close (err_p[1]);
  close (pid_p[1]);
  if (read (pid_p[0], &app, sizeof app) != (ssize_t) sizeof app)
    app = -1;
  close (pid_p[0]);
  while (waitpid (helper, NULL, 0) < 0 && errno == EINTR)
    ;
  if (app <= 0)
    {
      /* the helper failed: its message is in the error pipe */
      char errbuf[4096];
      size_t len = 0;
      ssize_t n;
      while ((n = read (err_p[0], errbuf + len, sizeof errbuf - 1 - len)) > 0)
        len += (size_t) n;
      errbuf[len] = '\0';
      if (len > 0 && errbuf[len - 1] == '\n')
        errbuf[len - 1] = '\0';
      die ("%s", strncmp (errbuf, "glimpse-launch: ", 16) == 0 ? errbuf + 16
           : len ? errbuf : "cannot start the command in the sandbox");
    }
  return app;
}

/* Runs COMMAND in the view NS (checked; VIEW_LOCK held) and returns like
 * it, as soon as it ends: every launch, first or not, ends here.  Not
 * when the view ends: the last app's view is taken down by its PID 1 on
 * its own (the overlays' unmounts each sync the upper file system), and
 * what needs your layer meanwhile (glimpse purge, the next view) waits
 * for that.  Privileges are dropped for
 * good in start_app, before the app is started; the user namespace is
 * the caller's own, so entering it needs none.  PID1_GO (a first launch,
 * whose view root recorded before: see view_record; or -1): where PID 1
 * is told, once the app is started, that its view may outlive us. */
static int
run_in_view (ViewNs *ns, int view_lock, char *const *command, int pid1_go)
{
  sigset_t set;
  int sigfd, err_p[2], app_status = 0, tty = -1;
  pid_t app = -1, own_pgrp = getpgrp ();
  size_t errlen = 0;
  char errbuf[4096];
  bool err_open = true;

  /* On a terminal whose foreground group is ours, the app gets it. */
  if (isatty (STDIN_FILENO) && tcgetpgrp (STDIN_FILENO) == own_pgrp)
    tty = STDIN_FILENO;

  sigemptyset (&set);
  sigaddset (&set, SIGCHLD);
  sigaddset (&set, SIGTTOU);
  sigaddset (&set, SIGCONT);
  for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
    sigaddset (&set, forwarded[i]);
  sigprocmask (SIG_BLOCK, &set, NULL);
  sigdelset (&set, SIGTTOU);
  sigfd = signalfd (-1, &set, SFD_CLOEXEC);
  if (sigfd < 0 || pipe2 (err_p, O_CLOEXEC) != 0)
    die_with_error ("cannot set up waiting for the command");

  app = start_app (ns, err_p, tty, command);
  if (tty >= 0)
    (void) setpgid (app, app);
  if (pid1_go >= 0)
    {
      /* The view may outlive us now (child_main). */
      (void) send (pid1_go, "r", 1, MSG_NOSIGNAL);
      close (pid1_go);
    }
  /* The app exists in the view: PID 1 may look again. */
  (void) flock (view_lock, LOCK_UN);
  close (view_lock);
  view_ns_close (ns);

  for (;;)
    {
      struct pollfd pfd[2] = { { sigfd, POLLIN, 0 }, { err_open ? err_p[0] : -1, POLLIN, 0 } };
      struct signalfd_siginfo si;
      int st;
      if (poll (pfd, 2, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          die_with_error ("cannot wait for the command");
        }
      if (pfd[1].revents)
        {
          err_open = read_errors (err_p[0], errbuf, sizeof errbuf, &errlen);
        }
      if (!pfd[0].revents || read (sigfd, &si, sizeof si) != (ssize_t) sizeof si)
        continue;
      if (si.ssi_signo == SIGCONT)
        continue;
      if (si.ssi_signo != SIGCHLD)
        {
          /* A signal a process sent us (the terminal's own reach the
           * app's group without us) goes to the app's process group, as
           * a terminal's would: what the app started gets it too.  Sent
           * to the app alone, a script's children outlived it in a view
           * another launch holds, kept our caller waiting on the output
           * they held, and went on (a stopped update check's fetch).
           * The group is the app's once it has made it (app_main); until
           * then, the app alone. */
          if (si.ssi_code != SI_KERNEL && kill (-app, (int) si.ssi_signo) != 0)
            kill (app, (int) si.ssi_signo);
          continue;
        }
      for (;;)
        {
          pid_t p = waitpid (app, &st, WNOHANG | WUNTRACED);
          if (p != app)
            break;
          if (WIFSTOPPED (st))
            {
              /* Job control, on a terminal only: stop with the app, give
               * the terminal back, and take it up again when continued.
               * Without one nobody would continue us: an app stopped
               * and continued by anything in the view (or by itself)
               * would leave its launcher stopped for good. */
              if (tty < 0)
                continue;
              (void) tcsetpgrp (tty, own_pgrp);
              raise (SIGSTOP);
              (void) tcsetpgrp (tty, app);
              kill (-app, SIGCONT);
              continue;
            }
          app_status = st;
          goto done;
        }
    }
done:
  if (tty >= 0)
    (void) tcsetpgrp (tty, own_pgrp);
  while (err_open)
    {
      ssize_t n = read (err_p[0], errbuf + errlen, sizeof errbuf - 1 - errlen);
      if (n <= 0 || (errlen += (size_t) n) == sizeof errbuf - 1)
        break;
    }
  if (errlen > 0)
    {
      show_errors (errbuf, errlen);
    }
  if (WIFSIGNALED (app_status))
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
  return WIFEXITED (app_status) ? WEXITSTATUS (app_status) : GL_EXIT_LAUNCHER;
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

/* The id maps of the view's user namespaces: your uid and gid (setuid,
 * your groups too) as themselves.  UMAP: 64 bytes; returns the gid map. */
static char *
id_maps (char *umap)
{
  size_t cap = 64 + 32 * ((size_t) L.n_groups + 1), off = 0;
  char *gmap = xmalloc (cap);
  int lines = 1;

  snprintf (umap, 64, "%u %u 1\n", (unsigned) L.uid, (unsigned) L.uid);
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
  return gmap;
}

/* Writes the id maps UMAP and GMAP of PID's user namespace (without
 * privilege: its setgroups "deny" first).  Allocates nothing. */
static void
write_maps (pid_t pid, const char *umap, const char *gmap)
{
  if (!L.privileged)
    write_proc_file (pid, "setgroups", "deny");
  write_proc_file (pid, "uid_map", umap);
  write_proc_file (pid, "gid_map", gmap);
}

static void
write_id_maps (pid_t pid)
{
  char umap[64];
  cleanup_free char *gmap = id_maps (umap);
  write_maps (pid, umap, gmap);
}

/* What the process writing the nested id maps needs. */
typedef struct {
  pid_t pid;
  int outer, err_fd;
  const char *umap, *gmap;
} NestedMaps;

static int
nested_maps_child (void *p)
{
  const NestedMaps *m = p;
  gl_die_hook = NULL;
  gl_error_fd = m->err_fd;
  /* Root entering your user namespace would become dumpable where
   * fs.suid_dumpable is 1, and you own that namespace: any process of
   * yours could then trace this one.  With your effective uid (the saved
   * uid stays root's: nothing of yours reaches it meanwhile) entering it
   * changes nothing; root's filesystem uid still opens PID 1's map files. */
  if (setresuid ((uid_t) -1, L.uid, (uid_t) -1) != 0)
    die_with_error ("cannot switch to your user id to write the id maps");
  (void) setfsuid (0);
  if (prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
    die_with_error ("cannot make the launcher not dumpable");
  if (setns (m->outer, CLONE_NEWUSER) != 0)
    die_with_error ("cannot enter the sandbox's user namespace to write its nested one's "
                    "id maps");
  if (prctl (PR_GET_DUMPABLE, 0, 0, 0, 0) != 0)
    die ("dumpable in the sandbox's user namespace; refusing to write its id maps");
  write_maps (m->pid, m->umap, m->gmap);
  _exit (0);
}

/* The id maps of the user namespace the view's PID 1 (PID) has moved into
 * (lock_view), nested in the one the launcher created: only a process in
 * the parent user namespace may write them with groups, so they are
 * written by a child of ours that enters it (as root may): OUTER, opened
 * while PID 1 was still waiting to start.  The same ids as the first
 * namespace's.  PID 1 asks for them when it has moved ("u" on the maps
 * pipe, which the launcher watches while the view is built); the child
 * is started then, by start_child (its errors go to the error pipe
 * ERR_W), instead of a forked helper waiting all along: one copy of the
 * launcher's page tables less for a first launch.  True when written. */
static bool
write_nested_maps (pid_t pid, int outer, int err_w)
{
  char umap[64];
  cleanup_free char *gmap = id_maps (umap);
  NestedMaps m = { pid, outer, err_w, umap, gmap };
  pid_t h = start_child (nested_maps_child, &m, 0);
  int st = 0;

  if (h < 0)
    die_with_error ("cannot write the id maps of the sandbox's nested user namespace");
  while (waitpid (h, &st, 0) < 0)
    if (errno != EINTR)
      return false;
  return WIFEXITED (st) && WEXITSTATUS (st) == 0;
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

/* The caller's name, home and shell (L.user, L.home, L.shell) from the
 * password database, by uid; never from $HOME or $USER. */
static void
set_user (const char *name, const char *home, const char *shell)
{
  L.user = xstrdup (name);
  L.home = xstrdup (home && home[0] ? home : "/");
  L.shell = xstrdup (shell && shell[0] ? shell : "/bin/sh");
  while (strlen (L.home) > 1 && L.home[strlen (L.home) - 1] == '/')
    L.home[strlen (L.home) - 1] = '\0';
}

#ifndef GL_LAUNCH_GETENT
static void
lookup_user (void)
{
  struct passwd *pw;

  errno = 0;
  pw = getpwuid (L.uid);
  if (pw == NULL)
    die ("cannot find your user (uid %u) in the password database; ask your "
         "administrator", (unsigned) L.uid);
  set_user (pw->pw_name, pw->pw_dir, pw->pw_shell);
}
#else
/* The static launcher (meson.build: linked -static-pie, which saves the
 * dynamic loader's work - about 35 of a cold launch's 130 page faults -
 * on every launch).  getpwuid() cannot be used there: a static glibc
 * dlopens the NSS modules other than files (libnss_systemd, libnss_sss,
 * ...) of its own build, and crashes doing it.  So:
 *
 * 1. /etc/passwd, read with fgetpwent_r (glibc's own parser of the files
 *    module, no NSS), when /etc/nsswitch.conf's passwd line starts with
 *    "files" (Debian's default: "files systemd") or "compat", without an
 *    action after it.  Then the first entry with the caller's uid is what
 *    getpwuid() returns too: the files module returns it, and "compat"
 *    returns a plain entry as files does, as long as no "+"/"-" (NIS) line
 *    comes before it - such a line sends the lookup to step 2.  The order
 *    matters: with "passwd: ldap files" (or sss, or an action like
 *    "files [SUCCESS=continue]") a user in both would be ldap's user for
 *    getpwuid(), so then /etc/passwd is not read at all and every lookup
 *    is step 2.  (No nsswitch.conf, or no passwd line in it: step 2 too.
 *    nscd is not asked: it only caches what these sources say.)
 *
 * 2. Otherwise, or when /etc/passwd does not have the uid (a user of
 *    systemd's userdb, LDAP, sssd): `getent passwd UID`, the one program
 *    whose answer is getpwuid()'s by definition, from its fixed path found
 *    at build time (GL_LAUNCH_GETENT).  SECURITY.md allows no helper
 *    programs while privileged; this one is the exception, and it runs
 *    where the caller has no hold on it: as root with every uid and gid 0
 *    (the caller can neither signal nor ptrace it), no groups, in /, with
 *    an environment of PATH alone, stdin and stderr on /dev/null, no other
 *    descriptor than its output pipe, no core dump (into a directory of
 *    the caller's), default signal dispositions, and killed should the
 *    launcher die.  It runs before anything of the sandbox or the
 *    caller's files is opened - as getpwuid() with its NSS modules did,
 *    in the setuid launcher itself.  Its output is capped and read
 *    strictly (gl_launch_parse_passwd_line: one line, seven fields, the
 *    caller's uid), anything else is "cannot find your user".  Without
 *    privilege (the launcher not setuid, where user namespaces are
 *    allowed) it runs as the caller, who owns the launcher anyway. */
#define GL_NSSWITCH_MAX 65536
#define GL_GETENT_OUT_MAX 4096

static GlLaunchPasswdFirst
nsswitch_passwd (void)
{
  cleanup_fd int fd = open ("/etc/nsswitch.conf", O_RDONLY | O_CLOEXEC | O_NOCTTY);
  cleanup_free char *text = NULL;
  size_t len = 0;

  if (fd < 0)
    return GL_LAUNCH_PASSWD_OTHER;
  text = xmalloc (GL_NSSWITCH_MAX + 1);
  for (;;)
    {
      ssize_t n = read (fd, text + len, GL_NSSWITCH_MAX - len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 || (n > 0 && len + (size_t) n == GL_NSSWITCH_MAX))
        return GL_LAUNCH_PASSWD_OTHER;
      if (n == 0)
        break;
      len += (size_t) n;
    }
  return gl_launch_nsswitch_passwd (text, len);
}

/* Step 1: true when /etc/passwd answers for the caller's uid. */
static bool
lookup_user_files (GlLaunchPasswdFirst first)
{
  FILE *f = fopen ("/etc/passwd", "re");
  size_t cap = 1024;
  cleanup_free char *buf = NULL;
  bool found = false;

  if (f == NULL)
    return false;
  buf = xmalloc (cap);
  for (;;)
    {
      struct passwd pwbuf, *pw = NULL;
      int r = fgetpwent_r (f, &pwbuf, buf, cap, &pw);
      if (r == ERANGE && cap < (1U << 20))
        {
          /* (glibc rewinds to the entry's start) */
          cap *= 4;
          free (buf);
          buf = xmalloc (cap);
          continue;
        }
      if (r != 0 || pw == NULL)
        break;
      if (pw->pw_name[0] == '+' || pw->pw_name[0] == '-')
        {
          if (first == GL_LAUNCH_PASSWD_COMPAT)
            break;
          continue;   /* (the files module skips them too) */
        }
      if (pw->pw_uid == L.uid)
        {
          set_user (pw->pw_name, pw->pw_dir, pw->pw_shell);
          found = true;
          break;
        }
    }
  fclose (f);
  return found;
}

static void
getent_child (int out_w, pid_t parent)
{
  char uid[16];
  char *const argv[] = { (char *) "getent", (char *) "passwd", uid, NULL };
  char *const envp[] = { (char *) "PATH=" GL_LAUNCH_DEFAULT_PATH, NULL };
  const struct rlimit no_core = { 0, 0 };
  sigset_t none;
  int null;

  if (prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
    _exit (127);
  if (L.privileged
      && (setgroups (0, NULL) != 0 || setresgid (0, 0, 0) != 0 || setresuid (0, 0, 0) != 0))
    _exit (127);
  /* (after the change of ids, which clears the death signal's setting
   * where it changes the effective ids: set again, then check that the
   * launcher did not end before it was set) */
  if (prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 || getppid () != parent)
    _exit (127);
  snprintf (uid, sizeof uid, "%u", (unsigned) L.uid);
  null = open ("/dev/null", O_RDWR | O_CLOEXEC);
  if (null < 0 || dup2 (null, 0) != 0 || dup2 (out_w, 1) != 1 || dup2 (null, 2) != 2)
    _exit (127);
  if (syscall (SYS_close_range, 3U, ~0U, 0U) != 0)
    for (int fd = 3; fd < 4096; fd++)
      close (fd);
  for (int sig = 1; sig < NSIG; sig++)
    (void) signal (sig, SIG_DFL);
  sigemptyset (&none);
  if (sigprocmask (SIG_SETMASK, &none, NULL) != 0 || setrlimit (RLIMIT_CORE, &no_core) != 0
      || chdir ("/") != 0)
    _exit (127);
  execve (GL_LAUNCH_GETENT, argv, envp);
  _exit (127);
}

/* Step 2: true when `getent passwd UID` answers, strictly. */
static bool
lookup_user_getent (void)
{
  int p[2];
  char out[GL_GETENT_OUT_MAX + 1];
  size_t len = 0;
  bool over = false;
  int st = 0;
  pid_t pid, parent = getpid ();
  cleanup_free char *name = NULL, *home = NULL, *shell = NULL;

  if (pipe2 (p, O_CLOEXEC) != 0)
    die_with_error ("cannot look up your user: pipe");
  pid = fork ();
  if (pid < 0)
    die_with_error ("cannot look up your user: fork");
  if (pid == 0)
    getent_child (p[1], parent);
  close (p[1]);
  for (;;)
    {
      ssize_t n = read (p[0], out + len, sizeof out - len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      len += (size_t) n;
      if (len == sizeof out)
        {
          over = true;   /* (closing the pipe ends a longer answer) */
          break;
        }
    }
  close (p[0]);
  while (waitpid (pid, &st, 0) < 0)
    if (errno != EINTR)
      return false;
  if (over || !WIFEXITED (st) || WEXITSTATUS (st) != 0
      || !gl_launch_parse_passwd_line (out, len, (unsigned) L.uid, &name, &home, &shell))
    return false;
  set_user (name, home, shell);
  return true;
}

static void
lookup_user (void)
{
  GlLaunchPasswdFirst first = nsswitch_passwd ();

  if (first != GL_LAUNCH_PASSWD_OTHER && lookup_user_files (first))
    return;
  if (!lookup_user_getent ())
    die ("cannot find your user (uid %u) in the password database; ask your "
         "administrator", (unsigned) L.uid);
}
#endif

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

/* How long a launch waits for the view lock while one process holds it.
 * Launches of yours hold it for milliseconds (finding, building or joining
 * your view), and one after the other: a launch behind many others waits
 * as long as they take, since the wait counts from the last change of
 * holder.  But one whose command a process of yours stopped (SIGSTOP) in
 * the view before it started holds it until that command is continued or
 * killed: a joining launch's helper waits for the command's exec (vfork),
 * and the launcher for the helper.  Later launches give up then, naming
 * the holder, rather than hang.  (The stopped launch itself waits: it is
 * yours by then, holds no privilege, and only you - or an app of yours -
 * can stop, continue or kill it.) */
#define GL_VIEW_LOCK_WAIT_S 20

static void
on_alarm (int sig)
{
  (void) sig;
}

/* The process holding the flock lock on the file ST (from /proc/locks:
 * "N: FLOCK  ADVISORY  WRITE PID MAJ:MIN:INODE 0 EOF"; a waiter's line
 * has "->" after the number), or 0 when none is seen.  Device and inode
 * both: a lock of another user's on a file with the same inode number
 * elsewhere must not pass for the holder.  (Where the device there, the
 * superblock's, is not the one fstat() gives, as on btrfs, no holder is
 * seen, and the wait counts from its start.) */
static pid_t
lock_holder (const struct stat *st)
{
  FILE *f = fopen ("/proc/locks", "re");
  cleanup_free char *line = NULL;
  size_t cap = 0;
  pid_t holder = 0;
  char want[64];

  if (f == NULL)
    return 0;
  snprintf (want, sizeof want, " %02x:%02x:%llu ", major (st->st_dev), minor (st->st_dev),
            (unsigned long long) st->st_ino);
  while (holder == 0 && getline (&line, &cap, f) > 0)
    {
      const char *p = strchr (line, ':');
      int pid;
      if (p != NULL && strncmp (p, ": FLOCK ", 8) == 0 && strstr (line, want) != NULL
          && sscanf (p + 8, " ADVISORY WRITE %d", &pid) == 1 && pid > 0)
        holder = pid;
    }
  fclose (f);
  return holder;
}

/* True if the process whose /proc directory is DIR is the caller's: its
 * real uid (a launcher of the caller's, setuid and not dumpable, has a
 * /proc directory of root's), or the owner of that directory. */
static bool
proc_is_callers (int dir)
{
  char buf[2048];
  struct stat st;
  const char *line;

  if (fstat (dir, &st) == 0 && st.st_uid == L.uid)
    return true;
  if (read_proc_at (dir, "status", buf, sizeof buf) < 0)
    return false;
  line = strstr (buf, "\nUid:\t");
  return line != NULL && line[6] >= '0' && line[6] <= '9'
         && strtoul (line + 6, NULL, 10) == (unsigned long) L.uid;
}

/* PID's name and state ("stopped", ...), for saying who holds a lock:
 * false (nothing said) unless it is a process of the caller's.  The pid
 * is the one /proc/locks gives for the lock: its locker's, which may have
 * ended, and the pid been taken by another user's process since, whose
 * name root must not read out.  Read through one descriptor of its /proc
 * directory, so the owner checked is the one named. */
static bool
describe_process (pid_t pid, char *comm, size_t comm_size, const char **state)
{
  char path[64], buf[512];
  cleanup_fd int dir = -1;
  char *l, *r;

  snprintf (comm, comm_size, "?");
  *state = "gone";
  snprintf (path, sizeof path, "/proc/%d", (int) pid);
  dir = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir < 0 || !proc_is_callers (dir))
    return false;
  if (read_proc_at (dir, "stat", buf, sizeof buf) < 0)
    return true;
  l = strchr (buf, '(');
  r = strrchr (buf, ')');
  if (l == NULL || r == NULL || r < l || r[1] != ' ')
    return true;
  *r = '\0';
  snprintf (comm, comm_size, "%s", l + 1);
  /* (glimpse shows this message on root's terminal: remove, reclaim) */
  gl_launch_printable_name (comm);
  switch (r[2])
    {
    case 'R': *state = "running"; break;
    case 'S': *state = "sleeping"; break;
    case 'D': *state = "waiting in the kernel (state D)"; break;
    case 'T': *state = "stopped (state T)"; break;
    case 't': *state = "stopped by a debugger (state t)"; break;
    case 'Z': *state = "a zombie"; break;
    default: *state = "in state ?"; break;
    }
  return true;
}

/* Takes the view lock FD exclusively, or dies once one process has held
 * it for GL_VIEW_LOCK_WAIT_S (a blocking flock ended each second by
 * SIGALRM, without SA_RESTART, to see who holds it now). */
static void
lock_view_bounded (int fd)
{
  struct sigaction sa, old;
  struct timespec since, now;
  sigset_t alrm, mask;
  struct stat st;
  pid_t holder = -1;

  if (flock (fd, LOCK_EX | LOCK_NB) == 0)
    return;
  if (errno != EWOULDBLOCK && errno != EINTR)
    die_with_error ("cannot lock your view of sandbox \"%s\"", L.id);
  memset (&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sigemptyset (&sa.sa_mask);
  sigemptyset (&alrm);
  sigaddset (&alrm, SIGALRM);
  /* (the caller may have blocked it) */
  if (fstat (fd, &st) != 0 || sigaction (SIGALRM, &sa, &old) != 0
      || sigprocmask (SIG_UNBLOCK, &alrm, &mask) != 0
      || clock_gettime (CLOCK_MONOTONIC, &since) != 0)
    die_with_error ("cannot wait for your view of sandbox \"%s\"", L.id);
  for (;;)
    {
      pid_t now_holder = lock_holder (&st);
      /* (the time held counted in ms: in whole seconds of tv_sec, 19.01 s
       * could count as 20) */
      (void) clock_gettime (CLOCK_MONOTONIC, &now);
      if (now_holder != holder)
        {
          holder = now_holder;
          since = now;
        }
      else if ((now.tv_sec - since.tv_sec) * 1000 + (now.tv_nsec - since.tv_nsec) / 1000000
               >= GL_VIEW_LOCK_WAIT_S * 1000L)
        {
          char comm[64];
          const char *state = "";
          /* (a holder not yours is "a process": see describe_process) */
          if (holder <= 0 || !describe_process (holder, comm, sizeof comm, &state))
            die ("your view of sandbox \"%s\" has been busy for %d s%s: another launch of "
                 "yours is stuck, its command stopped before it started (ps -u %s -o "
                 "pid,stat,comm shows it in state T); end or continue it, then try again", L.id,
                 GL_VIEW_LOCK_WAIT_S, holder > 0 ? ", held by a process" : "", L.user);
          if (strncmp (state, "stopped", 7) == 0)
            die ("your view of sandbox \"%s\" has been held for %d s by process %d (%s), %s: "
                 "it keeps your view while it is stopped; continue it (kill -CONT %d) or end "
                 "it, then try again", L.id, GL_VIEW_LOCK_WAIT_S, (int) holder, comm, state,
                 (int) holder);
          die ("your view of sandbox \"%s\" has been held for %d s by process %d (%s), %s: "
               "another launch of yours is stuck, its command stopped before it started (ps -u "
               "%s -o pid,stat,comm shows that command in state T); end or continue it, then "
               "try again", L.id, GL_VIEW_LOCK_WAIT_S, (int) holder, comm, state, L.user);
        }
      alarm (1);
      if (flock (fd, LOCK_EX) == 0)
        break;
      if (errno != EINTR)
        die_with_error ("cannot lock your view of sandbox \"%s\"", L.id);
    }
  alarm (0);
  (void) sigaction (SIGALRM, &old, NULL);
  (void) sigprocmask (SIG_SETMASK, &mask, NULL);
}

/* The view lock, taken exclusively: launches of yours find, build and
 * join your view one at a time, and the view's PID 1 never ends while one
 * is joining.  Setuid: root's users/.views/<uid>.lock (0600), which you
 * can neither remove nor replace.  Without privilege (every launch builds
 * its own view): your users/<uid>/view.lock. */
static int
open_view_lock (void)
{
  struct stat st;
  char name[48];
  int fd;

  if (L.privileged)
    {
      snprintf (name, sizeof name, "%u.lock", (unsigned) L.uid);
      fd = openat (L.sb.views_fd, name, O_RDONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK
                   | O_NOCTTY | O_CLOEXEC, 0600);
      if (fd < 0)
        die_with_error ("cannot open the view lock users/" GL_LAUNCH_VIEWS_DIR "/%s in "
                        "sandbox \"%s\"", name, L.id);
      if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode) || st.st_uid != 0 || st.st_nlink != 1
          || (st.st_mode & 077) != 0)
        die ("sandbox not usable: users/" GL_LAUNCH_VIEWS_DIR "/%s is not a regular file of "
             "root's with mode 0600; ask your administrator to remove it", name);
    }
  else
    {
      fd = openat (L.sb.userdir_fd, GL_VIEW_LOCK_UNPRIV, O_RDONLY | O_CREAT | O_NOFOLLOW
                   | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0600);
      if (fd < 0)
        die_with_error ("cannot open your view lock users/%u/" GL_VIEW_LOCK_UNPRIV " in "
                        "sandbox \"%s\"", (unsigned) L.uid, L.id);
      if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode) || st.st_uid != L.uid)
        die ("sandbox not usable: users/%u/" GL_VIEW_LOCK_UNPRIV " is not a regular file of "
             "yours; remove it", (unsigned) L.uid);
    }
  lock_view_bounded (fd);
  return fd;
}

/* glimpse-launch --held ID, for glimpse purge (which holds your layer's
 * lock, so no view of yours starts meanwhile; here the view lock is held
 * too): 0 if no view of yours uses your layer any more, GL_EXIT_VIEW_HELD
 * (with what holds it on stderr) if a view runs, or the last one ended
 * but a process outside keeps its overlays (the launch's own check: the
 * record's mount namespace and overlay mount IDs).  Setuid only. */
static int
layer_held (ViewNs *ns)
{
  const char *why = NULL;
  pid_t view_pid = view_find (ns, &why);
  int held;

  if (view_pid <= 0)
    view_wait_unrecorded ();
  drop_privs_for_good ();
  if (view_pid > 0)
    {
      fprintf (stderr, "glimpse-launch: your view of sandbox \"%s\" is running (its process "
               "1 is %d); close its apps first\n", L.id, (int) view_pid);
      return GL_EXIT_VIEW_HELD;
    }
  held = report_view_holders ();
  return held > 0 ? GL_EXIT_VIEW_HELD : 0;
}

/* The same lock file once more, as an open file of its own (flock locks
 * belong to open files): the view's PID 1 takes it in turn with the
 * launchers.  Opened here, as root when setuid: PID 1 could not open
 * root's file. */
static int
reopen_view_lock (int view_lock)
{
  char path[40];
  struct stat a, b;
  int fd;
  snprintf (path, sizeof path, "/proc/self/fd/%d", view_lock);
  fd = open (path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0 || fstat (fd, &a) != 0 || fstat (view_lock, &b) != 0 || a.st_dev != b.st_dev
      || a.st_ino != b.st_ino)
    die_with_error ("cannot open the view lock again for the sandbox's first process");
  return fd;
}

/* Ends the launcher with STATUS, its app's, once that has ended: by
 * _exit, after flushing stdio, not by exit (), whose handlers (the
 * dynamic loader's destructors, stdio's teardown) write pages that the
 * view's PID 1 still shares with us since it was forked: each such page
 * was copied (5 page faults here), on the way from the app's end to its
 * caller's. */
static GL_NORETURN void
end_launch (int status)
{
  (void) fflush (NULL);
  _exit (status);
}

int
main (int argc, char **argv)
{
  GlLaunchArgs args;
  GlLaunchAction action;
  uid_t ruid, euid, suid;
  gid_t rgid, egid, sgid;
  int sync_p[2], err_p[2], maps_p[2];
  struct clone_args ca;
  sigset_t set;
  int sigfd, child_status = 0, view_lock;
  int outer = -1;         /* the view's first user namespace, for its nested one's maps */
  bool maps_missing = false;
  uint64_t perm = 0;
  ViewNs ns = { -1, -1, -1, -1, -1 };
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
    case GL_LAUNCH_ACTION_HELD:
    case GL_LAUNCH_ACTION_RUN:
    default:
      break;
    }
  L.id = args.id;
  /* Without privilege there are no records of views to check. */
  if (action == GL_LAUNCH_ACTION_HELD && !L.privileged)
    return 0;

  L.cwd = getcwd (cwdbuf, sizeof cwdbuf) ? xstrdup (cwdbuf) : NULL;
  lookup_user ();
  L.sb.query = action == GL_LAUNCH_ACTION_HELD;
  gl_launch_store_open (&L.sb, GL_LAUNCH_SANDBOX_DIR, L.id, L.uid, L.gid, L.privileged);
  view_lock = open_view_lock ();
  if (action == GL_LAUNCH_ACTION_HELD)
    return layer_held (&ns);

  /* A view of yours is up: join it (only the setuid launcher trusts a
   * record; without privilege every launch builds its own). */
  if (L.privileged)
    {
      const char *why = NULL;
      pid_t view_pid = view_find (&ns, &why);
      if (view_pid > 0)
        end_launch (run_in_view (&ns, view_lock, args.command, -1));
      view_wait_unrecorded ();
      check_record_fits ();
    }

  make_copies ();
  L.pid1_lock = reopen_view_lock (view_lock);

  /* (the sync pipe a socket pair: its last word, after the app has
   * started, is sent without a SIGPIPE should PID 1 be gone) */
  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sync_p) != 0
      || pipe2 (err_p, O_CLOEXEC) != 0 || pipe2 (maps_p, O_CLOEXEC) != 0)
    die_with_error ("cannot create pipes");

  sigemptyset (&set);
  sigaddset (&set, SIGCHLD);
  for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
    sigaddset (&set, forwarded[i]);
  sigprocmask (SIG_BLOCK, &set, NULL);

  /* The namespaces are created with your effective uid, so they are yours
   * (counted against your limits, not root's); CAP_SYS_ADMIN stays
   * effective for creating them where unprivileged user namespaces are
   * forbidden.  Root comes back for writing the id maps. */
  if (L.privileged)
    {
      struct __user_cap_data_struct data[2] = { { 0 } };
      if (gl_capget (data) != 0)
        die_with_error ("cannot read the launcher's capabilities");
      perm = data[0].permitted | ((uint64_t) data[1].permitted << 32);
      if (setresuid ((uid_t) -1, L.uid, (uid_t) -1) != 0
          || gl_capset (perm & (1ULL << CAP_SYS_ADMIN), perm) != 0)
        {
          int errsv = errno;
          (void) setresuid ((uid_t) -1, 0, (uid_t) -1);
          (void) gl_capset (perm, perm);
          errno = errsv;
          die_with_error ("cannot switch to your user id for creating the namespaces");
        }
      /* PID 1 starts with our dumpable flag, which that change of ids set
       * to fs.suid_dumpable, in a user namespace you own: not dumpable,
       * and with your filesystem group already, so that becoming you
       * there (child_main) changes nothing that makes it dumpable again. */
      (void) setfsgid (L.gid);
      if (prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
        die_with_error ("cannot make the launcher not dumpable");
    }
  memset (&ca, 0, sizeof ca);
  ca.flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC;
  ca.exit_signal = SIGCHLD;
  pid = (pid_t) syscall (SYS_clone3, &ca, sizeof ca);
  if (pid < 0)
    {
      int errsv = errno;
      if (L.privileged)
        {
          (void) setresuid ((uid_t) -1, 0, (uid_t) -1);
          (void) gl_capset (perm, perm);
        }
      errno = errsv;
      if (errno == EPERM || errno == ENOSPC || errno == EINVAL)
        die_with_error ("cannot create the sandbox's namespaces (user namespaces "
                        "disabled, or your limit /proc/sys/user/max_*_namespaces reached? "
                        "glimpse-launch must be setuid root where unprivileged user "
                        "namespaces are not allowed)");
      die_with_error ("cannot create the sandbox's namespaces");
    }
  if (pid == 0)
    {
      close (sync_p[1]);
      close (err_p[0]);
      close (maps_p[0]);
      /* (the launcher's hold, kept until its last word; PID 1 then
       * takes the lock with its own open file) */
      child_main (sync_p[0], err_p[1], maps_p[1], view_lock);
    }
  if (L.privileged && (setresuid ((uid_t) -1, 0, (uid_t) -1) != 0 || gl_capset (perm, perm) != 0))
    die_with_error ("cannot switch back to root");
  if (L.privileged)
    (void) setfsgid (0);
  close (L.pid1_lock);

  close (sync_p[0]);
  close (maps_p[1]);
  write_id_maps (pid);
  if (L.privileged)
    {
      /* (PID 1 waits for the word below: still in the namespace we made) */
      char path[64];
      snprintf (path, sizeof path, "/proc/%d/ns/user", (int) pid);
      outer = open (path, O_RDONLY | O_CLOEXEC);
      if (outer < 0)
        die_with_error ("cannot open the sandbox's user namespace");
      maps_missing = true;
      view_note_building (pid);
    }
  if (gl_write_all (sync_p[1], "x", 1) != 0)
    die_with_error ("cannot start the sandbox");
  /* Setuid, the maps pipe stays watched until PID 1 asks for its nested
   * id maps (write_nested_maps, which writes its errors on our end of
   * the error pipe: that end stays open until then). */
  if (outer < 0)
    {
      close (err_p[1]);
      close (maps_p[0]);
    }
  /* (meanwhile: what starting the app needs that the view is not) */
  prepare_app (args.command);

  /* Wait until the view is built (the error pipe closes) or has failed. */
  sigfd = signalfd (-1, &set, SFD_CLOEXEC);
  if (sigfd < 0)
    die_with_error ("cannot watch signals");
  for (bool err_open = true; err_open;)
    {
      struct pollfd pfd[3] = { { sigfd, POLLIN, 0 }, { err_p[0], POLLIN, 0 },
                               { outer >= 0 ? maps_p[0] : -1, POLLIN, 0 } };
      if (poll (pfd, 3, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          die_with_error ("cannot wait for the sandbox");
        }
      if (pfd[2].revents)
        {
          /* PID 1 has moved ("u"; it goes on meanwhile), or is gone (the
           * pipe's end: its error follows).  The error pipe stays open
           * until the maps are written, so the view is not taken as
           * ready before. */
          char b = 0;
          maps_missing = !(read (maps_p[0], &b, 1) == 1 && b == 'u'
                           && write_nested_maps (pid, outer, err_p[1]));
          close (outer);
          outer = -1;
          close (err_p[1]);
          close (maps_p[0]);
        }
      if (pfd[1].revents)
        {
          err_open = read_errors (err_p[0], errbuf, sizeof errbuf, &errlen);
        }
      if (pfd[0].revents)
        {
          struct signalfd_siginfo si;
          if (read (sigfd, &si, sizeof si) == (ssize_t) sizeof si && si.ssi_signo != SIGCHLD
              && si.ssi_code != SI_KERNEL)
            {
              /* Interrupted while building: nothing half-way stays. */
              kill (pid, SIGKILL);
              waitpid (pid, NULL, 0);
              return 128 + (int) si.ssi_signo;
            }
        }
    }
  close (sigfd);
  if (maps_missing && errlen == 0)
    errlen = (size_t) snprintf (errbuf, sizeof errbuf, "glimpse-launch: cannot lock the view's "
                                "mounts: the id maps of its user namespace were not written\n");
  if (errlen > 0 || waitpid (pid, &child_status, WNOHANG) == pid)
    {
      kill (pid, SIGKILL);
      if (waitpid (pid, &child_status, 0) != pid)
        child_status = GL_EXIT_LAUNCHER << 8;
      drop_privs_for_good ();
      /* (your layer still in use: one line, naming what keeps it when a
       * process of yours is seen to) */
      if (WIFEXITED (child_status) && WEXITSTATUS (child_status) == GL_EXIT_VIEW_HELD)
        {
          size_t len = view_held_message (errbuf, sizeof errbuf);
          if (len > 0)
            errlen = len;
        }
      if (errlen > 0)
        {
          show_errors (errbuf, errlen);
        }
      if (WIFEXITED (child_status) && WEXITSTATUS (child_status) == GL_EXIT_VIEW_HELD)
        return GL_EXIT_LAUNCHER;
      if (WIFEXITED (child_status) && WEXITSTATUS (child_status) != 0)
        return WEXITSTATUS (child_status);
      return GL_EXIT_LAUNCHER;
    }

  /* Built: record it (as root, in users/<uid>/) for the launches to come,
   * and run the app in it like any of them. */
  {
    unsigned long long id[8];
    if (!open_proc_ns (pid, &ns, id))
      {
        kill (pid, SIGKILL);
        die_with_error ("cannot open the namespaces of the sandbox");
      }
    if (L.privileged)
      view_record (pid, id, ns.mnt);
  }
  close (L.sb.lock_fd);
  close (L.sb.user_lock_fd);
  close (L.sb.gen_lock_fd);
  end_launch (run_in_view (&ns, view_lock, args.command, sync_p[1]));
}
