#!/usr/bin/env bash
# The GPU checks of issue 16 (docs/model-loading.md, "Into GPU memory"), for a machine with a
# CUDA device. Two steps:
#
#   bench/device_check.sh --prepare [BUILD]   here: stripped copies of what the checks run
#                                             into build-device/ (~40 MB, small enough to carry)
#   bench/device_check.sh [build-device]      on the device machine (device tool: carry
#                                             ["build-device"]); about 3 minutes
#
# It prints: the GPU; the ring's unit tests against the real libcudart (the round-trip test
# copies 20 MiB to the device and back); bench/cuda_ring_bench.py (ring vs the pinned
# cudaMemcpy limit and vs pageable copies, GB/s, medians); and, where torch sees the GPU, a
# checkpoint loaded from a local strata server into GPU memory through the ring and through
# .to() (bench/loader_bench.py --device cuda). Missing pieces are named and skipped.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
py="${PYTHON:-/usr/bin/python3}"

if [[ "${1:-}" == "--prepare" ]]; then
  build="$(realpath "${2:-$root/build}")"
  out="$root/build-device"
  rm -rf "$out" && mkdir -p "$out/client/python" "$out/client/cuda"
  for f in strata strata_unit_tests client/python/strata_cuda.*.so client/python/strata_kv.*.so \
           client/cuda/libstrata_fake_cudart.so; do
    for g in "$build"/$f; do
      [[ -e "$g" ]] && strip -o "$out/${g#"$build"/}" "$g"
    done
  done
  du -sh "$out"
  exit 0
fi

build="$(realpath "${1:-$root/build-device}")"
cd "$root"
echo "== GPU"
nvidia-smi --query-gpu=name,memory.total,driver_version,pcie.link.gen.current,pcie.link.width.current \
  --format=csv 2>&1 || echo "(no nvidia-smi)"
echo "== libraries the binaries need and this machine lacks"
ldd "$build/strata" "$build/strata_unit_tests" 2>/dev/null | grep "not found" | sort -u || true
echo "== CUDA runtimes here"
ls /usr/local/cuda*/lib*/libcudart.so* 2>/dev/null; ldconfig -p 2>/dev/null | grep libcudart || true

echo "== pinned ring unit tests (real runtime included)"
STRATA_FAKE_CUDART="$build/client/cuda/libstrata_fake_cudart.so" timeout 120 "$build/strata_unit_tests" --gtest_filter='PinnedRing*:CudaRuntime*' 2>&1 | tail -25

echo "== host -> GPU copies: ring vs the machine's limits"
timeout 240 "$py" bench/cuda_ring_bench.py --build "$build" --size-mib 4096 --runs 5 2>&1

echo "== a checkpoint from strata into GPU memory"
if "$py" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  PYTHONPATH="$build/client/python${PYTHONPATH:+:$PYTHONPATH}" timeout 300 "$py" bench/loader_bench.py \
    --strata "$build/strata" --size-mib 2048 --runs 3 --runai-workers 8 --device cuda 2>&1
else
  echo "skipped: $py has no torch that sees a CUDA device"
fi
