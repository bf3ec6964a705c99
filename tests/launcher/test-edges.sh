#!/bin/bash
# glimpse-launch: the holes a review found at the view's edges, SECURITY.md
# cases 22-27 (28 is in the unit test: a mount table read error is an
# error), and the session bus wherever its socket lives.  Run as ordinary
# users against the setuid copy; each attack fails, the host is unchanged.
# SPDX-License-Identifier: LGPL-2.1-or-later
. "$(dirname "$0")/libtest.sh"

gl_make_sandbox t-edge rootfs
gl_install_setuid
A () { as_user $GL_USER_A "$LAUNCH" t-edge -- "$@"; }
A true || { fail "first launch"; finish; exit 1; }
UDIR=$GL_STORE/t-edge/users/$UID_A

check_sh "users/ is 0711 (does not list who uses the sandbox)" \
  '[ "$(stat -c %a "$GL_STORE/t-edge/users")" = 711 ]'

# --- 22: the view's namespaces are the caller's, not root's ---
ns_owner () {
  python3 -c 'import fcntl,os,struct,sys
fd = os.open(sys.argv[1], os.O_RDONLY)
print(struct.unpack("I", fcntl.ioctl(fd, 0xb704, b"\0" * 4))[0])' "$1"
}
# a sleep no other test runs, found by its arguments (not by timing: a
# slow machine may take longer than any fixed pause to start the app)
A /bin/sh -c 'exec sleep 61.22' &
bg=$!
app=$(gl_wait_pid $GL_USER_A '^sleep 61[.]22$')
owner=$(ns_owner /proc/"$app"/ns/user 2>&1)
check_sh "22: the view's user namespace is owned by the caller ($owner), so its namespaces count against the caller's limits" \
  '[ "$owner" = "$UID_A" ]'
[ -n "$app" ] && kill "$app"
wait $bg
# and behaviourally: with a limit of 1 user namespace per user, the caller's
# view counts against the caller's limit, never root's (where the limit can
# be changed: not inside a container)
old_max=$(cat /proc/sys/user/max_user_namespaces)
if ( echo "$old_max" > /proc/sys/user/max_user_namespaces ) 2>/dev/null; then
  GL_CLEANUPS+=("echo $old_max > /proc/sys/user/max_user_namespaces")
  A /bin/sh -c 'exec sleep 61.33' &
  bg=$!
  app=$(gl_wait_pid $GL_USER_A '^sleep 61[.]33$')
  check "22: the caller's app runs (so its view holds a user namespace)" [ -n "$app" ]
  echo 1 > /proc/sys/user/max_user_namespaces
  root_ok=$(unshare -U true 2>&1 && echo root-ok)
  echo "$old_max" > /proc/sys/user/max_user_namespaces
  pkill -u $GL_USER_A -f '^sleep 61[.]33$'
  wait $bg
  check_sh "22: while the caller holds a view (limit 1 per user), root can still create a user namespace" \
    'grep -q root-ok <<< "$root_ok"'
else
  echo "# 22: /proc/sys/user/max_user_namespaces cannot be changed here (a container?); the owner check above stands for it"
fi

# --- 23: other users' sockets in /tmp/.X11-unix and /tmp/.ICE-unix ---
for d in /tmp/.X11-unix /tmp/.ICE-unix; do
  [ -d $d ] || { install -d -m 1777 $d; GL_CLEANUPS+=("rmdir $d 2>/dev/null"); }
