# Alpine Linux, from the minimal root file system its project publishes.
[Profile]
Name=Alpine Linux
Description=Alpine Linux's latest stable release (musl, apk; found when a sandbox is created), from the official minirootfs
Family=apk

[Base]
Type=tarball
# latest-releases.yaml names the minirootfs and its sha256
Channel=alpine
ChannelUrl=https://dl-cdn.alpinelinux.org/alpine/{branch}/releases/{arch}/latest-releases.yaml
Url=https://dl-cdn.alpinelinux.org/alpine/{branch}/releases/{arch}/
# No signature is verified: the detached {url}.asc is signed by Natanael
# Copa's key (0482D84022F52DF1C4E7CD43293ACD0907D9495A), which no Debian
# package ships and Glimpse does not ship either.  The image is checked
# only by the sha256 in latest-releases.yaml, over HTTPS; glimpse create
# says so.  With the key at hand (its fingerprint checked), a copy of this
# profile in /etc/glimpse/profiles/ can add:
#   Signature=file
#   SignatureUrl={url}.asc
#   SignedBy=0482D84022F52DF1C4E7CD43293ACD0907D9495A
#   Keyring=/etc/glimpse/keys/alpine-ncopa.asc

[Packages]
Refresh=apk update
Upgrade=apk upgrade
Install=apk add

[Tweaks]
Locale=C.UTF-8
