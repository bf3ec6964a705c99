#!/bin/bash
# glimpse-launch: running apps — identity, exit status, signals, cwd, env,
# sockets, errors and their desktop report, root and non-setuid runs.
# SPDX-License-Identifier: LGPL-2.1-or-later
. "$(dirname "$0")/libtest.sh"

gl_make_sandbox t-run-bb rootfs
gl_make_sandbox t-run-host host
gl_install_setuid

# --- identity (uid, gid, supplementary groups), no caps, NoNewPrivs ---
want="$(as_user $GL_USER_A id -u) $(as_user $GL_USER_A id -g) $(as_user $GL_USER_A id -G | tr ' ' '\n' | sort -n | tr '\n' ' ')"
for sb in t-run-bb t-run-host; do
  got=$(as_user $GL_USER_A "$LAUNCH" $sb -- /bin/sh -c 'echo "$(id -u) $(id -g) $(id -G | tr " " "\n" | sort -n | tr "\n" " ")"')
  check "$sb: uid/gid/groups inside equal the caller's ($want)" [ "$got" = "$want" ]
  st=$(as_user $GL_USER_A "$LAUNCH" $sb -- cat /proc/self/status)
  check "$sb: CapEff/CapPrm/CapBnd/CapAmb all zero" \
    [ "$(echo "$st" | grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb):' | grep -vc '0000000000000000$')" = 0 ]
  check "$sb: NoNewPrivs 1" grep -q '^NoNewPrivs:[[:space:]]*1' <<< "$st"
  check "$sb: Uid line is the real uid" grep -qE "^Uid:[[:space:]]+$UID_A[[:space:]]+$UID_A[[:space:]]+$UID_A[[:space:]]+$UID_A" <<< "$st"
done
check "rootfs view is the busybox tree" [ "$(as_user $GL_USER_A "$LAUNCH" t-run-bb -- cat /etc/glimpse-test-marker)" = busybox-rootfs ]
check "system layer visible over rootfs" [ "$(as_user $GL_USER_A "$LAUNCH" t-run-bb -- cat /etc-glimpse-system)" = system-layer ]
check "host view shows host /etc/os-release" \
  cmp -s /etc/os-release <(as_user $GL_USER_A "$LAUNCH" t-run-host -- cat /etc/os-release)
echo host-system > "$GL_STORE/t-run-host/system/1/tree/glimpse-host-system-marker"
check "system layer visible over host base" [ "$(as_user $GL_USER_A "$LAUNCH" t-run-host -- cat /glimpse-host-system-marker 2>&1)" = host-system ]
out=$(as_user $GL_USER_A "$LAUNCH" t-run-host -- /bin/sh -c 'touch /etc/glimpse-should-fail; echo status=$?; touch /tmp/gl-run-rw && echo tmp-ok' 2>&1)
check_sh "host base: / is read-only (EROFS), while /tmp in the same launch is writable" \
  'grep -q "Read-only file system" <<< "$out" && grep -qx "status=1" <<< "$out" && grep -qx tmp-ok <<< "$out"'
check "host base: host /etc not written" [ ! -e /etc/glimpse-should-fail ]

