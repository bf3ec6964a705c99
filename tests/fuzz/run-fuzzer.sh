#!/bin/bash
# run-fuzzer.sh FUZZER CORPUS: a bounded libFuzzer run from the seed corpus.
# New inputs go to a scratch corpus (the seeds stay as they are); a crash or
# a failed property is kept in $GLIMPSE_FUZZ_ARTIFACTS (default: the build
# dir's fuzz-artifacts/) and printed in hex, to become a seed (a test case).
# SPDX-License-Identifier: LGPL-2.1-or-later
set -u
fuzzer=$1 seeds=$2
name=$(basename "$fuzzer")
secs=${GLIMPSE_FUZZ_SECONDS:-30}
artifacts=${GLIMPSE_FUZZ_ARTIFACTS:-$(dirname "$fuzzer")/fuzz-artifacts}
mkdir -p "$artifacts"
# leaks count (tests/run turns them off for the other tests)
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/glimpse-fuzz.XXXXXX") || exit 99
trap 'rm -rf "$scratch"' EXIT
"$fuzzer" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
  -print_final_stats=1 -artifact_prefix="$artifacts/$name-" "$scratch" "$seeds" > "$scratch/log" 2>&1
rc=$?
grep -E '^(#[0-9]+.*DONE|stat::number_of_executed_units|stat::peak_rss_mb)' "$scratch/log"
if [ $rc -ne 0 ]; then
  tail -n 40 "$scratch/log"
  for f in "$artifacts/$name-"*; do
    [ -f "$f" ] || continue
    echo "# kept: $f (add it to tests/fuzz/corpus/${name#fuzz-}/ once fixed)"
    od -An -c "$f" | head -n 20
  done
  exit 1
fi
echo "$name: ${secs}s of fuzzing, no crash"
