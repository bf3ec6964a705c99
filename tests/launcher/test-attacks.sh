#!/bin/bash
# glimpse-launch: the attack list of shared/SECURITY.md, cases 1-10, against
# the setuid copy run by ordinary users.  Each: the attack fails, the host
# is unchanged (mount table and checksums before/during/after).
# SPDX-License-Identifier: LGPL-2.1-or-later
. "$(dirname "$0")/libtest.sh"

gl_make_sandbox t-att-bb rootfs
gl_make_sandbox t-att-host host
gl_install_setuid
as_user $GL_USER_A "$LAUNCH" t-att-bb -- true   # creates users/UID
as_user $GL_USER_B "$LAUNCH" t-att-bb -- true

mounts_before=$(gl_mounts)
host_sums () { gl_tree_sums /etc "$HOME_A" "$HOME_B" "$GL_BIN"; gl_top_sums /root; }
sums_before=$(host_sums)
host_unchanged () {
  [ "$(gl_mounts)" = "$mounts_before" ] && [ "$(host_sums)" = "$sums_before" ]
}

# 1. empty argv
as_user $GL_USER_A "$GL_EXEC_EMPTY_ARGV" "$LAUNCH" 2>"$WORK/err"; rc=$?
check_sh "1: empty argv refused (125, message)" '[ $rc = 125 ] && grep -q "empty argument list" "$WORK/err"'

# 2. loader/libc variables: nothing runs as root, the app does not get them
cat > "$WORK/evil.c" <<'C'
#include <stdio.h>
#include <unistd.h>
__attribute__((constructor)) static void evil (void) {
  FILE *f = fopen ("/tmp/gl-evil-ran", "a"); if (f) { fprintf (f, "%d\n", (int) geteuid ()); fclose (f); }
}
C
if cc -shared -fPIC -o "$WORK/evil.so" "$WORK/evil.c" 2>/dev/null; then
  chmod 755 "$WORK/evil.so"; rm -f /tmp/gl-evil-ran
  GL_CLEANUPS+=("rm -f /tmp/gl-evil-ran")
  evil_env="LD_PRELOAD=$WORK/evil.so LD_LIBRARY_PATH=$WORK LD_AUDIT=$WORK/evil.so GCONV_PATH=$WORK GLIBC_TUNABLES=glibc.malloc.check=3 MALLOC_CHECK_=3 MALLOC_PERTURB_=85"
  # control: the library does run in an ordinary program of the user
  GL_EXTRA_ENV="LD_PRELOAD=$WORK/evil.so" as_user $GL_USER_A /bin/true
  check "2: (control) the preload library runs in a plain program, as the user" grep -qsx "$UID_A" /tmp/gl-evil-ran
  rm -f /tmp/gl-evil-ran
  out=$(GL_EXTRA_ENV="$evil_env" as_user $GL_USER_A "$LAUNCH" t-att-host -- env); rc=$?
  # glibc's secure mode, not Glimpse's doing: kept as a guard of the set-up
  check "2: preloaded code never ran as root (glibc's AT_SECURE)" not grep -qsx 0 /tmp/gl-evil-ran
  check_sh "2: the launch ran the app (0, its environment printed)" '[ $rc = 0 ] && grep -qx GLIMPSE_SANDBOX=t-att-host <<< "$out"'
  check_sh "2: the app does not receive LD_*/GCONV_PATH/GLIBC_TUNABLES/MALLOC_*" \
    '! grep -qE "^(LD_|GCONV_PATH=|GLIBC_TUNABLES=|MALLOC_)" <<< "$out"'
  rm -f /tmp/gl-evil-ran
else
  fail "2: no C compiler to build the preload library"
fi

# 3. hostile IDs
for id in '..' '../x' 'a/b' 'x,lowerdir=/root' '' "$(head -c 4096 /dev/zero | tr '\0' a)" '.' '-x' "../../../../etc"; do
  as_user $GL_USER_A "$LAUNCH" "$id" -- /bin/true 2>"$WORK/err"; rc=$?
  check_sh "3: ID '${id:0:20}' refused (125, one line: invalid sandbox ID)" \
    '[ $rc = 125 ] && [ "$(wc -l < "$WORK/err")" = 1 ] && grep -q "^glimpse-launch: invalid sandbox ID" "$WORK/err"'
