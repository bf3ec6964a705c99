#!/bin/bash
# Integration: the walk of the base after a short operation
# (glimpse-pkgns.c, WALK_BESIDE_DELAY_MS; gl-pkg.c, walk_refresh_start).
# A host sandbox's operation masks from the walk cache; the walk of the
# host's tree that keeps that cache runs beside the command only once the
# command has run a second.  When the command ends before, glimpse starts
# the walk after the operation, in a process of its own that holds the
# cache's lock until it has written the cache: `glimpse` has returned by
# then, and what the walk found (a root-only file that came since) is in
# the cache the next operation masks from.  While someone else holds that
# lock, no walk is started and no walk writes the cache.  Needs root.
source "$(dirname "$0")/libpkgtest.sh"
source "$(dirname "$0")/librepo.sh"
gl_pkg_env --sandbox walkafter
mkdir -p "$WORK/debs"
gl_deb glimpse-walk-probe 1.0
gl_serve_host_sandbox "$id"
cache=$GL_STORE/$id/system/walk-cache
now () { date +%s.%N; }
# (the cache's time is later than T)
written_after () { [ "$(echo "$(stat -c %.9Y "$cache") > $1" | bc -l)" = 1 ]; }
# (a path the cache keeps as masked: the list at its start, each path
# ended by a NUL; the first one follows the header's binary counts.  grep
# reads it all: -q would end the pipe early, SIGPIPE under pipefail)
masks () { tr '\0' '\n' < "$cache" | grep -a -- "\(^\|[^[:print:]]\)$1\$" >/dev/null; }

# (the first operation walks the whole tree before its view: the cache)
check "a first update" "$GLIMPSE" update "$id"
flock "$cache.lock" true
check_sh "… leaves a walk cache, root's alone" \
  '[ -s "$cache" ] && [ "$(stat -c %u:%a "$cache")" = 0:600 ] && [ "$(stat -c %u:%a "$cache.lock")" = 0:600 ]'

# a root-only file comes into a world-readable directory of the host
dir=/etc/glimpse-walk-after-$$
GL_CLEANUPS+=("rm -rf '$dir'")
mkdir -m 0755 "$dir"
( umask 077; echo secret > "$dir/private" )

# while another process holds the cache's lock, an operation neither
# starts the walk after it nor lets its own walk write the cache
ino=$(stat -c %i "$cache")
exec 9>>"$cache.lock"
flock -n 9 || fail "cannot take $cache.lock"
check "an update while another holds the cache's lock" "$GLIMPSE" update "$id"
sleep 1.5
check_sh "… writes no cache, and no walk waits for the lock" \
  '[ "$(stat -c %i "$cache")" = "$ino" ] && ! masks "${dir#/}/private" \
   && ! pgrep -f -- "--walk-refresh .*$id/system/walk-cache" >/dev/null'
exec 9>&-

# a short operation: the walk comes after it, and glimpse does not wait
# for it (an update that took 0.8 s or more is too near the walk's delay
# to tell where its walk ran: up to 5 are tried)
short=""
for try in 1 2 3 4 5; do
  t0=$(now)
  "$GLIMPSE" update "$id" >"$WORK/update.out" 2>&1 || { fail "an update once the lock is free"; sed 's/^/#   /' "$WORK/update.out"; break; }
  t1=$(now)
  took=$(echo "$t1 - $t0" | bc -l)
  flock "$cache.lock" true
  echo "# update $try took ${took:0:5} s"
  if [ "$(echo "$took < 0.8" | bc -l)" = 1 ]; then short=$t1; break; fi
done
check_sh "… and the walk after it keeps the root-only file that came since as masked" \
  'masks "${dir#/}/private" && [ "$(stat -c %u:%a "$cache")" = 0:600 ]'
if [ -n "$short" ]; then
  check_sh "… written after glimpse returned: the walk was not beside the command" 'written_after "$short"'
else
  skip_case "where the walk of a short update ran" "no update took less than 0.8 s here"
fi
# glimpse started with 0-2 closed (cron, a careless service): the cache's
# lock it takes is then one of them, and is the walk's all the same
( umask 077; echo secret > "$dir/private2" )
"$GLIMPSE" update "$id" <&- >&- 2>&-; rc=$?
flock "$cache.lock" true
check_sh "an update started with 0-2 closed works (rc $rc), and the walk after it keeps what came since" \
  '[ $rc -eq 0 ] && masks "${dir#/}/private2"'
# glimpse started with signals ignored (nohup, a shell's background job;
# SIGQUIT and SIGUSR1 here): the walk after it ignores none of them (a
# directory of 50,000 names keeps it running long enough to be seen)
( umask 077; echo secret > "$dir/private3" )
mkdir "$dir/many"; (cd "$dir/many" && seq 1 50000 | xargs touch)
# (up to 3 updates: one that ran a second or more walked beside its
# command, and left no walk after it to look at)
walker="" ign=""
for try in 1 2 3; do
  ( trap '' QUIT USR1; exec "$GLIMPSE" update "$id" ) >"$WORK/update.out" 2>&1 &
  gpid=$!
  for i in $(seq 1 3000); do
    walker=$(pgrep -f -- "--walk-refresh .*$id/system/walk-cache" | head -1)
    [ -n "$walker" ] && ign=$(awk '$1 == "SigIgn:" { print $2 }' "/proc/$walker/status" 2>/dev/null) && [ -n "$ign" ] && break
    kill -0 "$gpid" 2>/dev/null || [ "$i" -lt 300 ] || break
    sleep 0.01
  done
  wait $gpid; rc=$?
  flock "$cache.lock" true
  [ -z "$ign" ] || break
done
if [ -n "$ign" ]; then
  check_sh "an update started with SIGQUIT and SIGUSR1 ignored (rc $rc): its walk after ignores neither (SigIgn $ign)" \
    '[ $rc -eq 0 ] && [ $(( 0x$ign & 0x204 )) -eq 0 ] && masks "${dir#/}/private3"'
else
  skip_case "the signals of the walk after an update" "its walk was not seen running (rc $rc)"
fi
finish
