# Ubuntu's latest long-term release, from its official base rootfs tarball.
# The file name carries the point release, so it is looked up in SHA256SUMS.
[Profile]
Name=Ubuntu LTS
Description=Ubuntu's newest long-term support release (found when a sandbox is created), from the official Ubuntu Base tarball
Family=apt
Launchers=

[Base]
Type=tarball
Channel=ubuntu-lts
Url=https://cdimage.ubuntu.com/ubuntu-base/releases/{release}/release/
FilePattern=ubuntu-base-*-base-{arch}.tar.gz
ChecksumUrl=https://cdimage.ubuntu.com/ubuntu-base/releases/{release}/release/SHA256SUMS
# SHA256SUMS.gpg, by the Ubuntu CD Image Automatic Signing Key (2012), which
# Debian's ubuntu-keyring package ships in ubuntu-archive-keyring.gpg
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
