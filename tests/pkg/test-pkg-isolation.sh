#!/bin/bash
# Integration: what a maintainer script can reach (glimpse-pkgns.c, "THE
# RULE"s at its top).  A hostile postinst tries to read a root-only host
# file that no list names and to connect to a TCP service the test runs on
# the host's 127.0.0.1, and records what it saw in the sandbox's tree:
# nothing of the secret, no connection.  A package whose postinst adds
# system users (adduser --system, useradd -r) still installs, on a copy of
# /etc/shadow without the host's hashes.  A postinst that waits while the
# host's root, during the operation, creates a new root-only file, makes a
# world-readable one root-only and a directory root-only: it can read none
# of them (the check at open), though it read the two that were public
# before.  The same rule over a base tree
# (not the host), through the helper itself; with --net (downloads) the
# command still does not reach it, and its only way out is the relay to
# the descriptor it was given (--proxy-fd; here a permissive stand-in for
# glimpse's proxy that connects everything to the service: the control that
# the checks can fail).  Needs root.
source "$(dirname "$0")/libpkgtest.sh"
source "$(dirname "$0")/librepo.sh"
command -v busybox >/dev/null || skip "busybox is not installed (.ci/install-deps installs busybox-static)"

gl_pkg_env
id=pkgiso-$$
GL_SANDBOXES+=("$id")

# --- a root-only host file at a path no list names, and a loopback service
tag=$$-$RANDOM$RANDOM
secret=/etc/glimpse-test-secret-$tag
secret_value=glimpse-leak-$tag
listen_pid=
# what the host's root changes while the operation runs
late=/etc/glimpse-test-late-$tag late_value=glimpse-late-$tag
turned=/etc/glimpse-test-turned-$tag turned_value=glimpse-turned-$tag
closed=/etc/glimpse-test-closed-$tag closed_value=glimpse-closed-$tag
sync=/etc/glimpse-test-sync-$tag
cleanup_iso () {
  rm -rf "$secret" "$late" "$turned" "$closed" "$sync"
  [ -z "$listen_pid" ] || kill "$listen_pid" 2>/dev/null
}
trap 'cleanup_iso; gl_cleanup' EXIT
( umask 077; echo "$secret_value" > "$secret" )
# Every connection that arrives is recorded in $WORK/connections; the port
# is written to $WORK/port once it listens.
python3 -c '
import os, socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
with open(sys.argv[2] + ".tmp", "w") as f:
    f.write("%d\n" % s.getsockname()[1])
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
while True:
    c, _ = s.accept()
    with open(sys.argv[1], "a") as f:
        f.write("connection\n")
    c.sendall(b"glimpse-host-service\n"); c.close()
' "$WORK/connections" "$WORK/port" </dev/null >/dev/null 2>&1 &
listen_pid=$!
for _ in $(seq 300); do [ -s "$WORK/port" ] && break; sleep 0.1; done
lport=$(cat "$WORK/port" 2>/dev/null)
[ -n "$lport" ] || { echo "Bail out! the loopback listener did not start within 30 s"; exit 1; }
: > "$WORK/connections"

# --- the packages
cat > "$WORK/probe-postinst" <<POSTINST
#!/bin/sh
r=/var/lib/glimpse-probe
mkdir -p \$r
exec > \$r/report 2>&1
echo "secret: \$(cat $secret 2>&1)"
if timeout 10 bash -c 'exec 3<>/dev/tcp/127.0.0.1/$lport && head -c 64 <&3'; then
  echo "connect: ok"
else
  echo "connect: failed"
fi
echo "netdev: \$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\n' ' ')"
echo "done"
exit 0
POSTINST
gl_deb glimpse-probe 1.0 "$WORK/probe-postinst"
# It reads what is public, says it is ready, and waits (for a name in a
# directory of the base only: its listing is the base's live one) until
# the host's root has made the changes; then it reads again.
cat > "$WORK/late-postinst" <<POSTINST
#!/bin/sh
r=/var/lib/glimpse-late
mkdir -p \$r
exec > \$r/report 2>&1
echo "turned before: \$(cat $turned 2>&1)"
echo "closed before: \$(cat $closed/file 2>&1)"
echo ready > \$r/ready
i=0
until ls $sync | grep -x go >/dev/null; do
  i=\$((i + 1)); [ \$i -lt 1200 ] || { echo "no go within 120 s"; exit 0; }
  sleep 0.1
