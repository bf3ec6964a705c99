# Waiting in test scripts (sourced): on the condition itself, never on a
# fixed pause - a loaded 2-core CI machine running the ASan build takes
# longer than any pause that looks generous here.
# SPDX-License-Identifier: LGPL-2.1-or-later

# gl_wait SECONDS COMMAND...: runs COMMAND every 50 ms until it succeeds
# (status 0) or SECONDS have passed (then one last try decides).  The
# limit is only there to end a failing test; make it generous (10-60 s).
gl_wait () {
  local end=$((SECONDS + $1)); shift
  until "$@"; do
    [ "$SECONDS" -lt "$end" ] || { "$@"; return; }
    sleep 0.05
  done
}

# gl_wait_pid USER REGEX [SECONDS]: prints the pid of USER's process whose
# whole command line matches REGEX (pgrep -f, anchored by the caller; give
# the process arguments no other test uses), waiting up to SECONDS
# (default 30) for it to appear.  Fails, printing nothing, when none does.
gl_wait_pid () {
  local u=$1 re=$2 end=$((SECONDS + ${3:-30})) p
  while :; do
    p=$(pgrep -u "$u" -f -- "$re" | head -n 1)
    [ -n "$p" ] && { echo "$p"; return 0; }
    [ "$SECONDS" -lt "$end" ] || return 1
    sleep 0.05
  done
}