done
# the same launch with a good ID runs; one bad character at the end is enough
check "3: (control) the valid ID t-att-bb runs" as_user $GL_USER_A "$LAUNCH" t-att-bb -- /bin/true
for id in 'a/' 'x,' 'a:' 't-att-bb/' "t-att-bb\n"; do
  refused "3: ID '$id' (bad last character) refused" '^glimpse-launch: invalid sandbox ID' \
    as_user $GL_USER_A "$LAUNCH" "$id" -- /bin/true
done

# 4. untrusted sandbox directories
gl_make_sandbox t-att-4 rootfs
# try4 DESCRIPTION REGEX BREAK REPAIR: refused with the reason while broken,
# runs again once repaired (so the refusal is that fault, nothing else)
try4 () {
  local what=$1 re=$2 repair=$4
  GL_CLEANUPS+=("$repair")
  eval "$3"
  refused "4: $what refused (not usable: the reason)" "^glimpse-launch: sandbox not usable: .*$re" \
    as_user $GL_USER_A "$LAUNCH" t-att-4 -- /bin/true
  eval "$repair"
  unset 'GL_CLEANUPS[${#GL_CLEANUPS[@]}-1]'
  check "4: $what: runs once repaired" as_user $GL_USER_A "$LAUNCH" t-att-4 -- /bin/true
}
s4=$GL_STORE/t-att-4
try4 "user-owned sandbox dir" "owned by uid $UID_A, not root" "chown $GL_USER_A $s4" "chown root $s4"
try4 "group-writable sandbox dir" "writable" "chmod 0775 $s4" "chmod 0755 $s4"
try4 "world-writable rootfs" "writable" "chmod 0757 $s4/rootfs" "chmod 0755 $s4/rootfs"
try4 "user-owned system layer" "owned by uid $UID_A" "chown $GL_USER_A $s4/system/1/tree" "chown root $s4/system/1/tree"
GL_SANDBOXES+=(t-att-4.real)
try4 "symlinked sandbox dir" "symbolic link" "mv $s4 $s4.real; ln -s t-att-4.real $s4" "rm -f $s4; mv $s4.real $s4"
try4 "symlinked rootfs" "symbolic link" "mv $s4/rootfs $s4/rootfs.real; ln -s rootfs.real $s4/rootfs" \
  "rm -f $s4/rootfs; mv $s4/rootfs.real $s4/rootfs"
try4 "world-writable component above (the store)" 'component "sandboxes" .*writable' "chmod 0777 $GL_STORE" "chmod 0755 $GL_STORE"
try4 "user-owned component above (the store)" 'component "sandboxes" .* owned by' "chown $GL_USER_A $GL_STORE" "chown root $GL_STORE"
# a directory above the store, not only its last component
try4 "world-writable component above the store ($GL_TEST_ROOT)" "component \"$(basename "$GL_TEST_ROOT")\" .*writable" \
  "chmod 0777 $GL_TEST_ROOT" "chmod 0755 $GL_TEST_ROOT"
install -d -o $GL_USER_A -m 0700 "$GL_STORE/t-att-4/users/$UID_B"
as_user $GL_USER_B "$LAUNCH" t-att-4 -- /bin/true 2>"$WORK/err"; rc=$?
check_sh "4: users/UID owned by someone else refused" '[ $rc = 125 ] && grep -q "not a directory owned by you" "$WORK/err"'
check "4: works again when repaired" as_user $GL_USER_A "$LAUNCH" t-att-4 -- /bin/true
# your own layer readable by others (0755): refused, so nobody else reads it
rm -rf "$GL_STORE/t-att-4/users/$UID_B"
install -d -o $GL_USER_B -g "$(id -g $GL_USER_B)" -m 0755 "$GL_STORE/t-att-4/users/$UID_B"
refused "4: users/UID at 0755 refused" "not a directory owned by you with mode 0700" \
  as_user $GL_USER_B "$LAUNCH" t-att-4 -- /bin/true
chmod 0700 "$GL_STORE/t-att-4/users/$UID_B"
check "4: ... and used at 0700" as_user $GL_USER_B "$LAUNCH" t-att-4 -- /bin/true

# 5. home/tmp/proc/dev in the sandbox tree replaced by symlinks to host paths
for d in home tmp proc dev; do
  gl_make_sandbox t-att-5$d rootfs
  rm -rf "$GL_STORE/t-att-5$d/rootfs/$d"; ln -s /etc "$GL_STORE/t-att-5$d/rootfs/$d"
  out=$(as_user $GL_USER_A "$LAUNCH" t-att-5$d -- /bin/sh -c 'echo RAN' 2>&1); rc=$?
  check_sh "5: /$d -> /etc symlink refused" '[ $rc = 125 ] && grep -q "symbolic link" <<< "$out"'
