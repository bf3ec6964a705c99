# Shared helpers for the glimpse-launch integration tests (sourced).
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Runs as root: builds test sandboxes under the test store, installs a
# setuid-root copy of glimpse-launch-test and runs cases as ordinary users.
# Not root, or setuid impossible: prints why and skips (exit 77) - unless
# CI=true or GLIMPSE_TESTS_REQUIRE_ALL=1, where a skip is a failure
# (tests/lib/skip.sh: the one skip policy).

set -u
set -o pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../lib/skip.sh"
. "$(dirname "${BASH_SOURCE[0]}")/../lib/wait.sh"
. "$(dirname "${BASH_SOURCE[0]}")/../lib/sandbox-conf.sh"

: "${GL_LAUNCHER:?GL_LAUNCHER must point to the built glimpse-launch-test}"
GL_TEST_ROOT=${GL_TEST_ROOT:-/var/lib/glimpse-tests}
GL_STORE=$GL_TEST_ROOT/sandboxes
GL_BIN=$GL_TEST_ROOT/bin
GL_USER_A=glimpse-test-a
GL_USER_B=glimpse-test-b
GL_GROUP_X=glimpse-test-x
TEST_NAME=$(basename "$0" .sh)

# skip WHY: the whole test cannot run here (a failure where all is required).
skip () { gl_skip_test "$@"; }

n_ok=0
n_fail=0
n_skip=0
ok () { n_ok=$((n_ok + 1)); echo "ok - $*"; }
fail () { n_fail=$((n_fail + 1)); echo "FAIL - $*"; }
gl_case_fail () { fail "$@"; }
gl_case_skip () { n_skip=$((n_skip + 1)); echo "SKIP - $1: $2"; }
# skip_case WHAT WHY: one case cannot run here (a failure where all is required)
skip_case () { gl_skip_case "$@"; }
# check "description" command...: passes when the command succeeds
check () {
  local what=$1; shift
  if "$@"; then ok "$what"; else fail "$what"; fi
}
# check_sh "description" 'shell condition': passes when the condition holds
check_sh () {
  if eval "$2"; then ok "$1"; else fail "$1"; fi
}
# grep_quiet ARGS...: grep -q that reads all its input.  Under pipefail,
# `cmd | grep -q` stops reading at the first match, cmd may die of SIGPIPE and
# the pipeline then fails (or, negated, passes) by chance.
grep_quiet () { grep "$@" > /dev/null; }
# not COMMAND...: for negative greps whose input another check proves real
not () { ! "$@"; }
# refused "description" REGEX COMMAND...: the command fails, and what it
# printed (stdout and stderr) matches REGEX (grep -E) - the specific refusal,
# not any failure.  Pair it with a run of the same command without the attack.
refused () {
  local what=$1 re=$2 out rc; shift 2
  out=$("$@" 2>&1); rc=$?
  if [ $rc -ne 0 ] && grep -qE -- "$re" <<< "$out"; then
    ok "$what"
  else
    fail "$what (exit $rc, want /$re/)"
    printf '%s\n' "$out" | head -n 5 | sed 's/^/#   /'
  fi
}
finish () {
  echo "# $TEST_NAME: $n_ok passed, $n_fail failed, $n_skip skipped"
  [ "$n_fail" -eq 0 ]
}

[ "$(id -u)" -eq 0 ] || skip "needs root to build root-owned test sandboxes and a setuid copy (run: sudo meson test ...)"
[ -x "$GL_LAUNCHER" ] || skip "launcher $GL_LAUNCHER not built"
for tool in useradd setpriv flock sha256sum busybox; do
  command -v "$tool" >/dev/null || skip "$tool is not installed"
done

# The launcher trusts its store only if every directory above it is
# root-owned and not group/world-writable (Debian's /var/local is
# root:staff 2775, so the default localstatedir of a /usr/local prefix fails).
gl_check_store_chain () {
  local p=/ c
  IFS=/ read -ra parts <<< "${GL_TEST_ROOT#/}"
  for c in "${parts[@]}"; do
    p=${p%/}/$c
    [ -e "$p" ] || return 0
    if [ -L "$p" ] || [ "$(stat -c %u "$p")" != 0 ] || [ $(( 0$(stat -c %a "$p") & 022 )) -ne 0 ]; then
      skip "the test store $GL_TEST_ROOT is below $p, which is not root-owned or is group/world-writable; configure with -Dlocalstatedir=/var"
    fi
  done
}
gl_check_store_chain

