#!/bin/bash
# Integration: a package operation that runs out of disk space.  The store
# is a small tmpfs; installing a package bigger than what is left fails
# with a message naming the lack of space, the sandbox keeps its current
# generation, and nothing of the attempt stays on the disk.  Needs root.
source "$(dirname "$0")/libpkgtest.sh"
source "$(dirname "$0")/librepo.sh"

full=$GL_TEST_ROOT/full-$$
mkdir -p "$full"
mount -t tmpfs -o size=24m,mode=0755 glimpse-test-full "$full" || skip "cannot mount a tmpfs on $full"
GL_CLEANUPS+=("umount -l $full; rmdir $full")
export GLIMPSE_SANDBOX_DIR=$full/sandboxes
export GLIMPSE_PROFILES_PATH=${GLIMPSE_BUNDLED_PROFILES:?}
# (the disk running out is the point here, not the floor of free space
# below which an operation is stopped: test-pkg-limits.sh)
export GLIMPSE_CONF=$WORK/glimpse.conf
printf '[Packages]\nMinFreeMiB=0\n' > "$GLIMPSE_CONF"
id=full-$$

gl_key good
gl_deb glimpse-hello 1.0
mkdir -p "$WORK/big/usr/share/glimpse-big"
head -c 40000000 /dev/urandom > "$WORK/big/usr/share/glimpse-big/data"
gl_deb glimpse-big 1.0 "" "$WORK/big"
gl_publish "$REPO/repo" good "$WORK"/debs/*.deb
gl_serve

check "glimpse create host in the small store" "$GLIMPSE" create host --name "$id"
for r in $("$GLIMPSE" repos "$id" | awk '!/\(added\)$/ { print $1 }'); do
  "$GLIMPSE" remove-repo "$id" "$r" >/dev/null 2>&1
done
check "add-repo" "$GLIMPSE" add-repo "$id" "deb $URL/repo ./" --key "$WORK/good.asc" --name test
check "a small package fits" "$GLIMPSE" install "$id" glimpse-hello
# (what it replaced is removed in the background: gone before the space is measured)
gl_wait 30 sh -c '! ls -A "$1" | grep -q "^\.trash-"' sh "$GLIMPSE_SANDBOX_DIR/$id/system"
gen=$(cat "$GLIMPSE_SANDBOX_DIR/$id/system/current")
used=$(df --output=used "$full" | tail -n1)
out=$("$GLIMPSE" install "$id" glimpse-big 2>&1); rc=$?
printf '%s\n' "$out" | tail -n 3 | sed 's/^/# /'
check_sh "a package bigger than the space left fails (rc $rc)" '[ $rc -eq 1 ]'
check_sh "… saying the disk is full and that the sandbox is unchanged" \
  'grep -q "No space left on device\|enough free space" <<<"$out" && grep -q "“$id” is unchanged" <<<"$out"'
check_sh "the sandbox keeps generation $gen" '[ "$(cat "$GLIMPSE_SANDBOX_DIR/$id/system/current")" = "$gen" ]'
check_sh "the partial generation and the scratch are gone" \
  '[ "$(ls -A "$GLIMPSE_SANDBOX_DIR/$id/system" | grep -v "^op.lock$\|^walk-cache$\|^walk-cache.lock$" | sort | tr "\n" " ")" = "$gen current " ]'
check_sh "the space is free again" '[ "$(df --output=used "$full" | tail -n1)" -le $((used + 512)) ]'
check_sh "the installed package is still there" '[ -x "$GLIMPSE_SANDBOX_DIR/$id/system/$gen/tree/usr/bin/glimpse-hello" ]'
check "the next operation works" "$GLIMPSE" uninstall "$id" glimpse-hello
check "remove" "$GLIMPSE" remove "$id"
finish
