#!/bin/bash
# Integration: glimpse purge and remove never delete a layer under a live
# overlay.
# A view of the user's has ended (its last app exited), but a process of
# the user's outside it opened a directory of the view through
# /proc/APPPID/root while the app ran: that keeps the view's home overlay
# mounted (detached, with the user's layer as its upper directory) after
# the view's namespaces are gone.  Purge (all, or under a path; by the user
# and by root) and remove must refuse, name the holder, and leave the layer
# intact; once the holder has exited, they work.  Through the real setuid
# launcher run by an ordinary user.  Needs root for the set-up.
# SPDX-License-Identifier: LGPL-2.1-or-later
: "${GLIMPSE:?set GLIMPSE to the built glimpse}"
source "$(dirname "$0")/launcher/libtest.sh"
gl_cli_setup
id=held-$$
GL_SANDBOXES+=("$id")
holders=()
GL_CLEANUPS+=('for p in "${holders[@]}"; do kill -KILL "$p" 2>/dev/null; done')

check "glimpse create host --name $id" "$GLIMPSE" create host --name "$id"

# held USER HOME [DIR]: USER runs an app that writes a file in the view's
# home and a directory there; a process of USER's outside the view opens
# that directory (or DIR of the view) through /proc/APPPID/root and keeps
# it open; the app ends.  Sets $holder (the process that keeps it),
# $holder_bg (the job that runs it) and $mark (the file).
held () {
  local user=$1 home=$2 secs=$((3000 + RANDOM % 1000)) hsecs=$((4000 + RANDOM % 1000)) app runner dir
  mark=purge-held-$$-$user
  dir=${3:-$home/$mark.d}
  as_user "$user" "$GLIMPSE" run "$id" -- sh -c \
    "echo kept > ~/$mark && mkdir -p ~/$mark.d && exec sleep $secs" &
  runner=$!
  app_up () { app=$(pgrep -u "$user" -fx "sleep $secs" | head -n1); [ -n "$app" ] && [ -d "/proc/$app/root$home/$mark.d" ]; }
  check "$user: the app runs, its directory made in the view" gl_wait 30 app_up
  as_user "$user" sh -c 'exec 3< "$1" && exec "$3" "$2"' sh "/proc/$app/root$dir" "$hsecs" \
    "${HOLD_AS:-sleep}" &
  holder_bg=$!
  # (the sleep itself, not the subshell that runs as_user: its pid is the
  # one the launcher names, and the one whose fd 3 is the directory)
  holder=$(gl_wait_pid "$user" " $hsecs\$")
  holders+=("$holder")
  # (its fd 3: a directory on an overlay, which it keeps after the view)
  holding () { [ -d "/proc/$holder/fd/3" ] && [ "$(stat -L -f -c %T "/proc/$holder/fd/3")" = overlayfs ]; }
  check "$user: a process outside the view holds the directory open (through /proc/$app/root)" \
    gl_wait 10 holding
  kill -TERM "$app"
  wait "$runner" 2>/dev/null
  view_gone () { ! pgrep -u "$user" -fx "sleep $secs" >/dev/null && flock -x -n "$layer/lock" true; }
  check "$user: the app has ended, and the view with it" gl_wait 30 view_gone
}

# --- the user ---
layer=$GL_STORE/$id/users/$UID_A
held "$GL_USER_A" "$HOME_A"
check "the holder still has the directory open" holding
out=$(as_user "$GL_USER_A" "$GLIMPSE" purge "$id" --yes 2>&1); rc=$?
check_sh "purge refuses while the ended view's overlay is held (exit 5)" '[ $rc -eq 5 ]'
check_sh "… naming the holder and what to do" \
  'grep_quiet -E "held by process $holder \(sleep\), which has a file of it open; close it, then try again" <<<"$out"'
[ $rc -eq 5 ] || printf '%s\n' "$out" | sed 's/^/#   /'
check "… and the layer is intact" [ -f "$layer/home/upper/$mark" ]
out=$(as_user "$GL_USER_A" "$GLIMPSE" purge "$id" "$HOME_A/$mark" --yes 2>&1); rc=$?
check_sh "purge of one path refuses too (exit 5)" '[ $rc -eq 5 ] && [ -f "$layer/home/upper/$mark" ]'
check "the holder was not disturbed" holding

kill -TERM "$holder"; wait "$holder_bg" 2>/dev/null
check "once the holder has exited, purge works" as_user "$GL_USER_A" "$GLIMPSE" purge "$id" --yes
check_sh "… and the layer is gone" '[ ! -e "$layer/home/upper/$mark" ]'
out=$(as_user "$GL_USER_A" "$GLIMPSE" run "$id" -- sh -c "ls ~/$mark 2>&1; echo up")
check_sh "a launch after it builds a view on the empty layer" \
  '[ "$(tail -n1 <<<"$out")" = up ] && ! grep_quiet -x "$HOME_A/$mark" <<<"$out"'

