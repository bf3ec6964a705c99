#!/bin/bash
# Integration: a launch racing a package operation that replaces the
# generation it is opening.  The launcher reads system/current (N), opens
# system/N, then N/tree, then N/lock, and locks it; an operation that got
# N's lock first moves N into a trash and a detached process deletes it.
# Wherever the launch is when N goes (after reading `current`, after
# opening system/N, after opening N/tree), it reads `current` again and
# runs in the new generation: never "missing, ask your administrator to
# recreate the sandbox" for a sandbox that is fine.  The launch is stopped
# at the point by strace (a SIGSTOP injected after a system call on that
# path), the operation runs to its end, the launch is continued.
# And where no trash can be made, the operation removes a generation at
# once with its lock held: no launch locks it meanwhile.
# Needs root and strace.
source "$(dirname "$0")/libpkgtest.sh"
source "$(dirname "$0")/librepo.sh"
gl_pkg_env --launcher --sandbox genrace

command -v strace >/dev/null || skip "no strace"
gl_deb glimpse-race 1.0
gl_deb glimpse-race-other 1.0
gl_serve_host_sandbox "$id"
check "install glimpse-race" "$GLIMPSE" install "$id" glimpse-race
sys_dir=$GL_STORE/$id/system
no_trash () { ! ls -A "$sys_dir" | grep_quiet '^\.trash-'; }
gl_wait 30 no_trash
strace -o /dev/null -e trace=getpid -e inject=getpid:signal=SIGCONT true 2>/dev/null \
  || skip "strace cannot inject a signal here"

# launch_stopped PATH SYSCALL: user A's launch in the background ($late),
# the launcher ($c) stopped right after its first SYSCALL on PATH; its app
# says whether the generation it runs in has glimpse-race-other.  False if
# it did not stop within 30 s.
launch_stopped () {
  strace -o /dev/null -P "$1" -e trace="$2" -e inject="$2":signal=SIGSTOP:when=1 \
    -u "$GL_USER_A" env -i HOME=/ PATH=/usr/bin:/bin LANG=C.UTF-8 \
    XDG_RUNTIME_DIR=/run/user/"$(id -u "$GL_USER_A")" \
    "$LAUNCH" "$id" -- sh -c 'command -v glimpse-race-other >/dev/null && echo with || echo without' \
    > "$WORK/out-race" 2>&1 & late=$!
  if ! gl_wait 30 launcher_stopped; then
    echo "# the launch did not stop in 30 s: $(head -c 300 "$WORK/out-race")"
    kill "$late" 2>/dev/null; wait "$late" 2>/dev/null
    return 1
  fi
}
launcher_stopped () {
  c=$(pgrep -P "$late" | head -n 1)
  [ -n "$c" ] && [ "$(awk '{ print $3 }' /proc/"$c"/stat 2>/dev/null)" = t ]
}
# next_op: each operation installs or uninstalls glimpse-race-other in
# turn (a new generation each time): $op, and $want, what a launch in the
# generation it makes says
n_op=0
next_op () {
  n_op=$((n_op + 1))
  if [ $((n_op % 2)) = 1 ]; then op=install want=with; else op=uninstall want=without; fi
}
# launch_ran WHAT: the stopped launch, continued, ran in the new generation
launch_ran () {
  local rc
  kill -CONT "$c"
  wait "$late"; rc=$?
  check_sh "$1 (rc $rc: $(head -c 300 "$WORK/out-race"))" \
    '[ $rc -eq 0 ] && [ "$(cat "$WORK/out-race")" = "$want" ]'
}

# race WHAT PATH SYSCALL: the launch stopped right after its first SYSCALL
# on PATH (a file or directory of generation N) while an operation replaces
# and removes N; it must run the new generation's program
race () {
  local gen
  gen=$(gl_current "$id")
  launch_stopped "$2" "$3" || { fail "$1: the launch stopped"; return; }
  next_op
  check "$1: an operation meanwhile ($op)" "$GLIMPSE" "$op" "$id" glimpse-race-other
  gl_wait 30 no_trash
  check_sh "… generation $gen is gone" '[ ! -e "$sys_dir/$gen" ]'
  launch_ran "… the launch ran in the new generation"
}

