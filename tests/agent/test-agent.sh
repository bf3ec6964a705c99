#!/bin/bash
# Integration: glimpse-session, the session agent, as a real process of an
# ordinary user on a private session bus.  Root creates sandboxes, gives
# them applications and removes them while it runs; the user's menu, as
# GNOME's own menu implementation (gnome-menus) builds it, must follow
# within a second.  Also: one agent per bus (and --replace), its
# SandboxesChanged signal, glimpse status, a crash during
# an export repaired by the next start, and no wake-ups while idle.
# Needs root for the set-up.
# SPDX-License-Identifier: LGPL-2.1-or-later
: "${GLIMPSE:?set GLIMPSE to the built glimpse}"
: "${GLIMPSE_SESSION:?set GLIMPSE_SESSION to the built glimpse-session}"
: "${GL_UPDATE_HELPER:?set GL_UPDATE_HELPER to the update helper glimpse-session runs through pkexec}"
source "$(dirname "$0")/../launcher/libtest.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
MENU_PY=$HERE/menu-gmenu.py
for tool in dbus-daemon gdbus; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (apt install dbus libglib2.0-bin)"
done
/usr/bin/python3 -c 'import gi; gi.require_version("GMenu", "3.0")' 2>/dev/null \
  || skip "gnome-menus introspection is missing (apt install gir1.2-gmenu-3.0 python3-gi)"
# The quiet period over which wake-ups are counted (the issue asks for a
# minute; the suite keeps it short).
QUIET=${GL_AGENT_QUIET_SECONDS:-5}

STORE=$GL_TEST_ROOT/agent-store-$$
install -d -o root -g root -m 0755 "$STORE"
xdg=$HOME_A/agent-$$
install -d -o "$GL_USER_A" -g "$GID_A" "$xdg" "$xdg/data" "$xdg/config" "$xdg/sys" "$xdg/sys/menus"
cat > "$xdg/sys/menus/applications.menu" <<'EOF'
<!DOCTYPE Menu PUBLIC "-//freedesktop//DTD Menu 1.0//EN"
 "http://www.freedesktop.org/standards/menu-spec/menu-1.0.dtd">
<Menu>
  <Name>Applications</Name>
  <DefaultAppDirs/>
  <DefaultDirectoryDirs/>
  <DefaultMergeDirs/>
  <Menu><Name>Other</Name><OnlyUnallocated/><Include><All/></Include></Menu>
</Menu>
EOF

AGENT=
BUS_PID=
cleanup_agent () {
  [ -n "$AGENT" ] && kill -9 "$AGENT" 2>/dev/null
  [ -n "$BUS_PID" ] && kill "$BUS_PID" 2>/dev/null
  rm -rf --one-file-system "$STORE" "$xdg"
  gl_cleanup
}
trap cleanup_agent EXIT

# A private session bus of the user, which activates nothing: no
# notification server the machine has (dunst, say) can be started for the
# cases without one below, nor an installed glimpse-session.
as_user "$GL_USER_A" dbus-daemon --config-file="$HERE/../lib/session-bus.conf" --fork --print-address=3 --print-pid=4 \
  3>"$WORK/bus.addr" 4>"$WORK/bus.pid" || skip "cannot start a session bus as $GL_USER_A"
