#!/bin/bash
# Integration: glimpse-pkgns's own processes held where no test could reach
# them otherwise (hold-fork.py: a fork held by ptrace before the new process
# runs, then stopped for good, or orphaned).  Run over a small base tree with
# busybox, as test-pkg-isolation.sh's helper cases.  Needs root.
source "$(dirname "$0")/libpkgtest.sh"
command -v python3 >/dev/null || skip "python3 is not installed (hold-fork.py)"

range=$(awk -F: '$1=="glimpse" {print $2}' /etc/subuid)
grange=$(awk -F: '$1=="glimpse" {print $2}' /etc/subgid)
[ -n "$range" ] && [ -n "$grange" ] || skip "no subordinate range for the glimpse user"
HOLD=$(dirname "$0")/hold-fork.py
base=$WORK/base
mkdir -p "$base"/{bin,etc,proc,dev,sys,tmp,var/lib,usr/sbin}
cp "$(command -v busybox)" "$base/bin/busybox"
echo "public" > "$base/etc/public"; chmod 0644 "$base/etc/public"
# new_op NAME: a fresh operation directory, its path in $op
new_op () {
  op=$WORK/$1
  mkdir -p "$op/upper" "$op/work"
  chown "$range:$grange" "$op/upper" "$op/work"
}
wait_for () { # CONDITION: up to 30 s
  local i
  for i in $(seq 300); do eval "$1" && return 0; sleep 0.1; done
  return 1
}
# bit N of the hexadecimal mask MASK is set
has_bit () { (( (16#$1 >> ($2 - 1)) & 1 )); }
# hold OPTION… -- ARG…: glimpse-pkgns ARG… under hold-fork.py; its output in
# $WORK/out, the held process's pid in $WORK/held, its status (orphan mode,
# --subreaper) in $WORK/held-status; the helper's status returned.  A
# machine where no process may trace another skips the test.
hold () {
  local rc
  rm -f "$WORK/held" "$WORK/held-status"
  python3 "$HOLD" --pid-file "$WORK/held" --status-file "$WORK/held-status" "$@" > "$WORK/out" 2>&1; rc=$?
  if [ $rc = 3 ] && grep -q "^cannot trace" "$WORK/out"; then
    skip "$(cat "$WORK/out")"
  fi
  return $rc
}

# --- SIGPIPE as glimpse-pkgns was given it: ignored, it stays ignored once
# the view has its go-ahead (a reset to the default would make a write to a
# closed stderr kill it instead of failing)
new_op op-sigpipe
( trap '' PIPE; exec "$GLIMPSE_PKGNS" --ids "$range:$grange" --base "$base" --op "$op" \
    -- /bin/busybox sh -c 'echo ran > /ran; exec /bin/busybox sleep 37' ) > "$WORK/out-sigpipe" 2>&1 &
pkgns=$!
if check "the command runs" wait_for '[ -e "$op/upper/ran" ]'; then
  ign=$(awk '$1 == "SigIgn:" { print $2 }' "/proc/$pkgns/status")
  check_sh "glimpse-pkgns still ignores SIGPIPE, as it was started (SigIgn $ign)" 'has_bit "$ign" 13'
fi
kill "$pkgns"; wait "$pkgns"

# --- the base's walker runs under the operation's limits: one that never
# finishes (stopped, once it has made a few system calls) is stopped at
# --max-seconds, or at --min-free-mib, with the view never mounted over the
# base and nothing of the command run
walker_stuck () { # LIMIT WANT-STOPPED-BY: a stuck walk and that limit
  local limit=$1 want=$2 rc t0=$SECONDS
  new_op "op-stuck-$want"
  timeout -s KILL 30 python3 "$HOLD" --pid-file "$WORK/held" --fork 1 --syscalls 10 -- \
    "$GLIMPSE_PKGNS" --ids "$range:$grange" --base "$base" --op "$op" $limit \
    -- /bin/busybox sh -c 'echo ran > /ran' > "$WORK/out" 2>&1; rc=$?
  [ $rc = 3 ] && grep -q "^cannot trace" "$WORK/out" && skip "$(cat "$WORK/out")"
  check_sh "a stuck walk is stopped at $limit (status $rc after $((SECONDS - t0)) s)" \
    '[ $rc = 124 ] && [ "$(cat "$op/stopped-by" 2>/dev/null)" = "$want" ] && grep -q "stopped at its limit ($want)" "$WORK/out"'
  check_sh "… the command never ran" '[ ! -e "$op/upper/ran" ]'
  check_sh "… and the walker is gone" '[ -s "$WORK/held" ] && [ ! -e "/proc/$(cat "$WORK/held")" ]'
}
walker_stuck "--max-seconds 2" time
walker_stuck "--min-free-mib 2000000000" disk
# a walk that fails ends the operation with its status, the command not run
new_op op-walk-killed
python3 "$HOLD" --pid-file "$WORK/held" --fork 1 --syscalls 10 -- \
  "$GLIMPSE_PKGNS" --ids "$range:$grange" --base "$base" --op "$op" \
  -- /bin/busybox sh -c 'echo ran > /ran' > "$WORK/out" 2>&1 &
helper=$!
if check "the walker is held" wait_for '[ -s "$WORK/held" ] && grep -q "^T" <(ps -o stat= -p "$(cat "$WORK/held")")'; then
  kill -KILL "$(cat "$WORK/held")"
fi
wait "$helper"; rc=$?
check_sh "a walker killed ends the operation, saying so (status $rc)" \
  '[ $rc = 125 ] && grep -q "the walk of $base was killed (signal 9)" "$WORK/out"'
check_sh "… the command never ran" '[ ! -e "$op/upper/ran" ]'
# the walker's OOM score is the command's (0), not glimpse-pkgns's -1000
# (nor, where that cannot be set, what glimpse-pkgns was started with)
new_op op-walker-oom
( echo 500 > /proc/self/oom_score_adj; exec python3 "$HOLD" --pid-file "$WORK/held" --fork 1 --syscalls 10 -- \
  "$GLIMPSE_PKGNS" --ids "$range:$grange" --base "$base" --op "$op" \
  -- /bin/busybox sh -c 'echo ran > /ran' ) > "$WORK/out" 2>&1 &
helper=$!
if check "the walker is held" wait_for '[ -s "$WORK/held" ] && grep -q "^T" <(ps -o stat= -p "$(cat "$WORK/held")")'; then
  adj=$(cat "/proc/$(cat "$WORK/held")/oom_score_adj")
  check_sh "the walker's oom_score_adj is 0, not glimpse-pkgns's (it is $adj)" '[ "$adj" = 0 ]'
  kill -TERM "$(pgrep -P "$helper" -x glimpse-pkgns)"
fi
wait "$helper"
check_sh "… a SIGTERM to glimpse-pkgns during the walk ends it, the command never run" '[ ! -e "$op/upper/ran" ]'

# --- a process of glimpse-pkgns's whose parent ended before it set its
# parent-death signal ends at once, also where a subreaper (glimpse, a
# systemd user manager), not 1, becomes its parent
new_op op-orphan-walker
hold --fork 1 --mode orphan --subreaper -- "$GLIMPSE_PKGNS" --ids "$range:$grange" --base "$base" \
  --op "$op" --walk-cache "$WORK/orphan-walk-cache" -- /bin/busybox sh -c 'echo ran > /ran'
check_sh "the base's walker, orphaned at its start, ends without walking ($(cat "$WORK/held-status" 2>/dev/null))" \
  '[ "$(cat "$WORK/held-status")" = "exit 125" ] && [ ! -e "$WORK/orphan-walk-cache" ]'
# (--tree: the view's child is the second fork, after the user namespace's)
tree=$WORK/tree
cp -a "$base" "$tree"
new_op op-orphan-view
hold --fork 2 --mode orphan --subreaper -- "$GLIMPSE_PKGNS" --ids "$range:$grange" --tree "$tree" \
  --op "$op" -- /bin/busybox sh -c 'echo ran > /orphan-ran'
check_sh "the view's child, orphaned at its start, ends and runs nothing ($(cat "$WORK/held-status" 2>/dev/null))" \
  '[ "$(cat "$WORK/held-status")" = "exit 125" ] && [ ! -e "$tree/orphan-ran" ]'
# the namespace's first process, whose parent (the view's child) is killed
# before it set its parent-death signal: glimpse-pkgns, its subreaper,
# waits for it, and it must run nothing
new_op op-orphan-init
hold --fork 2.1 --mode orphan -- "$GLIMPSE_PKGNS" --ids "$range:$grange" --tree "$tree" \
  --op "$op" -- /bin/busybox sh -c 'echo ran > /orphan-ran'
check_sh "the namespace's first process, orphaned at its start, runs nothing" \
  '[ -s "$WORK/held" ] && [ ! -e "$tree/orphan-ran" ]'

# --- the walk beside the command (a walk cache there) runs at SCHED_IDLE
# until the command has ended, then at the ordinary policy (walker_hurry):
# a walker held as soon as it has said the mask is ready (hold-fork.py
# --until-write r), until the command has ended and the walker has been
# hurried, walks on at the ordinary policy, never at SCHED_IDLE (it made
# itself SCHED_IDLE only after its word, so a command that ended first
# left the rest of the walk at SCHED_IDLE, starved on a busy machine)
new_op op-idle-first
"$GLIMPSE_PKGNS" --ids "$range:$grange" --base "$base" --op "$op" --walk-cache "$WORK/idle-cache" \
  -- /bin/busybox true > "$WORK/out" 2>&1
check_sh "a first operation keeps its walk" '[ -s "$WORK/idle-cache" ]'
# (a directory the cache does not have: read whole by the walk beside the
# command, some 20,000 entries, long enough to be seen walking)
python3 -c '
import os, sys
os.mkdir(sys.argv[1])
for i in range(20000):
    open(os.path.join(sys.argv[1], "f%05d" % i), "w").close()
' "$base/var/lib/many"
new_op op-idle
rm -f "$WORK/held"
python3 "$HOLD" --pid-file "$WORK/held" --fork 1 --until-write r -- \
  "$GLIMPSE_PKGNS" --ids "$range:$grange" --base "$base" --op "$op" --walk-cache "$WORK/idle-cache" \
  -- /bin/busybox sh -c 'echo ran > /ran' > "$WORK/out" 2>&1 &
helper=$!
policy () { chrt -p "$1" 2>/dev/null | sed -n 's/.*scheduling policy: //p' | head -n 1; }
if check "the walker is held once it said the mask is ready" \
     wait_for '[ -s "$WORK/held" ] && grep -q "^T" <(ps -o stat= -p "$(cat "$WORK/held")")'; then
  walker=$(cat "$WORK/held")
  pkgns=$(ps -o ppid= -p "$walker" | tr -d ' ')
  # (the command ran and ended: every other child of glimpse-pkgns has ended)
  check "… the command runs and ends meanwhile" \
    wait_for '[ -e "$op/upper/ran" ] && [ -z "$(ps -o stat= --ppid "$pkgns" | grep -v "^[TZ]")" ]'
  check "… the walker is then at the ordinary policy" wait_for '[ "$(policy "$walker")" = SCHED_OTHER ]'
  # (glimpse-pkgns hurries it as soon as it sees the command's end)
  sleep 0.5
  seen=$(python3 -c '
import os, signal, sys
pid = int(sys.argv[1])
seen = set()
os.kill(pid, signal.SIGCONT)
while True:
    try:
        with open("/proc/%d/stat" % pid) as f:
            if f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                break
        for t in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/stat" % (pid, t)) as f:
                seen.add(int(f.read().rsplit(")", 1)[1].split()[38]))
    except OSError:
        break
print(" ".join(str(p) for p in sorted(seen)))
' "$walker")
  check_sh "… and walks on at it, never at SCHED_IDLE (policies seen: ${seen:-none})" \
    '[ -n "$seen" ] && ! grep -qw 5 <<<"$seen"'
else
  kill -KILL "$(cat "$WORK/held" 2>/dev/null)" 2>/dev/null
fi
wait "$helper"; rc=$?
check_sh "… and the operation ends well (status $rc)" '[ $rc = 0 ]'
[ $rc = 0 ] || sed 's/^/# /' "$WORK/out"
rm -rf "$base/var/lib/many"

finish
