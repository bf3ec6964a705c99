#!/bin/bash
# glimpse-launch: fs.suid_dumpable and the launcher's children that change
# their ids or enter the view's user namespaces.  Where it is 1 ("debug"),
# a process that does so becomes dumpable for a moment; one that is still
# root on the host but in a user namespace of the caller's could then be
# traced by the caller, who has every capability there, and made to act
# as root on the host's files (seen before 9bc603c: a user made the nested
# id maps' child chmod a file of root's; in ee2863a, the launcher itself,
# stopped by the user just after it set its gids in the view's outer user
# namespace, still with root's filesystem uid).  With 0, 2 and 1, no process of
# the launcher's that is root on the host can be traced (test-windows
# checks the /proc entries; this one tries the whole attack).
# SPDX-License-Identifier: LGPL-2.1-or-later
. "$(dirname "$0")/libtest.sh"

: "${GL_PTRACE_RACE:?GL_PTRACE_RACE must point to the built ptrace-race}"
[ "$(uname -m)" = x86_64 ] || skip "the tracing attack is written for x86-64"
[ -w /proc/sys/fs/suid_dumpable ] || skip "fs.suid_dumpable cannot be changed here"
gl_make_sandbox t-dump rootfs
gl_install_setuid
old=$(cat /proc/sys/fs/suid_dumpable)
GL_CLEANUPS+=("echo $old > /proc/sys/fs/suid_dumpable")
# a copy of the attacker the test user can run
install -m 0755 "$GL_PTRACE_RACE" "$WORK/ptrace-race"

# (tries: before the fix, about one in fifteen launches was traced with
# suid_dumpable=1; 2 was safe already and is the usual default)
for dt in ${GL_DUMPABLE_TRIES:-1:25 2:8}; do
  d=${dt%:*}
  echo $d > /proc/sys/fs/suid_dumpable
  victim=$WORK/victim-$d
  install -o root -g root -m 0600 /dev/null "$victim"
  out=$(as_user $GL_USER_A "$WORK/ptrace-race" "$LAUNCH" t-dump "$victim" ${dt#*:} 2>&1)
  echo "# suid_dumpable=$d: $out" | head -n 3
  check_sh "fs.suid_dumpable=$d: no process of the launcher's can be traced into acting as root (root's file stays 0600)" \
    '[ "$(stat -c %a "$victim")" = 600 ]'
done
echo "$old" > /proc/sys/fs/suid_dumpable
check "fs.suid_dumpable=$old again: the launcher runs" as_user $GL_USER_A "$LAUNCH" t-dump -- true
finish