WORK=$(mktemp -d /tmp/gl-launch-test.XXXXXX)
chmod 1777 "$WORK"
GL_SANDBOXES=()
GL_MOUNTED=()      # the test users' /run/user/UID tmpfs
GL_CLEANUPS=()     # commands a test registers to undo what it changed
gl_cleanup () {
  local id c m
  for c in "${GL_CLEANUPS[@]}"; do eval "$c" || true; done
  for id in "${GL_SANDBOXES[@]}"; do
    rm -rf --one-file-system "${GL_STORE:?}/$id"
  done
  rm -f "$GL_BIN/launch-$TEST_NAME"
  rm -rf "$WORK"
  for m in "${GL_MOUNTED[@]}"; do
    umount -l "$m" 2>/dev/null && rmdir "$m" 2>/dev/null
  done
  return 0
}
trap gl_cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

# Global, idempotent setup, serialised between concurrently running tests.
gl_global_setup () {
  mkdir -p "$GL_TEST_ROOT"
  exec 9>"$GL_TEST_ROOT/.setup.lock"
  flock 9
  install -d -o root -g root -m 0755 "$GL_TEST_ROOT" "$GL_STORE" "$GL_BIN"
  getent group "$GL_GROUP_X" >/dev/null || groupadd "$GL_GROUP_X"
  local u
  for u in "$GL_USER_A" "$GL_USER_B"; do
    id "$u" >/dev/null 2>&1 || useradd -m -s /bin/sh "$u"
  done
  usermod -aG "$GL_GROUP_X" "$GL_USER_A"
  # A runtime directory like logind's: a tmpfs at /run/user/UID.
  for u in "$GL_USER_A" "$GL_USER_B"; do
    local uid; uid=$(id -u "$u")
    install -d -m 0755 /run/user
    if ! findmnt -rn /run/user/"$uid" >/dev/null; then
      install -d -o "$u" -g "$u" -m 0700 /run/user/"$uid"
      mount -t tmpfs -o mode=0700,uid="$uid",gid="$(id -g "$u")",size=16m,nosuid,nodev tmpfs /run/user/"$uid"
    fi
    # a test user's, left by no one else: removed when this test ends
    GL_MOUNTED+=(/run/user/"$uid")
  done
  # The fake `glimpse notify-error`: records who ran it, with what, and
  # each run in notify.calls; with a notify.delay file, it first waits that
  # many seconds, and says on stderr when it is done.
  cat > "$GL_BIN/glimpse.new" <<'NOTIFY'
#!/bin/sh
out=${XDG_RUNTIME_DIR:-/nonexistent}/notify.log
tmp=$out.$$
echo "$*" >> "${XDG_RUNTIME_DIR:-/nonexistent}/notify.calls" 2>/dev/null
if [ -f "${XDG_RUNTIME_DIR:-/nonexistent}/notify.delay" ]; then
  sleep "$(cat "$XDG_RUNTIME_DIR/notify.delay")"
  echo "fake notify-error: done" >&2
fi
{
  echo "args: $*"
  echo "uid: $(id -u) gid: $(id -g) groups: $(id -G)"
  grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):' /proc/self/status
  echo "env: $(env | sort | tr '\n' ' ')"
} > "$tmp" 2>/dev/null && mv -f "$tmp" "$out"
NOTIFY
  chmod 0755 "$GL_BIN/glimpse.new"
  mv -f "$GL_BIN/glimpse.new" "$GL_BIN/glimpse"
  flock -u 9
}

# The setuid copy used by this test.
gl_install_setuid () {
  LAUNCH=$GL_BIN/launch-$TEST_NAME
  install -o root -g root -m 4755 "$GL_LAUNCHER" "$LAUNCH"
  if findmnt -rno OPTIONS -T "$GL_BIN" | tr , '\n' | grep_quiet -x nosuid; then
    skip "$GL_BIN is on a nosuid filesystem"
  fi
  if ! as_user "$GL_USER_A" "$LAUNCH" --version >/dev/null 2>&1; then
    skip "cannot run the setuid copy $LAUNCH as $GL_USER_A"
  fi
}

# gl_cli_setup: the glimpse command ($GLIMPSE) on the test store, through
# this test's setuid copy of the launcher, for root and (as_user) the users.
gl_cli_setup () {
  gl_install_setuid
  export GLIMPSE_SANDBOX_DIR=$GL_STORE GLIMPSE_LAUNCHER=$LAUNCH
  export GLIMPSE_PROFILES_PATH=${GLIMPSE_BUNDLED_PROFILES:?}
  GL_EXTRA_ENV="GLIMPSE_SANDBOX_DIR=$GL_STORE GLIMPSE_LAUNCHER=$LAUNCH"
}

# as_user USER COMMAND...: a clean login-like environment, with USER's groups.
as_user () {
  local u=$1; shift
  local uid; uid=$(id -u "$u")
  setpriv --reuid="$u" --regid="$u" --init-groups -- \
    env -i HOME="$(getent passwd "$u" | cut -d: -f6)" USER="$u" LOGNAME="$u" \
    PATH=/usr/local/bin:/usr/bin:/bin XDG_RUNTIME_DIR=/run/user/"$uid" \
    LANG=C.UTF-8 ${GL_EXTRA_ENV:-} "$@"
}

