#!/bin/bash
# Integration: package operations on a dnf sandbox, end to end, with real
# rpm packages built here (rpmbuild), signed (rpmsign), in a repository
# made by createrepo_c whose repomd.xml is signed too (repo_gpgcheck),
# served on 127.0.0.1.  The sandbox runs on the host (whose dnf and rpm
# are Debian's) with a dnf system layer: an rpm database, a dnf.conf.
# add-repo with its key (refused: a wrong key, a dead address, gpgcheck=0,
# no key, an option glimpse does not take; nothing written) → repos →
# install (two stages: download with the network, install without) → the
# program runs inside through the setuid launcher, the host unchanged →
# remove-repo → uninstall.  Needs root.
# SPDX-License-Identifier: LGPL-2.1-or-later
source "$(dirname "$0")/libpkgtest.sh"
source "$(dirname "$0")/librepo.sh"
for tool in rpm rpmbuild rpmsign createrepo_c dnf gpg python3; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (apt-get install rpm createrepo-c dnf gpg)"
done
gl_pkg_env --launcher
id=dnf-$$
GL_SANDBOXES+=("$id")
mkdir -p "$WORK/rpms"

# --- keys (RSA: what rpm and librepo verify everywhere)
gl_key good rsa2048
gl_key wrong rsa2048

