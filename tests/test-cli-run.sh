#!/bin/bash
# Integration: glimpse create → run → changes → purge → remove, through the
# real setuid launcher run by an ordinary user, on a sandbox of the host
# profile made by `glimpse create`.  Needs root for the set-up.
: "${GLIMPSE:?set GLIMPSE to the built glimpse}"
source "$(dirname "$0")/launcher/libtest.sh"
gl_cli_setup
id=cli-$$
GL_SANDBOXES+=("$id")

check "glimpse create host --name $id" "$GLIMPSE" create host --name "$id"

mkdir -p "$HOME_A/cli-test"
echo original > "$HOME_A/cli-test/edit-me"
echo doomed > "$HOME_A/cli-test/delete-me"
chown -R "$GL_USER_A:" "$HOME_A/cli-test"
before=$(gl_tree_sums "$HOME_A" /tmp/.glimpse-none)

out=$(as_user "$GL_USER_A" "$GLIMPSE" run "$id" -- sh -c '
  echo changed > ~/cli-test/edit-me
  rm ~/cli-test/delete-me
  echo new > ~/cli-test/"new file"
  id -u' 2>&1); rc=$?
check_sh "glimpse run runs as the user (uid $UID_A)" '[ $rc -eq 0 ] && [ "$(tail -n1 <<<"$out")" = "$UID_A" ]'
check_sh "the host home is unchanged" '[ "$(gl_tree_sums "$HOME_A" /tmp/.glimpse-none)" = "$before" ]'

as_user "$GL_USER_A" "$GLIMPSE" run "$id" -- sh -c 'exit 7'; rc=$?
check_sh "the app's exit status comes back through glimpse run" '[ $rc -eq 7 ]'

changes=$(as_user "$GL_USER_A" "$GLIMPSE" changes "$id" "$HOME_A/cli-test")
expected="deleted   $HOME_A/cli-test/delete-me
modified  $HOME_A/cli-test/edit-me
added     $HOME_A/cli-test/new file"
check_sh "glimpse changes lists exactly those changes" '[ "$changes" = "$expected" ]'
[ "$changes" = "$expected" ] || printf '# got:\n%s\n# expected:\n%s\n' "$changes" "$expected"

json=$(as_user "$GL_USER_A" "$GLIMPSE" changes "$id" "$HOME_A/cli-test" --json)
check_sh "--json is valid JSON with the same three entries" \
  '[ "$(python3 -c "import json,sys; d=json.load(sys.stdin); print(len(d), sorted(c[\"change\"] for c in d))" <<<"$json")" = "3 ['"'"'added'"'"', '"'"'deleted'"'"', '"'"'modified'"'"']" ]'

# another user sees none of it, only their own
as_user "$GL_USER_B" "$GLIMPSE" run "$id" -- sh -c 'echo b > ~/cli-test-b'
changes_b=$(as_user "$GL_USER_B" "$GLIMPSE" changes "$id" 2>&1); rc=$?
check_sh "user B's changes list B's own file and none of user A's" \
  '[ $rc -eq 0 ] && grep -qx "added  *$HOME_B/cli-test-b" <<<"$changes_b" && ! grep -q cli-test/ <<<"$changes_b"'

# in use: purge and remove refuse
as_user "$GL_USER_A" "$GLIMPSE" run "$id" -- sleep 300 &
runner=$!
in_use () { "$GLIMPSE" list > "$WORK/list" && grep -q "^$id .* $1\$" "$WORK/list"; }
check "list shows the sandbox in use while an app runs" gl_wait 30 in_use yes
as_user "$GL_USER_A" "$GLIMPSE" purge "$id" --yes 2>/dev/null; rc=$?
check_sh "purge refuses while an app runs (exit 5)" '[ $rc -eq 5 ]'
"$GLIMPSE" remove "$id" 2>/dev/null; rc=$?
check_sh "remove refuses while an app runs (exit 5)" '[ $rc -eq 5 ] && [ -d "$GL_STORE/$id" ]'
# the oldest process of that command line is the launcher the user started
kill -TERM "$(pgrep -o -f -- "$id -- sleep 300")"; wait "$runner" 2>/dev/null
check "killing the launcher ends the app, and the sandbox is free again" gl_wait 30 in_use no

as_user "$GL_USER_A" "$GLIMPSE" purge "$id" < /dev/null 2>/dev/null; rc=$?
check_sh "purge without a terminal and without --yes asks for --yes (exit 2)" '[ $rc -eq 2 ]'
# A process of the user that is still exiting may be an ended view's PID 1
# whose overlays the kernel is still unmounting (it let go of its locks
# first): purge waits for it even with the lock free.  A zombie is done,
# though (its threads have let go of everything): one that its parent
# reaps late (init on a slow machine) does not keep purge waiting.
zombie_of () { [ -n "$1" ] && ps -o stat= -p "$1" | grep -q Z; }
# check DESCRIPTION COMMAND…, and how long COMMAND took in $waited_ms
timed_check () {
  local t0
  t0=$(date +%s%N)
  check "$@"
  waited_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
}
# purge --yes as the user, timed
timed_purge () { timed_check "purge --yes as the user, $1" as_user "$GL_USER_A" "$GLIMPSE" purge "$id" --yes; }
as_user "$GL_USER_A" sh -c 'sleep 0 & exec sleep 61.3' & zparent_bg=$!
zparent=$(gl_wait_pid "$GL_USER_A" '^sleep 61[.]3$')
zombie=; find_zombie () { zombie=$(pgrep -P "$zparent"); zombie_of "$zombie"; }
check "(a zombie of the user is there, unreaped: the check below can fail)" gl_wait 10 find_zombie
timed_purge "with a zombie of the user there"
check_sh "… without waiting for the zombie (${waited_ms} ms; it is still there, unreaped)" \
  'zombie_of "$zombie" && [ "$waited_ms" -lt 10000 ]'
kill "$zparent"; wait "$zparent_bg"
# A zombie thread-group leader whose other thread still lives is exiting:
# here one whose last thread lives 3 s more, then creates a file and ends.
# (found by its name: a zombie leader has no command line any more)
leader=; find_leader () { leader=$(pgrep -u "$GL_USER_A" -x exiting-leader | head -n1); zombie_of "$leader"; }
done_file=/tmp/gl-cli-leader-$$
GL_CLEANUPS+=('rm -f "$done_file"')
as_user "$GL_USER_A" "$GL_EXITING_LEADER" 3 "$done_file" & leader_bg=$!
check "(a zombie leader of the user is there, its thread alive: the check below can fail)" \
  gl_wait 10 find_leader
timed_purge "with an exiting process of the user there"
check_sh "… after waiting for the user's exiting process (${waited_ms} ms: its last thread had ended)" \
  '[ -e "$done_file" ]'
wait "$leader_bg"
rm -f "$done_file"
changes=$(as_user "$GL_USER_A" "$GLIMPSE" changes "$id" 2>/dev/null)
check_sh "after purge no changes are left" '[ -z "$changes" ]'
out=$(as_user "$GL_USER_A" "$GLIMPSE" run "$id" -- cat "$HOME_A/cli-test/edit-me" "$HOME_A/cli-test/delete-me")
check_sh "after purge the sandbox shows the host's files again" '[ "$out" = "original
doomed" ]'

# The same for remove (an admin operation: it locks every user's layer):
# with the locks free, a process of a user of the sandbox still exiting is
# waited for; a zombie of theirs is not.
as_user "$GL_USER_A" sh -c 'sleep 0 & exec sleep 61.4' & zparent_bg=$!
zparent=$(gl_wait_pid "$GL_USER_A" '^sleep 61[.]4$')
check "(a zombie of the user is there, unreaped: the check below can fail)" gl_wait 10 find_zombie
as_user "$GL_USER_A" "$GL_EXITING_LEADER" 3 "$done_file" & leader_bg=$!
check "(a zombie leader of the user is there, its thread alive: the check below can fail)" \
  gl_wait 10 find_leader
timed_check "remove" "$GLIMPSE" remove "$id"
check_sh "… after waiting for the exiting process of a user of it (${waited_ms} ms: its last thread had ended), not for the zombie" \
  '[ -e "$done_file" ] && zombie_of "$zombie"'
wait "$leader_bg"
kill "$zparent"; wait "$zparent_bg"
check_sh "remove leaves nothing" '[ ! -e "$GL_STORE/$id" ]'
rm -rf "$HOME_A/cli-test"
finish
