# Fedora, from the project's container base image (an OCI archive with one
# layer); the checksum comes from the CHECKSUM file beside it.
[Profile]
Name=Fedora 41
Description=Fedora Linux 41, from the official container base image
Family=dnf
Release=41

[Base]
Type=tarball
Format=oci
Url=https://download.fedoraproject.org/pub/fedora/linux/releases/41/Container/{uname_arch}/images/
FilePattern=Fedora-Container-Base-Generic-41-*.{uname_arch}.oci.tar.xz
ChecksumUrl=https://download.fedoraproject.org/pub/fedora/linux/releases/41/Container/{uname_arch}/images/Fedora-Container-41-1.4-{uname_arch}-CHECKSUM

[Packages]
Refresh=dnf -y makecache
Upgrade=dnf -y upgrade
Install=dnf -y install
ListUpgradable=dnf -q check-update

[Tweaks]
Locale=C.UTF-8
