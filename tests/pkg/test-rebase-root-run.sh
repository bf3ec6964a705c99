#!/bin/bash
# Integration: root runs an app in a sandbox whose base is owned by the
# subordinate range.  A rebase (run as root of a user namespace) leaves the
# new base owned by the range, its /root too (uid 100000 or so, mode 0700,
# as a real distribution has it).  Root's home /root is a mount point the
# launcher must find in the view, where root of the view's namespace has no
# power over the range's files: the launch makes the mount point in root's
# own mount-point layer rather than failing with "cannot find the mount
# point /root: Permission denied".  Also: root on the plain (root-owned)
# tarball base before the rebase, and on a host sandbox; ordinary users
# after it, one whose home is the range's 0700 directory as well (the same
# for them), none whose home is below a 0700 /home of the range (refused,
# as before); what the range's directories held stays out of every view.
# Needs root and /bin/busybox.
# SPDX-License-Identifier: LGPL-2.1-or-later
source "$(dirname "$0")/libpkgtest.sh"
source "$(dirname "$0")/librepo.sh"
[ -x /bin/busybox ] || skip "/bin/busybox is not installed (apt-get install busybox)"
gl_pkg_env --profiles --cache --launcher --sandbox rootrun

# base VERSION [DIR...]: the busybox tarball base, its /root and each DIR
# 0700 with a file in it
base () {
  local v=$1 d; shift
  gl_tarball_base "$v"
  for d in /root "$@"; do
    mkdir -p "$WORK/tree-$v$d"
    chmod 0700 "$WORK/tree-$v$d"
    echo "secret of $v" > "$WORK/tree-$v$d/base-file"
  done
  tar -C "$WORK/tree-$v" -cf "$REPO/base/rootfs.tar" .
  gl_serve_base "$REPO/base/rootfs.tar"
}
base v1
gl_serve
gl_tarball_profile rootrun-test "Root run test"
check "create $id from base v1" "$GLIMPSE" create rootrun-test --name "$id"

out=$("$GLIMPSE" run "$id" -- sh -c 'cat /etc/glimpse-base; echo "$HOME"' 2>&1); rc=$?
check_sh "root runs an app on the root-owned base v1 (rc $rc: $out)" \
  '[ $rc -eq 0 ] && [ "$out" = "$(printf "v1\n/root")" ]'

home_a=$(getent passwd "$GL_USER_A" | cut -d: -f6)
base v2 "$home_a"
check "rebase onto v2" "$GLIMPSE" rebase "$id"
tree=$(find "$GL_STORE/$id/system" -mindepth 2 -maxdepth 2 -name tree -path '*/base-*' | head -n 1)
[ -n "$tree" ] || tree=$(gl_tree "$id")
owner=$(stat -c %u "$tree/root" 2>/dev/null)
check_sh "the new base's /root is the range's, 0700 ($tree/root: uid $owner)" \
  '[ -n "$owner" ] && [ "$owner" != 0 ] && [ "$(stat -c %a "$tree/root")" = 700 ]'

out=$("$GLIMPSE" run "$id" -- sh -c 'cat /etc/glimpse-base; echo "$HOME"; echo mine > "$HOME/root-file"; cat "$HOME/root-file"' 2>&1); rc=$?
check_sh "root runs an app on the range-owned base v2 (rc $rc: $out)" \
  '[ $rc -eq 0 ] && [ "$out" = "$(printf "v2\n/root\nmine")" ]'
check_sh "… its file is in root's layer, not in /root of the host" '[ ! -e /root/root-file ]'
out=$("$GLIMPSE" run "$id" -- sh -c 'ls -A /root; cat /root/base-file 2>&1; true' 2>&1); rc=$?
check_sh "… the base's own /root stays hidden under root's home (rc $rc: $out)" \
  '[ $rc -eq 0 ] && grep_quiet -x root-file <<<"$out" && not grep_quiet "secret of" <<<"$out"'
