#!/bin/bash
# test-notify-dunst.sh: an updates notification in a real notification
# daemon — dunst under Xvfb on a private session bus: it arrives, a second
# one for the same sandbox replaces it (one shown, not two), and dunst's
# "actions" capability keeps the command out of the body.  TAP.
# Env: NOTIFY_UPDATES (the built tests/updates/notify-updates).
# SPDX-License-Identifier: LGPL-2.1-or-later
set -u
for tool in Xvfb dunst dunstctl dbus-daemon; do
  if ! command -v "$tool" >/dev/null; then
    echo "1..0 # SKIP $tool is not installed (apt-get install xvfb dunst dbus)"
    exit 0
  fi
done
work=$(mktemp -d)
pids=()
cleanup () { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

# wait_until SECONDS CONDITION: polls; a loaded machine may take long
wait_until () { local end=$((SECONDS + $1)); until eval "$2"; do [ "$SECONDS" -lt "$end" ] || return 1; sleep 0.05; done; }
# a free display Xvfb picks itself and names once it accepts clients
Xvfb -displayfd 3 -screen 0 800x600x24 -nolisten tcp 3>"$work/display" >/dev/null 2>&1 & pids+=($!)
# (a bus that starts nothing: the dunst below is the only notification server)
dbus-daemon --config-file="$(dirname "$0")/../lib/session-bus.conf" --nofork --print-address=1 \
  > "$work/bus" 2>/dev/null & pids+=($!)
wait_until 30 '[ -s "$work/bus" ] && grep -q "^[0-9]" "$work/display"' ||
  { echo "Bail out! Xvfb or the session bus did not start"; exit 1; }
display=:$(head -n1 "$work/display")
export DISPLAY=$display DBUS_SESSION_BUS_ADDRESS=$(head -n1 "$work/bus") HOME=$work XDG_CONFIG_HOME=$work
mkdir -p "$work/dunst"
printf '[global]\n    monitor = 0\n    follow = none\n' > "$work/dunst/dunstrc"
dunst -config "$work/dunst/dunstrc" >/dev/null 2>&1 & pids+=($!)
wait_until 30 'dunstctl is-paused >/dev/null 2>&1' || { echo "Bail out! dunst did not start"; exit 1; }

echo "1..3"
n=0
check () { n=$((n + 1)); if eval "$2"; then echo "ok $n $1"; else echo "not ok $n $1"; sed 's/^/# /' "$work/out" 2>/dev/null; fi; }

"$NOTIFY_UPDATES" sid "Debian unstable" > "$work/out" 2>&1
dunstctl history > "$work/history" 2>&1
wait_until 30 '[ "$(dunstctl count displayed 2>/dev/null)" = 1 ]'
check "dunst shows one notification for the sandbox (the second replaced the first)" \
  '[ "$(dunstctl count displayed)" = 1 ] && [ "$(dunstctl count history)" = 0 ]'
dunstctl close-all
wait_until 30 'dunstctl history > "$work/history"; grep -q "updates for Debian unstable" "$work/history"'
cp "$work/history" "$work/out"
check "it is the replacement: 2 updates for Debian unstable" \
  'grep -q "2 updates for Debian unstable" "$work/history" && ! grep -q "3 updates" "$work/history"'
check "dunst has actions, so the body names no command" \
  'grep -q "pkg1 1.0-1 → 1.0-2" "$work/history" && ! grep -q "sudo glimpse update" "$work/history"'
