#!/bin/bash
# glimpse-launch: one shared view per (user, sandbox).  SECURITY.md cases 20
# (concurrent first launches, one view, no overlayfs in-use warning) and 21
# (joining only a view root recorded and the kernel confirms), plus what a
# user sees: apps see each other's files at once, share one mount
# namespace, each launcher returns its own app's status, the view ends
# with its last app.  Run as ordinary users against the setuid copy.
# SPDX-License-Identifier: LGPL-2.1-or-later
. "$(dirname "$0")/libtest.sh"

gl_make_sandbox t-view rootfs
gl_install_setuid
UDIR=$GL_STORE/t-view/users/$UID_A
A () { as_user $GL_USER_A "$LAUNCH" t-view -- "$@"; }
B () { as_user $GL_USER_B "$LAUNCH" t-view -- "$@"; }
# the record: "glimpse-view 1 sandbox ID uid UID pid PID start ..." (the
# first "pid" is PID 1's; a later one names the PID namespace)
view_pid () { awk '{ for (i = 1; i < NF; i++) if ($i == "pid") { print $(i + 1); exit } }' "$UDIR/view" 2>/dev/null; }
# wait_for NAME: until the app made /tmp/NAME inside the view (seen in the
# layer; at most 30 s).  Host files an app waits on are made before it
# starts and changed in place (a name new in an overlay's lower layer may
# stay unseen in a running view).
wait_for () { gl_wait 30 [ -e "$UDIR/tmp/upper/$1" ]; }
# go_reset [NAME]: the host file $WORK/NAME (default go) says "wait";
# $(wait_go NAME) is the shell loop an app runs until it says "go".
go_reset () { echo wait > "$WORK/${1:-go}"; chmod 644 "$WORK/${1:-go}"; }
wait_go () { echo "while [ \"\$(cat $WORK/$1)\" != go ]; do sleep 0.05; done"; }
WAIT_GO=$(wait_go go)
go_reset; go_reset go3
A true || { fail "first launch"; finish; exit 1; }

# --- 20: twenty launches at the same moment: all run, in one view ---
inuse_before=$(dmesg 2>/dev/null | grep -c "in-use as upperdir/workdir")
rm -rf "$UDIR"/{home,tmp,var-tmp,dev-shm,media,mnt,run-user,mountpoints}   # a fresh layer
# (each app stays until all twenty have printed their namespace, or a
# launcher failed: however long the machine takes to start them)
go_reset
pids=()
for i in $(seq 20); do
  A /bin/sh -c "readlink /proc/self/ns/mnt; $WAIT_GO" > "$WORK/c20.$i" 2>&1 &
  pids+=($!)
done
all_up () {
  local p
  [ "$(cat "$WORK"/c20.* | grep -c '^mnt:')" = 20 ] && return 0
  for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null || return 0; done
  return 1
}
gl_wait 60 all_up
echo go > "$WORK/go"
failed=0
for p in "${pids[@]}"; do wait "$p" || failed=$((failed + 1)); done
check_sh "20: twenty concurrent first launches all succeed" '[ $failed = 0 ]'
n_ns=$(cat "$WORK"/c20.* | grep '^mnt:' | sort -u | wc -l)
check_sh "20: ... all in one view (one mount namespace, not $n_ns)" '[ "$n_ns" = 1 ]'
inuse_after=$(dmesg 2>/dev/null | grep -c "in-use as upperdir/workdir")
check_sh "20: the kernel logged no \"in-use as upperdir/workdir\"" '[ "$inuse_after" = "$inuse_before" ]'

# --- coherence: a file one app creates is seen by another at once ---
go_reset
A /bin/sh -c "test -e /tmp/gl-view-x || echo absent; touch /tmp/gl-view-looked; $WAIT_GO; cat /tmp/gl-view-x; readlink /proc/self/ns/mnt" > "$WORK/app1" 2>&1 &
a1=$!
wait_for gl-view-looked
A /bin/sh -c "echo made-by-app2 > /tmp/gl-view-x; readlink /proc/self/ns/mnt" > "$WORK/app2" 2>&1
echo go > "$WORK/go"
wait $a1
check_sh "an app sees a file another app created after its first look" \
  '[ "$(sed -n 1p "$WORK/app1")" = absent ] && [ "$(sed -n 2p "$WORK/app1")" = made-by-app2 ]'
