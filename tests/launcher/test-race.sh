#!/bin/bash
# glimpse-launch: launches racing a first launch.  The view's PID 1 moves
# into a nested user namespace whose id maps the launcher writes while
# PID 1 goes on (6ce744d); nothing may run in that namespace before they
# are written: an app there would run as the overflow id 65534, without
# its groups (or, caught by the launcher's own check before exec, fail to
# start).  Run as ordinary users against the setuid copy.
# SPDX-License-Identifier: LGPL-2.1-or-later
. "$(dirname "$0")/libtest.sh"

gl_make_sandbox t-race rootfs
gl_install_setuid
A () { as_user $GL_USER_A "$LAUNCH" t-race -- "$@"; }
B () { as_user $GL_USER_B "$LAUNCH" t-race -- "$@"; }
A true && B true || { fail "first launches"; finish; exit 1; }

# What an app says of its own ids, on one line: its maps, and its
# status's Uid, Gid and Groups lines.
IDS='echo "uid_map[ $(cat /proc/self/uid_map) ] gid_map[ $(cat /proc/self/gid_map) ] $(grep -E "^(Uid|Gid|Groups):" /proc/self/status)" | tr -s " \t\n" "   "'
# ids_ok USER FILE: FILE is what IDS printed in an app of USER, and shows
# USER's real ids, mapped to themselves, and all of its groups - never the
# overflow id (unmapped), never an empty map.
ids_ok () {
  local u=$1 f=$2 uid gid g
  uid=$(id -u "$u"); gid=$(id -g "$u")
  grep_quiet -F "uid_map[ $uid $uid 1 ] gid_map[ $gid $gid 1 " "$f" || return 1
  grep_quiet -F "Uid: $uid $uid $uid $uid Gid: $gid $gid $gid $gid Groups: " "$f" || return 1
  for g in $(id -G "$u"); do
    grep_quiet -E "gid_map\[ ([0-9]+ [0-9]+ 1 )*$g $g 1 " "$f" || return 1
    grep_quiet -E "Groups: ([0-9]+ )*$g( |\$)" "$f" || return 1
  done
  ! grep_quiet -E "(^|[^0-9])65534([^0-9]|\$)" "$f"
}
# no_view USER: no process of USER's is left (the view has ended)
no_view () { ! pgrep -u "$1" > /dev/null; }
check "the test user A is in a supplementary group (the gid map's groups are checked)" \
  sh -c "id -G $GL_USER_A | grep -qw $(getent group $GL_GROUP_X | cut -d: -f3)"

# --- many launches of two users at once, each the first of its view or a
# joiner: every app runs with its caller's ids, its maps written ---
rounds=${GL_RACE_ROUNDS:-10}
failed=0
for r in $(seq "$rounds"); do
  gl_wait 30 no_view $GL_USER_A; gl_wait 30 no_view $GL_USER_B
  pids=()
  for i in 1 2 3 4 5 6; do
    A /bin/sh -c "$IDS" > "$WORK/ra.$r.$i" 2>&1 & pids+=($!)
  done
  for i in 1 2 3; do
    B /bin/sh -c "$IDS" > "$WORK/rb.$r.$i" 2>&1 & pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || failed=$((failed + 1)); done
done
bad=0
for f in "$WORK"/ra.*; do ids_ok $GL_USER_A "$f" || { bad=$((bad + 1)); sed 's/^/# A: /' "$f" | head -n 3; }; done
for f in "$WORK"/rb.*; do ids_ok $GL_USER_B "$f" || { bad=$((bad + 1)); sed 's/^/# B: /' "$f" | head -n 3; }; done
check_sh "$rounds rounds of 6 + 3 launches racing first launches: all ran ($failed failed)" '[ $failed = 0 ]'
check_sh "... every app with its caller's ids and groups, mapped, never the overflow id ($bad not)" \
  '[ $bad = 0 ] && [ "$(ls "$WORK"/ra.* | wc -l)" = $((rounds * 6)) ]'
rm -f "$WORK"/ra.* "$WORK"/rb.*
finish
