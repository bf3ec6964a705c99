#!/bin/bash
# Slow: `glimpse create debian-stable` for real - mmdebstrap from the mirror
# in the host's own apt configuration, with stable-updates and the host's
# security archive (the only network this needs) - then an ordinary user
# runs commands in it through the setuid launcher, and `glimpse remove`
# leaves nothing.  Skipped, saying why, when mmdebstrap is not installed or
# the mirror cannot be reached.
: "${GLIMPSE:?set GLIMPSE to the built glimpse}"
source "$(dirname "$0")/launcher/libtest.sh"
gl_install_setuid

export GLIMPSE_SANDBOX_DIR=$GL_STORE GLIMPSE_LAUNCHER=$LAUNCH
export GLIMPSE_PROFILES_PATH=${GLIMPSE_BUNDLED_PROFILES:?}
export GLIMPSE_CACHE_DIR=$WORK/cache
GL_EXTRA_ENV="GLIMPSE_SANDBOX_DIR=$GL_STORE GLIMPSE_LAUNCHER=$LAUNCH GLIMPSE_PROFILES_PATH=$GLIMPSE_PROFILES_PATH"

soft_skip () { skip "$@"; }   # the one policy: a failure where all is required
# (create builds Debian trees only with mmdebstrap, as root of a user namespace)
command -v mmdebstrap >/dev/null ||
  soft_skip "mmdebstrap is not installed (apt install mmdebstrap uidmap)"
mirror=$("$GLIMPSE" profiles --verbose debian-stable | sed -n 's/^ *Mirror: *//p')
[ -n "$mirror" ] || soft_skip "the host's apt configuration names no Debian mirror"
curl -fsS -o /dev/null --max-time 20 "$mirror/dists/stable/Release" 2>"$WORK/curl.err" ||
  soft_skip "the mirror $mirror cannot be reached ($(head -n1 "$WORK/curl.err"))"

id=boot-$$
GL_SANDBOXES+=("$id")
start=$(date +%s)
"$GLIMPSE" create debian-stable --name "$id" > "$WORK/create.log" 2>&1; rc=$?
echo "# create took $(( $(date +%s) - start )) s"
check_sh "glimpse create debian-stable builds a tree from $mirror" '[ $rc -eq 0 ]'
[ $rc -eq 0 ] || tail -n 20 "$WORK/create.log" | sed 's/^/# /'
root=$GL_STORE/$id/rootfs
check "the tree is Debian, with apt" [ -s "$root/etc/debian_version" -a -x "$root/usr/bin/apt-get" ]
check "the profile's post-create hook ran (policy-rc.d)" [ -x "$root/usr/sbin/policy-rc.d" ]
check_sh "sandbox.conf records the profile and a rootfs base" \
  'grep -qx "Profile=debian-stable" "$GL_STORE/$id/sandbox.conf" && grep -qx "Base=rootfs" "$GL_STORE/$id/sandbox.conf"'

# Debian's security updates: the host's own security archive (from its apt
# configuration) is a source of the tree, and the tree was built with it -
# no package the tree shares with stable-security is older than there.
security=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 2>/dev/null | awk '$2 ~ /-security$/ { sub("/$", "", $1); print $1; exit }')
if [ -z "$security" ]; then
  fail "the host's apt configuration names no security archive: a debian-stable sandbox gets no security updates here"
else
  check_sh "the tree's sources name stable, stable-updates and the host's $security stable-security" \
    'grep -qx "deb $mirror stable main" "$root/etc/apt/sources.list" && grep -qx "deb $mirror stable-updates main" "$root/etc/apt/sources.list" && grep -qx "deb $security stable-security main" "$root/etc/apt/sources.list"'
  arch=$(dpkg --print-architecture)
  if curl -fsS --max-time 60 "$security/dists/stable-security/main/binary-$arch/Packages.xz" 2>"$WORK/curl.err" | xz -d > "$WORK/security.Packages"; then
    awk '/^Package:/ { p = $2 } /^Version:/ { print p, $2 }' "$WORK/security.Packages" | sort > "$WORK/security.list"
    awk '/^Package:/ { p = $2 } /^Status:/ { s = $4 } /^Version:/ { if (s == "installed") print p, $2 }' "$root/var/lib/dpkg/status" | sort > "$WORK/tree.list"
    shared=0 behind=
    while read -r p v; do
      newest=
      while read -r _ sv; do
        if [ -z "$newest" ] || dpkg --compare-versions "$sv" gt "$newest"; then newest=$sv; fi
      done < <(awk -v p="$p" '$1 == p' "$WORK/security.list")
      [ -n "$newest" ] || continue
      shared=$((shared + 1))
      dpkg --compare-versions "$v" ge "$newest" || behind="$behind $p=$v<$newest"
    done < "$WORK/tree.list"
    echo "# the tree has $shared of stable-security's packages${behind:+; older than there:$behind}"
    check_sh "the tree was built with stable-security: none of its $shared packages from there is older" \
      '[ -z "$behind" ]'
  else
    fail "stable-security's index at $security cannot be fetched ($(head -n1 "$WORK/curl.err"))"
  fi
fi

out=$(as_user "$GL_USER_A" "$GLIMPSE" run "$id" -- sh -c '. /etc/os-release; echo "$ID"; id -u; apt-get --version | head -n1; echo inside > "$HOME/boot-test"; cat "$HOME/boot-test"' 2>&1); rc=$?
printf '%s\n' "$out" | sed 's/^/# /'
check_sh "an ordinary user runs in it, as themselves" \
  '[ $rc -eq 0 ] && [ "$(sed -n 1p <<< "$out")" = debian ] && [ "$(sed -n 2p <<< "$out")" = "$UID_A" ]'
check_sh "apt runs inside" 'grep -q "^apt " <<< "$out"'
check "the write to home stayed in the layer" [ ! -e "$HOME_A/boot-test" ]
check_sh "glimpse changes lists it" 'as_user "$GL_USER_A" "$GLIMPSE" changes "$id" | grep_quiet -x "added  *$HOME_A/boot-test"'

check "glimpse remove" "$GLIMPSE" remove "$id"
check "nothing is left in the store" [ ! -e "$GL_STORE/$id" ]
check_sh "no half-built tree is left beside it" '[ -z "$(ls -A "$GL_STORE" | grep "^\.creating-")" ]'

finish