check_sh "two running apps share one mount namespace" \
  '[ "$(sed -n 3p "$WORK/app1")" = "$(sed -n 1p "$WORK/app2")" ] && grep -q "^mnt:" "$WORK/app2"'
check "the host /tmp was not written" [ ! -e /tmp/gl-view-x ]

# --- each launcher returns its own app's status, when its own app ends ---
go_reset
# (the earlier app runs until told: the later launcher returning at all
# shows it did not wait for the earlier app or the view)
A /bin/sh -c "touch /tmp/gl-view-started2; $WAIT_GO; exit 5" &
long=$!
wait_for gl-view-started2
as_user $GL_USER_A timeout 60 "$LAUNCH" t-view -- /bin/sh -c 'exit 3'; rc_short=$?
check_sh "a later app's launcher returns its own status (3) when its app ends" '[ $rc_short = 3 ]'
check "the earlier app still runs after the later one ended" kill -0 $long
A /bin/sh -c 'kill -TERM $$'; rc_sig=$?
check_sh "a joined app killed by a signal: 143" '[ $rc_sig = 143 ]'
echo go > "$WORK/go"
wait $long; rc_long=$?
check_sh "the first app's launcher returns its own status (5)" '[ $rc_long = 5 ]'

# --- the first app exiting does not end the view under later apps ---
go_reset
A /bin/sh -c "touch /tmp/gl-view-started3; $(wait_go go3); exit 0" &
first=$!
wait_for gl-view-started3
A /bin/sh -c "touch /tmp/gl-view-later; $WAIT_GO; echo still-here" > "$WORK/later" 2>&1 &
later=$!
wait_for gl-view-later
echo go > "$WORK/go3"
wait $first
echo go > "$WORK/go"
wait $later; rc=$?
check_sh "an app that joined survives the first app's exit" '[ $rc = 0 ] && grep -qx still-here "$WORK/later"'