BUS_PID=$(cat "$WORK/bus.pid")
BUS=$(head -n1 "$WORK/bus.addr")
# A terminal emulator that records what it was asked to run.
cat > "$WORK/terminal" <<'EOF'
#!/bin/sh
[ "$1" = -e ] && shift
printf '%s\n' "$@" > "$0.args.tmp" && mv "$0.args.tmp" "$0.args"
EOF
chmod 0755 "$WORK/terminal"
# pkexec, recording what it was asked to run as root (a desktop session:
# DISPLAY set, so Update now takes the polkit path).
install -d -m 1777 "$WORK/bin"
cat > "$WORK/bin/pkexec" <<'EOF'
#!/bin/sh
printf '%s\n' "$@" > "$0.args.tmp" && mv "$0.args.tmp" "$0.args"
EOF
chmod 0755 "$WORK/bin/pkexec"
# The Exec of exported entries must exist, or menu implementations hide them.
GL_EXTRA_ENV="GLIMPSE_TERMINAL=$WORK/terminal PATH=$WORK/bin:/usr/local/bin:/usr/bin:/bin DISPLAY=:7 GLIMPSE_SANDBOX_DIR=$STORE XDG_DATA_HOME=$xdg/data XDG_CONFIG_HOME=$xdg/config \
XDG_CONFIG_DIRS=$xdg/sys XDG_DATA_DIRS=/nonexistent DBUS_SESSION_BUS_ADDRESS=$BUS \
GLIMPSE_LAUNCHER=$GL_LAUNCHER GLIMPSE_BIN=$GLIMPSE GSETTINGS_BACKEND=keyfile \
GLIMPSE_UPDATES_CHECK=${GLIMPSE_UPDATES_CHECK:-}"

now_ms () { date +%s%3N; }
# wait_for TIMEOUT_MS COMMAND...: polls (the test, not the agent) every 10 ms;
# sets WAITED to the milliseconds it took.
wait_for () {
  local limit=$1 start; shift
  start=$(now_ms)
  while :; do
    if "$@"; then WAITED=$(( $(now_ms) - start )); return 0; fi
    WAITED=$(( $(now_ms) - start ))
    [ "$WAITED" -ge "$limit" ] && return 1
    sleep 0.01
  done
}
menu () { as_user "$GL_USER_A" /usr/bin/python3 "$MENU_PY" 2>/dev/null | grep 'glimpse-'; }
# (not grep -q on the pipe: an early exit would fail the pipeline)
in_menu () { menu > "$WORK/menu.out"; grep -qxF "$1" "$WORK/menu.out"; }
not_in_menu () { menu > "$WORK/menu.out"; ! grep -qF "$1" "$WORK/menu.out"; }
exported () { [ -f "$xdg/data/applications/glimpse-$1+$2" ]; }
not_exported () { [ ! -e "$xdg/data/applications/glimpse-$1+$2" ]; }

# new_sandbox ID NAME: made aside and renamed into the store, as glimpse create does.
new_sandbox () {
  local tmp=$STORE/.creating-$1
  install -d -m 0755 "$tmp" "$tmp/rootfs" "$tmp/rootfs/usr/share/applications" "$tmp/users"
  gl_sandbox_conf test "$2" rootfs apk > "$tmp/sandbox.conf"
  mv -T "$tmp" "$STORE/$1"
}
# app ID DIR DESKTOP-ID NAME: a desktop entry, written in place (as dpkg would, via a temporary name)
app () {
  mkdir -p "$2"
  printf '[Desktop Entry]\nType=Application\nName=%s\nExec=/usr/bin/%s %%F\nCategories=Utility;\nIcon=%s\n' \
    "$4" "${3%.desktop}" "${3%.desktop}" > "$2/.$3.tmp"
  mv -f "$2/.$3.tmp" "$2/$3"
}
apps_of () { echo "$STORE/$1/rootfs/usr/share/applications"; }
# generation ID N: switches system/current to N (made before, as the contract says)
generation () {
  printf '%s\n' "$2" > "$STORE/$1/system/current.tmp"
  mv -f "$STORE/$1/system/current.tmp" "$STORE/$1/system/current"
}

# A notification server on the bus (spec-complete, in the test).
NOTES=$WORK/notifications.log
: > "$NOTES"; chmod 0666 "$NOTES"
as_user "$GL_USER_A" /usr/bin/python3 "$HERE/notification-server.py" "$NOTES" > "$WORK/notify-server.log" 2>&1 &
notes_ready () { grep -q '"ready"' "$NOTES"; }
wait_for 30000 notes_ready || skip "the test notification server did not start: $(cat "$WORK/notify-server.log")"
# last_note FIELD: of the last notification shown
last_note () { grep '"summary"' "$NOTES" | tail -n 1 | /usr/bin/python3 -c 'import json, sys; print(json.loads(sys.stdin.read())[sys.argv[1]])' "$1"; }
n_notes () { grep -c '"summary"' "$NOTES"; }
more_notes () { [ "$(n_notes)" -gt "$n0" ]; }

