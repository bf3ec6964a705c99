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

echo "1..28"

# --- host, twice
id1=$("$GLIMPSE" create host 2>/dev/null); id2=$("$GLIMPSE" create host 2>/dev/null)
check "create host twice gives host and host-2" [ "$id1" = host -a "$id2" = host-2 ]
check "both instances exist with the layout" \
  test -f "$GLIMPSE_SANDBOX_DIR/host/sandbox.conf" -a -d "$GLIMPSE_SANDBOX_DIR/host-2/system/upper" \
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

# --- tarball over HTTP, cached for the second instance
profile bb "$base/rootfs.tar.gz" "ChecksumUrl=$base/SHA256SUMS"
id=$("$GLIMPSE" create bb 2>"$work/err"); rc=$?
check "tarball profile over HTTP creates a sandbox" [ $rc -eq 0 -a "$id" = bb ]
check "the rootfs is unpacked, root-owned" \
  test -x "$GLIMPSE_SANDBOX_DIR/bb/rootfs/bin/busybox" -a -L "$GLIMPSE_SANDBOX_DIR/bb/rootfs/bin/sh"
check "the verified download is cached" test -f "$GLIMPSE_CACHE_DIR/bb/rootfs.tar.gz"
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
  [ $rc -ne 0 -a -s "$GLIMPSE_CACHE_DIR/cut/big.tar.gz.part" -a ! -e "$GLIMPSE_SANDBOX_DIR/cut" ]
id=$("$GLIMPSE" create cut 2>/dev/null); rc=$?
ranges=$(curl -s "$base/__stats?path=/big.tar.gz" | grep -c 'bytes=1000000-' || true)
check "the next create resumes with a Range request and succeeds" [ $rc -eq 0 -a "$id" = cut -a "$ranges" -ge 1 ]

# --- Ctrl-C during the download
profile stall "$base/big.tar.gz?stall=200000" "ChecksumUrl=$base/SHA256SUMS"
snap=$(store_entries)
"$GLIMPSE" create stall >/dev/null 2>"$work/err" &
pid=$!
for _ in $(seq 100); do [ -s "$GLIMPSE_CACHE_DIR/stall/big.tar.gz.part" ] && break; sleep 0.1; done
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

# --- kill -9 during a slow bootstrap: nothing keeps running, and the
# half-built tree is removed by the next store operation
mkdir -p "$work/fakebin"
cat > "$work/fakebin/debootstrap" <<EOF
#!/bin/sh
# a slow bootstrap tool with a child of its own, as debootstrap's dpkg
sleep 300 &
echo \$\$ \$! > "$work/boot.pids"
wait
EOF
chmod 0755 "$work/fakebin/debootstrap"
printf '[Profile]\nName=Test slowboot\nFamily=apt\n\n[Base]\nType=bootstrap\nTool=debootstrap\nSuite=stable\nMirror=http://127.0.0.1:1/debian\n\n[Packages]\nRefresh=true\nUpgrade=true\nInstall=true\nListUpgradable=true\n' \
  > "$work/profiles/slowboot.profile"
PATH=$work/fakebin:$PATH "$GLIMPSE" create slowboot >/dev/null 2>&1 &
pid=$!
for _ in $(seq 100); do [ -s "$work/boot.pids" ] && break; sleep 0.1; done
read -r boot_pid child_pid < "$work/boot.pids"
kill -KILL $pid; wait $pid 2>/dev/null
gone() { # pid: gone (or a zombie) within 10 s
  for _ in $(seq 100); do
    [ -e "/proc/$1" ] || return 0
    [ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)" = Z ] && return 0
    sleep 0.1
  done
  return 1
}
check "kill -9 of create leaves neither the bootstrap tool nor its child running" \
  eval 'gone "$boot_pid" && gone "$child_pid"'
check "…its half-built tree stays until the next store operation" \
  eval 'store_entries | grep -q "\.creating-"'
"$GLIMPSE" list >/dev/null 2>&1
check "…which removes it" eval '! store_entries | grep -q "\.creating-"'

# --- remove leaves nothing
for s in host host-2 bb bb-2 cut offline; do "$GLIMPSE" remove "$s" >/dev/null 2>&1; done
check "remove leaves an empty store" [ -z "$(store_entries)" ]

[ $failed -eq 0 ]
