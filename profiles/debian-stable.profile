# Debian stable, built with mmdebstrap (rootless) from the mirror in
# the host's apt configuration, or the tool's default when there is none.
[Profile]
Name=Debian stable
Description=Debian's current stable release
Family=apt
Release=stable
Launchers=

[Base]
Type=bootstrap
Suite=stable
Include=ca-certificates;locales;

[Packages]
Refresh=apt-get update
Upgrade=apt-get -y dist-upgrade
Install=apt-get install -y --no-install-recommends

[Hooks]
PostCreate=hooks/apt-post-create.sh

[Tweaks]
PulseAudio=true
Locale=C.UTF-8
