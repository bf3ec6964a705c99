#!/bin/bash
# agent-bench.sh GLIMPSE-SESSION [N_APPS]: the session agent on a private
# session bus with a generated sandbox of N_APPS (300) applications and three
# icons each, beside update-desktop-database on the same directory:
#   - the first export (start-up sync) of N_APPS apps and 3*N_APPS icons;
#   - one app changed, five times: the agent's CPU time (from
#     /proc/PID/schedstat; the median, and each) and the wall time from the
#     change until the exported entry has it, debounce included (the most);
#   - a no-op resync (Refresh of the unchanged sandbox);
#   - resident memory with 10 such sandboxes.
# The engine's own times come from the agent's --verbose log.  Prints ratios
# to update-desktop-database.  Needs no root.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
set -eu
. "$(dirname "$0")/../lib/sandbox-conf.sh"
agent=${1:?give the built glimpse-session}
n=${2:-300}
command -v dbus-run-session >/dev/null || { echo "agent-bench: dbus-run-session is not installed" >&2; exit 77; }
udd=$(command -v update-desktop-database || true)

if [ -z "${AGENT_BENCH_INNER:-}" ]; then
  export AGENT_BENCH_INNER=1
  exec dbus-run-session -- "$0" "$@"
fi

work=$(mktemp -d /tmp/agent-bench.XXXXXX)
pid=
cleanup () { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
store=$work/store
export GLIMPSE_SANDBOX_DIR=$store XDG_DATA_HOME=$work/data XDG_CONFIG_HOME=$work/config
export GLIMPSE_LAUNCHER=/bin/true GSETTINGS_BACKEND=memory

make_sandbox () {
  local dir=$store/$1 root
  root=$dir/rootfs
  mkdir -p "$root/usr/share/applications" "$root/usr/share/icons/hicolor/48x48/apps" \
    "$root/usr/share/icons/hicolor/256x256/apps" "$root/usr/share/icons/hicolor/scalable/apps"
  gl_sandbox_conf bench "Bench $1" rootfs apk > "$dir/sandbox.conf.tmp"
  for i in $(seq "$n"); do
    printf '[Desktop Entry]\nType=Application\nName=App %s\nComment=Application number %s\nExec=/usr/bin/app%s %%F\nIcon=app%s\nMimeType=text/x-bench%s;\nCategories=Utility;\nActions=new;\n\n[Desktop Action new]\nName=New\nExec=/usr/bin/app%s --new\n' \
      "$i" "$i" "$i" "$i" "$i" "$i" > "$root/usr/share/applications/org.bench.App$i.desktop"
    head -c 2048 /dev/urandom > "$root/usr/share/icons/hicolor/48x48/apps/app$i.png"
    head -c 8192 /dev/urandom > "$root/usr/share/icons/hicolor/256x256/apps/app$i.png"
    printf '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16"><title>%s</title></svg>\n' "$i" \
      > "$root/usr/share/icons/hicolor/scalable/apps/app$i.svg"
  done
  mv "$dir/sandbox.conf.tmp" "$dir/sandbox.conf"
}

ms () { date +%s%N | cut -c1-13; }
cpu_ns () { cut -d' ' -f1 "/proc/$1/schedstat"; }
last_export_ms () { grep 'Exported ' "$work/agent.log" | tail -n 1 | sed 's/.* in \([0-9.]*\) ms.*/\1/'; }
n_exports () { grep -c 'Exported ' "$work/agent.log" || true; }
wait_exports () {   # wait_exports N: until the log has N exports
  for _ in $(seq 6000); do [ "$(n_exports)" -ge "$1" ] && return 0; sleep 0.005; done
  echo "agent-bench: the agent did not export (see $work/agent.log)" >&2; exit 1
}

make_sandbox bench
echo "agent-bench: $n apps, $((3 * n)) icons"

start=$(ms)
"$agent" --verbose > "$work/agent.log" 2>&1 &
pid=$!
wait_exports 1
first_wall=$(( $(ms) - start ))
first_engine=$(last_export_ms)
echo "first export (start-up sync): ${first_engine} ms in the engine, ${first_wall} ms from exec to done (target <= 300 ms), peak $(awk '/^VmHWM/ { print $2 }' "/proc/$pid/status") kB resident"

apps=$XDG_DATA_HOME/applications
udd_ms=
if [ -n "$udd" ]; then
  t0=$(ms); "$udd" -q "$apps"; t1=$(ms); udd_ms=$((t1 - t0))
  echo "update-desktop-database on the same directory: ${udd_ms} ms"
fi

entry=$store/bench/rootfs/usr/share/applications/org.bench.App150.desktop
exported=$apps/glimpse-bench+org.bench.App150.desktop
[ -f "$exported" ] || exported=$apps/glimpse-bench-org.bench.App150.desktop
# five changes, each timed on its own: one sample is a moment of a loaded
# machine, not the agent's cost
cpus=; walls=
for k in 1 2 3 4 5; do
  sleep 0.5
  c0=$(cpu_ns "$pid"); before=$(n_exports)
  t0=$(ms)
  sed -i "s/^Name=App 150.*\$/Name=App 150 changed $k/" "$entry"
  for _ in $(seq 2000); do grep -q "^Name=App 150 changed $k" "$exported" 2>/dev/null && break; sleep 0.002; done
  t1=$(ms)
  wait_exports $((before + 1))
  c1=$(cpu_ns "$pid")
  cpus="$cpus $(( (c1 - c0) / 1000 ))"; walls="$walls $((t1 - t0))"
done
change_cpu=$(echo $cpus | tr ' ' '\n' | sort -n | sed -n 3p | awk '{ printf "%.1f", $1 / 1000 }')
echo "one app changed (5 times): ${change_cpu} ms agent CPU, the median (target <= 20 ms; each:$(echo $cpus | awk '{ for (i = 1; i <= NF; i++) printf " %.1f", $i / 1000 }') ms)," \
  "$(echo $walls | tr ' ' '\n' | sort -n | tail -n 1) ms wall at most including the debounce (target <= 1000 ms), $(last_export_ms) ms in the engine the last time"

sleep 0.3
c0=$(cpu_ns "$pid"); t0=$(ms)
gdbus call --session --dest org.glimpse.Session1 --object-path /org/glimpse/Session1 \
  --method org.glimpse.Session1.Refresh "['bench']" > /dev/null
t1=$(ms); c1=$(cpu_ns "$pid")
noop=$(last_export_ms)
echo "no-op resync (Refresh of the unchanged sandbox): ${noop} ms in the engine, $(( (c1 - c0) / 1000000 )) ms agent CPU, $((t1 - t0)) ms round trip (target <= 10 ms)"

if [ -n "$udd_ms" ] && [ "$udd_ms" -gt 0 ]; then
  awk -v a="$change_cpu" -v b="$first_engine" -v c="$noop" -v u="$udd_ms" 'BEGIN {
    printf "ratios to update-desktop-database (%d ms): one change %.2f, first export %.2f, no-op resync %.2f\n",
           u, a / u, b / u, c / u }'