ctxt () { awk '/^voluntary_ctxt_switches|^nonvoluntary_ctxt_switches/ { n += $2 } END { print n }' "/proc/$1/status"; }
rss_kb () { awk '/^VmRSS/ { print $2 }' "/proc/$1/status"; }
bus () { as_user "$GL_USER_A" gdbus call --session "$@"; }
# The agent's process id, from the bus: the owner of its name.
agent_pid () {
  bus --dest org.freedesktop.DBus --object-path /org/freedesktop/DBus \
    --method org.freedesktop.DBus.GetConnectionUnixProcessID org.glimpse.Session1 2>/dev/null \
    | sed -n 's/^(uint32 \([0-9]*\),)$/\1/p'
}
have_agent () { AGENT=$(agent_pid); [ -n "$AGENT" ]; }
start_agent () {
  as_user "$GL_USER_A" "$GLIMPSE_SESSION" --verbose >> "$WORK/agent.log" 2>&1 &
  wait_for 30000 have_agent || { fail "the agent did not take its bus name"; finish; exit 1; }
}

A=ag$$-a; B=ag$$-b
new_sandbox "$A" "Alpha"
app "$A" "$(apps_of "$A")" org.example.One.desktop "One"

as_user "$GL_USER_A" "$GLIMPSE" status > "$WORK/status.out" 2>&1; rc=$?
check_sh "glimpse status without an agent: exit 3" '[ $rc -eq 3 ]'
check "… and says how to start it" grep -q "systemctl --user start glimpse-session" "$WORK/status.out"
check "… and neither blames the bus (there is one) nor quotes GDBus" \
  not grep -q -e "No session bus" -e "G_DBUS\|proxy" "$WORK/status.out"

start_agent
check "the first sync exports the sandbox there is" wait_for 30000 exported "$A" org.example.One.desktop
check "gnome-menus shows it under Glimpse › its name" wait_for 10000 in_menu "Glimpse/Alpha	glimpse-$A+org.example.One.desktop"
check "the agent runs as the user" [ "$(stat -c %u "/proc/$AGENT")" = "$UID_A" ]

as_user "$GL_USER_A" timeout 10 "$GLIMPSE_SESSION" > "$WORK/second.out" 2>&1; rc=$?
check_sh "a second agent exits quietly (status 0, no output)" '[ $rc -eq 0 ] && [ ! -s "$WORK/second.out" ]'
check "… and the first keeps running" kill -0 "$AGENT"

as_user "$GL_USER_A" "$GLIMPSE" status > "$WORK/status.out" 2>&1; rc=$?
check_sh "glimpse status asks the running agent" '[ $rc -eq 0 ] && grep -q "^$A (Alpha)" "$WORK/status.out" && grep -q "menu: exported, 1 application" "$WORK/status.out"'
sed 's/^/# /' "$WORK/status.out"

# A sandbox created by root while the agent runs (the agent's signals
# recorded meanwhile: SandboxesChanged names it)
as_user "$GL_USER_A" gdbus monitor --session --dest org.glimpse.Session1 > "$WORK/signals.log" 2>&1 &
MONITOR=$!
monitoring () { grep -q 'org.glimpse.Session1' "$WORK/signals.log"; }
wait_for 10000 monitoring
new_sandbox "$B" "Beta"
app "$B" "$(apps_of "$B")" org.example.Two.desktop "Two"
check "a sandbox created by root is in the menu within 1 s" wait_for 1000 exported "$B" org.example.Two.desktop
echo "# created: exported after ${WAITED} ms"
changed_b () { grep 'SandboxesChanged' "$WORK/signals.log" | grep -qF "'$B'"; }
check "… and the agent signals SandboxesChanged naming it" wait_for 10000 changed_b
kill "$MONITOR" 2>/dev/null; wait "$MONITOR" 2>/dev/null
grep SandboxesChanged "$WORK/signals.log" | head -n 3 | sed 's/^/# signal: /'
check "… as gnome-menus sees it" wait_for 10000 in_menu "Glimpse/Beta	glimpse-$B+org.example.Two.desktop"

