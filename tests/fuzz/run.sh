#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (CMakeLists.txt here) into build-fuzz/ and fuzzes
# each one for a bounded time. The seeds in tests/fuzz/corpus/TARGET are only read; what
# libFuzzer finds goes to build-fuzz/corpus/TARGET (kept between runs, so a longer local
# run starts where the last one stopped) and a crashing input to build-fuzz/artifacts/.
#
#   bash tests/fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]    default: 60 s, all targets
#   TARGET is g2o, bal, ir_parser, cli_flags or cache_entry. Exits non-zero if any target finds a bug.
set -euo pipefail
cd "$(dirname "$0")/../.."

seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(g2o bal ir_parser cli_flags cache_entry)

build=build-fuzz
cmake -S tests/fuzz -B "$build" -G Ninja -DCMAKE_CXX_COMPILER="${LSJIT_FUZZ_CXX:-clang++-14}" >/dev/null
cmake --build "$build"

# One fuzzer per core at a time (libFuzzer runs on one thread): the same time per target,
# in half the wall time on CI's two cores. LSJIT_FUZZ_JOBS overrides the count.
fuzz_one() {
  local t=$1 seeds=tests/fuzz/corpus/${1%_parser}
  echo "fuzz: $t for ${seeds} + ${build}/corpus/$t, ${seconds} s"
  mkdir -p "$build/corpus/$t" "$build/artifacts/$t"
  # -timeout: one input taking 10 s is a hang. -rss_limit_mb: a parser that allocates what a
  # lying header announces is a bug. The log is long; its tail has the report.
  if "$build/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
       $( [ -f "tests/fuzz/$t.dict" ] && echo "-dict=tests/fuzz/$t.dict" ) -artifact_prefix="$build/artifacts/$t/" -print_final_stats=1 \
       "$build/corpus/$t" "$seeds" >"$build/$t.log" 2>&1; then
    echo ok >"$build/$t.status"
  else
    echo failed >"$build/$t.status"
  fi
}

# (Counted here: `jobs` inside $(...) runs in a subshell and sees no jobs.)
jobs_max=${LSJIT_FUZZ_JOBS:-$(nproc)}
running=0
for t in "${targets[@]}"; do
  rm -f "$build/$t.status"
  if [ "$running" -ge "$jobs_max" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  fuzz_one "$t" &
  running=$((running + 1))
done
wait

failed=0
for t in "${targets[@]}"; do
  if [ "$(cat "$build/$t.status" 2>/dev/null)" = ok ]; then
    echo "fuzz: $t"
    grep -E '^(Done|stat::number_of_executed_units|stat::new_units_added)' "$build/$t.log" || true
  else
    tail -n 60 "$build/$t.log"
    echo "fuzz: $t FAILED; the input is in $build/artifacts/$t/, the full log in $build/$t.log"
    failed=$((failed + 1))
  fi
done
echo "fuzz: $((${#targets[@]} - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
