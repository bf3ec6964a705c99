#!/bin/bash
# Integration: a profile's post-create hooks run the way package operations
# run, never as the host's root (issue 13).  A tarball base served on
# 127.0.0.1 - a small tree built here from busybox-static (real Arch or
# Alpine trees cannot be fetched in CI: no mirrors), with a link pointing
# at a host path - and a hook that records its ids, its uid_map, its PID 1,
# its network, its seccomp state, tries to write host paths directly and
# through the tree's link, and leaves a process behind: it is uid 0 only
# inside, mapped to the `glimpse` range; its writes land in the tree with
# the tree's own owners; the host is untouched; nothing of it outlives the
# creation.  The bundled apt hook runs inside too.  A failing hook fails
# the creation and leaves nothing; a hook of a sandbox of the host runs as a
# package operation (its result the first system generation).  Needs root.
source "$(dirname "$0")/libpkgtest.sh"
source "$(dirname "$0")/librepo.sh"

gl_pkg_env --profiles --cache
id=hooks-$$
GL_SANDBOXES+=("$id" "$id-fail" "$id-host")
# host paths the hook aims at; none may appear
victim=/etc/glimpse-hook-victim-$$
victim_link=/etc/glimpse-hook-link-$$
escape=$WORK/hook-escape
GL_CLEANUPS+=("rm -f $victim $victim_link /glimpse-hook-root-$$")
# the process the hook leaves behind: a command line no other test uses
linger="sleep 2918.$$"

# A small root file system: busybox and its applets
tree=$WORK/tree
gl_busybox_tree "$tree"
echo "ID=glimpse-test" > "$tree/etc/os-release"
# a link of the tree to a host path: a hook writing through it as the
# host's root would write the host's file
ln -s "$victim_link" "$tree/etc/victim-link"
# the apt hook writes policy-rc.d: here a link to a host path
ln -s "$victim" "$tree/usr/sbin/policy-rc.d"
tar -C "$tree" -czf "$REPO/rootfs.tar.gz" .
(cd "$REPO" && sha256sum rootfs.tar.gz > SHA256SUMS)
gl_serve

cat > "$WORK/record-hook.sh" <<HOOK
set -u
r=/etc/hook-report
{
  echo "args: \$*"
  echo "env: \$GLIMPSE_ROOTFS \$GLIMPSE_SANDBOX \$GLIMPSE_PROFILE"
  echo "id: \$(id -u):\$(id -g)"
  echo "uid_map: \$(tr -s ' ' < /proc/self/uid_map | sed 's/^ //')"
  echo "pid1: \$(tr '\\0' ' ' < /proc/1/cmdline)"
  echo "net: \$(awk -F: 'NR > 2 { gsub(/ /, "", \$1); printf "%s ", \$1 }' /proc/net/dev)"
  echo "status: \$(grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status | tr -s '\\t\\n' '  ')"
  mount -t proc proc /tmp 2>/dev/null && echo "mount-proc: done" || echo "mount-proc: refused"
  chroot / /bin/true 2>/dev/null && echo "chroot: done" || echo "chroot: refused"
  echo x > "$escape" 2>/dev/null && echo "escape: written" || echo "escape: refused"
  echo "store: \$(ls "$GL_STORE" 2>&1 | head -n 1)"
} > "\$r" 2>&1
# writes aimed at the host: an absolute path, and through the tree's link
echo pwned > $victim
echo pwned > /etc/victim-link
echo pwned > /glimpse-hook-root-$$
# a file of root's and one chowned to 1000, as the tree's owners
echo mine > /etc/hook-made
echo theirs > /etc/hook-user; chown 1000:1000 /etc/hook-user
# a setuid-root program: defanged before the tree is reachable
cp /bin/busybox /bin/hook-suid; chmod 4755 /bin/hook-suid
$linger &
exit 0
HOOK
profile () { # name url hooks
  printf '[Profile]\nName=Test %s\nFamily=apk\n\n[Base]\nType=tarball\nUrl=%s/rootfs.tar.gz\nChecksumUrl=%s/SHA256SUMS\n\n[Packages]\nRefresh=true\nUpgrade=true\nInstall=true\nListUpgradable=true\n\n[Hooks]\nPostCreate=%s\n' \
    "$1" "$2" "$2" "$3" > "$WORK/profiles/$1.profile"
}
profile hooktest "$URL" "$WORK/record-hook.sh;$GLIMPSE_BUNDLED_PROFILES/hooks/apt-post-create.sh;"

host_sums=$(ls -A / /etc | sha256sum)
"$GLIMPSE" create hooktest --name "$id" > "$WORK/create.log" 2>&1; rc=$?
check_sh "create with the hooks succeeds (rc $rc)" '[ $rc -eq 0 ]'
[ $rc -eq 0 ] || tail -n 20 "$WORK/create.log" | sed 's/^/# /'
check_sh "it says the hooks run inside the new tree, as root of a user namespace" \
  'grep -q "inside the new tree, as root of a user namespace" "$WORK/create.log"'
