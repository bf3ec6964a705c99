#!/bin/bash
# Integration: a FIFO a hostile package leaves where a trigger reads
# (/usr/share/applications, read by update-desktop-database, the
# desktop-file-utils trigger) must not hang that operation or any later one
# of the sandbox: open() of a FIFO for reading waits for a writer that
# never comes.  The package namespace makes no FIFO (glimpse-pkgns,
# install_seccomp): a postinst's mkfifo is refused and a package that ships
# one fails to unpack, saying so; a generation never holds one (gl-pkg.c,
# defang_one), and one an older glimpse let into a generation is hidden
# from the next operation (hide_old_fifos); a FIFO of the base is not
# shown (THE RULE), and one that appeared since the last operation stops
# the next one at once.  Every command
# here is bounded (MaxSeconds=60, and timeout 120): on code that lets a FIFO
# in, the operations hang and are stopped, and the checks fail.  Needs root.
source "$(dirname "$0")/libpkgtest.sh"
source "$(dirname "$0")/librepo.sh"
gl_pkg_env --sandbox pkgfifo
[ -x /usr/bin/update-desktop-database ] ||
  skip "the host has no update-desktop-database (desktop-file-utils), the trigger this is about"
export GLIMPSE_CONF=$WORK/glimpse.conf
printf '[Packages]\nMaxSeconds=60\n' > "$GLIMPSE_CONF"

host_fifo=/usr/share/applications/glimpse-test-fifo-$$.desktop
GL_CLEANUPS+=("rm -f '$host_fifo'")

# a postinst that makes a FIFO where the trigger reads, and says what it got
cat > "$WORK/fifo-postinst" <<'POSTINST'
#!/bin/sh
if mkfifo /usr/share/applications/glimpse-fifo-made.desktop 2>/dev/null; then
  echo "glimpse-fifo: mkfifo worked"
else
  echo "glimpse-fifo: mkfifo refused"
fi
exit 0
POSTINST
gl_deb glimpse-fifo-made 1.0 "$WORK/fifo-postinst"
# a package whose files hold a FIFO there
mkdir -p "$WORK/fifo-extra/usr/share/applications"
mkfifo "$WORK/fifo-extra/usr/share/applications/glimpse-fifo-shipped.desktop"
gl_deb glimpse-fifo-shipped 1.0 "" "$WORK/fifo-extra"
gl_deb glimpse-hello 1.0
gl_deb glimpse-ww-first 1.0
gl_deb glimpse-ww-second 1.0
gl_deb glimpse-own-first 1.0
gl_deb glimpse-own-second 1.0
gl_deb glimpse-later 1.0
gl_deb glimpse-third 1.0
gl_serve_host_sandbox "$id"

run () { timeout 120 "$GLIMPSE" "$@" > "$WORK/out" 2>&1; }
show () { tail -n 4 "$WORK/out" | sed 's/^/#   /'; }
no_fifo () { [ -z "$(find "$(gl_tree "$id")" -type p -print -quit)" ]; }

run install "$id" glimpse-fifo-made; rc=$?
check_sh "a postinst that makes a FIFO where the trigger reads: the install does not hang (exit $rc)" \
  '[ $rc -eq 0 ] && ! grep -q "was stopped" "$WORK/out"'
[ $rc -eq 0 ] || show
check_sh "… its mkfifo is refused, and the generation holds no FIFO" \
  'grep -q "glimpse-fifo: mkfifo refused" "$WORK/out" && no_fifo'

gen=$(gl_current "$id")
run install "$id" glimpse-fifo-shipped; rc=$?
check_sh "a package that ships a FIFO is refused, saying why, not stopped at a limit (exit $rc)" \
  '[ $rc -ne 0 ] && [ $rc -ne 124 ] && ! grep -q "was stopped" "$WORK/out" \
   && grep -q "glimpse-fifo-shipped.desktop" "$WORK/out" && grep -q "Operation not permitted" "$WORK/out"'
show
check_sh "… the sandbox is as it was" '[ "$(gl_current "$id")" = "$gen" ] && no_fifo'

run install "$id" glimpse-hello; rc=$?
check_sh "a later install, whose trigger reads the directory again, does not hang (exit $rc)" \
  '[ $rc -eq 0 ] && [ -x "$(gl_tree "$id")/usr/bin/glimpse-hello" ]'
[ $rc -eq 0 ] || show