done
mksock () {  # mksock USER PATH...: unix sockets owned by USER
  local u=$1; shift
  as_user "$u" python3 -c 'import socket,sys
for p in sys.argv[1:]:
    s = socket.socket(socket.AF_UNIX); s.bind(p)' "$@"
}
flood=()
for i in $(seq 300); do flood+=(/tmp/.ICE-unix/gl-e23-b$i); done
flood+=(/tmp/.X11-unix/X$((UID_B % 1000 + 7100)))
mksock $GL_USER_B "${flood[@]}"
disp=$((UID_A % 1000 + 7200))
mksock $GL_USER_A /tmp/.X11-unix/X$disp /tmp/.ICE-unix/gl-e23-a
GL_CLEANUPS+=("rm -f /tmp/.ICE-unix/gl-e23-* /tmp/.X11-unix/X$disp /tmp/.X11-unix/X$((UID_B % 1000 + 7100))")
out=$(GL_EXTRA_ENV="DISPLAY=:$disp" A /bin/sh -c 'grep -o " /tmp/\.[A-Z0-9]*-unix/[^ ]*" /proc/self/mountinfo')
check_sh "23: the caller's X11 socket (\$DISPLAY's) is passed" 'grep -qx " /tmp/.X11-unix/X$disp" <<< "$out"'
check_sh "23: the caller's ICE socket is passed despite 300 of another user's" 'grep -qx " /tmp/.ICE-unix/gl-e23-a" <<< "$out"'
check_sh "23: none of the other user's sockets is passed" '! grep -q "gl-e23-b\|X$((UID_B % 1000 + 7100))" <<< "$out"'

# --- the session bus wherever its socket lives (when it is the caller's) ---
busdir=$(as_user $GL_USER_A mktemp -d /tmp/gl-e-bus.XXXXXX)
GL_CLEANUPS+=("rm -rf $busdir")
mksock $GL_USER_A "$busdir/bus"
out=$(GL_EXTRA_ENV="DBUS_SESSION_BUS_ADDRESS=unix:path=$busdir/bus,guid=0123" A /bin/sh -c "grep -c ' $busdir/bus ' /proc/self/mountinfo")
check_sh "the session bus socket in /tmp is passed (bound, so connecting works)" '[ "$out" = 1 ]'
mksock $GL_USER_B /tmp/gl-e-bus-b
GL_CLEANUPS+=("rm -f /tmp/gl-e-bus-b")
out=$(GL_EXTRA_ENV="DBUS_SESSION_BUS_ADDRESS=unix:path=/tmp/gl-e-bus-b" A /bin/sh -c "grep -c ' /tmp/gl-e-bus-b ' /proc/self/mountinfo")
check_sh "another user's socket named as the bus is not passed" '[ "$out" = 0 ]'

# --- 24: a mount on a regular file under /tmp does not block launches ---
: > /tmp/gl-e24-file
mount --bind /etc/hostname /tmp/gl-e24-file
GL_CLEANUPS+=("umount /tmp/gl-e24-file; rm -f /tmp/gl-e24-file")
out=$(as_user $GL_USER_B "$LAUNCH" t-edge -- /bin/echo launched 2>&1); rc=$?
check_sh "24: another user's launch is not refused because of a mount on a file in /tmp (one warning)" \
  '[ $rc = 0 ] && grep -qx launched <<< "$out" && [ "$(grep -c warning <<< "$out")" -le 1 ]'
umount /tmp/gl-e24-file; rm -f /tmp/gl-e24-file
unset 'GL_CLEANUPS[${#GL_CLEANUPS[@]}-1]'

# --- 24: another user's FUSE mount under /tmp (allow_other) whose daemon
# never answers: the launch does not wait for it (the mount table says
# whose it is; an lstat() of it would wait for that user's daemon) ---
if [ -c /dev/fuse ] && grep -qw fuse /proc/filesystems; then
  mkdir -p /tmp/gl-e24-fuse
  exec {fusefd}<>/dev/fuse
  if mount -i -t fuse.gl-e24 -o "fd=$fusefd,rootmode=40000,user_id=$UID_A,group_id=0,allow_other,nosuid,nodev" \
       gl-e24 /tmp/gl-e24-fuse; then
    GL_CLEANUPS+=("umount -l /tmp/gl-e24-fuse; rmdir /tmp/gl-e24-fuse")
    # (a deadline for a hang, far beyond a launch's time, not a pause)
    out=$(as_user $GL_USER_B timeout -k 10 60 "$LAUNCH" t-edge -- /bin/echo launched 2>&1); rc=$?
    check_sh "24: another user's unanswering FUSE mount in /tmp does not hold up your launch (rc $rc)" \
      '[ $rc = 0 ] && grep -qx launched <<< "$out" && grep -q "gl-e24-fuse (another user.s)" <<< "$out"'
    exec {fusefd}<&-     # the connection ends with its last descriptor
    umount -l /tmp/gl-e24-fuse; rmdir /tmp/gl-e24-fuse
    unset 'GL_CLEANUPS[${#GL_CLEANUPS[@]}-1]'
  else
    exec {fusefd}<&-
    rmdir /tmp/gl-e24-fuse
    skip_case "24: unanswering FUSE mount" "cannot mount a FUSE file system here"
  fi
