# The embedded default: the host's own / is the read-only base, package
# changes land in the sandbox's system layer. Needs no download.
[Profile]
Name=This system (host)
Description=Your own system as a read-only base: try a newer package or a third-party repository without touching the host.
Family=apt
Release=host
Launchers=

[Base]
Type=host

[Packages]
Refresh=apt-get update
Upgrade=apt-get -y dist-upgrade
Install=apt-get install -y --no-install-recommends

[Tweaks]
Locale=inherit
