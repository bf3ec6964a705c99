/* glimpse-launch: the mount machinery, from descriptors.  See gl-launch-mount.h.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE

#include "gl-launch-mount.h"
#include "gl-launch-die.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------------------- */
/* Mount tables                                                            */

/* The kernel's mountinfo format (proc(5)), read here rather than through
 * libmount: the launcher needs three fields of it, and linking libmount
 * loaded libmount, libblkid, libselinux and libpcre2 into every launch
 * (and ran libselinux's start-up code as root).  A line is
 *   ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS
 * with single spaces between fields; the kernel writes space, tab, newline
 * and backslash inside a field as \ooo. */

/* Decodes \ooo in S in place; false for an escape the kernel never writes
 * (a NUL byte, which would cut the path short). */
static bool
unescape_field (char *s)
{
  char *w = s;
  for (const char *r = s; *r != '\0';)
    {
      if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7'
          && r[3] >= '0' && r[3] <= '7')
        {
          char c = (char) (((r[1] - '0') << 6) | ((r[2] - '0') << 3) | (r[3] - '0'));
          if (c == '\0')
            return false;
          *w++ = c;
          r += 4;
        }
      else
        *w++ = *r++;
    }
  *w = '\0';
  return true;
}

/* The next field of a mountinfo line at *P (split off in place), or NULL
 * when the line has no more. */
static char *
next_field (char **p)
{
  char *start = *p, *sp;
  if (start == NULL || *start == '\0')
    return NULL;
  sp = strchr (start, ' ');
  if (sp != NULL)
    {
      *sp = '\0';
      *p = sp + 1;
    }
  else
    *p = NULL;
  return start;
}

/* One line (its newline removed): the mount ID, mount point, type, source
 * and superblock options, unescaped; false when the line is not a
 * mountinfo line. */
static bool
parse_mountinfo_line (char *line, char **id, char **target, char **fstype, char **source,
                      char **fsopts)
{
  char *p = line, *f;
  if ((*id = next_field (&p)) == NULL)
    return false;
  for (int i = 0; i < 3; i++)           /* parent, maj:min, root */
    if (next_field (&p) == NULL)
      return false;
  if ((*target = next_field (&p)) == NULL || next_field (&p) == NULL)   /* + options */
    return false;
  do                                    /* optional fields up to "-" */
    if ((f = next_field (&p)) == NULL)
      return false;
  while (strcmp (f, "-") != 0);
  if ((*fstype = next_field (&p)) == NULL || (*source = next_field (&p)) == NULL
      || (*fsopts = next_field (&p)) == NULL || p != NULL)
    return false;
  return unescape_field (*target) && unescape_field (*fstype) && unescape_field (*source)
         && unescape_field (*fsopts);
}

int
gl_launch_mount_table_parse (FILE *f, const char *name, GlLaunchMountTable *out,
                             char **error)
{
  cleanup_free char *line = NULL;
  size_t line_cap = 0, cap = 0, lineno = 0;
  ssize_t len;

  out->paths = NULL;
  out->fstypes = NULL;
  out->fsopts = NULL;
  out->n = 0;
  *error = NULL;
  errno = 0;
  while ((len = getline (&line, &line_cap, f)) >= 0)
    {
      char *id, *target, *fstype, *source, *fsopts;
      lineno++;
      if (len > 0 && line[len - 1] == '\n')
        line[--len] = '\0';
      if ((size_t) len != strlen (line)
          || !parse_mountinfo_line (line, &id, &target, &fstype, &source, &fsopts))
        {
          *error = xasprintf ("cannot read the mount table %s: line %zu is not in the "
                              "mountinfo format", name, lineno);
          gl_launch_mount_table_clear (out);
          return -EINVAL;
        }
      if (target[0] != '/')
        continue;
      if (out->n == cap)
        {
          cap = cap ? 2 * cap : 64;
          out->paths = xrealloc (out->paths, cap * sizeof (char *));
          out->fstypes = xrealloc (out->fstypes, cap * sizeof (char *));
          out->fsopts = xrealloc (out->fsopts, cap * sizeof (char *));
        }
      out->fstypes[out->n] = xstrdup (fstype);
      out->fsopts[out->n] = xstrdup (fsopts);
      out->paths[out->n++] = xstrdup (target);
      errno = 0;
    }
  /* A read error part of the way (an I/O error, or getline() out of memory
   * under the caller's RLIMIT_AS) must not pass as the end of the table. */
  if (ferror (f) || !feof (f))
    {
      int errsv = errno ? errno : EIO;
      *error = xasprintf ("cannot read the mount table %s: %s", name, strerror (errsv));
      gl_launch_mount_table_clear (out);
      return -errsv;
    }
  return 0;
}

