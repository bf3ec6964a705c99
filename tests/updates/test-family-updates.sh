#!/bin/bash
# Integration: the update checks of the other families (dnf, pacman, apk),
# which run the family's own read-only check inside the sandbox through
# the real setuid launcher, as an ordinary user.
#
# dnf: real rpm packages built here (rpmbuild), a repository made by
# createrepo_c and served on 127.0.0.1, a sandbox over the host whose
# system layer holds an rpm database (rpm --initdb, the old packages
# registered with --justdb) and a .repo file; the result must equal what
# what dnf's own `repoquery --upgrades` says in the same view, and a dead repository fails the check without a list.
# pacman and apk: their checks (checkupdates, apk) are not packaged for
# this Debian, so only a sandbox without the tool is checked here: it is
# reported as GL_UPDATES_FAMILY_ERROR_NO_TOOL with the command that
# installs it.  Their output parsers are unit-tested (test-updates-family).
# Needs root for the set-up.
# SPDX-License-Identifier: LGPL-2.1-or-later
: "${UPDATES_CHECK:?set UPDATES_CHECK to the built updates-check}"
source "$(dirname "$0")/../launcher/libtest.sh"
source "$(dirname "$0")/../lib/dnf-tree.sh"
for tool in rpm rpmbuild createrepo_c dnf; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (apt-get install rpm createrepo-c dnf)"
done
gl_install_setuid
GL_EXTRA_ENV="GLIMPSE_SANDBOX_DIR=$GL_STORE GLIMPSE_LAUNCHER=$LAUNCH"
# the check as the test user, from a directory the user can read
install -m 0755 "$UPDATES_CHECK" "$WORK/updates-check"
check_as_user () { as_user "$GL_USER_A" "$WORK/updates-check" --family "$@"; }

# --- rpm packages: glimpse-hello 1.0-1 installed, 1.1-1 published;
# glimpse-same 1.0-1 both; glimpse-epoch 1:2.0-1 installed, 1:2.0-2 published
mkrpm () { # NAME VERSION RELEASE OUTDIR [EPOCH]
  local top; top=$(mktemp -d "$WORK/rpmbuild.XXXXXX")
  mkdir -p "$top/SPECS"
  {
    echo "Name: $1"; echo "Version: $2"; echo "Release: $3"
    [ -n "${5:-}" ] && echo "Epoch: $5"
    echo "Summary: Glimpse test package $1"; echo "License: MIT"; echo "BuildArch: noarch"
    printf '%%description\nA package of the Glimpse tests.\n'
    printf '%%install\nmkdir -p %%{buildroot}/usr/share/%s\necho %s > %%{buildroot}/usr/share/%s/version\n' "$1" "$2" "$1"
    printf '%%files\n/usr/share/%s/version\n' "$1"
  } > "$top/SPECS/$1.spec"
  rpmbuild --quiet -bb --define "_topdir $top" --define "_rpmdir $4" \
    --define '_build_name_fmt %%{NAME}-%%{VERSION}-%%{RELEASE}.%%{ARCH}.rpm' "$top/SPECS/$1.spec" >/dev/null 2>&1
}
mkdir -p "$WORK/old" "$WORK/repo/rpms"
mkrpm glimpse-hello 1.0 1 "$WORK/old" && mkrpm glimpse-hello 1.1 1 "$WORK/repo/rpms" &&
  mkrpm glimpse-same 1.0 1 "$WORK/repo/rpms" && mkrpm glimpse-epoch 2.0 1 "$WORK/old" 1 &&
  mkrpm glimpse-epoch 2.0 2 "$WORK/repo/rpms" 1 && cp "$WORK"/repo/rpms/glimpse-same-* "$WORK/old/" ||
  { echo "Bail out! rpmbuild failed"; exit 1; }
createrepo_c -q "$WORK/repo/rpms" || { echo "Bail out! createrepo_c failed"; exit 1; }
REPO=$WORK/repo
coproc SERVER { exec python3 "$(dirname "$0")/../http-server.py" "$REPO"; }
read -r PORT <&"${SERVER[0]}"
[ -n "$PORT" ] || { echo "Bail out! the HTTP server did not start"; exit 1; }
URL=http://127.0.0.1:$PORT

