# The sandbox.conf of the sandboxes the test scripts make by hand, in one
# place (sourced).  The format is glimpse's: session/gl-sandbox.c, DESIGN.md
# "On disk"; `glimpse create` writes the real ones.
# SPDX-License-Identifier: LGPL-2.1-or-later

# gl_sandbox_conf PROFILE NAME BASE [FAMILY [KEY=VALUE...]]: the file, on
# standard output (no Family= when FAMILY is empty or not given).
gl_sandbox_conf () {
  local profile=$1 name=$2 base=$3 family=${4:-}
  shift 3; shift $(($# > 0))
  printf '[Sandbox]\nProfile=%s\nName=%s\nBase=%s\n' "$profile" "$name" "$base"
  [ -z "$family" ] || printf 'Family=%s\n' "$family"
  [ $# -eq 0 ] || printf '%s\n' "$@"
}

# gl_sandbox_conf_set FILE KEY VALUE: sets KEY of a sandbox.conf (its
# [Sandbox] group, the only one), in place.
gl_sandbox_conf_set () {
  if grep -q "^$2=" "$1"; then
    sed -i "s|^$2=.*|$2=$3|" "$1"
  else
    printf '%s=%s\n' "$2" "$3" >> "$1"
  fi
}
