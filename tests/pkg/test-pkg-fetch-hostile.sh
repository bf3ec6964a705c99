#!/bin/bash
# Integration: nothing of the sandbox runs with the host's network, not even
# its package manager's download stage (glimpse-pkgns.c, THE RULE for the
# network; gl-pkg-proxy.h).  A hostile package installs apt hooks
# (APT::Update::Pre-Invoke, DPkg::Pre-Invoke) and replaces apt's http
# method with a wrapper; on every later `glimpse install` and `glimpse
# update`, each of them tries to reach a TCP service and an abstract unix
# socket the test runs on the host, the repository's port directly, and
# the service through the download proxy, and records what it reached in
# the sandbox's tree.  Its dpkg hook also keeps a connection through the
# proxy alive while dpkg runs; a later package's postinst, after the cut
# (apt runs once; the network is cut before dpkg), finds no relay and no
# socket of its network namespace listening or connected: glimpse's proxy
# closed the kept-alive one; taking every descriptor of the operation's
# other processes (pidfd_getfd: PID 1, apt, the holder) gives it no socket
# that answers.  Its debconf config script (dpkg-preconfigure, the host's
# DPkg::Pre-Install-Pkgs, before dpkg) and its preinst find the same: the
# cut comes before any of its code.  The listeners record every connection; a connection
# the test makes itself afterwards proves they were listening.  Installs
# and updates from the real repository still work, and a download from an
# address not among the sandbox's repositories is refused and said so.  A
# sandbox whose apt.conf.d names no main file still gets the cut (glimpse's
# settings are on apt's command line, read after every file of its own).
# Needs root.
source "$(dirname "$0")/libpkgtest.sh"
source "$(dirname "$0")/librepo.sh"
source "$(dirname "$0")/../lib/wait.sh"
gl_pkg_env --launcher
id=pkgfetch-$$
GL_SANDBOXES+=("$id")
tag=$$-$RANDOM
abstract=glimpse-test-$tag

# --- the host's services: a TCP listener on 127.0.0.1 and an abstract
# unix socket; each connection is a line in $WORK/connections (the first
# bytes the client sent, or "-")
listen_pid=
trap '[ -z "$listen_pid" ] || kill "$listen_pid" 2>/dev/null; gl_cleanup' EXIT
cat > "$WORK/listen.py" <<'PY'
import os, select, socket, sys
log, portfile, name = sys.argv[1:]
t = socket.socket(); t.bind(("127.0.0.1", 0)); t.listen(16)
u = socket.socket(socket.AF_UNIX); u.bind("\0" + name); u.listen(16)
with open(portfile + ".tmp", "w") as f:
    f.write("%d\n" % t.getsockname()[1])
os.rename(portfile + ".tmp", portfile)
while True:
    for s in select.select([t, u], [], [])[0]:
        c, _ = s.accept()
        c.settimeout(2)
        try:
            first = c.recv(64).decode(errors="replace").strip() or "-"
        except OSError:
            first = "-"
        with open(log, "a") as f:
            f.write("%s %s\n" % ("tcp" if s is t else "abstract", first.splitlines()[0] if first else "-"))
        try:
            c.sendall(b"HTTP/1.0 200 OK\r\n\r\nglimpse-host-service\n")
        except OSError:
            pass
        c.close()
PY
python3 "$WORK/listen.py" "$WORK/connections" "$WORK/port" "$abstract" </dev/null >/dev/null 2>&1 &
listen_pid=$!
gl_wait 60 test -s "$WORK/port" || { echo "Bail out! the host's listeners did not start"; exit 1; }
lport=$(cat "$WORK/port")
: > "$WORK/connections"

# --- the repository, and the hostile package
gl_key good
gl_serve
rport=$PORT
mkdir -p "$WORK/hostile/usr/lib/glimpse-hostile"
cat > "$WORK/hostile/usr/lib/glimpse-hostile/reach" <<REACH
#!/usr/bin/python3
# reach WHO: what a hook can reach; one line per attempt, never on stdout
# (an apt method's stdout is its protocol)
import os, socket, sys
who = sys.argv[1] if len(sys.argv) > 1 else "?"
os.makedirs("/var/lib/glimpse-reach", exist_ok=True)
out = open("/var/lib/glimpse-reach/log", "a")
def attempt(what, fn):
    try:
        got = fn()
        out.write("%s %s: reached %s\n" % (who, what, got))
    except Exception as e:
        out.write("%s %s: failed (%s)\n" % (who, what, type(e).__name__))