# --- purge run from the process that holds the ended view: a shell with
# the directory open runs glimpse purge, which inherits the descriptor.
# The shell is named; glimpse, which keeps nothing of the view of its own,
# is not ---
purger=$(mktemp -d /tmp/gl-purger.XXXXXX); chmod 1777 "$purger"
GL_CLEANUPS+=("rm -rf '$purger'")
cat > "$purger/held-sh" <<EOF2
#!/bin/sh
# held-sh SECS (its fd 3 on the ended view): once told, runs glimpse purge
while [ ! -e $purger/go ]; do sleep 0.05; done
"$GLIMPSE" purge "$id" --yes > $purger/out 2>&1; echo \$? > $purger/rc
exec sleep "\$1"
EOF2
chmod 755 "$purger/held-sh"
HOLD_AS=$purger/held-sh held "$GL_USER_A" "$HOME_A"
touch "$purger/go"
check "(glimpse purge, run by the holder, has ended)" gl_wait 60 test -s "$purger/rc"
out=$(cat "$purger/out" 2>/dev/null)
check_sh "purge run by the holder refuses (exit 5), naming that process ($holder)" \
  '[ "$(cat "$purger/rc")" = 5 ] && grep_quiet "held by process $holder (held-sh), which has a file of it open" <<<"$out"'
check_sh "… and not itself (it closed what it inherited)" \
  '! grep_quiet "(glimpse)" <<<"$out" && [ "$(grep -o "held by process" <<<"$out" | wc -l)" = 1 ]'
[ "$(grep -o "held by process" <<<"$out" | wc -l)" = 1 ] || printf '%s\n' "$out" | sed 's/^/#   /'
check "… and the layer is intact" [ -f "$layer/home/upper/$mark" ]
kill -TERM "$holder"; wait "$holder_bg" 2>/dev/null
check "once that holder has exited, purge works" as_user "$GL_USER_A" "$GLIMPSE" purge "$id" --yes

# --- root, its own layer ---
layer=$GL_STORE/$id/users/0
held root /root
out=$(as_user root "$GLIMPSE" purge "$id" --yes 2>&1); rc=$?
check_sh "root: purge refuses too (exit 5), naming the holder" \
  '[ $rc -eq 5 ] && grep_quiet "held by process $holder (sleep)" <<<"$out"'
[ $rc -eq 5 ] || printf '%s\n' "$out" | sed 's/^/#   /'
check "… and root's layer is intact" [ -f "$layer/home/upper/$mark" ]
kill -TERM "$holder"; wait "$holder_bg" 2>/dev/null
check "root: once the holder has exited, purge works" as_user root "$GLIMPSE" purge "$id" --yes
check_sh "… and the layer is gone" '[ ! -e "$layer/home/upper/$mark" ]'

# --- a directory of the ended view's read-only root (the system layer and
# base it was built from) held: its overlay is the view's too ---
layer=$GL_STORE/$id/users/$UID_A
held "$GL_USER_A" "$HOME_A" /etc
out=$(as_user "$GL_USER_A" "$LAUNCH" --held "$id" 2>&1); rc=$?
check_sh "--held sees a process that keeps a directory of the ended view's root (exit 124)" \
  '[ $rc -eq 124 ] && grep_quiet "held by process $holder (sleep), which has a file of it open" <<<"$out"'
[ $rc -eq 124 ] || printf '%s\n' "$out" | sed 's/^/#   /'
out=$("$GLIMPSE" remove "$id" 2>&1); rc=$?
check_sh "… and remove refuses (exit 5)" '[ $rc -eq 5 ] && [ -f "$GL_STORE/$id/sandbox.conf" ]'
kill -TERM "$holder"; wait "$holder_bg" 2>/dev/null
check "once the holder has exited, --held says free" as_user "$GL_USER_A" "$LAUNCH" --held "$id"

# --- a directory of the ended view's merged icons held: a read-only
# overlay, in use by no other mount ---
# A new launch would replace the ended view's record, the only trace of
# what keeps that overlay and the system generation its root was built
# from.  It does not get that far: the view's mounts are locked (F4), so
# on its namespace's end they stay connected, and the one held keeps them
# all, the writable overlays too, which the kernel refuses to mount again.
# The launch is refused, naming the holder; the record stays, so --held
# and remove still see the holder.
held "$GL_USER_A" "$HOME_A" /usr/share/icons
rec_before=$(sha256sum < "$GL_STORE/$id/users/.views/$UID_A")
out=$(as_user "$GL_USER_A" "$GLIMPSE" run "$id" -- echo ran 2>&1); rc=$?
check_sh "a new launch is refused while the ended view's merged directory is held, naming the holder" \
  '[ $rc -ne 0 ] && ! grep_quiet -x ran <<<"$out" \
   && grep_quiet "your layer is still in use by an earlier view of this sandbox" <<<"$out" \
   && grep_quiet "held by process $holder (sleep), which has a file of it open; close it, then launch again" <<<"$out"'
