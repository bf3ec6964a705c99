#!/bin/bash
# glimpse-launch: SECURITY.md case 11 and host integrity.  An app creates,
# overwrites, truncates, deletes, renames and chmods files in every overlaid
# directory; host checksums stay the same, every change is in the user's
# layer (deletions as 0/0 whiteouts), and dropping the layer (what
# `glimpse purge` does) returns the view to the host's.
# SPDX-License-Identifier: LGPL-2.1-or-later
. "$(dirname "$0")/libtest.sh"

gl_make_sandbox t-int-host host
gl_make_sandbox t-int-bb rootfs
gl_install_setuid

dirs=("$HOME_A" /tmp /var/tmp "/run/user/$UID_A" /dev/shm /media /run/media /mnt)
declare -A layer=(["$HOME_A"]=home [/tmp]=tmp [/var/tmp]=var-tmp ["/run/user/$UID_A"]=run-user
                  [/dev/shm]=dev-shm [/media]=media [/run/media]=run-media [/mnt]=mnt)
# Host fixtures, owned by the user where the user could change them.
present=()
for d in "${dirs[@]}"; do
  [ -d "$d" ] || continue
  present+=("$d")
  f=$d/gl-int-$TEST_NAME
  install -d -o $GL_USER_A -g $GID_A -m 0755 "$f"
  for n in keep over trunc del ren mode; do echo "host $n" > "$f/$n"; done
  chown -R $GL_USER_A:$GID_A "$f"
done
mounts_before=$(gl_mounts)
sums () { local d; for d in "${present[@]}"; do gl_tree_sums "$d/gl-int-$TEST_NAME"; done; gl_tree_sums /etc; }
sums_before=$(sums)

for sb in t-int-host t-int-bb; do
  for d in "${present[@]}"; do
    f=$d/gl-int-$TEST_NAME
    as_user $GL_USER_A "$LAUNCH" $sb -- /bin/sh -c "
      set -e
      echo new > $f/created
      echo changed > $f/over
      : > $f/trunc
      rm $f/del
      mv $f/ren $f/renamed
      chmod 0600 $f/mode
      mkdir $f/newdir
      [ \"\$(cat $f/keep)\" = 'host keep' ]" 2>"$WORK/err"
    check "$sb: 11: all operations succeed in $d" [ $? = 0 ]
    [ -s "$WORK/err" ] && sed 's/^/# /' "$WORK/err"
    # The view inside shows the changes
    got=$(as_user $GL_USER_A "$LAUNCH" $sb -- /bin/sh -c "cd $f && ls | tr '\n' ' '; cat over; wc -c < trunc; stat -c %a mode")
    check "$sb: 11: changes visible inside in $d" [ "$got" = "created keep mode newdir over renamed trunc changed
0
600" ]

    up=$GL_STORE/$sb/users/$UID_A/${layer[$d]}/upper/gl-int-$TEST_NAME
    check_sh "$sb: 11: changes are in users/UID/${layer[$d]}/upper" '[ "$(cat "$up/created")" = new ] && [ "$(cat "$up/over")" = changed ] && [ ! -s "$up/trunc" ] && [ -f "$up/renamed" ] && [ "$(stat -c %a "$up/mode")" = 600 ] && [ -d "$up/newdir" ]'
    check_sh "$sb: 11: deletions are 0/0 whiteouts (del, ren)" '[ -c "$up/del" ] && [ "$(stat -c %t:%T "$up/del")" = 0:0 ] && [ -c "$up/ren" ]'
    check_sh "$sb: 11: layer files owned by the user" '[ -z "$(find "$up" ! -user $GL_USER_A)" ]'
    check "$sb: 11: unchanged file not copied up" [ ! -e "$up/keep" ]
  done
  check "$sb: host checksums unchanged" [ "$(sums)" = "$sums_before" ]
  check "$sb: host mount table unchanged" [ "$(gl_mounts)" = "$mounts_before" ]
  # purge: drop the user's layers; the view is the host's again.  As
  # glimpse purge does: once the view has ended (its launcher returned when
  # the app ended; the view's PID 1 holds the layer's lock until its
  # overlays are down)
  flock -x -w 30 "$GL_STORE/$sb/users/$UID_A/lock" true
  rm -rf --one-file-system "$GL_STORE/$sb/users/$UID_A"
  d=${present[0]}; f=$d/gl-int-$TEST_NAME
  got=$(as_user $GL_USER_A "$LAUNCH" $sb -- /bin/sh -c "cd $f && ls | tr '\n' ' '; cat over")
  check "$sb: after purge the view is the host's again" [ "$got" = "del keep mode over ren trunc host over" ]
done

for d in "${present[@]}"; do rm -rf "$d/gl-int-$TEST_NAME"; done
finish
