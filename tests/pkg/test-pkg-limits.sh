#!/bin/bash
# Integration: the limits of a package operation (gl-pkg-limits.h).  A
# maintainer script that forks without bound, one that eats memory, one
# that never ends, and an operation on a store's file system below its free
# space floor — each with a small limit in a test glimpse.conf: the
# operation fails with a message naming the limit, its value and the
# setting; the sandbox keeps its generation; no process of it is left; its
# cgroups are gone.  A bootstrap of `glimpse create` too.  Needs root.
source "$(dirname "$0")/libpkgtest.sh"
source "$(dirname "$0")/librepo.sh"

gl_pkg_env
export GLIMPSE_CONF=$WORK/glimpse.conf
id=pkglimits-$$
GL_SANDBOXES+=("$id")

command -v perl >/dev/null || skip "perl is not installed (the memory hog is a perl one-liner)"

# postinst NAME BODY: a package NAME whose postinst runs BODY
postinst_pkg () {
  printf '#!/bin/sh\n%s\n' "$2" > "$WORK/$1-postinst"
  gl_deb "$1" 1.0 "$WORK/$1-postinst"
}
gl_deb glimpse-hello 1.0
postinst_pkg glimpse-bomb 'bomb () { bomb & bomb & wait; }; bomb'
postinst_pkg glimpse-hog 'exec perl -e "my @a; push @a, q(x) x (1 << 20) while 1; # glimpse-hog"'
# (a sleep of a length of this run's own: another test's "sleep 600" is not this one)
nap=600.$$
postinst_pkg glimpse-sleeper "exec sleep $nap"
# (the view's /tmp left holding two million files: its teardown, after
# the command, takes seconds; as many as the tmpfs takes)
postinst_pkg glimpse-litter 'exec perl -e "for (1 .. 2000000) { open my \$f, q(>), qq(/tmp/l\$_) or last; }"'
gl_serve_host_sandbox "$id"

# the cgroups of the glimpse of pid PID (op-PID-N; other tests' operations
# may have theirs meanwhile)
op_cgroups () { find /sys/fs/cgroup -mindepth 2 -type d -path "*/glimpse/op-$1-*" 2>/dev/null; }
# run_glimpse ARG...: glimpse in the background, waited for; its pid in $last,
# its output in $WORK/out, its status returned
run_glimpse () { "$GLIMPSE" "$@" > "$WORK/out" 2>&1 & last=$!; wait "$last"; }
# (the operation's processes; not the walk for the next one's mask that
# glimpse may start after it, `glimpse-pkgns --walk-refresh`, detached)
left_running () { pgrep -f "glimpse-(bomb|hog)|^sleep ${nap//./\\.}\$|glimpse-pkgns --ids .*/$id/system" >/dev/null; }
wait_for () { # CONDITION: up to 30 s
  local i
  for i in $(seq 300); do eval "$1" && return 0; sleep 0.1; done
  return 1
}
check "an operation within the default limits works" run_glimpse install "$id" glimpse-hello
check_sh "… and leaves no cgroup" '[ -z "$(op_cgroups "$last")" ]'
# (glimpse-pkgns ends before its view's child of main, whose mount
# namespace's teardown goes on beside the commit: glimpse returns once it
# has ended, in the cgroups it removes)
check_sh "… and nothing of it runs once glimpse has returned" '! left_running'
flock "$GL_STORE/$id/system/walk-cache.lock" true
check_sh "… and a walk after it, if any, has ended on its own" \
  '! pgrep -f "glimpse-pkgns --walk-refresh .*/$id/system" >/dev/null'
check "an install whose postinst leaves two million files in the view's /tmp works" run_glimpse install "$id" glimpse-litter
check_sh "… and once glimpse has returned, nothing of it runs and its cgroups are gone" \
  '! left_running && [ -z "$(op_cgroups "$last")" ]'

# limited PKG SETTING=VALUE LIMIT-REGEX: installing PKG with SETTING=VALUE fails at that limit
limited () {
  local pkg=$1 setting=$2 re=$3 gen
  printf '[Packages]\n%s\n' "$setting" > "$GLIMPSE_CONF"
  gen=$(gl_current "$id")
  run_glimpse install "$id" "$pkg"; rc=$?
  check_sh "[$pkg] stopped at its limit, the message naming it ($setting)" \
    '[ $rc -ne 0 ] && grep -q "stopped: $re.*${setting%%=*}= in the \[Packages\] group of $GLIMPSE_CONF; “$id” is unchanged" "$WORK/out"'
  grep -q "stopped: $re" "$WORK/out" || tail -n 3 "$WORK/out" | sed 's/^/#   /'
  check_sh "[$pkg] the sandbox keeps generation $gen" '[ "$(gl_current "$id")" = "$gen" ]'
  check_sh "[$pkg] the package is not in it" '[ ! -e "$(gl_tree "$id")/usr/bin/$pkg" ]'
  check_sh "[$pkg] no scratch is left" '! ls -A "$GL_STORE/$id/system" | grep_quiet "^\.op-"'
  check "[$pkg] nothing of it keeps running" wait_for '! left_running'
  check_sh "[$pkg] its cgroups are removed" '[ -z "$(op_cgroups "$last")" ]'
}

