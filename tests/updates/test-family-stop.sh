#!/bin/bash
# Integration: the update check of a dnf, pacman or apk sandbox stopped
# while the family's tool fetches from a repository that drips, as the
# agent stops a check that passes CheckTimeout= (gl-updates-schedule.c:
# SIGTERM to glimpse-updates-check, SIGKILL 5 s later; the agent then
# records its timeout error for any answer but a good one).
#
# The real glimpse-updates-check, as an ordinary user, through the setuid
# test launcher, against tests/updates/dripserver.py on 127.0.0.1.  Per
# family: the tool is fetching (a connection open at the server); SIGTERM
# to the check; then, within the agent's 5 s grace: the check has ended
# (no SIGKILL needed), nothing of the user's runs any more (the launcher,
# the tool and its children, the view), the connection is closed, the
# check's answer is a failure (never a list: the agent would take it),
# its cache and the sandbox's system layer are untouched.  Each family
# twice: while an app of the user holds the sandbox's view, which the
# check's launch joins (its PID 1 stays up: only signals end the tool),
# and in a view of its own.
# dnf is the real dnf over the host.  checkupdates (pacman-contrib) and apk
# are not packaged for this Debian: stand-ins with their shape of
# processes - checkupdates a script whose child fetches (pacman -Sy
# there), apk one process that fetches.
# Needs root for the set-up.
# SPDX-License-Identifier: LGPL-2.1-or-later
: "${GLIMPSE_UPDATES_CHECK:?set GLIMPSE_UPDATES_CHECK to the built glimpse-updates-check}"
source "$(dirname "$0")/../launcher/libtest.sh"
source "$(dirname "$0")/../lib/dnf-tree.sh"
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'from gi.repository import GLib' 2>/dev/null ||
  skip "python3-gi is not installed (apt-get install python3-gi): the check's answer cannot be read"
gl_install_setuid
GL_EXTRA_ENV="GLIMPSE_LAUNCHER=$LAUNCH"
install -m 0755 "$GLIMPSE_UPDATES_CHECK" "$WORK/glimpse-updates-check"

coproc DRIP { exec python3 "$(dirname "$0")/dripserver.py"; }
read -r PORT <&"${DRIP[0]}"
[ -n "$PORT" ] || { echo "Bail out! the drip server did not start"; exit 1; }
URL=http://127.0.0.1:$PORT
# "OPEN CLOSED": the server's connections
counts () { python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode().strip())' "$URL/__counts"; }
# the outcome of the check's answer (gl-updates-result.h: 0 ok, 3 failed)
# and its number of updates; "none" when it wrote none.  outcome FILE
# message: its message too, on a line of its own
outcome () {
  /usr/bin/python3 - "$@" <<'PY'
import sys
from gi.repository import GLib
data = open(sys.argv[1], "rb").read()
if not data:
    print("none")
else:
    v = GLib.Variant.new_from_bytes(GLib.VariantType("(uusa(sssssbb))"), GLib.Bytes.new(data), False)
    print(v[0], len(v[3]))
    if len(sys.argv) > 2:
        print(v[2])
PY
}
# the test user's processes but those in $before (of no case of ours)
user_procs () { pgrep -u "$UID_A" | grep -vxF -f <(tr ' ' '\n' <<< "$before" | grep .) | tr '\n' ' '; }
no_user_procs () { [ -z "$(user_procs)" ]; }
# the case's processes, a line each: PID PPID COMMAND
show_procs () { local p; for p in $(user_procs); do ps -o pid=,ppid=,args= -p "$p"; done; }
fetching () { local c; c=$(counts); [ "${c%% *}" -ge 1 ]; }
none_open () { local c; c=$(counts); [ "${c%% *}" = 0 ]; }

