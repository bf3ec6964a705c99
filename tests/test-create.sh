#!/bin/bash
# Integration: glimpse create/list/info/remove on a real store, with a real
# HTTP server on 127.0.0.1 serving a rootfs tarball the test builds from
# busybox-static.  Needs root (creating sandboxes is an admin operation).
# TAP output.
set -uo pipefail

GLIMPSE=${GLIMPSE:?set GLIMPSE to the built glimpse}
SRCDIR=${G_TEST_SRCDIR:?}
n=0; failed=0
ok()   { n=$((n+1)); echo "ok $n - $*"; }
nok()  { n=$((n+1)); failed=$((failed+1)); echo "not ok $n - $*"; }
check(){ local what=$1; shift; if "$@"; then ok "$what"; else nok "$what"; fi; }
GL_TAP=1 TEST_NAME=create
. "$(dirname "$0")/lib/skip.sh"
skip_all() { gl_skip_test "$@"; }

[ "$(id -u)" -eq 0 ] || skip_all "glimpse create needs root; run the suite with sudo"
command -v busybox >/dev/null || skip_all "busybox-static is not installed (apt install busybox-static)"
command -v python3 >/dev/null || skip_all "python3 is needed for the test HTTP server"

work=$(mktemp -d /var/tmp/glimpse-create-test.XXXXXX)
chmod 0755 "$work"
server_pid=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
  [ -d "$work/gnupg" ] && GNUPGHOME=$work/gnupg gpgconf --kill gpg-agent 2>/dev/null
  mountpoint -q "$work/small" && umount "$work/small"
  rm -rf "$work"
}
trap cleanup EXIT

export GLIMPSE_SANDBOX_DIR=$work/store GLIMPSE_CACHE_DIR=$work/cache
export GLIMPSE_PROFILES_PATH=$work/profiles:${GLIMPSE_BUNDLED_PROFILES:?}
mkdir -p "$work/profiles" "$work/served"

# A real root file system: busybox and its applets.
tree=$work/tree
mkdir -p "$tree/bin" "$tree/etc" "$tree/tmp" "$tree/home" "$tree/proc" "$tree/dev"
cp "$(command -v busybox)" "$tree/bin/busybox"
"$tree/bin/busybox" --list | while read -r a; do [ "$a" = busybox ] || ln -s busybox "$tree/bin/$a"; done
echo "ID=glimpse-test" > "$tree/etc/os-release"
# an image's setuid-root and group-writable files (a hostile or old image)
printf '#!/bin/sh\n' > "$tree/bin/su-like"; chmod 4755 "$tree/bin/su-like"
printf 'x\n' > "$tree/etc/shared"; chmod 0666 "$tree/etc/shared"
# and a device node: in the store it would open the host's disk for anyone
mkdir -p "$tree/dev"; mknod -m 0666 "$tree/dev/hostile-sda" b 8 0
tar -C "$tree" -czf "$work/served/rootfs.tar.gz" .
# big enough that a cut transfer is visibly partial
head -c 3000000 /dev/urandom > "$tree/padding"
tar -C "$tree" -czf "$work/served/big.tar.gz" .
(cd "$work/served" && sha256sum rootfs.tar.gz big.tar.gz > SHA256SUMS)

coproc SERVER { exec python3 "$SRCDIR/http-server.py" "$work/served"; }
server_pid=$SERVER_PID
read -r port <&"${SERVER[0]}"
[ -n "$port" ] || { echo "Bail out! the HTTP server did not start"; exit 1; }
base=http://127.0.0.1:$port

profile() { # name url [extra base keys…]
  local name=$1 url=$2; shift 2
  {
    printf '[Profile]\nName=Test %s\nFamily=apk\n\n[Base]\nType=tarball\nUrl=%s\n' "$name" "$url"
    for kv in "$@"; do printf '%s\n' "$kv"; done
    printf '\n[Packages]\nRefresh=true\nUpgrade=true\nInstall=true\nListUpgradable=true\n'
  } > "$work/profiles/$name.profile"
}
requests() { # path -> number of GET requests seen; fails if the server does not answer
  local out
  out=$(curl -fsS "$base/__stats?path=$1") || { echo "stats-unavailable"; return 1; }
  grep -c '^GET' <<<"$out"
}
store_entries() { ls -A "$GLIMPSE_SANDBOX_DIR" 2>/dev/null | tr '\n' ' '; }

echo "1..66"

