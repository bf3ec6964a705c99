#!/bin/bash
# Integration: a view built by glimpse-launch WITHOUT its setuid bit (the
# unprivileged mode, where the kernel allows user namespaces) keeps the
# system generation it was built from, as a setuid one does.  Without
# privilege the launcher cannot open the generation's lock (root's, 0600);
# only the user's own lock (users/<uid>/lock) says a view may be up, and it
# records nothing in users/.views/.  A package operation (a rebase of a
# busybox tarball sandbox) while such a view runs must not delete the
# generation the view is built from under it (overlayfs: a layer must not
# change while an overlay uses it); the first operation after the view has
# ended reclaims it.
# Needs root, /bin/busybox and unprivileged user namespaces.
# SPDX-License-Identifier: LGPL-2.1-or-later
source "$(dirname "$0")/libpkgtest.sh"
source "$(dirname "$0")/librepo.sh"
[ -x /bin/busybox ] || skip "/bin/busybox is not installed (apt-get install busybox)"
[ "$(cat /proc/sys/kernel/unprivileged_userns_clone 2>/dev/null || echo 1)" = 1 ] ||
  skip "unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone=0)"
gl_pkg_env --profiles --cache --launcher --sandbox nosuid
NOSUID=$GL_BIN/nosuid-$TEST_NAME
install -o root -g root -m 0755 "$GL_LAUNCHER" "$NOSUID"
trap 'rm -f "$NOSUID"' EXIT

gl_tarball_base v1 1
gl_serve
gl_tarball_profile nosuid-test "Nosuid test"
check "create $id from base v1" "$GLIMPSE" create nosuid-test --name "$id"
gl_tarball_base v2 1
check "rebase onto v2 (a system generation)" "$GLIMPSE" rebase "$id"
sys=$GL_STORE/$id/system
gen=$(gl_current "$id")
# (users/<uid>/ is made by the setuid launcher's first run)
check "user A's layer made by a setuid launch" as_user "$GL_USER_A" "$LAUNCH" "$id" -- true
# (no trash of sandbox ID is left: its remover has ended)
no_trash_of () { ! ls -A "$GL_STORE/$1/system" | grep_quiet '^\.trash-'; }
no_trash () { no_trash_of "$id"; }
gl_wait 30 no_trash
# view_ended_reclaims ID GEN: the view (pid $app) of sandbox ID is ended;
# the next operation (reset) reclaims its generation GEN
view_ended_reclaims () {
  local sid=$1 g=$2
  kill "$app"
  check "the view has ended" gl_wait 60 flock -xn "$GL_STORE/$sid/users/$(id -u "$GL_USER_A")/lock" true
  check "the next operation (reset) after it" "$GLIMPSE" reset "$sid" --yes
  gl_wait 30 no_trash_of "$sid"
  check_sh "… reclaims generation $g" '[ ! -e "$GL_STORE/$sid/system/$g" ]'
}

as_user "$GL_USER_A" "$NOSUID" "$id" -- sleep 3599.461 > "$WORK/out-view" 2>&1 &
app=$(gl_wait_pid "$GL_USER_A" '^sleep 3599\.461$' 60)
check_sh "a view without the setuid bit runs generation $gen (v2) ($(head -c 300 "$WORK/out-view"))" \
  '[ -n "$app" ] && [ "$(cat /proc/"$app"/root/etc/glimpse-base)" = v2 ]'
ino=$(stat -c %i "$sys/$gen/tree")

gl_tarball_base v3 1
out=$("$GLIMPSE" rebase "$id" 2>&1); rc=$?
printf '%s\n' "$out" | tail -n 3 | sed 's/^/# /'
check_sh "rebase onto v3 while it runs (rc $rc), saying why old generations are kept" \
  '[ $rc -eq 0 ] && [ "$(gl_current "$id")" != "$gen" ] \
   && grep -q "old system generations of “$id” are kept: uid $(id -u "$GL_USER_A") may run a view of it built by glimpse-launch without its setuid bit" <<<"$out"'
gl_wait 30 no_trash
check_sh "… keeps generation $gen, which the view is built from" \
  '[ "$(stat -c %i "$sys/$gen/tree" 2>/dev/null)" = "$ino" ] && [ -f "$sys/$gen/tree/usr/share/glimpse-only-v2" ]'
check_sh "… and the view still reads it" \
  '[ "$(cat /proc/"$app"/root/etc/glimpse-base 2>&1)" = v2 ] && [ -f /proc/"$app"/root/usr/share/glimpse-only-v2 ]'

view_ended_reclaims "$id" "$gen"

