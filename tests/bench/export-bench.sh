#!/bin/sh
# export-bench.sh [BUILDDIR] [N_APPS] [DIRTY_MB]: times "glimpse export" of a
# generated sandbox with N_APPS (300) applications and their icons, a no-op
# re-export, and update-desktop-database on the same directory; then the
# first export and update-desktop-database again right after another writer
# left DIRTY_MB (1000; 0: not run) of data unsynced on the same file system
# (the bench's TMPDIR), as a CI run does: both states, both ratios.
# Leave a minute between runs: for up to 60 s after a run deleted its few
# thousand files, ext4 skips their inodes one by one when it creates a
# file in their group (recently_deleted()), which slows the next run's
# first export by 100-250 ms (a CI run's deletions do the same).
# Run it under the test lock:
#   flock -w 1500 /run/glimpse-tests.lock bash tests/bench/export-bench.sh build
#
# SPDX-License-Identifier: LGPL-2.1-or-later
set -eu
builddir=${1:-build}
n=${2:-300}
dirty=${3:-1000}
bench="$builddir/tests/xdg/export-bench"
if [ ! -x "$bench" ]; then
    echo "export-bench.sh: $bench is not built; run: ninja -C $builddir tests/xdg/export-bench" >&2
    exit 1
fi
exec "$bench" "$n" "$dirty"
