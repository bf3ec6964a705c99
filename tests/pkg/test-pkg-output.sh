#!/bin/bash
# Integration: what a package's maintainer script prints reaches the host's
# root as lines of `glimpse install`'s output (session/gl-pkg.c, on_line):
# it must not drive the terminal they are shown on.  A hostile postinst
# prints escape sequences (retitle the window, clear the screen, a C1 CSI,
# an OSC 52 clipboard write, a title report that some terminals type back
# as input) and a byte that is not UTF-8; the output of `glimpse install`
# holds none of those bytes, and still shows the lines.  Nor do
# `glimpse apps` and `glimpse repos`, which show what the postinst wrote in
# a desktop entry and a sources file of the sandbox.  An operation that
# changes nothing says so and claims no change.  And an operation that
# waits for another on the same sandbox says so.  Needs root.
source "$(dirname "$0")/libpkgtest.sh"
source "$(dirname "$0")/librepo.sh"
gl_pkg_env --sandbox pkgout

cat > "$WORK/esc-postinst" <<'POSTINST'
#!/bin/sh
printf 'glimpse-esc-title \033]0;glimpse-pwned\007 end\n'
printf 'glimpse-esc-clear \033[2J\033[H end\n'
printf 'glimpse-esc-c1 \302\23331m end\n'
printf 'glimpse-esc-clip \033]52;c;Z2xpbXBzZQ==\033\\ end\n' >&2
printf 'glimpse-esc-report \033[21t end\n'
printf 'glimpse-esc-raw \377\233 end\n'
# what glimpse lists of the sandbox afterwards: an application's name, a
# repository's address
printf '[Desktop Entry]\nType=Application\nName=glimpse-esc-app \033]0;glimpse-pwned\007 end\nExec=glimpse-esc\n' \
  > /usr/share/applications/org.glimpse.glimpse-esc.desktop
printf 'Types: deb\nURIs: http://glimpse.invalid/\033]0;glimpse-pwned\007/\nSuites: ./\n' \
  > /etc/apt/sources.list.d/glimpse-esc.sources
exit 0
POSTINST
gl_deb glimpse-esc 1.0 "$WORK/esc-postinst"
gl_serve_host_sandbox "$id"

"$GLIMPSE" install "$id" glimpse-esc > "$WORK/out" 2>&1; rc=$?
check_sh "the package installs" '[ $rc -eq 0 ]'
grep -a 'glimpse-esc-' "$WORK/out" | cat -v | sed 's/^/# /'
check_sh "its postinst's lines are shown" \
  '[ "$(grep -ac "^glimpse-esc-[a-z0-9]* .* end$" "$WORK/out")" -eq 6 ]'
check_sh "… with no escape, BEL or other C0 control but tab and newline" \
  '! LC_ALL=C grep -aq "[[:cntrl:]]" <(tr -d "\t\n" < "$WORK/out")'
check_sh "… no C1 control (U+0080…U+009F in UTF-8) and no byte that is not UTF-8" \
  '! LC_ALL=C grep -aqP "\xc2[\x80-\x9f]" "$WORK/out" && iconv -f UTF-8 -t UTF-8 "$WORK/out" >/dev/null 2>&1'

# --- an operation that changes nothing says so, and nothing else: no
# "Installed into" or "Added the repository" after "Nothing changed"
gen=$(gl_current "$id")
out=$("$GLIMPSE" install "$id" glimpse-esc 2>&1); rc=$?
echo "$out" | tail -n 2 | sed 's/^/# /'
check_sh "installing a package the sandbox has says so, and not that it installed it" \
  '[ $rc -eq 0 ] && grep -q "Nothing changed in “$id”" <<<"$out" && grep -q "^“$id” has this package already\.$" <<<"$out" \
   && ! grep -q "Installed into" <<<"$out" && [ "$(gl_current "$id")" = "$gen" ]'
out=$("$GLIMPSE" add-repo "$id" "deb $URL/repo ./" --key "$WORK/good.asc" --name test 2>&1); rc=$?
echo "$out" | tail -n 2 | sed 's/^/# /'
check_sh "adding a repository the sandbox has, as it is, says so, and not that it added it" \
  '[ $rc -eq 0 ] && grep -q "Nothing changed in “$id”" <<<"$out" && grep -q "^“$id” has this repository already, as it is\.$" <<<"$out" \
   && ! grep -q "Added the repository" <<<"$out" && [ "$(gl_current "$id")" = "$gen" ]'

"$GLIMPSE" apps "$id" > "$WORK/apps" 2>&1
gen_before_wait=$(gl_current "$id")
"$GLIMPSE" repos "$id" > "$WORK/repos" 2>&1
grep -a -e glimpse-esc -e glimpse.invalid "$WORK/apps" "$WORK/repos" | cat -v | sed 's/^/# /'
check_sh "glimpse apps shows the application, without its name's control characters" \
  'grep -aq "glimpse-esc-app .* end" "$WORK/apps" && ! LC_ALL=C grep -aq "[[:cntrl:]]" <(tr -d "\t\n" < "$WORK/apps")'
check_sh "glimpse repos shows the repository, without its address's" \
  'grep -aq "glimpse.invalid" "$WORK/repos" && ! LC_ALL=C grep -aq "[[:cntrl:]]" <(tr -d "\t\n" < "$WORK/repos")'

# --- operations on one sandbox are serialised, and one that waits says so
# (issue 10): with the operation lock held (as a running operation holds
# it), an uninstall says that it waits, waits, and runs once it is free
oplock_path=$GL_STORE/$id/system/op.lock
check "(the sandbox has the operation lock of its first operation)" [ -f "$oplock_path" ]
flock -x "$oplock_path" sh -c "touch '$WORK/op-held'; while [ ! -e '$WORK/op-release' ]; do sleep 0.05; done" &
holder=$!
gl_wait 30 [ -e "$WORK/op-held" ]
"$GLIMPSE" uninstall "$id" glimpse-esc > "$WORK/wait-out" 2>&1 &
op=$!
says_waiting () { grep -q "Waiting for another package operation on “$id” to finish" "$WORK/wait-out"; }
gl_wait 60 says_waiting; said=$?
gen_held=$(gl_current "$id")
check_sh "an operation on a sandbox another one holds says it waits, and waits (nothing written meanwhile)" \
  '[ $said = 0 ] && kill -0 $op 2>/dev/null && [ "$gen_held" = "$gen_before_wait" ]'
touch "$WORK/op-release"; wait $holder
wait $op; rc=$?
check_sh "… and runs once the other has finished (exit $rc)" \
  '[ $rc -eq 0 ] && [ ! -e "$(gl_tree "$id")/usr/share/applications/org.glimpse.glimpse-esc.desktop" ]'
[ $rc -eq 0 ] || sed 's/^/# /' "$WORK/wait-out" | tail -5
check "remove" "$GLIMPSE" remove "$id"
finish
