# Arch Linux, from the bootstrap tarball (one top directory, root.x86_64/).
[Profile]
Name=Arch Linux (rolling)
Description=Arch Linux, from the newest official bootstrap tarball (x86_64 only)
Family=pacman
Architectures=x86_64
Release=latest

[Base]
Type=tarball
# the dated name, not the moving archlinux-bootstrap-x86_64.tar.zst alias
Url=https://geo.mirror.pkgbuild.com/iso/latest/
FilePattern=archlinux-bootstrap-????.??.??-{arch}.tar.zst
ChecksumUrl=https://geo.mirror.pkgbuild.com/iso/latest/sha256sums.txt
# the tarball's .sig, by the release signer (Pierre Schmitz), from Debian's
# archlinux-keyring package
Signature=file
SignatureUrl={url}.sig
SignedBy=3E80CA1A8B89F69CBA57D98A76A5EF9054449A5C;4AA4767BBC9C4B1D18AE28B77F2D434B9741E8AC
Keyring=/usr/share/keyrings/archlinux.gpg
StripComponents=1

[Packages]
Refresh=pacman -Sy
Upgrade=pacman -Syu --noconfirm
# -Syu: Arch supports no partial upgrades
Install=pacman -Syu --noconfirm

[Hooks]
PostCreate=hooks/archlinux-post-create.sh

[Tweaks]
Locale=C.UTF-8
