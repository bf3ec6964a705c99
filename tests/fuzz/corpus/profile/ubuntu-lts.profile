# Ubuntu's latest long-term release, from its official base rootfs tarball.
# The file name carries the point release, so it is looked up in SHA256SUMS.
[Profile]
Name=Ubuntu 24.04 LTS (Noble Numbat)
Description=Ubuntu's latest long-term support release, from the official Ubuntu Base tarball
Family=apt
Release=noble
Launchers=

[Base]
Type=tarball
Url=https://cdimage.ubuntu.com/ubuntu-base/releases/noble/release/
FilePattern=ubuntu-base-*-base-{arch}.tar.gz
ChecksumUrl=https://cdimage.ubuntu.com/ubuntu-base/releases/noble/release/SHA256SUMS

[Packages]
Refresh=apt-get update
Upgrade=apt-get -y dist-upgrade
Install=apt-get install -y --no-install-recommends
ListUpgradable=apt list --upgradable

[Hooks]
PostCreate=hooks/apt-post-create.sh

[Tweaks]
PulseAudio=true
Locale=C.UTF-8
