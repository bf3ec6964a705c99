#!/bin/sh
# Post-create hook for Arch Linux: enable the worldwide mirror list entry
# shipped (commented out) in the bootstrap tarball, and set up pacman's
# keyring (pacman-key --init, --populate archlinux) so that `pacman -S`
# can check package signatures.  (glimpse create has already given the
# tree a resolv.conf with a nameserver: Arch's own holds only comments.)
# Called as: archlinux-post-create.sh SANDBOX_PATH, with GLIMPSE_ROOTFS set.
set -eu
root=${GLIMPSE_ROOTFS:?GLIMPSE_ROOTFS is not set}
list="$root/etc/pacman.d/mirrorlist"
[ -f "$list" ] && [ ! -L "$list" ] || { echo "archlinux-post-create: $list is missing" >&2; exit 1; }
sed -i '0,/^#Server = /s//Server = /' "$list"
# pacman-key runs inside the tree (its gpg writes /etc/pacman.d/gnupg), in
# a mount namespace of its own with /dev and /proc, so nothing stays mounted.
unshare --mount --propagation private -- sh -eu -c '
  root=$1
  mount --rbind /dev "$root/dev"
  mount -t proc proc "$root/proc"
  chroot "$root" /usr/bin/pacman-key --init
  chroot "$root" /usr/bin/pacman-key --populate archlinux
  # (pacman-key starts a gpg-agent; it must not outlive the hook)
  chroot "$root" /usr/bin/gpgconf --homedir /etc/pacman.d/gnupg --kill gpg-agent || true
' sh "$root"
