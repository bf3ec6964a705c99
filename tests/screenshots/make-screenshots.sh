#!/bin/bash
# Remakes the README's pictures: real programs on a real (virtual) desktop.
#
#   sudo tests/screenshots/make-screenshots.sh
#
# As root, it installs the Debian packages the scenes need, builds Glimpse
# and installs it into /usr/local as the README's set-up does, creates the
# sandboxes the pictures show when they do not exist yet (debian-testing
# with Mousepad in it, and host; both kept for the next run), and adds an
# ordinary user, glimpse-shots.  As that user it starts a desktop under
# Xvfb - a D-Bus session, openbox, dunst - and photographs:
#   menu.png           jgmenu reading the XDG Applications menu, Glimpse submenu open
#   side-by-side.png   Mousepad of the sandbox next to the host's
#   file-manager.png   Thunar's context menu with "Open in <sandbox>"
#   notification.png   dunst showing an update notification and its actions
# The PNGs are written beside this script.  Not part of the test suite
# (it downloads a Debian tree and installs packages).  It holds the machine's
# test lock (/run/glimpse-tests.lock, see HELPERS.md) around each step that
# installs, creates users or mounts, and not in between.
# SPDX-License-Identifier: LGPL-2.1-or-later
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
user=glimpse-shots
build=$top/build-screenshots

[ "$(id -u)" -eq 0 ] || { echo "make-screenshots: run as root (sudo $0)" >&2; exit 4; }
exec 9>>/run/glimpse-tests.lock
lock () { flock 9; }
unlock () { flock -u 9; }

echo "== packages"
export DEBIAN_FRONTEND=noninteractive
apt-get install -y --no-install-recommends \
  xvfb xauth x11-utils x11-xserver-utils dbus dbus-x11 openbox jgmenu lxmenu-data \
  thunar mousepad dunst suckless-tools libnotify-bin imagemagick xdotool \
  fonts-dejavu-core adwaita-icon-theme debootstrap >/dev/null

echo "== Glimpse into /usr/local"
if [ ! -d "$build" ]; then
  meson setup "$build" "$top" --prefix=/usr/local --sysconfdir=/etc >/dev/null
fi
ninja -C "$build" >/dev/null
lock; meson install -C "$build" --no-rebuild >/dev/null; unlock
export PATH=/usr/local/bin:$PATH

echo "== sandboxes"
lock
if ! glimpse info debian-testing >/dev/null 2>&1; then
  # debian-testing with Mousepad in the tree from the start (dbus-x11 for
  # dconf, which debootstrap cannot pick by itself), built by debootstrap,
  # which also works against a mirror whose Release files are past their
  # Valid-Until date.
  profiles=$(mktemp -d)
  sed -e 's/^Include=.*/Include=ca-certificates;locales;mousepad;dbus-x11;/' \
    /usr/local/share/glimpse/profiles/debian-testing.profile > "$profiles/debian-testing.profile"
  cp -r /usr/local/share/glimpse/profiles/hooks "$profiles/"
  GLIMPSE_PROFILES_PATH=$profiles glimpse create debian-testing
  rm -rf "$profiles"
fi
glimpse info host >/dev/null 2>&1 || glimpse create host

echo "== user $user"
id "$user" >/dev/null 2>&1 || useradd -m -s /bin/bash -c "Glimpse screenshots" "$user"
uid=$(id -u "$user")
install -d -o "$user" -g "$user" -m 0700 "/run/user/$uid"
out=$(mktemp -d)
chown "$user:" "$out"
unlock

echo "== scenes"
lock
runuser -u "$user" -- env -i HOME="/home/$user" USER="$user" LOGNAME="$user" SHELL=/bin/bash \
  PATH=/usr/local/bin:/usr/bin:/bin XDG_RUNTIME_DIR="/run/user/$uid" LANG=C.UTF-8 \
  OUT="$out" dbus-run-session -- bash "$here/scenes.sh" 9>&-
unlock

for f in "$out"/*.png; do
  install -m 0644 "$f" "$here/$(basename "$f")"
  echo "wrote $here/$(basename "$f")"
done
rm -rf "$out"