gen=$(gl_current "$id")
race "stopped after reading current" "$sys_dir/current" read
gen=$(gl_current "$id")
race "stopped after opening system/$gen" "$sys_dir/$gen" fstatfs
gen=$(gl_current "$id")
race "stopped after opening system/$gen/tree" "$sys_dir/$gen/tree" fstatfs

# Where no trash can be made (a full file system: glimpse with the
# trash-fail shim), the operation removes the replaced generation at once,
# and holds its lock until it is gone: a launch that opened it before the
# switch and locks it meanwhile reads `current` again, never builds a view
# on a generation being deleted.  glimpse stops itself before its first
# removal in it; the launch is continued then.
gen=$(gl_current "$id")
launch_stopped "$sys_dir/$gen/tree" fstatfs || fail "the launch stopped"
next_op
LD_PRELOAD=$GL_TRASH_FAIL GL_STOP_UNDER=$sys_dir/$gen "$GLIMPSE" "$op" "$id" glimpse-race-other \
  > "$WORK/out-op" 2>&1 & op_pid=$!
op_stopped () { [ "$(awk '{ print $3 }' /proc/"$op_pid"/stat 2>/dev/null)" = T ]; }
gl_wait 60 op_stopped || echo "# the operation did not stop in its removal: $(tail -c 300 "$WORK/out-op")"
check_sh "no trash: the operation ($op) removes generation $gen itself" \
  '! ls -A "$sys_dir" | grep_quiet "^\.trash-" && [ "$(gl_current "$id")" != "$gen" ]'
launch_ran "… the launch locking it meanwhile ran in the new generation"
kill -CONT "$op_pid"
wait "$op_pid"; op_rc=$?
check_sh "… and the operation ends (rc $op_rc), generation $gen gone" \
  '[ $op_rc -eq 0 ] && [ ! -e "$sys_dir/$gen" ]'
[ $op_rc -eq 0 ] || tail -n 5 "$WORK/out-op" | sed 's/^/# /'

# … but a part of the generation `current` still names that is missing is a
# broken sandbox, said as such (not "being changed"), nothing run
launch () { as_user "$GL_USER_A" "$LAUNCH" "$id" -- true 2>&1; }
gen=$(gl_current "$id")
mv "$sys_dir/$gen/lock" "$WORK/lock"
out=$(launch); rc=$?
check_sh "system/$gen/lock missing, current naming $gen: refused (rc $rc: $out)" \
  '[ $rc -eq 125 ] && grep -q "system/$gen/lock is missing" <<<"$out"'
mv "$WORK/lock" "$sys_dir/$gen/lock"
mv "$sys_dir/$gen/tree" "$sys_dir/$gen/tree.away"
out=$(launch); rc=$?
check_sh "system/$gen/tree missing: refused (rc $rc: $out)" \
  '[ $rc -eq 125 ] && grep -q "cannot open system/$gen/tree/" <<<"$out"'
mv "$sys_dir/$gen/tree.away" "$sys_dir/$gen/tree"
mv "$sys_dir/$gen" "$sys_dir/away"
out=$(launch); rc=$?
check_sh "system/$gen missing: refused (rc $rc: $out)" \
  '[ $rc -eq 125 ] && grep -q "system/$gen/ is missing" <<<"$out"'
mv "$sys_dir/away" "$sys_dir/$gen"
out=$(launch); rc=$?
check_sh "all back: it runs (rc $rc: $out)" '[ $rc -eq 0 ]'

