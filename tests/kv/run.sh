#!/usr/bin/env bash
# Runs the KV-tier tests (Python client, C ABI via ctypes, vLLM and LMCache
# adapters, driven by a vLLM fake and LMCache interface stubs) against real
# strata servers, with Debian's /usr/bin/python3 (numpy, boto3).
#
# CTest sets STRATA_BIN, STRATA_KV_PYDIR (directory of the strata_kv module)
# STRATA_KV_CLIB (libstrata_kv.so) and STRATA_FAKE_CUDART (the stand-in CUDA runtime). By hand: tests/kv/run.sh BUILD_DIR
# (extra arguments go to unittest, e.g. test_kv_client.KvClientTest.test_restart).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
if [[ $# -ge 1 && -d "$1" ]]; then
  build="$(realpath "$1")"; shift
  export STRATA_BIN="$build/strata" STRATA_KV_PYDIR="$build/client/python"
  export STRATA_KV_CLIB="$build/client/libstrata_kv.so"
  export STRATA_FAKE_CUDART="$build/client/cuda/libstrata_fake_cudart.so"
fi
: "${STRATA_BIN:?set STRATA_BIN or pass a build directory}"
: "${STRATA_KV_PYDIR:?set STRATA_KV_PYDIR or pass a build directory}"
export STRATA_BIN="$(realpath "$STRATA_BIN")"
export PYTHONPATH="$STRATA_KV_PYDIR:$root/client/python:$root/tests/integration:$here${PYTHONPATH:+:$PYTHONPATH}"
cd "$here"
if [[ $# -gt 0 ]]; then
  exec /usr/bin/python3 -m unittest -v "$@"
fi
exec /usr/bin/python3 -m unittest discover -s "$here" -p 'test_*.py' -v