out=$(as_user "$GL_USER_B" "$LAUNCH" "$id" -- sh -c 'cat /etc/glimpse-base; ls -A /root 2>&1; cat /root/base-file 2>&1; true' 2>&1); rc=$?
check_sh "an ordinary user runs v2 (rc $rc), and reaches nothing of the range's /root (got: $out)" \
  '[ $rc -eq 0 ] && [ "$(sed -n 1p <<<"$out")" = v2 ] && not grep_quiet "secret of" <<<"$out"'
check_sh "… and has no root mount point of root's made in their layer" \
  '[ ! -e "$GL_STORE/$id/users/$(id -u "$GL_USER_B")/mountpoints/root" ]'
# a symbolic link in a user's own mount-point layer: refused, the message
# pointing at their purge (their link, not the administrator's sandbox)
home_b=$(getent passwd "$GL_USER_B" | cut -d: -f6)
mp_b=$GL_STORE/$id/users/$(id -u "$GL_USER_B")/mountpoints$home_b
check_sh "user B's home mount point was made in their layer ($mp_b)" '[ -d "$mp_b" ] && [ ! -L "$mp_b" ]'
as_user "$GL_USER_B" sh -c 'rmdir "$1" && ln -s /tmp "$1"' sh "$mp_b"
refused "a symbolic link at a mount point in user B's own layer is refused, advising their purge" \
  'is or passes through a symbolic link; .*or purge your layer \("glimpse purge"\) if the link is yours' \
  as_user "$GL_USER_B" "$LAUNCH" "$id" -- true
check "… which user B does" as_user "$GL_USER_B" "$GLIMPSE" purge "$id" --yes
out=$(as_user "$GL_USER_B" "$LAUNCH" "$id" -- cat /etc/glimpse-base 2>&1); rc=$?
check_sh "… and then runs again (rc $rc: $out)" '[ $rc -eq 0 ] && [ "$out" = v2 ]'
# user A's home is in the range's base too, 0700: the same as root's /root
out=$(as_user "$GL_USER_A" "$LAUNCH" "$id" -- sh -c 'echo "$HOME"; ls -A "$HOME" | grep -c base-file; echo a > "$HOME/a-file-$$"; cat "$HOME/a-file-$$"' 2>&1); rc=$?
check_sh "a user whose home is the range's 0700 directory in v2 runs, in their own home, not the base's (rc $rc: $out)" \
  '[ $rc -eq 0 ] && [ "$out" = "$(printf "%s\n0\na" "$home_a")" ] && [ ! -e "$home_a/a-file-$$" ]'
# /home itself 0700 in the range's base: a user's home below it stays refused
base v3 /home
check "rebase onto v3 (/home 0700)" "$GLIMPSE" rebase "$id"
refused "a user whose home is below the range's 0700 /home is refused, as before" \
  "cannot find the mount point $home_a inside the sandbox: Permission denied" \
  as_user "$GL_USER_A" "$LAUNCH" "$id" -- true
out=$("$GLIMPSE" run "$id" -- sh -c 'cat /etc/glimpse-base; cat /root/base-file 2>&1; true' 2>&1); rc=$?
check_sh "root still runs on v3 (rc $rc: $out)" \
  '[ $rc -eq 0 ] && [ "$(sed -n 1p <<<"$out")" = v3 ] && not grep_quiet "secret of" <<<"$out"'

check "remove" "$GLIMPSE" remove "$id" --force

# root on a host sandbox: its /root is the host's, root's own
GL_SANDBOXES+=("$id-host")
check "create $id-host (host)" "$GLIMPSE" create host --name "$id-host"
out=$("$GLIMPSE" run "$id-host" -- sh -c 'echo "$HOME"; echo mine > /root/root-file-$$; cat /root/root-file-$$' 2>&1); rc=$?
check_sh "root runs an app in a host sandbox (rc $rc: $out)" \
  '[ $rc -eq 0 ] && [ "$out" = "$(printf "/root\nmine")" ] && [ ! -e /root/root-file-$$ ]'
check "remove $id-host" "$GLIMPSE" remove "$id-host" --force
finish
