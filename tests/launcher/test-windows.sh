#!/bin/bash
# glimpse-launch: the windows while a launch starts its app.  A process of
# the launcher that is not yet the user's in the view (still root, or still
# in the host's mount namespace, or holding what root opened) must be out
# of reach of everything the user runs: the apps already in the view and
# the user's processes outside.  window-probe tries, in a tight loop, to
# signal, trace and open /proc/PID/{environ,fd,mem} of every launcher
# process it sees; launches run meanwhile.  Run as ordinary users against
# the setuid copy.
# SPDX-License-Identifier: LGPL-2.1-or-later
. "$(dirname "$0")/libtest.sh"

: "${GL_WINDOW_PROBE:?GL_WINDOW_PROBE must point to the built window-probe}"
gl_make_sandbox t-win rootfs
gl_install_setuid
# (static: it runs in the busybox sandbox as /bin/window-probe)
PROBE_HOST=$GL_STORE/t-win/rootfs/bin/window-probe
install -m 0755 "$GL_WINDOW_PROBE" "$PROBE_HOST"
VIEWS=$GL_STORE/t-win/users/.views
A () { as_user $GL_USER_A "$LAUNCH" t-win -- "$@"; }
view_up () { [ -s "$VIEWS/$UID_A" ]; }
# (no launcher process of A's left: the view's PID 1 keeps that name)
view_gone () { ! pgrep -u "$UID_A" -x "$(printf %.15s "${LAUNCH##*/}")" >/dev/null; }

A true || { fail "first launch"; finish; exit 1; }

# probe_results NAME FILE: the probe saw launcher processes, and reached
# none of them
probe_results () {
  local seen
  seen=$(sed -n 's/^seen //p' "$2")
  if [ "${seen:-0}" = 0 ]; then
    skip_case "$1" "the probe saw no launcher process (too slow here): nothing proved"
    return
  fi
  if grep_quiet '^HIT' "$2"; then
    fail "$1: $(grep '^HIT' "$2" | sort | uniq -c | head -5 | tr '\n' ';')"
  else
    ok "$1 (the probe saw $seen launcher processes)"
  fi
}

# joining_launches PROBE_PID: launches that join the view, one after the
# other, until the probe (the view's first app) has ended; prints how many
# failed
joining_launches () {
  local n=0 bad=0
  while kill -0 "$1" 2>/dev/null; do
    A true || bad=$((bad + 1))
    n=$((n + 1))
  done
  echo "$bad of $n"
}

# (the cases but the second run with the default fs.suid_dumpable, 0,
# whatever the machine was left with; the value found is put back)
old_dumpable=$(cat /proc/sys/fs/suid_dumpable)
GL_CLEANUPS+=("echo $old_dumpable > /proc/sys/fs/suid_dumpable")
echo 0 > /proc/sys/fs/suid_dumpable

# --- an app in the view cannot reach a joining launch before it is the
# user's in the view (the default fs.suid_dumpable) ---
A /bin/window-probe --signals 5000 "${LAUNCH##*/}" > "$WORK/probe-view" 2>&1 & probe=$!
gl_wait 30 view_up
res=$(joining_launches "$probe")
wait "$probe"
check_sh "joining launches succeed while an app probes them ($res failed)" '[ "${res%% *}" = 0 ]'
probe_results "an app cannot signal, trace or open the /proc entries of a joining launch \
before it is the user's in the view" "$WORK/probe-view"
gl_wait 30 view_gone

# --- fs.suid_dumpable=1 ("debug"): a change of ids makes a process
# dumpable.  No launcher process may be dumpable while it holds anything
# root opened or made (mount copies, root's locks) or is not yet in the
# view: neither an app in the view nor the user's processes outside can
# reach one.  (A first launch each time, then joining ones.) ---
echo 1 > /proc/sys/fs/suid_dumpable
as_user $GL_USER_A "$PROBE_HOST" 6000 "${LAUNCH##*/}" > "$WORK/probe-host" 2>&1 & hprobe=$!
n=0 bad=0
while [ $n -lt 30 ] && kill -0 $hprobe 2>/dev/null; do
  A true || bad=$((bad + 1))
  n=$((n + 1))
  gl_wait 10 view_gone
done
# (an app in the view probing while launches join it.  Twice in CI the
# probe's launch ended after two joining launches with nothing seen: the
# probe and the first "A true" race for the view lock (view_up is true at
# once, the ended view's record is still there); when "true" built the
# view and the probe joined it, its PID 1 could die with that launcher
# before it had read its last word, killing the probe (fixed in the
# launcher; test-view holds PID 1 there).  A case that saw nothing is
# still run once more, saying why, before it counts as not run)
view_probe () {
  local prc=0
  A /bin/window-probe --signals 4000 "${LAUNCH##*/}" > "$WORK/probe-view1" 2>&1 & probe=$!
  gl_wait 30 view_up
  res=$(joining_launches "$probe")
  wait "$probe" || prc=$?
  probe_rc=$prc
  join_bad=$((join_bad + ${res%% *}))
}
join_bad=0
view_probe
if [ "$(sed -n 's/^seen //p' "$WORK/probe-view1")" = "" ] ||
   [ "$(sed -n 's/^seen //p' "$WORK/probe-view1")" = 0 ]; then
  echo "# the probe in the view saw no launcher process (its launch: rc $probe_rc;" \
       "joining: $res; its output: $(tail -c 200 "$WORK/probe-view1" | tr '\n' ' ')): once more"
  gl_wait 30 view_gone
  first_res=$res
  view_probe
  res="$first_res, then $res"
fi
wait "$hprobe"
echo 0 > /proc/sys/fs/suid_dumpable
check_sh "fs.suid_dumpable=1: first and joining launches succeed ($bad of $n first, $res joining failed)" \
  '[ $bad = 0 ] && [ "$join_bad" = 0 ]'
probe_results "fs.suid_dumpable=1: the user's processes outside cannot trace or open the /proc \
entries of a launcher process" "$WORK/probe-host"
probe_results "fs.suid_dumpable=1: an app cannot signal, trace or open the /proc entries of a \
joining launch before it is the user's in the view" "$WORK/probe-view1"
gl_wait 30 view_gone

# --- an app in the view stops a joining launch's command before it has
# started (SIGSTOP): that launch waits for it (its helper is in vfork),
# holding the view lock.  Later launches of the user do not hang for ever:
# they give up after a bounded wait, saying why and what to do; once the
# stopped command is gone, launches work again ---
LNAME=$(printf %.15s "${LAUNCH##*/}")
A /bin/window-probe --stop 60000 "${LAUNCH##*/}" > "$WORK/probe-stop" 2>&1 & probe=$!
gl_wait 30 view_up
stopped () { grep -q '^STOPPED ' "$WORK/probe-stop"; }
# (joining launches until the probe has caught one before its exec: the
# last of them then waits)
( while ! stopped && kill -0 "$probe" 2>/dev/null; do A true > /dev/null 2>&1; done ) & stuck=$!
check "(an app in the view stopped a joining launch's command: the checks below can fail)" \
  gl_wait 60 stopped
t0=$SECONDS
out=$(as_user $GL_USER_A timeout 90 "$LAUNCH" t-win -- true 2>&1); rc=$?
waited=$((SECONDS - t0))
check_sh "a later launch gives up after a bounded wait (rc $rc after $waited s), saying why" \
  '[ $rc = 125 ] && grep -q "is stuck, its command stopped before it started" <<<"$out"'
[ $rc = 125 ] || printf '%s\n' "$out" | sed 's/^/#   /'
# (the stopped command, seen from the host: the user's launcher-named
# process in state T)
for p in $(ps -u $GL_USER_A -o pid=,stat=,comm= | awk -v n="$LNAME" '$2 ~ /^T/ && $3 == n { print $1 }'); do
  kill -KILL "$p"
done
wait "$stuck" 2>/dev/null
wait "$probe" 2>/dev/null
check "once the stopped command is gone, launches work again" A true
gl_wait 30 view_gone

finish
