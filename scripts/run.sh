#!/usr/bin/env bash
# The run command: installs Debian packages, builds, and starts `strata server`
# on 127.0.0.1:9000 with ./data as its data directory. Extra arguments are
# passed to `strata server` (e.g. --listen 0.0.0.0:9000 --data /srv/strata).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" strata
cd "$root"
exec ./build/strata server "$@"