# --- host, twice
id1=$("$GLIMPSE" create host 2>/dev/null); id2=$("$GLIMPSE" create host 2>/dev/null)
check "create host twice gives host and host-2" [ "$id1" = host -a "$id2" = host-2 ]
check "both instances exist with the layout" \
  test -f "$GLIMPSE_SANDBOX_DIR/host/sandbox.conf" -a -d "$GLIMPSE_SANDBOX_DIR/host-2/system" \
       -a ! -e "$GLIMPSE_SANDBOX_DIR/host-2/system/upper" -a ! -e "$GLIMPSE_SANDBOX_DIR/host-2/system/current" \
       -a -f "$GLIMPSE_SANDBOX_DIR/host-2/lock" -a ! -e "$GLIMPSE_SANDBOX_DIR/host/rootfs"
check "store entries are root-owned 0755, their lock 0600 (no user can hold it)" \
  [ "$(stat -c %U:%a "$GLIMPSE_SANDBOX_DIR/host-2") $(stat -c %U:%a "$GLIMPSE_SANDBOX_DIR/host-2/lock")" = "root:755 root:600" ]
out=$("$GLIMPSE" list)
check "list shows both" grep -q '^host-2 *host ' <<<"$out"
out=$("$GLIMPSE" info host-2)
check "info shows the host base" grep -q 'Base: *the host' <<<"$out"
"$GLIMPSE" info nope >/dev/null 2>&1; rc=$?
check "info of an unknown id exits 3" [ $rc -eq 3 ]
"$GLIMPSE" create host --name '../x' >/dev/null 2>&1; rc=$?
check "an invalid --name is refused (exit 2) and creates nothing" [ $rc -eq 2 -a ! -e "$work/x" ]
"$GLIMPSE" create host --name host >/dev/null 2>"$work/err"; rc=$?
check "an existing --name is refused, saying so, and the sandbox is kept" \
  eval '[ $rc -ne 0 ] && grep -q "exists already" "$work/err" && [ -f "$GLIMPSE_SANDBOX_DIR/host/sandbox.conf" ]'
# display names (issue 11): the id for a sandbox of the host, --display-name, rename
conf_name() { sed -n 's/^Name=//p' "$GLIMPSE_SANDBOX_DIR/$1/sandbox.conf"; }
check "a sandbox of the host is named by its id" [ "$(conf_name host-2)" = host-2 ]
"$GLIMPSE" create host --name named --display-name "My host — test" >/dev/null 2>&1
check "create --display-name sets the name menus show" [ "$(conf_name named)" = "My host — test" ]
"$GLIMPSE" rename named "Other name" >/dev/null 2>&1; rc=$?
check "rename changes it" [ $rc -eq 0 -a "$(conf_name named)" = "Other name" ]
"$GLIMPSE" rename named "$(printf 'two\nlines')" >/dev/null 2>"$work/err"; rc=$?
check "rename refuses a line break, saying so, and keeps the name" \
  eval '[ $rc -ne 0 ] && grep -q "control character" "$work/err" && [ "$(conf_name named)" = "Other name" ]'

# --- tarball over HTTP, cached for the second instance
profile bb "$base/rootfs.tar.gz" "ChecksumUrl=$base/SHA256SUMS"
id=$("$GLIMPSE" create bb 2>"$work/err"); rc=$?
check "tarball profile over HTTP creates a sandbox" [ $rc -eq 0 -a "$id" = bb ]
check "the rootfs is unpacked, root-owned" \
  test -x "$GLIMPSE_SANDBOX_DIR/bb/rootfs/bin/busybox" -a -L "$GLIMPSE_SANDBOX_DIR/bb/rootfs/bin/sh"
check "no set-id bit nor group/other write survives in the store's tree" \
  eval '[ "$(stat -c %a "$GLIMPSE_SANDBOX_DIR/bb/rootfs/bin/su-like")" = 755 ] && [ "$(stat -c %a "$GLIMPSE_SANDBOX_DIR/bb/rootfs/etc/shared")" = 644 ]'
check "no device node of the image is kept in the store" \
  eval '[ -d "$GLIMPSE_SANDBOX_DIR/bb/rootfs/dev" ] && [ ! -e "$GLIMPSE_SANDBOX_DIR/bb/rootfs/dev/hostile-sda" ]'
check "the verified download is cached" eval test -f "$GLIMPSE_CACHE_DIR"/bb/*/rootfs.tar.gz
before=$(requests /rootfs.tar.gz)
id=$("$GLIMPSE" create bb 2>/dev/null)
after=$(requests /rootfs.tar.gz)
check "a second instance needs no new download ($before -> $after GETs)" [ "$id" = bb-2 -a "$before" -ge 1 -a "$before" = "$after" ]

# --- checksum mismatch leaves nothing
profile bad "$base/rootfs.tar.gz" "Checksum=sha256:$(printf '0%.0s' $(seq 64))"
snap=$(store_entries)
"$GLIMPSE" create bad >/dev/null 2>"$work/err"; rc=$?
check "a checksum mismatch fails" [ $rc -ne 0 ]
check "…and says so" grep -qi 'sha-256\|checksum' "$work/err"
check "…and leaves no sandbox, no temporary tree, no download" \
  [ "$(store_entries)" = "$snap" -a -z "$(ls -A "$GLIMPSE_CACHE_DIR/bad" 2>/dev/null)" ]

# --- an interrupted download resumes
profile cut "$base/big.tar.gz?cut=1000000" "ChecksumUrl=$base/SHA256SUMS"
"$GLIMPSE" create cut >/dev/null 2>"$work/err"; rc=$?
check "a cut transfer fails the create and keeps the partial download" \
  [ $rc -ne 0 -a -s "$(echo "$GLIMPSE_CACHE_DIR"/cut/*/big.tar.gz.part)" -a ! -e "$GLIMPSE_SANDBOX_DIR/cut" ]