root=$GL_STORE/$id/rootfs
rep=$root/etc/hook-report
range=$(awk -F: '$1 == "glimpse" { print $2 }' /etc/subuid)
[ -f "$rep" ] && sed 's/^/# report: /' "$rep"
check_sh "the hook ran as uid 0 inside" 'grep -qx "id: 0:0" "$rep"'
check_sh "… of a user namespace mapped to the glimpse range ($range), never the host's root" \
  '[ -n "$range" ] && grep -qx "uid_map: 0 $range 65536" "$rep"'
check_sh "it got / as its tree and the new id" \
  'grep -qx "args: /" "$rep" && grep -qx "env: / $id hooktest" "$rep"'
check_sh "in a PID namespace of its own (PID 1 is glimpse-pkgns)" 'grep -q "^pid1: .*glimpse-pkgns" "$rep"'
check_sh "without the host's network (only a loopback of its own)" 'grep -qx "net: lo " "$rep"'
check_sh "with no new privileges and a seccomp filter" 'grep -q "NoNewPrivs: 1 Seccomp: 2" "$rep"'
check_sh "mount and chroot are refused" 'grep -qx "mount-proc: refused" "$rep" && grep -qx "chroot: refused" "$rep"'
check_sh "no host path is reachable (the test's directory, the store)" \
  'grep -qx "escape: refused" "$rep" && grep -q "^store: ls: " "$rep" && [ ! -e "$escape" ]'
check_sh "its writes to host paths stayed in the tree (directly and through the tree's links)" \
  '[ ! -e "$victim" ] && [ ! -e "$victim_link" ] && [ ! -e /glimpse-hook-root-$$ ] \
   && [ "$(cat "$root$victim")" = pwned ] && [ "$(cat "$root$victim_link")" = pwned ] \
   && [ "$(cat "$root/glimpse-hook-root-$$")" = pwned ]'
check_sh "the host's / and /etc are unchanged" '[ "$(ls -A / /etc | sha256sum)" = "$host_sums" ]'
check_sh "what it wrote has the tree's own owners (root's 0:0, the chowned 1000:1000)" \
  '[ "$(stat -c %u:%g "$root/etc/hook-made")" = 0:0 ] && [ "$(stat -c %u:%g "$root/etc/hook-user")" = 1000:1000 ]'
check_sh "its set-uid program is defanged in the store" \
  '[ -f "$root/bin/hook-suid" ] && [ ! -u "$root/bin/hook-suid" ]'
check_sh "the bundled apt hook ran inside too (policy-rc.d in the tree, not through its link)" \
  '[ -f "$root/usr/sbin/policy-rc.d" ] && [ ! -L "$root/usr/sbin/policy-rc.d" ] && grep -q "exit 101" "$root/usr/sbin/policy-rc.d"'
check_sh "nothing the hook started outlives the creation" '! pgrep -f -x "$linger" >/dev/null'
check_sh "no scratch of the hooks is left" \
  '[ -z "$(ls -A "$GL_STORE/$id" | grep "^\.hook-")" ] && [ -z "$(ls -A "$GL_STORE" | grep "^\.creating-")" ]'

# A failing hook fails the creation, naming it, and leaves nothing
printf 'echo "the hook says no" >&2\nexit 3\n' > "$WORK/fail-hook.sh"
profile hookfail "$URL" "$WORK/fail-hook.sh"
out=$("$GLIMPSE" create hookfail --name "$id-fail" 2>&1); rc=$?
check_sh "a failing hook fails the creation, naming the hook and its status" \
  '[ $rc -ne 0 ] && grep -q "fail-hook.sh" <<<"$out" && grep -q "exit status 3" <<<"$out"'
check_sh "… and leaves no sandbox and no temporary tree" \
  '[ ! -e "$GL_STORE/$id-fail" ] && [ -z "$(ls -A "$GL_STORE" | grep "^\.creating-")" ]'

# A sandbox of the host: its hook runs as a package operation over the host's /
printf 'echo from-hook > /etc/glimpse-host-hook\necho "uid_map: $(tr -s " " < /proc/self/uid_map | sed "s/^ //")" >> /etc/glimpse-host-hook\n' \
  > "$WORK/host-hook.sh"
printf '[Profile]\nName=Test host hook\nFamily=apt\n\n[Base]\nType=host\n\n[Packages]\nRefresh=true\nUpgrade=true\nInstall=true\nListUpgradable=true\n\n[Hooks]\nPostCreate=%s\n' \
  "$WORK/host-hook.sh" > "$WORK/profiles/hookhost.profile"
"$GLIMPSE" create hookhost --name "$id-host" > "$WORK/host.log" 2>&1; rc=$?
check_sh "a host sandbox's hook runs (rc $rc)" '[ $rc -eq 0 ]'
[ $rc -eq 0 ] || tail -n 20 "$WORK/host.log" | sed 's/^/# /'
htree=$(gl_tree "$id-host")
check_sh "… as root of the namespace, its result the first system generation; the host untouched" \
  '[ "$(gl_current "$id-host")" = 1 ] && grep -qx from-hook "$htree/etc/glimpse-host-hook" \
   && grep -qx "uid_map: 0 $range 65536" "$htree/etc/glimpse-host-hook" && [ ! -e /etc/glimpse-host-hook ]'

check "remove" "$GLIMPSE" remove "$id"
check "remove the host sandbox" "$GLIMPSE" remove "$id-host"
finish