def tcp(port, send=b"direct\n"):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(send)
    return s.recv(200).decode(errors="replace").splitlines()[0]
def abstract():
    s = socket.socket(socket.AF_UNIX); s.settimeout(5); s.connect("\0$abstract"); s.sendall(b"abstract\n")
    return s.recv(200).decode(errors="replace").splitlines()[0]
def via_proxy():
    got = tcp(3128, b"GET http://127.0.0.1:$lport/via-proxy HTTP/1.1\r\n\r\n")
    if " 200 " in got:
        return got
    raise PermissionError(got)
attempt("host-tcp", lambda: tcp($lport))
attempt("host-abstract", abstract)
attempt("repository-direct", lambda: tcp($rport, b"GET /repo/Release HTTP/1.0\r\n\r\n"))
attempt("host-tcp-via-proxy", via_proxy)
out.write("%s done\n" % who)
REACH
chmod 755 "$WORK/hostile/usr/lib/glimpse-hostile/reach"
# hold WHO: a connection through the relay and glimpse's proxy to the
# repository, answered and kept alive by a process of its own that lives on
# while dpkg runs (as a package manager's download method may): the cut
# before dpkg must close it, or a new package's script could take it over
# (root of the namespace: ptrace, pidfd_getfd)
cat > "$WORK/hostile/usr/lib/glimpse-hostile/hold" <<HOLD
#!/usr/bin/python3
import os, socket, sys, time
who = sys.argv[1] if len(sys.argv) > 1 else "?"
r, w = os.pipe()
if os.fork() > 0:
    os.close(w)
    os.read(r, 1)   # (until the child holds it, or gave up)
    sys.exit(0)
os.close(r)
os.setsid()
os.makedirs("/var/lib/glimpse-reach", exist_ok=True)
out = open("/var/lib/glimpse-reach/log", "a")
try:
    s = socket.create_connection(("127.0.0.1", 3128), timeout=5)
    s.sendall(b"GET http://127.0.0.1:$rport/repo/Release HTTP/1.1\\r\\nHost: 127.0.0.1:$rport\\r\\n\\r\\n")
    got = s.recv(65536).decode(errors="replace").splitlines()[0]
    out.write("%s hold: %s\\n" % (who, "held" if " 200 " in got else "answered " + got))
except Exception as e:
    out.write("%s hold: failed (%s)\\n" % (who, type(e).__name__))
    s = None
out.flush()
os.close(w)
time.sleep(120 if s else 0)
HOLD
chmod 755 "$WORK/hostile/usr/lib/glimpse-hostile/hold"
cat > "$WORK/hostile-postinst" <<'POSTINST'
#!/bin/sh
set -e
[ "$1" = configure ] || exit 0
cat > /etc/apt/apt.conf.d/00glimpse-hostile <<'CONF'
APT::Update::Pre-Invoke { "/usr/lib/glimpse-hostile/reach update-pre-invoke || true"; };
DPkg::Pre-Invoke { "/usr/lib/glimpse-hostile/reach dpkg-pre-invoke || true"; "/usr/lib/glimpse-hostile/hold dpkg-pre-invoke || true"; };
CONF
# apt's http method replaced by a wrapper (https is a link to it); the
# original, under the same names, still downloads (apt's methods know
# themselves by their name)
m=/usr/lib/apt/methods o=/usr/lib/glimpse-hostile/orig
if [ ! -e $o/http ]; then
  mkdir -p $o
  mv $m/http $o/http
  ln -s http $o/https
  printf '#!/bin/sh\n/usr/lib/glimpse-hostile/reach method-http </dev/null >/dev/null 2>&1\nexec %s/"${0##*/}" "$@"\n' $o > $m/http
  chmod 755 $m/http
