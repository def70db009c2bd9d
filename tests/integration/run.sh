#!/usr/bin/env bash
# Runs the integration suite against the given strata binary with Debian's
# python3: every test module in its own process, $STRATA_IT_JOBS at a time
# (default: the CPU count, at most 2; parallel.py). Extra arguments name
# modules (default: all).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export STRATA_BIN="$(realpath "${1:?usage: run.sh path/to/strata [MODULE...]}")"
shift
cd "$here"
exec /usr/bin/python3 "$here/parallel.py" "$@"