# A launch without the bit that opened generation N before an operation
# switched away from it, and takes its lock only after the operation
# looked: it reads `current` again once it holds the lock, and runs in
# the new generation (N has gone meanwhile).  The launch is stopped by
# strace right after its fstatfs of system/N/tree.
if strace -o /dev/null -e trace=getpid -e inject=getpid:signal=SIGCONT true 2>/dev/null; then
  gl_tarball_base v4 1
  check "rebase onto v4" "$GLIMPSE" rebase "$id"
  gl_wait 30 no_trash
  gen=$(gl_current "$id")
  strace -o /dev/null -P "$sys/$gen/tree" -e trace=fstatfs -e inject=fstatfs:signal=SIGSTOP:when=1 \
    -u "$GL_USER_A" env -i HOME=/ PATH=/usr/bin:/bin LANG=C.UTF-8 \
    XDG_RUNTIME_DIR=/run/user/"$(id -u "$GL_USER_A")" \
    "$NOSUID" "$id" -- cat /etc/glimpse-base > "$WORK/out-race" 2>&1 & late=$!
  launcher_stopped () {
    c=$(pgrep -P "$late" | head -n 1)
    [ -n "$c" ] && [ "$(awk '{ print $3 }' /proc/"$c"/stat 2>/dev/null)" = t ]
  }
  check "a launch without the bit stopped after opening system/$gen/tree" gl_wait 30 launcher_stopped
  gl_tarball_base v5 1
  check "rebase onto v5 meanwhile" "$GLIMPSE" rebase "$id"
  gl_wait 30 no_trash
  check_sh "… generation $gen is gone" '[ ! -e "$sys/$gen" ]'
  kill -CONT "$c"
  wait "$late"; rc=$?
  check_sh "… the launch, continued, runs in the new generation (rc $rc: $(head -c 300 "$WORK/out-race"))" \
    '[ $rc -eq 0 ] && [ "$(tail -n 1 "$WORK/out-race")" = v5 ]'
else
  skip_case "a launch without the bit racing an operation" "strace cannot inject a signal here"
fi

# A reset of a sandbox never rebased (it unlinks `current`) while such a
# view runs generation K, and an operation after it (which takes what is
# newer than no `current` for what an interrupted operation left): K stays
# while the view runs.  K is made by hand, as operations lay it out.
id2=nosuid2-$$
GL_SANDBOXES+=("$id2")
check "create $id2" "$GLIMPSE" create nosuid-test --name "$id2"
sys2=$GL_STORE/$id2/system
install -d -o root -g root -m 0755 "$sys2/1" "$sys2/1/tree" "$sys2/1/tree/etc"
echo k1 > "$sys2/1/tree/etc/glimpse-base"
: > "$sys2/1/lock"; chmod 0600 "$sys2/1/lock"
echo 1 > "$sys2/current"; chmod 0644 "$sys2/current"
ino=$(stat -c %i "$sys2/1/tree")
check "user A's layer of $id2 made by a setuid launch" as_user "$GL_USER_A" "$LAUNCH" "$id2" -- true
as_user "$GL_USER_A" "$NOSUID" "$id2" -- sleep 3599.462 > "$WORK/out-view" 2>&1 &
app=$(gl_wait_pid "$GL_USER_A" '^sleep 3599\.462$' 60)
check_sh "a view of $id2 without the bit runs generation 1 ($(head -c 300 "$WORK/out-view"))" \
  '[ -n "$app" ] && [ "$(cat /proc/"$app"/root/etc/glimpse-base)" = k1 ]'
out=$("$GLIMPSE" reset "$id2" --yes 2>&1); rc=$?
printf '%s\n' "$out" | tail -n 2 | sed 's/^/# /'
check_sh "reset --yes while it runs (rc $rc) keeps generation 1, saying why" \
  '[ $rc -eq 0 ] && [ "$(stat -c %i "$sys2/1/tree" 2>/dev/null)" = "$ino" ] && [ ! -e "$sys2/current" ] \
   && grep -q "are kept: uid $(id -u "$GL_USER_A") may run a view of it built by glimpse-launch without" <<<"$out"'
gl_tarball_base v8 1
check "rebase of $id2 after the reset" "$GLIMPSE" rebase "$id2"
gl_wait 30 no_trash_of "$id2"
check_sh "… generation 1 stays, and the view still reads it" \
  '[ "$(stat -c %i "$sys2/1/tree" 2>/dev/null)" = "$ino" ] && [ "$(cat "$sys2/1/tree/etc/glimpse-base")" = k1 ] \
   && [ "$(cat /proc/"$app"/root/etc/glimpse-base 2>&1)" = k1 ]'
view_ended_reclaims "$id2" 1
check "remove $id2" "$GLIMPSE" remove "$id2" --force

check "remove $id" "$GLIMPSE" remove "$id" --force
finish
