#!/bin/bash
# Integration (slow): a package operation cut short — kill -9 of glimpse,
# and Ctrl-C (SIGINT) — while a maintainer script runs: nothing of it keeps
# running, the sandbox keeps its generation, and the next operation removes
# what was left.  Needs root.
source "$(dirname "$0")/libpkgtest.sh"
source "$(dirname "$0")/librepo.sh"

gl_pkg_env
id=pkgkill-$$
GL_SANDBOXES+=("$id")

gl_deb glimpse-hello 1.0
cat > "$WORK/slow-postinst" <<'POSTINST'
#!/bin/sh
/usr/lib/glimpse-slow/wait-here
POSTINST
mkdir -p "$WORK/slow-extra/usr/lib/glimpse-slow"
printf '#!/bin/sh\nsleep 120\n' > "$WORK/slow-extra/usr/lib/glimpse-slow/wait-here"
chmod 755 "$WORK/slow-extra/usr/lib/glimpse-slow/wait-here"
gl_deb glimpse-slow 1.0 "$WORK/slow-postinst" "$WORK/slow-extra"
gl_serve_host_sandbox "$id"

wait_for () { # CONDITION: up to 30 s
  local i
  for i in $(seq 300); do eval "$1" && return 0; sleep 0.1; done
  return 1
}
scripts_running () { pgrep -f "glimpse-slow/wait-here" >/dev/null; }
# (the operation's; not a walk for the next one's mask: --walk-refresh)
helpers_running () { pgrep -f "glimpse-pkgns --ids .*/$id/system" >/dev/null; }
scratch_left () { ls -A "$GL_STORE/$id/system" | grep_quiet '^\.op-'; }
# a generation above `current`: an install makes its next one while the
# command runs (a copy of the current tree), sealed only by the commit
next_left () {
  local cur n
  cur=$(gl_current "$id")
  for n in $(ls -A "$GL_STORE/$id/system" | grep -E '^[0-9]+$'); do [ "$n" -gt "$cur" ] && return 0; done
  return 1
}

for how in KILL INT; do
  gen=$(gl_current "$id")
  "$GLIMPSE" install "$id" glimpse-slow > "$WORK/out-$how" 2>&1 &
  pid=$!
  check "[$how] the maintainer script runs" wait_for scripts_running
  kill -"$how" "$pid"
  wait "$pid"; rc=$?
  check_sh "[$how] glimpse ends (status $rc)" '[ "$how" = KILL ] && [ $rc -eq 137 ] || [ $rc -eq 130 ]'
  check "[$how] nothing of the operation keeps running" wait_for '! scripts_running && ! helpers_running'
  check_sh "[$how] the sandbox keeps generation $gen" '[ "$(gl_current "$id")" = "$gen" ]'
  if [ "$how" = INT ]; then
    check_sh "[INT] it says it was interrupted and that nothing changed" 'grep -q "Interrupted.*unchanged" "$WORK/out-INT"'
    check_sh "[INT] and cleans up after itself, the next generation it was making too" '! scratch_left && ! next_left'
  else
    check_sh "[KILL] its scratch and the next generation it was making are left for the next operation" \
      'scratch_left && next_left'
  fi
done
check "the next operation works" "$GLIMPSE" install "$id" glimpse-hello
check_sh "… and removed what the killed one left" \
  '! scratch_left && ! next_left && [ -x "$(gl_tree "$id")/usr/bin/glimpse-hello" ]'
check_sh "the slow package is not installed" '[ ! -e "$(gl_tree "$id")/usr/lib/glimpse-slow/wait-here" ]'
check "remove" "$GLIMPSE" remove "$id"
finish
