# The one skip policy of the test scripts (sourced; see tests/lib/gl-test-skip.h
# for the C tests).
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# A case that cannot run here prints why.  Where every case is required -
# CI=true (CI sets it; .ci/run exports it) or GLIMPSE_TESTS_REQUIRE_ALL=1,
# the two mean the same - a skip is a failure instead.
#
# A script that sources this defines how a case passes and fails:
#   gl_case_fail WHAT        one failed case
#   gl_case_skip WHAT WHY    one skipped case
# and, for a TAP script, sets GL_TAP=1 before calling gl_skip_test.

gl_required () {
  [ "${CI:-}" = true ] || [ "${GLIMPSE_TESTS_REQUIRE_ALL:-}" = 1 ]
}

gl_required_what () {
  echo "a required case cannot run (CI=true or GLIMPSE_TESTS_REQUIRE_ALL=1): $*"
}

# gl_skip_case WHAT WHY: one case (of several in the script) cannot run.
gl_skip_case () {
  if gl_required; then
    gl_case_fail "$1: $(gl_required_what "$2")"
  else
    gl_case_skip "$1" "$2"
  fi
}

# gl_skip_test WHY: the whole script cannot run; exits.
gl_skip_test () {
  local name=${TEST_NAME:-$(basename "$0")}
  if gl_required; then
    if [ "${GL_TAP:-}" = 1 ]; then
      echo "Bail out! $name: $(gl_required_what "$*")"
    else
      echo "FAIL: $name: $(gl_required_what "$*")"
    fi
    exit 1
  fi
  if [ "${GL_TAP:-}" = 1 ]; then
    echo "1..0 # SKIP $name: $*"
    exit 0
  fi
  echo "SKIP: $name: $*"
  exit 77
}
