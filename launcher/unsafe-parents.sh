#!/bin/sh
# unsafe-parents.sh PATH: prints the first existing directory on PATH (PATH
# itself or one of its parents) that is not owned by root or is writable by
# group or others, as `path (owner:group mode)`; prints nothing when all are
# safe.  Used by meson.build to warn at set-up time.
p=$1
while :; do
  if [ -e "$p" ]; then
    set -- $(stat -L -c '%u %a %U %G' "$p")
    mode=$(printf '%04d' "$2")
    # the group and other digits: writable if 2, 3, 6 or 7
    g=$(echo "$mode" | cut -c3); o=$(echo "$mode" | cut -c4)
    case "$1:$g:$o" in
      0:[0145]:[0145]) ;;
      *) echo "$p ($3:$4 $2)"; exit 0 ;;
    esac
  fi
  [ "$p" = / ] && exit 0
  p=$(dirname "$p")
done
