# Alpine Linux, from the minimal root file system its project publishes.
[Profile]
Name=Alpine Linux 3.21
Description=Alpine Linux 3.21 (musl, apk), from the official minirootfs
Family=apk
Release=3.21

[Base]
Type=tarball
Url=https://dl-cdn.alpinelinux.org/alpine/v3.21/releases/{uname_arch}/alpine-minirootfs-3.21.3-{uname_arch}.tar.gz
ChecksumUrl=https://dl-cdn.alpinelinux.org/alpine/v3.21/releases/{uname_arch}/alpine-minirootfs-3.21.3-{uname_arch}.tar.gz.sha256

[Packages]
Refresh=apk update
Upgrade=apk upgrade
Install=apk add
ListUpgradable=apk list --upgradable

[Tweaks]
Locale=C.UTF-8
