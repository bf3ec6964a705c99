#!/bin/sh
# Post-create hook for Arch Linux: enable the worldwide mirror list entry
# shipped (commented out) in the bootstrap tarball, and set up pacman's
# keyring (pacman-key --init, --populate archlinux) so that `pacman -S`
# can check package signatures.  (glimpse create has already given the
# tree a resolv.conf with a nameserver: Arch's own holds only comments.)
# Runs inside the new tree, as root of the package namespace (glimpse-pkgns
# --tree: a user namespace mapped to the `glimpse` range, its own PID
# namespace, no network), never as the host's root: pacman-key and gpg are
# the downloaded tree's own programs.  / is the new tree ($GLIMPSE_ROOTFS).
set -eu
root=${GLIMPSE_ROOTFS:?GLIMPSE_ROOTFS is not set}
list="$root/etc/pacman.d/mirrorlist"
[ -f "$list" ] || { echo "archlinux-post-create: $list is missing" >&2; exit 1; }
sed -i '0,/^#Server = /s//Server = /' "$list"
# (pacman-key's gpg writes /etc/pacman.d/gnupg; the gpg-agent it starts
# dies with the namespace's PID 1 at the latest)
pacman-key --init
pacman-key --populate archlinux
gpgconf --homedir /etc/pacman.d/gnupg --kill gpg-agent || true