id=$("$GLIMPSE" create cut 2>/dev/null); rc=$?
ranges=$(curl -s "$base/__stats?path=/big.tar.gz" | grep -c 'bytes=1000000-' || true)
check "the next create resumes with a Range request and succeeds" [ $rc -eq 0 -a "$id" = cut -a "$ranges" -ge 1 ]

# --- Ctrl-C during the download
profile stall "$base/big.tar.gz?stall=200000" "ChecksumUrl=$base/SHA256SUMS"
snap=$(store_entries)
"$GLIMPSE" create stall >/dev/null 2>"$work/err" &
pid=$!
for _ in $(seq 600); do [ -s "$(echo "$GLIMPSE_CACHE_DIR"/stall/*/big.tar.gz.part)" ] && break; sleep 0.05; done
kill -INT $pid; wait $pid; rc=$?
check "SIGINT stops create with status 130 and leaves no sandbox" [ $rc -eq 130 -a "$(store_entries)" = "$snap" ]

# --- --image, with its sum
cp "$work/served/rootfs.tar.gz" "$work/local.tar.gz"
sum=$(sha256sum "$work/local.tar.gz" | cut -d' ' -f1)
profile offline "http://127.0.0.1:1/unreachable.tar.gz" "ChecksumUrl=http://127.0.0.1:1/SHA256SUMS"
id=$("$GLIMPSE" create offline --image "$work/local.tar.gz" --sha256 "$sum" 2>/dev/null); rc=$?
check "--image with --sha256 creates without network" [ $rc -eq 0 -a "$id" = offline ]
"$GLIMPSE" create offline --image "$work/local.tar.gz" >/dev/null 2>"$work/err"; rc=$?
check "--image that cannot be verified offline is refused with advice" eval '[ $rc -ne 0 ] && grep -q -- --sha256 "$work/err"'
snap=$(store_entries)
wrong=$(printf 'f%.0s' $(seq 64))
"$GLIMPSE" create offline --name wrong-sum --image "$work/local.tar.gz" --sha256 "$wrong" >/dev/null 2>"$work/err"; rc=$?
check "--image with a well-formed but wrong --sha256 is refused and creates nothing" \
  eval '[ $rc -ne 0 ] && grep -q "does not match" "$work/err" && [ "$(store_entries)" = "$snap" ]'
"$GLIMPSE" create offline --name bad-sum --image "$work/local.tar.gz" --sha256 0000 >/dev/null 2>"$work/err"; rc=$?
check "a malformed --sha256 is a usage error (2) and creates nothing" \
  eval '[ $rc -eq 2 ] && grep -q "64 hexadecimal" "$work/err" && [ "$(store_entries)" = "$snap" ]'

# --- a full disk
mkdir -p "$work/small"
mount -t tmpfs -o size=600k tmpfs "$work/small"
GLIMPSE_SANDBOX_DIR=$work/small/store GLIMPSE_CACHE_DIR=$work/small/cache \
  "$GLIMPSE" create cut --name full >/dev/null 2>"$work/err"; rc=$?
check "a full disk fails clearly and leaves no sandbox" \
  eval '[ $rc -ne 0 -a -z "$(ls -A "$work/small/store" 2>/dev/null)" ] && grep -qi space "$work/err"'
umount "$work/small"

# --- not root
if id nobody >/dev/null 2>&1; then
  out=$(runuser -u nobody -- env GLIMPSE_SANDBOX_DIR="$GLIMPSE_SANDBOX_DIR" GLIMPSE_PROFILES_PATH="$GLIMPSE_PROFILES_PATH" \
        "$GLIMPSE" create host 2>&1); rc=$?
  check "create as an ordinary user says to use sudo (exit 4)" eval '[ $rc -eq 4 ] && grep -q sudo <<<"$out"'
else
  nok "no user nobody to run as"
fi