else
  skip_case "24: unanswering FUSE mount" "no /dev/fuse or no fuse in the kernel"
fi

# --- 25: a minimal /dev; its own IPC namespace ---
# (the user cannot write /dev itself on the host either: what would reach
# the host is a write under a world-writable directory of the host's /dev,
# as /dev/mqueue is on systemd hosts - here one made for the case)
install -d -m 1777 /dev/gl-e25-dir
GL_CLEANUPS+=("rm -rf /dev/gl-e25-dir")
out=$(A /bin/sh -c 'echo x > /dev/gl-e25-dir/app 2>/dev/null && echo wrote-dir; echo x > /dev/gl-e25 && echo wrote; echo y > /dev/null && echo null-ok; [ -c /dev/zero ] && echo zero; [ -e /dev/pts/ptmx ] && echo pts; [ -d /dev/shm ] && echo shm; ls /dev | wc -l; readlink /proc/self/ns/ipc')
check_sh "25: what the app writes under /dev does not reach the host (nor a world-writable directory of the host's /dev)" \
  '[ ! -e /dev/gl-e25 ] && [ ! -e /dev/gl-e25-dir/app ] && ! grep -qx wrote-dir <<< "$out"'
rm -rf /dev/gl-e25-dir
unset 'GL_CLEANUPS[${#GL_CLEANUPS[@]}-1]'
check_sh "25: /dev has the standard nodes, a devpts and /dev/shm" \
  'grep -qx null-ok <<< "$out" && grep -qx zero <<< "$out" && grep -qx pts <<< "$out" && grep -qx shm <<< "$out"'
host_devs=$(ls /dev | wc -l)
n_devs=$(sed -n '/^[0-9]*$/p' <<< "$out" | tail -1)
check_sh "25: /dev is minimal ($n_devs entries, host $host_devs)" '[ -n "$n_devs" ] && [ "$n_devs" -lt 30 ]'
check_sh "25: the app has its own IPC namespace" \
  '[ "$(tail -1 <<< "$out")" != "$(readlink /proc/self/ns/ipc)" ] && grep -q "^ipc:" <<< "$(tail -1 <<< "$out")"'

# --- 26: kill 0 from an app on a terminal reaches nothing outside ---
cat > "$WORK/caller.sh" <<EOF
sleep 30 & other=\$!
pg=\$(ps -o pgid= \$\$ | tr -d ' ')
"$LAUNCH" t-edge -- /bin/sh -c "trap '' TERM; kill -TERM 0; kill -TERM -\$pg; [ -t 0 ] && echo had-a-tty"
kill -0 \$other && echo caller-group-survived
kill \$other
EOF
chmod 755 "$WORK/caller.sh"
out=$(as_user $GL_USER_A script -qec "/bin/sh $WORK/caller.sh" /dev/null 2>&1 | tr -d '\r')
check_sh "26: kill 0 and kill -PGID from an app on a terminal reach nothing outside" \
  'grep -qx caller-group-survived <<< "$out" && grep -qx had-a-tty <<< "$out"'

# --- without a terminal, an app stopped and continued (by anything in the
# view, here by itself) does not leave its launcher stopped for good: the
# launcher mirrors a stop only for job control on a terminal ---
out=$(as_user $GL_USER_A timeout 20 "$LAUNCH" t-edge -- /bin/sh -c \
  '(sleep 0.5; kill -CONT $$) & kill -STOP $$; wait; echo resumed' 2>&1); rc=$?
