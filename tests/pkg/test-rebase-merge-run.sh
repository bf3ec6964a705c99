#!/bin/bash
# Integration: a merged directory (the host's /usr/share/fonts over the
# sandbox's own) that the sandbox's base, after a rebase owned by the
# subordinate range, has unreadable (0700).  Unlike a mount point that
# something is mounted over, a merge shows the sandbox's own directory
# too: the launch must not mark it opaque in the user's mount-point layer,
# or the sandbox's own fonts stay hidden from that user after the base is
# readable again.  The launch on the unreadable base is refused, as before
# the range's mount points were made in the caller's layer, and leaves
# nothing in that layer; after a rebase onto a base whose fonts are
# readable the user sees them, merged with the host's.
# Needs root, /bin/busybox and the host's /usr/share/fonts.
# SPDX-License-Identifier: LGPL-2.1-or-later
source "$(dirname "$0")/libpkgtest.sh"
source "$(dirname "$0")/librepo.sh"
[ -x /bin/busybox ] || skip "/bin/busybox is not installed (apt-get install busybox)"
[ -d /usr/share/fonts ] || skip "the host has no /usr/share/fonts to merge"
gl_pkg_env --profiles --cache --launcher --sandbox mergerun

# base VERSION MODE: the busybox tarball base, its /usr/share/fonts MODE
# with a file of its own
base () {
  gl_tarball_base "$1"
  mkdir -p "$WORK/tree-$1/usr/share/fonts"
  echo "font of $1" > "$WORK/tree-$1/usr/share/fonts/sandbox-font-$1"
  chmod "$2" "$WORK/tree-$1/usr/share/fonts"
  tar -C "$WORK/tree-$1" -cf "$REPO/base/rootfs.tar" .
  gl_serve_base "$REPO/base/rootfs.tar"
}
base v1 0755
gl_serve
gl_tarball_profile mergerun-test "Merge run test"
check "create $id from base v1" "$GLIMPSE" create mergerun-test --name "$id"
out=$(as_user "$GL_USER_A" "$LAUNCH" "$id" -- ls /usr/share/fonts 2>&1); rc=$?
check_sh "user A sees the sandbox's own font on v1, merged (rc $rc: $out)" \
  '[ $rc -eq 0 ] && grep_quiet -x sandbox-font-v1 <<<"$out"'

base v2 0700
check "rebase onto v2 (/usr/share/fonts 0700)" "$GLIMPSE" rebase "$id"
layer=$GL_STORE/$id/users/$(id -u "$GL_USER_A")/mountpoints
refused "user A on v2, whose fonts the merge cannot look at, is refused" \
  "cannot find the mount point /usr/share/fonts inside the sandbox: Permission denied" \
  as_user "$GL_USER_A" "$LAUNCH" "$id" -- true
check_sh "… and nothing of it is made in user A's mount-point layer" \
  '[ ! -e "$layer/usr/share/fonts" ]'

base v3 0755
check "rebase onto v3 (/usr/share/fonts readable again)" "$GLIMPSE" rebase "$id"
out=$(as_user "$GL_USER_A" "$LAUNCH" "$id" -- ls /usr/share/fonts 2>&1); rc=$?
check_sh "user A sees the sandbox's own font on v3, merged (rc $rc: $out)" \
  '[ $rc -eq 0 ] && grep_quiet -x sandbox-font-v3 <<<"$out"'

check "remove" "$GLIMPSE" remove "$id" --force
finish
