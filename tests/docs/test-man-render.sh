#!/bin/bash
# Every man page of the tree renders without a groff warning (a bad escape
# or request shows as garbage or vanishes in `man`).  TAP output.
# SPDX-License-Identifier: LGPL-2.1-or-later
set -u
: "${GLIMPSE_SRCDIR:?}"
source "$GLIMPSE_SRCDIR/tests/lib/skip.sh"
GL_TAP=1
command -v groff >/dev/null || gl_skip_test "groff is not installed (apt install groff-base)"
n=0 failed=0
pages=$(cd "$GLIMPSE_SRCDIR" && git ls-files '*.[1-8]' 2>/dev/null || find . -name '*.[1-8]' -not -path './build*')
for page in $pages; do
  n=$((n + 1))
  out=$(LC_ALL=C.UTF-8 groff -man -ww -z -K utf8 "$GLIMPSE_SRCDIR/$page" 2>&1)
  if [ -z "$out" ]; then echo "ok $n - $page renders without warnings"
  else failed=1; echo "not ok $n - $page renders without warnings"; printf '%s\n' "$out" | sed 's/^/#   /'; fi
done
[ $n -ge 4 ] || { n=$((n + 1)); failed=1; echo "not ok $n - at least four man pages found ($pages)"; }
echo "1..$n"
exit $failed
