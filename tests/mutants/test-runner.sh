#!/bin/bash
# tests/mutants/run itself, with stand-ins for meson and ninja.  Needs
# root (the mutants' own requirement).  TAP.
#
# Stopped by SIGTERM (meson's timeout) in the middle of a mutant's build:
# it ends at once with 128 + 15, without a traceback, and removes its
# scratch tree.  (Its handler used to remove the tree itself, under the
# running step, whose cleanup then found the mutated file gone:
# FileNotFoundError.)
#
# The named tests failing without any mutant (the baseline): it prints
# what the failing test itself printed - its failure lines and its last
# lines, bounded - before it removes its scratch tree (and every log in
# it), then names the test and exits 1.  (A CI run once ended with nothing
# but "the named tests fail without any mutant: launcher-run".)
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
# setup BUILD SRC…: a build directory (named in $MUTANTS_TEST_AT.setup);
# test -C BUILD … NAMES: every one passes, but the one named in
# $MUTANTS_TEST_FAIL, which fails with 500 lines of output, one of them
# its failure
case $1 in
  setup) mkdir -p "$2/meson-logs"; echo "$2" > "$MUTANTS_TEST_AT.setup" ;;
  test)
    shift; build=
    while [ $# -gt 0 ]; do
      case $1 in
        -C|--num-processes) [ "$1" = -C ] && build=$2; shift 2 ;;
        -*) shift ;;
        *) python3 -c '
import json, sys
name, bad = sys.argv[1], sys.argv[2]
r = {"name": "glimpse:unit / " + name, "result": "OK", "returncode": 0,
     "stdout": "ok 1 - a passing test says nothing here\n"}
if name == bad:
    out = ["ok - filler %d" % i for i in range(250)] + ["FAIL - the cause, in the middle"] \
        + ["ok - more filler %d" % i for i in range(249)]
    r.update(result="FAIL", returncode=1, duration=3.5, stdout="\n".join(out) + "\n")
print(json.dumps(r))' "$1" "${MUTANTS_TEST_FAIL:-}" >> "$build/meson-logs/testlog.json.new"; shift ;;
      esac
    done
    mv "$build/meson-logs/testlog.json.new" "$build/meson-logs/testlog.json"
    ! grep -q '"FAIL"' "$build/meson-logs/testlog.json" ;;
esac
SH
cat > "$fake/bin/ninja" <<'SH'
#!/bin/bash
# -C BUILD: says where it is, then waits to be killed
echo "$2 $$" > "$MUTANTS_TEST_AT"
exec sleep 600
SH
chmod 755 "$fake/bin/meson" "$fake/bin/ninja"

# --- stopped by SIGTERM ---
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

# --- a baseline that fails ---
rm -f "$fake/at.setup"
MUTANTS_TEST_FAIL=launcher-run MUTANTS_TEST_AT=$fake/at PATH=$fake/bin:$PATH \
  "$here/run" launch-env-prefix > "$fake/out" 2> "$fake/err"
rc=$?
read -r build < "$fake/at.setup" 2>/dev/null
sed 's/^/# stderr: /' "$fake/err" | head -n 20
ok "a failing baseline: exit status 1 (got $rc)" '[ $rc -eq 1 ]'
ok "… the failing test's failure line is shown" 'grep -qx "FAIL - the cause, in the middle" "$fake/out"'
ok "… and its last lines, the test named" \
  'grep -q "^--- launcher-run: FAIL" "$fake/out" && grep -qx "ok - more filler 248" "$fake/out"'
ok "… not all 500 of them ($(wc -l < "$fake/out") lines in all)" \
  '! grep -qx "ok - filler 100" "$fake/out" && [ "$(wc -l < "$fake/out")" -lt 150 ]'
ok "… nothing of the test that passed" '! grep -q "a passing test says nothing" "$fake/out"'
ok "… the verdict last" \
  '[ "$(tail -n 1 "$fake/out")" = "mutants: the named tests fail without any mutant: launcher-run" ]'
ok "… its scratch tree is gone" '[ -n "$build" ] && [ ! -e "$(dirname "$build")" ]'
[ $failed -eq 0 ] || sed 's/^/# out: /' "$fake/out" | head -n 40
echo "1..$n"
exit $failed
