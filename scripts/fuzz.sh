#!/usr/bin/env bash
# Builds the fuzz build and runs the libFuzzer targets (tests/fuzz/CMakeLists.txt).
#
#   scripts/fuzz.sh [TARGET|all] [SECONDS]   fuzz one or every target SECONDS each (60)
#   scripts/fuzz.sh --replay [SECONDS]       CI: replay every seed corpus once, then
#                                            fuzz each target SECONDS (20)
#   scripts/fuzz.sh --list                   the target names
#   scripts/fuzz.sh --build [NINJA TARGET..] only configure + build (default: the fuzz targets)
#
# The fuzz build is build-fuzz/ (clang, Ninja, -O1 -g): every library is compiled
# with -fsanitize=fuzzer-no-link,address,undefined and assertions on, so the
# same directory also builds the ASan/UBSan unit tests and `strata`
# (scripts/sanitize.sh asan uses it). Each target fuzzes its work corpus
# build-fuzz/corpus/<target> (seeded from tests/fuzz/<target>, which new
# inputs never flood), with tests/fuzz/<target>.dict as its dictionary if
# there is one; crashing inputs land in build-fuzz/crashes/<target>/.
# Targets run STRATA_FUZZ_JOBS at a time (default: the CPU count). Prints the
# runs per target and any crash; exits non-zero if a target crashed or hung.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build-fuzz"
cd "$root"

configure_and_build() {
  if [[ ! -f "$build/build.ninja" ]]; then
    CXX="${STRATA_FUZZ_CXX:-clang++}" cmake -S "$root" -B "$build" -G Ninja \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
      -DSTRATA_FUZZ=ON >/dev/null
  fi
  ninja -C "$build" "$@"
}

mode=fuzz
case "${1:-}" in
  --build) shift; configure_and_build "${@:-fuzz_targets}"; exit 0 ;;
  --replay) mode=replay; shift; seconds="${1:-20}"; targets=all ;;
  --list) mode=list ;;
  *) targets="${1:-all}"; seconds="${2:-60}" ;;
esac

if [[ $mode == list ]]; then
  configure_and_build fuzz_targets >/dev/null
  cat "$build/fuzz/targets.txt"
  exit 0
fi
if [[ $targets == all ]]; then
  configure_and_build fuzz_targets
  mapfile -t names < "$build/fuzz/targets.txt"
else
  configure_and_build "${targets}_fuzz"
  names=("$targets")
fi

# UBSan findings abort (the build has -fno-sanitize-recover=undefined).
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:allocator_may_return_null=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

# Larger inputs where a parser's limits are far above libFuzzer's 4 KiB default.
max_len() {
  case "$1" in
    post_policy|s3_xml|post_form) echo 65536 ;;
    *) echo 8192 ;;
  esac
}

logs="$build/fuzz-logs"
mkdir -p "$logs"
run_target() {
  local t="$1" bin="$build/fuzz/$1_fuzz" seeds="$root/tests/fuzz/$1"
  local corpus="$build/corpus/$t" crashes="$build/crashes/$t/" log="$logs/$t.log"
  mkdir -p "$corpus" "$crashes"
  : >"$log"
  local rc=0
  if [[ -d "$seeds" ]]; then
    cp -n "$seeds"/* "$corpus"/ 2>/dev/null || true
    if [[ $mode == replay ]]; then
      # Every seed once, as is: a seed that crashes is a regression.
      "$bin" -runs=0 -artifact_prefix="$crashes" "$seeds" >>"$log" 2>&1 || rc=$?
    fi
  fi
  local dict=()
  [[ -f "$root/tests/fuzz/$t.dict" ]] && dict=(-dict="$root/tests/fuzz/$t.dict")
  if ((rc == 0)); then
    "$bin" -max_total_time="$seconds" -timeout=10 -max_len="$(max_len "$t")" "${dict[@]}" \
      -print_final_stats=1 -artifact_prefix="$crashes" "$corpus" >>"$log" 2>&1 || rc=$?
  fi
  local runs cov
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
  cov="$(grep -o 'cov: [0-9]* ft: [0-9]* corp: [0-9]*' "$log" | tail -1 || true)"
  printf '%-14s rc=%-3s runs=%-9s %s corpus=%s\n' "$t" "$rc" "${runs:-?}" "${cov:-}" \
    "$(find "$corpus" -type f | wc -l)" >"$logs/$t.result"
  return "$rc"
}

jobs_max="${STRATA_FUZZ_JOBS:-$(nproc)}"
echo "fuzz: ${#names[@]} target(s), ${seconds}s each, $jobs_max at a time ($mode)"
for t in "${names[@]}"; do
  while (($(jobs -rp | wc -l) >= jobs_max)); do wait -n || true; done
  run_target "$t" &
done
wait || true

failed=0
for t in "${names[@]}"; do
  cat "$logs/$t.result"
  if ! grep -q ' rc=0 ' "$logs/$t.result"; then
    failed=1
    echo "---- $t: crash/timeout/leak (log: $logs/$t.log; inputs: $build/crashes/$t/)"
    grep -E -A40 '^==[0-9]+==ERROR|runtime error|FUZZ_CHECK failed|^ALARM|Test unit written' \
      "$logs/$t.log" | head -80 || tail -40 "$logs/$t.log"
  fi
done
exit "$failed"
