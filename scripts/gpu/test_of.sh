#!/usr/bin/env bash
# On the device, from the repository root: runs one test file's tests from the bundle,
#   bash scripts/gpu/test_of.sh NAME [libtest args...]
# .gpu/test-NAME where the file is its own test binary, else the suite binary's module NAME
# (tests/suite.rs, decision 60) with the filter `NAME::` added (further filters are OR'ed by
# libtest, so give them as `NAME::test` to stay in the file).
set -u
name="$1"; shift
if [ -x ".gpu/test-$name" ]; then
  exec ".gpu/test-$name" "$@"
fi
exec .gpu/test-suite "$@" "$name::"