fi
POSTINST
gl_deb glimpse-hooks 1.0 "$WORK/hostile-postinst" "$WORK/hostile"
# the later package's own script: after the cut, no way out at all
cat > "$WORK/after-postinst" <<'POSTINST'
#!/bin/sh
[ "$1" = configure ] || exit 0
v=$(dpkg-query -W -f '${Version}' glimpse-after 2>/dev/null)
{
  if bash -c ': <>/dev/tcp/127.0.0.1/3128' 2>/dev/null; then echo "after-cut $v proxy-port: connected"
  else echo "after-cut $v proxy-port: refused"; fi
  echo "after-cut $v tcp-states: $(cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk '$4 ~ /^[0-9A-F][0-9A-F]$/ { print $4 }' | sort | uniq -c | tr -s ' \n' ' ')"
  echo "after-cut $v tcp-live: $(cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk '$4 == "01" || $4 == "0A" { n++ } END { print n + 0 }')"
} >> /var/lib/glimpse-reach/log
# every descriptor of every other process of the operation (PID 1, apt,
# its methods, the hook's holder), taken with pidfd_getfd as root of the
# namespace may: each socket gets a request; any answer is a way out
/usr/bin/python3 - "$v" >> /var/lib/glimpse-reach/log 2>&1 <<'GETFD'
import ctypes, os, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
taken = sockets = answered = 0
# (a request the proxy would serve: the sandbox's repository)
repo = "http://127.0.0.1"
for d in ("/etc/apt/sources.list.d", "/etc/apt"):
    for f in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        try:
            for w in open(os.path.join(d, f), errors="replace").read().split():
                if w.startswith("http://127.0.0.1:"):
                    repo = w.rstrip("/")
        except OSError:
            pass
for pid in [int(p) for p in os.listdir("/proc") if p.isdigit()]:
    if pid == os.getpid():
        continue
    try:
        pidfd = os.pidfd_open(pid)
        fds = [int(f) for f in os.listdir("/proc/%d/fd" % pid)]
    except OSError:
        continue
    for fd in fds:
        got = libc.syscall(438, pidfd, fd, 0)   # pidfd_getfd
        if got < 0:
            continue
        taken += 1
        try:
            s = socket.socket(fileno=got)
        except OSError:
            os.close(got)
            continue
        sockets += 1
        try:
            # (what it had received before the cut and not read yet -- the
            # rest of the hold's answer -- is not a way out: read it first,
            # up to the end the proxy's close left, or what there is)
            s.setblocking(False)
            try:
                while s.recv(65536):
                    pass
            except (BlockingIOError, InterruptedError):
                pass
            s.settimeout(2)
            if s.type == socket.SOCK_STREAM:
                s.send(("GET %s/Release HTTP/1.1\r\n\r\n" % repo).encode())
            else:
                s.send(b"c")
            if s.recv(64):
                answered += 1
        except OSError:
            pass
        s.detach()
        os.close(got)
    os.close(pidfd)
print("after-cut %s getfd: %d taken, %d sockets, %d answered" % (sys.argv[1], taken, sockets, answered))
GETFD
POSTINST
# … and its code that runs before its postinst: the debconf config script
# (run by dpkg-preconfigure, the host's DPkg::Pre-Install-Pkgs, before
# dpkg: the cut must come first) and the preinst; each records the same
mkdir -p "$WORK/after-extra/DEBIAN"
cat > "$WORK/after-extra/DEBIAN/config" <<'CONFIG'
#!/bin/sh
# (stdout is debconf's protocol: everything to the log)
mkdir -p /var/lib/glimpse-reach
{
  if bash -c ': <>/dev/tcp/127.0.0.1/3128' 2>/dev/null; then echo "config-cut proxy-port: connected"
  else echo "config-cut proxy-port: refused"; fi
  echo "config-cut tcp-live: $(cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk '$4 == "01" || $4 == "0A" { n++ } END { print n + 0 }')"
} >> /var/lib/glimpse-reach/log 2>&1 </dev/null
exit 0
CONFIG
cat > "$WORK/after-extra/DEBIAN/preinst" <<'PREINST'
#!/bin/sh
mkdir -p /var/lib/glimpse-reach
{
  if bash -c ': <>/dev/tcp/127.0.0.1/3128' 2>/dev/null; then echo "preinst-cut proxy-port: connected"
  else echo "preinst-cut proxy-port: refused"; fi
  echo "preinst-cut tcp-live: $(cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk '$4 == "01" || $4 == "0A" { n++ } END { print n + 0 }')"
} >> /var/lib/glimpse-reach/log 2>&1
exit 0
PREINST
printf 'Template: glimpse-after/question\nType: boolean\nDefault: true\nDescription: glimpse test question\n' \
  > "$WORK/after-extra/DEBIAN/templates"
