#!/usr/bin/env bash
# Configures and builds strata into build/ (Ninja + ccache). Extra args go to ninja.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
if [[ ! -f build/build.ninja ]]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="${STRATA_BUILD_TYPE:-RelWithDebInfo}"
fi
ninja -C build "$@"