# --- a package: /usr/bin/glimpse-hello printing "glimpse-hello VERSION"
mkrpm () { # NAME VERSION
  local top; top=$(mktemp -d "$WORK/rpmbuild.XXXXXX")
  mkdir -p "$top/SPECS"
  {
    echo "Name: $1"; echo "Version: $2"; echo "Release: 1"
    echo "Summary: Glimpse test package $1"; echo "License: MIT"; echo "BuildArch: noarch"
    # (the sandbox's rpm database has no package that provides /bin/sh)
    echo "AutoReqProv: no"
    printf '%%description\nA package of the Glimpse tests.\n'
    printf '%%install\nmkdir -p %%{buildroot}/usr/bin %%{buildroot}/usr/share/applications\n'
    printf 'printf "#!/bin/sh\\necho %s %s\\n" > %%{buildroot}/usr/bin/%s\nchmod 755 %%{buildroot}/usr/bin/%s\n' "$1" "$2" "$1" "$1"
    printf 'printf "[Desktop Entry]\\nType=Application\\nName=%s\\nExec=%s\\n" > %%{buildroot}/usr/share/applications/org.glimpse.%s.desktop\n' "$1" "$1" "$1"
    printf '%%files\n/usr/bin/%s\n/usr/share/applications/org.glimpse.%s.desktop\n' "$1" "$1"
  } > "$top/SPECS/$1.spec"
  rpmbuild --quiet -bb --define "_topdir $top" --define "_rpmdir $WORK/rpms" \
    --define '_build_name_fmt %%{NAME}-%%{VERSION}-%%{RELEASE}.%%{ARCH}.rpm' "$top/SPECS/$1.spec" >/dev/null 2>&1
}
# publish DIR KEY: the packages signed by KEY, the repository's metadata too
publish () {
  rm -rf "$1"; mkdir -p "$1"
  cp "$WORK"/rpms/*.rpm "$1/"
  rpmsign --addsign --define "__gpg $(command -v gpg)" --define "_gpg_name $2@glimpse.invalid" \
    --define "_gpg_path $GNUPGHOME" "$1"/*.rpm >/dev/null 2>&1 &&
    createrepo_c -q "$1" &&
    gpg --batch --yes --local-user "$2@glimpse.invalid" --armor --detach-sign -o "$1/repodata/repomd.xml.asc" "$1/repodata/repomd.xml"
}
mkrpm glimpse-hello 1.0 || { echo "Bail out! rpmbuild failed"; exit 1; }
publish "$REPO/repo" good || { echo "Bail out! signing or createrepo_c failed"; exit 1; }
publish "$REPO/other" wrong || { echo "Bail out! signing or createrepo_c failed"; exit 1; }
gl_serve

# --- the sandbox: on the host, its base apt repositories taken out (its
# first generation), then a dnf system layer: an rpm database in
# /var/lib/rpm (Debian's rpm keeps one in ~/.rpmdb), a dnf.conf, an
# os-release; owned by the range like everything a package operation writes
check "glimpse create host --name $id" "$GLIMPSE" create host --name "$id"
for r in $("$GLIMPSE" repos "$id" | awk '!/\(added\)$/ { print $1 }'); do
  "$GLIMPSE" remove-repo "$id" "$r" >/dev/null 2>&1
done
range=$(awk -F: '$1=="glimpse" {print $2}' /etc/subuid)
tree=$GL_STORE/$id/system/$(cat "$GL_STORE/$id/system/current" 2>/dev/null)/tree
[ -n "$range" ] && [ -d "$tree" ] || { echo "Bail out! no system generation after remove-repo"; exit 1; }
gl_sandbox_conf_set "$GL_STORE/$id/sandbox.conf" Family dnf
gl_sandbox_conf_set "$GL_STORE/$id/sandbox.conf" Profile fedora
mkdir -p "$tree/etc/rpm" "$tree/etc/yum.repos.d" "$tree/etc/dnf" "$tree/var/lib/rpm" "$tree/etc/pki"
rm -f "$tree/etc/os-release"
printf 'NAME="Fedora Linux"\nID=fedora\nVERSION_ID=40\n' > "$tree/etc/os-release"
echo '%_dbpath /var/lib/rpm' > "$tree/etc/rpm/macros.dbpath"
printf '[main]\ngpgcheck=1\nskip_if_unavailable=0\nreleasever=40\n' > "$tree/etc/dnf/dnf.conf"
rpm --root "$tree" --dbpath /var/lib/rpm --initdb
find "$tree" -uid 0 -exec chown -h "$range:$range" {} +
host_rpm=$(rpm -qa 2>/dev/null | sort | sha256sum)
host_sums=$(gl_tree_sums /etc/yum.repos.d /etc/pki /usr/bin/glimpse-hello)
gen=$(cat "$GL_STORE/$id/system/current")

repo_file () { # NAME BASEURL [extra lines]
  printf '[%s]\nname=Glimpse test\nbaseurl=%s\nrepo_gpgcheck=1\n%s' "$1" "$2" "${3:-}" > "$WORK/$1.repo"
}

# --- refused, nothing written
repo_file bad "$URL/other"
out=$("$GLIMPSE" add-repo "$id" "$WORK/bad.repo" --key "$WORK/good.asc" 2>&1); rc=$?
check_sh "add-repo of a repository whose repomd.xml is signed by another key is refused (rc $rc)" \
  '[ $rc -ne 0 ] && grep -q "$URL/other" <<<"$out"'
[ $rc -ne 0 ] || printf '%s\n' "$out" | tail -n 5 | sed 's/^/# /'
repo_file bad http://127.0.0.1:1/repo
out=$("$GLIMPSE" add-repo "$id" "$WORK/bad.repo" --key "$WORK/good.asc" 2>&1); rc=$?
check_sh "add-repo of an address that does not answer is refused, naming it" \
  '[ $rc -ne 0 ] && grep -q "127.0.0.1:1" <<<"$out"'
printf '[bad]\nbaseurl=%s/repo\ngpgcheck=0\n' "$URL" > "$WORK/bad.repo"
out=$("$GLIMPSE" add-repo "$id" "$WORK/bad.repo" --key "$WORK/good.asc" 2>&1); rc=$?
check_sh "gpgcheck=0 is refused (exit 6)" '[ $rc -eq 6 ] && grep -q "gpgcheck=0" <<<"$out"'
printf '[bad]\nbaseurl=%s/repo\nsslverify=0\n' "$URL" > "$WORK/bad.repo"
out=$("$GLIMPSE" add-repo "$id" "$WORK/bad.repo" --key "$WORK/good.asc" 2>&1); rc=$?
check_sh "an option glimpse does not take (sslverify) is refused (exit 6)" '[ $rc -eq 6 ] && grep -q "sslverify" <<<"$out"'
printf '[bad]\nbaseurl=%s/repo\n' "$URL" > "$WORK/bad.repo"
out=$("$GLIMPSE" add-repo "$id" "$WORK/bad.repo" 2>&1); rc=$?
check_sh "a repository without a key, and no --key: refused (exit 6), saying to give one" \
  '[ $rc -eq 6 ] && grep -q -- "--key" <<<"$out"'
printf '[bad]\nbaseurl=ftp://x/\n' > "$WORK/bad.repo"
out=$("$GLIMPSE" add-repo "$id" "$WORK/bad.repo" --key "$WORK/good.asc" 2>&1); rc=$?
check_sh "a non-http address is refused (exit 6)" '[ $rc -eq 6 ] && grep -q "http" <<<"$out"'
check_sh "after every refusal nothing was written (generation $gen, no scratch left)" \
  '[ "$(cat "$GL_STORE/$id/system/current")" = "$gen" ] && ! ls -A "$GL_STORE/$id/system" | grep_quiet "^\.op-" \
   && [ ! -e "$tree/etc/yum.repos.d/glimpse-bad.repo" ] && ! "$GLIMPSE" repos "$id" | grep_quiet "^bad "'

# --- add-repo, repos
repo_file test "$URL/repo"
out=$("$GLIMPSE" add-repo "$id" "$WORK/test.repo" --key "$WORK/good.asc" 2>&1); rc=$?
check_sh "add-repo of a .repo with its key (repomd.xml verified)" '[ $rc -eq 0 ]'
[ $rc -eq 0 ] || printf '%s\n' "$out" | tail -n 8 | sed 's/^/# /'
tree=$GL_STORE/$id/system/$(cat "$GL_STORE/$id/system/current")/tree
repo=$tree/etc/yum.repos.d/glimpse-test.repo
check_sh "written as glimpse-test.repo: gpgcheck=1 and gpgkey= its own key under /etc/pki/rpm-gpg" \
  'grep -qx "\[test\]" "$repo" && grep -qx "gpgcheck=1" "$repo" && grep -qx "repo_gpgcheck=1" "$repo" \
   && grep -qx "gpgkey=file:///etc/pki/rpm-gpg/glimpse-test.asc" "$repo" \
   && cmp -s "$tree/etc/pki/rpm-gpg/glimpse-test.asc" "$WORK/good.asc"'
check_sh "the key is not imported into the rpm database" \
  '! rpm --root "$tree" --dbpath /var/lib/rpm -q gpg-pubkey >/dev/null 2>&1'
repos=$("$GLIMPSE" repos "$id" 2>&1)
check_sh "repos lists it as added, with its address" 'grep -q "^test  *$URL/repo  (added)$" <<<"$repos"'
[ $? -eq 0 ] || printf '%s\n' "$repos" | sed 's/^/# repos: /'

# --- install: the program runs inside, the host does not have it
out=$("$GLIMPSE" install "$id" glimpse-hello 2>&1); rc=$?
check_sh "install glimpse-hello" '[ $rc -eq 0 ]'
[ $rc -eq 0 ] || printf '%s\n' "$out" | tail -n 15 | sed 's/^/# /'
tree=$GL_STORE/$id/system/$(cat "$GL_STORE/$id/system/current")/tree
check_sh "its files are in the new generation, owned by the reserved range" \
  '[ -x "$tree/usr/bin/glimpse-hello" ] && [ "$(stat -c %u "$tree/usr/bin/glimpse-hello")" = "$range" ]'
check_sh "the sandbox's rpm database has it, and the signing key dnf imported for it" \
  'rpm --root "$tree" --dbpath /var/lib/rpm -q glimpse-hello >/dev/null && rpm --root "$tree" --dbpath /var/lib/rpm -q gpg-pubkey >/dev/null'
got=$(as_user "$GL_USER_A" "$GLIMPSE" run "$id" -- glimpse-hello 2>&1)
check_sh "the program runs inside through the launcher (got: $got)" '[ "$got" = "glimpse-hello 1.0" ]'
check_sh "the host's rpm database and files are unchanged" \
  '[ "$(rpm -qa 2>/dev/null | sort | sha256sum)" = "$host_rpm" ] && [ "$(gl_tree_sums /etc/yum.repos.d /etc/pki /usr/bin/glimpse-hello)" = "$host_sums" ]'
out=$("$GLIMPSE" install "$id" no-such-package 2>&1); rc=$?
check_sh "installing an unknown package fails and changes nothing" \
  '[ $rc -eq 1 ] && [ "$GL_STORE/$id/system/$(cat "$GL_STORE/$id/system/current")/tree" = "$tree" ]'

# --- remove-repo, uninstall
check "remove-repo test" "$GLIMPSE" remove-repo "$id" test
tree=$GL_STORE/$id/system/$(cat "$GL_STORE/$id/system/current")/tree
check_sh "its .repo and key are gone" \
  '[ ! -e "$tree/etc/yum.repos.d/glimpse-test.repo" ] && [ ! -e "$tree/etc/pki/rpm-gpg/glimpse-test.asc" ] \
   && ! "$GLIMPSE" repos "$id" | grep_quiet "^test "'
out=$("$GLIMPSE" remove-repo "$id" nosuch 2>&1); rc=$?
check_sh "remove-repo of an unknown name: exit 3" '[ $rc -eq 3 ]'
# a glimpse-NAME.repo and key glimpse did not add (a package's, the
# base's): remove-repo takes the repository, never the key
printf '[vendor]\nbaseurl=%s/repo\ngpgkey=file:///etc/pki/rpm-gpg/glimpse-vendor.asc\n' "$URL" \
  > "$tree/etc/yum.repos.d/glimpse-vendor.repo"
mkdir -p "$tree/etc/pki/rpm-gpg"
cp "$WORK/good.asc" "$tree/etc/pki/rpm-gpg/glimpse-vendor.asc"
chown -h "$range:$range" "$tree/etc/yum.repos.d/glimpse-vendor.repo" "$tree/etc/pki/rpm-gpg" \
  "$tree/etc/pki/rpm-gpg/glimpse-vendor.asc"
check "remove-repo vendor (a glimpse-vendor.repo glimpse did not add)" "$GLIMPSE" remove-repo "$id" vendor
tree=$GL_STORE/$id/system/$(cat "$GL_STORE/$id/system/current")/tree
check_sh "its .repo is gone, the key it shipped stays" \
  '[ ! -e "$tree/etc/yum.repos.d/glimpse-vendor.repo" ] && cmp -s "$tree/etc/pki/rpm-gpg/glimpse-vendor.asc" "$WORK/good.asc"'
out=$("$GLIMPSE" uninstall "$id" glimpse-hello 2>&1); rc=$?
check_sh "uninstall glimpse-hello (offline)" '[ $rc -eq 0 ]'
[ $rc -eq 0 ] || printf '%s\n' "$out" | tail -n 8 | sed 's/^/# /'
got=$(as_user "$GL_USER_A" "$GLIMPSE" run "$id" -- sh -c 'command -v glimpse-hello || echo gone' 2>&1)
check_sh "… and it is gone from what apps see (got: $got)" '[ "$got" = gone ]'

check "remove" "$GLIMPSE" remove "$id" --force
finish