int
gl_launch_mount_table_overlay_ids (FILE *f, unsigned *ids, char **targets, size_t max,
                                   size_t *n)
{
  cleanup_free char *line = NULL;
  size_t line_cap = 0;
  ssize_t len;

  *n = 0;
  errno = 0;
  while ((len = getline (&line, &line_cap, f)) >= 0)
    {
      char *id, *target, *fstype, *source, *fsopts, *end;
      unsigned long v;
      if (len > 0 && line[len - 1] == '\n')
        line[--len] = '\0';
      if ((size_t) len != strlen (line)
          || !parse_mountinfo_line (line, &id, &target, &fstype, &source, &fsopts))
        return -EINVAL;
      errno = 0;
      v = strtoul (id, &end, 10);
      if (id[0] < '1' || id[0] > '9' || *end != '\0' || errno != 0 || v > UINT_MAX)
        return -EINVAL;
      if (strcmp (fstype, "overlay") != 0 || strcmp (source, GL_LAUNCH_OVERLAY_SOURCE) != 0)
        continue;
      if (*n == max)
        return -E2BIG;
      if (targets != NULL)
        targets[*n] = xstrdup (target);
      ids[(*n)++] = (unsigned) v;
      errno = 0;
    }
  /* (as gl_launch_mount_table_parse: a read error is not the end) */
  if (ferror (f) || !feof (f))
    return errno ? -errno : -EIO;
  return 0;
}

/* A mount table is read in one or two read()s, not in the 1 KiB ones
 * stdio's default buffer makes of a /proc file (each of which walks the
 * table again up to where it stopped).  Into a buffer of ours: given
 * none, glibc's setvbuf ignores the size and keeps the 1 KiB one.  One
 * buffer for the process: a table is read whole and closed before the
 * next is opened. */
void
gl_launch_mount_table_buffer (FILE *f)
{
  static char buf[64 * 1024];
  (void) setvbuf (f, buf, _IOFBF, sizeof buf);
}

GlLaunchMountTable
gl_launch_mount_table_read (void)
{
  GlLaunchMountTable t = { NULL, 0 };
  cleanup_free char *error = NULL;
  FILE *f = fopen ("/proc/self/mountinfo", "re");

  if (f == NULL)
    die_with_error ("cannot read /proc/self/mountinfo");
  gl_launch_mount_table_buffer (f);
  if (gl_launch_mount_table_parse (f, "/proc/self/mountinfo", &t, &error) != 0)
    die ("%s; refusing to build a view from part of it (out of memory?)", error);
  fclose (f);
  return t;
}

void
gl_launch_mount_table_clear (GlLaunchMountTable *t)
{
  for (size_t i = 0; i < t->n; i++)
    {
      free (t->paths[i]);
      free (t->fstypes[i]);
      free (t->fsopts[i]);
    }
  free (t->paths);
  free (t->fstypes);
  free (t->fsopts);
  t->paths = t->fstypes = t->fsopts = NULL;
  t->n = 0;
}

/* ---------------------------------------------------------------------- */
/* Mounts from descriptors                                                 */

