#!/bin/bash
# Integration: a link a hostile package leaves where a trigger reads, to
# the reading program's own output (/proc/self/fd/1, /dev/stderr), does not
# hang that operation or a later one.  The trigger here is
# shared-mime-info's: update-mime-database reads every
# /usr/share/mime/packages/*.xml, following links (glimpse never runs it
# itself: dpkg does, in the package namespace).  The output there is a
# pipe glimpse made as host root, an owner the namespace does not map, so
# its root may not open it: EACCES, the file is skipped, nothing waits
# (see spawn_pkgns in gl-pkg.c).  Every command here is bounded
# (MaxSeconds=60, timeout 120).  Needs root.
source "$(dirname "$0")/libpkgtest.sh"
source "$(dirname "$0")/librepo.sh"
gl_pkg_env --sandbox pkgownout
[ -x /usr/bin/update-mime-database ] && [ -e /var/lib/dpkg/info/shared-mime-info.triggers ] ||
  skip "the host has no shared-mime-info (update-mime-database and its trigger), the trigger this is about"
export GLIMPSE_CONF=$WORK/glimpse.conf
printf '[Packages]\nMaxSeconds=60\n' > "$GLIMPSE_CONF"

mime_xml () {
  printf '<?xml version="1.0"?>\n<mime-info xmlns="http://www.freedesktop.org/standards/shared-mime-info">\n'
  printf '  <mime-type type="application/x-%s"><glob pattern="*.%s"/></mime-type>\n</mime-info>\n' "$1" "$1"
}
# a package that ships links to the reader's own output beside a real type
mkdir -p "$WORK/evil/usr/share/mime/packages"
ln -s /proc/self/fd/1 "$WORK/evil/usr/share/mime/packages/glimpse-own-stdout.xml"
ln -s /dev/stderr "$WORK/evil/usr/share/mime/packages/glimpse-own-stderr.xml"
mime_xml glimpse-evil > "$WORK/evil/usr/share/mime/packages/glimpse-evil.xml"
gl_deb glimpse-mime-evil 1.0 "" "$WORK/evil"
# a later package with a type of its own: the trigger reads the links again
mkdir -p "$WORK/later/usr/share/mime/packages"
mime_xml glimpse-later > "$WORK/later/usr/share/mime/packages/glimpse-later.xml"
gl_deb glimpse-mime-later 1.0 "" "$WORK/later"
gl_serve_host_sandbox "$id"

run () { timeout 120 "$GLIMPSE" "$@" > "$WORK/out" 2>&1; }
show () { tail -n 4 "$WORK/out" | sed 's/^/#   /'; }
has_type () { grep -q "application/x-$1" "$(gl_tree "$id")/usr/share/mime/types"; }

start=$SECONDS
run install "$id" glimpse-mime-evil; rc=$?
check_sh "links to the trigger's own output: the install does not hang (exit $rc, $((SECONDS - start)) s)" \
  '[ $rc -eq 0 ] && ! grep -q "was stopped" "$WORK/out"'
[ $rc -eq 0 ] || show
check_sh "… update-mime-database ran and skipped them: the package's own type is in the database" \
  'has_type glimpse-evil'

start=$SECONDS
run install "$id" glimpse-mime-later; rc=$?
check_sh "a later install, whose trigger reads the links again, does not hang (exit $rc, $((SECONDS - start)) s)" \
  '[ $rc -eq 0 ] && ! grep -q "was stopped" "$WORK/out" && has_type glimpse-later'
[ $rc -eq 0 ] || show
check "remove" "$GLIMPSE" remove "$id"
finish
