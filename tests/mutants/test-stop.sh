#!/bin/bash
# tests/mutants/run stopped by SIGTERM (meson's timeout) in the middle of a
# mutant's build: it ends at once with 128 + 15, without a traceback, and
# removes its scratch tree.  (Its handler used to remove the tree itself,
# under the running step, whose cleanup then found the mutated file gone:
# FileNotFoundError.)  meson and ninja are stand-ins here: meson passes
# every test, ninja waits until it is killed.  Needs root (the mutants'
# own requirement).  TAP.
# SPDX-License-Identifier: LGPL-2.1-or-later
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../lib/wait.sh"
n=0 failed=0
ok () { n=$((n + 1)); if eval "$2"; then echo "ok $n - $1"; else echo "not ok $n - $1"; failed=1; fi; }
if [ "$(id -u)" -ne 0 ]; then
  echo "1..0 # SKIP the mutants need root"
  exit 0
fi
fake=$(mktemp -d); trap 'rm -rf "$fake"' EXIT
mkdir "$fake/bin"
cat > "$fake/bin/meson" <<'SH'
#!/bin/bash
# setup BUILD SRC…: a build directory; test -C BUILD … NAMES: every one passes
case $1 in
  setup) mkdir -p "$2/meson-logs" ;;
  test)
    shift; build=
    while [ $# -gt 0 ]; do
      case $1 in
        -C|--num-processes) [ "$1" = -C ] && build=$2; shift 2 ;;
        -*) shift ;;
        *) printf '{"name": "glimpse:unit / %s", "result": "OK"}\n' "$1" >> "$build/meson-logs/testlog.json.new"; shift ;;
      esac
    done
    mv "$build/meson-logs/testlog.json.new" "$build/meson-logs/testlog.json" ;;
esac
SH
cat > "$fake/bin/ninja" <<'SH'
#!/bin/bash
# -C BUILD: says where it is, then waits to be killed
echo "$2 $$" > "$MUTANTS_TEST_AT"
exec sleep 600
SH
chmod 755 "$fake/bin/meson" "$fake/bin/ninja"
MUTANTS_TEST_AT=$fake/at PATH=$fake/bin:$PATH "$here/run" store-id-last-char > "$fake/out" 2> "$fake/err" &
pid=$!
gl_wait 120 test -s "$fake/at"
read -r build step < "$fake/at" 2>/dev/null
ok "a mutant's build started (in ${build:-nothing})" '[ -n "$build" ] && [ -d "$build" ]'
kill -TERM "$pid"
wait "$pid"; rc=$?
sed 's/^/# stderr: /' "$fake/err" | head -n 20
ok "stopped by SIGTERM: exit status 143 (got $rc)" '[ $rc -eq 143 ]'
ok "… no traceback" '! grep -q "Traceback\|Error" "$fake/err"'
ok "… its scratch tree is gone" '[ -n "$build" ] && [ ! -e "$(dirname "$build")" ]'
ok "… its build step (process ${step:-none}) was ended" '[ -n "$step" ] && gl_wait 10 sh -c "! kill -0 $step 2>/dev/null"'
echo "1..$n"
exit $failed