# An application installed into a sandbox.
app "$A" "$(apps_of "$A")" org.example.Three.desktop "Three"
check "an app added to a sandbox is in the menu within 1 s" wait_for 1000 exported "$A" org.example.Three.desktop
echo "# added: exported after ${WAITED} ms"
check "only that sandbox was exported again" sh -c "grep 'Exported ' '$WORK/agent.log' | tail -n 1 | grep -q 'Exported 1 sandbox(es), removed 0'"

# A directory that appears later: the first app of a new subdirectory.
app "$A" "$(apps_of "$A")/kde4" kapp.desktop "KApp"
check "an app in a new subdirectory is exported within 1 s" wait_for 1000 exported "$A" kde4-kapp.desktop

# A package operation: a new system generation made aside, then system/current switched.
install -d -m 0755 "$STORE/$A/system" "$STORE/$A/system/1" "$STORE/$A/system/1/tree"
app "$A" "$STORE/$A/system/1/tree/usr/share/applications" org.example.Gen1.desktop "Gen One"
sleep 0.3
check "an app of a generation not yet current is not exported" not_exported "$A" org.example.Gen1.desktop
generation "$A" 1
check "switching system/current to it exports its app within 1 s" wait_for 1000 exported "$A" org.example.Gen1.desktop
echo "# generation 1: exported after ${WAITED} ms"
install -d -m 0755 "$STORE/$A/system/2" "$STORE/$A/system/2/tree"
app "$A" "$STORE/$A/system/2/tree/usr/share/applications" org.example.Gen2.desktop "Gen Two"
generation "$A" 2
check "the next generation's app is exported within 1 s" wait_for 1000 exported "$A" org.example.Gen2.desktop
check "… and the one only the old generation had is gone" not_exported "$A" org.example.Gen1.desktop
n_exports () { grep -c 'Exported ' "$WORK/agent.log"; }
# (counted from when the exports of the switch are over, however long they took)
exports_settled () { local a; a=$(n_exports); sleep 0.5; [ "$(n_exports)" = "$a" ]; }
gl_wait 30 exports_settled; before=$(n_exports)
app "$A" "$STORE/$A/system/1/tree/usr/share/applications" org.example.Old.desktop "Old"
sleep 1
check_sh "a change to an old generation wakes nothing (no export)" '[ "$(n_exports)" -eq "$before" ]'
rm -rf "$STORE/$A/system/1"
app "$A" "$STORE/$A/system/2/tree/usr/share/applications" org.example.Gen3.desktop "Gen Three"
check "the current generation is still watched" wait_for 10000 exported "$A" org.example.Gen3.desktop

# Changes the agent exports from the directories they were in (the rest
# taken as the last export found it): each must still be seen.
# A change in the base where the system layer's entry shadows it: the
# system layer's stays; then the system layer's changes.
gl_wait 30 exports_settled
app "$A" "$(apps_of "$A")" org.example.Gen3.desktop "Base Three"
gl_wait 30 exports_settled
check "a change of a shadowed entry leaves the export as it was" \
  grep -q '^Name=Gen Three' "$xdg/data/applications/glimpse-$A+org.example.Gen3.desktop"
app "$A" "$STORE/$A/system/2/tree/usr/share/applications" org.example.Gen3.desktop "Gen Three again"
in_export () { grep -q "^Name=$3" "$xdg/data/applications/glimpse-$1+$2"; }
check "… and a change of the entry that shadows it is exported within 1 s" \
  wait_for 1000 in_export "$A" org.example.Gen3.desktop "Gen Three again"
