#!/bin/bash
# Integration: after `glimpse rebase` the old base's disk space is given
# back once no view uses it.  Small busybox trees served on 127.0.0.1 as
# tarball bases v1, v2, v3 (each with a 4 MiB file of its own).
# Sandbox 1: an app started on v1 (the setuid launcher, a test user) keeps
# running across the rebase onto v2: rootfs/ (v1) is kept, and said so;
# once the app ends, the next package operation (reset) empties it, says
# what it gave back, and new views still show v2 whole.  A view that has
# ended but is still held from outside keeps the old generations through
# the next operation.  A rebase onto v3 with no app running (and nothing
# held) deletes the v2 generations at once.
# Sandbox 2 (of the apk family): a rebase with no view up empties rootfs/
# at its end.
# Needs root.
# SPDX-License-Identifier: LGPL-2.1-or-later
source "$(dirname "$0")/libpkgtest.sh"
source "$(dirname "$0")/librepo.sh"
[ -x /bin/busybox ] || skip "/bin/busybox is not installed (apt-get install busybox)"
gl_pkg_env --profiles --cache --launcher
id=reclaim-$$
id2=reclaim2-$$
GL_SANDBOXES+=("$id" "$id2")

# base VERSION: the tarball base VERSION, with a 4 MiB file of its own
base () { gl_tarball_base "$1" 4; }
base v1
gl_serve
gl_tarball_profile reclaim-test "Reclaim test"
# the same bases as an apk sandbox: a rebase of another family, with no
# package to put back
sed -e 's/^Name=.*/Name=Reclaim test (apk)/' -e 's/^Family=.*/Family=apk/' -e 's/^Refresh=.*/Refresh=apk update/' \
  -e 's/^Upgrade=.*/Upgrade=apk upgrade/' -e 's/^Install=.*/Install=apk add/' \
  -e 's/^ListUpgradable=.*/ListUpgradable=apk list --upgradable/' \
  "$WORK/profiles/reclaim-test.profile" > "$WORK/profiles/reclaim-apk.profile"