# --- a tree whose resolv.conf holds only comments (Arch's filesystem package)
# gets the host's resolver configuration, written in place, not through a link
mkdir -p "$work/archlike"
cp -a "$tree/." "$work/archlike/"
printf '# Resolver configuration file.\n# See resolv.conf(5) for details.\n' > "$work/archlike/etc/resolv.conf"
ln -s /etc/hostname "$work/archlike/etc/hosts-link"
tar -C "$work/archlike" -czf "$work/served/archlike.tar.gz" .
(cd "$work/served" && sha256sum archlike.tar.gz > SHA256SUMS-archlike)
profile archlike "$base/archlike.tar.gz" "ChecksumUrl=$base/SHA256SUMS-archlike"
id=$("$GLIMPSE" create archlike 2>"$work/err"); rc=$?
check "a comment-only resolv.conf is replaced by the host's resolver configuration" \
  eval '[ $rc -eq 0 -a -f "$GLIMPSE_SANDBOX_DIR/archlike/rootfs/etc/resolv.conf" ] && ! [ -L "$GLIMPSE_SANDBOX_DIR/archlike/rootfs/etc/resolv.conf" ] && cmp -s /etc/resolv.conf "$GLIMPSE_SANDBOX_DIR/archlike/rootfs/etc/resolv.conf"'

# --- OCI images: the layer's media type and the config's architecture are checked
oci() { # name architecture layer-media-type [shell code run in the layout before it is packed]
  local d=$work/oci-$1 l c m
  mkdir -p "$d/blobs/sha256"
  l=$(sha256sum < "$work/served/rootfs.tar.gz" | cut -c1-64)
  cp "$work/served/rootfs.tar.gz" "$d/blobs/sha256/$l"
  printf '{"architecture":"%s","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}' "$2" > "$d/c"
  c=$(sha256sum < "$d/c" | cut -c1-64); mv "$d/c" "$d/blobs/sha256/$c"
  printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":1},"layers":[{"mediaType":"%s","digest":"sha256:%s","size":1}]}' \
    "$c" "$3" "$l" > "$d/m"
  m=$(sha256sum < "$d/m" | cut -c1-64); mv "$d/m" "$d/blobs/sha256/$m"
  printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":1}]}' "$m" > "$d/index.json"
  echo '{"imageLayoutVersion":"1.0.0"}' > "$d/oci-layout"
  [ -z "${4:-}" ] || (cd "$d" && l=$l c=$c m=$m && eval "$4")
  tar -C "$d" -cf "$work/served/$1.tar" .
  (cd "$work/served" && sha256sum "$1.tar" > "SHA256SUMS-$1")
  profile "$1" "$base/$1.tar" "ChecksumUrl=$base/SHA256SUMS-$1" "Format=oci"
}
case $(uname -m) in x86_64) goarch=amd64 ;; aarch64) goarch=arm64 ;; *) goarch=$(uname -m) ;; esac
oci oci-good "$goarch" application/vnd.oci.image.layer.v1.tar+gzip
oci oci-arch mips64le application/vnd.oci.image.layer.v1.tar+gzip
oci oci-type "$goarch" application/vnd.oci.image.layer.v1.tar+foo
id=$("$GLIMPSE" create oci-good 2>"$work/err"); rc=$?
check "an OCI image for this machine with a tar+gzip layer is unpacked" \
  eval '[ $rc -eq 0 ] && [ -x "$GLIMPSE_SANDBOX_DIR/oci-good/rootfs/bin/busybox" ]'
"$GLIMPSE" create oci-arch >/dev/null 2>"$work/err"; rc=$?
check "an OCI image for another architecture is refused, saying so" \
  eval '[ $rc -ne 0 -a ! -e "$GLIMPSE_SANDBOX_DIR/oci-arch" ] && grep -q "is an image for mips64le" "$work/err"'
"$GLIMPSE" create oci-type >/dev/null 2>"$work/err"; rc=$?
check "an OCI layer of an unknown media type is refused, saying so" \
  eval '[ $rc -ne 0 -a ! -e "$GLIMPSE_SANDBOX_DIR/oci-type" ] && grep -q "media type .application/vnd.oci.image.layer.v1.tar+foo" "$work/err"'
# A hostile layout: root reads its index, manifest, config and layer without
# following a link (to a host file, here one that would make a good image),
# never from a FIFO (which would hang it) and never a huge file.
mkdir -p "$work/host-oci"
oci oci-link-index "$goarch" application/vnd.oci.image.layer.v1.tar+gzip \
  'cp index.json "$work/host-oci/index.json" && ln -sf "$work/host-oci/index.json" index.json'
oci oci-link-config "$goarch" application/vnd.oci.image.layer.v1.tar+gzip \
  'mv "blobs/sha256/$c" "$work/host-oci/$c" && ln -s "$work/host-oci/$c" "blobs/sha256/$c"'
oci oci-link-layer "$goarch" application/vnd.oci.image.layer.v1.tar+gzip \
  'ln -sf "$work/served/rootfs.tar.gz" "blobs/sha256/$l"'