# --- the view ends with its last app; purge is possible at once ---
vp=$(view_pid)
# gone: no such process, or a zombie (exited; reaping is its parent's business)
gone () { [ ! -e "/proc/$1" ] || [ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)" = Z ]; }
check_sh "the view's PID 1 is gone after the last app" '[ -n "$vp" ] && gone "$vp"'
check "your layer's lock is free after the last app (purge can run)" flock -x -n "$UDIR/lock" true
go_reset
A /bin/sh -c "touch /tmp/gl-view-started4; $WAIT_GO" &
bg=$!
wait_for gl-view-started4
flock -x -n -E 99 "$UDIR/lock" true; rc=$?
check_sh "while a view is up, your layer's lock is held (purge refuses or waits)" '[ $rc = 99 ]'
sysgen_held=$(flock -x -n -E 99 "$GL_STORE/t-view/system/1/lock" true; echo $?)
check_sh "while a view is up, it holds its system generation's lock" '[ "$sysgen_held" = 99 ]'

# --- 21: joining only a view root recorded and the kernel confirms ---
# (a view is up: $bg)
vp=$(view_pid)
view_mnt=$(readlink /proc/"$vp"/ns/mnt)
# (held open, so no later namespace can be given its inode number once
# this view is gone: "not $view_mnt" then means another namespace)
exec {view_pin}<"/proc/$vp/ns/mnt"
cp -p "$UDIR/view" "$WORK/good-record"
check_sh "the record is root's, 0644, in users/UID/" '[ "$(stat -c %u:%a "$UDIR/view")" = 0:644 ]'
# user B copies nothing of A's (0700), but give B A's record anyway (root's):
install -d -o $GL_USER_B -m 0700 "$GL_STORE/t-view/users/$UID_B" 2>/dev/null
B true
cp -p "$WORK/good-record" "$GL_STORE/t-view/users/$UID_B/view"
b_mnt=$(B readlink /proc/self/ns/mnt)
check_sh "21: user B given A's record does not join A's view" '[ -n "$b_mnt" ] && [ "$b_mnt" != "$view_mnt" ]'
# a record naming B but A's view (as if root were fooled): the namespace
# owner check refuses it
sed "s/uid $UID_A /uid $UID_B /" "$WORK/good-record" > "$GL_STORE/t-view/users/$UID_B/view"
b_mnt=$(B readlink /proc/self/ns/mnt)
check_sh "21: a record of B's naming A's view is refused (user namespace not B's)" \
  '[ -n "$b_mnt" ] && [ "$b_mnt" != "$view_mnt" ]'
echo go > "$WORK/go"
wait $bg
vp_old=$vp

# forged by the user: a record of A's own (not root's), naming A's own process
# (a sleep no other test runs, found by its arguments once it runs)
as_user $GL_USER_A sleep 62.21 &
sl=$!
slpid=$(gl_wait_pid $GL_USER_A '^sleep 62[.]21$')
check "21: the user's own process for the forged records runs" [ -n "$slpid" ]
start=$(awk '{ sub(/.*\) /, ""); print $20 }' /proc/$slpid/stat)
ino () { stat -L -c '%d:%i' /proc/$slpid/ns/$1; }
forged="glimpse-view 1 sandbox t-view uid $UID_A pid $slpid start $start user $(ino user) mnt $(ino mnt) pid $(ino pid) ipc $(ino ipc)"
rm -f "$UDIR/view"
as_user $GL_USER_A sh -c "echo '$forged' > '$UDIR/view'"
got=$(A readlink /proc/self/ns/mnt)
check_sh "21: a record forged by the user is not followed" '[ -n "$got" ] && [ "$got" != "$(readlink /proc/$slpid/ns/mnt)" ]'
# the same, written by root: the user namespace is not the user's view (owner, ns checks)
echo "$forged" > "$UDIR/view"; chmod 0644 "$UDIR/view"
got=$(A readlink /proc/self/ns/mnt)
check_sh "21: a root-owned record naming a process outside any view is not joined" \
  '[ -n "$got" ] && [ "$got" != "$(readlink /proc/$slpid/ns/mnt)" ]'
# stale: PID 1 gone, its pid now another process of the user (the sleep)
sed "s/pid $vp_old /pid $slpid /" "$WORK/good-record" > "$UDIR/view"
got=$(A readlink /proc/self/ns/mnt)
check_sh "21: a stale record whose pid is now another process of the user: refused, a new view" \
  '[ -n "$got" ] && [ "$got" != "$(readlink /proc/$slpid/ns/mnt)" ] && [ "$got" != "$view_mnt" ]'
# (the sleep itself: $sl is the shell that runs as_user, and an orphaned
# sleep would hold the test's output open for a minute)
kill "$slpid" $sl 2>/dev/null; wait $sl 2>/dev/null
# truncated / garbage records
for rec in "" "glimpse-view 1 uid $UID_A pid" "$(head -c 300 /dev/zero | tr '\0' x)"; do
  printf '%s' "$rec" > "$UDIR/view"
  check "21: a truncated or garbage record: a launch still works (builds its own view)" A true
done
# a record that is a FIFO or a symlink never hangs or is followed
rm -f "$UDIR/view"; mkfifo "$UDIR/view"
check "21: a FIFO as the record does not hang the launch" timeout 60 setpriv --reuid=$GL_USER_A --regid=$GL_USER_A --init-groups "$LAUNCH" t-view -- true
rm -f "$UDIR/view"; ln -s "$WORK/good-record" "$UDIR/view"
check "21: a symlink as the record is not followed" A true
rm -f "$UDIR/view"
# a record of another sandbox of the same user (moved by the user) is not followed
gl_make_sandbox t-view2 rootfs
A2 () { as_user $GL_USER_A "$LAUNCH" t-view2 -- "$@"; }
A2 true
go_reset
A /bin/sh -c "touch /tmp/gl-view-started9; $WAIT_GO" &
bg=$!
wait_for gl-view-started9
other_mnt=$(readlink /proc/"$(view_pid)"/ns/mnt)
mv "$UDIR/view" "$GL_STORE/t-view2/users/$UID_A/view"
got=$(A2 readlink /proc/self/ns/mnt)
check_sh "21: another sandbox's record (moved by the user) is not followed" '[ -n "$got" ] && [ "$got" != "$other_mnt" ]'
echo go > "$WORK/go"
wait $bg

# PID 1 killed while an app runs: the app dies with the view; the next
# launch builds a new one
go_reset
A /bin/sh -c "touch /tmp/gl-view-started5; sleep 20" &
bg=$!
wait_for gl-view-started5
vp=$(view_pid); old_mnt=$(readlink /proc/"$vp"/ns/mnt)
exec {old_pin}<"/proc/$vp/ns/mnt"   # (as view_mnt's)
kill -KILL "$vp"
wait $bg
got=$(A readlink /proc/self/ns/mnt)
check_sh "21: after PID 1 was killed, the next launch gets a new view" '[ -n "$got" ] && [ "$got" != "$old_mnt" ]'
exec {view_pin}<&- {old_pin}<&-

finish
