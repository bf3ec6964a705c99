# Ubuntu's development release, from the daily Ubuntu Base build.
[Profile]
Name=Ubuntu development release (daily)
Description=The Ubuntu release in development, from the daily Ubuntu Base tarball
Family=apt
Release=devel
Launchers=

[Base]
Type=tarball
Url=https://cdimage.ubuntu.com/ubuntu-base/daily/current/
FilePattern=*-base-{arch}.tar.gz
ChecksumUrl=https://cdimage.ubuntu.com/ubuntu-base/daily/current/SHA256SUMS
Signature=checksums
SignatureUrl={checksum_url}.gpg
SignedBy=843938DF228D22F7B3742BC0D94AA3F0EFE21092
Keyring=/usr/share/keyrings/ubuntu-archive-keyring.gpg

[Packages]
Refresh=apt-get update
Upgrade=apt-get -y dist-upgrade
Install=apt-get install -y --no-install-recommends

[Hooks]
PostCreate=hooks/apt-post-create.sh

[Tweaks]
PulseAudio=true
Locale=C.UTF-8
