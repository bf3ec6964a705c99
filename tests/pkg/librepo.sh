# Helpers for the package-operation tests (sourced after libtest.sh):
# a signed apt repository built here with dpkg-deb, apt-ftparchive and gpg,
# served on 127.0.0.1 by tests/http-server.py.
# SPDX-License-Identifier: LGPL-2.1-or-later

for tool in dpkg-deb apt-ftparchive gpg python3; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (.ci/install-deps installs it)"
done

REPO=$WORK/served
mkdir -p "$REPO" "$WORK/debs" "$WORK/gnupg"
chmod 700 "$WORK/gnupg"
export GNUPGHOME=$WORK/gnupg

# gl_key NAME [ALGORITHM]: a signing key (ed25519 unless told); its public
# half in $WORK/NAME.asc
gl_key () {
  gpg --batch --quiet --pinentry-mode loopback --passphrase '' \
    --quick-gen-key "Glimpse test $1 <$1@glimpse.invalid>" "${2:-ed25519}" sign never 2>/dev/null
  gpg --batch --armor --export "$1@glimpse.invalid" > "$WORK/$1.asc"
}

# gl_deb NAME VERSION [postinst-file] [extra dir to copy into the package]:
# a package with /usr/bin/NAME printing "NAME VERSION" and a desktop entry.
gl_deb () {
  local name=$1 version=$2 postinst=${3:-} extra=${4:-}
  local d=$WORK/build-$name-$version
  rm -rf "$d"
  mkdir -p "$d/DEBIAN" "$d/usr/bin" "$d/usr/share/applications"
  printf 'Package: %s\nVersion: %s\nArchitecture: all\nMaintainer: Glimpse tests <t@glimpse.invalid>\nDescription: glimpse test package\n' \
    "$name" "$version" > "$d/DEBIAN/control"
  printf '#!/bin/sh\necho "%s %s"\n' "$name" "$version" > "$d/usr/bin/$name"
  chmod 755 "$d/usr/bin/$name"
  printf '[Desktop Entry]\nType=Application\nName=%s\nExec=%s\nIcon=utilities-terminal\n' \
    "$name" "$name" > "$d/usr/share/applications/org.glimpse.$name.desktop"
  if [ -n "$postinst" ]; then
    install -m 755 "$postinst" "$d/DEBIAN/postinst"
  fi
  if [ -n "$extra" ]; then
    cp -a "$extra/." "$d/"
  fi
  dpkg-deb --root-owner-group -Zgzip --build "$d" "$WORK/debs/${name}_${version}_all.deb" >/dev/null
}

# gl_publish DIR KEY DEB...: a flat repository ("deb URL ./") in DIR signed by KEY.
# Never in the second of the one before: apt takes an index file whose size
# and time (the server's Last-Modified, to the second) are those it has
# for unchanged, and keeps its binary cache of the old one, so a version
# published in the same second as the last, its index of the same size,
# would go unseen (an update then upgraded nothing)
gl_publish () {
  local dir=$1 key=$2 stamp=$WORK/.published; shift 2
  while [ "$(date +%s)" -le "$(cat "$stamp" 2>/dev/null || echo 0)" ]; do sleep 0.1; done
  rm -rf "$dir"; mkdir -p "$dir"
  cp "$@" "$dir/"
  (cd "$dir" && apt-ftparchive packages . > Packages 2>/dev/null && gzip -9kn Packages \
     && apt-ftparchive -o APT::FTPArchive::Release::Origin=glimpse-test release . > Release \
     && gpg --batch --yes --local-user "$key@glimpse.invalid" --clearsign -o InRelease Release \
     && gpg --batch --yes --local-user "$key@glimpse.invalid" -abs -o Release.gpg Release) || return
  date +%s > "$stamp"
}

gl_serve () {
  coproc SERVER { exec python3 "$(dirname "$0")/../http-server.py" "$REPO"; }
  read -r PORT <&"${SERVER[0]}"
  [ -n "$PORT" ] || { echo "Bail out! the HTTP server did not start"; exit 1; }
  URL=http://127.0.0.1:$PORT
}

# gl_tarball_base VERSION [MIB]: a busybox tree with /etc/glimpse-base
# saying VERSION (and with MIB, /usr/share/glimpse-only-VERSION of MIB MiB,
# a file of that base alone), served by gl_serve as base/rootfs.tar with
# its base/SHA256SUMS
gl_tarball_base () {
  local r=$WORK/tree-$1
  rm -rf "$r"
  mkdir -p "$r"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,tmp,var/tmp,home,root,run,media,mnt,usr/share}
  chmod 1777 "$r/tmp" "$r/var/tmp"
  cp /bin/busybox "$r/bin/busybox"
  chroot "$r" /bin/busybox --install -s
  getent passwd root "$GL_USER_A" "$GL_USER_B" > "$r/etc/passwd"
  getent group root "$GL_USER_A" "$GL_USER_B" > "$r/etc/group"
  echo "$1" > "$r/etc/glimpse-base"
  [ -z "${2:-}" ] || head -c $(($2 * 1048576)) /dev/urandom > "$r/usr/share/glimpse-only-$1"
  mkdir -p "$REPO/base"
  tar -C "$r" -cf "$REPO/base/rootfs.tar" .
  gl_serve_base "$REPO/base/rootfs.tar"
}