oci oci-fifo "$goarch" application/vnd.oci.image.layer.v1.tar+gzip \
  'rm "blobs/sha256/$m" && mkfifo "blobs/sha256/$m"'
oci oci-fifo-layer "$goarch" application/vnd.oci.image.layer.v1.tar+gzip \
  'rm "blobs/sha256/$l" && mkfifo "blobs/sha256/$l"'
oci oci-huge "$goarch" application/vnd.oci.image.layer.v1.tar+gzip \
  '{ head -c 2000000 /dev/zero | tr "\\0" " "; cat index.json; } > i && mv i index.json'
for t in "oci-link-index:a link, which is not followed" "oci-link-config:image configuration" \
         "oci-link-layer:a link, which is not followed" "oci-fifo:not a regular file" \
         "oci-fifo-layer:not a regular file" "oci-huge:at most 1 MiB"; do
  timeout -s KILL 30 "$GLIMPSE" create "${t%%:*}" >/dev/null 2>"$work/err"; rc=$?
  check "an OCI layout's ${t%%:*} is refused (${t#*:})" \
    eval '[ $rc -ne 0 -a $rc -ne 137 -a ! -e "$GLIMPSE_SANDBOX_DIR/${t%%:*}" ] && grep -q "${t#*:}" "$work/err"'
done

# --- signatures: a key made here signs the checksum list or the image
export GNUPGHOME=$work/gnupg
mkdir -m 0700 "$GNUPGHOME"
gpg --batch --quiet --pinentry-mode loopback --passphrase '' \
  --quick-gen-key "Glimpse Test <good@glimpse.invalid>" ed25519 sign never </dev/null 2>/dev/null
gpg --batch --quiet --pinentry-mode loopback --passphrase '' \
  --quick-gen-key "Someone Else <other@glimpse.invalid>" ed25519 sign never </dev/null 2>/dev/null
good_fpr=$(gpg --with-colons --list-keys good@glimpse.invalid | awk -F: '/^fpr/ { print $10; exit }')
gpg --export good@glimpse.invalid > "$work/good.gpg"
gpg --armor --export good@glimpse.invalid other@glimpse.invalid > "$work/both.asc"
sign() { gpg --batch --yes --quiet --pinentry-mode loopback --passphrase '' --local-user "$1" --detach-sign --output "$3" "$2" </dev/null; }
mkdir -p "$work/served/signed" "$work/served/tampered" "$work/served/wrongkey"
for d in signed tampered wrongkey; do
  cp "$work/served/rootfs.tar.gz" "$work/served/$d/"
  (cd "$work/served/$d" && sha256sum rootfs.tar.gz > SHA256SUMS)
done
sign good@glimpse.invalid "$work/served/signed/SHA256SUMS" "$work/served/signed/SHA256SUMS.gpg"
sign good@glimpse.invalid "$work/served/tampered/SHA256SUMS" "$work/served/tampered/SHA256SUMS.gpg"
echo "$(printf '1%.0s' $(seq 64))  other.tar.gz" >> "$work/served/tampered/SHA256SUMS"
sign other@glimpse.invalid "$work/served/wrongkey/SHA256SUMS" "$work/served/wrongkey/SHA256SUMS.gpg"
sign good@glimpse.invalid "$work/served/signed/rootfs.tar.gz" "$work/served/signed/rootfs.tar.gz.sig"
signed_profile() { # name dir keyring [SignatureUrl]
  profile "$1" "$base/$2/rootfs.tar.gz" "ChecksumUrl=$base/$2/SHA256SUMS" "Signature=checksums" \
    "SignatureUrl=${4:-{checksum_url\}.gpg}" "SignedBy=$good_fpr" "Keyring=$3"
}
signed_profile sig-good signed "$work/good.gpg"
id=$("$GLIMPSE" create sig-good 2>"$work/err"); rc=$?
check "a checksum list signed by the profile's key is accepted" [ $rc -eq 0 -a "$id" = sig-good ]
signed_profile sig-bad tampered "$work/good.gpg"
"$GLIMPSE" create sig-bad >/dev/null 2>"$work/err"; rc=$?
check "a tampered checksum list is refused, naming the file" \
  eval '[ $rc -ne 0 -a ! -e "$GLIMPSE_SANDBOX_DIR/sig-bad" ] && grep -q "signature of $base/tampered/SHA256SUMS does not verify" "$work/err"'
signed_profile sig-missing signed "$work/good.gpg" "$base/signed/nonexistent.gpg"
"$GLIMPSE" create sig-missing >/dev/null 2>"$work/err"; rc=$?
check "a missing signature is refused" \
  eval '[ $rc -ne 0 -a ! -e "$GLIMPSE_SANDBOX_DIR/sig-missing" ] && grep -q "signature of $base/signed/SHA256SUMS" "$work/err"'
