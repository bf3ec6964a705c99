#!/bin/bash
# Integration: an application of a foreign-rootfs sandbox, chosen with
# `glimpse add-launcher`, exported with `glimpse export`, then started the
# way a desktop starts it - GIO's own launching code (`gio launch`) on the
# exported entry, with awkward file names - through the real setuid
# launcher, as an ordinary user.  The app inside records its arguments;
# they must be exactly the files given.  Needs root for the set-up.
: "${GLIMPSE:?set GLIMPSE to the built glimpse}"
source "$(dirname "$0")/launcher/libtest.sh"
command -v gio >/dev/null || skip "gio is not installed (apt install libglib2.0-bin)"
gl_install_setuid

export GLIMPSE_SANDBOX_DIR=$GL_STORE GLIMPSE_LAUNCHER=$LAUNCH
export GLIMPSE_PROFILES_PATH=${GLIMPSE_BUNDLED_PROFILES:?}
id=menu-$$
gl_make_sandbox "$id" rootfs
root=$GL_STORE/$id/rootfs
GL_EXTRA_ENV="GLIMPSE_SANDBOX_DIR=$GL_STORE GLIMPSE_LAUNCHER=$LAUNCH GLIMPSE_PROFILES_PATH=$GLIMPSE_PROFILES_PATH"

# The sandbox's app: writes its arguments, NUL-terminated, to ~/argdump.out.
mkdir -p "$root/usr/share/applications"
cat > "$root/usr/bin/argdump" <<'EOF'
#!/bin/sh
out=$HOME/argdump.out
: > "$out.tmp"
for a in "$@"; do printf '%s\0' "$a" >> "$out.tmp"; done
mv "$out.tmp" "$out"
EOF
chmod 0755 "$root/usr/bin/argdump"
cat > "$root/usr/share/applications/org.example.ArgDump.desktop" <<'EOF'
[Desktop Entry]
Type=Application
Name=Argument Dump
Exec=argdump %F
MimeType=text/plain;
Categories=Utility;
EOF

# A fresh menu home for the user, so nothing of theirs is touched.
xdg=$HOME_A/menu-launch-$$
install -d -o "$GL_USER_A" -g "$(id -g "$GL_USER_A")" "$xdg" "$xdg/data" "$xdg/config" "$xdg/files"
GL_EXTRA_ENV="$GL_EXTRA_ENV XDG_DATA_HOME=$xdg/data XDG_CONFIG_HOME=$xdg/config"
cleanup_menu () { rm -rf "$xdg"; gl_cleanup; }
trap cleanup_menu EXIT

check "add-launcher as the user" as_user "$GL_USER_A" "$GLIMPSE" add-launcher "$id" org.example.ArgDump
check "glimpse export as the user" as_user "$GL_USER_A" "$GLIMPSE" export --quiet "$id"
entry=$xdg/data/applications/glimpse-$id+org.example.ArgDump.desktop
check "the entry is exported" [ -f "$entry" ]
sed 's/^/# /' "$entry" 2>/dev/null | grep -E '^# (Exec|Name)='

names=("with space.txt" "dq\"uote.txt" "sq'uote.txt" "dollar\$HOME.txt" "back\\slash.txt"
       "tick\`id\`.txt" "naïve 日本.txt" "percent%f%%.txt" "semi;amp&pipe|.txt" "-dash.txt")
files=()
for n in "${names[@]}"; do
  printf 'x\n' > "$xdg/files/$n"
  files+=("$xdg/files/$n")
done
chown -R "$GL_USER_A:" "$xdg/files"

as_user "$GL_USER_A" gio launch "$entry" "${files[@]}" 2> "$WORK/gio.err"; rc=$?
check_sh "gio launch of the exported entry succeeds" '[ $rc -eq 0 ]'
sed 's/^/# gio: /' "$WORK/gio.err"
# gio does not wait: the app is done when its output appears in its view.
dumped () {
  got=$(as_user "$GL_USER_A" "$LAUNCH" "$id" -- /bin/sh -c 'cat "$HOME/argdump.out" 2>/dev/null' | od -An -c)
  [ -n "$got" ]
}
got=
gl_wait 60 dumped
want=$(printf '%s\0' "${files[@]}" | od -An -c)
check_sh "the app inside got exactly the ${#files[@]} awkward paths" '[ -n "$got" ] && [ "$got" = "$want" ]'
[ "$got" = "$want" ] || printf '# got:\n%s\n# want:\n%s\n' "$got" "$want"
check "the app's output stayed out of the host home" [ ! -e "$HOME_A/argdump.out" ]

check "glimpse unexport as the user" as_user "$GL_USER_A" "$GLIMPSE" unexport "$id"
check "no exported entry left" [ ! -e "$entry" ]

finish
