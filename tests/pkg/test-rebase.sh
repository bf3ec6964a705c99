#!/bin/bash
# Slow integration: `glimpse rebase` of a sandbox whose base is a tarball.
# A Debian stable tree with apt is built here once with mmdebstrap from the
# mirror of the host's apt configuration (the only network this needs),
# stripped of its network sources and served on 127.0.0.1 as base v1, then
# changed into v2 (a file gone, one new).  The sandbox gets a repository and
# two packages from a signed repository on 127.0.0.1 and a user's file;
# then: a base that fails its checksum changes nothing; the rebase onto v2
# keeps the repository, the package still published and the user's file,
# names the package that is gone, leaves a running app on v1; reset returns
# to v2.  Needs root.
source "$(dirname "$0")/libpkgtest.sh"
source "$(dirname "$0")/librepo.sh"
gl_pkg_env --profiles --cache --launcher
id=rebase-$$
GL_SANDBOXES+=("$id")

gl_need_mirror

# --- the bases: v1 from the mirror, v2 a changed copy; no network sources
# (built rootless, as a test user with a subordinate range: nothing of it
# runs as the host's root)
start=$(date +%s)
mm=$(mktemp -d /tmp/gl-rebase-mm.XXXXXX); GL_CLEANUPS+=("rm -rf $mm"); chown "$GL_USER_A" "$mm"; chmod 0711 "$mm"
as_user "$GL_USER_A" env TMPDIR="$mm" mmdebstrap --mode=unshare --variant=apt --quiet \
  --customize-hook='rm -f "$1/etc/apt/sources.list"; rm -rf "$1"/var/lib/apt/lists/*; echo v1 > "$1/etc/glimpse-base"; echo old > "$1/etc/glimpse-only-v1"' \
  stable "$mm/v1.tar" "deb $mirror stable main" > "$WORK/mmdebstrap.log" 2>&1 ||
  { tail -n 20 "$WORK/mmdebstrap.log" | sed 's/^/# /'; echo "Bail out! mmdebstrap failed"; exit 1; }
mv "$mm/v1.tar" "$WORK/v1.tar"
echo "# the test base took $(( $(date +%s) - start )) s"
mkdir "$WORK/v2"
tar -C "$WORK/v2" -xpf "$WORK/v1.tar"
echo v2 > "$WORK/v2/etc/glimpse-base"; rm "$WORK/v2/etc/glimpse-only-v1"; echo new > "$WORK/v2/etc/glimpse-only-v2"
tar -C "$WORK/v2" -cf "$WORK/v2.tar" . && rm -rf "$WORK/v2"

gl_serve_base "$WORK/v1.tar"

gl_key good
gl_deb glimpse-hello 1.0
gl_deb glimpse-gone 1.0
gl_publish "$REPO/repo" good "$WORK"/debs/glimpse-hello_1.0_all.deb "$WORK"/debs/glimpse-gone_1.0_all.deb
gl_serve
gl_tarball_profile rebase-test "Rebase test" "[Hooks]" "PostCreate=$GLIMPSE_BUNDLED_PROFILES/hooks/apt-post-create.sh"

in_sandbox () { as_user "$GL_USER_A" "$GLIMPSE" run "$id" -- "$@" 2>&1; }

check "create from base v1" "$GLIMPSE" create rebase-test --name "$id"
check "add-repo" "$GLIMPSE" add-repo "$id" "deb $URL/repo ./" --key "$WORK/good.asc" --name test
check "install two packages" "$GLIMPSE" install "$id" glimpse-hello glimpse-gone
out=$(in_sandbox sh -c 'cat /etc/glimpse-base; glimpse-hello; echo mine > "$HOME/rebase-keep"')
check_sh "v1 with the package runs for a user (got: $out)" '[ "$out" = "$(printf "v1\nglimpse-hello 1.0")" ]'