done
check "5: host unchanged so far" host_unchanged

# 6. $HOME pointing at another user's home or /root
out=$(GL_EXTRA_ENV="HOME=$HOME_B" as_user $GL_USER_A "$LAUNCH" t-att-bb -- /bin/sh -c 'echo $HOME; touch ~/gl-att6; ls -d ~')
check "6: HOME=other user's home ignored (passwd home used)" [ "$(head -1 <<< "$out")" = "$HOME_A" ]
out=$(GL_EXTRA_ENV="HOME=/root" as_user $GL_USER_A "$LAUNCH" t-att-bb -- /bin/sh -c 'echo $HOME; ls /root 2>&1 | head -1')
check "6: HOME=/root ignored" [ "$(head -1 <<< "$out")" = "$HOME_A" ]
check_sh "6: the write went to A's own layer" '[ -f "$GL_STORE/t-att-bb/users/$UID_A/home/upper/gl-att6" ]'
check_sh "6: nothing written in B's home or /root" '[ ! -e "$HOME_B/gl-att6" ] && [ ! -e /root/gl-att6 ]'

# 7. B launching: gets only B's layer
as_user $GL_USER_A "$LAUNCH" t-att-bb -- /bin/sh -c 'echo secret-a > /tmp/gl-att7-a'
out=$(as_user $GL_USER_B "$LAUNCH" t-att-bb -- /bin/sh -c "cat /tmp/gl-att7-a 2>&1; ls $GL_STORE/t-att-bb/users/$UID_A 2>&1; id -u")
check "7: B does not see A's layer" not grep -q secret-a <<< "$out"
check "7: B runs as B" [ "$(tail -1 <<< "$out")" = "$UID_B" ]
check "7: B's writes land in B's layer only" as_user $GL_USER_B "$LAUNCH" t-att-bb -- /bin/sh -c 'echo b > /tmp/gl-att7-b'
check_sh "7: layers are per uid, 0700" '[ -f "$GL_STORE/t-att-bb/users/$UID_B/tmp/upper/gl-att7-b" ] && [ ! -e "$GL_STORE/t-att-bb/users/$UID_A/tmp/upper/gl-att7-b" ] && [ "$(stat -c %a:%u "$GL_STORE/t-att-bb/users/$UID_B")" = "700:$UID_B" ]'
check "7: /tmp on the host untouched" [ ! -e /tmp/gl-att7-a ]

# 8. setuid-root binaries and file capabilities inside the tree and the layer
install -d "$GL_STORE/t-att-bb/rootfs/opt/suid" "$GL_STORE/t-att-bb/rootfs/opt/cap"
install -m 4755 /bin/busybox "$GL_STORE/t-att-bb/rootfs/opt/suid/busybox"
install -d -o $GL_USER_A "$GL_STORE/t-att-bb/users/$UID_A/home/upper/suid"
install -o root -m 4755 /bin/busybox "$GL_STORE/t-att-bb/users/$UID_A/home/upper/suid/busybox"
capbb=""
if ! command -v setcap >/dev/null; then
  skip_case "8: file capabilities" "setcap is not installed (apt install libcap2-bin)"
else
  install -m 0755 /bin/busybox "$GL_STORE/t-att-bb/rootfs/opt/cap/busybox"
  if setcap cap_setuid,cap_dac_override+ep "$GL_STORE/t-att-bb/rootfs/opt/cap/busybox" 2>"$WORK/err"; then
    capbb=/opt/cap/busybox
  else
    skip_case "8: file capabilities" "setcap failed: $(head -n1 "$WORK/err")"
  fi
fi
for b in /opt/suid/busybox "$HOME_A/suid/busybox" $capbb; do
  out=$(as_user $GL_USER_A "$LAUNCH" t-att-bb -- $b sh -c 'grep -E "^(Uid|CapEff|NoNewPrivs):" /proc/self/status; cat /etc/shadow 2>&1 | head -1' 2>&1)
  check_sh "8: $b gives no privilege (NoNewPrivs 1, CapEff 0, euid user)" 'grep -qE "^NoNewPrivs:[[:space:]]+1" <<< "$out" && grep -qE "^CapEff:[[:space:]]+0+$" <<< "$out" && grep -qE "^Uid:[[:space:]]+$UID_A[[:space:]]+$UID_A" <<< "$out"'
