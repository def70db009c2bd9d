#!/usr/bin/env bash
# The test command: installs Debian packages (build + real S3 clients), builds
# everything, then runs the unit tests and the integration suite (which starts
# real strata servers on free loopback ports and drives them with aws cli,
# boto3, rclone, s3cmd and curl).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install-deps.sh" --test
"$root/scripts/build.sh"
cd "$root/build"
ctest --output-on-failure "$@"