signed_profile sig-wrong wrongkey "$work/both.asc"
"$GLIMPSE" create sig-wrong >/dev/null 2>"$work/err"; rc=$?
check "a list signed by another key of the keyring is refused, naming the key" \
  eval '[ $rc -ne 0 -a ! -e "$GLIMPSE_SANDBOX_DIR/sig-wrong" ] && grep -q "not by the key the profile names (SignedBy=$good_fpr)" "$work/err"'
signed_profile sig-nokeyring signed "$work/no-such-keyring.gpg"
"$GLIMPSE" create sig-nokeyring >/dev/null 2>"$work/err"; rc=$?
check "no keyring installed: refused, naming the keyring tried" \
  eval '[ $rc -ne 0 ] && grep -q "none of its keyrings exists ($work/no-such-keyring.gpg)" "$work/err"'
check "…saying where to put one holding which key, or to pass it with --keyring" \
  eval 'grep -q "Put a keyring holding the key $good_fpr at $work/no-such-keyring.gpg .*“sudo glimpse create sig-nokeyring --keyring FILE”" "$work/err"'
id=$("$GLIMPSE" create sig-nokeyring --keyring "$work/good.gpg" 2>"$work/err"); rc=$?
check "create --keyring FILE checks the signature against that keyring instead" [ $rc -eq 0 -a "$id" = sig-nokeyring ]
# the bundled ubuntu-lts on a host without Ubuntu's keyring (Debian 12 has
# no ubuntu-keyring package): the advice comes before any download
if [ -e /usr/share/keyrings/ubuntu-archive-keyring.gpg ]; then
  n=$((n+1)); echo "ok $n # SKIP this host has /usr/share/keyrings/ubuntu-archive-keyring.gpg: the bundled ubuntu-lts would go on to download"
else
  GLIMPSE_PROFILES_PATH=$GLIMPSE_BUNDLED_PROFILES \
    "$GLIMPSE" create ubuntu-lts --release noble --name ubuntu-nokey >/dev/null 2>"$work/err"; rc=$?
  check "ubuntu-lts without Ubuntu's keyring: refused offline, naming the file to put where and the key" \
    eval '[ $rc -ne 0 -a ! -e "$GLIMPSE_SANDBOX_DIR/ubuntu-nokey" ] && grep -q "Put a keyring holding the key 843938DF228D22F7B3742BC0D94AA3F0EFE21092 at /usr/share/keyrings/ubuntu-archive-keyring.gpg" "$work/err" && ! grep -q "Downloading\|resolve host" "$work/err"'
fi
profile sig-file "$base/signed/rootfs.tar.gz" "ChecksumUrl=$base/signed/SHA256SUMS" "Signature=file" \
  "SignatureUrl={url}.sig" "SignedBy=$good_fpr" "Keyring=$work/good.gpg"
id=$("$GLIMPSE" create sig-file 2>"$work/err"); rc=$?
check "an image with a good detached signature is accepted" [ $rc -eq 0 -a "$id" = sig-file ]
profile sig-file-bad "$base/tampered/rootfs.tar.gz" "ChecksumUrl=$base/tampered/SHA256SUMS" "Signature=file" \
  "SignatureUrl=$base/signed/SHA256SUMS.gpg" "SignedBy=$good_fpr" "Keyring=$work/good.gpg"
"$GLIMPSE" create sig-file-bad >/dev/null 2>"$work/err"; rc=$?
check "an image whose signature does not match is refused" \
  eval '[ $rc -ne 0 -a ! -e "$GLIMPSE_SANDBOX_DIR/sig-file-bad" ] && grep -q "does not verify" "$work/err"'
id=$("$GLIMPSE" create sig-file --name sig-local --image "$work/served/signed/rootfs.tar.gz" \
       --signature "$work/served/signed/rootfs.tar.gz.sig" 2>"$work/err"); rc=$?
check "--image with --signature checks it against the profile's keyring" [ $rc -eq 0 -a "$id" = sig-local ]

# --- channels: Alpine's latest-releases.yaml, Ubuntu's distro-info
arch=$(uname -m)
for branch in latest-stable v3.99; do
  version=$([ $branch = v3.99 ] && echo 3.99.1 || echo 3.100.2)
  d=$work/served/alpine/$branch/releases/$arch
  mkdir -p "$d"
  cp "$work/served/rootfs.tar.gz" "$d/alpine-minirootfs-$version-$arch.tar.gz"
  printf -- '---\n-\n  title: "Standard"\n  flavor: alpine-standard\n  file: alpine-standard-%s-%s.iso\n  version: %s\n  sha256: %s\n-\n  title: "Mini root filesystem"\n  flavor: alpine-minirootfs\n  file: alpine-minirootfs-%s-%s.tar.gz\n  version: %s\n  sha256: %s\n' \
    "$version" "$arch" "$version" "$(printf '2%.0s' $(seq 64))" "$version" "$arch" "$version" \
    "$(sha256sum < "$d/alpine-minirootfs-$version-$arch.tar.gz" | cut -d' ' -f1)" > "$d/latest-releases.yaml"
