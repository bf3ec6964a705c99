# Fedora, from the project's container base image (an OCI archive with one
# layer); the checksum comes from the CHECKSUM file beside it.
[Profile]
Name=Fedora
Description=Fedora Linux's newest release (found when a sandbox is created), from the official container base image
Family=dnf

[Base]
Type=tarball
Format=oci
Channel=fedora
ChannelUrl=https://download.fedoraproject.org/pub/fedora/linux/releases/
Url=https://download.fedoraproject.org/pub/fedora/linux/releases/{release}/Container/{arch}/images/
ArchiveUrl=https://archives.fedoraproject.org/pub/archive/fedora/linux/releases/{release}/Container/{arch}/images/
FilePattern=Fedora-Container-Base-Generic-{release}-*.{arch}.oci.tar.xz
ChecksumUrl=https://download.fedoraproject.org/pub/fedora/linux/releases/{release}/Container/{arch}/images/Fedora-Container-{release}-*-{arch}-CHECKSUM
# The CHECKSUM is clear-signed with the release's key, from Debian's
# distribution-gpg-keys package
Signature=clearsigned
Keyring=/usr/share/distribution-gpg-keys/fedora/RPM-GPG-KEY-fedora-{release}-primary

[Packages]
Refresh=dnf -y makecache
Upgrade=dnf -y upgrade
Install=dnf -y install

[Tweaks]
Locale=C.UTF-8