# gl_make_sandbox ID BASE [FAMILY]: a sandbox by hand (of FAMILY, apk
# unless given), following /work/contract.md.  (One function, so it can
# later become `glimpse create`.)
gl_make_sandbox () {
  local id=$1 base=$2 family=${3:-apk} dir=$GL_STORE/$1
  rm -rf --one-file-system "$dir"
  GL_SANDBOXES+=("$id")
  # The system layer as generations (HELPERS.md): system/current names N,
  # system/N/tree is the layer, system/N/lock its lock.
  install -d -o root -g root -m 0755 "$dir" "$dir/system" "$dir/system/1" "$dir/system/1/tree"
  install -d -o root -g root -m 0711 "$dir/users"
  echo 1 > "$dir/system/current"; chmod 0644 "$dir/system/current"
  : > "$dir/system/1/lock"; chmod 0600 "$dir/system/1/lock"
  gl_sandbox_conf test "Test $id" "$base" "$family" Created=2024-01-01T00:00:00Z > "$dir/sandbox.conf"
  chmod 0644 "$dir/sandbox.conf"
  : > "$dir/lock"; chmod 0600 "$dir/lock"
  if [ "$base" = rootfs ]; then
    local r=$dir/rootfs
    install -d -m 0755 "$r"
    mkdir -p "$r"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,tmp,var/tmp,home,root,run,media,mnt,usr/share}
    chmod 1777 "$r/tmp" "$r/var/tmp"
    cp /bin/busybox "$r/bin/busybox"
    chroot "$r" /bin/busybox --install -s
    echo "busybox-rootfs" > "$r/etc/glimpse-test-marker"
    getent passwd root "$GL_USER_A" "$GL_USER_B" > "$r/etc/passwd"
    getent group root "$GL_USER_A" "$GL_USER_B" "$GL_GROUP_X" > "$r/etc/group"
    # Something only the sandbox's system layer has.
    echo "system-layer" > "$dir/system/1/tree/etc-glimpse-system"
  fi
}

# gl_tty_probe: writes $WORK/tty-probe.py (readable by the test users) and
# prints its path.  Run inside a sandbox on a terminal, it prints its mount
# namespace ("ns mnt:[N]"), "tty True|False" for its stdin, "seccomp N"
# (/proc/self/status) and what TIOCSTI and TIOCLINUX on stdin give:
# "NAME errno N" or "NAME allowed" (SECURITY.md case 13).
gl_tty_probe () {
  cat > "$WORK/tty-probe.py" <<'PY'
import fcntl, os, termios
print("ns", os.readlink("/proc/self/ns/mnt"))
print("tty", os.isatty(0))
for line in open("/proc/self/status"):
    if line.startswith("Seccomp:"):
        print("seccomp", line.split()[1])
for name, req in (("TIOCSTI", termios.TIOCSTI), ("TIOCLINUX", 0x541C)):
    try:
        fcntl.ioctl(0, req, b"\x00")
        print(name, "allowed")
    except OSError as e:
        print(name, "errno", e.errno)
PY
  chmod 0644 "$WORK/tty-probe.py"
  echo "$WORK/tty-probe.py"
}

# Host state fingerprints.
gl_mounts () {
  # mount points, types and options; other tests' scratch mounts under
  # /tmp and /var/tmp are ignored.
  awk '{ print $5, $6, $(NF-2), $(NF) }' /proc/self/mountinfo \
    | grep -vE '^/(var/)?tmp/' | sort
}
gl_tree_sums () {
  # gl_tree_sums DIR...: names, types, modes, owners, sizes, mtimes and
  # content checksums of regular files (skips other tests' sockets).
  local d
  for d in "$@"; do
    [ -d "$d" ] || continue
    find "$d" -xdev -path "$d/.X11-unix" -prune -o -printf '%p %y %m %U:%G %s %T@\n' 2>/dev/null | LC_ALL=C sort
    find "$d" -xdev -type f -print0 2>/dev/null | LC_ALL=C sort -z | xargs -0 -r sha256sum 2>/dev/null
  done
}
# Only the top of a (possibly huge) directory.
gl_top_sums () {
  find "$@" -maxdepth 1 -printf '%p %y %m %U:%G %s %T@\n' 2>/dev/null | LC_ALL=C sort
}

gl_global_setup
UID_A=$(id -u "$GL_USER_A"); GID_A=$(id -g "$GL_USER_A")
UID_B=$(id -u "$GL_USER_B")
HOME_A=$(getent passwd "$GL_USER_A" | cut -d: -f6)
HOME_B=$(getent passwd "$GL_USER_B" | cut -d: -f6)
