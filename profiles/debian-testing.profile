# Debian testing, built with mmdebstrap (rootless) from the mirror in
# the host's apt configuration, or the tool's default when there is none.
[Profile]
Name=Debian testing
Description=Debian testing: the next stable release in the making
Family=apt
Release=testing
Launchers=

[Base]
Type=bootstrap
Suite=testing
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
