#!/usr/bin/env bash
# Runs the integration suite against the given strata binary with Debian's python3.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export STRATA_BIN="$(realpath "${1:?usage: run.sh path/to/strata}")"
cd "$here"
exec /usr/bin/python3 -m unittest discover -s "$here" -p 'test_*.py' -v
