#!/bin/bash
# The scenes of make-screenshots.sh, run by it as the user glimpse-shots
# inside dbus-run-session: a desktop under Xvfb (openbox, dunst), then one
# PNG per scene into $OUT.  A scene whose parts are missing says so and is
# left out.
# SPDX-License-Identifier: LGPL-2.1-or-later
set -uo pipefail
: "${OUT:?}"
export DISPLAY=:77 GTK_THEME=Adwaita NO_AT_BRIDGE=1
work=$(mktemp -d)
pids=()
cleanup () { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$work"; }
trap cleanup EXIT

bg () { "$@" >>"$work/log" 2>&1 & pids+=($!); }
# wait_for CMD...: until CMD succeeds (10 s at most)
wait_for () { for _ in $(seq 100); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done; return 1; }
# window NAME: the id of the first visible window whose title contains NAME
window () { xdotool search --onlyvisible --name "$1" 2>/dev/null | head -1; }
has_window () { [ -n "$(window "$1")" ]; }
# shot NAME [GEOMETRY]: the screen (or WxH+X+Y of it) as $OUT/NAME.png
shot () {
  sleep 0.7
  import -window root "$work/$1.png"
  if [ -n "${2:-}" ]; then convert "$work/$1.png" -crop "$2" +repage "$OUT/$1.png"
  else cp "$work/$1.png" "$OUT/$1.png"; fi
  echo "scene $1: done"
}
missing () { echo "scene $1: left out: $2"; }

# --- the desktop ---
bg Xvfb :77 -screen 0 1280x800x24 -nolisten tcp
wait_for xdpyinfo || { echo "Xvfb did not start"; cat "$work/log"; exit 1; }
rm -rf ~/Documents ~/versions
mkdir -p ~/.config/dunst ~/.config/jgmenu ~/Documents ~/versions
cat > ~/.config/dunst/dunstrc <<'RC'
[global]
    font = DejaVu Sans 11
    width = 420
    origin = top-right
    offset = 16x16
    frame_width = 1
    frame_color = "#888888"
    format = "<b>%s</b>\n%b"
    show_indicators = yes
    dmenu = /usr/bin/dmenu -p Action: -fn "DejaVu Sans-12"
[urgency_normal]
    background = "#f4f4f4"
    foreground = "#202020"
    timeout = 0
RC
cat > ~/.config/jgmenu/jgmenurc <<'RC'
csv_cmd = lx
tint2_look = 0
font = DejaVu Sans 11
icon_size = 22
item_height = 28
menu_width = 240
color_menu_bg = #f4f4f4 100
color_norm_fg = #202020 100
color_sel_bg = #3584e4 100
color_sel_fg = #ffffff 100
RC
bg openbox
wait_for pgrep -u "$USER" -x openbox
sleep 0.5
xsetroot -solid '#4c6a8c'
bg dunst
printf 'Shopping list\n- coffee\n- paper\n' > ~/Documents/notes.txt
glimpse export >"$work/export.log" 2>&1 || { echo "glimpse export failed:"; cat "$work/export.log"; }

# --- 1. the Applications menu with the Glimpse submenu ---
export XDG_MENU_PREFIX=lxde-
if jgmenu_run lx > "$work/menu.csv" 2>/dev/null && grep -q '^Glimpse,' "$work/menu.csv"; then
  # the position of Glimpse among the top-level entries (those before the first ^tag)
  top=$(awk -F, '/\^tag\(/ { exit } { print $1 }' "$work/menu.csv")
  n=$(printf '%s\n' "$top" | grep -n '^Glimpse$' | cut -d: -f1)
  # the menu opens at the pointer, its first entry under it and selected
  xdotool mousemove 24 24
  bg jgmenu --at-pointer
  wait_for has_window jgmenu
  sleep 1.5
  for _ in $(seq $((n - 1))); do xdotool key Down; sleep 0.1; done
  for k in Right Down Right Down; do xdotool key $k; sleep 0.5; done
  shot menu 1000x220+0+0
  xdotool key Escape Escape Escape
else
  missing menu "jgmenu's lx module does not show a Glimpse entry (see $work/menu.csv)"
fi

# --- 2. the sandbox's Mousepad next to the host's ---
entry=$(ls ~/.local/share/applications/glimpse-debian-testing*mousepad*.desktop 2>/dev/null | head -1)
if [ -n "$entry" ] && command -v mousepad >/dev/null; then
  { echo "This window: the host's Mousepad"; mousepad --version 2>/dev/null | head -1
    grep PRETTY /etc/os-release; } > ~/versions/host.txt
  # written inside the sandbox: the file lands in its layer, the host never sees it
  glimpse run debian-testing -- sh -c '{ echo "This window: Mousepad of sandbox $GLIMPSE_SANDBOX"
    mousepad --version 2>/dev/null | head -1; grep PRETTY /etc/os-release; } > ~/versions/sandbox.txt'
  bg mousepad ~/versions/host.txt
  # started as the menu starts it: the exported entry, through glimpse-launch
  bg gio launch "$entry" ~/versions/sandbox.txt
  wait_for has_window host.txt && wait_for has_window sandbox.txt
  sleep 1
  h=$(window host.txt) s=$(window sandbox.txt)
  xdotool windowsize "$h" 600 360 windowmove "$h" 20 60
  xdotool windowsize "$s" 600 360 windowmove "$s" 650 60
  shot side-by-side 1280x460+0+30
  pkill -u "$USER" -x mousepad