# no view of sandbox ID is up: its lock and every user's lock are free
no_view () {
  local l
  for l in "$GL_STORE/$1/lock" "$GL_STORE/$1"/users/*/lock; do
    [ -e "$l" ] || continue
    flock -xn "$l" true || return 1
  done
}
files_in () { find "$1" ! -type d | wc -l; }
# (the view merges the host's fonts, icons and themes into /usr/share)
view_of () { as_user "$1" "$GLIMPSE" run "$2" -- sh -c 'cat /etc/glimpse-base; ls /usr/share | grep glimpse-only' 2>&1; }
# g_format_size puts a no-break space between the number and the unit
MB='[0-9.]*[^0-9A-Za-z]*MB'


check "create $id from base v1" "$GLIMPSE" create reclaim-test --name "$id"
check "create $id2 (apk) from base v1" "$GLIMPSE" create reclaim-apk --name "$id2"
check_sh "rootfs/ holds v1" '[ -f "$GL_STORE/$id/rootfs/usr/share/glimpse-only-v1" ]'

# --- an app of v1 keeps running across the rebase
as_user "$GL_USER_A" "$GLIMPSE" run "$id" -- sleep 3599.377 >/dev/null 2>&1 &
runner=$(gl_wait_pid "$GL_USER_A" '^sleep 3599\.377$' 60)
check_sh "an app of v1 runs" '[ -n "$runner" ]'
base v2
out=$("$GLIMPSE" rebase "$id" 2>&1); rc=$?
printf '%s\n' "$out" | tail -n 4 | sed 's/^/# /'
check_sh "rebase onto v2 (rc $rc) says the old base is kept while the app runs" \
  '[ $rc -eq 0 ] && grep -q "old base of “$id” is kept while an app" <<<"$out"'
check_sh "rootfs/ (v1) is still there, under the running app" \
  '[ -f "$GL_STORE/$id/rootfs/usr/share/glimpse-only-v1" ] && [ "$(cat "/proc/$runner/root/etc/glimpse-base")" = v1 ]'
got=$(view_of "$GL_USER_B" "$id")
check_sh "a new view shows v2 only (got: $(echo $got))" '[ "$(echo $got)" = "v2 glimpse-only-v2" ]'

kill "$runner"
check "the app has ended and no view is up" gl_wait 60 no_view "$id"
out=$("$GLIMPSE" reset "$id" --yes 2>&1); rc=$?
printf '%s\n' "$out" | sed 's/^/# /'
check_sh "the next package operation (reset) reclaims the old base and says how much (rc $rc)" \
  '[ $rc -eq 0 ] && grep -q "Reclaimed $MB of “$id”: its old base" <<<"$out"'
check_sh "rootfs/ keeps its directories only, owned by root" \
  '[ "$(files_in "$GL_STORE/$id/rootfs")" -eq 0 ] && [ -d "$GL_STORE/$id/rootfs/usr/share" ] \
   && [ "$(stat -c %u:%a "$GL_STORE/$id/rootfs")" = 0:755 ] && ! ls -A "$GL_STORE/$id/system" | grep_quiet "^\.op-"'
got=$(view_of "$GL_USER_A" "$id")
check_sh "a new view still shows v2 whole (got: $(echo $got))" '[ "$(echo $got)" = "v2 glimpse-only-v2" ]'
got=$(as_user "$GL_USER_A" "$GLIMPSE" run "$id" -- sh -c 'ls /bin/busybox /etc/passwd && id -un' 2>&1)
check_sh "… and runs its programs (got: $(echo $got))" '[ "$(echo $got)" = "/bin/busybox /etc/passwd $GL_USER_A" ]'

# --- a view that has ended but that a process outside still keeps (it
# holds the view's mount namespace): its overlays stay mounted over the
# generation it was built from, so a package operation deletes no old
# generation, names the holder, and the next one after it has gone does
as_user "$GL_USER_A" "$GLIMPSE" run "$id" -- sleep 3599.378 >/dev/null 2>&1 &
app=$(gl_wait_pid "$GL_USER_A" '^sleep 3599\.378$' 60)
as_user "$GL_USER_A" nsenter -t "$app" -U -m --preserve-credentials sleep 3599.379 &
nsholder_bg=$!
nsholder=$(gl_wait_pid "$GL_USER_A" '^sleep 3599\.379$' 60)
same_ns () { [ "$(stat -L -c %d:%i /proc/"$nsholder"/ns/mnt 2>/dev/null)" = "$(stat -L -c %d:%i /proc/"$app"/ns/mnt)" ]; }
check "(a process outside holds the view's mount namespace)" gl_wait 30 same_ns
kill "$app"
check "the app has ended and no view is up" gl_wait 60 no_view "$id"
gens () { ls "$GL_STORE/$id/system" | grep -c '^[0-9]*$'; }
out=$("$GLIMPSE" reset "$id" --yes 2>&1); rc=$?
printf '%s\n' "$out" | tail -n 3 | sed 's/^/# /'
check_sh "reset (rc $rc) keeps the old generations while the ended view is held, naming the holder" \
  '[ $rc -eq 0 ] && grep -q "old system generations of “$id” are kept: .*held by process $nsholder (sleep)" <<<"$out" \
   && [ "$(gens)" -gt 1 ]'
kill "$nsholder"; wait "$nsholder_bg" 2>/dev/null

# --- a rebase with no view up: the previous base goes at once
check "no view is up" gl_wait 60 no_view "$id"
gens_before=$(ls "$GL_STORE/$id/system" | grep -c '^[0-9]*$')
base v3
out=$("$GLIMPSE" rebase "$id" 2>&1); rc=$?
printf '%s\n' "$out" | tail -n 3 | sed 's/^/# /'
check_sh "rebase onto v3 (rc $rc) deletes the v2 generations (in the background), saying what it gave back" \
  '[ $rc -eq 0 ] && grep -q "Reclaimed .* system generations" <<<"$out" \
   && [ "$(ls "$GL_STORE/$id/system" | grep -c "^[0-9]*$")" -eq 1 ] \
   && gl_wait 30 sh -c '\''! find "$1" -name glimpse-only-v2 | grep -q .'\'' sh "$GL_STORE/$id"'
got=$(view_of "$GL_USER_A" "$id")
check_sh "a new view shows v3 (got: $(echo $got))" '[ "$(echo $got)" = "v3 glimpse-only-v3" ]'

# --- sandbox 2 (apk): rebased with no view up: rootfs/ emptied at the end of rebase
out=$("$GLIMPSE" rebase "$id2" 2>&1); rc=$?
check_sh "rebase of $id2 with no view up reclaims its old base at once (rc $rc)" \
  '[ $rc -eq 0 ] && grep -q "Reclaimed $MB of “$id2”: its old base" <<<"$out" \
   && [ "$(files_in "$GL_STORE/$id2/rootfs")" -eq 0 ]'
got=$(view_of "$GL_USER_A" "$id2")
check_sh "… and its view shows v3 (got: $(echo $got))" '[ "$(echo $got)" = "v3 glimpse-only-v3" ]'

check "remove $id" "$GLIMPSE" remove "$id" --force
check "remove $id2" "$GLIMPSE" remove "$id2" --force
finish
