#!/bin/bash
# Integration: a package operation's scratch is out of other users' reach.
# A hostile postinst leaves a set-uid program (a copy of id) in the
# operation's upper layer, which the range's root owns on the host, and
# waits; while it waits, an ordinary host user must not reach that program
# under the store's system/.op-*/upper (running it would give them the
# range's uid, which owns every sandbox's sealed system generations).
# Afterwards the install succeeds and the new generation has no set-id bit.
# Needs root.
source "$(dirname "$0")/libpkgtest.sh"
source "$(dirname "$0")/librepo.sh"

gl_pkg_env
id=opscratch-$$
GL_SANDBOXES+=("$id")
# the postinst's wait: a command line no other test uses
pause="sleep 2917.$$"

cat > "$WORK/suid-postinst" <<POSTINST
#!/bin/sh
cp /usr/bin/id /usr/local/bin/glimpse-op-suid
chmod 4755 /usr/local/bin/glimpse-op-suid
mkdir -p /usr/local/share && cat /proc/self/mountinfo > /usr/local/share/glimpse-op-mounts
$pause || true
exit 0
POSTINST
gl_deb glimpse-op-suid 1.0 "$WORK/suid-postinst"
gl_serve_host_sandbox "$id"

"$GLIMPSE" install "$id" glimpse-op-suid > "$WORK/install.log" 2>&1 &
install_pid=$!
wait_pid=
for _ in $(seq 600); do
  wait_pid=$(pgrep -f -x "$pause" | head -n 1)
  [ -n "$wait_pid" ] || ! kill -0 "$install_pid" 2>/dev/null || { sleep 0.1; continue; }
  break
done
check_sh "the postinst is waiting (seen within 60 s)" '[ -n "$wait_pid" ]'
prog=$(ls -d "$GL_STORE/$id"/system/.op-*/upper/usr/local/bin/glimpse-op-suid 2>/dev/null | head -n 1)
echo "# left by the postinst: $prog ($(stat -c '%a %u' "$prog" 2>/dev/null))"
check_sh "it left a set-uid program in the operation's upper layer" \
  '[ -n "$prog" ] && [ -u "$prog" ]'
got=$(as_user "$GL_USER_A" "$prog" 2>&1)
echo "# $GL_USER_A running it: $got"
check_sh "an ordinary user cannot reach it while the operation runs" \
  '! as_user "$GL_USER_A" test -e "$prog" && ! grep -q "euid=" <<<"$got"'
[ -z "$wait_pid" ] || kill "$wait_pid" 2>/dev/null
wait "$install_pid"; rc=$?
check_sh "the install then succeeds (rc $rc)" '[ $rc -eq 0 ]'
[ $rc -eq 0 ] || tail -n 15 "$WORK/install.log" | sed 's/^/# /'
tree=$(gl_tree "$id")
check_sh "the new generation has the program without its set-uid bit" \
  '[ -f "$tree/usr/local/bin/glimpse-op-suid" ] && [ ! -u "$tree/usr/local/bin/glimpse-op-suid" ]'
# Pages of a tmpfs are freed only when the operation's namespace ends, not
# by killing what wrote them: the operation's scratch mounts (/tmp, /run,
# /dev/shm, …) are each bounded, and the writable ones add up to 30% of
# memory at most (the small fixed ones aside: /dev of 1 MiB and the staging
# tmpfs of 16 MiB that /etc/resolv.conf comes from).
tmpfs_sum=$(awk -v mem="$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)" '
  { for (i = 1; i <= NF && $i != "-"; i++) ; if ($(i + 1) != "tmpfs" || $6 !~ /^rw(,|$)/) next; n++
    print "# " $5 " " $(i + 3) > "/dev/stderr"
    if (match($(i + 3), /(^|,)size=[0-9]+k/)) { s = substr($(i + 3), RSTART, RLENGTH); sub(/.*size=/, "", s); sum += s + 0 }
    else unbounded++ }
  END { printf "%d tmpfs, %d without a size, %d KiB of %d KiB of memory\n", n, unbounded, sum, mem
        exit !(n > 0 && unbounded == 0 && sum <= mem * 0.30 + 32768) }' "$tree/usr/local/share/glimpse-op-mounts" 2>&1)
tmpfs_rc=$?
echo "# the operation's writable tmpfs mounts: $tmpfs_sum"
check_sh "the operation's tmpfs mounts are bounded, 30% of memory in all" '[ $tmpfs_rc -eq 0 ]'
check "remove" "$GLIMPSE" remove "$id"
finish
