#!/bin/bash
# Launch overhead: glimpse-launch (setuid copy, as an ordinary user) vs bwrap
# doing a comparable set of mounts into the same tree vs a bare chroot.
# glimpse-launch twice: warm (a view of that user and sandbox is up, the
# launch joins it: setns + fork + exec; target <= 0.5 x bwrap) and cold (no
# view: the launch builds one, and the view ends with the app; target
# <= 1.0 x bwrap).
# Measured with hyperfine, run as the test user itself (no setpriv or shell
# in what is timed): ROUNDS rounds, each running every command N/ROUNDS
# times, so that load changes over the run hit all commands alike; the
# medians are taken over every run of every round (hyperfine's JSON).
# The chroot reference needs root for chroot(2): its own hyperfine, as
# root, in each round, switching to the user with chroot --userspec.
# A cold run waits first (hyperfine's --prepare, not timed) until the
# previous cold view has ended, so each one builds a view.
# Run as root:  tests/bench/launch-bench.sh BUILDDIR/launcher/glimpse-launch-test [N] [ROUNDS]
# Not a timed test; prints medians and ratios.
# SPDX-License-Identifier: LGPL-2.1-or-later
set -eu
export GL_LAUNCHER=${1:?usage: launch-bench.sh PATH/TO/glimpse-launch-test [N] [ROUNDS]}
N=${2:-50}
ROUNDS=${3:-5}
TEST_NAME=launch-bench
# shellcheck source=../launcher/libtest.sh
. "$(dirname "$0")/../launcher/libtest.sh"
set +u
command -v hyperfine >/dev/null || skip "hyperfine is not installed (.ci/install-deps installs it)"
command -v python3 >/dev/null || skip "python3 is not installed"
gl_make_sandbox bench-bb rootfs
gl_make_sandbox bench-warm rootfs
gl_install_setuid
TREE=$GL_STORE/bench-bb/rootfs
as_user $GL_USER_A "$LAUNCH" bench-bb -- /bin/true   # first launch creates the layers
# The warm sandbox's view is kept up by a long-running app.
# (as_user is a function: $! is the subshell running it, the launcher is
# its child; both are ended, or the view and the launcher - holding this
# script's stdout - would outlive the benchmark)
as_user $GL_USER_A "$LAUNCH" bench-warm -- /bin/sleep 100000 &
warm_holder=$!
GL_CLEANUPS+=("kill \$(pgrep -P $warm_holder) $warm_holder 2>/dev/null; wait $warm_holder 2>/dev/null")
gl_wait_pid "$GL_USER_A" "^/bin/sleep 100000\$" >/dev/null || { echo "the warm view did not come up"; exit 1; }
# The JSON goes to a tmpfs: a file on the store's file system would leave
# dirty data for the overlays' sync at unmount.
OUT=$(mktemp -d /dev/shm/gl-launch-bench.XXXXXX)
chown "$GL_USER_A" "$OUT"
GL_CLEANUPS+=("rm -rf '$OUT'")

uid=$UID_A
bwrap_mode="bind mounts (bwrap $(bwrap --version | cut -d' ' -f2) has no --overlay)"
bwrap_args=(--ro-bind "$TREE" / --proc /proc --dev /dev --ro-bind /sys /sys
            --tmpfs /home --bind "$HOME_A" "$HOME_A" --bind /tmp /tmp --bind /var/tmp /var/tmp
            --bind /dev/shm /dev/shm --bind /media /media --bind /mnt /mnt)
[ -d /run/user/$uid ] && bwrap_args+=(--tmpfs /run --bind /run/user/$uid /run/user/$uid)
if bwrap --help 2>&1 | grep_quiet -- '--overlay-src'; then
  bwrap_mode="overlays (--overlay-src/--overlay)"
fi
groups_a=$(id -G "$GL_USER_A" | tr ' ' ,)
cmd_warm="$LAUNCH bench-warm -- /bin/true"
cmd_cold="$LAUNCH bench-bb -- /bin/true"
cmd_bwrap="bwrap --unshare-user --unshare-pid ${bwrap_args[*]} /bin/true"
cmd_chroot="chroot --userspec=$UID_A:$GID_A --groups=$groups_a $TREE /bin/true"
# Until the previous cold view has gone, its unmounts included; at most
# about 10 s.  Asked of the launcher (--held waits for an exiting PID 1),
# not of pgrep: a PID 1 that is exiting has no command line any more, so
# a pattern took it for gone and the next cold run timed its teardown.
cold_gone="bash -c 'for _ in \$(seq 1000); do $LAUNCH --held bench-bb 2>/dev/null && exit 0; sleep 0.01; done'"

for c in "$cmd_warm" "$cmd_cold" "$cmd_bwrap"; do
  # shellcheck disable=SC2086
  as_user "$GL_USER_A" $c || { echo "failed: $c: $(as_user "$GL_USER_A" $c 2>&1)"; exit 1; }
done
# shellcheck disable=SC2086
$cmd_chroot || { echo "chroot failed: $($cmd_chroot 2>&1)"; exit 1; }

per=$(( (N + ROUNDS - 1) / ROUNDS ))
[ "$per" -ge 2 ] || per=2
for r in $(seq "$ROUNDS"); do
  as_user "$GL_USER_A" hyperfine -N --style none --warmup 2 --runs "$per" \
    --export-json "$OUT/user-$r.json" --prepare true --prepare "$cold_gone" --prepare true \
    -n warm "$cmd_warm" -n cold "$cmd_cold" -n bwrap "$cmd_bwrap" >"$OUT/log" 2>&1 \
    || { cat "$OUT/log"; exit 1; }
  hyperfine -N --style none --warmup 2 --runs "$per" --export-json "$OUT/root-$r.json" \
    -n chroot "$cmd_chroot" >"$OUT/log" 2>&1 || { cat "$OUT/log"; exit 1; }
done

python3 - "$OUT" "$ROUNDS" "$per" "$GL_USER_A" "$bwrap_mode" <<'PY'
import glob, json, statistics, sys
out, rounds, per, user, bwrap_mode = sys.argv[1:6]
times = {}
for f in sorted(glob.glob(out + "/*.json")):
    for r in json.load(open(f))["results"]:
        times.setdefault(r["command"], []).extend(r["times"])
med = {k: statistics.median(v) * 1e6 for k, v in times.items()}
print(f"launch of /bin/true in a busybox tree, hyperfine as {user}: median of {rounds} "
      f"interleaved rounds of {per} runs (microseconds):")
for k, what in (("warm", "glimpse-launch warm (view up: joins it)"),
                ("cold", "glimpse-launch cold (setuid, builds the view)"),
                ("bwrap", f"bwrap (unprivileged userns, {bwrap_mode})"),
                ("chroot", "chroot --userspec (as root)")):
    print(f"  {what:<60} {med[k]:8.0f} us   (runs: {len(times[k])})")
print(f"  ratio warm/bwrap    = {med['warm'] / med['bwrap']:.2f}   (target <= 0.5)")
print(f"  ratio cold/bwrap    = {med['cold'] / med['bwrap']:.2f}   (target <= 1)")
print(f"  ratio cold/chroot   = {med['cold'] / med['chroot']:.2f}")
PY