# gl_serve_base FILE [SUM]: FILE served as base/rootfs.tar, with a
# base/SHA256SUMS that gives SUM for it (its own unless told)
gl_serve_base () {
  mkdir -p "$REPO/base"
  [ "$1" -ef "$REPO/base/rootfs.tar" ] || cp "$1" "$REPO/base/rootfs.tar"
  echo "${2:-$(sha256sum < "$1" | cut -d' ' -f1)}  rootfs.tar" > "$REPO/base/SHA256SUMS"
}

# gl_tarball_profile NAME TITLE [KEY=VALUE...] [[Hooks] KEY=VALUE...]:
# $WORK/profiles/NAME.profile, an apt profile whose base is the one
# gl_serve_base serves (after gl_serve), with the further keys of
# [Profile] given, and those after a "[Hooks]" argument in its [Hooks]
gl_tarball_profile () {
  local name=$1 title=$2 a group=profile; shift 2
  local -a profile=() hooks=()
  for a; do
    if [ "$a" = "[Hooks]" ]; then group=hooks
    elif [ $group = hooks ]; then hooks+=("$a")
    else profile+=("$a")
    fi
  done
  {
    printf '[Profile]\nName=%s\nFamily=apt\n' "$title"
    [ ${#profile[@]} = 0 ] || printf '%s\n' "${profile[@]}"
    cat <<EOF

[Base]
Type=tarball
Url=$URL/base/rootfs.tar
ChecksumUrl=$URL/base/SHA256SUMS

[Packages]
Refresh=apt-get update
Upgrade=apt-get -y dist-upgrade
Install=apt-get install -y --no-install-recommends
ListUpgradable=apt list --upgradable
EOF
    [ ${#hooks[@]} = 0 ] || printf '\n[Hooks]\n'
    [ ${#hooks[@]} = 0 ] || printf '%s\n' "${hooks[@]}"
  } > "$WORK/profiles/$name.profile"
}

# gl_host_sandbox ID: a `host` sandbox whose only repository is the one
# served here ($URL/repo, signed by the key "good", named "test")
gl_host_sandbox () {
  local r
  check "glimpse create host --name $1" "$GLIMPSE" create host --name "$1"
  for r in $("$GLIMPSE" repos "$1" | awk '!/\(added\)$/ { print $1 }'); do
    "$GLIMPSE" remove-repo "$1" "$r" >/dev/null 2>&1
  done
  check "add-repo (its index fetched through glimpse's proxy)" \
    "$GLIMPSE" add-repo "$1" "deb $URL/repo ./" --key "$WORK/good.asc" --name test
}

# gl_serve_host_sandbox ID: the packages gl_deb made, in a repository
# $REPO/repo signed by a new key "good" and served (gl_serve), and the
# `host` sandbox ID whose only repository it is (gl_host_sandbox)
gl_serve_host_sandbox () {
  gl_key good
  gl_publish "$REPO/repo" good "$WORK"/debs/*.deb
  gl_serve
  gl_host_sandbox "$1"
}

# The generation `current` of sandbox ID names ("none" without one)
gl_current () { cat "$GL_STORE/$1/system/current" 2>/dev/null || echo none; }
gl_tree () { echo "$GL_STORE/$1/system/$(gl_current "$1")/tree"; }

# gl_need_mirror: mmdebstrap and $mirror, the Debian mirror of the host's
# apt configuration as glimpse reads it (the only network the slow tests
# use), or a skip saying why
gl_need_mirror () {
  command -v mmdebstrap >/dev/null || skip "mmdebstrap is not installed (.ci/install-deps installs it)"
  mirror=$("$GLIMPSE" profiles --verbose debian-stable | sed -n 's/^ *Mirror: *//p')
  [ -n "$mirror" ] || skip "the host's apt configuration names no Debian mirror"
  curl -fsS -o /dev/null --max-time 20 "$mirror/dists/stable/Release" 2>"$WORK/curl.err" ||
    skip "the mirror $mirror cannot be reached ($(head -n1 "$WORK/curl.err"))"
}

# gl_busybox_tree DIR: a small root file system in DIR, busybox-static and
# its applets, with the directories a package namespace mounts over
gl_busybox_tree () {
  mkdir -p "$1"/{bin,etc,tmp,proc,dev,sys,run,root,home,usr/sbin}
  cp "$(command -v busybox)" "$1/bin/busybox"
  "$1/bin/busybox" --list | while read -r a; do [ "$a" = busybox ] || ln -s busybox "$1/bin/$a"; done
}