done
{
  printf '[Profile]\nName=Test alpine\nFamily=apk\n\n[Base]\nType=tarball\nChannel=alpine\n'
  printf 'ChannelUrl=%s/alpine/{branch}/releases/{arch}/latest-releases.yaml\nUrl=%s/alpine/{branch}/releases/{arch}/\n' "$base" "$base"
  printf '\n[Packages]\nRefresh=true\nUpgrade=true\nInstall=true\nListUpgradable=true\n'
} > "$work/profiles/chan-alpine.profile"
id=$("$GLIMPSE" create chan-alpine 2>"$work/err"); rc=$?; [ $rc -eq 0 ] || sed "s/^/# /" "$work/err"
check "the alpine channel resolves latest-stable from latest-releases.yaml, and info shows it" \
  eval '[ $rc -eq 0 ] && "$GLIMPSE" info chan-alpine | grep "^Release: *3.100.2" >/dev/null'
check "…and create says the image is checked only by that sum, over what, with no signature verified" \
  grep -q "The image is checked only by its SHA-256 from $base/alpine/latest-stable/releases/$arch/latest-releases.yaml, fetched over plain HTTP; no signature is verified" "$work/err"
id=$("$GLIMPSE" create chan-alpine --name chan-pinned --release 3.99 2>"$work/err"); rc=$?
check "--release 3.99 takes the v3.99 branch" \
  eval '[ $rc -eq 0 ] && "$GLIMPSE" info chan-pinned | grep "^Release: *3.99.1" >/dev/null'
mkdir -p "$work/distro-info" "$work/served/ubuntu/zesty"
printf 'version,codename,series,created,release,eol,eol-server,eol-esm\n10.04 LTS,Old,oldie,2009-10-01,2010-04-29,2013-05-09\n10.10,Mid,middle,2010-04-29,2010-10-10,2012-04-10\n12.04 LTS,Zesty,zesty,2011-10-13,2012-04-26,2017-04-28\n99.04 LTS,Future,future,2998-10-01,2999-04-20,2999-04-20\n' \
  > "$work/distro-info/ubuntu.csv"
cp "$work/served/rootfs.tar.gz" "$work/served/ubuntu/zesty/"
(cd "$work/served/ubuntu/zesty" && sha256sum rootfs.tar.gz > SHA256SUMS)
profile chan-ubuntu "$base/ubuntu/{release}/rootfs.tar.gz" "ChecksumUrl=$base/ubuntu/{release}/SHA256SUMS" "Channel=ubuntu-lts"
id=$(GLIMPSE_DISTRO_INFO_DIR=$work/distro-info "$GLIMPSE" create chan-ubuntu 2>"$work/err"); rc=$?
check "the ubuntu-lts channel takes the newest LTS released by today from ubuntu.csv" \
  eval '[ $rc -eq 0 ] && "$GLIMPSE" info chan-ubuntu | grep "^Release: *zesty" >/dev/null'
out=$(GLIMPSE_DISTRO_INFO_DIR=$work/distro-info "$GLIMPSE" profiles --verbose chan-ubuntu 2>&1)
check "profiles --verbose shows what it resolves to" grep -q "Resolves to: zesty (12.04)" <<<"$out"

# --- a moving name: yesterday's half download is not resumed onto today's file
tar -C "$tree" -czf "$work/served/moving.tar.gz" .
(cd "$work/served" && sha256sum moving.tar.gz > SHA256SUMS-moving)
profile moving "$base/moving.tar.gz?cut=100000" "ChecksumUrl=$base/SHA256SUMS-moving"
"$GLIMPSE" create moving >/dev/null 2>&1
echo changed > "$tree/changed-today"
tar -C "$tree" -czf "$work/served/moving.tar.gz" .
(cd "$work/served" && sha256sum moving.tar.gz > SHA256SUMS-moving)
id=$("$GLIMPSE" create moving 2>"$work/err"); rc=$?
resumes=$(curl -s "$base/__stats?path=/moving.tar.gz" | grep -c 'bytes=' || true)
check "a moving name that now means another file is fetched anew, not resumed" \
  eval '[ $rc -eq 0 -a "$id" = moving -a "$resumes" -eq 0 ] && [ -e "$GLIMPSE_SANDBOX_DIR/moving/rootfs/changed-today" ]'
rm -f "$tree/changed-today"

