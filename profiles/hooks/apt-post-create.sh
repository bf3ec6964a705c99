#!/bin/sh
# Post-create hook for apt-based trees: a usable resolv.conf and locale
# default, so apps and package operations work without further set-up.
# Called as: apt-post-create.sh SANDBOX_PATH, with GLIMPSE_ROOTFS set.
set -eu
root=${GLIMPSE_ROOTFS:?GLIMPSE_ROOTFS is not set}
[ -d "$root/etc" ] || { echo "apt-post-create: $root has no /etc" >&2; exit 1; }
# Name resolution inside follows the host's (the launcher shows /etc/resolv.conf of the tree).
if [ ! -s "$root/etc/resolv.conf" ] && [ -f /etc/resolv.conf ]; then
  rm -f "$root/etc/resolv.conf"
  cp /etc/resolv.conf "$root/etc/resolv.conf"
fi
# No services start inside a sandbox.
printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d"
chmod 0755 "$root/usr/sbin/policy-rc.d"