# An icon changed, nothing else.
icons_a=$STORE/$A/rootfs/usr/share/icons/hicolor/48x48/apps
icon_out=$xdg/data/icons/hicolor/48x48/apps/glimpse-$A+org.example.Three.png
mkdir -p "$icons_a"
head -c 2048 /dev/urandom > "$icons_a/.three.tmp" && mv -f "$icons_a/.three.tmp" "$icons_a/org.example.Three.png"
check "an icon added is exported" wait_for 10000 test -f "$icon_out"
gl_wait 30 exports_settled
head -c 2048 /dev/urandom > "$icons_a/.three.tmp" && mv -f "$icons_a/.three.tmp" "$icons_a/org.example.Three.png"
check "an icon changed (nothing else) is exported again within 1 s" \
  wait_for 1000 cmp -s "$icons_a/org.example.Three.png" "$icon_out"
# Events lost: the kernel's queue overflows while the agent is stopped (two
# files of another sandbox opened for writing and closed, over and over,
# which changes nothing there), then an entry of this one changes, its
# events dropped: the agent looks at everything of every sandbox again.
apps_b=$(apps_of "$B")
: > "$apps_b/flood-a"; : > "$apps_b/flood-b"
gl_wait 30 exports_settled
kill -STOP "$AGENT"
for _ in $(seq $(( $(cat /proc/sys/fs/inotify/max_queued_events) / 2 + 1000 ))); do
  : >> "$apps_b/flood-a"; : >> "$apps_b/flood-b"
done
app "$A" "$(apps_of "$A")" org.example.Three.desktop "Three after the overflow"
kill -CONT "$AGENT"
check "after the kernel dropped events, a change among them is exported" \
  wait_for 20000 in_export "$A" org.example.Three.desktop "Three after the overflow"

# A half-written entry, then completed.
printf '[Desktop Entry]\nType=Appl' > "$(apps_of "$A")/org.example.Half.desktop"
sleep 0.5
check "a half-written entry is not exported" not_exported "$A" org.example.Half.desktop
check "… and the agent is alive" kill -0 "$AGENT"
printf '[Desktop Entry]\nType=Application\nName=Half\nExec=/usr/bin/half\n' > "$(apps_of "$A")/org.example.Half.desktop"
check "… once complete it is exported within 1 s" wait_for 1000 exported "$A" org.example.Half.desktop

# An app removed.
rm -f "$(apps_of "$A")/org.example.One.desktop"
check "an app removed from a sandbox leaves the menu within 1 s" wait_for 1000 not_exported "$A" org.example.One.desktop
check "… and gnome-menus no longer has it" wait_for 10000 not_in_menu "glimpse-$A+org.example.One.desktop"

# A flood: a 300-package upgrade rewriting every entry, in a burst.
for i in $(seq 300); do app "$B" "$(apps_of "$B")" "org.example.Flood$i.desktop" "Flood $i"; done &
flood=$!
for i in $(seq 100); do rm -f "$(apps_of "$B")/org.example.Flood$((i * 3)).desktop"; done
wait $flood
for i in $(seq 100); do rm -f "$(apps_of "$B")/org.example.Flood$((i * 3)).desktop"; done
count_b () { [ "$(ls "$xdg/data/applications" | grep -c "^glimpse-$B+org.example.Flood")" -eq 200 ]; }
# (the 1 s of a single change does not hold for a burst: each export of it
# writes hundreds of files; what matters is that the menu ends right)
check "after a flood of 400 changes the menu is right" wait_for 60000 count_b
echo "# flood: settled after ${WAITED} ms"
check "… and the agent is alive" kill -0 "$AGENT"

# The sandbox removed by root (as gl_sandbox_remove: renamed away, then deleted).
mv -T "$STORE/$B" "$STORE/.removing-$B" && rm -rf --one-file-system "$STORE/.removing-$B"
check "a sandbox removed by root leaves the menu within 1 s" wait_for 1000 not_exported "$B" org.example.Two.desktop
echo "# removed: gone after ${WAITED} ms"
no_b () { ! ls "$xdg/data/applications" "$xdg/data/desktop-directories" | grep_quiet "glimpse-$B"; }
check "… with everything it exported" wait_for 10000 no_b
check "… and gnome-menus has no Beta" wait_for 10000 not_in_menu "Glimpse/Beta"

# D-Bus: the interface as described in the XML.
bus --dest org.glimpse.Session1 --object-path /org/glimpse/Session1 \
  --method org.glimpse.Session1.ListSandboxes > "$WORK/list.out" 2>&1