# an app that keeps running across the rebase, found by its unique command line
as_user "$GL_USER_A" "$GLIMPSE" run "$id" -- sleep 3599.271 >/dev/null 2>&1 &
runner_started () { pgrep -fx "sleep 3599.271" >/dev/null; }
wait_for () { local i; for i in $(seq 300); do eval "$1" && return 0; sleep 0.1; done; return 1; }
check "an app of v1 runs" wait_for runner_started
runner=$(pgrep -fx "sleep 3599.271" | head -n1)
gen=$(gl_current "$id")

# --- a new base that fails its checksum: nothing changes
gl_serve_base "$WORK/v2.tar" "$(printf '0%.0s' $(seq 64))"
out=$("$GLIMPSE" rebase "$id" 2>&1); rc=$?
check_sh "a base that does not match its checksum is refused (rc $rc)" '[ $rc -ne 0 ] && grep -q "SHA-256\|does not match\|checksum" <<<"$out"'
check_sh "… and the sandbox is unchanged, no scratch left" \
  '[ "$(gl_current "$id")" = "$gen" ] && ! ls -A "$GL_STORE/$id/system" | grep_quiet "^\.op-"'

# --- v2, with glimpse-gone no longer published
gl_serve_base "$WORK/v2.tar"
gl_publish "$REPO/repo" good "$WORK"/debs/glimpse-hello_1.0_all.deb
out=$("$GLIMPSE" rebase "$id" 2>&1); rc=$?
printf '%s\n' "$out" | tail -n 5 | sed 's/^/# /'
check_sh "rebase onto v2 names the package it could not put back (rc $rc)" \
  '[ $rc -eq 1 ] && grep -q "could not be installed on the new base: glimpse-gone" <<<"$out"'
check_sh "… as a new system generation" '[ "$(gl_current "$id")" -gt "$gen" ]'
# (a new app of user A would join A's running view; user B's is new)
out=$(as_user "$GL_USER_B" "$GLIMPSE" run "$id" -- sh -c 'cat /etc/glimpse-base; ls /etc/glimpse-only-v1 /etc/glimpse-only-v2 2>&1; glimpse-hello; command -v glimpse-gone || echo no-gone' 2>&1)
printf '%s\n' "$out" | sed 's/^/# /'
check_sh "a new view sees base v2" '[ "$(sed -n 1p <<<"$out")" = v2 ]'
check_sh "… without v1's file, with v2's" 'grep -q "glimpse-only-v1.*No such file" <<<"$out" && grep -qx "/etc/glimpse-only-v2" <<<"$out"'
check_sh "… with the kept package, not the one that is gone" 'grep -qx "glimpse-hello 1.0" <<<"$out" && grep -qx no-gone <<<"$out"'
check_sh "the repository glimpse added is kept" '"$GLIMPSE" repos "$id" | grep_quiet "^test .*(added)$"'
check_sh "the app started before still runs on v1" '[ "$(cat "/proc/$runner/root/etc/glimpse-base")" = v1 ]'
check_sh "its generation $gen is kept while it runs" '[ -d "$GL_STORE/$id/system/$gen/tree" ]'
check_sh "rootfs/ (the first base) is unchanged" '[ "$(cat "$GL_STORE/$id/rootfs/etc/glimpse-base")" = v1 ]'
kill "$runner"
a_sees_v2 () { [ "$(in_sandbox cat /etc/glimpse-base)" = v2 ]; }
check "once it exits, user A's next app gets v2" wait_for a_sees_v2
out=$(in_sandbox sh -c 'cat "$HOME/rebase-keep"')
check_sh "… and still has the user's own file (got: $out)" '[ "$out" = mine ]'

# --- reset: back to v2, not v1
check "reset --yes" "$GLIMPSE" reset "$id" --yes
out=$(in_sandbox sh -c 'cat /etc/glimpse-base; command -v glimpse-hello || echo no-hello')
check_sh "after reset the view is base v2 without packages (got: $out)" '[ "$out" = "$(printf "v2\nno-hello")" ]'

refused "an ordinary user cannot rebase" "root" as_user "$GL_USER_A" "$GLIMPSE" rebase "$id"
check "remove" "$GLIMPSE" remove "$id" --force
finish
