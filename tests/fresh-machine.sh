#!/bin/bash
# tests/fresh-machine.sh: the README's two set-up commands, verbatim, on a
# minimal Debian 12 - not on a machine that has grown packages.
#
#   sudo tests/fresh-machine.sh [--keep] [--only-first]
#
# debootstrap --variant=minbase bookworm into a directory (from the Debian
# mirror of this machine's own apt configuration), then - in a mount
# namespace of its own, entered with pivot_root, not chroot (the kernel
# refuses new user namespaces inside a chroot) - installs sudo, creates a new
# sudo user, copies this checkout into their home and runs the README's
# commands there as that user.  Not part of tests/run or CI: it downloads a
# Debian tree and every build dependency, and builds and tests everything
# again (an hour or more on 2 cores).  Run it before calling a change to
# the installation or the dependencies done.
#   --keep        keep the tree afterwards (printed)
#   --only-first  run only README command 1 (install, build, first sandbox)
# SPDX-License-Identifier: LGPL-2.1-or-later
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
keep=0 only_first=0
for a in "$@"; do
  case $a in
    --keep) keep=1 ;;
    --only-first) only_first=1 ;;
    *) echo "usage: sudo $0 [--keep] [--only-first]" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" -eq 0 ] || { echo "fresh-machine: run as root (sudo $0)" >&2; exit 4; }
command -v debootstrap >/dev/null || { echo "fresh-machine: apt-get install debootstrap" >&2; exit 4; }

# The mirror: the first Debian archive URI of this machine's apt sources
# (deb822 .sources first, then one-line sources.list); never a name of ours.
mirror=
for f in /etc/apt/sources.list.d/*.sources; do
  [ -f "$f" ] || continue
  mirror=$(awk 'tolower($1) == "uris:" { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' "$f")
  [ -n "$mirror" ] && break
done
if [ -z "$mirror" ]; then
  mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
    awk '$1 == "deb" && $2 !~ /security/ { print ($2 ~ /^\[/ ? $3 : $2); exit }')
fi
[ -n "$mirror" ] || { echo "fresh-machine: no Debian mirror in this machine's apt configuration" >&2; exit 1; }

# The README's commands, verbatim: the ```sh blocks of its set-up section.
mapfile -t cmds < <(python3 - "$top/README.md" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
sec = re.search(r"^## Set-up on a fresh.*?(?=^## )", text, re.S | re.M).group(0)
for block in re.findall(r"```sh\n(.*?)```", sec, re.S):
    print(" ".join(l.strip() for l in block.strip().splitlines()))
PY
)
[ ${#cmds[@]} -ge 2 ] || { echo "fresh-machine: README.md's set-up section has fewer than two commands" >&2; exit 1; }

root=$(mktemp -d /var/tmp/glimpse-fresh-machine.XXXXXX)
chmod 0755 "$root"
cleanup () {
  if [ $keep = 1 ]; then echo "fresh-machine: the tree is kept in $root"; else rm -rf --one-file-system "$root"; fi
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

start=$(date +%s)
echo "=== debootstrap --variant=minbase bookworm from $mirror"
debootstrap --variant=minbase bookworm "$root" "$mirror" > "$root.debootstrap.log" 2>&1 ||
  { tail -n 20 "$root.debootstrap.log"; rm -f "$root.debootstrap.log"; exit 1; }
rm -f "$root.debootstrap.log"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
echo "=== a minimal tree in $(( $(date +%s) - start )) s; a checkout of HEAD ($(git -C "$top" log -1 --format=%h)) in the user's home"
install -d "$root/home/tester"
git clone -q "$top" "$root/home/tester/glimpse"

# Inside: a private mount namespace (and PID namespace), pivot_root into the
# tree, the old root detached; /proc, /sys, /dev, /run and /tmp as a booted
# system has them.
script=$(cat <<'INSIDE'
set -eu
export DEBIAN_FRONTEND=noninteractive PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
apt-get update -qq
apt-get install -y -qq --no-install-recommends sudo >/dev/null
useradd -m -s /bin/bash -G sudo tester 2>/dev/null || usermod -aG sudo tester
chown -R tester: /home/tester
# the script types no password: the new sudo user needs none
echo 'tester ALL=(ALL) NOPASSWD: ALL' > /etc/sudoers.d/tester
chmod 0440 /etc/sudoers.d/tester
n=0
for cmd in "$@"; do
  n=$((n + 1))
  echo "=== README command $n, as tester in ~/glimpse: $cmd"
  t0=$(date +%s)
  if runuser -l tester -c "cd ~/glimpse && $cmd"; then
    echo "=== README command $n: OK ($(( $(date +%s) - t0 )) s)"
  else
    rc=$?
    echo "=== README command $n: FAILED with exit $rc ($(( $(date +%s) - t0 )) s)"
    exit $rc
  fi
done
INSIDE
)
[ $only_first = 1 ] && cmds=("${cmds[0]}")
rc=0
unshare --mount --pid --fork --propagation private -- /bin/bash -s "$root" "$script" "${cmds[@]}" <<'ENTER' || rc=$?
set -eu
root=$1 script=$2; shift 2
mount --bind "$root" "$root"
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --rbind /dev "$root/dev"
mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs "$root/run"
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$root/tmp"
cd "$root"
mkdir -p .old-root
pivot_root . .old-root
cd /
umount -l /.old-root
rmdir /.old-root
exec /bin/bash -c "$script" inside "$@"
ENTER
if [ $rc -eq 0 ]; then
  echo "=== fresh-machine: the README's commands passed on a minimal Debian 12 ($(( $(date +%s) - start )) s in all)"
else
  echo "=== fresh-machine: FAILED (exit $rc) after $(( $(date +%s) - start )) s"
fi
exit $rc