# --- exit status and signals ---
as_user $GL_USER_A "$LAUNCH" t-run-bb -- /bin/sh -c 'exit 42'; rc=$?
check "exit status passed back (42)" [ $rc = 42 ]
as_user $GL_USER_A "$LAUNCH" t-run-bb -- /bin/sh -c 'kill -TERM $$'; rc=$?
check "death by SIGTERM passed back (143)" [ $rc = 143 ]
as_user $GL_USER_A "$LAUNCH" t-run-bb -- /bin/sh -c 'kill -KILL $$'; rc=$?
check "death by SIGKILL passed back (137)" [ $rc = 137 ]
as_user $GL_USER_A "$LAUNCH" t-run-bb -- /bin/does-not-exist 2>"$WORK/err"; rc=$?
check "command not found: 127" [ $rc = 127 ]
check_sh "command not found: one clear line" '[ "$(wc -l < "$WORK/err")" = 1 ] && grep -q "^glimpse-launch: command not found inside sandbox" "$WORK/err"' 
as_user $GL_USER_A "$LAUNCH" t-run-bb -- /etc/passwd 2>"$WORK/err"; rc=$?
check "not executable: 126" [ $rc = 126 ]
as_user $GL_USER_A "$LAUNCH" no-such-sandbox -- /bin/true 2>"$WORK/err"; rc=$?
check_sh "unknown sandbox: 125, one line" '[ $rc = 125 ] && [ "$(wc -l < "$WORK/err")" = 1 ] && grep -q "unknown sandbox" "$WORK/err"' 
as_user $GL_USER_A "$LAUNCH" 2>/dev/null; check "usage error: 125" [ $? = 125 ]
check "--help exits 0" as_user $GL_USER_A "$LAUNCH" --help >/dev/null
# signal forwarding: SIGTERM to the launcher reaches the app
as_user $GL_USER_A "$LAUNCH" t-run-bb -- /bin/sh -c 'trap "echo got-term; exit 7" TERM; echo ready; while :; do sleep 0.05; done' > "$WORK/sig" &
bgpid=$!
gl_wait 30 grep -q ready "$WORK/sig" 2>/dev/null
lpid=$(pgrep -o -u $UID_A -f "launch-$TEST_NAME t-run-bb -- /bin/sh -c trap")
kill -TERM $lpid; wait $bgpid; rc=$?
check_sh "SIGTERM forwarded to the app (trap ran, status 7)" '[ $rc = 7 ] && grep -q got-term "$WORK/sig"' 

# --- cwd kept when visible, else $HOME ---
got=$(cd "$HOME_A" && as_user $GL_USER_A "$LAUNCH" t-run-bb -- pwd)
check "cwd kept ($HOME_A)" [ "$got" = "$HOME_A" ]
got=$(cd /usr/lib && as_user $GL_USER_A "$LAUNCH" t-run-bb -- pwd)
check "cwd not in the sandbox -> \$HOME" [ "$got" = "$HOME_A" ]
got=$(cd /usr/lib && as_user $GL_USER_A "$LAUNCH" t-run-host -- pwd)
check "cwd kept in host base (/usr/lib)" [ "$got" = /usr/lib ]

# --- environment (SECURITY.md case 2 for the app's side) ---
env_out=$(GL_EXTRA_ENV="LD_PRELOAD=/nonexistent.so LD_LIBRARY_PATH=/tmp LD_AUDIT=/x.so GCONV_PATH=/tmp GLIBC_TUNABLES=glibc.malloc.check=3 MALLOC_CHECK_=3 MALLOC_PERTURB_=7 DISPLAY=:99 TERM=xterm-test DISPLAYX=:98 TERMINFO=/tmp/ti LANGX=x HOME=/root PATH=/tmp SHELL=/tmp/x" \
  as_user $GL_USER_A "$LAUNCH" t-run-bb -- env)
check_sh "LD_*/GCONV_PATH/GLIBC_TUNABLES/MALLOC_* not passed (the app's environment was printed)" \
  'grep -qx GLIMPSE_SANDBOX=t-run-bb <<< "$env_out" && ! grep -qE "^(LD_|GCONV_PATH|GLIBC_TUNABLES|MALLOC_)" <<< "$env_out"'
check_sh "DISPLAY and TERM passed" 'grep -qx DISPLAY=:99 <<< "$env_out" && grep -qx TERM=xterm-test <<< "$env_out"'
check_sh "names that only begin with an allowed one (DISPLAYX, TERMINFO, LANGX) not passed" \
  '! grep -qE "^(DISPLAYX|TERMINFO|LANGX)=" <<< "$env_out"'