sed 's/^/# /' "$WORK/list.out"
check "ListSandboxes lists the sandbox with its export state" \
  grep -q "('$A', {'name': <'Alpha'>, 'export-state': <'exported'>, 'apps': <uint32 5>" "$WORK/list.out"
check "… and not the removed one" not grep -q "'$B'" "$WORK/list.out"
check "Refresh([]) succeeds" bus --dest org.glimpse.Session1 \
  --object-path /org/glimpse/Session1 --method org.glimpse.Session1.Refresh '[]' > /dev/null

# The control entries of the sandbox's submenu.
check "the control entries are exported and gnome-menus shows them in the submenu" \
  wait_for 10000 in_menu "Glimpse/Alpha	glimpse-$A+.terminal.desktop"
check "… both" in_menu "Glimpse/Alpha	glimpse-$A+.control.desktop"
ctl=$xdg/data/applications/glimpse-$A+.control.desktop
check "\"Alpha\" has the actions Update now, Show my changes, Purge, Hide" \
  grep -qx "Actions=update;show-changes;purge;hide;" "$ctl"
check "… each running glimpse control" grep -qx "Exec=$GLIMPSE control $A purge" "$ctl"
check "\"Terminal in Alpha\" is its name" grep -qx "Name=Terminal in Alpha" "$xdg/data/applications/glimpse-$A+.terminal.desktop"

# They run what the entries run: glimpse control ID ACTION, as the user.
ctl () { as_user "$GL_USER_A" "$GLIMPSE" control "$A" "$1"; }
have_args () { [ -f "$WORK/terminal.args" ]; }
check "Terminal in: glimpse control ID terminal" ctl terminal
check "… starts the terminal" wait_for 20000 have_args
check_sh "… running glimpse run ID there" 'sed -n 2,3p "$WORK/terminal.args" | tr "\n" " " | grep_quiet -x "run $A "'
rm -f "$WORK/terminal.args"
n0=$(n_notes)
check "Update now" ctl update
# No polkit authority answers here (no system bus): Update now runs
# "sudo glimpse update ID" in the user's terminal instead of pkexec (the
# polkit path is tested in tests/updates/test-agent-updates.py).
check "… with no polkit authority, opens the terminal" wait_for 20000 have_args
check_sh "… running sudo glimpse update ID there" \
  'grep -q "sudo.* update " "$WORK/terminal.args" && [ "$(tail -n 1 "$WORK/terminal.args")" = "$A" ]'
check_sh "… and not pkexec" '[ ! -e "$WORK/bin/pkexec.args" ]'
rm -f "$WORK/terminal.args"

# Show my changes: counts in a notification.
layer=$STORE/$A/users/$UID_A
install -d -o "$GL_USER_A" -g "$GID_A" "$layer" "$layer/home" "$layer/home/upper" "$layer/home/work"
echo mine > "$layer/home/upper/made-in-sandbox-$$.txt"; chown "$GL_USER_A:" "$layer/home/upper/made-in-sandbox-$$.txt"
n0=$(n_notes)
check "Show my changes" ctl show-changes
check "… shows a notification" wait_for 20000 more_notes
check_sh "… with the count of changes" 'last_note body | grep_quiet "^1 added, 0 modified"'
last_note body | sed 's/^/# notification: /'
# Purge my changes: asks first; Cancel keeps them, Purge drops them.
n0=$(n_notes)
check "Purge my changes" ctl purge
check "… asks first, in a notification" wait_for 20000 more_notes
check_sh "… with Purge and Cancel" '[ "$(last_note actions)" = "['"'"'purge'"'"', '"'"'cancel'"'"']" ]'
nid=$(last_note id)
check "… nothing purged before the answer" [ -f "$layer/home/upper/made-in-sandbox-$$.txt" ]
invoke () { bus --dest org.freedesktop.Notifications --object-path /org/freedesktop/Notifications \
              --method org.glimpse.Test.Notifications.Invoke "$1" "$2" > /dev/null; }