check_sh "without a terminal, a stopped and continued app's launcher returns with it (exit $rc: $out)" \
  '[ $rc = 0 ] && [ "$out" = resumed ]'

# --- 27: no mount of the view shares a peer group with the host ---
# (the host may have no shared mount at all: the test user's runtime
# directory, this test's own tmpfs, made shared for the case stands for
# one; its copy and the socket bound from it are the launcher's copies)
mount --make-shared /run/user/$UID_A
GL_CLEANUPS+=("mount --make-private /run/user/$UID_A; rm -f /run/user/$UID_A/gl-e27.sock")
mksock $GL_USER_A /run/user/$UID_A/gl-e27.sock
out=$(A /bin/sh -c "grep -c ' /run/user/$UID_A/gl-e27.sock ' /proc/self/mountinfo; grep -c shared: /proc/self/mountinfo")
check_sh "27: no shared: tag inside the view, though the host's runtime directory is shared ($(echo $out))" \
  'findmnt -no PROPAGATION /run/user/$UID_A | grep -q "^shared" && [ "$(sed -n 1p <<< "$out")" = 1 ] && [ "$(sed -n 2p <<< "$out")" = 0 ]'
eval "${GL_CLEANUPS[-1]}"
unset 'GL_CLEANUPS[${#GL_CLEANUPS[@]}-1]'

# --- a layer the kernel cannot prepare, a store that is full ---
# The kernel mounts a writable layer whose work directory it cannot
# prepare read-only (and says so only in its log): the launch still runs,
# and says so; nothing reaches the host.  (The work directory made
# immutable stands in for an inode table full even for the kernel.)
A true
if chattr +i "$UDIR/tmp/work"; then
  GL_CLEANUPS+=("chattr -i '$UDIR/tmp/work'")
  out=$(A /bin/sh -c 'echo x > /tmp/gl-edge-ro 2>&1 || echo refused' 2>&1); rc=$?
  chattr -i "$UDIR/tmp/work"
  echo "$out" | sed 's/^/# /'
  check_sh "a layer the kernel mounts read-only: the launch runs and says so ($rc)" \
    '[ $rc = 0 ] && grep -q "warning: /tmp is read-only in this view: the kernel could not prepare the work directory of your layer" <<< "$out"'
  check_sh "... the app's write is refused (read-only), nothing on the host" \
    'grep -q "Read-only file system" <<< "$out" && grep -qx refused <<< "$out" && [ ! -e /tmp/gl-edge-ro ] && [ ! -e "$UDIR/tmp/upper/gl-edge-ro" ]'
  check "... and the next launch writes again" A /bin/sh -c 'echo x > /tmp/gl-edge-ro'
else
  skip_case "read-only layer" "chattr +i is not supported on the test store's file system"
fi
# A store so full that even root cannot record the view: a clear error.
gl_make_sandbox t-edge-full rootfs 2>/dev/null
full=$GL_STORE/t-edge-full
mount -t tmpfs -o size=8m,mode=0755 tmpfs "$full" && GL_CLEANUPS+=("umount -l '$full'")
gl_make_sandbox t-edge-full rootfs 2>/dev/null
as_user $GL_USER_A "$LAUNCH" t-edge-full -- true
check "a sandbox on a small file system starts" as_user $GL_USER_A "$LAUNCH" t-edge-full -- true
# (a record already there is rewritten in place, needing no new space:
# the first record of a view needs some)
rm -f "$full/users/.views/$UID_A"
dd if=/dev/zero of="$full/filler" bs=1M count=16 2>/dev/null
refused "a store too full to record the view: refused, saying the file system is full" \
  'cannot start sandbox "t-edge-full": the file system that holds it \(and your layers\) is full' \
  as_user $GL_USER_A "$LAUNCH" t-edge-full -- true

finish