check_sh "HOME/SHELL from passwd, PATH reset, GLIMPSE_SANDBOX" 'grep -qx "HOME=$HOME_A" <<< "$env_out" &&
  grep -qx "SHELL=/bin/sh" <<< "$env_out" && grep -qx "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" <<< "$env_out" &&
  grep -qx GLIMPSE_SANDBOX=t-run-bb <<< "$env_out"' 
check "no inherited fds beyond 0-2" [ "$(as_user $GL_USER_A "$LAUNCH" t-run-bb -- /bin/ls /proc/self/fd | tr '\n' ' ')" = "0 1 2 3 " ]

# --- sockets in lower layers stay connectable (X11 dir in /tmp, runtime dir) ---
if command -v python3 >/dev/null; then
  install -d -m 1777 /tmp/.X11-unix
  sock_srv () {
    as_user $GL_USER_A python3 -c '
import socket, sys, os
p = sys.argv[1]
try: os.unlink(p)
except FileNotFoundError: pass
s = socket.socket(socket.AF_UNIX); s.bind(p); s.listen(1)
open(sys.argv[2], "w").close()
c, _ = s.accept(); c.sendall(b"hello-from-host"); c.close(); os.unlink(p)' "$1" "$2" &
  }
  # (of /tmp/.X11-unix only the socket $DISPLAY names is passed)
  xdisp=$((7300 + $$ % 1000))
  for sp in "/tmp/.X11-unix/X$xdisp" "/run/user/$UID_A/gl-test-bus$$"; do
    rm -f "$WORK/ready"; sock_srv "$sp" "$WORK/ready"; spid=$!
    gl_wait 30 [ -e "$WORK/ready" ]
    got=$(GL_EXTRA_ENV="DISPLAY=:$xdisp" as_user $GL_USER_A timeout 60 "$LAUNCH" t-run-host -- python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(s.recv(100).decode())' "$sp" 2>&1)
    check "host socket $sp connectable from inside" [ "$got" = hello-from-host ]
    pkill -P $spid 2>/dev/null; kill $spid 2>/dev/null; wait $spid 2>/dev/null
  done
else
  fail "python3 missing: socket pass-through not tested"
fi

# --- host themes, icons and fonts merged over the sandbox's own, host first ---
bbroot=$GL_STORE/t-run-bb/rootfs
made_dirs=()
GL_CLEANUPS+=("rm -rf /usr/share/{themes,icons,fonts}/GlTest{Host,Both}$$")
for d in themes icons fonts; do
  h=/usr/share/$d
  [ -d "$h" ] || { mkdir "$h"; made_dirs+=("$h"); }
  mkdir -p "$h/GlTestHost$$" "$h/GlTestBoth$$" "$bbroot/usr/share/$d/GlTestBoth$$" \
    "$bbroot/usr/share/$d/GlTestSandbox$$"
  echo host > "$h/GlTestHost$$/index"; echo host > "$h/GlTestBoth$$/index"
  echo sandbox > "$bbroot/usr/share/$d/GlTestBoth$$/index"
  echo sandbox > "$bbroot/usr/share/$d/GlTestSandbox$$/index"
  got=$(as_user $GL_USER_A "$LAUNCH" t-run-bb -- /bin/sh -c \
    "cd /usr/share/$d && cat GlTestHost$$/index GlTestBoth$$/index GlTestSandbox$$/index" 2>&1 | tr '\n' ' ')
  check "host /usr/share/$d merged over the sandbox's, host first (saw: $got)" [ "$got" = "host host sandbox " ]
  refused "merged /usr/share/$d read-only inside (EROFS)" "Read-only file system" \
    as_user $GL_USER_A "$LAUNCH" t-run-bb -- /bin/sh -c "echo x > /usr/share/$d/GlTestHost$$/index"
  check "host /usr/share/$d unchanged" [ "$(cat "$h/GlTestHost$$/index")" = host ]
done
# A sandbox without a directory of its own still shows the host's.
rm -rf "$bbroot/usr/share/fonts"
got=$(as_user $GL_USER_A "$LAUNCH" t-run-bb -- /bin/cat /usr/share/fonts/GlTestHost$$/index 2>&1)
check "host /usr/share/fonts shown where the sandbox has none" [ "$got" = host ]
for d in themes icons fonts; do rm -rf "/usr/share/$d/GlTestHost$$" "/usr/share/$d/GlTestBoth$$"; done
for d in "${made_dirs[@]}"; do rmdir "$d"; done

# --- a real X client reaches the host's X server (Xvfb) ---
if command -v Xvfb >/dev/null && command -v xdpyinfo >/dev/null; then
  # a free display Xvfb picks itself (no race with another X server
  # starting) and names once it accepts clients
  Xvfb -displayfd 3 -nolisten tcp -screen 0 640x480x24 3>"$WORK/xvfb.display" >"$WORK/xvfb.log" 2>&1 &
  xpid=$!
  gl_wait 30 grep -q '^[0-9]' "$WORK/xvfb.display"
  dpy=$(head -n1 "$WORK/xvfb.display")
  got=$(GL_EXTRA_ENV="DISPLAY=:$dpy" as_user $GL_USER_A timeout 60 "$LAUNCH" t-run-host -- \
    xdpyinfo 2>&1)
  check_sh "xdpyinfo inside sees the host's Xvfb :$dpy (640x480)" \
    'grep -q "dimensions:[[:space:]]*640x480 pixels" <<< "$got"'
  [ "$n_fail" -eq 0 ] || echo "$got" | head -5 | sed "s/^/# /"
  kill $xpid 2>/dev/null; wait $xpid 2>/dev/null
else
  skip_case "X11 pass-through" "Xvfb or xdpyinfo missing (apt install xvfb x11-utils)"
fi

# --- submounts below an overlaid dir are shown, read-only ---
install -d -o $GL_USER_A -m 0755 "$HOME_A/gl-submount"
mount -t tmpfs -o size=1m,mode=0755,uid=$UID_A tmpfs "$HOME_A/gl-submount"
GL_CLEANUPS+=("umount -l '$HOME_A/gl-submount'; rmdir '$HOME_A/gl-submount'")
echo sub > "$HOME_A/gl-submount/file"
check "submount below \$HOME visible inside" [ "$(as_user $GL_USER_A "$LAUNCH" t-run-bb -- cat "$HOME_A/gl-submount/file")" = sub ]
refused "submount below \$HOME read-only inside (EROFS)" "Read-only file system" \
  as_user $GL_USER_A "$LAUNCH" t-run-bb -- sh -c "echo x > $HOME_A/gl-submount/file"
check "... while \$HOME itself is writable in the same launch" \
  as_user $GL_USER_A "$LAUNCH" t-run-bb -- sh -c "echo x > $HOME_A/gl-submount-sibling"
check "submount file unchanged" [ "$(cat "$HOME_A/gl-submount/file")" = sub ]
umount "$HOME_A/gl-submount"; rmdir "$HOME_A/gl-submount"
unset 'GL_CLEANUPS[-1]'
check "/run/user/UID is the tmpfs's content" [ "$(as_user $GL_USER_A sh -c "echo rt > /run/user/$UID_A/gl-rt; $LAUNCH t-run-bb -- cat /run/user/$UID_A/gl-rt")" = rt ]
rm -f /run/user/$UID_A/gl-rt

# --- the lock: busy sandbox refused; app holds LOCK_SH for its life ---
# (held until the launch was refused: no pause to outlast, none to wait)
flock -x "$GL_STORE/t-run-bb/lock" sh -c "touch '$WORK/held'; while [ ! -e '$WORK/release' ]; do sleep 0.05; done" &
holder=$!
gl_wait 30 [ -e "$WORK/held" ]
as_user $GL_USER_A "$LAUNCH" t-run-bb -- /bin/true 2>"$WORK/err"; rc=$?
check_sh "sandbox being changed: 125 + message" '[ $rc = 125 ] && grep -q "being changed" "$WORK/err"'
touch "$WORK/release"; wait $holder
# the app (a sleep of its own, found by its arguments) runs until killed
as_user $GL_USER_A "$LAUNCH" t-run-bb -- sleep 62.17 &
lp=$!
app=$(gl_wait_pid $GL_USER_A '^sleep 62[.]17$')
flock -x -n -E 99 "$GL_STORE/t-run-bb/lock" true; rc=$?
check_sh "running app holds the lock (LOCK_EX|LOCK_NB conflicts)" '[ -n "$app" ] && [ $rc = 99 ]'
[ -n "$app" ] && kill "$app"
wait $lp
# (the view's PID 1 holds the lock for the view's life, and ends on its own
# a moment after the launcher has returned - the launcher returns when its
# app ends: 4-9 ms later here.  Tried at once, the lock was still held in
# 4-6 of 50 such launches on the 2-core VM under load.)
check "lock free after the app exits" flock -x -w 30 "$GL_STORE/t-run-bb/lock" true

# --- errors reach the desktop when there is no terminal, and there is a
# session bus to show them on ---
with_bus () { as_user $GL_USER_A env DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/$UID_A/no-bus "$@"; }
rm -f /run/user/$UID_A/notify.log /run/user/$UID_A/notify.calls
with_bus "$LAUNCH" t-run-bb -- /bin/nope 2>/dev/null </dev/null
gl_wait 30 [ -s /run/user/$UID_A/notify.log ]
log=$(cat /run/user/$UID_A/notify.log 2>/dev/null)
check_sh "notify-error called with the message" 'grep -q "^args: notify-error --title .*command not found inside sandbox" <<< "$log"'
check_sh "notify-error runs as the user, no caps, NoNewPrivs" 'grep -q "^uid: $UID_A gid: $GID_A" <<< "$log" &&
  [ "$(grep -E "^Cap(Prm|Eff|Bnd|Amb):" <<< "$log" | grep -vc "0000000000000000$")" = 0 ] && grep -q "NoNewPrivs:.*1" <<< "$log"' 
rm -f /run/user/$UID_A/notify.log
with_bus "$LAUNCH" '../x' -- /bin/true 2>/dev/null </dev/null
gl_wait 30 [ -s /run/user/$UID_A/notify.log ]
check "early (pre-clone) error also notified, as the user" grep -q "^uid: $UID_A " /run/user/$UID_A/notify.log
rm -f /run/user/$UID_A/notify.log /run/user/$UID_A/notify.calls
# Nothing the helper prints comes after the launcher (and `glimpse run`)
# returned: without a session bus there is no helper (it could only say
# "Cannot autolaunch D-Bus without X11 $DISPLAY"); with one, the launcher
# waits for it (here for an error before the view is entered: a helper
# started from inside the view is in its PID namespace, and ends with it).
# The first launch's helper, were there one, has run by the time the
# second (which takes 1 s) returns: one run of the helper in all.
as_user $GL_USER_A "$LAUNCH" t-run-bb -- /bin/nope 2>"$WORK/nobus-err" </dev/null
echo 1 > /run/user/$UID_A/notify.delay
with_bus "$LAUNCH" '../x' -- /bin/true 2>"$WORK/bus-err" </dev/null
calls=$(wc -l < /run/user/$UID_A/notify.calls 2>/dev/null || echo 0)
check_sh "no session bus: the error is on stderr and no notification helper runs ($calls run)" \
  'grep -q "command not found inside sandbox" "$WORK/nobus-err" && [ "$calls" = 1 ]'
check_sh "… with one, the launcher returns after the helper: its output is before, not after" \
  'grep -q "^fake notify-error: done$" "$WORK/bus-err" && [ -s /run/user/$UID_A/notify.log ]'
rm -f /run/user/$UID_A/notify.log /run/user/$UID_A/notify.calls /run/user/$UID_A/notify.delay

# --- a launch that joins a running view gets exactly a first launch's
# treatment (SECURITY.md "Joining a running view"): the caller's ids, no
# capability, no-new-privs, the terminal filter, the environment
# allow-list, no inherited descriptor.  (The checks above are made on
# first launches: each of them ends its view.) ---
echo wait > "$WORK/go-join"; chmod 644 "$WORK/go-join"
as_user $GL_USER_A "$LAUNCH" t-run-host -- /bin/sh -c \
  "touch /tmp/gl-join-up; while [ \"\$(cat $WORK/go-join)\" != go ]; do sleep 0.05; done" &
join_bg=$!
gl_wait 30 [ -e "$GL_STORE/t-run-host/users/$UID_A/tmp/upper/gl-join-up" ]
join_app=$(gl_wait_pid $GL_USER_A '^/bin/sh -c touch /tmp/gl-join-up')
join_mnt=$(readlink /proc/"$join_app"/ns/mnt 2>/dev/null)
# (the caller leaves descriptor 7 open, and an environment to filter)
got=$(GL_EXTRA_ENV="LD_PRELOAD=/nonexistent.so LD_AUDIT=/x.so GCONV_PATH=/tmp GLIBC_TUNABLES=glibc.malloc.check=3 MALLOC_CHECK_=3 DISPLAYX=:98 HOME=/root PATH=/tmp SHELL=/tmp/x" \
  as_user $GL_USER_A /bin/sh -c 'exec 7</etc/hostname; exec "$0" t-run-host -- /bin/sh -c "
    echo ns \$(readlink /proc/self/ns/mnt)
    echo ids \$(id -u) \$(id -g) \$(id -G | tr \" \" \"\\n\" | sort -n | tr \"\\n\" \" \")
    echo fds \$(ls /proc/self/fd | tr \"\\n\" \" \")
    grep -E \"^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs|Seccomp):\" /proc/self/status
    env | sed \"s/^/env /\""' "$LAUNCH" 2>&1)
check_sh "joined: the launch joined the running view (its mount namespace)" \
  '[ -n "$join_mnt" ] && grep -qxF "ns $join_mnt" <<< "$got"'
check_sh "joined: uid/gid/groups equal the caller's ($want)" 'grep -qx "ids ${want% }" <<< "$got"'
check_sh "joined: no capability in any set" \
  '[ "$(grep -cE "^Cap(Inh|Prm|Eff|Bnd|Amb):[[:space:]]+0000000000000000$" <<< "$got")" = 5 ]'
check_sh "joined: NoNewPrivs 1 and the terminal filter (Seccomp 2)" \
  'grep -qE "^NoNewPrivs:[[:space:]]+1$" <<< "$got" && grep -qE "^Seccomp:[[:space:]]+2$" <<< "$got"'
check_sh "joined: the caller's descriptor 7 is not inherited (0-2 only)" 'grep -qx "fds 0 1 2 3" <<< "$got"'
check_sh "joined: LD_*/GCONV_PATH/GLIBC_TUNABLES/MALLOC_*/DISPLAYX not passed" \
  'grep -qx "env GLIMPSE_SANDBOX=t-run-host" <<< "$got" && ! grep -qE "^env (LD_|GCONV_PATH|GLIBC_TUNABLES|MALLOC_|DISPLAYX)" <<< "$got"'
check_sh "joined: HOME/SHELL from passwd, PATH reset" \
  'grep -qx "env HOME=$HOME_A" <<< "$got" && grep -qx "env SHELL=/bin/sh" <<< "$got" &&
   grep -qx "env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" <<< "$got"'
[ "$n_fail" -eq 0 ] || echo "$got" | sed 's/^/# /'
# SECURITY.md case 13 on the join path: the terminal filter is the
# launcher's own (787a471), so a joining launch must install it as a
# first one does.  (Without it, TIOCSTI on this pty answers 0 or EIO
# (dev.tty.legacy_tiocsti=0), TIOCLINUX ENOTTY/EINVAL: never EPERM.)
if command -v script >/dev/null && command -v python3 >/dev/null; then
  probe=$(gl_tty_probe)
  out=$(as_user $GL_USER_A script -qec "$LAUNCH t-run-host -- python3 $probe" /dev/null | tr -d '\r')
  check_sh "13, joined on a terminal: the launch joined the running view, on a tty" \
    '[ -n "$join_mnt" ] && grep -qxF "ns $join_mnt" <<< "$out" && grep -qx "tty True" <<< "$out"'
  check_sh "13, joined on a terminal: the app runs under the filter (Seccomp 2)" 'grep -qx "seccomp 2" <<< "$out"'
  check_sh "13, joined on a terminal: TIOCSTI refused (EPERM)" 'grep -qx "TIOCSTI errno 1" <<< "$out"'
  check_sh "13, joined on a terminal: TIOCLINUX refused (EPERM)" 'grep -qx "TIOCLINUX errno 1" <<< "$out"'
  grep -qx "TIOCSTI errno 1" <<< "$out" && grep -qx "TIOCLINUX errno 1" <<< "$out" || echo "$out" | sed 's/^/# /'
else
  fail "13, joined: script (util-linux) or python3 missing: the join path's terminal ioctls not tested"
fi
echo go > "$WORK/go-join"
wait $join_bg

# --- a user the password database has from NSS only, not /etc/passwd ---
# (systemd's userdb: a JSON record in /run/userdb, which libnss-systemd
# reads without systemd running.)  The static launcher does not read it
# itself: it falls back to getent (lookup_user); the launcher still finds
# the user's name, home and shell, never the caller's $HOME or $USER.
nss_uid=61990
nss_user=glimpse-test-nss
nss_home=$GL_TEST_ROOT/home-nss
if ! grep -qE '^passwd:.*\bsystemd\b' /etc/nsswitch.conf 2>/dev/null \
   || ! ls /lib/*/libnss_systemd.so.2 >/dev/null 2>&1; then
  skip_case "a user from NSS only" "libnss-systemd is not installed or not in nsswitch.conf's passwd line (.ci/install-deps installs it)"
elif grep -q "^[^:]*:[^:]*:$nss_uid:" /etc/passwd || getent passwd $nss_uid >/dev/null \
     || getent passwd $nss_user >/dev/null || getent passwd $((nss_uid + 1)) >/dev/null; then
  skip_case "a user from NSS only" "uid $nss_uid or $((nss_uid + 1)) or $nss_user is taken here"
else
  mkdir -p /run/userdb
  GL_CLEANUPS+=("rm -f /run/userdb/$nss_user.user /run/userdb/$nss_uid.user; rm -rf '$nss_home'")
  printf '{"userName":"%s","uid":%d,"gid":%d,"homeDirectory":"%s","shell":"/bin/sh","disposition":"regular"}\n' \
    $nss_user $nss_uid $nss_uid "$nss_home" > /run/userdb/$nss_user.user
  ln -sf $nss_user.user /run/userdb/$nss_uid.user
  install -d -o $nss_uid -g $nss_uid -m 0700 "$nss_home"
  check "the NSS-only user is known to getent, not in /etc/passwd" \
    sh -c "getent passwd $nss_uid | grep -qx '$nss_user:x:$nss_uid:$nss_uid:$nss_user:$nss_home:/bin/sh' && ! grep -q '^$nss_user:' /etc/passwd"
  got=$(cd / && setpriv --reuid=$nss_uid --regid=$nss_uid --clear-groups -- \
    env -i HOME=/root USER=root PATH=/usr/bin:/bin "$LAUNCH" t-run-bb -- \
    /bin/sh -c 'echo "$(id -u) $HOME $USER $SHELL"' 2>&1)
  check "a user from NSS only launches, with the database's name, home and shell ($got)" \
    [ "$got" = "$nss_uid $nss_home $nss_user /bin/sh" ]
  # (a uid no source has: refused, plainly)
  refused "a uid the password database does not have is refused" \
    "cannot find your user \(uid $((nss_uid + 1))\) in the password database" \
    setpriv --reuid=$((nss_uid + 1)) --regid=$((nss_uid + 1)) --clear-groups -- \
    env -i PATH=/usr/bin:/bin "$LAUNCH" t-run-bb -- true
fi

# --- as root, no setuid needed ---
got=$("$GL_LAUNCHER" t-run-bb -- /bin/sh -c 'id -u; cat /etc/glimpse-test-marker; grep CapEff /proc/self/status')
check_sh "root run works, no caps" '[ "$(echo "$got" | head -2 | tr "\n" " ")" = "0 busybox-rootfs " ] && grep -q "CapEff:[[:space:]]*0000000000000000" <<< "$got"' 

# --- without the setuid bit (unprivileged user namespaces) ---
install -o root -g root -m 0755 "$GL_LAUNCHER" "$GL_BIN/nosuid-$TEST_NAME"
got=$(as_user $GL_USER_A "$GL_BIN/nosuid-$TEST_NAME" t-run-bb -- /bin/sh -c "id -u; cat /etc/glimpse-test-marker" 2>"$WORK/err")
cat "$WORK/err" | sed "s/^/# /"
if [ "$(cat /proc/sys/kernel/unprivileged_userns_clone 2>/dev/null || echo 1)" = 1 ]; then
  check "non-setuid run works as the user (rootfs base)" [ "$(echo "$got" | tr '\n' ' ')" = "$UID_A busybox-rootfs " ]
  echo "$got" | sed "s/^/# /"
  # Views are not shared without the setuid bit: while one runs, another
  # launch of the sandbox refuses plainly, without waiting for it (the
  # kernel's exclusive use of the layer; no retries, no "earlier view").
  echo wait > "$WORK/go-nosuid"; chmod 644 "$WORK/go-nosuid"
  as_user $GL_USER_A "$GL_BIN/nosuid-$TEST_NAME" t-run-bb -- /bin/sh -c \
    "touch /tmp/gl-nosuid-up; while [ \"\$(cat $WORK/go-nosuid)\" != go ]; do sleep 0.05; done" &
  first=$!
  gl_wait 30 [ -e "$GL_STORE/t-run-bb/users/$UID_A/tmp/upper/gl-nosuid-up" ]
  refused "non-setuid: a second view while one runs is refused: one view of a sandbox at a time" \
    'another view of sandbox "t-run-bb" of yours is running; without the setuid bit glimpse-launch runs one view of a sandbox at a time' \
    as_user $GL_USER_A "$GL_BIN/nosuid-$TEST_NAME" t-run-bb -- true
  out=$(as_user $GL_USER_A "$GL_BIN/nosuid-$TEST_NAME" t-run-bb -- true 2>&1)
  check_sh "non-setuid: ... not blamed on an earlier view" '! grep -q "earlier view" <<< "$out"'
  echo go > "$WORK/go-nosuid"
  wait $first
  check "non-setuid: once it has ended, the next launch works" \
    gl_wait 30 as_user $GL_USER_A "$GL_BIN/nosuid-$TEST_NAME" t-run-bb -- true
  rm -f "$GL_BIN/nosuid-$TEST_NAME"
else
  rm -f "$GL_BIN/nosuid-$TEST_NAME"
  skip_case "non-setuid run" "unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone=0)"
fi

finish
