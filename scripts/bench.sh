#!/usr/bin/env bash
# The benchmark command: installs the build packages, builds Release into
# build-bench/ (separate from build/, so it never disturbs a debug build), then
# runs s3bench in full mode against a strata server it starts itself on a free
# loopback port with a fresh temporary data directory. Takes ~10 minutes
# (1 GiB objects, 1M-key listing bucket). Extra arguments go to s3bench, e.g.
#   scripts/bench.sh --runs 1            # one run per figure
#   scripts/bench.sh --only limits,get4k # a subset
#   scripts/bench.sh --smoke             # the seconds-long CI mode
# Results: docs/performance.md.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install-deps.sh"
cd "$root"
if [[ ! -f build-bench/build.ninja ]]; then
  cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release
fi
ninja -C build-bench strata s3bench
exec build-bench/bench/s3bench --strata build-bench/strata "$@"