# While it runs, the operation is in cgroups of its own, with the limits
printf '[Packages]\nMaxSeconds=60\nMaxTasks=300\nMaxMemoryMiB=300\n' > "$GLIMPSE_CONF"
"$GLIMPSE" install "$id" glimpse-sleeper > "$WORK/out-watch" 2>&1 &
pid=$!
if wait_for 'pgrep -fx "sleep $nap" >/dev/null'; then
  sleeper=$(pgrep -fx "sleep $nap" | head -n1)
  cg=$(awk -F: '$2 == "pids" || $2 == "memory" || $1 == "0" { print }' "/proc/$sleeper/cgroup")
  check_sh "a maintainer script runs in the operation's cgroup ($(echo $cg))" 'grep -q "/glimpse/op-" <<< "$cg"'
  # (cgroup v1 or v2: whichever files there are, a task and a memory limit
  # must be among them)
  tasks=0 memory=0
  for d in $(op_cgroups "$pid"); do
    [ -e "$d/pids.max" ] && tasks=$((tasks + 1)) && check_sh "… whose pids.max is MaxTasks=" '[ "$(cat "$d/pids.max")" = 300 ]'
    [ -e "$d/memory.limit_in_bytes" ] && memory=$((memory + 1)) && check_sh "… whose memory limit is MaxMemoryMiB=" \
      '[ "$(cat "$d/memory.limit_in_bytes")" = $((300 << 20)) ]'
    [ -e "$d/memory.max" ] && memory=$((memory + 1)) && check_sh "… whose memory.max is MaxMemoryMiB=" '[ "$(cat "$d/memory.max")" = $((300 << 20)) ]'
  done
  check_sh "… which set a task limit and a memory limit (found $tasks and $memory)" '[ $tasks -ge 1 ] && [ $memory -ge 1 ]'
  check_sh "the glimpse-pkgns supervising it is in them too" \
    'grep -q "/glimpse/op-" "/proc/$(pgrep -f "glimpse-pkgns --ids .*/$id/system" | head -n1)/cgroup"'
else
  fail "the sleeping maintainer script runs"
fi
kill -INT "$pid"; wait "$pid"
check "… and nothing of it is left when it is interrupted" wait_for '! left_running && [ -z "$(op_cgroups "$pid")" ]'

limited glimpse-bomb MaxTasks=64 "it reached its limit of 64 tasks"
# a limit so small that glimpse-pkgns's own forks reach it (they count in
# the operation's cgroup too): the limit all the same, not a failed fork
for n in 2 3 4; do
  limited glimpse-sleeper MaxTasks=$n "it reached its limit of $n tasks"
done
limited glimpse-hog MaxMemoryMiB=96 "it reached its limit of 96 MiB of memory"
limited glimpse-sleeper MaxSeconds=8 "it ran for its limit of 8 seconds"
free_mib=$(( $(stat -f -c '%a * %S' "$GL_STORE") / 1048576 ))
limited glimpse-sleeper MinFreeMiB=$((free_mib + 100000)) "the sandbox store's file system had less than its floor of $((free_mib + 100000)) MiB free"

# The walk of the base (glimpse-pkgns's walker, before anything of the
# sandbox runs) is under the limits too: a walk that never ends (held by
# hold-fork.py once it has started) is stopped at MaxSeconds=, and Ctrl-C
# ends it as it ends any operation
hold=$(cd "$(dirname "$0")" && pwd)/hold-fork.py
if python3 "$hold" --pid-file "$WORK/held" --fork 1 -- true > "$WORK/out" 2>&1 || [ $? != 3 ]; then
  printf '#!/bin/sh\nexec %s %s --pid-file %s --fork 1 --syscalls 10 -- %s "$@"\n' "$(command -v python3)" \
    "$hold" "$WORK/held" "$GLIMPSE_PKGNS" > "$WORK/pkgns-stuck-walk"
  chmod 755 "$WORK/pkgns-stuck-walk"
  rm -f "$WORK/held"
  GLIMPSE_PKGNS=$WORK/pkgns-stuck-walk limited glimpse-sleeper MaxSeconds=3 "it ran for its limit of 3 seconds"
  check_sh "[walk] … which it reached while its walk of the base was held" \
    '[ -s "$WORK/held" ] && ! grep -q "Setting up glimpse-sleeper" "$WORK/out"'
  rm -f "$GLIMPSE_CONF" "$WORK/held"
  gen=$(gl_current "$id")
  GLIMPSE_PKGNS=$WORK/pkgns-stuck-walk "$GLIMPSE" install "$id" glimpse-sleeper > "$WORK/out-walk" 2>&1 &
  pid=$!
  check "[walk] the walk is held" wait_for '[ -s "$WORK/held" ] && ps -o stat= -p "$(cat "$WORK/held")" | grep_quiet "^T"'
  kill -INT "$pid"; wait "$pid"; rc=$?
  check_sh "[walk] Ctrl-C ends the operation (status $rc), saying so and that nothing changed" \
    '[ $rc -eq 130 ] && grep -q "Interrupted.*unchanged" "$WORK/out-walk"'
  check_sh "[walk] the sandbox keeps generation $gen" '[ "$(gl_current "$id")" = "$gen" ]'
  check "[walk] nothing of it keeps running" wait_for '! left_running'
