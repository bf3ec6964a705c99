#!/bin/bash
# Slow integration: a bootstrapped base is built without the host's root.
# `glimpse create` of a Debian stable profile (mmdebstrap, from the mirror
# of the host's apt configuration): every dpkg of the bootstrap (which runs
# the packages' maintainer scripts) is watched from outside while it runs:
# it is root only of a user namespace mapped to the `glimpse` user's
# subordinate range.  The tree lands in the store with its own owners
# (root's files root's), no device node, no scratch left.  A profile asking
# for debootstrap is refused.  Needs root.
source "$(dirname "$0")/libpkgtest.sh"
source "$(dirname "$0")/librepo.sh"

gl_pkg_env --profiles --cache
id=rootless-$$
GL_SANDBOXES+=("$id")

gl_need_mirror

# A hook runs after the unpack and before the tree is defanged, inside the
# tree (as root of the package namespace): it waits, and while it waits
# (the tree still has the archive's set-id programs) the test checks from
# outside that no ordinary user may reach them.  While mmdebstrap runs, no
# ordinary user may enter the scratch around its tree either (its set-id
# programs belong to the range's ids).
pause="sleep 2919.$$"
printf '#!/bin/sh\n%s || true\n' "$pause" > "$WORK/peek-hook.sh"
# peek WHAT FILE: FILE (a set-id program of the tree being built), and
# whether user A reaches it
peek () {
  echo "$1 $2"
  [ -n "$2" ] && setpriv --reuid="$UID_A" --regid="$GID_A" --clear-groups -- test -e "$2" && echo "$1 reachable by $GL_USER_A"
  return 0
}
sed -e "s|^PostCreate=hooks/\(.*\)|PostCreate=$GLIMPSE_BUNDLED_PROFILES/hooks/\1;$WORK/peek-hook.sh;|" \
    "$GLIMPSE_BUNDLED_PROFILES/debian-stable.profile" > "$WORK/profiles/rootless-test.profile"

host_sums=$(ls -A / | sha256sum)
start=$(date +%s)
"$GLIMPSE" create rootless-test --name "$id" > "$WORK/create.log" 2>&1 &
create_pid=$!
# every dpkg whose root is the bootstrap's tree in our store: "UID-outside uid_map"
while kill -0 "$create_pid" 2>/dev/null; do
  for p in $(pgrep -x dpkg); do
    case $(readlink "/proc/$p/root" 2>/dev/null) in
      "$GL_STORE"/.creating-*)
        echo "$(awk '/^Uid:/ { print $2 }' "/proc/$p/status" 2>/dev/null) $(head -n1 "/proc/$p/uid_map" 2>/dev/null | tr -s ' ' | sed 's/^ //')"
        # (the first set-id program the bootstrap unpacks)
        [ -s "$WORK/peek-bootstrap" ] || {
          f=$(find "$GL_STORE"/.creating-*/bootstrap -xdev -type f -perm -4000 2>/dev/null | head -n 1)
          [ -z "$f" ] || peek bootstrap "$f" > "$WORK/peek-bootstrap"
        } ;;
    esac
  done
  if p=$(pgrep -f -x "$pause"); then
    peek hook "$(find "$GL_STORE"/.creating-*/rootfs -xdev -type f -perm -4000 | head -n 1)" > "$WORK/peek"
    kill $p
  fi
  sleep 0.05
done > "$WORK/dpkg-seen"
wait "$create_pid"; rc=$?
echo "# create took $(( $(date +%s) - start )) s"
check_sh "create builds the tree (rc $rc)" '[ $rc -eq 0 ]'
[ $rc -eq 0 ] || tail -n 20 "$WORK/create.log" | sed 's/^/# /'
check_sh "it says the bootstrap runs as root of a user namespace" 'grep -q "as root of a user namespace" "$WORK/create.log"'
root=$GL_STORE/$id/rootfs
start_uid=$(awk -F: '$1 == "glimpse" { print $2 }' /etc/subuid)
sort -u "$WORK/dpkg-seen" | sed 's/^/#   dpkg seen as uid, uid_map: /'
# (a dpkg that ended between the two reads leaves its uid alone on a line)
check_sh "the bootstrap's dpkg was seen running" 'grep -qx "$start_uid 0 $start_uid 65536" "$WORK/dpkg-seen"'
check_sh "every one was root of a namespace mapped to the glimpse range ($start_uid), never the host's root" \
  '[ -z "$(awk -v u="$start_uid" '"'"'NF > 0 && ($1 != u || (NF > 1 && $0 != u " 0 " u " 65536"))'"'"' "$WORK/dpkg-seen")" ]'
check_sh "the host's / is unchanged" '[ "$(ls -A / | sha256sum)" = "$host_sums" ]'
check_sh "the tree has its own owners in the store (root's files root's)" \
  '[ "$(stat -c %u:%g "$root/usr/bin/apt-get" "$root/etc/passwd" | sort -u)" = "0:0" ]'
check_sh "no set-id program and nothing writable by others in it" \
  '[ -z "$(find "$root" -xdev ! -type l \( ! -type d -perm /6000 -o -perm /0002 \) -print -quit)" ]'
check_sh "no device node in the store" '[ -z "$(find "$root" -xdev \( -type b -o -type c \) -print -quit)" ]'
sed 's/^/#   seen: /' "$WORK/peek" "$WORK/peek-bootstrap" 2>/dev/null
check_sh "before the tree is defanged, its set-id programs are out of an ordinary user's reach" \
  'grep -q "^hook /" "$WORK/peek" && ! grep -q reachable "$WORK/peek"'
check_sh "while mmdebstrap builds it, its set-id programs are out of an ordinary user's reach" \
  'grep -q "^bootstrap /" "$WORK/peek-bootstrap" && ! grep -q reachable "$WORK/peek-bootstrap"'
check_sh "no bootstrap scratch is left" '[ ! -e "$GL_STORE/$id/bootstrap" ] && [ -z "$(ls -A "$GL_STORE" | grep "^\.creating-")" ]'

# debootstrap would run the scripts as the host's root: refused, with a message
sed -e "s|^Suite=.*|&\nTool=debootstrap|" "$WORK/profiles/rootless-test.profile" > "$WORK/profiles/rootful-test.profile"
refused "a profile asking for debootstrap is refused" "host's root" "$GLIMPSE" create rootful-test --name "$id-deboot"
check "… and nothing is left in the store" [ ! -e "$GL_STORE/$id-deboot" ]

check "remove" "$GLIMPSE" remove "$id"
finish
