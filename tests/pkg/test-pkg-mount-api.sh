#!/bin/bash
# Integration: a maintainer script makes no mount of its own (glimpse-pkgns.c,
# install_seccomp).  The seccomp filter refuses every call of the mount API
# -- open_tree, mount_setattr, move_mount, fsopen… -- and must refuse
# open_tree_attr too (Linux 6.15), which is open_tree and mount_setattr in
# one call: with it the namespace's root (which owns the operation's mount
# namespace, so none of its mounts is locked) could clone the view's / without
# its submounts and read what the tmpfs on /tmp, /run… cover (the host's
# /tmp), or clear read-only, nosuid, noexec on a clone of /sys or of
# /run/glimpse-input.  The probe, a postinst-like python3 program run through
# the helper over the host's /, records what each call returned.  Needs root.
source "$(dirname "$0")/libpkgtest.sh"
[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 is not installed (the probe runs from the host's /usr)"

range=$(awk -F: '$1=="glimpse" {print $2}' /etc/subuid)
grange=$(awk -F: '$1=="glimpse" {print $2}' /etc/subgid)
[ -n "$range" ] && [ -n "$grange" ] || skip "no subordinate range for the glimpse user"
op=$WORK/op
mkdir -p "$op/upper" "$op/work" "$op/input"
chown "$range:$grange" "$op/upper" "$op/work"
cat > "$op/input/probe.py" <<'PY'
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
class MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]
AT_FDCWD, OPEN_TREE_CLONE, AT_RECURSIVE, O_CLOEXEC = -100, 1, 0x8000, 0x80000
NR_OPEN_TREE_ATTR = 467          # the same number on every architecture
def open_tree_attr(path, flags, attr):
    r = libc.syscall(NR_OPEN_TREE_ATTR, AT_FDCWD, path, OPEN_TREE_CLONE | O_CLOEXEC | flags,
                     ctypes.byref(attr) if attr else None, ctypes.sizeof(attr) if attr else 0)
    return "ok" if r >= 0 else os.strerror(ctypes.get_errno())
print("clone /:", open_tree_attr(b"/", 0, None))
print("clone /tmp:", open_tree_attr(b"/tmp", 0, None))
# MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC cleared
print("clone /sys read-write:", open_tree_attr(b"/sys", AT_RECURSIVE, MountAttr(0, 1 | 2 | 8, 0, 0)))
print("clone input read-write:", open_tree_attr(b"/run/glimpse-input", 0, MountAttr(0, 1 | 2 | 8, 0, 0)))
# a call newer than the filter's list: file_getattr (Linux 6.17), here with
# a bad descriptor (EBADF where the kernel has it and nothing refuses it)
r = libc.syscall(468, -1, b"x", None, 0, 0)
print("newer call:", "ok" if r >= 0 else os.strerror(ctypes.get_errno()))
print("done")
PY
got=$("$GLIMPSE_PKGNS" --ids "$range:$grange" --base / --host --op "$op" --input "$op/input" \
      -- /usr/bin/python3 /run/glimpse-input/probe.py 2>&1)
echo "$got" | sed 's/^/# probe: /'
check_sh "the probe ran" 'grep -qx done <<<"$got"'
# (a kernel without open_tree_attr (Linux 6.15) answers ENOSYS: nothing to
# refuse there, and the filter answers ENOSYS to nothing of its list)
refused="Operation not permitted"
if grep -q "^clone /: Function not implemented" <<<"$got"; then
  echo "# the kernel has no open_tree_attr (Linux 6.15): it cannot be called"
  refused="Function not implemented"
fi
check_sh "open_tree_attr cannot clone the view's / (what the tmpfs mounts cover)" \
  'grep -qx "clone /: $refused" <<<"$got"'
check_sh "… nor /tmp" 'grep -qx "clone /tmp: $refused" <<<"$got"'
check_sh "… nor make a writable, suid, exec clone of /sys" \
  'grep -qx "clone /sys read-write: $refused" <<<"$got"'
check_sh "… nor of the input" 'grep -qx "clone input read-write: $refused" <<<"$got"'
check_sh "a system call newer than the filter's list is ENOSYS (as in a kernel without it)" \
  'grep -qx "newer call: Function not implemented" <<<"$got"'
finish
