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
# root's records and locks of the users' views (root 0700; records 0600)
VIEWS=$GL_STORE/t-view/users/.views
A () { as_user $GL_USER_A "$LAUNCH" t-view -- "$@"; }
B () { as_user $GL_USER_B "$LAUNCH" t-view -- "$@"; }
# the record: "glimpse-view 2 boot BOOT_ID sandbox ID uid UID pid PID start ..." (the
# first "pid" is PID 1's; a later one names the PID namespace)
view_pid () { awk '{ for (i = 1; i < NF; i++) if ($i == "pid") { print $(i + 1); exit } }' "$VIEWS/$UID_A" 2>/dev/null; }
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
# kmsg_mark; kmsg_inuse_since MARK: overlayfs warnings of two mounts on one
# layer (undefined behaviour) logged after the mark (the kernel time of the
# last message): counted by time, as old messages leave the ring buffer
kmsg_mark () { dmesg 2>/dev/null | tail -1 | sed -n 's/^\[ *\([0-9.]*\)\].*/\1/p'; }
kmsg_inuse_since () {
  dmesg 2>/dev/null | awk -v m="${1:-0}" '{ t = $0; sub(/^\[ */, "", t); sub(/\].*/, "", t) }
    t + 0 > m + 0 && /in-use as upperdir\/workdir of another mount, accessing/ { n++ } END { print n + 0 }'
}
# kmsg_check "description" 'shell condition': check_sh for a case read
# from the kernel log; where it cannot be read (no CAP_SYSLOG, a container),
# the case is skipped saying so (a failure where every case is required)
KMSG_WHY=
kmsg_err=$(dmesg 2>&1 >/dev/null) || KMSG_WHY="the kernel log cannot be read (${kmsg_err:-dmesg failed})"
kmsg_check () {
  if [ -n "$KMSG_WHY" ]; then skip_case "$1" "$KMSG_WHY"; else check_sh "$@"; fi
}
# kmsg_busy_since MARK: mounts the kernel refused because a layer was in
# use (index=on: "...to override exclusive upperdir protection")
kmsg_busy_since () {
  dmesg 2>/dev/null | awk -v m="${1:-0}" '{ t = $0; sub(/^\[ */, "", t); sub(/\].*/, "", t) }
    t + 0 > m + 0 && /override exclusive upperdir protection/ { n++ } END { print n + 0 }'
}
A true || { fail "first launch"; finish; exit 1; }

# --- 20: twenty launches at the same moment: all run, in one view ---
kmark=$(kmsg_mark)
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
inuse_new=$(kmsg_inuse_since "$kmark")
kmsg_check "20: the kernel logged no \"in-use as upperdir/workdir\"" '[ "$inuse_new" = 0 ]'

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

# --- an app whose main thread has exited while another thread of it runs
# (a zombie thread-group leader, still exiting) keeps the view: the first
# app's end, after which PID 1 looks again, does not take the view (and
# the other app's last thread) down ---
: "${GL_EXITING_LEADER:?GL_EXITING_LEADER must point to the built exiting-leader}"
install -m 0755 "$GL_EXITING_LEADER" "$GL_STORE/t-view/rootfs/bin/exiting-leader"
go_reset
A /bin/sh -c "touch /tmp/gl-view-started7; $WAIT_GO" &
first=$!
wait_for gl-view-started7
A /bin/exiting-leader 6 /tmp/gl-view-leader-done &
leader_bg=$!
# (found by its name: a zombie leader has no command line any more)
leader_zombie () {
  leader=$(pgrep -u $GL_USER_A -x exiting-leader | head -n1)
  [ -n "$leader" ] && [ "$(sed 's/.*) //' "/proc/$leader/stat" 2>/dev/null | cut -c1)" = Z ]
}
check "(the app's main thread has exited, another still runs: the check below can fail)" \
  gl_wait 10 leader_zombie
echo go > "$WORK/go"
wait $first
wait $leader_bg; rc=$?
check_sh "an app whose main thread exited keeps the view until its last thread ends (status $rc)" \
  '[ $rc = 0 ] && [ -e "$UDIR/tmp/upper/gl-view-leader-done" ]'