done

# 9. mount, umount, pivot_root, remount / rw, unshare -Ur + chroot ..
# the launch itself works (the shell inside prints the command's status);
# the command fails with a permission error, not for any other reason
for cmd in "mount -t tmpfs none /mnt" "umount -l $HOME_A" "umount /proc" "mount -o remount,rw /" \
           "mount --bind /etc /mnt" "pivot_root /tmp /tmp"; do
  out=$(as_user $GL_USER_A "$LAUNCH" t-att-bb -- /bin/sh -c "$cmd; echo status=\$?" 2>&1)
  check_sh "9: '$cmd' refused (permission)" \
    'grep -qE "^status=[1-9]" <<< "$out" && grep -qiE "permission denied|operation not permitted" <<< "$out"'
done
out=$(as_user $GL_USER_A "$LAUNCH" t-att-host -- unshare -Urm sh -c '
  umount -l /home 2>/dev/null; umount -l '"$HOME_A"' 2>/dev/null && echo UMOUNTED-HOME
  mount -o remount,rw / 2>/dev/null && echo REMOUNTED
  touch /etc/gl-att9 2>/dev/null && echo WROTE-ETC
  cd /; chroot .. /bin/sh -c "ls /var/lib/glimpse-tests/sandboxes/t-att-host/users >/dev/null 2>&1; tr \"\\0\" \"\\n\" < /proc/1/cmdline | head -1; test -e /etc/gl-att9 && echo SEEN"
  echo x > '"$HOME_A"'/gl-att9 && echo HOME-WRITE-OK' 2>&1)
check "9: unshare -Ur: remount / rw refused" not grep -q REMOUNTED <<< "$out"
check "9: unshare -Ur: / still read-only" not grep -q WROTE-ETC <<< "$out"
check "9: unshare -Ur: locked \$HOME overlay not removable" not grep -q UMOUNTED-HOME <<< "$out"
check "9: chroot .. stays in the sandbox (pid 1 is the launcher's init)" grep -q "launch-$TEST_NAME" <<< "$out"
check_sh "9: writes still land in the layer, not the host" \
  'grep -q HOME-WRITE-OK <<< "$out" && [ -f "$GL_STORE/t-att-host/users/$UID_A/home/upper/gl-att9" ] && [ ! -e "$HOME_A/gl-att9" ] && [ ! -e /etc/gl-att9 ]'

# 10. the app's view while it runs; the host mount table before/during/after
# (the app runs until the table was read: found by its own arguments)
as_user $GL_USER_A "$LAUNCH" t-att-bb -- /bin/sh -c 'cat /proc/self/status > /tmp/gl-att10; exec sleep 62.10' &
bg=$!
app=$(gl_wait_pid $GL_USER_A '^sleep 62[.]10$')
mounts_during=$(gl_mounts)
check "10: the app ran (its process found)" [ -n "$app" ]
[ -n "$app" ] && kill "$app"
wait $bg
st=$(cat "$GL_STORE/t-att-bb/users/$UID_A/tmp/upper/gl-att10")
check_sh "10: real uid/gid, no capabilities, NoNewPrivs" 'grep -qE "^Uid:[[:space:]]+$UID_A[[:space:]]+$UID_A[[:space:]]+$UID_A[[:space:]]+$UID_A" <<< "$st" && grep -qE "^Gid:[[:space:]]+$GID_A[[:space:]]+$GID_A" <<< "$st" && [ "$(grep -E "^Cap(Prm|Eff|Bnd|Amb|Inh):" <<< "$st" | grep -vc "0000000000000000$")" = 0 ] && grep -qE "^NoNewPrivs:[[:space:]]+1" <<< "$st"'
check "10: host mount table unchanged during a run" [ "$mounts_during" = "$mounts_before" ]
check "10: host mount table and checksums unchanged after" host_unchanged

# Beyond the list (found in review).
# 12. another user holding the sandbox's lock cannot keep you out
as_user $GL_USER_B flock -x -n "$GL_STORE/t-att-bb/lock" true 2>/dev/null; rc=$?
check "12: the sandbox lock cannot be opened by another user" [ $rc -ne 0 ]
# (held until both launches are done: no pause to outlast, none to wait)
as_user $GL_USER_B sh -c "exec 8<'$GL_STORE/t-att-bb/users/$UID_B/lock'; flock -x 8; touch '$WORK/att12-held'
  while [ ! -e '$WORK/att12-release' ]; do sleep 0.05; done" &
holder=$!
gl_wait 30 [ -e "$WORK/att12-held" ]
as_user $GL_USER_A "$LAUNCH" t-att-bb -- true 2>"$WORK/err"; rc=$?
check_sh "12: user B locking their own layer does not stop user A (0)" '[ $rc = 0 ]'
as_user $GL_USER_B "$LAUNCH" t-att-bb -- true 2>"$WORK/err"; rc=$?
check_sh "12: ... and B's own launch says their layer is busy (125)" '[ $rc = 125 ] && grep -q "your layer .* is being changed" "$WORK/err"'
touch "$WORK/att12-release"; wait $holder 2>/dev/null

# 13. the terminal: no TIOCSTI/TIOCLINUX (input the caller's shell would run)
if command -v script >/dev/null && command -v python3 >/dev/null; then
  probe=$(gl_tty_probe); chmod 0755 "$WORK"
  out=$(as_user $GL_USER_A script -qec "$LAUNCH t-att-host -- python3 $probe" /dev/null | tr -d '\r')
  check_sh "13: TIOCSTI refused inside (EPERM)" 'grep -qx "TIOCSTI errno 1" <<< "$out"'
  check_sh "13: TIOCLINUX refused inside (EPERM)" 'grep -qx "TIOCLINUX errno 1" <<< "$out"'
  # 32-bit programs use the compat ioctl: refused too
  if cc -m32 -x c -o "$WORK/sti32" - 2>/dev/null <<'C'
#include <errno.h>
#include <stdio.h>
#include <sys/ioctl.h>
int main (void) { char c = 0; int r = ioctl (0, TIOCSTI, &c); printf ("%s\n", r == 0 ? "allowed" : errno == 1 ? "EPERM" : "other"); return 0; }
C
  then
    # a kernel with IA-32 emulation turned off (ia32_emulation=0, seen on
    # some virtual machines) runs no 32-bit program at all: there is no
    # compat ioctl to refuse, and that must hold inside as well
    "$WORK/sti32" </dev/null >/dev/null 2>&1; host_rc=$?
    out=$(as_user $GL_USER_A script -qec "$LAUNCH t-att-host -- $WORK/sti32; echo rc=\$?" /dev/null | tr -d '\r')
    if [ $host_rc = 126 ]; then
      check_sh "13: a 32-bit program runs neither outside nor inside (no IA-32 emulation here)" \
        '! grep -qx -e allowed -e EPERM -e other <<< "$out" && ! grep -qx "rc=0" <<< "$out"'
    else
      check_sh "13: TIOCSTI refused to a 32-bit program" 'grep -qx EPERM <<< "$out"'
    fi
  else
    skip_case "13: TIOCSTI to a 32-bit program" "no 32-bit C toolchain (apt install gcc-multilib)"
  fi
else
  fail "13: script (util-linux) or python3 missing: terminal ioctls not tested"
fi

# 14. without a terminal the app has a session of its own: kill (0, ...)
# reaches nothing outside the sandbox
out=$(as_user $GL_USER_A setsid sh -c "trap 'echo CALLER-SIGNALLED' USR1; sleep 300 & s=\$!
  $LAUNCH t-att-bb -- /bin/sh -c 'kill -USR1 0' </dev/null 2>/dev/null
  kill -0 \$s 2>/dev/null && echo SLEEP-ALIVE; kill \$s" 2>&1)
check_sh "14: kill 0 inside reaches neither the caller nor its process group" \
  'grep -q SLEEP-ALIVE <<< "$out" && ! grep -q CALLER-SIGNALLED <<< "$out"'

# 15. socket directories in /tmp made by another user are not passed in
# (an /tmp/.ICE-unix already there - left by a desktop session or another
# run - is moved aside for the case and put back afterwards)
ice_saved=
if [ -e /tmp/.ICE-unix ] || [ -L /tmp/.ICE-unix ]; then
  ice_saved=/tmp/.ICE-unix.gl-saved-$$
  mv /tmp/.ICE-unix "$ice_saved"
fi
GL_CLEANUPS+=("rm -rf /tmp/.ICE-unix; [ -z '$ice_saved' ] || mv '$ice_saved' /tmp/.ICE-unix")
as_user $GL_USER_B sh -c 'mkdir -m 1777 /tmp/.ICE-unix'
as_user $GL_USER_B python3 -c '
import socket; s = socket.socket(socket.AF_UNIX); s.bind("/tmp/.ICE-unix/gl-planted")'
out=$(as_user $GL_USER_A "$LAUNCH" t-att-bb -- /bin/sh -c 'grep -c ICE-unix /proc/self/mountinfo' 2>"$WORK/err")
check_sh "15: user B's /tmp/.ICE-unix is not bound into A's sandbox (with a warning)" \
  '[ "$out" = 0 ] && grep -q "not passing the sockets of /tmp/.ICE-unix" "$WORK/err"'
eval "${GL_CLEANUPS[-1]}"
unset 'GL_CLEANUPS[-1]'

# --- F4: the view's mounts are locked against the user's own namespace ---
# The caller owns the view's user namespace and may enter it from outside
# with capabilities that count there.  Still: the read-only binds over the
# host's mount points (host base) cannot be unmounted - which would show
# what the launcher's copies have beneath them, hidden from every user on
# the host - nor made writable; the overlays cannot be unmounted either.
cat > "$WORK/f4.py" <<'PY'
import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
app = sys.argv[1]
nsfd = [os.open("/proc/%s/ns/%s" % (app, n), os.O_RDONLY) for n in ("user", "mnt")]
root = os.open("/proc/%s/root" % app, os.O_RDONLY)
for fd in nsfd:
    if libc.setns(fd, 0) != 0:
        print("setns failed", errno.errorcode[ctypes.get_errno()])
        sys.exit(1)
os.fchdir(root)
os.chroot(".")
def res(r):
    return "ok" if r == 0 else errno.errorcode[ctypes.get_errno()]
MS_REMOUNT, MS_BIND, MNT_DETACH = 32, 4096, 2
# control: capabilities here are real - a mount of one's own comes and goes
os.makedirs("/tmp/gl-f4-own", exist_ok=True)
print("own-mount", res(libc.mount(b"tmpfs", b"/tmp/gl-f4-own", b"tmpfs", 0, None)))
print("own-umount", res(libc.umount2(b"/tmp/gl-f4-own", 0)))
for p in sys.argv[2:]:
    print("umount", p, res(libc.umount2(p.encode(), 0)))
    print("detach", p, res(libc.umount2(p.encode(), MNT_DETACH)))
    print("remount-rw", p, res(libc.mount(None, p.encode(), None, MS_REMOUNT | MS_BIND, None)))
PY
chmod 644 "$WORK/f4.py"
echo wait > "$WORK/go-f4"; chmod 644 "$WORK/go-f4"
as_user $GL_USER_A "$LAUNCH" t-att-host -- /bin/sh -c \
  "touch /tmp/gl-f4-up; while [ \"\$(cat $WORK/go-f4)\" != go ]; do sleep 0.05; done" &
f4_bg=$!
f4_app=$(gl_wait_pid $GL_USER_A '^/bin/sh -c touch /tmp/gl-f4-up')
gl_wait 30 [ -e "$GL_STORE/t-att-host/users/$UID_A/tmp/upper/gl-f4-up" ]
out=$(as_user $GL_USER_A python3 "$WORK/f4.py" "$f4_app" /run/user/$UID_B /sys /proc /tmp /run/user/$UID_A 2>&1)
echo "$out" | sed 's/^/# /'
check_sh "F4: entering the view's namespaces from outside gives capabilities there (own mount made and removed)" \
  'grep -qx "own-mount ok" <<< "$out" && grep -qx "own-umount ok" <<< "$out"'
check_sh "F4: the read-only bind over a host mount point cannot be unmounted (EINVAL: locked)" \
  'grep -qx "umount /run/user/$UID_B EINVAL" <<< "$out" && grep -qx "detach /run/user/$UID_B EINVAL" <<< "$out"'
check_sh "F4: ... nor made writable (EPERM), nor /sys" \
  'grep -qx "remount-rw /run/user/$UID_B EPERM" <<< "$out" && grep -qx "remount-rw /sys EPERM" <<< "$out"'
check_sh "F4: /sys, /proc and the overlays cannot be unmounted either" \
  '[ "$(grep -cE "^(umount|detach) (/sys|/proc|/tmp|/run/user/$UID_A) EINVAL$" <<< "$out")" = 8 ]'
echo go > "$WORK/go-f4"
wait $f4_bg

finish
