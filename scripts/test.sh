#!/usr/bin/env bash
# The test command: installs Debian packages (build + real S3 clients +
# clang's sanitizer runtimes), builds everything, runs the unit tests and the
# integration suite (real strata servers on free loopback ports driven by aws
# cli, boto3, rclone, s3cmd and curl), then the sanitizer stages:
#   ASan + UBSan (assertions on): unit tests, every fuzz corpus replayed and
#   each fuzz target run briefly, and the parser-heavy integration tests
#   against the sanitized server; TSan: the concurrency unit tests.
# STRATA_SKIP_SANITIZERS=1 stops after ctest (a quick local run).
# Extra arguments go to ctest.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
stamp() { echo "== $(date +%T) $*"; }
stamp "install dependencies"
"$root/scripts/install-deps.sh" --test
stamp "build"
"$root/scripts/build.sh"
stamp "ctest"
if ! (cd "$root/build" && ctest --output-on-failure "$@"); then
  # The failing cases again, last, so that a log cut to its head and tail
  # still names them.
  stamp "ctest failed; failing cases:"
  log="$root/build/Testing/Temporary/LastTest.log"
  grep -E -A6 '^[^ ]+:[0-9]+: Failure' "$log" | head -80 || true
  grep -E '^\[  FAILED  \]|^FAILED |^E   ' "$log" | head -60 || true
  exit 1
fi
if [[ "${STRATA_SKIP_SANITIZERS:-0}" == 1 ]]; then
  stamp "sanitizer stages skipped (STRATA_SKIP_SANITIZERS=1)"
  exit 0
fi
stamp "ASan + UBSan"
"$root/scripts/sanitize.sh" asan
stamp "TSan"
"$root/scripts/sanitize.sh" tsan
stamp "all tests passed"
