/* glimpse-pkgns: runs one package-manager command for `glimpse` as root of
 * a user namespace, never as the host's root.
 *
 * Plain C, libc + libmount: nothing of GLib between clone and exec.  Run by
 * root (glimpse spawns it); it is NOT setuid and refuses to run as one.
 *
 *   glimpse-pkgns --ids UID:GID --base DIR [--host] --op DIR
 *                 [--net | --fetch-stage | --net-until-cut] [--proxy-fd FD]
 *                 [--lower DIR]… [--hide PATH]… [--input DIR] [--cache DIR]
 *                 [--walk-cache FILE] [LIMITS] -- COMMAND [ARG…]
 *   glimpse-pkgns --ids UID:GID --tree DIR --op DIR [--input DIR] [LIMITS] -- COMMAND [ARG…]
 *   LIMITS: [--cgroup DIR]… [--max-tasks N] [--max-seconds N] [--min-free-mib N]
 *
 * --ids    the first uid/gid of the reserved range (65536 ids): uid 0 inside
 * --base   the base tree: "/" (with --host) or the sandbox's rootfs/
 * --op     the operation's scratch directory; glimpse made upper/ and work/
 *          in it (owned by the range); this program adds stage/ (and mask/
 *          where the mask cannot be kept in memory: mask_memory)
 * --lower  system-generation trees above the base, top first
 * --hide   a host path the command must not see (the sandbox store)
 * --input  a directory shown read-only at /run/glimpse-input inside
 * --cache  a directory of the operation's (owned by the range) shown
 *          writable at /run/glimpse-cache inside (nosuid, nodev, noexec):
 *          the package manager's caches, which glimpse keeps with the
 *          generation the operation makes (gl-pkg.c, "apt's binary caches")
 * --walk-cache  where the walk of the base (THE RULE, below) keeps what it
 *          found for the next operation: a file only the host's root
 *          writes, in no tree the command sees (see "The walk's cache")
 * --walk-refresh  no command: the walk of the base for --walk-cache, and
 *          nothing else, at SCHED_IDLE, for glimpse after an operation
 *          that ended before its walk beside the command began (see
 *          WALK_BESIDE_DELAY_MS); --walk-lock-fd FD is FILE.lock, held
 *          (flock) by glimpse for it, so that one such walk runs at a time
 * --tree   instead of --base: a tree being built (a new sandbox's, a
 *          rebase's new base), which nobody else uses yet and which is not
 *          in any view; it is itself the command's writable / (idmapped: its
 *          root's files are the namespace root's, and what the command writes
 *          lands owned by the tree's own ids), without overlay, mask or
 *          network (a profile's post-create hooks).  Whatever it leaves there
 *          is defanged by glimpse before the tree is reachable.
 * --net    the command downloads (`apt-get update` of add-repo; no package
 *          is unpacked): through the relay to --proxy-fd
 * --fetch-stage  the command runs twice: first with GLIMPSE_STAGE=fetch and
 *          the relay (it downloads, e.g. `apt-get --download-only`), then,
 *          after every process of the first run (and the relay) is killed,
 *          with GLIMPSE_STAGE=apply and no way out at all (dnf, pacman,
 *          apk; apt's rebase)
 * --net-until-cut  the command runs once, with the relay, until it asks
 *          for the cut (a byte to /run/glimpse-net/request, then a line
 *          from /run/glimpse-net/answer: see run_until_cut); from then on it
 *          has no way out at all (apt: glimpse's DPkg::Pre-Invoke hook
 *          asks, before dpkg first runs)
 * --proxy-fd  with --net, --fetch-stage or --net-until-cut: a
 *          SOCK_SEQPACKET socket of glimpse's download proxy
 *          (gl-pkg-proxy.h), the relay's only peer
 * Every stage runs in a network namespace of its own: only a loopback
 * interface of its own, nothing of the host's.
 *
 * The limits (gl-pkg-limits.h), set by the host's root before anything of
 * the sandbox runs, none of which the namespace can lift:
 * --cgroup DIR   a cgroup glimpse made for the operation, with its pids and
 *          memory limits (up to 3: a v2 one, or v1 pids and memory ones):
 *          this program moves itself into it (and the walk of the base,
 *          started just before: join_cgroups) before it forks anything
 *          else, so everything of the operation is counted; it stops the operation when the cgroup
 *          reports its task limit reached (pids.events) or a process killed
 *          for memory (memory.events, memory.oom_control)
 * --max-tasks N  RLIMIT_NPROC of the command (per uid of the range; the one
 *          limit on tasks where no pids cgroup is available); default 4096,
 *          0: none
 * --max-seconds N  the operation (both stages) is stopped after N seconds
 * --min-free-mib N  it is stopped when the file system of --op has less
 *          than N MiB free for users
 * Stopping an operation kills its PID namespace (every process of it) and
 * exits with status 124 after writing the limit's name ("tasks", "memory",
 * "time", "disk") to <op>/stopped-by, where only the host's root writes.
 * With --cgroup, this program ends as soon as the operation's PID 1 is
 * reaped (every process of the namespace has ended), before the teardown
 * of the view's mount namespace has (see supervise): the process doing
 * it ends in the cgroups, which glimpse removes only once they are empty.
 *
 * What the command sees: an overlay of upper : lowers : mask : base, the
 * base an idmapped clone (open_tree + MOUNT_ATTR_IDMAP) so the host root's
 * files appear owned by root inside; a fresh /proc of a new PID namespace,
 * a minimal /dev, /sys read-only, tmpfs on /tmp, /var/tmp, /run, /home,
 * /root, /mnt, /media; policy-rc.d exiting 101; a seccomp filter; no new
 * privileges.  When the command exits, the PID namespace ends and every
 * process left in it dies.
 *
 * THE RULE for what of the base the command may read (root of the user
 * namespace may read every file whose owner is mapped, i.e. every file of
 * the base owned by ids < 65536, whatever its mode):
 *   Only what every user of the host may read is shown.  The base is walked
 *   (its own file system only: a clone of its mount without submounts, which
 *   is exactly what the view shows) before anything of the sandbox runs --
 *   or, when the last operation's walk is kept (the walk's cache), its
 *   result is checked again entry by entry before, and the base is walked
 *   beside the command for the next operation (build_mask) -- and in the
 *   mask, the layer between the system generations and the base (a tmpfs
 *   of its own: mask_memory):
 *   - a directory that is not world-readable and world-searchable (o+rx) is
 *     an empty directory of the same owner and mode (opaque): packages can
 *     still add files to it, nothing of the host's shows;
 *   - a regular file that is not world-readable (o+r), and every socket
 *     and FIFO, is whited out: it is absent inside (a key a postinst finds
 *     missing is generated anew, in the sandbox; a FIFO would block a
 *     trigger that reads a directory's files, update-desktop-database in
 *     /usr/share/applications, for good: see install_seccomp);
 *   - the only exceptions are the files a package manager must read and
 *     rewrite: /etc/shadow, /etc/gshadow and their "-" backups are shown as
 *     copies with every password field "*" (adduser, useradd,
 *     systemd-sysusers work on the copy; no host hash is ever readable);
 *   - on a host base, some world-readable places that hold private data by
 *     convention are whited out too (mail, cron tables, journals, container
 *     and VM stores, sudo's state), and homes, /root, /mnt, /media, /srv are
 *     empty.
 *   The rule is by construction: a file no list names is covered.  The
 *   walk is what the command sees of names; what it may open is checked
 *   again at every open, because the base stays live under the view (on a
 *   host base, the host's root keeps creating files and changing modes
 *   while the command runs):
 *   - the base is the lower layer of an overlay of its own (the "base
 *     overlay", below the mask), mounted by a user of the namespace that
 *     owns no file of the base and has no capability over files (see "the
 *     check at open"): overlayfs does every access to a layer -- lookup,
 *     open, listing, permission check, reading a user.* attribute -- with
 *     its mounter's credentials as well as the caller's.  So the kernel
 *     itself allows the command's opens of the base (its own, exec's, and
 *     the view's overlay's for a copy-up or a listing) only when the file
 *     is world-readable (a directory world-readable, and every directory
 *     above it world-searchable) at that moment, and refuses the rest
 *     (EACCES).  The mask and the system generations are other layers and
 *     are not checked (the shadow copies are the mask's).
 *     (The host's root used to check every open of the base overlay
 *     through a fanotify permission mark: the same rule, a round trip to
 *     this program's parent per open -- some 2000 of them, 0.3 s and more
 *     on a loaded machine, for installing one small package on a host
 *     base, whose dpkg reads every package's file list.  The mounter's
 *     credentials are checked by the kernel at every access, with nothing
 *     to wait for, nothing open between the check and the open, and no
 *     "parent died, waiting opens allowed" case.)
 *   - the masking is all in layers: whiteouts and opaque directories of
 *     the mask, and tmpfs mounts on the view's own (overlay) directories.  No
 *     mount sits on a dentry of the host's file system, so the host renaming
 *     over or removing a path (passwd rewriting /etc/shadow) detaches none.
 *   What stays open: the walk's names are as of the walk (the last
 *   operation's, when it is kept: build_mask), so a file created, or made
 *   private, on a host base since shows its name (and its attributes) in
 *   listings, though it cannot be opened -- names any user of the host may
 *   list too; a file
 *   opened before its mode changed stays readable through that descriptor
 *   (as for any user of the host); so does a world-readable file the
 *   command reached before its directory was made private: through an
 *   O_PATH descriptor reopened at /proc/self/fd (as for any user of the
 *   host), and by its path while the name stays in the view's dentry cache
 *   under a directory the operation wrote into (the view searches its own
 *   copy of such a directory; the base overlay checks only the file's mode
 *   at open) -- which reaches nothing the descriptor would not;
 *   symbolic links are read without a check.
 *   The system generations above the mask are the sandbox's own (written
 *   inside this namespace before) and are not walked.  The walk costs one
 *   stat per file of the base (per directory, for a base that did not
 *   change since the last operation: see "The walk's cache" for what that
 *   gives up), off the command's way when the last walk is kept (one check
 *   per entry it masked before the command, the walk beside it: see
 *   build_mask); the check at open costs one more permission check of the
 *   layer, which overlayfs makes anyway.
 * THE RULE for the network: nothing of the sandbox ever runs in the host's
 *   network namespace -- not the maintainer scripts, and not the package
 *   manager that downloads either: its configuration, hooks
 *   (APT::Update::Pre-Invoke, DPkg::Pre-Invoke…), methods and libraries are
 *   the sandbox's, which an earlier, hostile package may have replaced.
 *   Every stage runs in a network namespace of its own (loopback only).  A
 *   stage that downloads gets a relay: a process of this program (trusted,
 *   not dumpable, holding nothing but its listener and --proxy-fd),
 *   listening on 127.0.0.1:PROXY_PORT inside, which hands every connection
 *   as a descriptor (SCM_RIGHTS) to glimpse's proxy outside; the command
 *   gets http_proxy/https_proxy (apt: Acquire::http(s)::Proxy through
 *   glimpse's apt.conf) pointing there.  The proxy (gl-pkg-proxy.c) serves
 *   GET/HEAD of http:// URLs and CONNECT, to the sandbox's repositories as
 *   glimpse recorded them only, resolving names itself and never connecting
 *   a name to a loopback, link-local or local address; it refuses anything
 *   else and says so in the operation's output.  So whatever the sandbox's
 *   apt runs reaches those repositories and nothing else: no loopback
 *   service, no metadata service, no LAN host of the host's.  Signatures
 *   are still apt's to check, inside.
 *   What has no way out at all is every new package's own code: its
 *   maintainer scripts, triggers and (debconf) config scripts.  Two ways:
 *   - --fetch-stage (dnf, pacman, apk; apt's rebase): the apply stage (the package
 *     manager from its cache, maintainer scripts, triggers) starts only
 *     after every process of the fetch stage, the relay included, is
 *     killed;
 *   - --net-until-cut (apt): one run, and the network is cut by trusted
 *     code just before apt first runs dpkg.  glimpse's apt configuration,
 *     given with -c on apt's command line (read after every configuration
 *     file of the sandbox's, none of which can keep it from being read:
 *     gl_pkg_apt_command), appends a DPkg::Pre-Invoke entry that
 *     asks this program's PID 1 for the cut and waits for its answer; apt
 *     runs DPkg::Pre-Invoke first in pkgDPkgPM::Go, before
 *     DPkg::Pre-Install-Pkgs (debconf's dpkg-preconfigure, which runs the
 *     new packages' config scripts) and before dpkg, and stops without
 *     running dpkg when an entry fails.  Nothing of a downloaded package
 *     runs before that point: apt only downloads and checks them.  PID 1
 *     (run_until_cut, cut_network) then kills and reaps the relay (its
 *     listener goes with it), tells glimpse's proxy "offline" over its own
 *     copy of --proxy-fd (which the command never has), and waits until
 *     the proxy has closed every connection it was handed -- queued or
 *     being served, its socket in this namespace and the one upstream --
 *     and refuses any later one: apt's http method lives on during dpkg
 *     with its connection kept alive, and root of this namespace could
 *     ptrace the method or take its socket (pidfd_getfd).  Only then does
 *     it answer the hook.  If any of it fails, PID 1 kills the operation
 *     (the hook is never answered, dpkg never runs); a request after the
 *     cut is answered at once.
 *     Why this keeps the guarantee: the fetch stage too runs the sandbox's
 *     own apt, configuration, hooks and methods (possibly replaced by an
 *     earlier, hostile package) with the relay and a writable view; what
 *     two stages protect is that the NEW packages' code never runs with a
 *     way out, and the cut before dpkg keeps that as long as the apt that
 *     runs is the one that was there before.  An earlier hostile apt (or
 *     hook, or configuration that drops glimpse's hook) could run dpkg
 *     with the network itself -- as it could during a fetch stage.  The
 *     sandbox's own DPkg::Pre-Invoke entries run before glimpse's, with
 *     the network: they are code that was there before, too.  The cut is
 *     made by trusted code only; the sandbox can only ask for it.
 *   What remains: the repositories' servers themselves are reachable with
 *   any GET (or, through CONNECT, any bytes) the sandbox likes, so a hostile
 *   package can talk to the servers of the sandbox's own repositories; and a
 *   repository's name may resolve to a private (LAN) address, which is let
 *   through, at that repository's port only (a LAN mirror is legitimate).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <glob.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <libmount.h>

#define RANGE 65536u
#define MAX_LOWERS 16
#define MAX_HIDE 16
#define EXIT_SETUP 125
#define EXIT_LIMIT 124
#define MAX_CGROUPS 3
/* Where the relay listens inside (GL_PKG_PROXY_PORT of gl-pkg-proxy.h) */
#define PROXY_PORT 3128
#define PROXY_URL "http://127.0.0.1:3128"

static const char *prog = "glimpse-pkgns";

static void __attribute__((noreturn, format (printf, 1, 2)))
die (const char *fmt, ...)
{
  va_list ap;
  fprintf (stderr, "%s: ", prog);
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fputc ('\n', stderr);
  _exit (EXIT_SETUP);
}

static void __attribute__((noreturn, format (printf, 1, 2)))
die_errno (const char *fmt, ...)
{
  int errsv = errno;
  va_list ap;
  fprintf (stderr, "%s: ", prog);
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fprintf (stderr, ": %s\n", strerror (errsv));
  _exit (EXIT_SETUP);
}