[ $rc -ne 0 ] || printf '%s\n' "$out" | sed 's/^/#   /'
check_sh "… the record of the ended view is unchanged" \
  '[ "$(sha256sum < "$GL_STORE/$id/users/.views/$UID_A")" = "$rec_before" ]'
out=$(as_user "$GL_USER_A" "$LAUNCH" --held "$id" 2>&1); rc=$?
check_sh "… --held still sees the holder (exit 124)" \
  '[ $rc -eq 124 ] && grep_quiet "held by process $holder (sleep)" <<<"$out"'
out=$("$GLIMPSE" remove "$id" 2>&1); rc=$?
check_sh "… and remove still refuses (exit 5)" '[ $rc -eq 5 ] && [ -f "$GL_STORE/$id/sandbox.conf" ]'
check "the holder was not disturbed" holding
kill -TERM "$holder"; wait "$holder_bg" 2>/dev/null
check "once the holder has exited, --held says free" as_user "$GL_USER_A" "$LAUNCH" --held "$id"
out=$(as_user "$GL_USER_A" "$GLIMPSE" run "$id" -- echo ran 2>&1)
check_sh "… and a launch runs" '[ "$out" = ran ]'
[ "$out" = ran ] || printf '%s\n' "$out" | sed 's/^/#   /'

# --- a view of another sandbox on the mount IDs of this one's ended view ---
# The kernel gives the 32-bit mount IDs of a view's overlays that are gone
# to the next mounts, lowest free first: a view of another sandbox built
# next has this one's recorded IDs, often every one.  Its processes keep
# nothing of this sandbox: --held (which purge, remove and the reclaim of
# old system generations ask) sees this one free.
id2=held2-$$
GL_SANDBOXES+=("$id2")
check "glimpse create host --name $id2" "$GLIMPSE" create host --name "$id2"
check "a view of $id that ends" as_user "$GL_USER_A" "$GLIMPSE" run "$id" -- true
secs=$((5000 + RANDOM % 1000))
as_user "$GL_USER_A" "$GLIMPSE" run "$id2" -- sh -c "cd /usr/share/icons && exec sleep $secs" &
runner=$!
app=$(gl_wait_pid "$GL_USER_A" "^sleep $secs\$")
holders+=("$app")
gl_wait 30 test -d "/proc/$app/root/etc"
recorded=$(tr '\0' '\n' < "$GL_STORE/$id/users/.views/$UID_A" | sed -n 's/^mounts //p' | tr ' ' '\n')
reused=$(cut -d' ' -f1 "/proc/$app/mountinfo" | grep -cxF "$recorded")
out=$(as_user "$GL_USER_A" "$LAUNCH" --held "$id" 2>&1); rc=$?
check_sh "--held $id says free while a view of $id2 runs ($reused of the mount IDs $id's record names are that view's)" \
  '[ $rc -eq 0 ]'
[ $rc -eq 0 ] || printf '%s\n' "$out" | sed 's/^/#   /'
kill -TERM "$app"; wait "$runner" 2>/dev/null

# --- remove (root, every user's layer): the user's ended view held ---
layer=$GL_STORE/$id/users/$UID_A
# (the user names the holder, which the message shows on root's terminal:
# a CSI as UTF-8 (U+009B) and "2J", "clear the screen" for a terminal that
# honours C1 controls; sleep run by a link of that name)
names=$(mktemp -d /tmp/gl-purge-held.XXXXXX); chmod 755 "$names"
GL_CLEANUPS+=("rm -rf '$names'")
ln -s "$(command -v sleep)" "$names/$(printf 'sl\302\2332Jp')"
HOLD_AS="$names/$(printf 'sl\302\2332Jp')" held "$GL_USER_A" "$HOME_A"
out=$("$GLIMPSE" remove "$id" 2>&1); rc=$?
check_sh "remove refuses while a user's ended view is held (exit 5), naming the holder" \
  '[ $rc -eq 5 ] && grep_quiet "held by process $holder (sl??2Jp)" <<<"$out" \
   && grep_quiet "Not removed (--force removes it anyway): the layer of $GL_USER_A (uid $UID_A) of “$id” is still in use" <<<"$out"'
[ $rc -eq 5 ] || printf '%s\n' "$out" | sed 's/^/#   /'
check_sh "… and that name reaches root's terminal without its control bytes" \
  '! LC_ALL=C grep -q "$(printf "\\302\\233")" <<<"$out"'
check "… and the sandbox and the user's layer are intact" [ -f "$layer/home/upper/$mark" ]
check "the holder was not disturbed" holding
kill -TERM "$holder"; wait "$holder_bg" 2>/dev/null
check "once the holder has exited, remove works" "$GLIMPSE" remove "$id"
check_sh "… and the sandbox is gone" '[ ! -e "$GL_STORE/$id" ]'
rm -f "/root/$mark"   # (never written: the host is not; in case it was)
finish
