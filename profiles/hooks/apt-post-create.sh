#!/bin/sh
# Post-create hook for apt-based trees: no services start inside, so apps
# and package operations work without further set-up.
# Runs inside the new tree, as root of the package namespace (glimpse-pkgns
# --tree), never as the host's root; / is the new tree ($GLIMPSE_ROOTFS).
set -eu
root=${GLIMPSE_ROOTFS:?GLIMPSE_ROOTFS is not set}
[ -d "$root/etc" ] || { echo "apt-post-create: $root has no /etc" >&2; exit 1; }
# (glimpse create has already given the tree a resolv.conf with a nameserver.)
# No services start inside a sandbox.
rm -f "$root/usr/sbin/policy-rc.d"
printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d"
chmod 0755 "$root/usr/sbin/policy-rc.d"
