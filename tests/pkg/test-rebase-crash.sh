#!/bin/bash
# Integration: a rebase killed (SIGKILL, GLIMPSE_TEST_CRASH_AT) at each step
# of its commit leaves the sandbox either fully old or fully new: the base
# a view shows is the base reset returns to.  The generation names its base
# (system/N/base), so the rename of `current` switches both at once; the
# base holds its release, so what glimpse records (glimpse info, and
# sandbox.conf from the next operation on) switches with them.
# Small busybox trees served on 127.0.0.1 as tarball bases v1…v6.
# Needs root.
# SPDX-License-Identifier: LGPL-2.1-or-later
source "$(dirname "$0")/libpkgtest.sh"
source "$(dirname "$0")/librepo.sh"
[ -x /bin/busybox ] || skip "/bin/busybox is not installed (apt-get install busybox)"
gl_pkg_env --profiles --cache --launcher
id=rebasecrash-$$
GL_SANDBOXES+=("$id")

base () { gl_tarball_base "$1"; }
base v1
gl_serve
gl_tarball_profile crash-test "Rebase crash test" Release=v1

view () { as_user "$GL_USER_A" "$GLIMPSE" run "$id" -- cat /etc/glimpse-base 2>&1; }
# the release glimpse records for the sandbox (the profile's Release=)
release () { "$GLIMPSE" info "$id" 2>&1 | sed -n 's/^Release: *//p'; }
system=$GL_STORE/$id/system
# every base-G of system/ is named by a generation left
bases_named () {
  local b g
  for b in $(ls "$system" | grep '^base-[0-9]*$'); do
    g=${b#base-}
    grep -qx "$g" "$system"/[0-9]*/base 2>/dev/null || return 1
  done
}

check "create $id from base v1" "$GLIMPSE" create crash-test --name "$id"
check_sh "its view shows v1" '[ "$(view)" = v1 ]'

n=1
# (the steps before `current` twice: from the first base alone, and from a
# rebased sandbox, whose bare base reset returns to)
for point in commit-tree commit-base commit-record commit-current rebase-committed \
             commit-tree commit-base commit-record; do
  n=$((n + 1))
  old=$(view)
  case $point in commit-current|rebase-committed) want=v$n ;; *) want=$old ;; esac
  base "v$n"
  sed -i "s/^Release=.*/Release=v$n/" "$WORK/profiles/crash-test.profile"
  GLIMPSE_TEST_CRASH_AT=$point "$GLIMPSE" rebase "$id" > "$WORK/out-$point" 2>&1; rc=$?
  check_sh "[$point] the rebase onto v$n is killed there (status $rc)" '[ $rc -eq 137 ]'
  got=$(view)
  check_sh "[$point] the view shows $want (got $got)" '[ "$got" = "$want" ]'
  got=$(release)
  check_sh "[$point] the recorded release is the view's, $want (got $got)" '[ "$got" = "$want" ]'
  check "[$point] the next operation (reset) works" "$GLIMPSE" reset "$id" --yes
  got=$(view)
  check_sh "[$point] reset returns to the base the view showed, $want (got $got)" '[ "$got" = "$want" ]'
  check_sh "[$point] … and sandbox.conf records its release" \
    'grep -qx "Release=$want" "$GL_STORE/$id/sandbox.conf" && [ "$(release)" = "$want" ]'
  check_sh "[$point] nothing of the killed rebase is left" \
    '! ls -A "$system" | grep_quiet "^\.op-\|^current\.tmp$" && bases_named'
done

# The layout before generations named their base: system/base, read for a
# generation without N/base
cur=$(cat "$system/current")
mv "$system/base-$(cat "$system/$cur/base")" "$system/base" && rm "$system/$cur/base"
check "[old layout] reset" "$GLIMPSE" reset "$id" --yes
check_sh "[old layout] reset returns to the old layout's base, $want" '[ "$(view)" = "$want" ] && [ -d "$system/base/tree" ]'

n=$((n + 1))
base "v$n"
sed -i "s/^Release=.*/Release=v$n/" "$WORK/profiles/crash-test.profile"
check "a rebase to the end works" "$GLIMPSE" rebase "$id"
check_sh "its view shows v$n, its release is v$n" '[ "$(view)" = "v$n" ] && [ "$(release)" = "v$n" ]'
check "reset" "$GLIMPSE" reset "$id" --yes
check_sh "reset returns to v$n" '[ "$(view)" = "v$n" ] && bases_named'
check_sh "one bare base is left, the current generation's" \
  '[ "$(ls "$system" | grep -c "^base")" -eq 1 ] && [ -d "$system/base-$(cat "$system/$(cat "$system/current")/base")/tree" ]'
check "remove $id" "$GLIMPSE" remove "$id" --force
finish