done
echo "late: \$(cat $late 2>&1)"
echo "turned: \$(cat $turned 2>&1)"
echo "closed: \$(cat $closed/file 2>&1)"
echo "closed listing: \$(ls $closed 2>&1)"
echo "done"
exit 0
POSTINST
gl_deb glimpse-late 1.0 "$WORK/late-postinst"
cat > "$WORK/sysuser-postinst" <<'POSTINST'
#!/bin/sh
set -e
if [ "$1" = configure ]; then
  adduser --system --group --no-create-home --home /nonexistent glimpse-sysuser-a
  useradd -r -M -s /usr/sbin/nologin glimpse-sysuser-b
fi
POSTINST
gl_deb glimpse-sysuser 1.0 "$WORK/sysuser-postinst"
gl_serve_host_sandbox "$id"

# --- the probe: no secret, no connection
out=$("$GLIMPSE" install "$id" glimpse-probe 2>&1); rc=$?
check_sh "the probe installs (downloaded from 127.0.0.1 before the cut)" '[ $rc -eq 0 ]'
[ $rc -eq 0 ] || echo "$out" | sed 's/^/# /' | tail -15
tree=$(gl_tree "$id")
rep=$tree/var/lib/glimpse-probe/report
[ -f "$rep" ] && sed 's/^/# report: /' "$rep"
check_sh "its postinst ran and reported" 'grep -qx done "$rep"'
check_sh "a root-only host file no list names is not readable ($secret)" \
  '! grep -q "$secret_value" "$rep" && grep -q "^secret: .*No such file" "$rep"'
check_sh "… nor anywhere in the new generation" '! grep -rqs "$secret_value" "$tree"'
check_sh "the host's loopback service is not reachable from the postinst" \
  'grep -qx "connect: failed" "$rep" && [ ! -s "$WORK/connections" ]'
check_sh "its network namespace has only a loopback of its own" 'grep -qx "netdev: lo " "$rep"'
check_sh "the host's file is unchanged" '[ "$(cat "$secret")" = "$secret_value" ]'

# --- the host's root makes files private while the postinst runs
echo "$turned_value" > "$turned"; chmod 0644 "$turned"
mkdir -m 0755 "$closed" "$sync"; echo "$closed_value" > "$closed/file"; chmod 0644 "$closed/file"
"$GLIMPSE" install "$id" glimpse-late > "$WORK/late.log" 2>&1 &
install_pid=$!
late_ready () {
  compgen -G "$GL_STORE/$id/system/.op-*/upper/var/lib/glimpse-late/ready" >/dev/null \
    || ! kill -0 "$install_pid" 2>/dev/null
}
gl_wait 120 late_ready
( umask 077; echo "$late_value" > "$late" )
chmod 0600 "$turned"
chmod 0700 "$closed"
touch "$sync/go"
wait "$install_pid"; rc=$?
check_sh "a postinst that waits for the host's changes installs" '[ $rc -eq 0 ]'
[ $rc -eq 0 ] || tail -n 15 "$WORK/late.log" | sed 's/^/# /'
tree=$(gl_tree "$id")
rep=$tree/var/lib/glimpse-late/report
[ -f "$rep" ] && sed 's/^/# late: /' "$rep"
check_sh "it read the two public files before the changes (the checks below can fail)" \
  'grep -qx "turned before: $turned_value" "$rep" && grep -qx "closed before: $closed_value" "$rep"'
check_sh "… and went on after them" 'grep -qx done "$rep"'
check_sh "a root-only file the host's root created during the operation is not readable" \
  '! grep -q "$late_value" "$rep" && grep -q "^late: .*Permission denied" "$rep"'
check_sh "… nor a file the host's root made root-only during it" \
  '! grep -q "^turned: $turned_value" "$rep" && grep -q "^turned: .*Permission denied" "$rep"'
check_sh "… nor a file in a directory made root-only during it, nor its listing" \
  '! grep -q "^closed: $closed_value" "$rep" && grep -q "^closed: .*Permission denied" "$rep" \
   && grep -q "^closed listing: .*Permission denied" "$rep"'
