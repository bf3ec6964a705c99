# Debian unstable, built with mmdebstrap (rootless) from the mirror in
# the host's apt configuration, or the tool's default when there is none.
[Profile]
Name=Debian unstable
Description=Debian unstable (sid): where new packages arrive first
Family=apt
Release=unstable
Launchers=

[Base]
Type=bootstrap
Suite=unstable
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