check "Cancel" invoke "$nid" cancel
sleep 0.3
check "… keeps the changes" [ -f "$layer/home/upper/made-in-sandbox-$$.txt" ]
n0=$(n_notes); ctl purge; wait_for 20000 more_notes; nid=$(last_note id); n0=$(n_notes)
check "Purge" invoke "$nid" purge
purged () { [ ! -e "$layer/home/upper/made-in-sandbox-$$.txt" ]; }
check "… drops them" wait_for 30000 purged
check "… and says so" wait_for 20000 more_notes
check_sh "… done" 'last_note summary | grep_quiet "are purged"'
# Hide from menu, and back with glimpse export.
check "Hide from menu" ctl hide
check "… takes the sandbox out of the menu" wait_for 10000 not_in_menu "Glimpse/Alpha"
as_user "$GL_USER_A" "$GLIMPSE" status > "$WORK/status.out" 2>&1
check "… glimpse status says hidden" grep -q "menu: hidden" "$WORK/status.out"
check "glimpse export ID brings it back" as_user "$GL_USER_A" "$GLIMPSE" export --quiet "$A"
shown_again () { as_user "$GL_USER_A" "$GLIMPSE" status 2>&1 | grep_quiet "menu: exported"; }
check "… and the agent follows (it watches the user's choice)" wait_for 10000 shown_again
as_user "$GL_USER_A" "$GLIMPSE" control "$A" frobnicate > "$WORK/ctl.out" 2>&1; rc=$?
check_sh "an unknown action is refused: exit 2 (a bad command line)" '[ $rc -eq 2 ] && grep -q "Unknown action" "$WORK/ctl.out"'
as_user "$GL_USER_A" "$GLIMPSE" control nosuch-$$ hide > "$WORK/ctl.out" 2>&1; rc=$?
check_sh "an unknown sandbox: exit 3, as glimpse(1) says" '[ $rc -eq 3 ] && grep -q "No sandbox “nosuch-$$”" "$WORK/ctl.out"'

# Idle: nothing happens, nothing wakes the agent (counted from when what the
# last steps started is over: no context switch for a second)
idle_now () { local a; a=$(ctxt "$AGENT"); sleep 1; [ "$(ctxt "$AGENT")" = "$a" ]; }
gl_wait 30 idle_now
c0=$(ctxt "$AGENT")
sleep "$QUIET"
c1=$(ctxt "$AGENT")
check_sh "no context switches over ${QUIET} s of quiet ($c0 -> $c1)" '[ "$c1" -eq "$c0" ]'
echo "# agent resident memory: $(rss_kb "$AGENT") kB"
# the HTTP client and its TLS stack (megabytes resident, loaded and set up
# at start) belong to glimpse-updates-check, never to the agent
tls_mapped () { grep -E '/lib(curl|ssl|crypto|gnutls)[.-]' "/proc/$AGENT/maps"; }
check_sh "the agent maps no HTTP or TLS library" '! tls_mapped'

# kill -9 in the middle of an export, then a restart repairs the menu.
for i in $(seq 200); do app "$A" "$(apps_of "$A")" "org.example.Crash$i.desktop" "Crash $i"; done
n_crash () { ls "$xdg/data/applications" | grep -c "^glimpse-$A+org.example.Crash.*\.desktop$"; }
# the moment the first entries appear, the agent is writing the others
some_crash () { [ "$(n_crash)" -gt 0 ]; }
wait_for 30000 some_crash
kill -9 "$AGENT"
gone () { [ ! -e "/proc/$AGENT" ]; }
wait_for 20000 gone
as_user "$GL_USER_A" "$GLIMPSE" status > "$WORK/status.out" 2>&1; rc=$?
check_sh "glimpse status after the agent was killed: exit 3, not running, how to start it" \
  '[ $rc -eq 3 ] && grep -q "agent is not running" "$WORK/status.out" && grep -q "systemctl --user start" "$WORK/status.out"'