check_sh "… nor the new file anywhere in the new generation" '! grep -rqs -e "$late_value" "$tree"'

# --- a postinst that adds system users
host_passwd=$(sha256sum < /etc/passwd)
out=$("$GLIMPSE" install "$id" glimpse-sysuser 2>&1); rc=$?
check_sh "a package whose postinst runs adduser --system and useradd -r installs" '[ $rc -eq 0 ]'
[ $rc -eq 0 ] || echo "$out" | sed 's/^/# /' | tail -15
tree=$(gl_tree "$id")
check_sh "… its users are in the sandbox's passwd and shadow" \
  'grep -q "^glimpse-sysuser-a:" "$tree/etc/passwd" && grep -q "^glimpse-sysuser-b:" "$tree/etc/passwd" \
   && grep -q "^glimpse-sysuser-b:" "$tree/etc/shadow" && grep -q "^glimpse-sysuser-a:" "$tree/etc/group"'
check_sh "… not in the host's" '[ "$(sha256sum < /etc/passwd)" = "$host_passwd" ] && ! grep -q "^glimpse-sysuser" /etc/passwd'
host_hash_in () {
  local h
  for h in $(cut -d: -f2 /etc/shadow /etc/gshadow | grep -E '.{8,}'); do grep -qF -- "$h" "$1" && return 0; done
  return 1
}
check_sh "the sandbox's shadow files carry no host password hash" \
  '! host_hash_in "$tree/etc/shadow" && ! host_hash_in "$tree/etc/gshadow" \
   && awk -F: "\$2 != \"*\" && \$2 != \"!\" && \$2 != \"!*\" { bad = 1 } END { exit bad }" "$tree/etc/shadow"'
check "remove" "$GLIMPSE" remove "$id"

