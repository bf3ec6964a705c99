#!/bin/bash
# The bash and zsh completions, driven as the shells drive them, against the
# built glimpse and a test store: commands, options, sandbox ids, profiles,
# a sandbox's desktop ids, files and commands where the usage says so.
# bash: the completion function with COMP_WORDS/COMP_CWORD, reading
# COMPREPLY.  zsh: the completion function with words/CURRENT, compadd and
# _files/_command_names standing in for zsh's completion system (which
# needs a terminal).  TAP output.
# SPDX-License-Identifier: LGPL-2.1-or-later
set -u
: "${GLIMPSE:?set GLIMPSE to the built glimpse}" "${GLIMPSE_SRCDIR:?}"
source "$GLIMPSE_SRCDIR/tests/lib/skip.sh"
source "$GLIMPSE_SRCDIR/tests/lib/sandbox-conf.sh"
GL_TAP=1
n=0 failed=0
gl_case_fail () { n=$((n + 1)); failed=1; echo "not ok $n - $1"; }
gl_case_skip () { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
ok () { n=$((n + 1)); echo "ok $n - $1"; }

bash_file=$GLIMPSE_SRCDIR/session/completion/glimpse.bash
zsh_file=$GLIMPSE_SRCDIR/session/completion/_glimpse
work=$(mktemp -d /tmp/glimpse-completion.XXXXXX)
trap 'rm -rf "$work"' EXIT

# A store with two sandboxes; "demo" has two applications.
export GLIMPSE_SANDBOX_DIR=$work/store GLIMPSE_PROFILES_PATH=$GLIMPSE_SRCDIR/profiles
export PATH=$(dirname "$GLIMPSE"):$PATH LC_ALL=C.UTF-8
apps=$GLIMPSE_SANDBOX_DIR/demo/rootfs/usr/share/applications
mkdir -p "$apps" "$GLIMPSE_SANDBOX_DIR/other-1.0" "$work/files"
gl_sandbox_conf debian-unstable Demo rootfs apt > "$GLIMPSE_SANDBOX_DIR/demo/sandbox.conf"
mkdir -p "$GLIMPSE_SANDBOX_DIR/demo/rootfs/etc/apt/sources.list.d"
echo 'deb http://127.0.0.1:9/debian testing main' > "$GLIMPSE_SANDBOX_DIR/demo/rootfs/etc/apt/sources.list"
printf 'Types: deb\nURIs: http://127.0.0.1:9/extra\nSuites: ./\n' > "$GLIMPSE_SANDBOX_DIR/demo/rootfs/etc/apt/sources.list.d/extra.sources"
gl_sandbox_conf host Other host > "$GLIMPSE_SANDBOX_DIR/other-1.0/sandbox.conf"
printf '[Desktop Entry]\nType=Application\nName=Foo\nExec=foo\n' > "$apps/org.example.Foo.desktop"
printf '[Desktop Entry]\nType=Application\nName=Bar\nExec=bar %%F\n' > "$apps/bar.desktop"
touch "$work/files/image.tar.gz" "$work/files/notes.txt"
cd "$work/files"

profiles=$(cd "$GLIMPSE_PROFILES_PATH" && ls *.profile | sed 's/\.profile$//' | sort | tr '\n' ' ')
commands=$("$GLIMPSE" --help | awk '/^Commands:/{c=1;next} c&&/^  [^ ]/{print $1} c&&/^$/{exit}' | sort | tr '\n' ' ')
[ "$(echo $commands | wc -w)" -ge 10 ] || gl_case_fail "glimpse --help lists the commands"

# complete_bash WORD... : COMPREPLY for the last word, sorted, one line
complete_bash () {
  bash --norc --noprofile -c 'source "$0"; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _glimpse
    printf "%s\n" "${COMPREPLY[@]}"' "$bash_file" "$@" | sort -u | grep -v '^$' | tr '\n' ' '
}
complete_zsh () {
  zsh -f -c '
    compadd () { local a; while [[ $1 == -* && $1 != -- ]]; do [[ $1 == -[PSJXx] ]] && shift; shift; done
                 [[ $1 == -- ]] && shift; for a; do [[ $a == ${PREFIX}* ]] && print -r -- "$a"; done; }
    _files () { print -r -- "<files>"; }
    _command_names () { print -r -- "<commands>"; }
    source "$0" >/dev/null 2>&1
    words=("$@"); CURRENT=$#; PREFIX=$words[CURRENT]; IPREFIX=
    _glimpse' "$zsh_file" "$@" | sed 's/=$//' | sort -u | grep -v '^$' | tr '\n' ' '
}

# expect SHELL "WORDS" "WANT": the completion of the last word of WORDS is WANT
expect () {
  local shell=$1 line=$2 want=$3 got
  local -a w
  read -r -a w <<< "$line"
  [[ $line == *' ' ]] && w+=("")
  got=$(complete_$shell "${w[@]}")
  if [ "$got" = "$want" ]; then ok "$shell: '$line' -> $want"
  else gl_case_fail "$shell: '$line' -> $want"; echo "#   got: $got"; fi
}

for sh in bash zsh; do
  if ! command -v $sh >/dev/null; then
    gl_skip_case "$sh completion" "$sh is not installed (apt install $sh)"
    continue
  fi
  if [ $sh = bash ]; then opts_create='--display-name= --help --image= --keyring= --name= --release= --sha256= --signature= '; files='image.tar.gz notes.txt '
  else opts_create='--display-name --help --image --keyring --name --release --sha256 --signature '; files='<files> '; fi
  # every command glimpse --help lists (and, for bash, --help and --version)
  extra=''; [ $sh = bash ] && extra='--help --version '
  expect $sh "glimpse " "$(echo $commands $extra | tr ' ' '\n' | sort | tr '\n' ' ')"
  expect $sh "glimpse l" "list "
  expect $sh "glimpse notify" ""                               # hidden, not offered
  expect $sh "glimpse list --" "--help --ids "
  expect $sh "glimpse create -" "$opts_create"
  expect $sh "glimpse info " "demo other-1.0 "
  expect $sh "glimpse run o" "other-1.0 "
  expect $sh "glimpse remove demo " "demo other-1.0 "          # ID…: more ids
  expect $sh "glimpse info demo " ""                           # one ID only
  expect $sh "glimpse create " "$profiles"
  expect $sh "glimpse profiles --verbose deb" "debian-stable debian-testing debian-unstable "
  expect $sh "glimpse add-launcher demo " "bar.desktop org.example.Foo.desktop "
  expect $sh "glimpse remove-launcher demo bar.desktop org" "org.example.Foo.desktop "
  expect $sh "glimpse open demo --app " "bar.desktop org.example.Foo.desktop "
  expect $sh "glimpse apps other-1.0 " ""
  expect $sh "glimpse create host --name " ""                  # a new id: nothing to offer
  expect $sh "glimpse create host --image " "$files"
  expect $sh "glimpse bogus " ""
  expect $sh "glimpse remove-repo demo " "extra sources "     # from glimpse repos demo
  expect $sh "glimpse install demo " ""                       # package names: nothing offered
  expect $sh "glimpse add-repo demo spec --key " "$files"      # --key FILE|URL
  if [ $sh = bash ]; then
    expect $sh "glimpse open demo --app = " "bar.desktop org.example.Foo.desktop "
    expect $sh "glimpse changes demo not" "notes.txt "
    got=$(complete_bash glimpse run demo -- bas)
    case " $got " in *" bash "*) ok "bash: 'glimpse run demo -- bas' offers the bash command" ;;
      *) gl_case_fail "bash: 'glimpse run demo -- bas' offers the bash command"; echo "#   got: $got" ;; esac
  else
    expect $sh "glimpse open demo --app=" "bar.desktop org.example.Foo.desktop "
    expect $sh "glimpse changes demo " "<files> "
    expect $sh "glimpse run demo -- " "<commands> "
    if zsh -n "$zsh_file"; then ok "zsh -n accepts _glimpse"; else gl_case_fail "zsh -n accepts _glimpse"; fi
  fi
done

echo "1..$n"
exit $failed