check "… and no word of a missing bus or of GDBus" not grep -q -e "No session bus" -e "G_DBUS\|proxy" "$WORK/status.out"
crashed=$(n_crash)
echo "# killed with $crashed of 200 entries exported"
rm -f "$(apps_of "$A")/org.example.Three.desktop"
start_agent
all_crash () { [ "$(n_crash)" -eq 200 ]; }
check "after kill -9 and a restart every entry is exported" wait_for 60000 all_crash
echo "# repaired after ${WAITED} ms"
check "… and what went meanwhile is gone" wait_for 10000 not_exported "$A" org.example.Three.desktop
check "… and gnome-menus agrees" wait_for 10000 in_menu "Glimpse/Alpha	glimpse-$A+org.example.Crash17.desktop"
# (a write cut short by the kill may leave its temporary file: not a menu entry)
ls -a "$xdg/data/applications" | grep -v '\.desktop$' | grep -vx -e . -e .. -e mimeinfo.cache | sed 's/^/# left by the kill: /'

# --replace takes over; the agent that lost its name quits
OLD=$AGENT
as_user "$GL_USER_A" "$GLIMPSE_SESSION" --replace --verbose >> "$WORK/agent.log" 2>&1 &
replaced () { have_agent && [ "$AGENT" != "$OLD" ]; }
check "an agent started with --replace takes the bus name" wait_for 30000 replaced
old_gone () { [ ! -e "/proc/$OLD" ]; }
check_sh "… and the one it replaced quits (it lost its name)" \
  'wait_for 20000 old_gone && grep -q "was taken over by another agent; quitting" "$WORK/agent.log"'

# No notification server: an action whose answer is a notification fails,
# and glimpse control prints the answer and why it was not shown.  (The
# server's process, from the bus; the bus can start no other.)
check "(the test's bus can start no notification server)" \
  not grep_quiet org.freedesktop.Notifications < <(bus --dest org.freedesktop.DBus \
    --object-path /org/freedesktop/DBus --method org.freedesktop.DBus.ListActivatableNames)
notes_pid=$(bus --dest org.freedesktop.DBus --object-path /org/freedesktop/DBus \
  --method org.freedesktop.DBus.GetConnectionUnixProcessID org.freedesktop.Notifications \
  | sed -n 's/^(uint32 \([0-9]*\),)$/\1/p')
[ -n "$notes_pid" ] && kill "$notes_pid"
no_notes () { bus --dest org.freedesktop.DBus --object-path /org/freedesktop/DBus \
                --method org.freedesktop.DBus.NameHasOwner org.freedesktop.Notifications | grep_quiet false; }
wait_for 20000 no_notes
install -d -o "$GL_USER_A" -g "$GID_A" "$layer" "$layer/home" "$layer/home/upper" "$layer/home/work"
echo mine > "$layer/home/upper/kept-$$.txt"; chown "$GL_USER_A:" "$layer/home/upper/kept-$$.txt"
as_user "$GL_USER_A" "$GLIMPSE" control "$A" show-changes > "$WORK/ctl.out" 2>&1; rc=$?
check_sh "Show my changes without a notification server: exit 1, the answer and why on stderr" \
  '[ $rc -eq 1 ] && grep -q "Your changes in Alpha: 1 added, .* but no notification could be shown" "$WORK/ctl.out"'
sed 's/^/# /' "$WORK/ctl.out"
as_user "$GL_USER_A" "$GLIMPSE" control "$A" purge > "$WORK/ctl.out" 2>&1; rc=$?
check_sh "Purge without a notification server: exit 1, nothing purged, glimpse purge named" \
  '[ $rc -eq 1 ] && grep -q "Nothing purged in Alpha: cannot ask in a notification" "$WORK/ctl.out" \
   && grep -q "glimpse purge $A" "$WORK/ctl.out" && [ -f "$layer/home/upper/kept-$$.txt" ]'

# SIGTERM: a clean exit.
kill -TERM "$AGENT"
wait_for 20000 gone; rc=$?
check_sh "SIGTERM ends the agent, saying so" '[ $rc -eq 0 ] && grep -q "Terminated; quitting" "$WORK/agent.log"'

grep -E 'Exported|Owning' "$WORK/agent.log" | tail -n 8 | sed 's/^/# agent: /'
finish
