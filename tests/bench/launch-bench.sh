#!/bin/bash
# Launch overhead: glimpse-launch (setuid copy, as an ordinary user) vs bwrap
# doing a comparable set of mounts into the same tree vs a bare chroot.
# glimpse-launch twice: warm (a view of that user and sandbox is up, the
# launch joins it: setns + fork + exec; target <= 0.5 x bwrap) and cold (no
# view: the launch builds one, and the view ends with the app; target
# <= 1.0 x bwrap).  Interleaved; with hyperfine installed it also prints
# hyperfine's own (sequential) summary of the same commands.
# All three are started the same way: through `setpriv` (the user switch a
# caller's session would already have done) and end with /bin/true running as
# the ordinary user; chroot switches with --userspec after setpriv keeps root.
# Run as root:  tests/bench/launch-bench.sh BUILDDIR/launcher/glimpse-launch-test [N]
# Not a timed test; prints medians and ratios.
# SPDX-License-Identifier: LGPL-2.1-or-later
set -eu
export GL_LAUNCHER=${1:?usage: launch-bench.sh PATH/TO/glimpse-launch-test [N]}
N=${2:-50}
TEST_NAME=launch-bench
# shellcheck source=../launcher/libtest.sh
. "$(dirname "$0")/../launcher/libtest.sh"
set +u
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

median () { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
# time_interleaved N COMMAND...: runs each COMMAND once per round, N rounds
# (interleaved, so load changes hit all alike); times[I] gets COMMAND I's
# wall times in microseconds, one a line.  Kept in memory: writing them to
# a file would leave dirty data for the overlays' sync at unmount.
times=()
time_interleaved () {
  local n=$1; shift
  local t0 t1 i
  for _ in $(seq "$n"); do
    i=0
    for cmd in "$@"; do
      t0=$(date +%s%N); "$cmd" >/dev/null 2>&1; t1=$(date +%s%N)
      times[i]+="$(( (t1 - t0) / 1000 ))"$'\n'
      i=$((i + 1))
    done
  done
}

uid=$UID_A
as_a () { setpriv --reuid=$GL_USER_A --regid=$GL_USER_A --init-groups "$@"; }
run_glimpse () { as_a "$LAUNCH" bench-bb -- /bin/true; }
run_warm () { as_a "$LAUNCH" bench-warm -- /bin/true; }
bwrap_mode="bind mounts (bwrap $(bwrap --version | cut -d' ' -f2) has no --overlay)"
bwrap_args=(--ro-bind "$TREE" / --proc /proc --dev /dev --ro-bind /sys /sys
            --tmpfs /home --bind "$HOME_A" "$HOME_A" --bind /tmp /tmp --bind /var/tmp /var/tmp
            --bind /dev/shm /dev/shm --bind /media /media --bind /mnt /mnt)
[ -d /run/user/$uid ] && bwrap_args+=(--tmpfs /run --bind /run/user/$uid /run/user/$uid)
if bwrap --help 2>&1 | grep -q -- '--overlay-src'; then
  bwrap_mode="overlays (--overlay-src/--overlay)"
fi
run_bwrap () { as_a bwrap --unshare-user --unshare-pid "${bwrap_args[@]}" /bin/true; }
groups_a=$(id -G "$GL_USER_A" | tr ' ' ,)
run_chroot () { setpriv --reuid=0 --regid=0 --init-groups chroot --userspec=$UID_A:$GID_A --groups="$groups_a" "$TREE" /bin/true; }
run_setpriv () { as_a /bin/true; }
run_chroot_root () { chroot "$TREE" /bin/true; }   # the old, unfair comparison

run_glimpse || { echo "glimpse-launch failed"; exit 1; }
run_warm || { echo "glimpse-launch (warm) failed"; exit 1; }
run_bwrap || { echo "bwrap failed: $(run_bwrap 2>&1)"; exit 1; }
run_chroot || { echo "chroot failed: $(run_chroot 2>&1)"; exit 1; }
# warm up
for _ in 1 2 3; do run_glimpse; run_warm; run_bwrap; run_chroot; done >/dev/null 2>&1

time_interleaved "$N" run_glimpse run_bwrap run_chroot run_setpriv run_chroot_root run_warm
g=$(printf %s "${times[0]}" | median); b=$(printf %s "${times[1]}" | median)
c=$(printf %s "${times[2]}" | median); s=$(printf %s "${times[3]}" | median)
r=$(printf %s "${times[4]}" | median); w=$(printf %s "${times[5]}" | median)
echo "launch of /bin/true in a busybox tree, median of $N interleaved runs (microseconds):"
printf '  %-52s %8s us\n' "glimpse-launch warm (view up: joins it)" "$w"
printf '  %-52s %8s us\n' "glimpse-launch cold (setuid, as $GL_USER_A, builds the view)" "$g"
printf '  %-52s %8s us\n' "bwrap (unprivileged userns, $bwrap_mode)" "$b"
printf '  %-52s %8s us\n' "chroot (setpriv, then chroot --userspec)" "$c"
printf '  %-52s %8s us\n' "(reference: setpriv alone running /bin/true)" "$s"
printf '  %-52s %8s us\n' "(reference: chroot as root, no setpriv: unfair)" "$r"
awk -v g="$g" -v b="$b" -v c="$c" -v w="$w" 'BEGIN { printf "  ratio warm/bwrap    = %.2f   (target <= 0.5)\n  ratio cold/bwrap    = %.2f   (target <= 1)\n  ratio cold/chroot   = %.2f\n", w / b, g / b, g / c }'
if command -v hyperfine >/dev/null; then
  export -f as_a run_warm run_glimpse; export LAUNCH GL_USER_A
  hyperfine -N --warmup 3 --runs "$N" "bash -c run_warm" "bash -c run_glimpse" 2>&1 | sed 's/^/  hyperfine: /'
else
  echo "  (hyperfine not installed: only the interleaved measurement above)"
fi
