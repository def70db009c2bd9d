#!/usr/bin/env bash
# Installs the Debian 12 packages strata needs to build, run and test.
# Idempotent: skips apt entirely when everything is already present.
set -euo pipefail
BUILD_PKGS=(build-essential cmake ninja-build ccache pkg-config
  libboost-dev libssl-dev librocksdb-dev libpugixml-dev libgtest-dev libisal-dev nlohmann-json3-dev
  libcli11-dev libtomlplusplus-dev libzstd-dev openssl
  pybind11-dev python3-dev)  # the strata_kv Python module (client/python) is in the default build
# python3-numpy: KV client tests; python3-torch: the KV demo (examples/) and the torch buffer test;
# chromium: the real-browser CORS test (tests/integration/test_browser_cors.py); chromium-driver
# and python3-selenium: the console end-to-end test (tests/integration/test_console.py).
# clang + its sanitizer/libFuzzer runtimes: scripts/sanitize.sh and scripts/fuzz.sh.
# npm (if the machine has none) and, through it, axe-core: the console's accessibility audit.
# prometheus: its promtool checks /metrics and a real server scrapes it (test_metrics.py).
# python3-pykmip: a real KMIP key server for the external-key tests (test_kmip.py).
TEST_PKGS=(prometheus awscli python3-boto3 rclone s3cmd curl python3-numpy python3-torch chromium
  chromium-driver python3-selenium python3-pykmip
  clang libclang-rt-14-dev)
want=("${BUILD_PKGS[@]}")
if [[ "${1:-}" == "--test" ]]; then want+=("${TEST_PKGS[@]}"); fi
missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if [[ "${1:-}" == "--test" ]]; then
  # axe-core (pinned in tests/console/package-lock.json): the accessibility audit the console's
  # browser test runs on every page. With the machine's Node.js npm, or Debian's.
  if ! command -v npm >/dev/null; then
    SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends npm
  fi
  root="$(cd "$(dirname "$0")/.." && pwd)"
  if [[ ! -f "$root/tests/console/node_modules/axe-core/axe.min.js" ]]; then
    npm ci --prefix "$root/tests/console" --no-audit --no-fund --loglevel=error
  fi
fi