# --- kill -9 during a slow bootstrap: nothing keeps running, and the
# half-built tree is removed by the next store operation.  The bootstrap
# runs as the user `glimpse` (never the host's root): the stand-in must be
# reachable by it.
chmod 0711 "$work"
mkdir -p "$work/fakebin"
cat > "$work/fakebin/mmdebstrap" <<EOF
#!/bin/sh
# a slow bootstrap tool with a child of its own, as mmdebstrap's apt and dpkg
sleep 300 &
wait
EOF
chmod 0755 "$work/fakebin" "$work/fakebin/mmdebstrap"
printf '[Profile]\nName=Test slowboot\nFamily=apt\n\n[Base]\nType=bootstrap\nSuite=stable\nMirror=http://127.0.0.1:1/debian\n\n[Packages]\nRefresh=true\nUpgrade=true\nInstall=true\nListUpgradable=true\n' \
  > "$work/profiles/slowboot.profile"
# wait_boot DIR: $boot_pid, the fake DIR/mmdebstrap, and $child_pid, its
# sleep, once both run (within 30 s; else $child_pid is empty)
wait_boot () {
  boot_pid=; child_pid=
  for _ in $(seq 300); do
    boot_pid=$(pgrep -f "$1/mmdebstrap" | head -n1)
    [ -n "$boot_pid" ] && child_pid=$(pgrep -P "$boot_pid" sleep | head -n1)
    [ -n "$child_pid" ] && break
    sleep 0.1
  done
}
PATH=$work/fakebin:$PATH "$GLIMPSE" create slowboot >/dev/null 2>&1 &
pid=$!
wait_boot "$work/fakebin"
check "the bootstrap tool runs as the user glimpse, not as root" \
  eval '[ -n "$child_pid" ] && [ "$(stat -c %U "/proc/$boot_pid")" = glimpse ]'
kill -KILL $pid; wait $pid 2>/dev/null
gone() { # pid: gone (or a zombie) within 30 s
  for _ in $(seq 300); do
    [ -e "/proc/$1" ] || return 0
    [ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)" = Z ] && return 0
    sleep 0.1
  done
  return 1
}
check "kill -9 of create leaves neither the bootstrap tool nor its child running" \
  eval 'gone "$boot_pid" && gone "$child_pid"'
check "…its half-built tree stays until the next store operation" \
  eval 'store_entries | grep "\.creating-" >/dev/null'
"$GLIMPSE" list >/dev/null 2>&1
check "…which removes it" eval '! store_entries | grep "\.creating-" >/dev/null'

# --- Ctrl-C (SIGINT) or SIGTERM during a bootstrap: one line, as an
# interrupted install says it, and 130; not the bootstrap tool's own
# failure, which the signal provokes, nor its whole command line "was
# stopped"
mkdir -p "$work/fakebin-int"
cat > "$work/fakebin-int/mmdebstrap" <<'EOF2'
#!/bin/sh
trap 'echo "E: fake mmdebstrap failed: interrupted"; exit 1' INT TERM
echo "I: fake mmdebstrap starts"
sleep 300 &
wait
EOF2
chmod 0755 "$work/fakebin-int" "$work/fakebin-int/mmdebstrap"
printf '[Profile]\nName=Test intboot\nFamily=apt\n\n[Base]\nType=bootstrap\nSuite=stable\nMirror=http://127.0.0.1:1/debian\n\n[Packages]\nRefresh=true\nUpgrade=true\nInstall=true\nListUpgradable=true\n' \
  > "$work/profiles/intboot.profile"
for sig in INT TERM; do
  PATH=$work/fakebin-int:$PATH "$GLIMPSE" create intboot >/dev/null 2>"$work/int-err" &
  pid=$!
  wait_boot "$work/fakebin-int"
  kill -$sig $pid; wait $pid; rc=$?
  sed 's/^/# /' "$work/int-err"
  check "SIG$sig during a bootstrap (exit $rc): exit 130 and one line, \"Interrupted while creating …; nothing was created\"" \
    eval '[ -n "$child_pid" ] && [ $rc -eq 130 ] \
      && [ "$(tail -n1 "$work/int-err")" = "glimpse: Interrupted while creating a sandbox from profile intboot; nothing was created" ] \
      && ! grep -q "fake mmdebstrap failed\|was stopped" "$work/int-err" && [ "$(grep -ci interrupt "$work/int-err")" = 1 ]'
  check "…and no sandbox is left" eval '[ ! -e "$GLIMPSE_SANDBOX_DIR/intboot" ]'
done

# --- remove leaves nothing
for s in host host-2 named bb bb-2 cut offline sig-good sig-nokeyring sig-file sig-local archlike oci-good chan-alpine chan-pinned chan-ubuntu moving; do "$GLIMPSE" remove "$s" >/dev/null 2>&1; done
check "remove leaves an empty store" [ -z "$(store_entries)" ]

[ $failed -eq 0 ]