else
  skip_case "a stuck walk of the base" "$(cat "$WORK/out")"
fi

printf '[Packages]\nMaxTasks=lots\n' > "$GLIMPSE_CONF"
refused "a setting that is not a number is named" 'MaxTasks= in the \[Packages\] group of .* is “lots”, not a number' \
  "$GLIMPSE" install "$id" glimpse-sleeper

# After a killed glimpse, the next operation removes the cgroups it left
rm -f "$GLIMPSE_CONF"
"$GLIMPSE" install "$id" glimpse-sleeper > "$WORK/out-kill" 2>&1 &
pid=$!
check "[KILL] the maintainer script runs" wait_for 'pgrep -fx "sleep $nap" >/dev/null'
kill -KILL "$pid"; wait "$pid"
check "[KILL] nothing of the operation keeps running" wait_for '! left_running'
check_sh "[KILL] its cgroups are left ($(op_cgroups "$pid" | wc -l))" '[ -n "$(op_cgroups "$pid")" ]'
check "[KILL] the next operation works" "$GLIMPSE" uninstall "$id" glimpse-hello
check_sh "[KILL] … and removed them" '[ -z "$(op_cgroups "$pid")" ]'

# A bootstrap (mmdebstrap, which makes namespaces of its own and so runs
# outside glimpse-pkgns) is held by the same limits: a fake mmdebstrap,
# first on PATH, shows its cgroups and never ends.  (It runs as the user
# glimpse: its directory is not in $WORK, which only root may enter.)
if command -v newuidmap >/dev/null; then
  fakebin=$(mktemp -d /tmp/gl-fake-bootstrap.XXXXXX); chmod 755 "$fakebin"
  GL_CLEANUPS+=("rm -rf '$fakebin'")
  printf '#!/bin/sh\nsed "s/^/fake-mmdebstrap cgroup: /" /proc/self/cgroup\nexec sleep 600 # glimpse-fake-bootstrap\n' \
    > "$fakebin/mmdebstrap"
  chmod 755 "$fakebin/mmdebstrap"
  mkdir -p "$WORK/profiles"
  printf '[Profile]\nName=Bootstrap limits test\nFamily=apt\n\n[Base]\nType=bootstrap\nSuite=stable\nMirror=http://127.0.0.1:1/debian\n\n[Packages]\nRefresh=apt-get update\nUpgrade=apt-get -y dist-upgrade\nInstall=apt-get install -y\n' \
    > "$WORK/profiles/boot-limits.profile"
  printf '[Packages]\nMaxSeconds=5\nMaxTasks=300\n' > "$GLIMPSE_CONF"
  GL_SANDBOXES+=("$id-boot")
  GLIMPSE_PROFILES_PATH=$WORK/profiles:$GLIMPSE_PROFILES_PATH PATH=$fakebin:$PATH \
    run_glimpse create boot-limits --name "$id-boot"; rc=$?
  check_sh "[bootstrap] create stops the bootstrap at its limit, naming it" \
    '[ $rc -ne 0 ] && grep -q "was stopped: it ran for its limit of 5 seconds; raise MaxSeconds= in the \[Packages\] group of $GLIMPSE_CONF" "$WORK/out"'
  grep -q "was stopped" "$WORK/out" || tail -n 5 "$WORK/out" | sed 's/^/#   /'
  check_sh "[bootstrap] it ran in the operation's cgroups" 'grep -q "^fake-mmdebstrap cgroup: .*/glimpse/op-$last-" "$WORK/out"'
  check "[bootstrap] nothing of it keeps running" wait_for '! pgrep -f glimpse-fake-bootstrap >/dev/null'
  check_sh "[bootstrap] its cgroups are removed, and no sandbox or scratch is left" \
    '[ -z "$(op_cgroups "$last")" ] && [ ! -e "$GL_STORE/$id-boot" ] && ! ls -A "$GL_STORE" | grep_quiet "^\.creating-"'
else
  echo "SKIP - a bootstrap's limits: newuidmap is not installed (apt install uidmap)"
fi

check "remove" "$GLIMPSE" remove "$id"
finish
