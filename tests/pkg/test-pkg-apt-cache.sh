#!/bin/bash
# Integration: apt's binary caches are kept with the generation an
# operation made, and given to the next one (gl-pkg.c, "apt's binary
# caches"): root's files, never more than what that generation lets a
# package do.  A package whose maintainer script writes the caches: when
# its operation fails, nothing of what it wrote is kept; when it succeeds,
# only regular files are kept, as root's, without set-id bits, and the next
# operation's apt takes a damaged cache for what it is and builds it anew.
# Needs root.
source "$(dirname "$0")/libpkgtest.sh"
source "$(dirname "$0")/librepo.sh"
gl_pkg_env --sandbox pkgcache

# postinsts that write the operation's caches (/run/glimpse-cache)
cat > "$WORK/fail-postinst" <<'SH'
#!/bin/sh
[ "$1" = configure ] || exit 0
echo hostile > /run/glimpse-cache/pkgcache.bin.x && mv -f /run/glimpse-cache/pkgcache.bin.x /run/glimpse-cache/pkgcache.bin
ln -sf /etc/shadow /run/glimpse-cache/srcpkgcache.bin
exit 1
SH
cat > "$WORK/odd-postinst" <<'SH'
#!/bin/sh
[ "$1" = configure ] || exit 0
rm -f /run/glimpse-cache/pkgcache.bin /run/glimpse-cache/srcpkgcache.bin
mkfifo /run/glimpse-cache/pkgcache.bin
ln -s /etc/passwd /run/glimpse-cache/srcpkgcache.bin
SH
cat > "$WORK/junk-postinst" <<'SH'
#!/bin/sh
[ "$1" = configure ] || exit 0
rm -f /run/glimpse-cache/pkgcache.bin /run/glimpse-cache/srcpkgcache.bin
head -c 300000 /dev/urandom > /run/glimpse-cache/pkgcache.bin
chmod 4755 /run/glimpse-cache/pkgcache.bin
printf 'not a cache' > /run/glimpse-cache/srcpkgcache.bin
SH
# a postinst that records what an apt program started without glimpse's -c
# file sees (apt-extracttemplates, run by debconf for every install)
cat > "$WORK/probe-postinst" <<'SH'
#!/bin/sh
[ "$1" = configure ] || exit 0
apt-config dump Dir::Cache::pkgcache APT::Architectures > /var/lib/glimpse-probe
SH
mkdir -p "$WORK/debs"
gl_deb glimpse-probe 1.0 "$WORK/probe-postinst"
gl_deb glimpse-first 1.0
gl_deb glimpse-second 1.0
gl_deb glimpse-third 1.0
gl_deb glimpse-failing 1.0 "$WORK/fail-postinst"
gl_deb glimpse-odd 1.0 "$WORK/odd-postinst"
gl_deb glimpse-junk 1.0 "$WORK/junk-postinst"
gl_serve_host_sandbox "$id"

caches () { echo "$GL_STORE/$id/system/$(gl_current "$id")/apt-cache"; }
check "an install of a package that asks apt-config" "$GLIMPSE" install "$id" glimpse-probe
probe=$GL_STORE/$id/system/$(gl_current "$id")/tree/var/lib/glimpse-probe
sed 's/^/# apt-config: /' "$probe"
check_sh "… every apt program of the operation uses its caches and knows the view's architectures" \
  'grep -qx "Dir::Cache::pkgcache \"/run/glimpse-cache/pkgcache.bin\";" "$probe" \
   && grep -qx "APT::Architectures:: \"$(dpkg --print-architecture)\";" "$probe"'
check "an install" "$GLIMPSE" install "$id" glimpse-first
c=$(caches)
check_sh "… keeps apt's caches with the generation it made, root's and read-only to others" \
  '[ "$(stat -c %u:%g:%a:%F "$c/pkgcache.bin" "$c/srcpkgcache.bin" | sort -u)" = "0:0:644:regular file" ] \
   && [ "$(stat -c %u:%a "$c")" = 0:755 ]'
src=$(stat -c %i "$c/srcpkgcache.bin")
check "the next install" "$GLIMPSE" install "$id" glimpse-second
c=$(caches)
check_sh "… maps the lists' cache it was given (the same file, kept again) and keeps a new status cache" \
  '[ "$(stat -c %i "$c/srcpkgcache.bin")" = "$src" ] && [ "$(stat -c %u:%a "$c/pkgcache.bin")" = 0:644 ]'
sum=$(cat "$c/pkgcache.bin" "$c/srcpkgcache.bin" | md5sum)
gen=$(gl_current "$id")

refused "a package whose postinst writes the caches and fails" "failed" "$GLIMPSE" install "$id" glimpse-failing
check_sh "… leaves the generation and its caches as they were" \
  '[ "$(gl_current "$id")" = "$gen" ] && [ "$(cat "$c/pkgcache.bin" "$c/srcpkgcache.bin" | md5sum)" = "$sum" ] \
   && [ "$(stat -c %u:%a "$c/pkgcache.bin")" = 0:644 ]'

check "a package whose postinst puts a FIFO and a link in the caches' place" "$GLIMPSE" install "$id" glimpse-odd
c2=$(caches)
check_sh "… its generation keeps neither" \
  '[ "$(gl_current "$id")" != "$gen" ] && [ ! -e "$c2/pkgcache.bin" ] && [ ! -L "$c2/pkgcache.bin" ] \
   && [ ! -e "$c2/srcpkgcache.bin" ] && [ ! -L "$c2/srcpkgcache.bin" ]'
check_sh "… and the generation before keeps its own as they were" \
  '[ ! -d "$c" ] || [ "$(cat "$c/pkgcache.bin" "$c/srcpkgcache.bin" | md5sum)" = "$sum" ]'
check "the next install builds them anew" "$GLIMPSE" install "$id" glimpse-third
c=$(caches)
check_sh "… and keeps them" '[ -f "$c/pkgcache.bin" ] && [ -f "$c/srcpkgcache.bin" ]'

check "a package whose postinst leaves junk (set-uid) as the caches" "$GLIMPSE" install "$id" glimpse-junk
c=$(caches)
check_sh "… is kept as root's, without the set-uid bit" \
  '[ "$(stat -c %u:%g:%a "$c/pkgcache.bin")" = 0:0:644 ]'
out=$("$GLIMPSE" uninstall "$id" glimpse-first 2>&1); rc=$?
echo "$out" | tail -5 | sed 's/^/# uninstall: /'
check_sh "the next operation's apt takes the damaged caches for what they are" '[ $rc -eq 0 ]'
c=$(caches)
check_sh "… and keeps caches built anew" \
  '[ "$(stat -c %s "$c/srcpkgcache.bin")" -gt 1000 ] && ! cmp -s "$c/srcpkgcache.bin" <(printf "not a cache")'
check "glimpse reset --yes" "$GLIMPSE" reset "$id" --yes
check_sh "… keeps no cache of the generations it dropped" \
  '[ -z "$(ls -d "$GL_STORE/$id"/system/*/apt-cache 2>/dev/null)" ]'
finish