long
gl_launch_mount_openat2 (int dirfd, const char *path, uint64_t flags, uint64_t resolve)
{
  struct open_how how = { .flags = flags, .mode = 0, .resolve = resolve };
  return syscall (SYS_openat2, dirfd, path, &how, sizeof how);
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

void
gl_launch_mount_die_fs (int fsfd, const char *what)
{
  int errsv = errno;
  char log[512] = "";
  if (fsfd >= 0 && fs_log (fsfd, log, sizeof log) > 0)
    die ("%s: %s (%s); your kernel may lack overlayfs in user namespaces (Linux >= 5.11 "
         "needed)", what, strerror (errsv), log);
  errno = errsv;
  die_with_error ("%s", what);
}

/* One try at the overlay; -1 with errno EBUSY when a writable layer is
 * still in use by another overlay. */
static int
try_overlay (const int *lowers, size_t n_lowers, int upper, int work, unsigned attrs,
             const char *what)
{
  cleanup_fd int fs = fsopen ("overlay", FSOPEN_CLOEXEC);
  char lowerdir[1024] = "";
  size_t off = 0;
  int mnt;

  if (fs < 0)
    gl_launch_mount_die_fs (-1, "cannot use overlayfs");
  for (size_t i = 0; i < n_lowers; i++)
    off += (size_t) snprintf (lowerdir + off, sizeof lowerdir - off, "%s/proc/self/fd/%d",
                              i ? ":" : "", lowers[i]);
  /* (named, so that root's record of the view can tell its overlays from
   * host mounts bound into it) */
  if (fsconfig (fs, FSCONFIG_SET_STRING, "source", GL_LAUNCH_OVERLAY_SOURCE, 0) != 0
      || fsconfig (fs, FSCONFIG_SET_STRING, "lowerdir", lowerdir, 0) != 0)
    gl_launch_mount_die_fs (fs, what);
  if (upper >= 0)
    {
      char p[64];
      snprintf (p, sizeof p, "/proc/self/fd/%d", upper);
      if (fsconfig (fs, FSCONFIG_SET_STRING, "upperdir", p, 0) != 0)
        gl_launch_mount_die_fs (fs, what);
      snprintf (p, sizeof p, "/proc/self/fd/%d", work);
      if (fsconfig (fs, FSCONFIG_SET_STRING, "workdir", p, 0) != 0)
        gl_launch_mount_die_fs (fs, what);
    }
  if (fsconfig (fs, FSCONFIG_SET_FLAG, "userxattr", NULL, 0) != 0)
    gl_launch_mount_die_fs (fs, what);
  /* A writable layer is mounted once at a time (two overlays on one upper
   * layer are undefined behaviour): with index=on the kernel refuses an
   * upper or work directory still in use by another overlay (EBUSY) -
   * even one kept alive by a descriptor of an old view's mount namespace,
   * or by an open file of it, after the view itself has ended.  That check
   * (fs/overlayfs/super.c: ovl_get_upper, ovl_get_workdir) comes before
   * the index is set up.  The index itself then falls back to off
   * (ovl_make_workdir: ovl_can_decode_fh() needs CAP_DAC_READ_SEARCH in
   * the initial user namespace, which a user namespace never has; the
   * kernel logs "falling back to index=off", and mountinfo shows no
   * index=on), so the layers keep their format, and the later checks of
   * lower layers only warn.  The exclusive use of upper and work stands. */
  if (upper >= 0 && fsconfig (fs, FSCONFIG_SET_STRING, "index", "on", 0) != 0)
    gl_launch_mount_die_fs (fs, what);
  if (fsconfig (fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) != 0)
    {
      if (errno == EBUSY && upper >= 0)
        return -1;
      gl_launch_mount_die_fs (fs, what);
    }
  mnt = fsmount (fs, FSMOUNT_CLOEXEC, attrs);
  if (mnt < 0)
    gl_launch_mount_die_fs (fs, what);
  return mnt;
}

int
gl_launch_mount_overlay (const int *lowers, size_t n_lowers, int upper, int work,
                         unsigned attrs, const char *what)
{
  /* (No retries: every refused try logs a line in the kernel's log, and
   * the caller has waited for the end of the view that used the layer.) */
  return try_overlay (lowers, n_lowers, upper, work, attrs, what);
}

/* Creates the configured filesystem context FS and mounts it, detached. */
static int
fs_create_mount (int fs, unsigned attrs, const char *what)
{
  int mnt;
  if (fs < 0 || fsconfig (fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) != 0)
    gl_launch_mount_die_fs (fs, what);
  mnt = fsmount (fs, FSMOUNT_CLOEXEC, attrs);
  if (mnt < 0)
    gl_launch_mount_die_fs (fs, what);
  return mnt;
}

int
gl_launch_mount_tmpfs (const char *mode, const char *size, unsigned attrs, const char *what)
{
  cleanup_fd int fs = fsopen ("tmpfs", FSOPEN_CLOEXEC);
  if (fs >= 0 && (fsconfig (fs, FSCONFIG_SET_STRING, "mode", mode, 0) != 0
                  || fsconfig (fs, FSCONFIG_SET_STRING, "size", size, 0) != 0))
    gl_launch_mount_die_fs (fs, what);
  return fs_create_mount (fs, attrs, what);
}

int
gl_launch_mount_proc (void)
{
  cleanup_fd int fs = fsopen ("proc", FSOPEN_CLOEXEC);
  return fs_create_mount (fs, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
                          "cannot mount a new /proc");
}

int
gl_launch_mount_open_in_view (int rootfd, const char *path)
{
  const char *rel = path + strspn (path, "/");
  return (int) gl_launch_mount_openat2 (rootfd, *rel ? rel : ".",
                                        O_PATH | O_DIRECTORY | O_CLOEXEC,
                                        RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS
                                        | RESOLVE_NO_MAGICLINKS);
}

void
gl_launch_mount_die_target (const char *path)
{
  if (errno == ELOOP)
    die ("sandbox not usable: %s inside the sandbox is or passes through a symbolic "
         "link; ask your administrator to repair the sandbox, or purge your layer "
         "(\"glimpse purge\") if the link is yours", path);
  if (errno == ENOTDIR)
    die ("sandbox not usable: %s inside the sandbox is not a directory; ask your "
         "administrator to repair the sandbox, or purge your layer", path);
  die_with_error ("cannot find the mount point %s inside the sandbox", path);
}

void
gl_launch_mount_skel_mkdir_p (int skelfd, const char *path)
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

bool
gl_launch_mount_parent_searchable (int rootfd, const char *path)
{
  cleanup_free char *parent = xstrdup (path);
  cleanup_fd int fd = -1;
  char *slash = strrchr (parent, '/');

  if (slash == NULL)
    return false;
  if (slash == parent)
    slash[1] = '\0';
  else
    *slash = '\0';
  fd = gl_launch_mount_open_in_view (rootfd, parent);
  /* (faccessat2: the descriptor itself, with this process's own ids and
   * capabilities, as the lookup in the overlay is made) */
  return fd >= 0 && syscall (SYS_faccessat2, fd, "", X_OK, AT_EMPTY_PATH | AT_EACCESS) == 0;
}

void
gl_launch_mount_skel_opaque (int skelfd, const char *path)
{
  const char *rel = path + strspn (path, "/");
  cleanup_fd int fd = (int) gl_launch_mount_openat2 (skelfd, *rel ? rel : ".",
                                                     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
                                                     RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS
                                                     | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV);
  /* (userxattr: the overlay reads user.overlay.*) */
  if (fd < 0 || fsetxattr (fd, "user.overlay.opaque", "y", 1, 0) != 0)
    die_with_error ("cannot mark mount point %s in your layer as covering the sandbox's", path);
}

int
gl_launch_mount_open_user_dir (int parent, const char *name, const char *what, uid_t uid)
{
  struct stat st;
  int fd;
  /* (opened first: on every launch but the first the directory is there,
   * and a mkdirat that fails with EEXIST costs a lookup of its own) */
  fd = openat (parent, name, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT)
    {
      if (mkdirat (parent, name, 0700) != 0 && errno != EEXIST)
        die_with_error ("cannot create %s in your layer", what);
      fd = openat (parent, name, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
    }
  if (fd < 0)
    die_with_error ("cannot open %s in your layer (purge your layer with \"glimpse purge\")",
                    what);
  if (fstat (fd, &st) != 0 || st.st_uid != uid)
    die ("%s in your layer is not owned by you; purge your layer with \"glimpse purge\"",
         what);
  return fd;
}

void
gl_launch_mount_attach (int mnt, int target, const char *path)
{
  if (move_mount (mnt, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0)
    die_with_error ("cannot mount %s inside the sandbox", path);
}

int
gl_launch_mount_clone_tree (const char *path, unsigned attrs, bool missing_ok)
{
  struct mount_attr attr = { .attr_set = attrs, .propagation = MS_PRIVATE };
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

void
gl_launch_mount_stage_copy (int stage, int fd, const char *name)
{
  cleanup_fd int dir = -1;
  if (mkdirat (stage, name, 0700) != 0)
    die_with_error ("cannot create staging directory %s", name);
  dir = openat (stage, name, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0 || move_mount (fd, "", dir, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0)
    die_with_error ("cannot stage a copy of a host directory (%s)", name);
}

/* (Ownership cannot be re-checked here: root is not mapped in the user
 * namespace this runs in.) */
int
gl_launch_mount_reopen_same (int dirfd, const char *name, int same, const char *what)
{
  struct stat a, b;
  int fd = openat (dirfd, name, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 || fstat (fd, &a) != 0 || fstat (same, &b) != 0
      || a.st_dev != b.st_dev || a.st_ino != b.st_ino)
    die ("sandbox not usable: %s changed while starting; try again", what);
  return fd;
}

bool
gl_launch_mount_bind_socket (int root, int dirfd, const char *name, const char *view_path,
                             const struct stat *same)
{
  struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID
                             | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
                             .propagation = MS_PRIVATE };
  cleanup_fd int src = open_tree (dirfd, name, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC
                                  | AT_SYMLINK_NOFOLLOW);
  const char *rel = view_path + strspn (view_path, "/");
  cleanup_fd int target = (int) gl_launch_mount_openat2 (root, rel, O_PATH | O_NOFOLLOW | O_CLOEXEC,
                                                         RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS
                                                         | RESOLVE_NO_MAGICLINKS);
  struct stat tst, sst;
  if (src < 0 || target < 0 || fstat (target, &tst) != 0 || !S_ISSOCK (tst.st_mode)
      || fstat (src, &sst) != 0 || !S_ISSOCK (sst.st_mode))
    return false;       /* gone, replaced, or deleted in your layer: nothing to pass */
  if (same != NULL && (sst.st_dev != same->st_dev || sst.st_ino != same->st_ino))
    return false;       /* not the socket checked */
  if (mount_setattr (src, "", AT_EMPTY_PATH, &attr, sizeof attr) != 0)
    die_with_error ("cannot restrict the socket %s", view_path);
  if (move_mount (src, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0)
    die_with_error ("cannot pass the socket %s into the sandbox", view_path);
  return true;
}

/* Unix sockets cannot be connected through an overlay (the socket is found
 * by inode, and the overlay's inode is not the socket's), so every socket in
 * the host directory DIR (an overlay lower) down to DEPTH levels is bound
 * over its own overlay entry.  Only sockets the user can reach, and at most
 * *BUDGET of them (each is a mount, and mounts are a limited resource). */
void
gl_launch_mount_bind_sockets (int root, int dir, const char *view_path, int depth,
                              size_t *budget)
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
            gl_launch_mount_bind_sockets (root, sub, vp, depth - 1, budget);
        }
      else if (S_ISSOCK (type))
        {
          if (*budget == SIZE_MAX)
            break;      /* exhausted, and said so */
          if (*budget == 0)
            {
              *budget = SIZE_MAX;
              fprintf (stderr, "glimpse-launch: warning: more than %d sockets below %s; "
                       "the rest are not passed\n", GL_LAUNCH_MAX_SOCKETS, view_path);
              break;
            }
          if (gl_launch_mount_bind_socket (root, dirfd (d), e->d_name, vp, NULL))
            (*budget)--;
        }
    }
  closedir (d);
}
