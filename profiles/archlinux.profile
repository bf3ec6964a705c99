# Arch Linux, from the bootstrap tarball (one top directory, root.x86_64/).
[Profile]
Name=Arch Linux (rolling)
Description=Arch Linux, from the latest official bootstrap tarball
Family=pacman
Release=latest

[Base]
Type=tarball
Url=https://geo.mirror.pkgbuild.com/iso/latest/archlinux-bootstrap-{uname_arch}.tar.zst
ChecksumUrl=https://geo.mirror.pkgbuild.com/iso/latest/sha256sums.txt
StripComponents=1

[Packages]
Refresh=pacman -Sy
Upgrade=pacman -Syu --noconfirm
Install=pacman -S --noconfirm
ListUpgradable=pacman -Qu

[Hooks]
PostCreate=hooks/archlinux-post-create.sh

[Tweaks]
Locale=C.UTF-8
