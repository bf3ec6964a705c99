#!/bin/bash
# Integration: a profile's [Repository NAME] groups are added to a new
# sandbox at create time by the code add-repo uses (deb822 .sources with
# its own Signed-By, the index fetched and verified), from a signed apt
# repository served on 127.0.0.1; a repository that fails its check fails
# the creation and leaves nothing.  Needs root.
source "$(dirname "$0")/libpkgtest.sh"
source "$(dirname "$0")/librepo.sh"

gl_pkg_env --profiles
mkdir -p "$WORK/profiles/keys"
id=prof-repo-$$
GL_SANDBOXES+=("$id" "$id-bad")

gl_key good
gl_key wrong
cp "$WORK/good.asc" "$WORK/profiles/keys/extra.asc"
cp "$WORK/wrong.asc" "$WORK/profiles/keys/wrong.asc"
gl_deb glimpse-hello 1.0
gl_publish "$REPO/repo" good "$WORK"/debs/glimpse-hello_1.0_all.deb
gl_serve

profile () { # name key-file
  printf '[Profile]\nName=Host with a repository\nFamily=apt\n\n[Base]\nType=host\n\n[Packages]\nRefresh=apt-get update\nUpgrade=apt-get -y dist-upgrade\nInstall=apt-get install -y\nListUpgradable=apt list --upgradable\n\n[Repository extra]\nSource=deb %s/repo ./\nKey=%s\n' \
    "$URL" "$2" > "$WORK/profiles/$1.profile"
}
profile with-repo keys/extra.asc
profile with-bad-repo keys/wrong.asc

out=$("$GLIMPSE" profiles --verbose with-repo 2>&1)
check_sh "profiles --verbose shows the repository and its key beside the profile" \
  'grep -q "^  Repository:  extra: deb $URL/repo ./, key $WORK/profiles/keys/extra.asc$" <<<"$out"'

out=$("$GLIMPSE" create with-repo --name "$id" 2>&1); rc=$?
printf '%s\n' "$out" | sed 's/^/# /'
check_sh "create adds the profile's repository" '[ $rc -eq 0 ] && grep -q "Adding the repository extra" <<<"$out"'
tree=$(gl_tree "$id")
check_sh "…as a deb822 .sources with its own Signed-By, the key beside it" \
  'grep -qx "Signed-By: /etc/apt/keyrings/glimpse-extra.asc" "$tree/etc/apt/sources.list.d/glimpse-extra.sources" \
   && cmp -s "$tree/etc/apt/keyrings/glimpse-extra.asc" "$WORK/good.asc"'
check_sh "…its signed index fetched at create time" 'grep -q "^Get:[0-9]* $URL/repo ./ InRelease" <<<"$out"'
check_sh "repos lists it as added, and sandbox.conf names it" \
  '"$GLIMPSE" repos "$id" | grep_quiet "^extra .*(added)$" && grep -qx "Repositories=extra;" "$GL_STORE/$id/sandbox.conf"'
check "remove-repo takes it away like one add-repo added" "$GLIMPSE" remove-repo "$id" extra
check_sh "…and sandbox.conf no longer names it" '! grep -q "^Repositories=.*extra" "$GL_STORE/$id/sandbox.conf"'

out=$("$GLIMPSE" create with-bad-repo --name "$id-bad" 2>&1); rc=$?
check_sh "a repository whose index is not signed by its key fails the creation, naming it" \
  '[ $rc -ne 0 ] && grep -q "Repository extra of profile $WORK/profiles/with-bad-repo.profile" <<<"$out"'
check_sh "…and leaves no sandbox and no half-built tree" \
  '[ ! -e "$GL_STORE/$id-bad" ] && [ -z "$(ls -A "$GL_STORE" | grep "^\.creating-")" ]'

check "glimpse remove" "$GLIMPSE" remove "$id"
finish