# --- the view ends with its last app (a moment after its launcher has
# returned: the launcher returns when its app ends, the view's PID 1 then
# takes the view down); purge can run then ---
vp=$(view_pid)
# gone: no such process, or a zombie (exited; reaping is its parent's business)
gone () { [ ! -e "/proc/$1" ] || [ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)" = Z ]; }
check_sh "the view's PID 1 is gone after the last app" '[ -n "$vp" ] && gl_wait 30 gone "$vp"'
check "your layer's lock is free after the last app (purge can run)" flock -x -w 30 "$UDIR/lock" true
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
# (B's comparisons below run while this view is up, so its namespace's
# inode number cannot have been reused.  Nothing may hold it open after the
# view: a held view's layers stay mounted, and the next launch refuses.)
cp -p "$VIEWS/$UID_A" "$WORK/good-record"
check_sh "the record is root's, 0600, in root's 0700 users/.views/" \
  '[ "$(stat -c %u:%a "$VIEWS/$UID_A")" = 0:600 ] && [ "$(stat -c %u:%a "$VIEWS")" = 0:700 ]'
check_sh "F3: the user can neither remove nor replace the record or the view lock" \
  '! as_user $GL_USER_A rm -f "$VIEWS/$UID_A" 2>/dev/null && ! as_user $GL_USER_A sh -c ": > $VIEWS/$UID_A.lock" 2>/dev/null && [ -s "$VIEWS/$UID_A" ]'
# user B copies nothing of A's (0700), but give B A's record anyway (root's):
install -d -o $GL_USER_B -m 0700 "$GL_STORE/t-view/users/$UID_B" 2>/dev/null
B true
cp -p "$WORK/good-record" "$VIEWS/$UID_B"
b_mnt=$(B readlink /proc/self/ns/mnt)
check_sh "21: user B given A's record does not join A's view" '[ -n "$b_mnt" ] && [ "$b_mnt" != "$view_mnt" ]'
# a record naming B but A's view (as if root were fooled): the namespace
# owner check refuses it
sed "s/uid $UID_A /uid $UID_B /" "$WORK/good-record" > "$VIEWS/$UID_B"
b_mnt=$(B readlink /proc/self/ns/mnt)
check_sh "21: a record of B's naming A's view is refused (user namespace not B's)" \
  '[ -n "$b_mnt" ] && [ "$b_mnt" != "$view_mnt" ]'
# a record of another boot: after a reboot its pid, start time and
# namespaces may be a new process's; root forges the running view's own
# record with another boot_id: not joined (the launch builds a view of its
# own, which the kernel refuses while this one holds the layer)
cur_boot=$(cat /proc/sys/kernel/random/boot_id)
check "the record names this boot" grep_quiet -a "^glimpse-view 2 boot $cur_boot " "$WORK/good-record"
sed "s/ boot $cur_boot / boot $(echo "$cur_boot" | tr 0-9a-f 1-9a-f0) /" "$WORK/good-record" > "$VIEWS/$UID_A"
got=$(A readlink /proc/self/ns/mnt 2>&1)
check_sh "21: a record of another boot (its boot_id) is not joined" '[ "$got" != "$view_mnt" ]'
# the same without a boot (as launchers before it wrote): joined while
# written in this boot, not when last written before it
sed "s/^glimpse-view 2 boot $cur_boot /glimpse-view 1 /" "$WORK/good-record" > "$VIEWS/$UID_A"
got=$(A readlink /proc/self/ns/mnt 2>&1)
check_sh "21: a record without a boot, written in this boot (a view older than the launcher): joined" \
  '[ "$got" = "$view_mnt" ]'
touch -d "@$(( $(date +%s) - $(cut -d. -f1 /proc/uptime) - 60 ))" "$VIEWS/$UID_A"
got=$(A readlink /proc/self/ns/mnt 2>&1)
check_sh "21: ... one last written before this boot: not joined" '[ "$got" != "$view_mnt" ]'
cp -p "$WORK/good-record" "$VIEWS/$UID_A"
got=$(A readlink /proc/self/ns/mnt 2>&1)
check_sh "21: (control) the view's own record of this boot is joined" '[ "$got" = "$view_mnt" ]'
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
forged="glimpse-view 2 boot $(cat /proc/sys/kernel/random/boot_id) sandbox t-view uid $UID_A pid $slpid start $start user $(ino user) mnt $(ino mnt) pid $(ino pid) ipc $(ino ipc)"
# (where records used to be, the user's own users/UID/, and where they are:
# the user cannot write there)
as_user $GL_USER_A sh -c "echo '$forged' > '$UDIR/view'; echo '$forged' > '$VIEWS/$UID_A'" 2>/dev/null
got=$(A readlink /proc/self/ns/mnt)
check_sh "21: a record forged by the user is not followed" '[ -n "$got" ] && [ "$got" != "$(readlink /proc/$slpid/ns/mnt)" ]'
rm -f "$UDIR/view"
# the same, written by root: the user namespace is not the user's view (owner, ns checks)
echo "$forged" > "$VIEWS/$UID_A"; chmod 0600 "$VIEWS/$UID_A"
got=$(A readlink /proc/self/ns/mnt)
check_sh "21: a root-owned record naming a process outside any view is not joined" \
  '[ -n "$got" ] && [ "$got" != "$(readlink /proc/$slpid/ns/mnt)" ]'
# stale: PID 1 gone, its pid now another process of the user (the sleep)
sed "s/pid $vp_old /pid $slpid /" "$WORK/good-record" > "$VIEWS/$UID_A"
cp "$VIEWS/$UID_A" "$WORK/stale-record"
got=$(A readlink /proc/self/ns/mnt)
check_sh "21: a stale record whose pid is now another process of the user: refused, a new view" \
  '[ -n "$got" ] && [ "$got" != "$(readlink /proc/$slpid/ns/mnt)" ] && gone "$vp_old" && grep -q "pid $slpid " "$WORK/stale-record"'
# (the sleep itself: $sl is the shell that runs as_user, and an orphaned
# sleep would hold the test's output open for a minute)
kill "$slpid" $sl 2>/dev/null; wait $sl 2>/dev/null
# truncated / garbage records
for rec in "" "glimpse-view 1 uid $UID_A pid" "$(head -c 300 /dev/zero | tr '\0' x)"; do
  printf '%s' "$rec" > "$VIEWS/$UID_A"
  check "21: a truncated or garbage record: a launch still works (builds its own view)" A true
done
# a record that is a FIFO or a symlink never hangs or is followed
rm -f "$VIEWS/$UID_A"; mkfifo -m 0600 "$VIEWS/$UID_A"
check "21: a FIFO as the record does not hang the launch" timeout 60 setpriv --reuid=$GL_USER_A --regid=$GL_USER_A --init-groups "$LAUNCH" t-view -- true
rm -f "$VIEWS/$UID_A"; ln -s "$WORK/good-record" "$VIEWS/$UID_A"
check "21: a symlink as the record is not followed" A true
rm -f "$VIEWS/$UID_A"
# a record of another sandbox of the same user (moved there) is not followed
gl_make_sandbox t-view2 rootfs
A2 () { as_user $GL_USER_A "$LAUNCH" t-view2 -- "$@"; }
A2 true
go_reset
A /bin/sh -c "touch /tmp/gl-view-started9; $WAIT_GO" &
bg=$!
wait_for gl-view-started9
other_mnt=$(readlink /proc/"$(view_pid)"/ns/mnt)
mv "$VIEWS/$UID_A" "$GL_STORE/t-view2/users/.views/$UID_A"
got=$(A2 readlink /proc/self/ns/mnt)
check_sh "21: another sandbox's record (moved there) is not followed" '[ -n "$got" ] && [ "$got" != "$other_mnt" ]'
echo go > "$WORK/go"
wait $bg

# --- F3: nothing the user owns decides whether the view is joined ---
# With a view up, the user deletes and replaces every file of theirs in
# users/UID/ (where the record and the view lock used to be): the next
# launch still joins the view; no second overlay on the same layer.
go_reset
A /bin/sh -c "touch /tmp/gl-view-started6; $WAIT_GO" &
bg=$!
wait_for gl-view-started6
up_mnt=$(readlink /proc/"$(view_pid)"/ns/mnt)
kmark=$(kmsg_mark)
as_user $GL_USER_A sh -c "cd '$UDIR' && rm -f lock view view.lock .view.new && echo forged > view && : > view.lock && : > lock"
got=$(A readlink /proc/self/ns/mnt)
inuse_new=$(kmsg_inuse_since "$kmark")
check_sh "F3: after the user removed and replaced their files in users/UID/, the next launch joins the running view ($got, $up_mnt)" \
  '[ -n "$got" ] && [ "$got" = "$up_mnt" ]'
kmsg_check "F3: ... and no second overlay was mounted on the user's layer (no in-use warning)" \
  '[ "$inuse_new" = 0 ]'
echo go > "$WORK/go"
wait $bg
rm -f "$UDIR/view" "$UDIR/view.lock"

# --- a process outside keeps the view's mount namespace after its end ---
# The caller owns the view's user namespace, so they may hold its mount
# namespace (nsenter, or just a descriptor of /proc/PID/ns/mnt): the
# overlays then stay mounted after the view's PID 1 has gone.  The next
# launch must not mount the same layer again: it refuses, naming the
# holder, and works again once the holder is closed.
A_quiet () { A true 2>/dev/null; }
# held_case KIND N: a view that a process of the user keeps after the
# view's end - KIND "fd" (python3 holding a descriptor of its ns/mnt),
# "nsenter" (a sleep that entered the view's user and mount namespaces, as
# the user may: the user namespace is theirs) or "cwd" (a sleep whose
# working directory is the view's /tmp: it keeps that overlay, not the
# namespace)
held_case () {
  local kind=$1 n=$2 vp app holder holder_bg comm out rc inuse_new busy_new ok_after=
  go_reset
  A /bin/sh -c "touch /tmp/gl-view-started$n; $WAIT_GO" &
  bg=$!
  wait_for gl-view-started$n
  vp=$(view_pid)
  app=$(gl_wait_pid $GL_USER_A "^/bin/sh -c touch /tmp/gl-view-started$n")
  if [ "$kind" = fd ]; then
    as_user $GL_USER_A python3 -c 'import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
open(sys.argv[2], "w").close()
time.sleep(300)' /proc/"$app"/ns/mnt "$WORK/held-ready" gl-view-holder-$n &
    holder_bg=$!
    gl_wait 30 [ -e "$WORK/held-ready" ]
    holder=$(gl_wait_pid $GL_USER_A "gl-view-holder-$n\$")
    comm=python3
  elif [ "$kind" = cwd ]; then
    # (its working directory in the view: a file of it, not its namespace)
    as_user $GL_USER_A sh -c "cd /proc/$app/root/tmp && exec sleep 64.8$n" &
    holder_bg=$!
    holder=$(gl_wait_pid $GL_USER_A "^sleep 64[.]8$n\$")
    comm=sleep
  else
    as_user $GL_USER_A nsenter -t "$app" -U -m --preserve-credentials sleep 64.8$n &
    holder_bg=$!
    holder=$(gl_wait_pid $GL_USER_A "^sleep 64[.]8$n\$")
    gl_wait 30 [ "$(stat -L -c %d:%i /proc/"$holder"/ns/mnt 2>/dev/null)" = "$(stat -L -c %d:%i /proc/"$app"/ns/mnt)" ]
    comm=sleep
  fi
  echo go > "$WORK/go"
  wait $bg
  gl_wait 30 gone "$vp"
  kmark=$(kmsg_mark)
  out=$(A true 2>&1); rc=$?
  inuse_new=$(kmsg_inuse_since "$kmark")
  busy_new=$(kmsg_busy_since "$kmark")
  check_sh "held view ($kind): its PID 1 ended while the holder keeps its mount namespace" \
    '[ -n "$holder" ] && gone "$vp" && kill -0 "$holder"'
  check_sh "held view ($kind): the next launch refuses (125), naming the holder ($out)" \
    '[ $rc = 125 ] && grep -q "still held by process $holder ($comm)" <<< "$out"'
  # (glimpse-launch(1): errors are one line - the holder and what to do
  # in it, not the kernel's refusal first and the holder after)
  check_sh "held view ($kind): ... in one line, saying what to do" \
    '[ "$(wc -l <<< "$out")" = 1 ] && grep -q "; close it, then launch again\$" <<< "$out"'
  kmsg_check "held view ($kind): ... and mounted nothing on the layer in use (no in-use warning)" \
    '[ "$inuse_new" = 0 ]'
  kmsg_check "held view ($kind): ... refused at once, not retried (the kernel refused $busy_new mounts, at most one per layer)" \
    '[ "$busy_new" -ge 1 ] && [ "$busy_new" -le 8 ]'
  kill "$holder" 2>/dev/null; wait "$holder_bg" 2>/dev/null
  # (the kernel frees the old mounts shortly after the holder has gone)
  gl_wait 30 A_quiet && ok_after=yes
  check_sh "held view ($kind): once the holder is closed, launching works again" '[ "$ok_after" = yes ]'
}
held_case fd 7
held_case nsenter 8
held_case cwd 10

# An ended view's mount namespace leaves its inode number free, and the
# kernel gives it out again, lowest free first (seen here: the next
# namespace a process of the user's made got it within seconds): to a
# process of yours in a mount namespace of its own (as a browser's or
# Flatpak's sandbox is), which keeps nothing of the view.  --held (glimpse
# purge) must not name it as a holder: the record has the namespace's ID
# too.  (The reuse, which the kernel makes when it pleases, is made here
# by giving the ended view's record that process's namespace inode.)
A true
vp=$(view_pid)
gl_wait 30 gone "$vp"
as_user $GL_USER_A unshare -Um sleep 3019 > /dev/null 2>&1 & reuser_job=$!
reuser=$(gl_wait_pid $GL_USER_A '^sleep 3019$')
own_ns () { [ "$(stat -L -c %i "/proc/$1/ns/mnt")" != "$(stat -L -c %i /proc/self/ns/mnt)" ]; }
if [ -z "$reuser" ] || ! gl_wait 10 own_ns "$reuser"; then
  skip_case "--held: a namespace that got an ended view's inode again is no holder" \
    "the user cannot make a mount namespace of their own (unshare -Um)"
else
  ino=$(stat -L -c %i "/proc/$reuser/ns/mnt")
  rec=$(tr -d '\0' < "$VIEWS/$UID_A" | sed "s/ mnt \([0-9]*\):[0-9]* / mnt \1:$ino /")
  { printf '%s\n' "$rec"; head -c $((1000 - ${#rec} - 1)) /dev/zero; } > "$VIEWS/$UID_A"
  out=$(as_user $GL_USER_A "$LAUNCH" --held t-view 2>&1); rc=$?
  check_sh "--held: a process of yours whose own mount namespace got the ended view's inode again is no holder (rc $rc)" \
    '[ $rc = 0 ] && [ -z "$out" ]'
  [ $rc = 0 ] || printf '%s\n' "$out" | sed 's/^/#   /'
fi
kill -KILL "$reuser" 2>/dev/null; wait "$reuser_job" 2>/dev/null

# The attack of the review: a first launch's app runs, a process of yours
# outside enters (and so keeps) the view's mount namespace, and you
# SIGKILL the launcher, then the app: the view's PID 1 ends, but its
# overlays stay mounted.  Root recorded the view before the app started,
# so --held (glimpse purge) names that process whenever the launcher was
# killed.
vp=$(view_pid)
[ -z "$vp" ] || gl_wait 30 gone "$vp"
A /bin/sh -c "touch /tmp/gl-view-started14; exec sleep 3014" > /dev/null 2>&1 &
bg=$!
wait_for gl-view-started14
app=$(gl_wait_pid $GL_USER_A "^sleep 3014\$")
as_user $GL_USER_A nsenter -t "$app" -U -m --preserve-credentials sleep 64.814 &
holder_bg=$!
holder=$(gl_wait_pid $GL_USER_A "^sleep 64[.]814\$")
gl_wait 30 [ "$(stat -L -c %d:%i /proc/"$holder"/ns/mnt 2>/dev/null)" = "$(stat -L -c %d:%i /proc/"$app"/ns/mnt)" ]
vp=$(view_pid)
kill -KILL "$(ps -o ppid= -p "$vp" | tr -d ' ')"
wait $bg
kill -KILL "$app"
gl_wait 30 gone "$vp"
out=$(as_user $GL_USER_A "$LAUNCH" --held t-view 2>&1); rc=$?
check_sh "launcher and app killed, the view's namespace kept outside: --held names the holder ($rc)" \
  '[ $rc = 124 ] && grep -q "still held by process $holder (sleep)" <<< "$out"'
grep -q "still held by process $holder (sleep)" <<< "$out" || printf '%s\n' "$out" | sed 's/^/#   /'
kill "$holder" 2>/dev/null; wait "$holder_bg" 2>/dev/null
gl_wait 30 as_user $GL_USER_A "$LAUNCH" --held t-view

# PID 1 killed while an app runs: the app dies with the view; the next
# launch builds a new one
go_reset
A /bin/sh -c "touch /tmp/gl-view-started5; sleep 20" &
bg=$!
wait_for gl-view-started5
vp=$(view_pid)
kill -KILL "$vp"
wait $bg
# (the old view is gone, so a launch that works is in a new one; its
# namespace may even reuse the old one's inode number)
got=$(A readlink /proc/self/ns/mnt)
check_sh "21: after PID 1 was killed, the next launch gets a new view" '[ -n "$got" ] && [ -n "$vp" ] && gone "$vp"'

# A caller's file size limit below the 1000 bytes of the view's record,
# which the setuid launcher inherits: at 0 bytes the record's write sends
# SIGXFSZ, which ended the launcher between the view and its record; at
# 1-999 the write is cut short.  The launch is refused before a view is
# built, saying why (exit 125, not killed by a signal), the record of the
# previous view is left as it was, and nothing of the app runs.
vp=$(view_pid)
[ -z "$vp" ] || gl_wait 30 gone "$vp"
A true
vp=$(view_pid)
gl_wait 30 gone "$vp"
rec_before=$(sha256sum < "$VIEWS/$UID_A")
no_sleepers () { ! pgrep -u "$UID_A" -f '^sleep 301[78]$' > /dev/null; }
for lim in 0 1 999; do
  out=$(as_user $GL_USER_A prlimit --fsize=$lim "$LAUNCH" t-view -- \
    /bin/sh -c "sleep 3017 & exec sleep 3018" 2>&1)
  rc=$?
  gl_wait 10 no_sleepers && left=no || left=yes
  pkill -KILL -u "$UID_A" -f '^sleep 301[78]$' 2>/dev/null
  check_sh "a launch under a file size limit of $lim bytes is refused, saying why (rc $rc), and leaves nothing of its app running (left: $left)" \
    '[ "$rc" = 125 ] && [ "$left" = no ] \
     && grep_quiet "your file size limit (ulimit -f; RLIMIT_FSIZE) is below the 1000 bytes" <<<"$out"'
  [ "$rc" = 125 ] || printf '%s\n' "$out" | sed 's/^/#   /'
  check_sh "… and the previous view's record is unchanged" \
    '[ "$(sha256sum < "$VIEWS/$UID_A")" = "$rec_before" ]'
done
check "a launch with a 1000-byte limit runs" as_user $GL_USER_A prlimit --fsize=1000 "$LAUNCH" t-view -- true

# The view lock held for longer than a launch waits for one holder (20 s),
# by one holder after another (as behind many launches of yours): the
# launch waits for them all and runs.  (Root's holders convert the lock,
# SH then EX, from one process to the next: each becomes its holder in
# /proc/locks without a moment when it is free.)
vp=$(view_pid)
[ -z "$vp" ] || gl_wait 30 gone "$vp"
lockf=$VIEWS/$UID_A.lock
(
  exec 9< "$lockf"
  flock -x 9
  touch "$WORK/chain-up"
  for _ in $(seq 12); do
    sh -c 'flock -s 9 && flock -x 9 && sleep 2' 9<&9
  done
) & chain=$!
gl_wait 10 test -e "$WORK/chain-up"
t0=$SECONDS
out=$(A echo ran 2>&1); rc=$?
waited=$((SECONDS - t0))
wait "$chain"
check_sh "a launch behind a lock held 24 s by 12 holders in turn waits for them and runs (rc $rc after $waited s)" \
  '[ $rc = 0 ] && [ "$out" = ran ] && [ $waited -ge 20 ]'
[ $rc = 0 ] || printf '%s\n' "$out" | sed 's/^/#   /'

# A holder of the view lock that is itself stopped: a later launch gives
# up after 20 s of that one holder, naming it and its state when it is a
# process of the caller's (here one of user A's that was handed root's lock
# file open).  The holder's pid comes from /proc/locks, and may be another
# user's process by the time it is named (the locker ended, its pid taken):
# root's holder here is only "a process", its name and state not read out.
lockf=$VIEWS/$UID_A.lock
as_user $GL_USER_A perl -e 'open (my $f, "<&=", 9) or die; flock ($f, 2) or die; sleep 3121' \
  9< "$lockf" & holder_bg=$!
holder=$(gl_wait_pid $GL_USER_A 'sleep 3121')
gl_wait 10 grep_quiet -E "FLOCK +ADVISORY +WRITE +$holder " /proc/locks
GL_CLEANUPS+=("kill -KILL $holder 2>/dev/null")
kill -STOP "$holder"
t0=$SECONDS
out=$(as_user $GL_USER_A timeout 90 "$LAUNCH" t-view -- true 2>&1); rc=$?
waited=$((SECONDS - t0))
kill -KILL "$holder"; wait "$holder_bg" 2>/dev/null
check_sh "a launch behind a stopped holder of yours gives up after 20 s (rc $rc after $waited s), naming it and its state" \
  '[ $rc = 125 ] && [ $waited -ge 20 ] && [ $waited -lt 60 ] \
   && grep_quiet "held for 20 s by process $holder (perl), stopped (state T): .*kill -CONT $holder" <<<"$out"'
[ $rc = 125 ] || printf '%s\n' "$out" | sed 's/^/#   /'
# (-o: the lock is flock's alone, not its sleep's too)
flock -o -x "$lockf" sleep 120 & holder=$!
gl_wait 10 grep_quiet -E "FLOCK +ADVISORY +WRITE +$holder " /proc/locks
hchild=$(pgrep -P "$holder")
GL_CLEANUPS+=("kill -KILL $holder $hchild 2>/dev/null")
kill -STOP "$holder"
t0=$SECONDS
out=$(as_user $GL_USER_A timeout 90 "$LAUNCH" t-view -- true 2>&1); rc=$?
waited=$((SECONDS - t0))
kill -KILL "$holder" $hchild; wait "$holder" 2>/dev/null
check_sh "a launch behind a stopped holder of root's gives up after 20 s (rc $rc after $waited s), not naming it" \
  '[ $rc = 125 ] && [ $waited -ge 20 ] && [ $waited -lt 60 ] \
   && grep_quiet "busy for 20 s, held by a process: " <<<"$out" \
   && ! grep_quiet -e "(flock)" -e "$holder" <<<"$out"'
[ $rc = 125 ] || printf '%s\n' "$out" | sed 's/^/#   /'
check "once it is gone, launches work again" A true


# A first launch's app a quick one: its launcher says its last word to the
# view's PID 1, lets go of the view lock and ends - on a loaded machine
# before PID 1 has been scheduled to read that word.  A launch that joined
# the view meanwhile (PID 1 alive, in its namespaces) runs to its end: the
# view does not end under it.  (PID 1 is held just before that read by a
# tracer of root's, until the first launcher has ended; where no process
# may trace another, Yama's ptrace_scope 3, the case is skipped.)
: "${GL_HOLD_VIEW_INIT:?GL_HOLD_VIEW_INIT must point to the built hold-view-init}"
vp=$(view_pid)
[ -z "$vp" ] || gl_wait 30 gone "$vp"
go_reset go4; go_reset go5
rm -f "$WORK/pd-let-go"
exec 8< "$VIEWS/$UID_A.lock"
flock -x 8
A /bin/sh -c "$(wait_go go4)" > "$WORK/pd-first" 2>&1 & first=$!
first_launcher () { pgrep -U "$UID_A" -f "^$LAUNCH t-view -- /bin/sh -c .*/go4" | head -n 1; }
gl_wait 30 first_launcher > /dev/null
"$GL_HOLD_VIEW_INIT" "$(first_launcher)" "$WORK/pd-let-go" > "$WORK/pd-hold" 2>&1 & tracer=$!
GL_CLEANUPS+=("touch '$WORK/pd-let-go'; kill $tracer 2>/dev/null")
gl_wait 10 grep_quiet -e '^seized' -e '^cannot trace' "$WORK/pd-hold"
flock -u 8; exec 8<&-
if grep_quiet '^cannot trace' "$WORK/pd-hold"; then
  skip_case "a first launcher that ends before its view's PID 1 read its last word" "$(sed -n 's/^cannot trace: //p' "$WORK/pd-hold")"
  echo go > "$WORK/go4"
  wait "$first"; wait "$tracer"
  finish; exit
fi
check "(the first launch's view is up, its PID 1 held before it reads the launcher's last word)" \
  gl_wait 30 grep_quiet '^held' "$WORK/pd-hold"
A /bin/sh -c "touch /tmp/gl-view-joined-pd; $(wait_go go5)" > "$WORK/pd-join" 2>&1 & join=$!
check "(a launch joined that view)" wait_for gl-view-joined-pd
echo go > "$WORK/go4"
wait "$first"; frc=$?
touch "$WORK/pd-let-go"
wait "$tracer"
echo go > "$WORK/go5"
jrc=0; wait "$join" || jrc=$?
check_sh "the first launcher ended before its view's PID 1 read its last word: the launch that joined runs to its end (rc $jrc; first $frc; PID 1: $(tail -n 1 "$WORK/pd-hold"))" \
  '[ $jrc = 0 ] && [ $frc = 0 ] && grep_quiet "^released" "$WORK/pd-hold"'

# A first launch killed (kill -9) once its view is built, before it has
# told the view's PID 1 so: PID 1 ends, and with it the view - but a
# loaded machine may leave it unscheduled for a while (as a launcher
# that was stopped, with a launch waiting, and then killed).  The launch
# started at once must not take the view lock before that view has let
# go of your layer: it was refused, "your layer is still in use by an
# earlier view".  It waits, then runs.  (PID 1 is held by a tracer of
# root's for a second after its launcher was killed; where no process may
# trace another, the case before has ended the test.)
vp=$(view_pid)
[ -z "$vp" ] || gl_wait 30 gone "$vp"
rm -f "$WORK/kb-let-go"
exec 8< "$VIEWS/$UID_A.lock"
flock -x 8
A /bin/echo kb-first > /dev/null 2>&1 & first=$!
kb_launcher () { pgrep -U "$UID_A" -f "^$LAUNCH t-view -- /bin/echo kb-first" | head -n 1; }
gl_wait 30 kb_launcher > /dev/null
kbl=$(kb_launcher)
"$GL_HOLD_VIEW_INIT" "$kbl" "$WORK/kb-let-go" built > "$WORK/kb-hold" 2>&1 & tracer=$!
GL_CLEANUPS+=("touch '$WORK/kb-let-go'; kill $tracer 2>/dev/null")
gl_wait 10 grep_quiet '^seized' "$WORK/kb-hold"
flock -u 8; exec 8<&-
check "(a first launch's view is built, its PID 1 held before its launcher told it so)" \
  gl_wait 30 grep_quiet '^held' "$WORK/kb-hold"
kill -KILL "$kbl"; wait "$first" 2>/dev/null
( sleep 1; touch "$WORK/kb-let-go" ) & letgo=$!
t0=$SECONDS
out=$(A echo ran 2>&1); rc=$?
waited=$((SECONDS - t0))
wait "$letgo"; wait "$tracer"
check_sh "a launch right after a first launch was killed while its view was built waits for that view to end, and runs (rc $rc after $waited s; PID 1: $(tail -n 1 "$WORK/kb-hold"))" \
  '[ $rc = 0 ] && [ "$out" = ran ] && grep_quiet "^released" "$WORK/kb-hold"'
[ $rc = 0 ] || printf '%s\n' "$out" | sed 's/^/#   /'
check_sh "root's note of the view being built is root's, 0600, and the user cannot replace it" \
  '[ "$(stat -c %u:%a "$VIEWS/$UID_A.building")" = 0:600 ] \
   && ! as_user $GL_USER_A sh -c ": > $VIEWS/$UID_A.building" 2>/dev/null'

finish