# --- the dnf sandbox: over the host, its system layer a Fedora-like tree
id=upd-dnf-$$
gl_make_sandbox "$id" host dnf
tree=$GL_STORE/$id/system/1/tree
gl_dnf_tree "$tree" glimpse-test "$URL/rpms" &&
  rpm --root "$tree" --dbpath /var/lib/rpm -i --justdb --nodeps --noscripts --force-debian "$WORK"/old/*.rpm 2>/dev/null
check_sh "the sandbox's rpm database has the old packages" \
  '[ "$(rpm --root "$tree" --dbpath /var/lib/rpm -qa | sort | tr "\n" " ")" = "glimpse-epoch-2.0-1.noarch glimpse-hello-1.0-1.noarch glimpse-same-1.0-1.noarch " ]'
sums_before=$(gl_tree_sums "$tree")

out=$(check_as_user dnf "$id" 2>"$WORK/err"); rc=$?
check_sh "dnf: the check as an ordinary user succeeds" '[ $rc -eq 0 ]' || sed 's/^/#   /' "$WORK/err"
check_sh "dnf: exactly glimpse-epoch and glimpse-hello, with installed and candidate versions and the repository" \
  '[ "$out" = "glimpse-epoch noarch 1:2.0-1 1:2.0-2 glimpse-test
glimpse-hello noarch 1.0-1 1.1-1 glimpse-test" ]' || printf '%s\n' "$out" | sed 's/^/#   /'
check_sh "dnf: the sandbox's system layer is not written by the check" '[ "$(gl_tree_sums "$tree")" = "$sums_before" ]'
# the oracle: dnf's own machine-readable answer in the same view (its
# repoquery, with a cache of its own), beside the check's parsed text
oracle=$(as_user "$GL_USER_A" "$LAUNCH" "$id" -- dnf -q repoquery --upgrades --latest-limit=1 \
  --setopt=cachedir=/var/tmp/glimpse-test-oracle --qf '%{name} %{evr}' 2>/dev/null | sort)
mine=$(awk '{ print $1, $4 }' <<< "$out")
check_sh "dnf: the same list as dnf repoquery --upgrades in the sandbox (the oracle)" '[ -n "$oracle" ] && [ "$oracle" = "$mine" ]' ||
  printf 'oracle: %s\nmine: %s\n' "$oracle" "$mine" | sed 's/^/#   /'
check_sh "dnf: its cache is in the user's own layer of the sandbox" \
  '[ -d "$GL_STORE/$id/users/$UID_A" ] && find "$GL_STORE/$id/users/$UID_A" -path "*glimpse-updates-dnf*" -name repomd.xml | grep_quiet .'

# nothing to do once the sandbox has the new versions
rpm --root "$tree" --dbpath /var/lib/rpm -U --justdb --nodeps --noscripts --force-debian \
  "$WORK"/repo/rpms/glimpse-hello-*.rpm "$WORK"/repo/rpms/glimpse-epoch-*.rpm 2>/dev/null
out=$(check_as_user dnf "$id" 2>"$WORK/err"); rc=$?
check_sh "dnf: up to date (exit 0 of dnf): an empty list" '[ $rc -eq 0 ] && [ -z "$out" ]' || cat "$WORK/err"

# a repository that does not answer: the check fails, saying so, no list
printf '[glimpse-test]\nname=Glimpse test\nbaseurl=http://127.0.0.1:1/rpms\ngpgcheck=0\nretries=1\ntimeout=5\n' \
  > "$tree/etc/yum.repos.d/glimpse-test.repo"
out=$(check_as_user dnf "$id" 2>"$WORK/err"); rc=$?
check_sh "dnf: a dead repository fails the check, naming dnf and the sandbox, and lists nothing" \
  '[ $rc -eq 1 ] && [ -z "$out" ] && grep -q "check-update.*$id.*failed" "$WORK/err"' || sed 's/^/#   /' "$WORK/err"

# --- pacman and apk sandboxes without their tool
id_p=upd-pac-$$
gl_make_sandbox "$id_p" host pacman
ptree=$GL_STORE/$id_p/system/1/tree
mkdir -p "$ptree/var/lib/pacman/local/glimpse-hello-1.0-1" "$ptree/etc"
printf 'NAME="Arch Linux"\nID=arch\n' > "$ptree/etc/os-release"
printf '%%NAME%%\nglimpse-hello\n\n%%VERSION%%\n1.0-1\n\n' > "$ptree/var/lib/pacman/local/glimpse-hello-1.0-1/desc"
echo 9 > "$ptree/var/lib/pacman/local/ALPM_DB_VERSION"
if as_user "$GL_USER_A" "$LAUNCH" "$id_p" -- sh -c 'command -v checkupdates' >/dev/null 2>&1; then
  skip_case "pacman: a sandbox without checkupdates" "the host has checkupdates"
else
  out=$(check_as_user pacman "$id_p" 2>&1); rc=$?
  check_sh "pacman: checkupdates missing in the sandbox is reported as such, with the package to install" \
    '[ $rc -eq 1 ] && grep -q "error-code: no-tool" <<< "$out" && grep -q "checkupdates is not installed in sandbox “$id_p”" <<< "$out" && grep -q "glimpse install $id_p pacman-contrib" <<< "$out"' ||
    printf '%s\n' "$out" | sed 's/^/#   /'
fi
id_a=upd-apk-$$
gl_make_sandbox "$id_a" rootfs apk   # busybox only: no apk
out=$(check_as_user apk "$id_a" 2>&1); rc=$?
check_sh "apk: apk missing in the sandbox is reported as such" \
  '[ $rc -eq 1 ] && grep -q "error-code: no-tool" <<< "$out" && grep -q "apk is not installed in sandbox “$id_a”" <<< "$out"' ||
  printf '%s\n' "$out" | sed 's/^/#   /'

finish