# a FIFO of the base (here the host's own, world-readable) is not shown.
# An operation's mask is the last operation's check of the base, and the
# base is checked again beside the command (glimpse-pkgns.c, build_mask):
# a FIFO that appeared since stops the operation at once, saying so, and
# the next one hides it.
# (one in a directory any user may write to, which no operation reads,
# does not: any user could otherwise stop every operation)
# Each FIFO is made once the last check of the base has ended: after a
# short operation, that check runs after it, in the background
# (glimpse-pkgns --walk-refresh, holding the walk cache's lock), and would
# otherwise find a FIFO made meanwhile and hide it from the next operation.
walks_done () { flock "$GL_STORE/$id/system/walk-cache.lock" true; }
ww=/var/lib/glimpse-test-ww-$$
GL_CLEANUPS+=("rm -rf '$ww'")
mkdir -m 1777 "$ww"
run install "$id" glimpse-ww-first; rc=$?
check "an install after a directory any user may write to was made" test $rc -eq 0
walks_done; mkfifo -m 0644 "$ww/fifo"
run install "$id" glimpse-ww-second; rc=$?
check_sh "a FIFO that appeared since in such a directory does not stop the next operation (exit $rc)" \
  '[ $rc -eq 0 ] && [ -x "$(gl_tree "$id")/usr/bin/glimpse-ww-second" ]'
[ $rc -eq 0 ] || show
# nor one in a directory another user owns, though its mode lets only
# its owner write (who makes the FIFO, then takes the write bit away), nor
# one in root's directory with the group's write bit (root's group, or an
# ACL's mask)
own=/var/lib/glimpse-test-own-$$ grw=/var/lib/glimpse-test-grw-$$
GL_CLEANUPS+=("rm -rf '$own' '$grw'")
mkdir -m 0755 "$own" "$grw"; chown nobody "$own"; chmod 0775 "$grw"
run install "$id" glimpse-own-first; rc=$?
check "an install after a directory of another user's was made" test $rc -eq 0
walks_done; mkfifo -m 0644 "$own/fifo" "$grw/fifo"; chmod 0555 "$own"
run install "$id" glimpse-own-second; rc=$?
check_sh "a FIFO that appeared since in another user's directory of mode 0555, or in root's of 0775, does not stop the next operation (exit $rc)" \
  '[ $rc -eq 0 ] && [ -x "$(gl_tree "$id")/usr/bin/glimpse-own-second" ]'
[ $rc -eq 0 ] || show
walks_done; mkfifo -m 0644 "$host_fifo"
gen=$(gl_current "$id")
run install "$id" glimpse-later; rc=$?
show
check_sh "a FIFO of the base that appeared since the last operation stops the next one, saying so, not at a limit (exit $rc)" \
  '[ $rc -ne 0 ] && [ $rc -ne 124 ] && ! grep -q "was stopped" "$WORK/out" \
   && grep -q "glimpse-test-fifo-$$.desktop.* is a FIFO that appeared since" "$WORK/out" \
   && grep -q "Run it again" "$WORK/out"'
check_sh "… the sandbox is as it was" '[ "$(gl_current "$id")" = "$gen" ] && no_fifo'
run install "$id" glimpse-later; rc=$?
rm -f "$host_fifo"
check_sh "… and run again, it is not shown to the trigger: no hang (exit $rc)" \
  '[ $rc -eq 0 ] && [ -x "$(gl_tree "$id")/usr/bin/glimpse-later" ] && no_fifo'
[ $rc -eq 0 ] || show

# a FIFO an older glimpse let into the current generation (made by hand
# here, with the generation's mark that it holds none taken away) is
# hidden from the next operation, and gone from the generation it makes
gen_dir=$GL_STORE/$id/system/$(gl_current "$id")
mkfifo -m 0644 "$(gl_tree "$id")/usr/share/applications/glimpse-fifo-old.desktop"
chown --reference="$(gl_tree "$id")/usr/share/applications" "$(gl_tree "$id")/usr/share/applications/glimpse-fifo-old.desktop"
rm -f "$gen_dir/no-fifo"
run install "$id" glimpse-third; rc=$?
check_sh "a FIFO an older glimpse left in the generation: the next operation does not hang (exit $rc)" \
  '[ $rc -eq 0 ] && [ -x "$(gl_tree "$id")/usr/bin/glimpse-third" ] && no_fifo'
[ $rc -eq 0 ] || show
check "remove" "$GLIMPSE" remove "$id"
finish
