#!/bin/sh
# Post-create hook for Arch Linux: enable the worldwide mirror list entry
# shipped (commented out) in the bootstrap tarball, so pacman can work.
set -eu
root=${GLIMPSE_ROOTFS:?GLIMPSE_ROOTFS is not set}
list="$root/etc/pacman.d/mirrorlist"
[ -f "$list" ] || { echo "archlinux-post-create: $list is missing" >&2; exit 1; }
sed -i '0,/^#Server = /s//Server = /' "$list"
if [ ! -s "$root/etc/resolv.conf" ] && [ -f /etc/resolv.conf ]; then
  cp /etc/resolv.conf "$root/etc/resolv.conf"
fi