# A reset while user A's view holds generation K keeps K (no `current`
# then); the operations after it number their generations from 1 again.
# Neither may remove or replace K while the view lives: not as a generation
# "never switched to" (above `current`), nor as the number the next one
# takes.  Here K is 2: the second operation after the reset makes 2.
check "reset --yes (nothing running)" "$GLIMPSE" reset "$id" --yes
gl_wait 30 no_trash
readd () { "$GLIMPSE" add-repo "$id" "deb $URL/repo ./" --key "$WORK/good.asc" --name test; }
check "add-repo" readd
check "install glimpse-race-other" "$GLIMPSE" install "$id" glimpse-race-other
held=$(gl_current "$id")
gl_wait 30 no_trash
as_user "$GL_USER_A" "$LAUNCH" "$id" -- sleep 3005.$$ > "$WORK/out-view" 2>&1 & view=$!
view_holds () { ! flock -x -n "$sys_dir/$held/lock" true; }
check "a view of user A holds generation $held" gl_wait 30 view_holds
view_holds || echo "# the view: $(head -c 300 "$WORK/out-view")"
ino=$(stat -c %i "$sys_dir/$held/tree")
kept () { [ "$(stat -c %i "$sys_dir/$held/tree" 2>/dev/null)" = "$ino" ] && [ -x "$sys_dir/$held/tree/usr/bin/glimpse-race-other" ]; }
check "reset --yes while it runs" "$GLIMPSE" reset "$id" --yes
check_sh "… keeps generation $held" kept
check "add-repo after the reset" readd
check_sh "… generation $held untouched (current $(gl_current "$id"))" kept
check "install glimpse-race after the reset" "$GLIMPSE" install "$id" glimpse-race
check_sh "… generation $held untouched (current $(gl_current "$id"))" \
  'kept && [ "$(gl_current "$id")" != "$held" ]'
out=$(as_user "$GL_USER_A" "$LAUNCH" "$id" -- sh -c 'command -v glimpse-race-other || command -v glimpse-race' 2>&1)
kill "$(pgrep -f -x "sleep 3005.$$")" 2>/dev/null; wait "$view" 2>/dev/null
check_sh "… the held view had been joined, in generation $held (got: $out)" \
  '[ "$out" = /usr/bin/glimpse-race-other ]'
check "the next operation, the view gone" "$GLIMPSE" uninstall "$id" glimpse-race
gl_wait 30 no_trash
check_sh "… removes generation $held" '[ ! -e "$sys_dir/$held" ]'

# glimpse started with signals ignored (nohup, a shell's background job;
# SIGQUIT and SIGUSR1 here): the remover of its trash ignores none of them
# (a generation of 50,000 names keeps it removing long enough to be seen)
gen=$(gl_current "$id")
mkdir "$sys_dir/$gen/tree/many" && (cd "$sys_dir/$gen/tree/many" && seq 1 50000 | xargs touch)
( trap '' QUIT USR1; exec "$GLIMPSE" install "$id" glimpse-race ) > "$WORK/out-sig" 2>&1 &
gpid=$! ign=""
for i in $(seq 1 3000); do
  remover=$(pgrep -f -- "glimpse-remove-trash .*$sys_dir/\.trash-" | head -n 1)
  [ -n "$remover" ] && ign=$(awk '$1 == "SigIgn:" { print $2 }' "/proc/$remover/status" 2>/dev/null) \
    && [ -n "$ign" ] && break
  kill -0 "$gpid" 2>/dev/null || [ "$i" -lt 300 ] || break
  sleep 0.01
done
wait "$gpid"; rc=$?
gl_wait 30 no_trash
if [ -n "$ign" ]; then
  check_sh "an install started with SIGQUIT and SIGUSR1 ignored (rc $rc): the remover of generation $gen ignores neither (SigIgn $ign)" \
    '[ $rc -eq 0 ] && [ $(( 0x$ign & 0x204 )) -eq 0 ] && [ ! -e "$sys_dir/$gen" ]'
else
  skip_case "the signals of a trash's remover" "no remover was seen running (rc $rc: $(head -c 300 "$WORK/out-sig"))"
fi
check "remove" "$GLIMPSE" remove "$id"
finish