fi

# memory with 10 such sandboxes: the peak (VmHWM, reset before each step
# through clear_refs), not the resident set at some moment after it
kb () { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
reset_peak () { echo 5 > "/proc/$1/clear_refs"; }
for i in $(seq 2 10); do cp -al "$store/bench" "$store/.copy" && mv "$store/.copy" "$store/bench$i"; done
peak=0
step () {   # step WHAT: the peak of what just ran, and the largest so far
  local p; p=$(kb "$pid" VmHWM)
  [ "$p" -gt "$peak" ] && peak=$p
  echo "  $1: peak $p kB, $(kb "$pid" VmRSS) kB resident after"
}
refresh () {
  gdbus call --session --dest org.glimpse.Session1 --object-path /org/glimpse/Session1 \
    --method org.glimpse.Session1.Refresh "$1" > /dev/null
}
echo "resident memory with 10 sandboxes of $n apps (target <= 10240 kB at every moment):"
reset_peak "$pid"; refresh "[]"; step "9 sandboxes added (Refresh)"
reset_peak "$pid"; refresh "[]"; step "no-op Refresh of all"
before=$(n_exports)
reset_peak "$pid"
sed -i 's/^Name=App 150 changed.*$/Name=App 150 changed again/' "$store/bench5/rootfs/usr/share/applications/org.bench.App150.desktop"
wait_exports $((before + 1)); step "one app changed"
exported_n=$(ls "$apps" | grep -c '\.desktop$')
kill "$pid"; wait "$pid" 2>/dev/null || true
: > "$work/agent.log"
"$agent" --verbose > "$work/agent.log" 2>&1 &
pid=$!
wait_exports 1
step "a restart (start-up sync of 10)"
echo "resident memory with 10 sandboxes of $n apps: peak ${peak} kB (target <= 10240 kB), $exported_n entries exported"