static char *xasprintf (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

static char *
xasprintf (const char *fmt, ...)
{
  va_list ap;
  char *s = NULL;
  va_start (ap, fmt);
  if (vasprintf (&s, fmt, ap) < 0)
    die ("out of memory");
  va_end (ap);
  return s;
}

typedef struct {
  uid_t uid;
  gid_t gid;
  const char *base;
  bool host;
  bool net, fetch_stage, net_until_cut;
  int proxy_fd;
  const char *op;
  const char *lowers[MAX_LOWERS];
  int n_lowers;
  const char *hide[MAX_HIDE];
  int n_hide;
  const char *input;
  const char *cache;
  const char *tree;
  const char *walk_cache;
  bool walk_refresh;
  int walk_lock_fd;
  const char *cgroups[MAX_CGROUPS];
  int n_cgroups;
  unsigned long max_tasks, max_seconds, min_free_mib;
  char **command;
} Args;

static Args A = { .proxy_fd = -1, .walk_lock_fd = -1, .max_tasks = 4096 };

#define USAGE \
  "Usage: glimpse-pkgns --ids UID:GID --base DIR [--host] --op DIR\n" \
  "                     [--net | --fetch-stage | --net-until-cut] [--proxy-fd FD]\n" \
  "                     [--lower DIR]... [--hide PATH]... [--input DIR] [--cache DIR]\n" \
  "                     [--walk-cache FILE] [LIMITS] -- COMMAND [ARG...]\n" \
  "       glimpse-pkgns --ids UID:GID --tree DIR --op DIR [--input DIR] [LIMITS] -- COMMAND [ARG...]\n" \
  "       glimpse-pkgns --walk-refresh --base DIR [--host] [--hide PATH]... --walk-cache FILE\n" \
  "                     --walk-lock-fd FD\n" \
  "LIMITS: [--cgroup DIR]... [--max-tasks N] [--max-seconds N] [--min-free-mib N]\n" \
  "Run by glimpse, as root, for one package-manager command.\n"

static void
usage (void)
{
  fputs (USAGE, stderr);
  _exit (EXIT_SETUP);
}

static bool
abs_clean (const char *p)
{
  return p[0] == '/' && strstr (p, "/../") == NULL && strstr (p, "/./") == NULL
         && strstr (p, "//") == NULL && strchr (p, ':') == NULL && strchr (p, ',') == NULL
         && strchr (p, '\n') == NULL;
}

/* An inherited descriptor given as V: one above 2 (0-2 are the
 * standard ones) and at most 1024, open, of file type TYPE (S_IFREG,
 * S_IFSOCK); -1 if not */
static int
parse_fd (const char *v, mode_t type)
{
  char *end;
  long fd = strtol (v, &end, 10);
  struct stat st;

  if (end == v || *end != '\0' || fd < 3 || fd > 1024 || fstat ((int) fd, &st) != 0
      || (st.st_mode & S_IFMT) != type)
    return -1;
  return (int) fd;
}

static void
parse_args (int argc, char **argv)
{
  int i;
  for (i = 1; i < argc; i++)
    {
      const char *a = argv[i];
      const char *v = i + 1 < argc ? argv[i + 1] : NULL;
      if (strcmp (a, "--") == 0)
        {
          i++;
          break;
        }
      if (strcmp (a, "--host") == 0)
        {
          A.host = true;
          continue;
        }
      if (strcmp (a, "--net") == 0)
        {
          A.net = true;
          continue;
        }
      if (strcmp (a, "--fetch-stage") == 0)
        {
          A.fetch_stage = true;
          continue;
        }
      if (strcmp (a, "--net-until-cut") == 0)
        {
          A.net_until_cut = true;
          continue;
        }
      if (strcmp (a, "--walk-refresh") == 0)
        {
          A.walk_refresh = true;
          continue;
        }
      if (v == NULL)
        usage ();
      if (strcmp (a, "--ids") == 0)
        {
          unsigned long u, g;
          char end;
          if (sscanf (v, "%lu:%lu%c", &u, &g, &end) != 2 || u == 0 || g == 0
              || u > 0xffffffffUL - RANGE || g > 0xffffffffUL - RANGE)
            die ("--ids: expected UID:GID of the reserved range, got \"%s\"", v);
          A.uid = (uid_t) u;
          A.gid = (gid_t) g;
        }
      else if (strcmp (a, "--base") == 0)
        A.base = v;
      else if (strcmp (a, "--tree") == 0)
        A.tree = v;
      else if (strcmp (a, "--op") == 0)
        A.op = v;
      else if (strcmp (a, "--input") == 0)
        A.input = v;
      else if (strcmp (a, "--cache") == 0)
        A.cache = v;
      else if (strcmp (a, "--walk-cache") == 0)
        A.walk_cache = v;
      else if (strcmp (a, "--walk-lock-fd") == 0)
        {
          if ((A.walk_lock_fd = parse_fd (v, S_IFREG)) < 0)
            die ("--walk-lock-fd: expected the descriptor of the walk cache's lock, got \"%s\"", v);
        }
      else if (strcmp (a, "--proxy-fd") == 0)
        {
          if ((A.proxy_fd = parse_fd (v, S_IFSOCK)) < 0)
            die ("--proxy-fd: expected the descriptor of glimpse's download channel, got \"%s\"", v);
        }
      else if (strcmp (a, "--lower") == 0)
        {
          if (A.n_lowers == MAX_LOWERS)
            die ("too many --lower");
          A.lowers[A.n_lowers++] = v;
        }
      else if (strcmp (a, "--hide") == 0)
        {
          if (A.n_hide == MAX_HIDE)
            die ("too many --hide");
          A.hide[A.n_hide++] = v;
        }
      else if (strcmp (a, "--cgroup") == 0)
        {
          if (A.n_cgroups == MAX_CGROUPS)
            die ("too many --cgroup");
          if (strncmp (v, "/sys/fs/cgroup/", 15) != 0 || !abs_clean (v))
            die ("--cgroup %s: not a cgroup under /sys/fs/cgroup", v);
          A.cgroups[A.n_cgroups++] = v;
        }
      else if (strcmp (a, "--max-tasks") == 0 || strcmp (a, "--max-seconds") == 0
               || strcmp (a, "--min-free-mib") == 0)
        {
          char *end;
          unsigned long n;
          errno = 0;
          n = strtoul (v, &end, 10);
          if (*end != '\0' || *v < '0' || *v > '9' || errno != 0 || n > 0xffffffffUL)
            die ("%s: expected a number, got \"%s\"", a, v);
          if (strcmp (a, "--max-tasks") == 0)
            A.max_tasks = n;
          else if (strcmp (a, "--max-seconds") == 0)
            A.max_seconds = n;
          else
            A.min_free_mib = n;
        }
      else
        usage ();
      i++;
    }
  if (A.tree != NULL && (A.base != NULL || A.host || A.n_lowers > 0 || A.n_hide > 0
                         || A.net || A.fetch_stage || A.net_until_cut || A.walk_cache || A.cache))
    die ("--tree takes none of --base, --host, --lower, --hide, --net, --fetch-stage, --net-until-cut, "
         "--walk-cache, --cache");
  if (A.tree != NULL)
    A.base = A.tree;
  if (A.walk_refresh || A.walk_lock_fd >= 0)
    {
      if (!A.walk_refresh || i < argc || A.base == NULL || A.walk_cache == NULL || A.walk_lock_fd < 0
          || A.tree != NULL || A.op != NULL || A.n_lowers > 0 || A.input || A.cache || A.n_cgroups > 0
          || A.net || A.fetch_stage || A.net_until_cut || A.proxy_fd >= 0)
        die ("--walk-refresh takes --base, --walk-cache, --walk-lock-fd, and --host and --hide only");
      if (!abs_clean (A.base) || !abs_clean (A.walk_cache))
        die ("paths must be absolute, without \"..\", \":\" or \",\"");
      for (int k = 0; k < A.n_hide; k++)
        if (!abs_clean (A.hide[k]))
          die ("--hide %s: not an absolute path", A.hide[k]);
      return;
    }
  if (i >= argc || A.uid == 0 || A.base == NULL || A.op == NULL)
    usage ();
  A.command = argv + i;
  if ((int) A.net + (int) A.fetch_stage + (int) A.net_until_cut > 1)
    die ("--net, --fetch-stage and --net-until-cut exclude each other");
  if ((A.net || A.fetch_stage || A.net_until_cut) != (A.proxy_fd >= 0))
    die ("--net, --fetch-stage and --net-until-cut need --proxy-fd, and --proxy-fd needs one of them");
  if (!abs_clean (A.base) || !abs_clean (A.op) || (A.input && !abs_clean (A.input))
      || (A.cache && !abs_clean (A.cache))
      || (A.walk_cache && !abs_clean (A.walk_cache)))
    die ("paths must be absolute, without \"..\", \":\" or \",\"");
  for (int k = 0; k < A.n_lowers; k++)
    if (!abs_clean (A.lowers[k]))
      die ("--lower %s: paths must be absolute, without \"..\", \":\" or \",\"", A.lowers[k]);
  for (int k = 0; k < A.n_hide; k++)
    if (!abs_clean (A.hide[k]))
      die ("--hide %s: not an absolute path", A.hide[k]);
}

/* ---------------------------------------------------------------- files */

static void
write_file (const char *path, const char *text)
{
  int fd = open (path, O_WRONLY | O_CLOEXEC);
  size_t len = strlen (text);
  if (fd < 0)
    die_errno ("cannot open %s", path);
  if (write (fd, text, len) != (ssize_t) len)
    die_errno ("cannot write %s", path);
  close (fd);
}

/* The base as the walk sees it: a clone of its mount without submounts
 * (what the view shows), not idmapped; ids as on disk. */
static int base_fd = -1;

/* An id of the base as the package namespace's layers store it: the
 * host's 0…65535 shifted into the range; a tree already owned by the range
 * as it is; anything else the range's "nobody". */
static uid_t
shift_uid (uid_t u)
{
  if (u < RANGE)
    return A.uid + u;
  if (u >= A.uid && u - A.uid < RANGE)
    return u;
  return A.uid + 65534;
}

static gid_t
shift_gid (gid_t g)
{
  if (g < RANGE)
    return A.gid + g;
  if (g >= A.gid && g - A.gid < RANGE)
    return g;
  return A.gid + 65534;
}

/* REL under DFD, opened (O_PATH, and FLAGS) without following any link
 * on the way or at the end, without leaving DFD's tree or mount; -1 and
 * errno.  beneath_gone (errno) says whether the entry is simply not
 * there as such (gone, not a directory on the way, a link in the way,
 * another mount, or a rename racing the look-up): what callers take as
 * "not the entry they knew", and not as a failure. */
static int
open_beneath (int dfd, const char *rel, int flags)
{
  struct open_how how = { .flags = (uint64_t) (O_PATH | O_NOFOLLOW | O_CLOEXEC | flags),
                          .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS
                                     | RESOLVE_BENEATH | RESOLVE_NO_XDEV };
  return (int) syscall (SYS_openat2, dfd, rel, &how, sizeof how);
}

static bool
beneath_gone (int errsv)
{
  return errsv == ENOENT || errsv == ENOTDIR || errsv == ELOOP || errsv == EXDEV || errsv == EAGAIN;
}

/* mask/REL as a directory with the attributes of the base's REL (so the
 * merged directory looks the same inside), parents first.  Each directory
 * not in the mask yet is reached from the base's root without following
 * any link (a user may swap a directory of theirs for a link at any time:
 * the host's root never looks at what it points to); false when one is no
 * longer a directory reached so -- what the view shows there is not the
 * base's REL, and the caller masks nothing (as mask_replay) -- and the
 * next walk looks at it again. */
static bool
mask_mirror_dirs (int mask, const char *rel)
{
  char buf[PATH_MAX];
  char *slash;
  if (snprintf (buf, sizeof buf, "%s", rel) >= (int) sizeof buf)
    die ("/%s: path too long", rel);
  for (slash = strchr (buf, '/'); ; slash = strchr (slash + 1, '/'))
    {
      struct stat st;
      int fd;
      if (slash)
        *slash = '\0';
      /* (mirrored already: the mask holds nothing but directories,
       * whiteouts and files) */
      if (fstatat (mask, buf, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR (st.st_mode))
        {
          fd = open_beneath (base_fd, buf, O_DIRECTORY);
          if (fd < 0)
            {
              if (beneath_gone (errno))
                return false;
              die_errno ("cannot mirror /%s of the base", buf);
            }
          if (fstat (fd, &st) != 0)
            die_errno ("cannot mirror /%s of the base", buf);
          close (fd);
          if (mkdirat (mask, buf, 0700) == 0)
            {
              struct timespec ts[2] = { st.st_atim, st.st_mtim };
              if (fchownat (mask, buf, shift_uid (st.st_uid), shift_gid (st.st_gid),
                            AT_SYMLINK_NOFOLLOW) != 0
                  || fchmodat (mask, buf, st.st_mode & 07777, 0) != 0
                  || utimensat (mask, buf, ts, AT_SYMLINK_NOFOLLOW) != 0)
                die_errno ("cannot prepare the mask for /%s", buf);
            }
          else if (errno != EEXIST)
            die_errno ("cannot prepare the mask for /%s", buf);
        }
      if (!slash)
        break;
      *slash = '/';
    }
  return true;
}

static void
parent_of (const char *rel, char *out, size_t size)
{
  const char *slash = strrchr (rel, '/');
  snprintf (out, size, "%.*s", slash ? (int) (slash - rel) : 0, rel);
}

/* A whiteout over the base's REL: reads as absent inside.  False when a
 * directory above it is no longer one (mask_mirror_dirs): none made. */
static bool
mask_whiteout (int mask, const char *rel)
{
  char dir[PATH_MAX];
  if (mask < 0)
    return true;   /* (the walk beside the command: build_mask) */
  parent_of (rel, dir, sizeof dir);
  if (dir[0] && !mask_mirror_dirs (mask, dir))
    return false;
  if (mknodat (mask, rel, S_IFCHR | 0000, makedev (0, 0)) != 0 && errno != EEXIST)
    die_errno ("cannot mask /%s", rel);
  return true;
}

static int
fsetxattr_at (int dfd, const char *name, const char *key, const char *value)
{
  int fd = openat (dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  int r;
  if (fd < 0)
    return -1;
  r = fsetxattr (fd, key, value, strlen (value), 0);
  close (fd);
  return r;
}

/* The base's directory REL as an empty directory of the same owner and
 * mode: nothing of the base's shows under it. */
static void
mask_empty_dir (int mask, const char *rel)
{
  if (mask < 0)
    return;   /* (the walk beside the command: build_mask) */
  if (!mask_mirror_dirs (mask, rel))
    return;
  if (fsetxattr_at (mask, rel, "user.overlay.opaque", "y") != 0)
    die_errno ("cannot mask /%s", rel);
}

static const char *shadows[] = { "etc/shadow", "etc/shadow-", "etc/gshadow", "etc/gshadow-" };

/* mask/REL: the base's REL (shadow format) with every password field "*". */
static void
mask_shadow (int mask, const char *rel)
{
  char dir[PATH_MAX];
  struct stat st;
  FILE *in, *out;
  char *line = NULL;
  size_t cap = 0;
  int fd, infd;

  infd = openat (base_fd, rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (infd < 0 && (errno == ENOENT || errno == ENOTDIR))
    return;
  if (infd < 0 || fstat (infd, &st) != 0)
    die_errno ("cannot read /%s of the base", rel);
  if (!S_ISREG (st.st_mode))
    {
      /* not a file: hidden instead */
      close (infd);
      mask_whiteout (mask, rel);
      return;
    }
  if ((in = fdopen (infd, "r")) == NULL)
    die_errno ("cannot read /%s of the base", rel);
  parent_of (rel, dir, sizeof dir);
  if (!mask_mirror_dirs (mask, dir))
    {
      fclose (in);
      return;
    }
  fd = openat (mask, rel, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0 || (out = fdopen (fd, "w")) == NULL)
    die_errno ("cannot mask /%s", rel);
  while (getline (&line, &cap, in) > 0)
    {
      char *colon = strchr (line, ':');
      char *rest = colon ? strchr (colon + 1, ':') : NULL;
      if (rest == NULL)
        continue;
      fprintf (out, "%.*s:*%s", (int) (colon - line), line, rest);
    }
  free (line);
  fclose (in);
  if (fchown (fd, shift_uid (st.st_uid), shift_gid (st.st_gid)) != 0
      || fchmod (fd, st.st_mode & 0777) != 0 || fflush (out) != 0)
    die_errno ("cannot mask /%s", rel);
  fclose (out);
}

/* Paths (relative to the base) the walk does not enter: masked already,
 * or replaced by a mount of the view. */
static char **skip;
static size_t *skip_len;
static size_t n_skip;

static void
skip_add (const char *rel)
{
  skip = realloc (skip, (n_skip + 1) * sizeof *skip);
  skip_len = realloc (skip_len, (n_skip + 1) * sizeof *skip_len);
  if (skip == NULL || skip_len == NULL || (skip[n_skip] = strdup (rel)) == NULL)
    die ("out of memory");
  skip_len[n_skip] = strlen (rel);
  n_skip++;
}

/* (LEN: the length of REL; the walk asks for every directory of the base) */
static bool
is_skipped (const char *rel, size_t len)
{
  for (size_t i = 0; i < n_skip; i++)
    if (skip_len[i] == len && memcmp (skip[i], rel, len) == 0)
      return true;
  return false;
}

static bool
is_shadow (const char *rel)
{
  for (size_t i = 0; i < sizeof shadows / sizeof *shadows; i++)
    if (strcmp (shadows[i], rel) == 0)
      return true;
  return false;
}

static void
mask_whiteout_glob (int mask, const char *pattern)
{
  glob_t g;
  if (glob (pattern, GLOB_NOSORT, NULL, &g) != 0)
    return;
  for (size_t i = 0; i < g.gl_pathc; i++)
    {
      if (mask >= 0)
        mask_whiteout (mask, g.gl_pathv[i] + 1);
      skip_add (g.gl_pathv[i] + 1);
    }
  globfree (&g);
}

/* THE RULE for one entry NAME of the base's directory DFD (REL its path,
 * LEN characters of a PATH_MAX buffer): masks it, or walks into it.
 * Returns what the walk cache keeps of it (see below). */
enum { KEEP_NONE, KEEP_WALKED, KEEP_SKIPPED, KEEP_MASKED };

/* The walk's cache.  The walk costs a stat of every file of the base at
 * every operation; an unchanged base is the common case, so what the walk
 * found is kept between operations (--walk-cache FILE: glimpse keeps it in
 * the sandbox's system/, which only the host's root writes, and which no
 * namespace of an operation sees) and a directory that did not change is
 * not read again:
 *   - kept for every directory the walk entered (world-readable and
 *     searchable): its identity (device, inode), its ctime and mtime, and
 *     the entries of it that matter: the directories it entered or skipped,
 *     and the entries it masked; the other entries (world-readable files,
 *     links) are not kept;
 *   - a directory is taken from the cache only when it is the same
 *     directory (device, inode), with the same ctime and mtime, and that
 *     ctime was at least WALK_MARGIN_S seconds older than the walk that
 *     kept it (a change in the same clock tick as the reading would leave
 *     the times as they were).  Adding, removing or renaming an entry
 *     changes the directory's mtime and ctime; changing its mode, its
 *     ctime.  Then its kept directories are looked at again (each one the
 *     same test: an fstatat of its path from the nearest directory the walk
 *     has open, no open of its own while it is unchanged unless it holds
 *     WALK_ANCHOR_MIN kept directories or more, for their paths; see
 *     walk_dir_kept), and every entry it masked is checked again as the
 *     walk would (it may have become a world-readable directory, or gone);
 *     nothing masked is trusted from the cache;
 *   - a directory that changed is read as the walk always did; its
 *     subdirectories may still come from the cache;
 *   - a cache that is not root's regular file, not written by this format,
 *     for another base, or damaged, is ignored and replaced.
 * What this gives up: a world-readable file of a directory that did not
 * change, made private (chmod) since the walk that kept the directory,
 * keeps its name and attributes (mode, size, times, and its extended
 * attributes' names and values) in listings until its directory changes
 * -- as for a change during an operation, it cannot be opened (the check
 * at open).  And since the mask of an operation is built from the cache
 * while the walk runs beside the command (build_mask), whatever changed
 * in the base since the last operation's walk is masked from the next
 * operation on: during this one, a new private entry's name shows
 * (unreadable), a directory made private refuses to be listed or searched
 * rather than showing empty. */
/* (3: every FIFO is masked; a cache of 2 kept no world-readable one.
 * 4: the numbers of records in the header.  5: the masked paths first) */
#define WALK_MAGIC "glimpse-pkgns walk cache 5\n"
#define WALK_MARGIN_S 2
/* The cache is written again when what it keeps changed, or when the
 * directories read again because only their times changed held more than
 * this many entries: writing it costs about what reading so many entries
 * again at the next operation does.  (A directory whose times alone changed
 * is read again until then: the same result, a little later.) */
#define WALK_RESAVE_ENTRIES 4096
#define WALK_MAX_SIZE (256u << 20)
/* An unchanged directory with at least this many kept directories is
 * opened, the nearer start of their paths (walk_dir_kept) */
#define WALK_ANCHOR_MIN 4

typedef struct WalkDir WalkDir;
typedef struct {
  unsigned char kind;
  char *name;
  WalkDir *sub;           /* KEEP_WALKED */
} WalkEntry;

struct WalkDir {
  uint64_t dev, ino;
  int64_t mtime_s, ctime_s;
  uint32_t mtime_ns, ctime_ns;
  bool reusable;
  /* read from the cache file: D, its entries and their names are in the
   * pools of walk_file_tree, not allocated one by one */
  bool loaded;
  uint32_t n;
  WalkEntry *e;           /* by name */
};

static struct timespec walk_start;
/* (counted by every thread of the walk: walk_root) */
static atomic_bool walk_changed;
static atomic_uint walk_read, walk_reused, walk_read_entries;

static void
walk_dir_free (WalkDir *d)
{
  if (d == NULL)
    return;
  for (uint32_t i = 0; i < d->n; i++)
    {
      if (!d->loaded)
        free (d->e[i].name);
      walk_dir_free (d->e[i].sub);
    }
  if (!d->loaded)
    {
      free (d->e);
      free (d);
    }
}

static int
walk_entry_cmp (const void *a, const void *b)
{
  return strcmp (((const WalkEntry *) a)->name, ((const WalkEntry *) b)->name);
}

static WalkEntry *
walk_find (WalkDir *d, const char *name)
{
  WalkEntry key = { .name = (char *) name };
  if (d == NULL || d->n == 0)
    return NULL;
  return bsearch (&key, d->e, d->n, sizeof *d->e, walk_entry_cmp);
}

static WalkDir *
walk_dir_new (const struct stat *st)
{
  WalkDir *d = calloc (1, sizeof *d);
  if (d == NULL)
    die ("out of memory");
  d->dev = st->st_dev;
  d->ino = st->st_ino;
  d->mtime_s = st->st_mtim.tv_sec;
  d->mtime_ns = (uint32_t) st->st_mtim.tv_nsec;
  d->ctime_s = st->st_ctim.tv_sec;
  d->ctime_ns = (uint32_t) st->st_ctim.tv_nsec;
  /* ctime only moves forward (no call sets it); a change in the tick of
   * the reading is the one a later comparison could miss */
  d->reusable = st->st_ctim.tv_sec < walk_start.tv_sec - WALK_MARGIN_S;
  return d;
}

static bool
walk_dir_same (const WalkDir *d, const struct stat *st)
{
  return d != NULL && d->reusable && d->dev == st->st_dev && d->ino == st->st_ino
         && d->mtime_s == st->st_mtim.tv_sec && d->mtime_ns == (uint32_t) st->st_mtim.tv_nsec
         && d->ctime_s == st->st_ctim.tv_sec && d->ctime_ns == (uint32_t) st->st_ctim.tv_nsec;
}

static void
walk_add (WalkDir *d, size_t *cap, unsigned char kind, const char *name, WalkDir *sub)
{
  if (d->n == *cap)
    {
      *cap = *cap ? *cap * 2 : 8;
      d->e = realloc (d->e, *cap * sizeof *d->e);
      if (d->e == NULL)
        die ("out of memory");
    }
  d->e[d->n].kind = kind;
  d->e[d->n].sub = sub;
  if ((d->e[d->n].name = strdup (name)) == NULL)
    die ("out of memory");
  d->n++;
}

/* REL (LEN characters of a PATH_MAX buffer) with "/NAME" (N characters)
 * appended, or NAME at the base's root; the new length (the caller checked
 * that it fits) */
static size_t
rel_append (char *rel, size_t len, const char *name, size_t n)
{
  if (len)
    rel[len++] = '/';
  memcpy (rel + len, name, n);
  rel[len + n] = '\0';
  return len + n;
}

static WalkDir *walk_dir (int mask, int pfd, const struct stat *st, char *rel, size_t len, WalkDir *old);

/* THE RULE for what is not a directory: a socket, a FIFO, a regular file
 * not every user may read is masked (the walk and mask_replay) */
static bool
rule_masks_file (const struct stat *st)
{
  return S_ISSOCK (st->st_mode) || S_ISFIFO (st->st_mode) || (S_ISREG (st->st_mode) && !(st->st_mode & S_IROTH));
}

/* THE RULE for a directory: every user must read and search it */
static bool
rule_shows_dir (const struct stat *st)
{
  return (st->st_mode & (S_IROTH | S_IXOTH)) == (S_IROTH | S_IXOTH);
}

/* The mask as the view has it, for the walk beside the command (an O_PATH
 * descriptor of its root; build_mask), or -1 */
static int mask_seen = -1;
/* The walker's words (build_mask): "r", the mask is ready while it walks
 * on; "s", it found what the mask should have hidden.  [0] read by
 * supervise(), [1] the walker's */
static int mask_ready[2] = { -1, -1 };

/* The walk beside the command found a FIFO of the base at REL, in the
 * directory DFD: when the mask the view has (the last walk's) does not
 * hide it -- no whiteout there, no opaque directory above it -- it is one
 * that appeared since.  In a directory only root may write to (the places
 * package triggers read: /usr/share/applications…), a program of the
 * operation that reads it would wait on it for good (see THE RULE), so
 * the operation is stopped now (supervise: "s" on mask_ready), saying so,
 * while the walk goes on: what it keeps masks it at the next operation.
 * In a directory another user may write to (/var/crash, a user's own
 * whatever its mode, one with a group's or an ACL's write bit), which no
 * package operation reads, it is left as a FIFO made there
 * during an operation is (a program that did read it would be stopped at
 * the operation's time limit): any user could otherwise make every
 * operation stop. */
static atomic_bool walk_fifo_said;

static void
walk_check_fifo_masked (int dfd, const char *rel)
{
  char buf[PATH_MAX];
  struct stat m, dir;
  char *slash;

  if (mask_seen < 0 || atomic_load (&walk_fifo_said))
    return;
  /* Only root's, writable by root alone: a directory another user owns is
   * theirs to write whatever its mode (they chmod it back after mkfifo);
   * with a group's write bit, a group's or an ACL's (the bits then are
   * the ACL's mask), whatever the group, root's own included */
  if (fstat (dfd, &dir) != 0 || dir.st_uid != 0 || (dir.st_mode & (S_IWGRP | S_IWOTH)))
    return;
  if (fstatat (mask_seen, rel, &m, AT_SYMLINK_NOFOLLOW) == 0 && S_ISCHR (m.st_mode) && m.st_rdev == makedev (0, 0))
    return;
  snprintf (buf, sizeof buf, "%s", rel);
  for (slash = strchr (buf, '/'); slash != NULL; slash = strchr (slash + 1, '/'))
    {
      char v[2] = "";
      int fd;
      *slash = '\0';
      fd = openat (mask_seen, buf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      *slash = '/';
      if (fd < 0)
        break;
      if (fgetxattr (fd, "user.overlay.opaque", v, sizeof v) == 1 && v[0] == 'y')
        {
          close (fd);
          return;
        }
      close (fd);
    }
  if (atomic_exchange (&walk_fifo_said, true))
    return;
  fprintf (stderr, "%s: /%s of %s is a FIFO that appeared since the last package operation's check "
           "of it; a program of the operation that reads it would wait for good, so the operation "
           "is stopped (nothing of it is kept). Run it again: the check done now hides it.\n",
           prog, rel, A.base);
  if (write (mask_ready[1], "s", 1) != 1)
    _exit (EXIT_SETUP);
}

/* NAME of the directory DFD (an entry REL of the base; LEN: the length of
 * its parent's path): THE RULE for it.  D_TYPE from readdir, or DT_UNKNOWN;
 * OLD: what the cache kept of it, if anything, which this takes (reuses or
 * frees).  *SUB: a directory walked. */
static int
walk_entry (int mask, int dfd, const char *name, unsigned char d_type, char *rel, size_t len,
            WalkDir *old, WalkDir **sub)
{
  struct stat st;
  int fd = -1;
  size_t n = strlen (name), rlen;

  *sub = NULL;
  if (d_type == DT_LNK || strcmp (name, ".") == 0 || strcmp (name, "..") == 0)
    {
      walk_dir_free (old);
      return KEEP_NONE;
    }
  if (len + 1 + n >= PATH_MAX)
    die ("/%s/%s of the base: path too long to check", rel, name);
  rlen = rel_append (rel, len, name, n);
  /* A directory (as readdir or the cache says): opened at once, its
   * attributes those of what was opened */
  if (d_type == DT_DIR || d_type == DT_UNKNOWN)
    {
      fd = openat (dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd >= 0 && fstat (fd, &st) != 0)
        die_errno ("cannot check /%s of the base", rel);
    }
  if (fd < 0 && fstatat (dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
    {
      if (errno != ENOENT)
        die_errno ("cannot check /%s of the base", rel);
      rel[len] = '\0';
      walk_dir_free (old);
      return KEEP_NONE;
    }
  if (S_ISDIR (st.st_mode))
    {
      int kind = KEEP_NONE;
      if (is_skipped (rel, rlen))
        kind = KEEP_SKIPPED;
      else if (!rule_shows_dir (&st)
               /* too deep for its entries' paths to be checked (anyone may
                * make such a chain in /var/tmp): shown empty, not a failure */
               || rlen + 1 + NAME_MAX >= PATH_MAX)
        {
          mask_empty_dir (mask, rel);
          kind = KEEP_MASKED;
        }
      else
        {
          /* (a directory that appeared between the stat and the open: as
           * its parent's reading, at the next operation) */
          if (fd < 0)
            {
              fd = openat (dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
              if (fd < 0 || fstat (fd, &st) != 0)
                die_errno ("cannot read /%s of the base", rel);
              if (!rule_shows_dir (&st))
                {
                  mask_empty_dir (mask, rel);
                  close (fd);
                  rel[len] = '\0';
                  walk_dir_free (old);
                  return KEEP_MASKED;
                }
            }
          *sub = walk_dir (mask, fd, &st, rel, rlen, old);
          old = NULL;
          kind = KEEP_WALKED;
        }
      if (fd >= 0)
        close (fd);
      rel[len] = '\0';
      walk_dir_free (old);
      return kind;
    }
  walk_dir_free (old);
  if (fd >= 0)
    close (fd);
  if (rule_masks_file (&st))
    {
      if (!is_shadow (rel))
        {
          if (mask < 0 && S_ISFIFO (st.st_mode))
            walk_check_fifo_masked (dfd, rel);
          mask_whiteout (mask, rel);
        }
      rel[len] = '\0';
      return KEEP_MASKED;
    }
  rel[len] = '\0';
  return KEEP_NONE;
}

static WalkDir *walk_dir_kept (int mask, int anchor, size_t aoff, const struct stat *st, char *rel,
                               size_t len, WalkDir *old, WalkDir **pre);

/* The kept directory at REL, seen from ANCHOR (as walk_dir_kept's), opened
 * without following any link and checked to be the directory ST
 * describes; -1 when it is not (it was replaced) */
static int
walk_kept_open (int anchor, size_t aoff, const struct stat *st, const char *rel)
{
  struct stat now;
  int dfd = open_beneath (anchor, rel + aoff, O_DIRECTORY);

  if (dfd >= 0 && (fstat (dfd, &now) != 0 || now.st_dev != st->st_dev || now.st_ino != st->st_ino))
    {
      close (dfd);
      dfd = -1;
    }
  return dfd;
}

/* The kept entry E of the unchanged directory at REL (LEN; ANCHOR and
 * AOFF as walk_dir_kept's): when it is a directory that is unchanged (one
 * fstatat through ANCHOR) and still one every user may read and search,
 * its record updated; else NULL.  E->sub is taken (NULL) when it was looked
 * into, else left for walk_entry. */
static WalkDir *
walk_kept_unchanged (int mask, int anchor, size_t aoff, char *rel, size_t len, WalkEntry *e)
{
  size_t n, sublen;
  struct stat sst;
  WalkDir *sub = NULL;

  if (e->kind != KEEP_WALKED)
    return NULL;
  n = strlen (e->name);
  sublen = len + (len ? 1 : 0) + n;
  /* (a directory too deep for walk_entry to enter is its business) */
  if (sublen + 1 + NAME_MAX >= PATH_MAX)
    return NULL;
  rel_append (rel, len, e->name, n);
  if (!is_skipped (rel, sublen) && fstatat (anchor, rel + aoff, &sst, AT_SYMLINK_NOFOLLOW) == 0
      && S_ISDIR (sst.st_mode)
      && rule_shows_dir (&sst)
      && walk_dir_same (e->sub, &sst))
    {
      if (e->sub->n == 0)
        {
          walk_reused++;
          sub = e->sub;
        }
      else
        sub = walk_dir_kept (mask, anchor, aoff, &sst, rel, sublen, e->sub, NULL);
      /* (taken: kept, or freed when it was replaced) */
      e->sub = NULL;
    }
  rel[len] = '\0';
  return sub;
}

/* The base's directory at REL (LEN characters of a PATH_MAX buffer),
 * unchanged since the walk that kept OLD (ST: its attributes now), seen
 * from ANCHOR, the descriptor of the directory at the first AOFF - 1
 * characters of REL (AOFF 0: the base's root), or of itself when
 * AOFF == (LEN ? LEN + 1 : 0).  Its kept entries are looked at again:
 * each kept directory by one fstatat through ANCHOR, not an open of
 * its own (and through it, its own kept directories), as long as it is
 * unchanged and still one every user may read and search -- through this
 * directory instead when it holds WALK_ANCHOR_MIN kept directories or
 * more: it is opened first, as below; an entry that
 * changed, and every entry the cache masked or skipped, as walk_entry
 * does, from this directory's descriptor, opened then without following
 * any link (openat2, RESOLVE_NO_SYMLINKS) and checked to be the
 * directory ST describes.  (A path through ANCHOR follows a link that
 * replaced one of its directories since its fstatat: what it finds is then
 * another file, which does not pass walk_dir_same, or the same one.)
 * Returns OLD, updated where it is (no record is built anew), or NULL:
 * this directory is no longer the one ST describes (it was replaced while
 * the walk ran; OLD is freed); its parent looks at it again as walk_entry
 * does.
 * PRE, when not NULL: what walk_kept_unchanged returned for each entry of
 * OLD, looked at already (by the walk's threads: walk_root), taken here. */
static WalkDir *
walk_dir_kept (int mask, int anchor, size_t aoff, const struct stat *st, char *rel, size_t len,
               WalkDir *old, WalkDir **pre)
{
  bool own = aoff != (len ? len + 1 : 0);
  int dfd = own ? -1 : anchor;
  uint32_t j = 0, walked = 0;

  /* OLD is the record of this directory now (its attributes are ST's):
   * its entries are updated where they are, none added */
  walk_reused++;
  /* Its kept directories are many: each of their fstatats (and theirs,
   * below) resolves its path from this directory, opened now, not from
   * ANCHOR (on a host base the paths are some nine directories deep) */
  for (uint32_t i = 0; own && pre == NULL && i < old->n && walked < WALK_ANCHOR_MIN; i++)
    walked += old->e[i].kind == KEEP_WALKED;
  if (walked >= WALK_ANCHOR_MIN && (dfd = walk_kept_open (anchor, aoff, st, rel)) < 0)
    {
      walk_dir_free (old);
      return NULL;
    }
  for (uint32_t i = 0; i < old->n; i++)
    {
      WalkEntry e = old->e[i];
      WalkDir *sub = pre != NULL ? pre[i]
                     : dfd >= 0 ? walk_kept_unchanged (mask, dfd, len ? len + 1 : 0, rel, len, &e)
                     : walk_kept_unchanged (mask, anchor, aoff, rel, len, &e);
      int kind;

      if (pre != NULL)
        pre[i] = NULL;   /* (taken) */
      if (sub != NULL)
        {
          e.sub = sub;
          old->e[j++] = e;
          continue;
        }
      if (dfd < 0)
        {
          dfd = walk_kept_open (anchor, aoff, st, rel);
          if (dfd < 0)
            {
              /* entries 0…j-1 are kept ones, i…n-1 not looked at yet */
              old->e[i] = e;
              for (uint32_t k = j; k < i; k++)
                old->e[k] = (WalkEntry) { .kind = KEEP_NONE };
              /* (what was looked at already of the rest) */
              for (uint32_t k = i + 1; pre != NULL && k < old->n; k++)
                {
                  walk_dir_free (pre[k]);
                  pre[k] = NULL;
                }
              walk_dir_free (old);
              return NULL;
            }
        }
      kind = walk_entry (mask, dfd, e.name, e.kind == KEEP_MASKED ? DT_UNKNOWN : DT_DIR,
                         rel, len, e.kind == KEEP_WALKED ? e.sub : NULL, &sub);
      if (kind != e.kind)
        walk_changed = true;
      if (kind != KEEP_NONE)
        old->e[j++] = (WalkEntry) { .kind = (unsigned char) kind, .name = e.name, .sub = sub };
      else if (!old->loaded)
        free (e.name);
    }
  old->n = j;
  if (own && dfd >= 0)
    close (dfd);
  return old;
}

/* THE RULE (see the top) for the base's directory PFD (an O_PATH
 * descriptor; ST its attributes), at REL (LEN characters of a PATH_MAX
 * buffer), every user may read and search; OLD: what the cache kept of it,
 * which this takes.  Returns what to keep of it now. */
static WalkDir *
walk_dir (int mask, int pfd, const struct stat *st, char *rel, size_t len, WalkDir *old)
{
  WalkDir *d;
  size_t cap = 0;
  int fd;
  DIR *dir;
  struct dirent *de;

  /* Unchanged: its entries are the kept ones; the directories looked at
   * again, what it masked checked again */
  if (walk_dir_same (old, st))
    return walk_dir_kept (mask, pfd, len ? len + 1 : 0, st, rel, len, old, NULL);
  d = walk_dir_new (st);
  fd = openat (pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  dir = fd >= 0 ? fdopendir (fd) : NULL;
  walk_read++;
  if (dir == NULL)
    die_errno ("cannot read /%s of the base", rel);
  for (;;)
    {
      WalkEntry *e;
      WalkDir *sub = NULL;
      int kind;
      errno = 0;
      if ((de = readdir (dir)) == NULL)
        break;
      walk_read_entries++;
      e = walk_find (old, de->d_name);
      kind = walk_entry (mask, dirfd (dir), de->d_name, de->d_type, rel, len,
                         e && e->kind == KEEP_WALKED ? e->sub : NULL, &sub);
      if (e && e->kind == KEEP_WALKED)
        e->sub = NULL;   /* (taken) */
      if (kind != KEEP_NONE)
        walk_add (d, &cap, (unsigned char) kind, de->d_name, sub);
    }
  if (errno != 0)
    die_errno ("cannot read /%s of the base", rel);
  closedir (dir);
  if (d->n > 1)
    qsort (d->e, d->n, sizeof *d->e, walk_entry_cmp);
  /* What it keeps changed (an entry came, went or became another kind), or
   * only its times */
  if (old == NULL || old->n != d->n)
    walk_changed = true;
  for (uint32_t i = 0; !walk_changed && i < d->n; i++)
    if (d->e[i].kind != old->e[i].kind || strcmp (d->e[i].name, old->e[i].name) != 0)
      walk_changed = true;
  walk_dir_free (old);
  return d;
}

/* The walk of the base's root ROOT (an O_PATH descriptor; ST its
 * attributes; OLD what the cache kept of it, taken) in as many threads as
 * the machine has processors (up to 4): when the root is unchanged, its
 * kept entries are shared out, the largest first, each looked at as
 * walk_dir_kept does (the kept directories, one fstatat each, are most
 * of an operation's start on a host base).  An entry holding more than
 * a share of the kept directories (/usr) that is itself unchanged is
 * split: its kept directories are shared out instead, each looked at as
 * walk_kept_unchanged does, and then the entry as walk_dir_kept does with
 * those results (what changed in it, and what it masked, looked at then,
 * by one thread).  The threads' mask paths meet only in the parents they
 * mirror, which mask_mirror_dirs makes whoever comes first. */
typedef struct {
  uint32_t root;          /* the root's entry */
  int32_t child;          /* of a split entry: its entry; else -1 */
  size_t size;            /* the kept directories it covers */
} WalkTask;

typedef struct {
  int mask, root;
  WalkDir *old;
  WalkTask *tasks;        /* the largest first */
  uint32_t n_tasks;
  atomic_uint next;
  int *kinds;
  WalkDir **subs;
  WalkDir ***pre;         /* a split entry's results per entry, else NULL */
  struct stat *sst;       /* a split entry's attributes */
} WalkRoot;

static size_t
walk_count (const WalkDir *d)
{
  size_t c = 1;
  for (uint32_t i = 0; i < d->n; i++)
    if (d->e[i].kind == KEEP_WALKED)
      c += walk_count (d->e[i].sub);
  return c;
}

static void *
walk_root_worker (void *data)
{
  WalkRoot *w = data;
  char rel[PATH_MAX] = "";

  for (;;)
    {
      unsigned k = atomic_fetch_add (&w->next, 1);
      uint32_t i;
      WalkEntry *e;
      if (k >= w->n_tasks)
        break;
      i = w->tasks[k].root;
      e = &w->old->e[i];
      if (w->tasks[k].child >= 0)
        {
          size_t len = strlen (e->name);
          memcpy (rel, e->name, len + 1);
          w->pre[i][w->tasks[k].child] = walk_kept_unchanged (w->mask, w->root, 0, rel, len,
                                                               &e->sub->e[w->tasks[k].child]);
          rel[0] = '\0';
          continue;
        }
      w->subs[i] = walk_kept_unchanged (w->mask, w->root, 0, rel, 0, e);
      if (w->subs[i] != NULL)
        w->kinds[i] = KEEP_WALKED;
      else
        w->kinds[i] = walk_entry (w->mask, w->root, e->name, e->kind == KEEP_MASKED ? DT_UNKNOWN : DT_DIR,
                                  rel, 0, e->kind == KEEP_WALKED ? e->sub : NULL, &w->subs[i]);
      e->sub = NULL;   /* (taken) */
    }
  return NULL;
}

static int
walk_task_cmp (const void *a, const void *b)
{
  size_t x = ((const WalkTask *) a)->size, y = ((const WalkTask *) b)->size;
  return x < y ? 1 : x > y ? -1 : 0;
}

/* The root's entry E, a kept directory holding more than a share of the
 * walk: when it is unchanged (as walk_kept_unchanged decides it), its
 * attributes in *SST, and true: it is split */
static bool
walk_can_split (int root, const WalkEntry *e, struct stat *sst)
{
  size_t n = strlen (e->name);

  return e->kind == KEEP_WALKED && e->sub != NULL && e->sub->n > 0 && n + 1 + NAME_MAX < PATH_MAX
         && !is_skipped (e->name, n) && fstatat (root, e->name, sst, AT_SYMLINK_NOFOLLOW) == 0
         && S_ISDIR (sst->st_mode) && rule_shows_dir (sst)
         && walk_dir_same (e->sub, sst);
}

/* The walk holds two descriptors for each level of the tree it is in
 * (the directory's O_PATH one in walk_entry and its listing in walk_dir),
 * and enters a directory while its path leaves room for an entry's: a
 * chain of one-character names, which any user may make in a
 * world-writable directory of the host, is some 1900 levels deep, in
 * each of up to 4 threads, against the 1024 descriptors glimpse-pkgns
 * inherits under sudo.  The walk (the walker, or --walk-refresh: a process
 * of its own either way) raises its limit to WALK_NOFILE first, as root
 * may; where the system allows less, to what it allows. */
#define WALK_NOFILE (4u * 3u * (PATH_MAX / 2u) + 256u)

static void
walk_nofile (void)
{
  struct rlimit r;

  if (getrlimit (RLIMIT_NOFILE, &r) != 0 || r.rlim_cur >= WALK_NOFILE)
    return;
  r.rlim_cur = WALK_NOFILE;
  if (r.rlim_max < WALK_NOFILE)
    r.rlim_max = WALK_NOFILE;
  if (setrlimit (RLIMIT_NOFILE, &r) != 0 && getrlimit (RLIMIT_NOFILE, &r) == 0)
    {
      r.rlim_cur = r.rlim_max;
      (void) setrlimit (RLIMIT_NOFILE, &r);
    }
}

static WalkDir *
walk_root (int mask, int root, const struct stat *st, WalkDir *old)
{
  char rel[PATH_MAX] = "";
  long cpus = sysconf (_SC_NPROCESSORS_ONLN);
  int n_threads = cpus < 1 ? 1 : cpus > 4 ? 4 : (int) cpus;
  pthread_t threads[4];
  int started = 0;
  WalkRoot w = { .mask = mask, .root = root, .old = old };
  size_t *size, total = 0, cap;
  uint32_t j = 0;

  walk_nofile ();
  if (n_threads == 1 || !walk_dir_same (old, st) || old->n < 2)
    return walk_dir (mask, root, st, rel, 0, old);
  w.kinds = calloc (old->n, sizeof *w.kinds);
  w.subs = calloc (old->n, sizeof *w.subs);
  w.pre = calloc (old->n, sizeof *w.pre);
  w.sst = calloc (old->n, sizeof *w.sst);
  size = calloc (old->n, sizeof *size);
  if (w.kinds == NULL || w.subs == NULL || w.pre == NULL || w.sst == NULL || size == NULL)
    die ("out of memory");
  for (uint32_t i = 0; i < old->n; i++)
    {
      size[i] = old->e[i].kind == KEEP_WALKED ? walk_count (old->e[i].sub) : 1;
      total += size[i];
    }
  /* The tasks: an entry each, or for a split one, one per entry of it */
  cap = old->n;
  for (uint32_t i = 0; i < old->n; i++)
    if (size[i] > total / (2 * (size_t) n_threads) && walk_can_split (root, &old->e[i], &w.sst[i]))
      {
        w.pre[i] = calloc (old->e[i].sub->n, sizeof **w.pre);
        if (w.pre[i] == NULL)
          die ("out of memory");
        cap += old->e[i].sub->n;
      }
  w.tasks = calloc (cap, sizeof *w.tasks);
  if (w.tasks == NULL)
    die ("out of memory");
  for (uint32_t i = 0; i < old->n; i++)
    {
      const WalkDir *d = old->e[i].sub;
      if (w.pre[i] == NULL)
        w.tasks[w.n_tasks++] = (WalkTask) { .root = i, .child = -1, .size = size[i] };
      else
        for (uint32_t k = 0; k < d->n; k++)
          w.tasks[w.n_tasks++] = (WalkTask) {
            .root = i, .child = (int32_t) k,
            .size = d->e[k].kind == KEEP_WALKED ? walk_count (d->e[k].sub) : 0 };
    }
  qsort (w.tasks, w.n_tasks, sizeof *w.tasks, walk_task_cmp);
  walk_reused++;
  for (int t = 1; t < n_threads; t++)
    if (pthread_create (&threads[started], NULL, walk_root_worker, &w) == 0)
      started++;
  walk_root_worker (&w);
  for (int t = 0; t < started; t++)
    pthread_join (threads[t], NULL);
  /* The split entries, with what the threads found in them */
  for (uint32_t i = 0; i < old->n; i++)
    if (w.pre[i] != NULL)
      {
        WalkEntry *e = &old->e[i];
        size_t len = strlen (e->name);
        memcpy (rel, e->name, len + 1);
        w.subs[i] = walk_dir_kept (mask, root, 0, &w.sst[i], rel, len, e->sub, w.pre[i]);
        rel[0] = '\0';
        /* (replaced while it was looked at: walked as walk_entry does) */
        w.kinds[i] = w.subs[i] != NULL ? KEEP_WALKED
                     : walk_entry (mask, root, e->name, DT_DIR, rel, 0, NULL, &w.subs[i]);
        e->sub = NULL;   /* (taken) */
        free (w.pre[i]);
      }
  for (uint32_t i = 0; i < old->n; i++)
    {
      WalkEntry e = old->e[i];
      if (w.kinds[i] != e.kind)
        walk_changed = true;
      if (w.kinds[i] != KEEP_NONE)
        old->e[j++] = (WalkEntry) { .kind = (unsigned char) w.kinds[i], .name = e.name, .sub = w.subs[i] };
      else if (!old->loaded)
        free (e.name);
    }
  old->n = j;
  free (w.tasks);
  free (w.kinds);
  free (w.subs);
  free (w.pre);
  free (w.sst);
  free (size);
  return old;
}

/* ------------------------------------------------ the walk cache's file
 * WALK_MAGIC, the host flag (u8), the numbers of directory records and of
 * entry records in the file (u32 each); the paths of the entries the walk
 * masked (relative to the base, in the walk's order), their number and
 * the bytes they take (u32 each), then each path and a NUL: what
 * mask_replay checks again, read before the rest, which the view does not
 * wait for; then the base's root directory: for a
 * directory dev, ino (u64), mtime (i64 s, u32 ns), ctime (the same),
 * reusable (u8), the number of entries (u32); each entry its kind (u8),
 * the length of its name (u16), the name and a NUL, a directory it walked
 * followed at once by that directory.  Native byte order: the file is
 * this machine's only.  Then "end\n".  Read back in place: the names are
 * the file's own bytes, the records one pool's (no allocation per
 * directory or entry: some 27,000 and 70,000 on a host base). */
typedef struct {
  char *buf;
  size_t len, cap;
} WalkBuf;

static void
wb_put (WalkBuf *b, const void *p, size_t n)
{
  if (b->len + n > b->cap)
    {
      b->cap = (b->len + n) * 2 + 4096;
      if ((b->buf = realloc (b->buf, b->cap)) == NULL)
        die ("out of memory");
    }
  memcpy (b->buf + b->len, p, n);
  b->len += n;
}

static void
wb_dir (WalkBuf *b, const WalkDir *d)
{
  unsigned char r = d->reusable;
  wb_put (b, &d->dev, 8);
  wb_put (b, &d->ino, 8);
  wb_put (b, &d->mtime_s, 8);
  wb_put (b, &d->mtime_ns, 4);
  wb_put (b, &d->ctime_s, 8);
  wb_put (b, &d->ctime_ns, 4);
  wb_put (b, &r, 1);
  wb_put (b, &d->n, 4);
  for (uint32_t i = 0; i < d->n; i++)
    {
      uint16_t n = (uint16_t) strlen (d->e[i].name);
      wb_put (b, &d->e[i].kind, 1);
      wb_put (b, &n, 2);
      wb_put (b, d->e[i].name, n + 1u);
      if (d->e[i].kind == KEEP_WALKED)
        wb_dir (b, d->e[i].sub);
    }
}

/* The paths of the entries D (at REL, LEN characters of a PATH_MAX
 * buffer) masked, N of them: those mask_replay can check (the walk beside
 * the command takes the others, as it always did) */
static void
wb_masked (WalkBuf *b, const WalkDir *d, char *rel, size_t len, uint32_t *n)
{
  for (uint32_t i = 0; i < d->n; i++)
    {
      const WalkEntry *e = &d->e[i];
      size_t nl = strlen (e->name), rlen;

      if ((e->kind != KEEP_MASKED && e->kind != KEEP_WALKED) || len + 1 + nl + 1 + NAME_MAX >= PATH_MAX)
        continue;
      rlen = rel_append (rel, len, e->name, nl);
      if (e->kind == KEEP_WALKED)
        wb_masked (b, e->sub, rel, rlen, n);
      else
        {
          wb_put (b, rel, rlen + 1);
          ++*n;
        }
      rel[len] = '\0';
    }
}

typedef struct {
  const char *p, *end;
  /* the pools of the records read */
  WalkDir *dirs;
  WalkEntry *entries;
  size_t n_dirs, max_dirs, n_entries, max_entries;
} WalkIn;

/* A directory's record: 45 bytes at least; an entry's: 5 */
#define WALK_DIR_MIN 45
#define WALK_ENTRY_MIN 5

static bool
wi_get (WalkIn *in, void *out, size_t n)
{
  if ((size_t) (in->end - in->p) < n)
    return false;
  memcpy (out, in->p, n);
  in->p += n;
  return true;
}

/* A name the cache may hold (N bytes at S): a directory entry's, not "."
 * or "..", no '/' nor NUL in it */
static bool
walk_name_ok (const char *s, size_t n)
{
  return n > 0 && n <= NAME_MAX && memchr (s, '/', n) == NULL && memchr (s, '\0', n) == NULL
         && !(n == 1 && s[0] == '.') && !(n == 2 && s[0] == '.' && s[1] == '.');
}

/* NULL when damaged (nothing to free: the pools go with it) */
static WalkDir *
wi_dir (WalkIn *in, int depth)
{
  WalkDir *d;
  unsigned char r;

  if (depth > PATH_MAX / 2 || in->n_dirs == in->max_dirs)
    return NULL;
  /* (reading the records makes no system call for a few ms: a walker at
   * SCHED_IDLE, asked to give way to a process of the view, does so only
   * at the return of one -- or at the next tick, 4 ms apart at HZ=250) */
  if ((in->n_dirs & 1023) == 1023)
    sched_yield ();
  d = &in->dirs[in->n_dirs++];
  *d = (WalkDir) { .loaded = true };
  if (!wi_get (in, &d->dev, 8) || !wi_get (in, &d->ino, 8) || !wi_get (in, &d->mtime_s, 8)
      || !wi_get (in, &d->mtime_ns, 4) || !wi_get (in, &d->ctime_s, 8)
      || !wi_get (in, &d->ctime_ns, 4) || !wi_get (in, &r, 1) || !wi_get (in, &d->n, 4)
      || r > 1 || d->n > (size_t) (in->end - in->p) / WALK_ENTRY_MIN
      || d->n > in->max_entries - in->n_entries)
    return NULL;
  d->reusable = r;
  d->e = &in->entries[in->n_entries];
  in->n_entries += d->n;
  for (uint32_t i = 0; i < d->n; i++)
    {
      WalkEntry *e = &d->e[i];
      uint16_t n;
      *e = (WalkEntry) { 0 };
      if (!wi_get (in, &e->kind, 1) || !wi_get (in, &n, 2)
          || e->kind < KEEP_WALKED || e->kind > KEEP_MASKED || (size_t) (in->end - in->p) <= n
          || in->p[n] != '\0' || !walk_name_ok (in->p, n))
        return NULL;
      e->name = (char *) in->p;
      in->p += n + 1u;
      if ((i > 0 && strcmp (d->e[i - 1].name, e->name) >= 0)
          || (e->kind == KEEP_WALKED && (e->sub = wi_dir (in, depth + 1)) == NULL))
        return NULL;
    }
  return d;
}

/* The cache file, opened (walk_file_open): its masked paths, read at
 * once; its records, read after (walk_file_tree) */
typedef struct {
  char *buf;              /* the file, mapped */
  size_t size;
  const char *masked;     /* N_MASKED paths, each ended by a NUL */
  uint32_t n_masked;
  uint64_t dev, ino;      /* the base's root directory's, as kept */
  WalkIn in;              /* at the root directory's record */
} WalkFile;

/* A path of the masked list that mask_replay may take: relative, below
 * the base, each part a name walk_name_ok takes, with room for a name
 * below it */
static bool
masked_path_ok (const char *rel, size_t len)
{
  const char *p = rel;

  if (len == 0 || len + 1 + NAME_MAX >= PATH_MAX)
    return false;
  for (;;)
    {
      size_t n = strcspn (p, "/");
      if (!walk_name_ok (p, n))
        return false;
      if (p[n] == '\0')
        return true;
      p += n + 1;
    }
}

static void
walk_file_close (WalkFile *f)
{
  if (f->buf != NULL)
    munmap (f->buf, f->size);
  f->buf = NULL;
}

/* The cache file F opened, its header and masked paths checked; false:
 * none, not root's alone, not of this format or this base's kind, damaged */
static bool
walk_file_open (WalkFile *f)
{
  int fd = open (A.walk_cache, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  struct stat st;
  size_t m = strlen (WALK_MAGIC), masked_len = 0;
  unsigned char host;
  uint32_t n_dirs, n_entries, len32;
  WalkIn *in = &f->in;

  *f = (WalkFile) { .buf = NULL };
  if (fd < 0)
    return false;
  if (fstat (fd, &st) == 0 && S_ISREG (st.st_mode) && st.st_uid == 0 && !(st.st_mode & 022)
      && (size_t) st.st_size > m && st.st_size <= WALK_MAX_SIZE)
    {
      f->buf = mmap (NULL, (size_t) st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
      if (f->buf == MAP_FAILED)
        f->buf = NULL;
    }
  close (fd);
  if (f->buf == NULL)
    return false;
  f->size = (size_t) st.st_size;
  in->p = f->buf;
  in->end = f->buf + f->size;
  /* (the counts bounded by what a file of this size can hold) */
  if (memcmp (f->buf, WALK_MAGIC, m) == 0 && (in->p += m, wi_get (in, &host, 1)) && host == A.host
      && wi_get (in, &n_dirs, 4) && wi_get (in, &n_entries, 4)
      && n_dirs <= f->size / WALK_DIR_MIN && n_entries <= f->size / WALK_ENTRY_MIN
      && wi_get (in, &f->n_masked, 4) && wi_get (in, &len32, 4)
      && (masked_len = len32) <= (size_t) (in->end - in->p) && f->n_masked <= masked_len / 2
      && (masked_len == 0 || in->p[masked_len - 1] == '\0'))
    {
      const char *p = in->p, *end = in->p + masked_len;
      uint32_t n = 0;

      for (; p < end && n <= f->n_masked; n++)
        {
          size_t len = strlen (p);
          if (!masked_path_ok (p, len))
            break;
          p += len + 1;
        }
      if (p == end && n == f->n_masked)
        {
          f->masked = in->p;
          in->p += masked_len;
          in->max_dirs = n_dirs;
          in->max_entries = n_entries;
          /* (the root directory's record: dev and ino first) */
          if ((size_t) (in->end - in->p) >= 16)
            {
              memcpy (&f->dev, in->p, 8);
              memcpy (&f->ino, in->p + 8, 8);
              return true;
            }
        }
    }
  walk_file_close (f);
  return false;
}

/* What F kept of the walk, or NULL (damaged: F is closed).  What it
 * returns points into memory kept for the rest of the program: the file
 * itself, mapped read-only (the names are its bytes; the file is only
 * ever replaced by a rename, never changed in place), and one pool for
 * the records, exactly the size the file's header gives, made present in
 * one call (MAP_POPULATE).  Fresh pages are what the load costs: a fault
 * per 4 KiB page of anonymous memory, or a copy of the file, cost more
 * than reading the records (some 700 pages on a host base, ~4 ms). */
static WalkDir *
walk_file_tree (WalkFile *f)
{
  WalkIn *in = &f->in;
  size_t pool_len = in->max_dirs * sizeof *in->dirs + in->max_entries * sizeof *in->entries;
  char *pool = pool_len ? mmap (NULL, pool_len, PROT_READ | PROT_WRITE,
                                MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0) : MAP_FAILED;
  WalkDir *d = NULL;

  if (pool != MAP_FAILED)
    {
      in->dirs = (WalkDir *) (void *) pool;
      in->entries = (WalkEntry *) (void *) (pool + in->max_dirs * sizeof *in->dirs);
      d = wi_dir (in, 0);
      if (d != NULL && (in->end - in->p != 4 || memcmp (in->p, "end\n", 4) != 0))
        d = NULL;
      if (d == NULL)
        munmap (pool, pool_len);
    }
  if (d == NULL)
    walk_file_close (f);
  return d;
}

/* The records D holds: directories, and entries of them */
static void
walk_sizes (const WalkDir *d, uint32_t *dirs, uint32_t *entries)
{
  ++*dirs;
  *entries += d->n;
  for (uint32_t i = 0; i < d->n; i++)
    if (d->e[i].kind == KEEP_WALKED)
      walk_sizes (d->e[i].sub, dirs, entries);
}

/* Replaces the cache file with D; on a failure the cache is left out */
static void
walk_cache_save (const WalkDir *d)
{
  WalkBuf b = { 0 };
  unsigned char host = A.host;
  char *tmp = xasprintf ("%s.tmp", A.walk_cache);
  int fd, lock = -1;

  uint32_t n_dirs = 0, n_entries = 0, n_masked = 0, masked_len = 0;
  char rel[PATH_MAX] = "";
  size_t at;

  walk_sizes (d, &n_dirs, &n_entries);
  wb_put (&b, WALK_MAGIC, strlen (WALK_MAGIC));
  wb_put (&b, &host, 1);
  wb_put (&b, &n_dirs, 4);
  wb_put (&b, &n_entries, 4);
  /* (the masked paths' number and bytes, known once they are written) */
  at = b.len;
  wb_put (&b, &n_masked, 4);
  wb_put (&b, &masked_len, 4);
  wb_masked (&b, d, rel, 0, &n_masked);
  masked_len = (uint32_t) (b.len - at - 8);
  memcpy (b.buf + at, &n_masked, 4);
  memcpy (b.buf + at + 4, &masked_len, 4);
  wb_dir (&b, d);
  wb_put (&b, "end\n", 4);
  /* One writer at a time (FILE.lock): a --walk-refresh holds it for its
   * whole walk (glimpse took it: --walk-lock-fd), and writes only while
   * what it holds is still FILE.lock (a sandbox removed and made again
   * meanwhile has a lock of its own, and a cache of its own to keep); an
   * operation's walker that finds it held leaves the file to that walk */
  if (A.walk_lock_fd >= 0)
    {
      char *path = xasprintf ("%s.lock", A.walk_cache);
      struct stat held, named;
      bool same = fstat (A.walk_lock_fd, &held) == 0 && lstat (path, &named) == 0
                  && held.st_dev == named.st_dev && held.st_ino == named.st_ino;
      free (path);
      if (!same)
        {
          free (b.buf);
          free (tmp);
          return;
        }
    }
  else
    {
      char *path = xasprintf ("%s.lock", A.walk_cache);
      lock = open (path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
      free (path);
      if (lock < 0 || flock (lock, LOCK_EX | LOCK_NB) != 0)
        {
          if (lock >= 0)
            close (lock);
          free (b.buf);
          free (tmp);
          return;
        }
    }
  unlink (tmp);
  if (b.len > WALK_MAX_SIZE)
    {
      /* never read back (walk_file_open): no cache rather than a file
       * rewritten at every operation */
      unlink (A.walk_cache);
      free (b.buf);
      free (tmp);
      if (lock >= 0)
        close (lock);
      return;
    }
  fd = open (tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd >= 0)
    {
      bool ok = write (fd, b.buf, b.len) == (ssize_t) b.len;
      if (close (fd) != 0 || !ok || rename (tmp, A.walk_cache) != 0)
        unlink (tmp);
    }
  if (lock >= 0)
    close (lock);
  free (b.buf);
  free (tmp);
}

/* The mask in memory: a tmpfs of its own, made here by the host's root
 * and attached in the stage by the namespace's first process
 * (mount_overlay_view), so that nothing of it is written to, or removed
 * from, the disk of the store (some 300 directories and whiteouts on a
 * host base; on a busy disk each costs milliseconds, twice).  Where tmpfs
 * keeps no user.* attributes (before Linux 6.6: the opaque directories
 * need them), there is none (-1) and the mask is <op>/mask on disk, the
 * same layer. */
static int mask_mnt = -1;
/* (the view's wait for the mask: wait_for_mask) */
static int mask_go[2] = { -1, -1 };
/* The view's child of main to main, with --cgroup: the operation's exit
 * status, one byte, once its PID 1 is reaped (see supervise) */
static int view_ended[2] = { -1, -1 };

static int
mask_memory (void)
{
  static const char probe[] = "user.glimpse.probe";
  int fs = (int) syscall (SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC), m, fd;
  bool ok;

  if (fs < 0)
    return -1;
  /* (its pages are counted in the operation's memory cgroup, joined
   * before; whiteouts and directories hold no data) */
  if (syscall (SYS_fsconfig, fs, FSCONFIG_SET_STRING, "mode", "0755", 0) != 0
      || syscall (SYS_fsconfig, fs, FSCONFIG_SET_STRING, "size", "64m", 0) != 0
      || syscall (SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) != 0
      || (m = (int) syscall (SYS_fsmount, fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)) < 0)
    {
      close (fs);
      return -1;
    }
  close (fs);
  fd = openat (m, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ok = fd >= 0 && fsetxattr (fd, probe, "y", 1, 0) == 0 && fremovexattr (fd, probe) == 0;
  if (fd >= 0)
    close (fd);
  if (!ok)
    {
      close (m);
      return -1;
    }
  return m;
}

/* Whether REL or a directory above it is one the walk does not enter */
static bool
is_skipped_path (const char *rel)
{
  for (const char *p = rel;; p++)
    if (*p == '/' || *p == '\0')
      {
        if (is_skipped (rel, (size_t) (p - rel)))
          return true;
        if (*p == '\0')
          return false;
      }
}

/* The mask as the cache F kept it: every entry the last walk masked (its
 * list of paths) checked again as the walk would (see build_mask): the
 * entry at its path now, reached from the base's root without following
 * any link; one that is gone, or that a link now stands in the way of, is
 * not masked (what the view shows there is not it), a directory every
 * user may now read and search is shown. */
static void
mask_replay (int mask, const WalkFile *f)
{
  const char *rel = f->masked;

  for (uint32_t i = 0; i < f->n_masked; i++, rel += strlen (rel) + 1)
    {
      int fd;
      struct stat st;

      if (is_skipped_path (rel))
        continue;
      fd = open_beneath (base_fd, rel, 0);
      if (fd < 0)
        {
          if (!beneath_gone (errno))
            die_errno ("cannot check /%s of the base", rel);
          continue;
        }
      if (fstat (fd, &st) != 0)
        die_errno ("cannot check /%s of the base", rel);
      else if (S_ISDIR (st.st_mode))
        {
          if (!rule_shows_dir (&st))
            mask_empty_dir (mask, rel);
        }
      else if (rule_masks_file (&st) && !is_shadow (rel))
        mask_whiteout (mask, rel);
      close (fd);
    }
}

/* The mask's last file: policy-rc.d */
static void mask_finish (int mask);

/* Even at SCHED_IDLE, a walk beside the command slows it: on a 2-core
 * machine a short operation took some 6% longer with the walk beside it,
 * and as much with a process that only spun at SCHED_IDLE for the walk's
 * time (pkg-bench, `glimpse update` with nothing to do, 15 runs each).
 * So the walk beside the command begins only once the command has run
 * this long; a command that ends before leaves the walk to glimpse, which
 * starts it after the operation (--walk-refresh; the walker says so with
 * WALK_PENDING in the operation's directory).  A longer operation walks
 * beside it as before, and so is still stopped at a FIFO that appeared
 * since the last walk (walk_check_fifo_masked) rather than at a limit,
 * this much later. */
#define WALK_BESIDE_DELAY_MS 1000
#define WALK_PENDING "walk-pending"
/* supervise to the walker: the command has ended ('e', then EOF) */
static int walk_wait[2] = { -1, -1 };

/* In the walker, its mask ready: true once the command has run
 * WALK_BESIDE_DELAY_MS (the walk beside it begins), false when it ended
 * before */
static bool
walk_beside_wait (void)
{
  struct pollfd p = { walk_wait[0], POLLIN, 0 };
  int n;

  if (walk_wait[0] < 0)
    return true;
  while ((n = poll (&p, 1, WALK_BESIDE_DELAY_MS)) < 0 && errno == EINTR)
    ;
  return n == 0;
}

/* The part of the mask that is the same at every operation, and what the
 * walk does not enter (the skip list); with MASK -1, the skip list only
 * (--walk-refresh: the walk alone, which must skip what an operation's
 * walk skips) */
static void
mask_fixed (int mask)
{
  struct stat st;
  /* replaced by the view's own mounts whatever the base has there */
  static const char *mounted[] = { "proc", "sys", "dev", "tmp", "var/tmp" };

  for (size_t i = 0; mask >= 0 && i < sizeof shadows / sizeof *shadows; i++)
    mask_shadow (mask, shadows[i]);
  for (size_t i = 0; i < sizeof mounted / sizeof *mounted; i++)
    skip_add (mounted[i]);
  if (A.host)
    {
      static const char *hidden[] = {
        "/etc/ssh/ssh_host_*_key", "/etc/sudoers", "/etc/sudoers.d", "/var/lib/sudo",
        "/etc/ssl/private", "/var/backups/*shadow*", "/etc/security/opasswd",
        "/var/spool/cron/crontabs", "/var/mail/*", "/var/lib/polkit-1",
        "/etc/NetworkManager/system-connections", "/etc/wireguard", "/etc/krb5.keytab",
        "/etc/ipsec.secrets", "/etc/ppp/*-secrets", "/etc/openvpn", "/etc/letsencrypt",
        "/var/lib/NetworkManager/secret_key", "/var/lib/sss",
        "/var/lib/samba/private", "/var/lib/systemd/credential.secret", "/var/log/auth.log*",
        "/var/log/btmp*", "/var/log/journal", "/var/lib/docker", "/var/lib/containers",
        "/var/lib/libvirt", "/var/lib/AccountsService",
      };
      static const char *empty[] = { "home", "root", "mnt", "media", "srv" };
      for (size_t i = 0; i < sizeof hidden / sizeof *hidden; i++)
        mask_whiteout_glob (mask, hidden[i]);
      for (int i = 0; i < A.n_hide; i++)
        {
          skip_add (A.hide[i] + 1);
          /* (one reached through a link is not hidden by a whiteout at
           * its path: refused, as a failed mask is) */
          if (mask >= 0 && access (A.hide[i], F_OK) == 0 && !mask_whiteout (mask, A.hide[i] + 1))
            die ("cannot hide %s: a directory above it is a link", A.hide[i]);
        }
      /* Empty in the layers too, not only under the tmpfs mounted there */
      for (size_t i = 0; i < sizeof empty / sizeof *empty; i++)
        if (fstatat (base_fd, empty[i], &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR (st.st_mode))
          {
            if (mask >= 0)
              mask_empty_dir (mask, empty[i]);
            skip_add (empty[i]);
          }
    }
}

/* The walk of the base from its root FD (ST) beside or after the
 * command, OLD the last walk's tree (taken: updated where it is), MASK -1
 * where it masks nothing; then the cache written, where there is one and
 * the walk found it worth writing */
static void
walk_and_save (int mask, int fd, const struct stat *st, WalkDir *old)
{
  bool had_old = old != NULL;
  WalkDir *now = walk_root (mask, fd, st, old);

  if (A.walk_cache && (walk_changed || !had_old || walk_read_entries > WALK_RESAVE_ENTRIES))
    walk_cache_save (now);
  walk_dir_free (now);
}

/* The layer between the base and the system generations (see the top).
 * Without a walk cache for this base, the walk builds the mask, and the
 * view gets its go-ahead when the walker exits.  With one (the common
 * case: the last operation's walk), the mask is built from it at once,
 * every entry it masked checked again (mask_replay), and the walker says
 * so on mask_ready: the view is built and the command starts while the
 * walk of the base runs on beside it, at SCHED_IDLE (see walker_hurry),
 * masking nothing (the mask is
 * a layer of the mounted view by then: never written again), only to keep
 * what it finds for the next operation (and to stop this one at a FIFO
 * that appeared since: walk_check_fifo_masked).  That walk begins once
 * the command has run WALK_BESIDE_DELAY_MS; a command that ends before
 * leaves it to a process of its own that glimpse starts after the
 * operation (--walk-refresh), not beside the command.  What that gives
 * up, beyond what the cache already does (see "The walk's cache"): a
 * name that came into the base, or became private, since the last walk
 * shows in listings during this operation, where the walk would have
 * masked it --
 * as for a change while the command runs, nothing of it can be opened
 * (the check at open), and a directory made private since cannot be
 * listed or searched (EACCES); a directory made readable by every user
 * since is shown, what it holds named (and opened only where every user
 * may).  The next operation masks as the walk found. */
static void
build_mask (int opfd)
{
  int mask, fd;
  struct stat st;

  if (mask_mnt >= 0)
    mask = fcntl (mask_mnt, F_DUPFD_CLOEXEC, 0);
  else
    {
      if (mkdirat (opfd, "mask", 0755) != 0)
        die_errno ("cannot create %s/mask", A.op);
      mask = openat (opfd, "mask", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
  if (mask < 0 || fchownat (mask, "", A.uid, A.gid, AT_EMPTY_PATH) != 0)
    die_errno ("cannot prepare the mask of %s", A.op);
  mask_fixed (mask);
  fd = openat (base_fd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 || fstat (fd, &st) != 0)
    die_errno ("cannot read %s", A.base);
  clock_gettime (CLOCK_REALTIME, &walk_start);
  {
    WalkFile file;
    WalkDir *old = NULL;

    if (A.walk_cache && walk_file_open (&file)
        && (file.dev != (uint64_t) st.st_dev || file.ino != (uint64_t) st.st_ino))
      walk_file_close (&file);
    if (A.walk_cache && file.buf != NULL)
      {
        mask_replay (mask, &file);
        mask_finish (mask);
        mask_seen = fcntl (mask, F_DUPFD_CLOEXEC, 0);
        close (mask);
        mask = -1;
        /* (before the word: once it is said, the command may start and
         * end, and walker_hurry give the ordinary policy back, at any
         * moment; its threads, made later, inherit it; if it cannot be,
         * niced, or as it is) */
        if (sched_setscheduler (0, SCHED_IDLE, &(struct sched_param) { 0 }) != 0)
          (void) setpriority (PRIO_PROCESS, 0, 10);
        if (write (mask_ready[1], "r", 1) != 1)
          die_errno ("cannot start the view");
        /* (the rest of the file: damaged, NULL, and the walk is a whole
         * one, beside the command all the same) */
        old = walk_file_tree (&file);
        if (!walk_beside_wait ())
          {
            /* (glimpse reads it: the walk after the operation.  Then
             * "p": supervise need not wait for this process's end, which
             * drops the clone of the base, an unmount that waits for an
             * RCU grace period, some 4 ms here: glimpse waits for it
             * beside its commit, as the operation's cgroups empty) */
            int pending = openat (opfd, WALK_PENDING, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
            if (pending >= 0)
              {
                close (pending);
                if (write (mask_ready[1], "p", 1) != 1)
                  _exit (EXIT_SETUP);
                _exit (0);
              }
            /* (where it cannot be written, the disk full: the walk is done
             * here, after the command, and waited for, as before) */
          }
      }
    else
      {
        /* (the go-ahead when this process has succeeded: a whole walk,
         * which the view waits for, at the ordinary policy) */
        close (mask_ready[1]);
        mask_ready[1] = -1;
        (void) sched_setscheduler (0, SCHED_OTHER, &(struct sched_param) { 0 });
      }
    walk_and_save (mask, fd, &st, old);
  }
  close (fd);
  if (mask >= 0)
    {
      mask_finish (mask);
      close (mask);
    }
}

static void
mask_finish (int mask)
{
  static const char policy[] = "#!/bin/sh\n# glimpse: no service starts during a package operation\nexit 101\n";
  struct stat st;
  int fd;

  /* No service starts (Debian's invoke-rc.d asks policy-rc.d). */
  if (fstatat (base_fd, "usr/sbin", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR (st.st_mode))
    {
      if (!mask_mirror_dirs (mask, "usr/sbin"))
        die ("cannot write policy-rc.d: /usr/sbin of %s changed", A.base);
      if (unlinkat (mask, "usr/sbin/policy-rc.d", 0) != 0 && errno != ENOENT)
        die_errno ("cannot write policy-rc.d");
      fd = openat (mask, "usr/sbin/policy-rc.d", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
      if (fd < 0 || write (fd, policy, sizeof policy - 1) != (ssize_t) (sizeof policy - 1)
          || fchown (fd, A.uid, A.gid) != 0 || fchmod (fd, 0755) != 0)
        die_errno ("cannot write policy-rc.d");
      close (fd);
    }
}

/* --walk-refresh: the walk of the base, as build_mask's beside the
 * command, for the walk's cache alone, in a process of its own that
 * glimpse starts after an operation that ended before that walk began
 * (WALK_BESIDE_DELAY_MS), holding the cache's lock for it (FILE.lock,
 * --walk-lock-fd).  At SCHED_IDLE and the idle I/O class: nothing waits
 * for it; the next operation masks from the cache as it finds it. */
static int
walk_refresh (void)
{
  struct stat st;
  WalkFile file;
  WalkDir *old = NULL;
  int fd;

  if (sched_setscheduler (0, SCHED_IDLE, &(struct sched_param) { 0 }) != 0)
    (void) setpriority (PRIO_PROCESS, 0, 19);
  /* (IOPRIO_CLASS_IDLE) */
  (void) syscall (SYS_ioprio_set, 1 /* IOPRIO_WHO_PROCESS */, 0, 3 << 13);
  base_fd = (int) syscall (SYS_open_tree, AT_FDCWD, A.base, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  if (base_fd < 0)
    die_errno ("cannot clone %s", A.base);
  mask_fixed (-1);
  fd = openat (base_fd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 || fstat (fd, &st) != 0)
    die_errno ("cannot read %s", A.base);
  clock_gettime (CLOCK_REALTIME, &walk_start);
  if (walk_file_open (&file))
    {
      if (file.dev == (uint64_t) st.st_dev && file.ino == (uint64_t) st.st_ino)
        old = walk_file_tree (&file);
      else
        walk_file_close (&file);
    }
  walk_and_save (-1, fd, &st, old);
  close (fd);
  return 0;
}

/* build_mask in a child process, whose pid is returned: the walk's threads
 * (walk_root) live and die there, so this process stays single-threaded
 * for the user namespace calls of its children, and the namespaces and the
 * view's first mounts are made meanwhile (the view waits: wait_for_mask).
 * Its errors are build_mask's own, said by it; the operation ends with its
 * status.  It is waited for in supervise(), under the operation's limits. */
static void set_oom_score_adj (const char *value);
static void join_cgroups_v1_self (void);
static pid_t fork_or_limit (void);

static pid_t
start_mask (int opfd)
{
  pid_t parent = getpid ();
  pid_t pid;

  if (pipe2 (mask_ready, O_CLOEXEC) != 0 || (A.walk_cache != NULL && pipe2 (walk_wait, O_CLOEXEC) != 0))
    die_errno ("pipe");
  pid = fork_or_limit ();
  if (pid == 0)
    {
      close (mask_ready[0]);
      mask_ready[0] = -1;
      if (walk_wait[1] >= 0)
        close (walk_wait[1]);
      walk_wait[1] = -1;
      prctl (PR_SET_PDEATHSIG, SIGKILL);
      if (getppid () != parent)
        _exit (EXIT_SETUP);
      /* (not glimpse-pkgns's -1000: the OOM killer may take it) */
      set_oom_score_adj ("0");
      /* With a walk cache, at SCHED_IDLE from the start (see
       * walker_hurry; build_mask undoes it for a whole walk first) */
      if (A.walk_cache != NULL && access (A.walk_cache, F_OK) == 0)
        (void) sched_setscheduler (0, SCHED_IDLE, &(struct sched_param) { 0 });
      join_cgroups_v1_self ();
      build_mask (opfd);
      _exit (0);
    }
  close (mask_ready[1]);
  mask_ready[1] = -1;
  if (walk_wait[0] >= 0)
    close (walk_wait[0]);
  walk_wait[0] = -1;
  return pid;
}

/* ------------------------------------------------- the check at open */

/* THE RULE at open (see the top).  The view's lowest layer is an overlay
 * of its own over the idmapped base ("the base overlay": every file of its
 * superblock is the base's, nothing of the mask or the generations).
 * Overlayfs does every access to its layers -- a lookup, an open, a
 * directory listing, a permission check, reading a user.* attribute --
 * with the credentials of whoever mounted it, on top of the caller's.  So
 * the base overlay is mounted by a process of the namespace that is not
 * its root: uid and gid BASE_READER_ID, no supplementary group, and no
 * capability but CAP_SYS_ADMIN (to mount), in particular none of
 * CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH and CAP_FOWNER.  For that user a
 * file of the base is readable only through its "other" bits (it owns
 * none: below), and the kernel checks them, and the search bits of every
 * directory above, at every access, whoever asks: the command's own,
 * exec's, and the view's overlay's for a copy-up or a listing.  A check
 * that fails is EACCES.
 * BASE_READER_ID, 65535, is (uid_t) -1 of 16-bit ids, which no system
 * gives to a user or a group (Debian policy, and useradd never picks it);
 * a file of the base with that owner or group that is not world-readable
 * at the walk is masked as any other, so what it would change is a file
 * the host's root made owned by 65535 (or of group 65535) and private
 * since the last walk (the walk's cache: build_mask) or during an
 * operation, which that operation can read (the owner's or the group's bits). */
#define BASE_READER_ID 65535

/* ---------------------------------------------------------- limits */

static struct timespec started;
/* The limit that stopped the operation ("tasks", "memory", "time", "disk") */
static const char *stopped_by;

/* Best effort: lowering it takes CAP_SYS_RESOURCE, which a container's
 * root may lack (the operation is stopped all the same when the OOM killer
 * takes this process: everything below dies with it) */
static void
set_oom_score_adj (const char *value)
{
  int fd = open ("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
  ssize_t n;

  if (fd < 0)
    return;
  n = write (fd, value, strlen (value));
  (void) n;   /* refused (EACCES): the score stays as it was, as said above */
  close (fd);
}

/* Into every --cgroup, before anything is forked: all of the operation
 * is counted there, and nothing in its namespaces can leave it (the
 * cgroups are the host root's; the namespace's root owns none of them). */
static bool pids_cgroup;   /* one of them limits the operation's tasks */

/* Moves this process into the operation's cgroups, and WALKER (the base's
 * walker, or -1), forked before: a move of a process into a cgroup
 * (cgroup.procs) after a while waits for an RCU grace period (the
 * threadgroup lock's writer), 6-15 ms on a host, which the walk spends
 * walking.  In a cgroup v1 hierarchy, a process of one thread moves
 * itself through the "tasks" file instead ("0": the calling thread),
 * which the kernel does without that lock (40 us, not 15 ms, here): this
 * process, which has no other thread, and the walker, which moves itself
 * so before it starts any (join_cgroups_v1_self).  Everything of the
 * sandbox (the namespace's processes) is forked later, in the cgroups;
 * the walker, host code that the limits are not about, counts from its
 * move on (its first pages, the walk cache, stay charged where glimpse
 * runs).  A walker that has ended already (a small base) is not moved. */
static bool
cgroup_is_v1 (const char *dir)
{
  char *tasks = xasprintf ("%s/tasks", dir);
  bool v1 = access (tasks, F_OK) == 0;
  free (tasks);
  return v1;
}

/* (the walker, single-threaded still: see join_cgroups) */
static void
join_cgroups_v1_self (void)
{
  for (int i = 0; i < A.n_cgroups; i++)
    if (cgroup_is_v1 (A.cgroups[i]))
      {
        char *tasks = xasprintf ("%s/tasks", A.cgroups[i]);
        write_file (tasks, "0\n");
        free (tasks);
      }
}

static void
join_cgroups (pid_t walker)
{
  char *moved = xasprintf ("%ld\n", (long) walker);

  for (int i = 0; i < A.n_cgroups; i++)
    {
      char *procs = xasprintf ("%s/cgroup.procs", A.cgroups[i]);
      char *pids = xasprintf ("%s/pids.max", A.cgroups[i]);
      bool v1 = cgroup_is_v1 (A.cgroups[i]);
      if (v1)
        {
          char *tasks = xasprintf ("%s/tasks", A.cgroups[i]);
          write_file (tasks, "0\n");
          free (tasks);
        }
      else
        write_file (procs, "0\n");
      if (walker > 0 && !v1)
        {
          int fd = open (procs, O_WRONLY | O_CLOEXEC);
          if (fd < 0 || (write (fd, moved, strlen (moved)) < 0 && errno != ESRCH))
            die_errno ("cannot move the walk of %s into %s", A.base, A.cgroups[i]);
          close (fd);
        }
      if (access (pids, F_OK) == 0)
        pids_cgroup = true;
      free (procs);
      free (pids);
    }
  free (moved);
}

/* N of the line "KEY N" of DIR/FILE (0 without one) */
static unsigned long long
event_count (const char *dir, const char *file, const char *key)
{
  char *path = xasprintf ("%s/%s", dir, file);
  char buf[2048];
  size_t klen = strlen (key);
  int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  ssize_t n = fd >= 0 ? read (fd, buf, sizeof buf - 1) : -1;

  free (path);
  if (fd >= 0)
    close (fd);
  if (n <= 0)
    return 0;
  buf[n] = '\0';
  for (char *l = buf; l != NULL && *l != '\0'; l = strchr (l, '\n') ? strchr (l, '\n') + 1 : NULL)
    if (strncmp (l, key, klen) == 0 && l[klen] == ' ')
      return strtoull (l + klen + 1, NULL, 10);
  return 0;
}

/* Whether a pids cgroup of the operation has refused a fork */
static bool
tasks_limit_reached (void)
{
  for (int i = 0; i < A.n_cgroups; i++)
    if (event_count (A.cgroups[i], "pids.events", "max") > 0)
      return true;
  return false;
}

/* Which limit the operation has reached, or NULL; @running: the time is
 * only a limit while it runs */
static const char *
limit_reached (bool running)
{
  if (tasks_limit_reached ())
    return "tasks";
  for (int i = 0; i < A.n_cgroups; i++)
    {
      /* a process killed for memory (v2; v1 since Linux 4.13) */
      if (event_count (A.cgroups[i], "memory.events", "oom_kill") > 0
          || event_count (A.cgroups[i], "memory.oom_control", "oom_kill") > 0)
        return "memory";
    }
  if (running && A.max_seconds > 0)
    {
      struct timespec now;
      clock_gettime (CLOCK_MONOTONIC, &now);
      if ((unsigned long) (now.tv_sec - started.tv_sec) >= A.max_seconds)
        return "time";
    }
  if (A.min_free_mib > 0)
    {
      struct statvfs sv;
      if (statvfs (A.op, &sv) == 0
          && (unsigned long long) sv.f_bavail * sv.f_frsize < (unsigned long long) A.min_free_mib << 20)
        return "disk";
    }
  return NULL;
}

/* Ends glimpse-pkgns at the limit WHY, writing it to <op>/stopped-by
 * (glimpse names the limit from there: status 124) */
static void __attribute__((noreturn))
exit_at_limit (const char *why)
{
  char *path = xasprintf ("%s/stopped-by", A.op);
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);

  if (fd < 0 || write (fd, why, strlen (why)) < 0)
    die_errno ("cannot write %s", path);
  close (fd);
  fprintf (stderr, "%s: the operation was stopped at its limit (%s)\n", prog, why);
  _exit (EXIT_LIMIT);
}

/* fork() for glimpse-pkgns itself, before supervise() watches the
 * operation: its own processes count in the operation's pids cgroup too,
 * so under a small MaxTasks= a fork of its set-up is what reaches the
 * limit.  That is the limit, said as such (124, stopped-by), not a failed
 * set-up (125).  (What forks below it ends through supervise(), which
 * reads the limit from pids.events all the same.) */
static pid_t
fork_or_limit (void)
{
  pid_t pid = fork ();
  int errsv = errno;

  if (pid >= 0)
    return pid;
  /* (only the tasks limit explains a refused fork: naming a memory or
   * disk limit reached meanwhile would hide the real cause, a pids limit
   * above the operation's or the kernel's threads-max) */
  if (errsv == EAGAIN && tasks_limit_reached ())
    exit_at_limit ("tasks");
  errno = errsv;
  die_errno ("fork");
}

/* Kills the whole operation: the PID namespace's first process (the
 * kernel kills the rest of the namespace with it) and CHILD, its parent.
 * WHY: the limit reached, or NULL where the operation fails otherwise. */
static void
stop_operation (pid_t child, const char *why)
{
  char *path = xasprintf ("/proc/%d/task/%d/children", (int) child, (int) child);
  char buf[256];
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  ssize_t n = fd >= 0 ? read (fd, buf, sizeof buf - 1) : -1;

  free (path);
  if (fd >= 0)
    close (fd);
  if (n > 0)
    {
      char *p = buf, *end;
      buf[n] = '\0';
      for (long pid; (pid = strtol (p, &end, 10)) > 0; p = end)
        kill ((pid_t) pid, SIGKILL);
    }
  /* (the first process dies with it anyway: PR_SET_PDEATHSIG) */
  kill (child, SIGKILL);
  stopped_by = why;
}

/* The view's go-ahead (wait_for_mask): the walk is done.  A view that
 * has ended meanwhile, its reason said, reads nothing: EPIPE, not SIGPIPE;
 * its status is the operation's.  SIGPIPE is then as it was given to us,
 * which may be ignored. */
static void
mask_go_ahead (void)
{
  struct sigaction ignore = { .sa_handler = SIG_IGN }, given;
  bool ok;

  sigemptyset (&ignore.sa_mask);
  if (sigaction (SIGPIPE, &ignore, &given) != 0)
    die_errno ("sigaction");
  ok = write (mask_go[1], "m", 1) == 1 || errno == EPIPE;
  if (!ok)
    die_errno ("cannot start the view");
  if (sigaction (SIGPIPE, &given, NULL) != 0)
    die_errno ("sigaction");
}

/* To a walker that may still wait to walk beside the command
 * (walk_beside_wait): the command has ended.  One that has ended
 * meanwhile reads nothing: EPIPE, not SIGPIPE, as in mask_go_ahead. */
static void
walk_wait_end (void)
{
  struct sigaction ignore = { .sa_handler = SIG_IGN }, given;

  sigemptyset (&ignore.sa_mask);
  if (sigaction (SIGPIPE, &ignore, &given) != 0)
    die_errno ("sigaction");
  (void) !write (walk_wait[1], "e", 1);
  if (sigaction (SIGPIPE, &given, NULL) != 0)
    die_errno ("sigaction");
  close (walk_wait[1]);
  walk_wait[1] = -1;
}

/* The walk beside the command (build_mask) runs at SCHED_IDLE: on a CPU
 * that nothing else wants, and stepping aside at once for anything that
 * wakes there, so that it takes next to no time from the command's own
 * processes (niced instead, on 2 cores, it made pkg-bench's one-package
 * install some 5% longer, its update with nothing to do some 15%).  Once
 * the command has ended, the operation waits for it: its threads
 * (WALKER's tasks) are then given the ordinary policy, so that a busy
 * machine does not starve it.  (A thread it makes after this takes its
 * maker's policy, the ordinary one.)
 * With a walk cache the walker is at SCHED_IDLE from its start, while it
 * builds the mask from the cache too: the view is being built meanwhile,
 * and the scheduler put the view's processes behind the walker on one
 * CPU while the other stood idle (1-1.5 ms each, twice per operation,
 * perf sched on 2 cores); a SCHED_IDLE task is preempted at once and is
 * never held back from an idle CPU.  Should the mask not be ready within
 * MASK_HURRY_MS (a busy machine), the walker is hurried the same way;
 * build_mask sets SCHED_IDLE again for the walk beside the command. */
#define MASK_HURRY_MS 5

/* WALKER's threads given POLICY */
static void
walker_policy (pid_t walker, int policy)
{
  char path[64];
  /* (the walk has 4 threads at most; a thread made by one not yet given
   * POLICY while the list was read takes the old one from it: the list
   * is read again until it names no thread not seen) */
  long seen[16];
  size_t n_seen = 0;
  bool more = true;

  snprintf (path, sizeof path, "/proc/%ld/task", (long) walker);
  while (more)
    {
      DIR *d = opendir (path);
      struct dirent *e;

      more = false;
      if (d == NULL)
        return;
      while ((e = readdir (d)) != NULL)
        {
          char *end;
          long tid = strtol (e->d_name, &end, 10);
          size_t i;
          if (tid <= 0 || *end != '\0')
            continue;
          for (i = 0; i < n_seen && seen[i] != tid; i++)
            ;
          if (i < n_seen)
            continue;
          (void) sched_setscheduler ((pid_t) tid, policy, &(struct sched_param) { 0 });
          if (n_seen < sizeof seen / sizeof *seen)
            {
              seen[n_seen++] = tid;
              more = true;
            }
        }
      closedir (d);
    }
}

static void
walker_hurry (pid_t walker)
{
  walker_policy (walker, SCHED_OTHER);
}

/* The parent's loop, as the host's root, while the operation runs:
 * stops the operation at a limit, and returns the wait status of CHILD
 * when it ends.  WALKER (or -1): the base's walker (start_mask), which
 * runs under the same limits: when it says the mask is ready (mask_ready:
 * a walk cache was there), or else when it has succeeded, the view gets
 * its go-ahead; when it failed (having said why), the operation is ended,
 * with its status.  A walk still running beside the command when the
 * command ends is waited for (what it keeps is the next operation's). */
static int
supervise (pid_t child, pid_t walker)
{
  int pidfd = (int) syscall (SYS_pidfd_open, child, 0);
  int walker_fd = walker > 0 ? (int) syscall (SYS_pidfd_open, walker, 0) : -1;
  bool limited = A.n_cgroups > 0 || A.max_seconds > 0 || A.min_free_mib > 0;
  bool child_ended = false, hurried = false, mask_hurried = false;
  struct timespec t0, now;
  int walk_failed = -1;   /* the operation's status when the walk failed */
  int ended = -1;         /* the status the view's child of main said */
  int st;

  if (pidfd < 0 || (walker > 0 && walker_fd < 0))
    die_errno ("pidfd_open");
  clock_gettime (CLOCK_MONOTONIC, &t0);
  for (;;)
    {
      struct pollfd p[4] = { { child_ended ? -1 : pidfd, POLLIN, 0 }, { walker_fd, POLLIN, 0 },
                             { view_ended[0], POLLIN, 0 }, { mask_ready[0], POLLIN, 0 } };
      const char *why;
      int timeout = limited ? 250 : -1;
      /* (a mask not ready within MASK_HURRY_MS: see walker_hurry) */
      if (walker_fd >= 0 && mask_go[1] >= 0 && !mask_hurried)
        {
          long waited;
          clock_gettime (CLOCK_MONOTONIC, &now);
          waited = (now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000;
          if (waited >= MASK_HURRY_MS)
            {
              walker_hurry (walker);
              mask_hurried = true;
            }
          else if (timeout < 0 || timeout > MASK_HURRY_MS - waited)
            timeout = (int) (MASK_HURRY_MS - waited);
        }
      if (poll (p, 4, timeout) < 0)
        {
          if (errno == EINTR)
            continue;
          die_errno ("poll");
        }
      if (mask_ready[0] >= 0 && (p[3].revents & (POLLIN | POLLHUP | POLLERR)))
        {
          char c;
          ssize_t n;
          while ((n = read (mask_ready[0], &c, 1)) < 0 && errno == EINTR)
            ;
          /* "r": the mask is ready, the walk goes on beside the command;
           * "s": that walk found what the mask should have hidden
           * (walk_check_fifo_masked: it said what), the operation is
           * stopped, and fails once the walk has kept what it found;
           * "p": the command ended before the walk beside it began, and
           * the walker has left it to glimpse (WALK_PENDING written): it
           * is done, its end not waited for here (build_mask);
           * EOF: the walk builds the mask, or has ended */
          if (n == 1 && c == 'r' && mask_go[1] >= 0 && stopped_by == NULL)
            {
              mask_go_ahead ();
              close (mask_go[1]);
              mask_go[1] = -1;
              /* (hurried before it was ready, it may have gone back to
               * SCHED_IDLE for the walk beside the command before that:
               * it is there now, whichever came first) */
              if (mask_hurried)
                walker_policy (walker, SCHED_IDLE);
            }
          else if (n == 1 && c == 's' && !child_ended)
            {
              walk_failed = EXIT_SETUP;
              stop_operation (child, NULL);
            }
          else if (n == 1 && c == 'p' && walker_fd >= 0 && mask_go[1] < 0)
            {
              close (walker_fd);
              walker_fd = -1;
              close (mask_ready[0]);
              mask_ready[0] = -1;
            }
          else if (n != 1)
            {
              close (mask_ready[0]);
              mask_ready[0] = -1;
            }
        }
      if (limited && stopped_by == NULL && (why = limit_reached (true)) != NULL)
        {
          stop_operation (child, why);
          if (walker_fd >= 0)
            kill (walker, SIGKILL);
        }
      if (walker_fd >= 0 && (p[1].revents & POLLIN))
        {
          int wst;
          while (waitpid (walker, &wst, 0) < 0)
            if (errno != EINTR)
              die_errno ("waitpid");
          close (walker_fd);
          walker_fd = -1;
          if (stopped_by != NULL)
            ;   /* killed at a limit: the operation is ending */
          else if (WIFSIGNALED (wst))
            {
              fprintf (stderr, "%s: the walk of %s was killed (signal %d)\n", prog, A.base,
                       WTERMSIG (wst));
              walk_failed = EXIT_SETUP;
            }
          else if (!WIFEXITED (wst) || WEXITSTATUS (wst) != 0)
            walk_failed = WIFEXITED (wst) ? WEXITSTATUS (wst) : EXIT_SETUP;
          else if (mask_go[1] >= 0)
            mask_go_ahead ();
          /* (on a failure the view, waiting at mask_go, reads EOF: nothing
           * is mounted over the base; it is killed all the same) */
          if (mask_go[1] >= 0)
            close (mask_go[1]);
          mask_go[1] = -1;
          if (mask_ready[0] >= 0)
            close (mask_ready[0]);
          mask_ready[0] = -1;
          if (walk_failed >= 0 && !child_ended)
            stop_operation (child, NULL);
        }
      if (view_ended[0] >= 0 && (p[2].revents & (POLLIN | POLLHUP)))
        {
          unsigned char byte;
          ssize_t n;
          while ((n = read (view_ended[0], &byte, 1)) < 0 && errno == EINTR)
            ;
          close (view_ended[0]);
          view_ended[0] = -1;
          if (n == 1 && stopped_by == NULL)
            {
              ended = byte;
              child_ended = true;
            }
        }
      if (!child_ended && (p[0].revents & POLLIN))
        child_ended = true;
      /* (a walk beside the command: waited for, under the limits) */
      if (child_ended && (walker_fd < 0 || mask_go[1] >= 0 || stopped_by != NULL))
        break;
      if (child_ended && !hurried)
        {
          /* (a walker still waiting to walk beside the command leaves the
           * walk to glimpse: WALK_BESIDE_DELAY_MS) */
          if (walk_wait[1] >= 0)
            walk_wait_end ();
          walker_hurry (walker);
          hurried = true;
        }
    }
  /* a view that ended before the walk did: the walk is of no use */
  if (walker_fd >= 0)
    {
      kill (walker, SIGKILL);
      close (walker_fd);
      if (ended >= 0)
        while (waitpid (walker, NULL, 0) < 0 && errno == EINTR)
          ;
    }
  if (ended >= 0)
    {
      /* The view's PID 1 has been reaped, so every process of its PID
       * namespace has ended (the kernel kills and reaps them all before
       * PID 1's end is reported), and nothing of the operation runs any
       * more.  What is left is the view's child of main, ending: the
       * teardown of its mount namespace (the overlays and their dentries,
       * the mask, the tmpfs mounts: 2-7 ms), which need not hold glimpse's
       * commit.  It ends in the operation's cgroups, which glimpse removes
       * once they are empty (gl_pkg_limits_free), after the commit: nothing
       * of the operation outlives glimpse. */
      st = W_EXITCODE (ended, 0);
      close (pidfd);
    }
  else
    {
      if (waitpid (child, &st, 0) < 0)
        die_errno ("waitpid");
      close (pidfd);
      /* A stopped operation's first process comes here (we are its
       * subreaper), and ends only once every process of its namespace
       * has */
      for (;;)
        if (waitpid (-1, NULL, 0) < 0 && errno != EINTR)
          break;
    }
  /* what it reached at its very end: it fails all the same */
  if (stopped_by == NULL && limited)
    stopped_by = limit_reached (false);
  if (stopped_by != NULL)
    exit_at_limit (stopped_by);
  if (walk_failed >= 0)
    _exit (walk_failed);
  return st;
}

/* ----------------------------------------------------- file systems */

static bool
is_untrusted_fs (const char *fstype)
{
  static const char *bad[] = { "fuse", "fuseblk", "nfs", "nfs4", "cifs", "smb3", "9p",
                               "sshfs", "ceph", "glusterfs", "afs", "virtiofs", NULL };
  if (strncmp (fstype, "fuse.", 5) == 0)
    return true;
  for (int i = 0; bad[i]; i++)
    if (strcmp (fstype, bad[i]) == 0)
      return true;
  return false;
}

/* Where the host's / spans several file systems, the ones a package
 * manager writes or reads must be in the view.  Only hosts where those
 * directories are on the / file system are handled for now: a separate
 * /usr, /etc, /var, /var/lib, /opt… is refused by name (never silently run
 * as the host's root), a FUSE or network / too.  Mounts further down
 * (/var/lib/docker, /var/tmp/…) are not in the view: it shows the
 * directory under them. */
static void
check_host_mounts (void)
{
  static const char *needed[] = { "/usr", "/usr/local", "/etc", "/var", "/var/lib",
                                  "/var/lib/dpkg", "/var/lib/apt", "/var/cache", "/var/cache/apt",
                                  "/var/log", "/opt", "/bin", "/sbin", "/lib", "/lib32", "/lib64",
                                  "/libx32", NULL };
  struct libmnt_table *tb = mnt_new_table ();
  struct libmnt_iter *it = mnt_new_iter (MNT_ITER_FORWARD);
  struct libmnt_fs *fs;

  if (tb == NULL || it == NULL || mnt_table_parse_mtab (tb, "/proc/self/mountinfo") != 0)
    die ("cannot read the mount table (/proc/self/mountinfo)");
  while (mnt_table_next_fs (tb, it, &fs) == 0)
    {
      const char *target = mnt_fs_get_target (fs);
      const char *type = mnt_fs_get_fstype (fs);
      if (target == NULL || type == NULL)
        die ("cannot read the mount table (/proc/self/mountinfo)");
      if (strcmp (target, "/") == 0)
        {
          if (is_untrusted_fs (type))
            die ("/ is on a %s file system, which cannot be idmapped into the package namespace",
                 type);
          continue;
        }
      for (int i = 0; needed[i]; i++)
        if (strcmp (target, needed[i]) == 0)
          {
            if (is_untrusted_fs (type))
              die ("%s is on a %s file system, which cannot be idmapped into the package "
                   "namespace; package operations on a host sandbox need it on a local file system",
                   target, type);
            die ("%s is a separate file system (%s): package operations on a host sandbox "
                 "support a host whose /usr, /etc, /var and /opt are on the / file system only",
                 target, type);
          }
    }
  mnt_free_iter (it);
  mnt_unref_table (tb);
}

/* A user namespace mapping 0…65535 to the range, as a descriptor. */
static int
make_userns (void)
{
  int go[2], done[2];
  pid_t pid, parent;
  char path[64], map[64];
  int fd;
  char c;

  if (pipe2 (go, O_CLOEXEC) != 0 || pipe2 (done, O_CLOEXEC) != 0)
    die_errno ("pipe");
  parent = getpid ();
  pid = fork_or_limit ();
  if (pid == 0)
    {
      prctl (PR_SET_PDEATHSIG, SIGKILL);
      if (getppid () != parent)
        _exit (1);
      close (go[0]);
      close (done[1]);
      if (unshare (CLONE_NEWUSER) != 0)
        _exit (1);
      if (write (go[1], "x", 1) != 1)
        _exit (1);
      (void) !read (done[0], &c, 1);
      _exit (0);
    }
  close (go[1]);
  close (done[0]);
  if (read (go[0], &c, 1) != 1)
    die ("cannot create a user namespace (is kernel.unprivileged_userns_clone or "
         "user.max_user_namespaces 0?)");
  snprintf (path, sizeof path, "/proc/%d/uid_map", (int) pid);
  snprintf (map, sizeof map, "0 %u %u\n", (unsigned) A.uid, RANGE);
  write_file (path, map);
  snprintf (path, sizeof path, "/proc/%d/gid_map", (int) pid);
  snprintf (map, sizeof map, "0 %u %u\n", (unsigned) A.gid, RANGE);
  write_file (path, map);
  snprintf (path, sizeof path, "/proc/%d/ns/user", (int) pid);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    die_errno ("cannot open %s", path);
  close (done[1]);
  waitpid (pid, NULL, 0);
  close (go[0]);
  return fd;
}

/* The base, idmapped into the namespace, as a detached mount: read-only,
 * or (--tree) the command's writable root, nosuid as well. */
static int
idmapped_clone (const char *path, int userns)
{
  struct mount_attr attr = {
    .attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_NODEV
                | (A.tree ? MOUNT_ATTR_NOSUID : MOUNT_ATTR_RDONLY),
    .userns_fd = (__u64) userns,
  };
  struct statfs sfs;
  int fd = (int) syscall (SYS_open_tree, AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  if (fd < 0)
    die_errno ("cannot clone %s", path);
  if (syscall (SYS_mount_setattr, fd, "", AT_EMPTY_PATH, &attr, sizeof attr) != 0)
    {
      int errsv = errno;
      if (fstatfs (fd, &sfs) == 0)
        fprintf (stderr, "%s: (file-system magic 0x%lx)\n", prog, (unsigned long) sfs.f_type);
      errno = errsv;
      die_errno ("cannot idmap %s into the package namespace (its file system does not "
                 "support idmapped mounts; FUSE and most network file systems do not)", path);
    }
  return fd;
}

/* ------------------------------------------------ inside the namespace */

static int
fs_fd (const char *type)
{
  int fd = (int) syscall (SYS_fsopen, type, FSOPEN_CLOEXEC);
  if (fd < 0)
    die_errno ("cannot use %s", type);
  return fd;
}

static void __attribute__((noreturn))
die_fs (int fs, const char *what)
{
  int errsv = errno;
  char log[512];
  ssize_t n = read (fs, log, sizeof log - 1);
  if (n > 0)
    {
      log[n] = '\0';
      if (log[n - 1] == '\n')
        log[n - 1] = '\0';
      die ("%s: %s (%s)", what, strerror (errsv), log);
    }
  errno = errsv;
  die_errno ("%s", what);
}

static void
set_string (int fs, const char *key, const char *value, const char *what)
{
  if (syscall (SYS_fsconfig, fs, FSCONFIG_SET_STRING, key, value, 0) != 0)
    die_fs (fs, what);
}

static int
make_mount (int fs, unsigned attrs, const char *what)
{
  int m;
  if (syscall (SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) != 0)
    die_fs (fs, what);
  m = (int) syscall (SYS_fsmount, fs, FSMOUNT_CLOEXEC, attrs);
  if (m < 0)
    die_fs (fs, what);
  close (fs);
  return m;
}

static void
attach_at (int mnt, const char *path)
{
  if (syscall (SYS_move_mount, mnt, "", AT_FDCWD, path, MOVE_MOUNT_F_EMPTY_PATH) != 0)
    die_errno ("cannot mount %s", path);
  close (mnt);
}

/* SIZE bounds what the command can pin in memory there: tmpfs pages are
 * not freed by killing processes, only when the operation's namespace
 * ends.  The writable ones add up to 30% of the host's memory at most. */
static void
mount_tmpfs (const char *path, const char *mode, bool ro, const char *size)
{
  int fs = fs_fd ("tmpfs");
  set_string (fs, "mode", mode, path);
  set_string (fs, "size", size, path);
  attach_at (make_mount (fs, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (ro ? MOUNT_ATTR_RDONLY : 0),
                         path), path);
}

static bool
is_dir (const char *path)
{
  struct stat st;
  return lstat (path, &st) == 0 && S_ISDIR (st.st_mode);
}

static void
bind_dev (const char *name)
{
  char src[64], dst[64];
  int fd, tree;
  snprintf (src, sizeof src, "/dev/%s", name);
  snprintf (dst, sizeof dst, "dev/%s", name);
  fd = open (dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    die_errno ("cannot create /%s", dst);
  close (fd);
  tree = (int) syscall (SYS_open_tree, AT_FDCWD, src, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  if (tree < 0)
    die_errno ("cannot clone %s", src);
  attach_at (tree, dst);
}

static void
build_dev (void)
{
  static const char *devs[] = { "null", "zero", "full", "random", "urandom", "tty", NULL };
  static const struct { const char *name, *target; } links[] = {
    { "fd", "/proc/self/fd" }, { "stdin", "/proc/self/fd/0" }, { "stdout", "/proc/self/fd/1" },
    { "stderr", "/proc/self/fd/2" }, { "ptmx", "pts/ptmx" }, { "core", "/proc/kcore" },
  };
  int fs, pts;

  fs = fs_fd ("tmpfs");
  set_string (fs, "mode", "0755", "/dev");
  set_string (fs, "size", "1m", "/dev");
  attach_at (make_mount (fs, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, "/dev"), "dev");
  for (int i = 0; devs[i]; i++)
    bind_dev (devs[i]);
  for (size_t i = 0; i < sizeof links / sizeof *links; i++)
    if (i != 5 && symlinkat (links[i].target, AT_FDCWD, xasprintf ("dev/%s", links[i].name)) != 0)
      die_errno ("cannot create /dev/%s", links[i].name);
  if (mkdir ("dev/pts", 0755) != 0 || mkdir ("dev/shm", 01777) != 0)
    die_errno ("cannot create /dev/pts");
  fs = fs_fd ("devpts");
  pts = -1;
  if (syscall (SYS_fsconfig, fs, FSCONFIG_SET_FLAG, "newinstance", NULL, 0) == 0)
    {
      set_string (fs, "ptmxmode", "0666", "/dev/pts");
      set_string (fs, "mode", "0620", "/dev/pts");
      pts = make_mount (fs, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, "/dev/pts");
      attach_at (pts, "dev/pts");
    }
  mount_tmpfs ("dev/shm", "01777", false, "5%");
}

static void
mount_proc (void)
{
  int fs = fs_fd ("proc");
  attach_at (make_mount (fs, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, "/proc"),
             "proc");
}

static void
mount_sys_ro (void)
{
  struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID
                             | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC };
  int t = (int) syscall (SYS_open_tree, AT_FDCWD, "/sys",
                         OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
  if (t < 0)
    die_errno ("cannot clone /sys");
  if (syscall (SYS_mount_setattr, t, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) != 0)
    die_errno ("cannot make /sys read-only");
  attach_at (t, "sys");
}

/* The host's resolver configuration, as a copy in the stage. */
static void
copy_resolv (const char *stage_file)
{
  char buf[65536];
  ssize_t n = 0;
  int in = open ("/etc/resolv.conf", O_RDONLY | O_CLOEXEC), out;
  if (in >= 0)
    {
      n = read (in, buf, sizeof buf);
      close (in);
    }
  out = open (stage_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0 || (n > 0 && write (out, buf, (size_t) n) != n))
    die_errno ("cannot copy /etc/resolv.conf");
  close (out);
}

static void
bind_file_over (int src, const char *dst)
{
  int t = (int) syscall (SYS_open_tree, src, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
  if (t < 0)
    die_errno ("cannot clone the resolver configuration");
  attach_at (t, dst);
}

/* Resolver: bind the copy over etc/resolv.conf when that is a file; when it
 * is a link into /run (systemd-resolved), put the copy where it points. */
static void
place_resolv (int copy)
{
  struct stat st;
  char target[4096];
  ssize_t n;
  if (lstat ("etc/resolv.conf", &st) != 0)
    return;
  if (S_ISREG (st.st_mode))
    {
      bind_file_over (copy, "etc/resolv.conf");
      return;
    }
  if (!S_ISLNK (st.st_mode) || (n = readlink ("etc/resolv.conf", target, sizeof target - 1)) <= 0)
    return;
  target[n] = '\0';
  if (strncmp (target, "/run/", 5) == 0 && strstr (target, "..") == NULL)
    {
      char *dir = strdup (target + 1), *slash;
      int fd;
      for (slash = strchr (dir, '/'); slash; slash = strchr (slash + 1, '/'))
        {
          *slash = '\0';
          mkdir (dir, 0755);
          *slash = '/';
        }
      free (dir);
      fd = open (target + 1, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
      if (fd >= 0)
        close (fd);
      bind_file_over (copy, target + 1);
    }
}

/* open_tree_attr (Linux 6.15) is open_tree and mount_setattr in one call:
 * the namespace's root owns the operation's mount namespace, so with it a
 * script would clone the view's / without the tmpfs mounts that cover its
 * /tmp, /run… (the host's, below), or clear read-only, nosuid and noexec on
 * a clone of /sys.  Its number is the same on every architecture; libc's
 * headers may not know it yet. */
#ifdef SYS_open_tree_attr
# define NR_open_tree_attr SYS_open_tree_attr
#else
# define NR_open_tree_attr 467
#endif

/* System calls a package manager never needs and that widen the kernel's
 * surface; EPERM for the native ABI, ENOSYS for any other, and ENOSYS for
 * every call newer than this list (above NR_open_tree_attr: since 5.1
 * the numbers are the same on every architecture): a kernel newer than
 * this program may add a call like open_tree_attr, which the list cannot
 * name, and ENOSYS is what libc falls back from ("not in this kernel"). */
#if defined(__x86_64__) || defined(__aarch64__)
/* (the architectures install_seccomp has a filter for) Appends to F (at K) the filter's refusal (EPERM) of system call NR when
 * its mode argument (at offset ARG of struct seccomp_data) makes a FIFO
 * (the accumulator holds the call's number before; any other mode of NR is
 * allowed).  Returns the new K. */
static size_t
filter_no_fifo (struct sock_filter *f, size_t k, unsigned nr, unsigned arg)
{
  f[k++] = (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 5);
  f[k++] = (struct sock_filter) BPF_STMT (BPF_LD | BPF_W | BPF_ABS, arg);
  f[k++] = (struct sock_filter) BPF_STMT (BPF_ALU | BPF_AND | BPF_K, S_IFMT);
  f[k++] = (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, S_IFIFO, 0, 1);
  f[k++] = (struct sock_filter) BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
  f[k++] = (struct sock_filter) BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  return k;
}
#endif

static void
install_seccomp (void)
{
#if defined(__x86_64__)
# define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
# define NATIVE_ARCH AUDIT_ARCH_AARCH64
#endif
#ifdef NATIVE_ARCH
  static const int denied[] = {
    SYS_kexec_load, SYS_kexec_file_load, SYS_init_module, SYS_finit_module, SYS_delete_module,
    SYS_bpf, SYS_perf_event_open, SYS_userfaultfd, SYS_keyctl, SYS_add_key, SYS_request_key,
    SYS_open_by_handle_at, SYS_name_to_handle_at, SYS_ptrace, SYS_process_vm_readv,
    SYS_process_vm_writev, SYS_swapon, SYS_swapoff, SYS_reboot, SYS_acct, SYS_quotactl,
    SYS_setns, SYS_unshare, SYS_fsopen, SYS_fsmount, SYS_fspick, SYS_open_tree,
    SYS_move_mount, SYS_mount_setattr, SYS_mount, SYS_umount2, SYS_pivot_root, SYS_chroot,
    SYS_syslog, SYS_lookup_dcookie, SYS_io_uring_setup, NR_open_tree_attr,
#ifdef SYS_iopl
    SYS_iopl, SYS_ioperm,
#endif
  };
  enum { N = sizeof denied / sizeof *denied };
  struct sock_filter f[8 + 2 * N + 20];
  size_t k = 0;
  /* clone/clone3 with new namespaces: refused (CLONE_NEW* bits) */
  const unsigned ns_flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET
                            | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWCGROUP;

  f[k++] = (struct sock_filter) BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, arch));
  f[k++] = (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 1, 0);
  f[k++] = (struct sock_filter) BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS);
  f[k++] = (struct sock_filter) BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr));
#ifdef __x86_64__
  /* x32 system calls through the native arch */
  f[k++] = (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1);
  f[k++] = (struct sock_filter) BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS);
#endif
  /* newer than the list */
  f[k++] = (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JGT | BPF_K, NR_open_tree_attr, 0, 1);
  f[k++] = (struct sock_filter) BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS);
  for (int i = 0; i < N; i++)
    {
      f[k++] = (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, (unsigned) denied[i], 0, 1);
      f[k++] = (struct sock_filter) BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
    }
  /* mknodat (mode in arg 2), mknod (arg 1): no FIFO.  A FIFO left in the
   * sandbox blocks whoever opens it to read, with no writer ever coming:
   * one in /usr/share/applications hung update-desktop-database (the
   * desktop-file-utils trigger) in this operation and in every later one.
   * No package needs one in its files or at install time; a package that
   * ships one fails to unpack (EPERM), which dpkg names.  (Whiteouts, 0/0
   * character devices, are still made.) */
  k = filter_no_fifo (f, k, SYS_mknodat, offsetof (struct seccomp_data, args[2]));
#ifdef SYS_mknod
  k = filter_no_fifo (f, k, SYS_mknod, offsetof (struct seccomp_data, args[1]));
#endif
  /* clone (flags in arg 0): no new namespaces.  clone3 passes a struct the
   * filter cannot read: ENOSYS makes libc fall back to clone. */
  f[k++] = (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1);
  f[k++] = (struct sock_filter) BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS);
  f[k++] = (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 3);
  f[k++] = (struct sock_filter) BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, args[0]));
  f[k++] = (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JSET | BPF_K, ns_flags, 0, 1);
  f[k++] = (struct sock_filter) BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
  f[k++] = (struct sock_filter) BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  {
    struct sock_fprog prog_ = { .len = (unsigned short) k, .filter = f };
    if (prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog_) != 0)
      die_errno ("cannot install the seccomp filter");
  }
#endif
}

static int
status_code (int st)
{
  if (WIFEXITED (st))
    return WEXITSTATUS (st);
  if (WIFSIGNALED (st))
    return 128 + WTERMSIG (st);
  return EXIT_SETUP;
}

/* A network namespace of the process's own (owned by the package
 * namespace): only its own loopback, up, nothing of the host's. */
static void
private_network (void)
{
  struct ifreq ifr;
  int s;

  if (unshare (CLONE_NEWNET) != 0)
    die_errno ("cannot create the package operation's network namespace");
  s = socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0)
    die_errno ("cannot configure the package operation's network");
  memset (&ifr, 0, sizeof ifr);
  snprintf (ifr.ifr_name, sizeof ifr.ifr_name, "lo");
  if (ioctl (s, SIOCGIFFLAGS, &ifr) != 0)
    die_errno ("cannot configure the package operation's loopback");
  ifr.ifr_flags |= IFF_UP;
  if (ioctl (s, SIOCSIFFLAGS, &ifr) != 0)
    die_errno ("cannot configure the package operation's loopback");
  close (s);
}

/* The relay: in the operation's network namespace, every connection to
 * 127.0.0.1:PROXY_PORT goes to glimpse's proxy, outside, as a descriptor
 * (SCM_RIGHTS over --proxy-fd).  It reads and writes nothing of the
 * connection and holds nothing else: taking it over gains the command
 * nothing it does not have.  Not dumpable, so the namespace's root (whose
 * command has no CAP_SYS_PTRACE over a process of the host's user
 * namespace) cannot write into it through /proc/PID/mem.  Dies with the
 * stage (kill of the PID namespace). */
static pid_t
start_relay (void)
{
  struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons (PROXY_PORT),
                              .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  int one = 1;
  pid_t pid;
  int l = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

  if (l < 0 || setsockopt (l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0
      || bind (l, (struct sockaddr *) &addr, sizeof addr) != 0 || listen (l, 128) != 0)
    die_errno ("cannot listen on 127.0.0.1:%d inside the package operation", PROXY_PORT);
  pid = fork ();
  if (pid < 0)
    die_errno ("fork");
  if (pid == 0)
    {
      prctl (PR_SET_DUMPABLE, 0);
      prctl (PR_SET_PDEATHSIG, SIGKILL);
      signal (SIGPIPE, SIG_IGN);
      for (;;)
        {
          char byte = 'c';
          struct iovec iov = { &byte, 1 };
          union { struct cmsghdr h; char buf[CMSG_SPACE (sizeof (int))]; } u;
          struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                              .msg_controllen = sizeof u.buf };
          struct cmsghdr *h;
          int c = accept4 (l, NULL, NULL, SOCK_CLOEXEC);
          if (c < 0)
            {
              if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE || errno == ENFILE)
                continue;
              _exit (1);
            }
          memset (u.buf, 0, sizeof u.buf);
          h = CMSG_FIRSTHDR (&m);
          h->cmsg_level = SOL_SOCKET;
          h->cmsg_type = SCM_RIGHTS;
          h->cmsg_len = CMSG_LEN (sizeof (int));
          memcpy (CMSG_DATA (h), &c, sizeof c);
          while (sendmsg (A.proxy_fd, &m, MSG_NOSIGNAL) < 0)
            if (errno != EINTR)
              _exit (0);   /* glimpse stopped serving */
          close (c);
        }
    }
  close (l);
  if (A.net_until_cut)
    {
      /* PID 1's own copy, for the cut (cut_network); never the command's */
      if (fcntl (A.proxy_fd, F_SETFD, FD_CLOEXEC) != 0)
        die_errno ("cannot keep glimpse's download channel");
    }
  else
    {
      close (A.proxy_fd);
      A.proxy_fd = -1;
    }
  return pid;
}

/* Starts the command (GLIMPSE_STAGE=STAGE); its pid. */
static pid_t
spawn_command (const char *stage, bool proxied)
{
  pid_t child;

  child = fork ();
  if (child < 0)
    die_errno ("fork");
  if (child == 0)
    {
      char *env[] = {
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "HOME=/root", "LANG=C.UTF-8", "LC_ALL=C.UTF-8", "DEBIAN_FRONTEND=noninteractive",
        "DEBCONF_NONINTERACTIVE_SEEN=true", "APT_LISTCHANGES_FRONTEND=none", "TERM=dumb",
        "container=glimpse", xasprintf ("GLIMPSE_STAGE=%s", stage), NULL, NULL, NULL, NULL, NULL,
      };
      if (proxied)
        {
          /* for pacman, apk, dnf (libcurl); apt gets its own option */
          size_t k = 10;
          env[k++] = "http_proxy=" PROXY_URL;
          env[k++] = "https_proxy=" PROXY_URL;
          env[k++] = "HTTPS_PROXY=" PROXY_URL;
          env[k++] = "GLIMPSE_PROXY=" PROXY_URL;
        }
      setsid ();
      signal (SIGPIPE, SIG_DFL);
      {
        /* (PID 1 blocks SIGCHLD for its signalfd: run_until_cut) */
        sigset_t none;
        sigemptyset (&none);
        sigprocmask (SIG_SETMASK, &none, NULL);
      }
      {
        /* A fork bomb stays small (per uid: the range's root); where
         * glimpse found a pids cgroup, that one counts every task of the
         * operation and is the limit that is reported (pids.events), so
         * this one is set a little above it: a fork counts against
         * RLIMIT_NPROC before it is charged to the cgroup, and with
         * forks racing on several processors the rlimit alone could
         * refuse them all, the limit then going unnamed */
        rlim_t n = (rlim_t) A.max_tasks;
        struct rlimit nproc;
        if (pids_cgroup)
          n += 16 + n / 8;
        nproc.rlim_cur = nproc.rlim_max = n;
        if (A.max_tasks > 0)
          setrlimit (RLIMIT_NPROC, &nproc);
      }
      if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        die_errno ("no_new_privs");
      install_seccomp ();
      syscall (SYS_close_range, 3, ~0U, 0);
      execve (A.command[0], A.command, env);
      die_errno ("cannot run %s inside the sandbox", A.command[0]);
    }
  return child;
}

/* Runs the command once (GLIMPSE_STAGE=STAGE) and reaps every process
 * until it exits; its wait status. */
static int
run_stage (const char *stage, bool proxied)
{
  pid_t child = spawn_command (stage, proxied);
  int st;

  for (;;)
    {
      pid_t p = wait (&st);
      if (p == child)
        return st;
      if (p < 0 && errno != EINTR)
        _exit (EXIT_SETUP);
    }
}

/* --net-until-cut: the command runs once, with the relay, until it asks
 * PID 1 (this program, trusted) to cut the network; from then on it has
 * no way out at all (THE RULE for the network, at the top).
 *
 * How it asks: two FIFOs PID 1 makes in the view's /run (a tmpfs of this
 * namespace) before the command starts, and holds open itself, O_RDWR and
 * non-blocking: NET_REQUEST (a byte is a request) and NET_ANSWER (a line
 * "offline" per request, once the network is cut).  With PID 1 holding
 * both ends, a writer's and a reader's open never block and nothing is
 * lost between them, and a shell's built-ins are all a hook needs
 * (glimpse's DPkg::Pre-Invoke for apt: gl-pkg.c).  PID 1 opens them once,
 * before the command runs, and never again by name: the command (root of
 * the namespace, like PID 1) may remove or replace them, write to them or
 * fill them, which only ever reaches PID 1's non-blocking reads and
 * writes of the FIFOs it opened.  Before the cut only code that was in
 * the sandbox before the operation runs (the package manager downloads;
 * nothing it downloaded has run), and that code has the network anyway;
 * after the cut a request is answered at once and changes nothing.
 * (Not a descriptor handed down, such as apt's APT::Keep-Fds: dpkg and
 * every maintainer script would inherit it.) */
#define NET_DIR "/run/glimpse-net"
#define NET_REQUEST NET_DIR "/request"
#define NET_ANSWER NET_DIR "/answer"
/* How long PID 1 waits for the proxy to say every connection is closed */
#define CUT_TIMEOUT_MS 15000

static pid_t relay_pid = -1;

/* The cut: the relay killed and reaped (its listener goes with it: a
 * connection to 127.0.0.1:PROXY_PORT is refused from now on); then
 * glimpse's proxy told "offline" over PID 1's copy of --proxy-fd (the
 * relay's peer, which the command never had): it closes every
 * connection it was handed, already queued or being served (the socket
 * in this namespace and the one upstream), refuses any later one, and
 * only then answers.  False if any of it fails. */
static bool
cut_network (void)
{
  struct pollfd p = { A.proxy_fd, POLLIN, 0 };
  char answer = 0;
  int r;

  if (relay_pid > 0)
    {
      kill (relay_pid, SIGKILL);
      while (waitpid (relay_pid, NULL, 0) < 0)
        if (errno != EINTR)
          return false;
      relay_pid = -1;
    }
  if (A.proxy_fd < 0)
    return true;   /* (cut before) */
  if (send (A.proxy_fd, "o", 1, MSG_NOSIGNAL) != 1)
    return false;
  do
    r = poll (&p, 1, CUT_TIMEOUT_MS);
  while (r < 0 && errno == EINTR);
  if (r != 1 || recv (A.proxy_fd, &answer, 1, MSG_DONTWAIT) != 1 || answer != 'k')
    return false;
  close (A.proxy_fd);
  A.proxy_fd = -1;
  return true;
}

static void warm_view (void);

/* Runs the command once with the relay, cutting the network when asked
 * (above), and reaps every process until the command exits; its wait
 * status.  A cut that fails ends the operation: every process of it is
 * killed before anything more runs. */
static int
run_until_cut (void)
{
  sigset_t chld;
  pid_t child;
  bool cut = false;
  int sfd, req, ans;

  if (mkdir (NET_DIR, 0700) != 0 || mkfifo (NET_REQUEST, 0600) != 0 || mkfifo (NET_ANSWER, 0600) != 0)
    die_errno ("cannot create %s", NET_DIR);
  req = open (NET_REQUEST, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
  ans = open (NET_ANSWER, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
  if (req < 0 || ans < 0)
    die_errno ("cannot open %s", NET_DIR);
  sigemptyset (&chld);
  sigaddset (&chld, SIGCHLD);
  if (sigprocmask (SIG_BLOCK, &chld, NULL) != 0
      || (sfd = signalfd (-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK)) < 0)
    die_errno ("signalfd");
  child = spawn_command ("run", true);
  for (;;)
    {
      struct pollfd p[2] = { { sfd, POLLIN, 0 }, { req, POLLIN, 0 } };
      char buf[256];
      ssize_t n;

      if (poll (p, 2, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          die_errno ("poll");
        }
      if (p[0].revents)
        {
          struct signalfd_siginfo si;
          int st;
          pid_t w;
          while (read (sfd, &si, sizeof si) > 0)
            ;
          while ((w = waitpid (-1, &st, WNOHANG)) > 0)
            {
              if (w == relay_pid)
                relay_pid = -1;
              if (w == child)
                return st;
            }
        }
      if (!p[1].revents || (n = read (req, buf, sizeof buf)) <= 0)
        continue;
      if (!cut)
        {
          if (!cut_network ())
            {
              fprintf (stderr, "%s: could not cut the package operation's network before it installs "
                       "(glimpse's download proxy did not confirm); stopping it\n", prog);
              kill (-1, SIGKILL);
              while (wait (NULL) > 0 || errno == EINTR)
                ;
              _exit (EXIT_SETUP);
            }
          cut = true;
          warm_view ();
        }
      for (ssize_t i = 0; i < n; i++)
        if (write (ans, "offline\n", 8) != 8)
          break;   /* (full: whoever filled it reads these) */
    }
}

/* The mask is built by a process of its own (start_mask) while the
 * namespaces and the first mounts of the view are made; the view waits
 * here until its parent has seen that process succeed (a byte on MASK_GO):
 * nothing of the view that the mask covers is mounted before.  At EOF
 * (the walk failed and said why, or glimpse-pkgns died) the operation
 * ends.  Called only where there is a base to mask (not for --tree): a
 * view without the pipe would mount the base unmasked, so it refuses. */
static void
wait_for_mask (void)
{
  char c;
  ssize_t n;

  if (mask_go[0] < 0)
    die ("internal error: no go-ahead for the mask of %s; refusing to build the view", A.base);
  while ((n = read (mask_go[0], &c, 1)) < 0 && errno == EINTR)
    ;
  if (n != 1)
    _exit (EXIT_SETUP);
  close (mask_go[0]);
  mask_go[0] = -1;
}

/* Mounts the base overlay of "base" (the idmapped clone) on "host", both
 * in the working directory, as BASE_READER_ID (above): in a child of its
 * own, whose credentials the overlay keeps. */
static void
mount_base_overlay (void)
{
  pid_t pid = fork ();
  int st;

  if (pid < 0)
    die_errno ("fork");
  if (pid == 0)
    {
      struct __user_cap_header_struct head = { _LINUX_CAPABILITY_VERSION_3, 0 };
      struct __user_cap_data_struct caps[_LINUX_CAPABILITY_U32S_3];
      int fs;

      memset (caps, 0, sizeof caps);
      caps[CAP_TO_INDEX (CAP_SYS_ADMIN)].permitted = CAP_TO_MASK (CAP_SYS_ADMIN);
      caps[CAP_TO_INDEX (CAP_SYS_ADMIN)].effective = CAP_TO_MASK (CAP_SYS_ADMIN);
      if (prctl (PR_SET_KEEPCAPS, 1) != 0 || setgroups (0, NULL) != 0
          || setresgid (BASE_READER_ID, BASE_READER_ID, BASE_READER_ID) != 0
          || setresuid (BASE_READER_ID, BASE_READER_ID, BASE_READER_ID) != 0
          || syscall (SYS_capset, &head, caps) != 0)
        die_errno ("cannot take the base's reader's credentials");
      /* (relative: the directories above the scratch need not be
       * searchable by this user) */
      fs = fs_fd ("overlay");
      set_string (fs, "lowerdir", "base:empty", "cannot wrap the base in an overlay");
      if (syscall (SYS_fsconfig, fs, FSCONFIG_SET_FLAG, "userxattr", NULL, 0) != 0)
        die_fs (fs, "cannot wrap the base in an overlay");
      attach_at (make_mount (fs, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV,
                             "cannot wrap the base in an overlay"), "host");
      _exit (0);
    }
  if (waitpid (pid, &st, 0) < 0 || !WIFEXITED (st) || WEXITSTATUS (st) != 0)
    die ("the base's overlay could not be mounted: refusing to build the view");
}

/* At root/ of the stage (the working directory): the overlay of the
 * operation's upper over the system generations, the mask and the base. */
static void
mount_overlay_view (int base_mnt)
{
  char lowerdir[8192] = "";
  size_t off = 0;
  int fs, root_mnt;

  /* The base is wrapped in an overlay of its own, the base overlay, which
   * reads it as every user of the host would (see "the check at open");
   * for the host's / also because overlayfs refuses a layer (the store's
   * directories) inside another layer (/). */
  if (mkdir ("base", 0755) != 0)
    die_errno ("cannot prepare %s/stage", A.op);
  attach_at (base_mnt, "base");
  mount_base_overlay ();
  wait_for_mask ();

  /* (the mask in memory, mask_memory, or <op>/mask) */
  if (mask_mnt >= 0)
    {
      if (mkdir ("mask", 0755) != 0)
        die_errno ("cannot prepare %s/stage", A.op);
      attach_at (mask_mnt, "mask");
    }
  for (int i = 0; i < A.n_lowers; i++)
    off += (size_t) snprintf (lowerdir + off, sizeof lowerdir - off, "%s:", A.lowers[i]);
  snprintf (lowerdir + off, sizeof lowerdir - off, "%s/%s:%s/stage/host", A.op,
            mask_mnt >= 0 ? "stage/mask" : "mask", A.op);
  fs = fs_fd ("overlay");
  set_string (fs, "lowerdir", lowerdir, "cannot build the package view");
  set_string (fs, "upperdir", xasprintf ("%s/upper", A.op), "cannot build the package view");
  set_string (fs, "workdir", xasprintf ("%s/work", A.op), "cannot build the package view");
  if (syscall (SYS_fsconfig, fs, FSCONFIG_SET_FLAG, "userxattr", NULL, 0) != 0)
    die_fs (fs, "cannot build the package view");
  /* No sync of the upper layer: neither the package manager's fsyncs
   * (dpkg's database, some 25 per install) nor the sync of the whole file
   * system under it when the view is unmounted.  Nothing of the operation
   * counts until glimpse's commit, which makes the new generation durable
   * itself (its files' data, then `current`); a crash before discards the
   * upper layer whatever it holds.  (Before Linux 5.10: synced as before.) */
  if (syscall (SYS_fsconfig, fs, FSCONFIG_SET_FLAG, "volatile", NULL, 0) != 0)
    {
      char log[512];
      while (read (fs, log, sizeof log) > 0)
        ;   /* (its message is not a later failure's) */
    }
  root_mnt = make_mount (fs, MOUNT_ATTR_NODEV, "cannot build the package view (overlay)");
  attach_at (root_mnt, "root");
}

/* The view is new at every operation, and so are its overlays' dentries:
 * the first look-up of every path goes through each layer (the upper
 * one, the generations, the base overlay's own), where a chroot's
 * long-mounted tree has them at hand.  dpkg's first act, to install or
 * to remove, is to read the file list of every installed package
 * (/var/lib/dpkg/info: some 1,100 on this desktop host; ~150 ms of
 * dpkg's unpack on pkg-bench's sandbox, 20 ms of them these look-ups).
 * So a child of PID 1 looks those files up once, at SCHED_IDLE (on a CPU
 * nothing else wants), a few ms of work: before a command that has no
 * network, or at the network's cut (run_until_cut: apt asks for it just
 * before it runs dpkg, debconf's preconfiguring first) -- not for an
 * update with nothing to install, which never runs dpkg.  By the time
 * dpkg reads them they are found at once.  It reads nothing but their
 * names and attributes, which the command may read too; it ends with the
 * stage (PID 1's namespace), and is only reaped (PID 1's loops wait for
 * the command, by pid). */
static void
warm_view (void)
{
  static const char info[] = "var/lib/dpkg/info";
  pid_t pid;
  DIR *d;
  struct dirent *e;
  struct stat st;

  if (!is_dir (info))
    return;
  pid = fork ();
  if (pid != 0)
    return;   /* (PID 1; or no warming) */
  /* (as the relay: not dumpable whatever fs.suid_dumpable says, so the
   * command has no way into it through /proc/PID) */
  prctl (PR_SET_DUMPABLE, 0);
  prctl (PR_SET_PDEATHSIG, SIGKILL);
  (void) sched_setscheduler (0, SCHED_IDLE, &(struct sched_param) { 0 });
  d = opendir (info);
  while (d != NULL && (e = readdir (d)) != NULL)
    {
      size_t n = strlen (e->d_name);
      if (n > 5 && strcmp (e->d_name + n - 5, ".list") == 0)
        (void) fstatat (dirfd (d), e->d_name, &st, AT_SYMLINK_NOFOLLOW);
    }
  _exit (0);
}

/* PID 1 of the operation's PID namespace, in its own mount namespace:
 * builds the view, starts the command and reaps until it exits.
 * PARENT_FD: a pidfd of its parent (the view's child of main), which may
 * have ended before the parent-death signal was set: its parent is outside
 * the namespace, where getppid () says 0 whoever it is. */
static void __attribute__((noreturn))
run_init (int base_mnt, int input_mnt, int cache_mnt, int parent_fd)
{
  char *stage = xasprintf ("%s/stage", A.op);
  struct pollfd parent = { parent_fd, POLLIN, 0 };
  int resolv;
  int st;

  prctl (PR_SET_PDEATHSIG, SIGKILL);
  if (poll (&parent, 1, 0) != 0)
    _exit (EXIT_SETUP);
  close (parent_fd);
  /* THE RULE for the network (see the top): every stage, its own (made
   * first: nothing of the view needs it, and the view waits for the mask
   * meanwhile, wait_for_mask) */
  private_network ();
  if (mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
    die_errno ("cannot make the mount namespace private");
  /* (the working directory is the scratch: see main) */
  mount_tmpfs ("stage", "0755", false, "16m");
  if (chdir ("stage") != 0 || mkdir ("host", 0755) != 0 || mkdir ("empty", 0755) != 0
      || mkdir ("root", 0755) != 0)
    die_errno ("cannot prepare %s", stage);
  copy_resolv ("resolv.conf");
  resolv = open ("resolv.conf", O_PATH | O_CLOEXEC);
  if (resolv < 0)
    die_errno ("cannot copy /etc/resolv.conf");

  if (A.tree)
    {
      /* --tree: the tree itself is /, no base of the host's */
      attach_at (base_mnt, "root");
    }
  else
    mount_overlay_view (base_mnt);

  if (chdir ("root") != 0)
    die_errno ("cannot enter the view");
  if (!is_dir ("proc") || !is_dir ("dev") || !is_dir ("sys") || !is_dir ("tmp") || !is_dir ("etc"))
    die ("the sandbox's tree lacks /proc, /dev, /sys, /tmp or /etc (or has links there); "
         "it is not a usable root file system");
  mount_proc ();
  mount_sys_ro ();
  build_dev ();
  mount_tmpfs ("tmp", "01777", false, "10%");
  if (is_dir ("var/tmp"))
    mount_tmpfs ("var/tmp", "01777", false, "5%");
  if (is_dir ("run"))
    {
      mount_tmpfs ("run", "0755", false, "5%");
      if (mkdir ("run/lock", 01777) != 0 || chmod ("run/lock", 01777) != 0)
        die_errno ("cannot create /run/lock");
    }
  else if (A.net_until_cut)
    die ("the sandbox's tree has no /run directory, where the package manager asks for the network "
         "to be cut (--net-until-cut)");
  /* No homes, no root's files, no removable media. */
  if (is_dir ("home"))
    mount_tmpfs ("home", "0755", true, "1m");
  if (is_dir ("root"))
    mount_tmpfs ("root", "0700", false, "5%");
  if (is_dir ("mnt"))
    mount_tmpfs ("mnt", "0755", true, "1m");
  if (is_dir ("media"))
    mount_tmpfs ("media", "0755", true, "1m");
  if (input_mnt >= 0 && is_dir ("run"))
    {
      if (mkdir ("run/glimpse-input", 0755) != 0)
        die_errno ("cannot show %s inside", A.input);
      attach_at (input_mnt, "run/glimpse-input");
    }
  if (cache_mnt >= 0 && is_dir ("run"))
    {
      if (mkdir ("run/glimpse-cache", 0755) != 0)
        die_errno ("cannot show %s inside", A.cache);
      attach_at (cache_mnt, "run/glimpse-cache");
    }
  place_resolv (resolv);
  close (resolv);

  if (syscall (SYS_pivot_root, ".", ".") != 0)
    die_errno ("pivot_root");
  if (umount2 (".", MNT_DETACH) != 0 || chdir ("/") != 0)
    die_errno ("cannot detach the host's tree");

  if (A.proxy_fd >= 0)
    relay_pid = start_relay ();
  /* (with a cut, at the cut: see warm_view) */
  if (A.net_until_cut)
    _exit (status_code (run_until_cut ()));
  if (A.fetch_stage)
    {
      st = run_stage ("fetch", true);
      if (!WIFEXITED (st) || WEXITSTATUS (st) != 0)
        _exit (status_code (st));
      /* Nothing of the fetch stage lives on into the offline one: the
       * relay goes too, so the apply stage has no way out at all */
      kill (-1, SIGKILL);
      while (wait (NULL) > 0 || errno == EINTR)
        ;
    }
  warm_view ();
  _exit (status_code (run_stage (A.fetch_stage ? "apply" : "run", A.net)));
}

/* --input (read-only) or --cache (writable), cloned by root (the
 * namespace's root need not reach it). */
static int
dir_clone (const char *dir, bool writable)
{
  struct mount_attr attr = { .attr_set = (writable ? 0 : MOUNT_ATTR_RDONLY) | MOUNT_ATTR_NOSUID
                             | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC };
  int t;

  if (dir == NULL)
    return -1;
  t = (int) syscall (SYS_open_tree, AT_FDCWD, dir, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  if (t < 0 || syscall (SYS_mount_setattr, t, "", AT_EMPTY_PATH, &attr, sizeof attr) != 0)
    die_errno ("cannot show %s inside", dir);
  return t;
}

int
main (int argc, char **argv)
{
  int userns, base_mnt, opfd, input_mnt, cache_mnt;
  pid_t pid, self, walker = -1;
  int st;

  if (argc < 1)
    return EXIT_SETUP;
  if (argc == 2 && (strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0))
    {
      fputs (USAGE, stdout);
      return 0;
    }
  if (getuid () != 0 || geteuid () != 0)
    die ("must be run as root by glimpse (and must not be setuid)");
  if (getuid () != geteuid () || getgid () != getegid ())
    die ("must not be setuid");
  parse_args (argc, argv);
  if (A.walk_refresh)
    return walk_refresh ();
  /* When glimpse dies (kill -9), so does everything below. */
  prctl (PR_SET_PDEATHSIG, SIGKILL);
  if (getppid () == 1)
    _exit (EXIT_SETUP);
  clock_gettime (CLOCK_MONOTONIC, &started);
  /* The OOM killer takes a process of the operation, never the one
   * that stops it; it reaps the operation's first process if it is
   * orphaned (see stop_operation) */
  set_oom_score_adj ("-1000");
  if (prctl (PR_SET_CHILD_SUBREAPER, 1) != 0)
    die_errno ("cannot become the operation's subreaper");

  opfd = open (A.op, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (opfd < 0)
    die_errno ("cannot open %s", A.op);
  if (mkdirat (opfd, "stage", 0755) != 0)
    die_errno ("cannot create %s/stage", A.op);
  if (A.host)
    check_host_mounts ();
  /* (a --tree is the new tree's own: nothing of the host's to mask) */
  if (A.tree == NULL)
    {
      base_fd = (int) syscall (SYS_open_tree, AT_FDCWD, A.base, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
      if (base_fd < 0)
        die_errno ("cannot clone %s", A.base);
      mask_mnt = mask_memory ();
      walker = start_mask (opfd);
      close (base_fd);
    }
  /* (before any other fork: see join_cgroups) */
  join_cgroups (walker);
  userns = make_userns ();
  base_mnt = idmapped_clone (A.base, userns);
  input_mnt = dir_clone (A.input, false);
  cache_mnt = dir_clone (A.cache, true);

  if (walker > 0 && pipe2 (mask_go, O_CLOEXEC) != 0)
    die_errno ("pipe");
  if (A.n_cgroups > 0 && pipe2 (view_ended, O_CLOEXEC) != 0)
    die_errno ("pipe");
  self = getpid ();
  pid = fork_or_limit ();
  if (pid == 0)
    {
      int self_fd, code;
      unsigned char byte;
      if (mask_go[1] >= 0)
        close (mask_go[1]);
      if (view_ended[0] >= 0)
        close (view_ended[0]);
      if (mask_ready[0] >= 0)
        close (mask_ready[0]);
      if (walk_wait[1] >= 0)
        close (walk_wait[1]);
      /* (glimpse-pkgns may have ended before this: its parent is then a
       * subreaper above it, or 1) */
      prctl (PR_SET_PDEATHSIG, SIGKILL);
      if (getppid () != self)
        _exit (EXIT_SETUP);
      set_oom_score_adj ("0");
      if (syscall (SYS_setns, userns, CLONE_NEWUSER) != 0)
        die_errno ("cannot enter the package namespace");
      close (userns);
      if (setgroups (0, NULL) != 0 || setresgid (0, 0, 0) != 0 || setresuid (0, 0, 0) != 0)
        die_errno ("cannot become root of the package namespace");
      /* Into the scratch from the descriptor root opened, before the new
       * mount namespace copies the working directory: the directories
       * above it need not be searchable by the namespace's root (a new
       * sandbox's are root's alone until it is defanged). */
      if (fchdir (opfd) != 0)
        die_errno ("cannot enter %s", A.op);
      close (opfd);
      if (unshare (CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP) != 0)
        die_errno ("cannot create the package namespaces");
      self_fd = (int) syscall (SYS_pidfd_open, getpid (), 0);
      if (self_fd < 0)
        die_errno ("pidfd_open");
      pid = fork ();
      if (pid < 0)
        die_errno ("fork");
      if (pid == 0)
        {
          /* (nothing of the namespace may say the operation has ended) */
          if (view_ended[1] >= 0)
            close (view_ended[1]);
          run_init (base_mnt, input_mnt, cache_mnt, self_fd);
        }
      close (self_fd);
      close (base_mnt);
      if (mask_go[0] >= 0)
        close (mask_go[0]);
      if (mask_mnt >= 0)
        close (mask_mnt);
      if (A.proxy_fd >= 0)
        close (A.proxy_fd);
      if (waitpid (pid, &st, 0) < 0)
        _exit (EXIT_SETUP);
      code = status_code (st);
      byte = (unsigned char) code;
      /* (not said, main waits for our end, as without --cgroup) */
      if (view_ended[1] >= 0)
        (void) !write (view_ended[1], &byte, 1);
      _exit (code);
    }
  if (view_ended[1] >= 0)
    close (view_ended[1]);
  close (base_mnt);
  close (userns);
  if (mask_mnt >= 0)
    close (mask_mnt);
  /* (the view's end of the go-ahead; ours is written in supervise(),
   * once the walker has succeeded) */
  if (walker > 0)
    close (mask_go[0]);
  if (A.proxy_fd >= 0)
    close (A.proxy_fd);
  if (input_mnt >= 0)
    close (input_mnt);
  if (cache_mnt >= 0)
    close (cache_mnt);
  return status_code (supervise (pid, walker));
}