# --- the same rule over a base tree, through the helper
range=$(awk -F: '$1=="glimpse" {print $2}' /etc/subuid)
grange=$(awk -F: '$1=="glimpse" {print $2}' /etc/subgid)
base=$WORK/base op1=$WORK/op1
mkdir -p "$base"/{bin,etc/private,proc,dev,sys,tmp,run,var/lib,usr/sbin}
cp "$(command -v busybox)" "$base/bin/busybox"
( umask 077; echo "$secret_value" > "$base/etc/glimpse-test-secret-$tag"; echo "$secret_value-dir" > "$base/etc/private/key" )
chmod 0700 "$base/etc/private"
echo "public-$tag" > "$base/etc/public"; chmod 0644 "$base/etc/public"
printf 'root:$6$glimpsetestsalt$notarealhashbutlongenough:19000:0:99999:7:::\n' > "$base/etc/shadow"; chmod 0640 "$base/etc/shadow"
probe='cat /etc/public; cat /etc/glimpse-test-secret-'$tag'; ls /etc/private; cat /etc/private/key; cat /etc/shadow
if echo | timeout 10 nc 127.0.0.1 '$lport'; then echo connect: ok; else echo connect: failed; fi
if [ -n "$GLIMPSE_PROXY" ]; then echo | timeout 10 nc 127.0.0.1 3128 | sed "s/^/relay: /"; fi'
run_helper () { # OP-DIR [OPTION…]: the probe over $base
  local op=$1 cache=""; shift
  mkdir -p "$op/upper" "$op/work" "$op/input"; chown "$range:$grange" "$op/upper" "$op/work"
  "$GLIMPSE_PKGNS" --ids "$range:$grange" --base "$base" --op "$op" "$@" -- /bin/busybox sh -c "$probe" 2>&1
  # what glimpse does after an operation whose command ended before the
  # walk beside it began (it said so: walk-pending): the walk for the
  # cache, --walk-refresh, the cache's lock held for it; here waited for
  [ "${1:-}" = --walk-cache ] && cache=$2
  if [ -n "$cache" ] && [ -f "$op/walk-pending" ]; then
    ( flock -n 9 && "$GLIMPSE_PKGNS" --walk-refresh --base "$base" --walk-cache "$cache" --walk-lock-fd 9 ) \
      9>>"$cache.lock"
  fi
}
# run_relayed OP-DIR [answer|silent]: the probe with --net and a stand-in
# for glimpse's proxy that connects every relayed connection to the
# service; with "answer" or "silent", $cut_probe with --net-until-cut
# (apt's one run: the command asks PID 1 for the cut, as glimpse's
# DPkg::Pre-Invoke hook does before dpkg), the stand-in answering "k" to
# "offline", or never
run_relayed () {
  python3 - "$GLIMPSE_PKGNS" "$range:$grange" "$base" "$1" "${2:-net}" "$lport" "$probe" "$cut_probe" <<'PY'
import os, socket, subprocess, sys, threading
pkgns, ids, base, op, mode, lport, probe, cut_probe = sys.argv[1:]
for d in ("upper", "work", "input"):
    os.makedirs(os.path.join(op, d), exist_ok=True)
r, g = ids.split(":")
os.chown(os.path.join(op, "upper"), int(r), int(g)); os.chown(os.path.join(op, "work"), int(r), int(g))
ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
def serve():
    while True:
        msg, fds, _, _ = socket.recv_fds(ours, 1, 4)
        if not msg:
            return
        if msg == b"o":
            print("proxy: offline asked", flush=True)
            if mode == "answer":
                ours.send(b"k")
            continue
        for fd in fds:
            c = socket.socket(fileno=fd)
            s = socket.create_connection(("127.0.0.1", int(lport)))
            c.sendall(s.recv(64)); c.close(); s.close()
threading.Thread(target=serve, daemon=True).start()
p = subprocess.run([pkgns, "--ids", ids, "--base", base, "--op", op,
                    "--net" if mode == "net" else "--net-until-cut",
                    "--proxy-fd", str(theirs.fileno()), "--", "/bin/busybox", "sh", "-c",
                    probe if mode == "net" else cut_probe],
                   pass_fds=(theirs.fileno(),), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
sys.stdout.write(p.stdout.decode())
print("status: %d" % p.returncode)
PY
}
cut_probe='echo | timeout 10 nc 127.0.0.1 3128 | sed "s/^/before: /"
printf o > /run/glimpse-net/request; read -r a < /run/glimpse-net/answer; echo "answer: $a"
if echo | timeout 10 nc 127.0.0.1 3128 >/dev/null; then echo after: connected; else echo after: refused; fi
printf oo > /run/glimpse-net/request; read -r a < /run/glimpse-net/answer; read -r b < /run/glimpse-net/answer
echo "again: $a $b"'
: > "$WORK/connections"
got=$(run_helper "$op1")
echo "$got" | sed 's/^/# base: /'
check_sh "over a base tree, what every user may read is there" 'grep -qx "public-$tag" <<<"$got"'
check_sh "… a root-only file and a root-only directory's files are not" \
  '! grep -q "$secret_value" <<<"$got"'
check_sh "… /etc/shadow reads with no password hash" 'grep -q "^root:\*:19000:" <<<"$got" && ! grep -q notarealhash <<<"$got"'
check_sh "… the host's loopback service is not reachable" 'grep -qx "connect: failed" <<<"$got" && [ ! -s "$WORK/connections" ]'
got=$(run_helper "$WORK/op2" --net)
check_sh "--net without the proxy's descriptor is refused" 'grep -q "need --proxy-fd" <<<"$got"'
got=$(run_relayed "$WORK/op3")
echo "$got" | sed 's/^/# relayed: /'
check_sh "with --net (downloads) the service is still not reachable directly" \
  'grep -qx "connect: failed" <<<"$got"'
check_sh "… only through the relay to glimpse's descriptor: the checks above can fail" \
  'grep -qx "relay: glimpse-host-service" <<<"$got" && [ -s "$WORK/connections" ]'
got=$(run_relayed "$WORK/op-cut" answer)
echo "$got" | sed 's/^/# cut: /'
check_sh "--net-until-cut: the relay works until the cut" 'grep -qx "before: glimpse-host-service" <<<"$got"'
check_sh "… the cut is asked of glimpse's proxy, and answered once the proxy confirms" \
  'grep -qx "proxy: offline asked" <<<"$got" && grep -qx "answer: offline" <<<"$got"'
check_sh "… after it nothing listens on 127.0.0.1:3128 (the relay is gone)" 'grep -qx "after: refused" <<<"$got"'
check_sh "… a later request is answered at once, without asking the proxy again" \
  'grep -qx "again: offline offline" <<<"$got" && [ "$(grep -c "^proxy: offline asked" <<<"$got")" = 1 ] && grep -qx "status: 0" <<<"$got"'
got=$(run_relayed "$WORK/op-cut2" silent)
echo "$got" | sed 's/^/# no confirmation: /'
check_sh "--net-until-cut: a proxy that does not confirm the cut stops the operation before the command goes on" \
  'grep -q "could not cut the package operation" <<<"$got" && ! grep -q "^answer:" <<<"$got" && grep -qx "status: 125" <<<"$got"'
# a chain of directories deeper than PATH_MAX (anyone may make one in a
# world-writable directory of the host) is shown empty, and does not stop
# the operation
python3 - "$base/srv/deep" <<'PY'
import os, sys
os.makedirs(sys.argv[1]); os.chdir(sys.argv[1])
for i in range(25):
    n = "%03d" % i + "x" * 200
    os.mkdir(n); os.chdir(n)
PY
got=$(run_helper "$WORK/op-deep")
check_sh "a directory chain deeper than PATH_MAX in the base does not stop an operation" \
  'grep -qx "public-$tag" <<<"$got"'
rm -rf "$base/srv/deep"
# … nor one of one-character names, 1000 directories deep, with the limit
# of open files at 1024 as sudo leaves it: the walk holds two descriptors
# for each level it is in, and raises its own limit (walk_nofile); the walk
# after an operation (--walk-refresh) as well, which writes its cache
python3 - "$base/srv/deep" <<'PY'
import os, sys
os.makedirs(sys.argv[1]); os.chdir(sys.argv[1])
for i in range(1000):
    os.mkdir("a"); os.chdir("a")
PY
got=$(ulimit -Sn 1024; run_helper "$WORK/op-deep1")
check_sh "… nor does a chain of 1000 one-character names, 1024 open files allowed" \
  'grep -qx "public-$tag" <<<"$got"'
got=$(ulimit -Sn 1024; exec 9>>"$WORK/deep-cache.lock"
      "$GLIMPSE_PKGNS" --walk-refresh --base "$base" --walk-cache "$WORK/deep-cache" --walk-lock-fd 9 2>&1
      echo "status: $?")
check_sh "… nor the walk after an operation: it writes the cache" \
  'grep -qx "status: 0" <<<"$got" && [ -s "$WORK/deep-cache" ]'
rm -rf "$base/srv/deep" "$WORK/deep-cache" "$WORK/deep-cache.lock"
# --- the walk's cache (glimpse-pkgns.c, "The walk's cache" and
# build_mask): an operation's mask is the last walk's, every entry it masked
# checked again, while the walk runs beside the command (or, when the
# command ends first, as here, after it: run_helper); what changed in
# the base between two operations cannot be read at the second one (the
# check at open) and is masked from the third on
cache=$WORK/walk-cache
mkdir -p "$base/var/lib/turns" "$base/etc/later"
echo "turns-$tag" > "$base/var/lib/turns/file"
echo "later-$tag" > "$base/etc/later/file"
chmod 0755 "$base/var/lib/turns" "$base/etc/later"; chmod 0644 "$base/var/lib/turns/file" "$base/etc/later/file"
# (the directories' ctime older than the cache's margin, 2 s: otherwise the
# cache would not take them at the next operation, and the test would not
# test it)
sleep 3
probe='cat /var/lib/turns/file /etc/later/file; ls /etc/later | sed "s/^/later: /"'
got=$(run_helper "$WORK/op4" --walk-cache "$cache")
check_sh "with a walk cache, what every user may read is there" \
  'grep -qx "turns-$tag" <<<"$got" && grep -qx "later-$tag" <<<"$got" && [ -s "$cache" ] \
   && [ "$(stat -c %u:%a "$cache")" = 0:600 ]'
# between the operations the host's root makes a directory root-only, and
# adds a root-only file to another one whose mtime it then sets back (as
# tar and rsync do): only its ctime says it changed
chmod 0700 "$base/var/lib/turns"
touch -r "$base/etc/later" "$WORK/later-times"
( umask 077; echo "$secret_value-new" > "$base/etc/later/new" )
touch -m -r "$WORK/later-times" "$base/etc/later"
got=$(run_helper "$WORK/op5" --walk-cache "$cache")
echo "$got" | sed 's/^/# cached: /'
check_sh "… at the next operation, a directory made root-only since cannot be read" \
  '! grep -q "turns-$tag" <<<"$got" && grep -qx "later-$tag" <<<"$got"'
check_sh "… nor a root-only file added since (the directory's mtime set back)" \
  '! grep -q "$secret_value" <<<"$got"'
got=$(run_helper "$WORK/op5b" --walk-cache "$cache")
echo "$got" | sed 's/^/# walked: /'
check_sh "… and at the one after, the directory is masked (empty, not refused)" \
  '! grep -q "turns-$tag" <<<"$got" && ! grep -q "turns/file.*ermission denied" <<<"$got" \
   && grep -qx "later-$tag" <<<"$got"'
check_sh "… and so is the file (not listed)" \
  '! grep -q "$secret_value" <<<"$got" && ! grep -qx "later: new" <<<"$got" && grep -qx "later: file" <<<"$got"'
printf 'glimpse-pkgns walk cache 1\n\001garbage' > "$cache"
got=$(run_helper "$WORK/op6" --walk-cache "$cache")
check_sh "a damaged walk cache is ignored and replaced" \
  '! grep -q "turns-$tag\|$secret_value" <<<"$got" && grep -qx "later-$tag" <<<"$got" \
   && [ "$(stat -c %s "$cache")" -gt 100 ]'
sleep 3
run_helper "$WORK/op7" --walk-cache "$cache" >/dev/null
ino=$(stat -c %i "$cache")
got=$(run_helper "$WORK/op8" --walk-cache "$cache")
check_sh "over an unchanged base the walk cache is used as it is (not rewritten)" \
  '[ "$(stat -c %i "$cache")" = "$ino" ] && grep -qx "later-$tag" <<<"$got" && ! grep -q "turns-$tag" <<<"$got"'
# a directory whose times alone changed (nothing came, went or changed
# kind) is read again, and the cache is not rewritten for it
touch "$base/etc/later"
got=$(run_helper "$WORK/op8b" --walk-cache "$cache")
check_sh "… nor when only a directory's times changed (it is read again)" \
  '[ "$(stat -c %i "$cache")" = "$ino" ] && grep -qx "later-$tag" <<<"$got" && ! grep -q "turns-$tag" <<<"$got"'
( umask 077; echo "$secret_value-newer" > "$base/etc/later/newer" )
got=$(run_helper "$WORK/op8c" --walk-cache "$cache")
check_sh "… a root-only file added to such a directory cannot be read at the next operation" \
  '! grep -q "$secret_value" <<<"$got" && grep -qx "later-$tag" <<<"$got" && [ "$(stat -c %i "$cache")" != "$ino" ]'
got=$(run_helper "$WORK/op8d" --walk-cache "$cache")
check_sh "… and is masked at the one after" \
  '! grep -q "$secret_value" <<<"$got" && ! grep -qx "later: newer" <<<"$got" && grep -qx "later-$tag" <<<"$got"'
# the cache keeps the masked paths ahead of the records, and the view's
# mask is built from them before the records are read: records found
# damaged then (their "end" cut off) leave that mask as it is, and the
# walk beside the command is a whole one, which writes the cache again
truncate -s $(( $(stat -c %s "$cache") - 4 )) "$cache"
got=$(run_helper "$WORK/op8e" --walk-cache "$cache")
check_sh "a walk cache whose records are damaged still masks by its list of masked paths, and is written again" \
  '! grep -q "$secret_value" <<<"$got" && ! grep -qx "later: newer" <<<"$got" && grep -qx "later-$tag" <<<"$got" \
   && [ "$(tail -c 4 "$cache")" = end ]'
ino=$(stat -c %i "$cache")
chmod 0666 "$cache"
run_helper "$WORK/op9" --walk-cache "$cache" >/dev/null
check_sh "a walk cache others may write is not read (it is replaced)" \
  '[ "$(stat -c %i "$cache")" != "$ino" ] && [ "$(stat -c %u:%a "$cache")" = 0:600 ]'
# a walker that cannot leave the walk to glimpse (walk-pending cannot be
# written: here a directory stands there) walks after the command itself,
# and the operation does not fail for it
( umask 077; echo "$secret_value-pending" > "$base/etc/later/pending" )
mkdir -p "$WORK/op9b"; mkdir "$WORK/op9b/walk-pending"
ino=$(stat -c %i "$cache")
got=$(run_helper "$WORK/op9b" --walk-cache "$cache"; echo "exit $?")
check_sh "a walker that cannot say the walk is left to glimpse walks after the command, and the operation succeeds" \
  'grep -qx "exit 0" <<<"$got" && grep -qx "later-$tag" <<<"$got" && [ "$(stat -c %i "$cache")" != "$ino" ] \
   && tr "\0" "\n" < "$cache" | grep -a "etc/later/pending\$" >/dev/null'
# a walk after an operation whose lock is no longer the cache's (the
# sandbox removed and made again meanwhile: a lock of its own) writes
# nothing
ino=$(stat -c %i "$cache")
( umask 077; echo "$secret_value-relock" > "$base/etc/later/relock" )
got=$(exec 9>>"$cache.lock"; rm -f "$cache.lock"; : > "$cache.lock"
      "$GLIMPSE_PKGNS" --walk-refresh --base "$base" --walk-cache "$cache" --walk-lock-fd 9 2>&1; echo "exit $?")
check_sh "a walk after an operation whose lock is no longer the cache's does not write the cache" \
  'grep -qx "exit 0" <<<"$got" && [ "$(stat -c %i "$cache")" = "$ino" ]'
got=$(exec 9>>"$cache.lock"; "$GLIMPSE_PKGNS" --walk-refresh --base "$base" --walk-cache "$cache" --walk-lock-fd 9 2>&1; echo "exit $?")
check_sh "… and with the cache's own lock it does" \
  'grep -qx "exit 0" <<<"$got" && [ "$(stat -c %i "$cache")" != "$ino" ]'
# a lock's descriptor that is none: empty, not a number, 0-2, closed, or
# not a regular file (a directory)
for fd in "" 9x 2 8 7; do
  got=$(exec 9>>"$cache.lock" 7<"$base" 8<&-; "$GLIMPSE_PKGNS" --walk-refresh --base "$base" --walk-cache "$cache" \
          --walk-lock-fd "$fd" 2>&1; echo "exit $?")
  check_sh "--walk-lock-fd \"$fd\" is refused" \
    'grep -q "expected the descriptor of the walk cache.s lock, got \"$fd\"" <<<"$got" && ! grep -qx "exit 0" <<<"$got"'
done
# a user swaps a directory of theirs, which holds private files the mask
# hides, for a link to /root and back, over and over (renameat2
# RENAME_EXCHANGE) while operations build their masks: the host's root,
# mirroring the directories above a masked entry, never follows the link
# nor fails the operation (each one did, "cannot mirror")
mkdir -m 0755 "$base/var/lib/swap" "$base/var/lib/swap/d"
for i in $(seq 100); do ( umask 077; echo "$secret_value" > "$base/var/lib/swap/d/p$i" ); done
ln -s /root "$base/var/lib/swap/l"
chown -R -h nobody "$base/var/lib/swap"
sleep 3
probe='cat /etc/public'
run_helper "$WORK/op10" --walk-cache "$cache" >/dev/null
setpriv --reuid=nobody --regid=nogroup --clear-groups /usr/bin/python3 -c '
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b = (p.encode() for p in sys.argv[1:])
while libc.renameat2(-100, a, -100, b, 2) == 0:
    pass
' "$base/var/lib/swap/d" "$base/var/lib/swap/l" &
swapper=$!
swapped_ok=0
for k in $(seq 8); do
  got=$(run_helper "$WORK/op-swap$k" --walk-cache "$cache")
  if grep -qx "public-$tag" <<<"$got"; then swapped_ok=$((swapped_ok + 1)); else echo "$got" | tail -n 2 | sed 's/^/# /'; fi
done
check_sh "a user swapping a directory of theirs for a link while masks are built fails no operation ($swapped_ok of 8 ran)" \
  'kill -0 $swapper && [ $swapped_ok -eq 8 ]'
kill $swapper; wait $swapper 2>/dev/null
finish
