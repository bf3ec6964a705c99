#!/bin/sh
# Post-create hook for apt-based trees: no services start inside, so apps
# and package operations work without further set-up.
# Called as: apt-post-create.sh SANDBOX_PATH, with GLIMPSE_ROOTFS set.
set -eu
root=${GLIMPSE_ROOTFS:?GLIMPSE_ROOTFS is not set}
[ -d "$root/etc" ] || { echo "apt-post-create: $root has no /etc" >&2; exit 1; }
# (glimpse create has already given the tree a resolv.conf with a nameserver.)
# No services start inside a sandbox.
printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d"
chmod 0755 "$root/usr/sbin/policy-rc.d"