# stop_case FAMILY ID TOOL [joined|joined-again]: the case, on sandbox ID whose TOOL
# fetches; "joined": while an app of the user holds the sandbox's view,
# which the check's launch then joins (the view and its PID 1 stay)
stop_case () {
  local fam=$1 id=$2 tool=$3 tree=$GL_STORE/$2/system/1/tree pid t0 t1 rc left got what sub
  local holder="" held_app="" held_ns="" p in_view=""
  case ${4:-} in joined*)
    fam="$fam (${4})"
    as_user "$GL_USER_A" "$LAUNCH" "$id" -- /bin/sh -c 'touch /tmp/gl-stop-held; exec sleep 307' &
    holder=$!
    held_app=$(gl_wait_pid "$GL_USER_A" '^sleep 307$') && gl_wait 30 [ -e "$GL_STORE/$id/users/$UID_A/tmp/upper/gl-stop-held" ] &&
      held_ns=$(readlink /proc/"$held_app"/ns/mnt)
    [ -n "$held_ns" ] || { fail "$fam: an app holds the view"; return; }
  esac
  local cache=$WORK/cache-$1${4:-} out=$WORK/out-$1${4:-} err=$WORK/err-$1${4:-}
  local sums_before; sums_before=$(gl_tree_sums "$tree")
  install -d -o "$GL_USER_A" -m 0700 "$cache"
  before=$(pgrep -u "$UID_A" | tr '\n' ' ')
  as_user "$GL_USER_A" "$WORK/glimpse-updates-check" "$GL_STORE" "$cache" "$id" > "$out" 2> "$err" &
  sub=$!
  # (the check itself, not the shell that as_user runs in, nor its
  # watchdog: a later fork of it)
  pid=$(gl_wait_pid "$GL_USER_A" "^$WORK/glimpse-updates-check $GL_STORE $cache $id\$") &&
    pid=$(pgrep -o -u "$UID_A" -f "^$WORK/glimpse-updates-check $GL_STORE $cache $id\$")
  if [ -n "$pid" ] && gl_wait 60 fetching; then
    echo "# $fam: fetching (connections open, closed: $(counts)); the case's processes:"
    show_procs | sed 's/^/#   /'
    if [ -n "$held_ns" ]; then
      for p in $(user_procs); do [ "$(readlink /proc/"$p"/ns/mnt)" = "$held_ns" ] && in_view=$p; done
      check_sh "$fam: the check's launch joined the view the app holds ($held_ns)" '[ -n "$in_view" ]'
    fi
    t0=$(date +%s%N)
    kill -TERM "$pid"
    # (the agent's grace: SIGKILL after 5 s)
    if gl_wait 5 not kill -0 "$pid" 2>/dev/null; then
      t1=$(date +%s%N); wait "$sub"; rc=$?
      ok "$fam: SIGTERM ends the check within the agent's grace ($(( (t1 - t0) / 1000000 )) ms, exit $rc)"
    else
      fail "$fam: SIGTERM ends the check within the agent's grace (5 s): still running, killed"
      kill -KILL "$pid"; wait "$sub"
    fi
    what="$fam: nothing of the check runs any more (launcher, $tool and its children, the view)"
    if gl_wait 5 no_user_procs; then ok "$what"; else fail "$what ($(user_procs))"; show_procs | sed 's/^/#   /'; fi
    what="$fam: its connection to the repository is closed"
    if gl_wait 5 none_open; then ok "$what"; else fail "$what (connections open, closed: $(counts))"; fi
    got=$(outcome "$out")
    check_sh "$fam: its answer is a failure or none, never a list, so the agent records its timeout error (answer: $got)" \
      '[ "$got" = none ] || [ "$got" = "3 0" ]'
    check_sh "$fam: the check's cache and the sandbox's system layer are untouched" \
      '[ -z "$(ls -A "$cache")" ] && [ "$(gl_tree_sums "$tree")" = "$sums_before" ]'
  else
    fail "$fam: $tool is fetching from the dripping repository (connections open, closed: $(counts))"
    { cat "$err"; outcome "$out" message; show_procs
      find "$GL_STORE/$id/users" -name '*lock*' -type f -exec sh -c 'echo "$1: $(head -c 100 "$1")"' sh {} \; 2>/dev/null
    } | sed 's/^/#   /'
    [ -z "$pid" ] || kill -KILL "$pid"; wait "$sub"
  fi
  # what the case left behind would go on fetching: not into the next
  left=$(user_procs)
  [ -z "$left" ] || { kill -KILL $left 2>/dev/null; gl_wait 10 no_user_procs; }
  gl_wait 10 none_open
  if [ -n "$holder" ]; then
    [ -z "$held_app" ] || kill "$held_app"
    wait "$holder"
  fi
}

# --- dnf: the real one, over the host
if command -v dnf >/dev/null && command -v rpm >/dev/null; then
  id=stop-dnf-$$
  gl_make_sandbox "$id" host dnf
  tree=$GL_STORE/$id/system/1/tree
  gl_dnf_tree "$tree" glimpse-drip "$URL/rpms"
  stop_case dnf "$id" dnf joined
  # (a dnf stopped by SIGTERM leaves its metadata lock behind, naming its
  # pid in its view: 2 in a view of its own.  The next check, joined to a
  # view where pid 2 is an app, must not wait on it)
  stop_case dnf "$id" dnf
  stop_case dnf "$id" dnf joined-again
else
  skip_case "dnf: stopped while fetching" "dnf or rpm is not installed (apt-get install dnf rpm)"
fi

# stand_in ID FAMILY TOOL MIRROR: a busybox sandbox of FAMILY whose
# /usr/bin/TOOL is the script on standard input, and /etc/glimpse-test-mirror
# names MIRROR, a path on the dripping server
stand_in () {
  local tree=$GL_STORE/$1/system/1/tree
  gl_make_sandbox "$1" rootfs "$2"
  mkdir -p "$tree/usr/bin" "$tree/etc"
  echo "$URL$4" > "$tree/etc/glimpse-test-mirror"
  cat > "$tree/usr/bin/$3"
  chmod 0755 "$tree/usr/bin/$3"
}

# --- pacman: checkupdates, a script whose child fetches
stand_in stop-pac-$$ pacman checkupdates /core/os/x86_64 <<'SH'
#!/bin/sh
# stands in for pacman-contrib's checkupdates: its child fetches
wget -q -O /dev/null "$(cat /etc/glimpse-test-mirror)/core.db"
echo "==> ERROR: Cannot fetch updates" >&2
exit 1
SH
stop_case pacman stop-pac-$$ checkupdates joined
stop_case pacman stop-pac-$$ checkupdates

# --- apk: one process that fetches
stand_in stop-apk-$$ apk apk /alpine/edge/main/x86_64 <<'SH'
#!/bin/sh
# stands in for apk (apk --no-cache list --upgradable): one process
exec wget -q -O /dev/null "$(cat /etc/glimpse-test-mirror)/APKINDEX.tar.gz"
SH
stop_case apk stop-apk-$$ apk joined
stop_case apk stop-apk-$$ apk

finish