else
  missing side-by-side "no exported Mousepad of sandbox debian-testing"
fi

# --- 3. the file manager's "Open in <sandbox>" ---
if command -v thunar >/dev/null && [ -f ~/.config/Thunar/uca.xml ]; then
  bg thunar ~/Documents
  wait_for has_window Documents
  sleep 1.5
  w=$(window Documents)
  xdotool windowsize "$w" 760 480 windowmove "$w" 40 40
  sleep 0.5
  xdotool windowactivate "$w"; sleep 0.3
  # right-click on notes.txt, the only file: the first icon of the view
  eval "$(xdotool getwindowgeometry --shell "$w")"
  xdotool mousemove $((X + 211)) $((Y + 105)) click 1; sleep 0.3
  xdotool click 3; sleep 1
  # its Glimpse submenu, the last entry but one
  for k in Up Up Right; do xdotool key $k; sleep 0.4; done
  shot file-manager 1000x580+0+0
  xdotool key Escape
  thunar -q 2>/dev/null
else
  missing file-manager "Thunar or its Glimpse actions (~/.config/Thunar/uca.xml) are missing"
fi

# --- 4. an update notification with its actions ---
# The real agent checks the host sandbox against the host's own apt sources
# (whatever the host has not installed yet is an update of the sandbox too).
agent=$(ls /usr/local/libexec/glimpse-session /usr/libexec/glimpse-session 2>/dev/null | head -1)
if [ -n "$agent" ] && glimpse updates --help >/dev/null 2>&1; then
  bg "$agent"
  wait_for glimpse status
  glimpse updates --check host >"$work/updates.log" 2>&1
  sed 's/^/  updates: /' "$work/updates.log" | head -5
  for _ in $(seq 60); do
    [ "$(dunstctl count displayed 2>/dev/null)" != 0 ] && break
    sleep 0.5
  done
  if [ "$(dunstctl count displayed 2>/dev/null)" != 0 ]; then
    # the actions, as dunst offers them: its context menu (dmenu) at the top
    dunstctl context & sleep 1.5
    shot notification 1280x240+0+0
    xdotool key Escape
  else
    missing notification "no notification arrived (glimpse updates --check host: $(head -2 "$work/updates.log" | tr '\n' ' '))"
  fi
else
  missing notification "this Glimpse has no update checks yet (glimpse updates)"
fi
