#!/bin/bash
# with-tmpdir.sh PROGRAM [ARG...]: runs a test program with TMPDIR a fresh
# directory of its own and removes that directory afterwards, whatever
# happened - a failed GTest aborts before GLib removes its isolated
# directories (/tmp/test_test-*), and fake trees (glimpse-tree-*) go there too.
# SPDX-License-Identifier: LGPL-2.1-or-later
set -u
dir=$(mktemp -d "${TMPDIR:-/tmp}/glimpse-test.XXXXXX") || exit 99
cleanup () { chmod -R u+rwx "$dir" 2>/dev/null; rm -rf --one-file-system "$dir"; }
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
TMPDIR=$dir "$@"
