#!/bin/sh
# export-bench.sh [BUILDDIR] [N_APPS]: times "glimpse export" of a generated
# sandbox with N_APPS (300) applications and their icons, a no-op re-export,
# and update-desktop-database on the same directory.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
set -eu
builddir=${1:-build}
n=${2:-300}
bench="$builddir/tests/xdg/export-bench"
if [ ! -x "$bench" ]; then
    echo "export-bench.sh: $bench is not built; run: ninja -C $builddir tests/xdg/export-bench" >&2
    exit 1
fi
exec "$bench" "$n"