chmod 755 "$WORK/after-extra/DEBIAN/config" "$WORK/after-extra/DEBIAN/preinst"
gl_deb glimpse-after 1.0 "$WORK/after-postinst" "$WORK/after-extra"
gl_publish "$REPO/repo" good "$WORK"/debs/*.deb

# in_sandbox NAME EXPECTED COMMAND...: the command's output in the sandbox,
# run by a test user through the launcher
in_sandbox () {
  local name=$1 want=$2; shift 2
  local got; got=$(as_user "$GL_USER_A" "$GLIMPSE" run "$id" -- "$@" 2>&1)
  check_sh "$name" '[ "$got" = "$want" ]'
  [ "$got" = "$want" ] || echo "# got: $got"
}

gl_host_sandbox "$id"
check "the hostile package installs (it is the next operations that it attacks)" \
  "$GLIMPSE" install "$id" glimpse-hooks
tree=$(gl_tree "$id")
check_sh "… its hooks and method are in the sandbox" \
  '[ -f "$tree/etc/apt/apt.conf.d/00glimpse-hostile" ] && [ -f "$tree/usr/lib/glimpse-hostile/orig/http" ] && grep -q reach "$tree/usr/lib/apt/methods/http"'

# --- the next install: the replaced method and the dpkg hook run
out=$("$GLIMPSE" install "$id" glimpse-after 2>&1); rc=$?
echo "$out" | sed 's/^/# install: /' | tail -25
check_sh "an install from the real repository still works" '[ $rc -eq 0 ]'
tree=$(gl_tree "$id")
in_sandbox "… the package is really installed and runs inside" "glimpse-after 1.0" glimpse-after
check_sh "… the proxy said what it refused" \
  'grep -qF "glimpse: refused a download of 127.0.0.1:$lport not among the sandbox'"'"'s repositories" <<<"$out"'

# --- then an update to a newer version: the update hook runs too
gl_deb glimpse-after 2.0 "$WORK/after-postinst" "$WORK/after-extra"
rm -f "$WORK/debs/glimpse-after_1.0_all.deb"
gl_publish "$REPO/repo" good "$WORK"/debs/*.deb
out=$("$GLIMPSE" update "$id" 2>&1); rc=$?
echo "$out" | sed 's/^/# update: /' | tail -25
check_sh "an update from the real repository still works" '[ $rc -eq 0 ]'
tree=$(gl_tree "$id")
in_sandbox "… the new version runs" "glimpse-after 2.0" glimpse-after

log=$tree/var/lib/glimpse-reach/log
[ -f "$log" ] && sed 's/^/# reach: /' "$log"
for who in method-http dpkg-pre-invoke update-pre-invoke; do
  check_sh "the hostile $who ran and finished" 'grep -qx "$who done" "$log"'
done
check_sh "its dpkg hook kept a connection to the repository alive through the proxy, at the install and the update" \
  '[ "$(grep -c "^dpkg-pre-invoke hold: held$" "$log")" -eq 2 ]'
for v in 1.0 2.0; do
  check_sh "after the cut, the later package's script ($v) finds nothing listening on the relay's 127.0.0.1:3128" \
    'grep -qx "after-cut $v proxy-port: refused" "$log"'
  check_sh "… and no socket of its network namespace listening or connected (the kept-alive one closed)" \
    'grep -qx "after-cut $v tcp-live: 0" "$log"'
done
for v in 1.0 2.0; do
  check_sh "… its postinst ($v) took the other processes' descriptors (pidfd_getfd): no socket answers" \
    'grep -q "^after-cut $v getfd: [1-9][0-9]* taken, [0-9]* sockets, 0 answered$" "$log"'
done
check_sh "the later package's debconf config script ran before dpkg (dpkg-preconfigure), at the install and the update" \
  '[ "$(grep -c "^config-cut proxy-port: " "$log")" -eq 2 ] && [ "$(grep -c "^preinst-cut proxy-port: " "$log")" -eq 2 ]'
check_sh "… after the cut, as its preinst: nothing on 127.0.0.1:3128, no socket listening or connected" \
  '! grep -q "^\(config\|preinst\)-cut proxy-port: connected" "$log" \
   && ! grep -q "^\(config\|preinst\)-cut tcp-live: [1-9]" "$log"'
check_sh "no hook reached anything: not the host's TCP service, its abstract socket, the repository directly, or the service through the proxy" \
  '! grep -q ": reached" "$log" && [ "$(grep -c ": failed" "$log")" -ge 12 ]'

# --- a sandbox whose own apt configuration names no main file (and sets
# the proxy itself, so apt still downloads without glimpse's settings):
# glimpse's settings, given on apt's command line, are read all the same,
# and the cut still comes before the new package's code (glimpse's file
# named as Dir::Etc::main was never read then: no cut at all)
cat > "$WORK/nomain-postinst" <<'POSTINST'
#!/bin/sh
[ "$1" = configure ] || exit 0
printf 'Dir::Etc::main "/dev/null";\nAcquire::http::Proxy "http://127.0.0.1:3128";\n' \
  > /etc/apt/apt.conf.d/99glimpse-no-main
POSTINST
gl_deb glimpse-no-main 1.0 "$WORK/nomain-postinst"
gl_publish "$REPO/repo" good "$WORK"/debs/*.deb
check "update (the index with glimpse-no-main)" "$GLIMPSE" update "$id"
out=$("$GLIMPSE" install "$id" glimpse-no-main 2>&1); rc=$?
check_sh "install glimpse-no-main (its apt.conf.d sets Dir::Etc::main \"/dev/null\"; rc $rc)" '[ $rc -eq 0 ]'
[ $rc -eq 0 ] || echo "$out" | sed 's/^/# install (no main file): /' | tail -15
gl_deb glimpse-after 3.0 "$WORK/after-postinst" "$WORK/after-extra"
rm -f "$WORK/debs/glimpse-after_2.0_all.deb"
gl_publish "$REPO/repo" good "$WORK"/debs/*.deb
out=$("$GLIMPSE" update "$id" 2>&1); rc=$?
echo "$out" | sed 's/^/# update (no main file): /' | tail -15
tree=$(gl_tree "$id")
check_sh "… an update from the real repository still works (rc $rc)" \
  '[ $rc -eq 0 ] && [ -f "$tree/etc/apt/apt.conf.d/99glimpse-no-main" ]'
in_sandbox "… the new version runs" "glimpse-after 3.0" glimpse-after
log=$tree/var/lib/glimpse-reach/log
grep '3\.0\|-cut' "$log" | tail -n 8 | sed 's/^/# reach: /'
check_sh "… the new package's postinst still runs after the cut: nothing on 127.0.0.1:3128, no socket live" \
  'grep -qx "after-cut 3.0 proxy-port: refused" "$log" && grep -qx "after-cut 3.0 tcp-live: 0" "$log"'
check_sh "… and its config script and preinst too" \
  '[ "$(grep -c "^preinst-cut proxy-port: refused" "$log")" -eq 3 ] && [ "$(grep -c "^config-cut proxy-port: refused" "$log")" -eq 3 ] \
   && ! grep -q "^\(config\|preinst\)-cut tcp-live: [1-9]" "$log"'

# the listeners were listening: our own connections arrive (after any earlier one)
python3 -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1]))); s.sendall(b"control-tcp\n"); s.recv(64)
u = socket.socket(socket.AF_UNIX); u.connect("\0" + sys.argv[2]); u.sendall(b"control-abstract\n"); u.recv(64)
' "$lport" "$abstract"
gl_wait 60 grep -q "abstract control-abstract" "$WORK/connections"
sed 's/^/# connections: /' "$WORK/connections"
check_sh "the host's listeners saw no connection but the test's own" \
  '[ "$(cat "$WORK/connections")" = "$(printf "tcp control-tcp\nabstract control-abstract")" ]'
finish
