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
view_gone () { ! pgrep -u "$UID_A" >/dev/null; }

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

finish
