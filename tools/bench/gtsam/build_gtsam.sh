#!/usr/bin/env bash
# Builds GTSAM once from source as a baseline for lsjit's benchmarks.
#
# GTSAM is not packaged in Debian 12, so the comparison benchmarks build it
# themselves: Release, the `gtsam` library only, without Boost, TBB, Python,
# examples or tests, pinned to one public commit so that every figure in
# docs/benchmarks.md names the GTSAM it was measured against. The result lives
# in a cache folder outside the repository; CI never runs this script, and the
# benchmarks skip GTSAM with a message when the folder is absent.
#
# Usage: tools/bench/gtsam/build_gtsam.sh [--source DIR_OR_GIT_URL]
#   --source   a git repository (URL, bare mirror or checkout) holding the
#              pinned commit; default https://github.com/borglab/gtsam.git
# Environment:
#   LSJIT_GTSAM_PREFIX  install folder (default ~/.cache/lsjit-bench/gtsam-<commit>)
#   LSJIT_GTSAM_JOBS    parallel compile jobs (default: the number of cores)
# Prints the install prefix on its last line.
set -euo pipefail

commit=0ffe6c930302ebd297484e65e6e8d467c91d26b0   # borglab/gtsam 4.3a0
source_repo=https://github.com/borglab/gtsam.git
while [[ $# -gt 0 ]]; do
  case "$1" in
    --source) source_repo="$2"; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "build_gtsam.sh: unknown argument '$1' (expected --source DIR_OR_URL)" >&2; exit 2 ;;
  esac
done

prefix="${LSJIT_GTSAM_PREFIX:-$HOME/.cache/lsjit-bench/gtsam-${commit:0:7}}"
jobs="${LSJIT_GTSAM_JOBS:-$(nproc)}"
if [[ -f "$prefix/.complete" ]]; then
  echo "GTSAM ${commit:0:7} already built"
  echo "$prefix"
  exit 0
fi

work="$prefix.work"
rm -rf "$work"
mkdir -p "$work"
# The library needs neither GTSAM's example data nor its manual (tens of MB,
# and absent from some mirrors), so the checkout leaves them out.
git clone -q --no-checkout "$source_repo" "$work/src"
git -C "$work/src" sparse-checkout set --no-cone '/*' '!/examples/Data/' '!/doc/'
git -C "$work/src" checkout -q "$commit"

cmake -S "$work/src" -B "$work/build" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="$prefix" \
  -DGTSAM_BUILD_WITH_MARCH_NATIVE=ON \
  -DGTSAM_USE_SYSTEM_EIGEN=ON \
  -DGTSAM_ENABLE_BOOST_SERIALIZATION=OFF \
  -DGTSAM_USE_BOOST_FEATURES=OFF \
  -DGTSAM_WITH_TBB=OFF \
  -DGTSAM_BUILD_UNSTABLE=OFF \
  -DGTSAM_BUILD_PYTHON=OFF \
  -DGTSAM_BUILD_TESTS=OFF \
  -DGTSAM_BUILD_EXAMPLES_ALWAYS=OFF \
  -DGTSAM_BUILD_TIMING_ALWAYS=OFF \
  -DGTSAM_INSTALL_CPPUNITLITE=OFF
cmake --build "$work/build" --target gtsam -j "$jobs"
cmake --install "$work/build" --component Unspecified >/dev/null 2>&1 \
  || cmake --install "$work/build"
touch "$prefix/.complete"
rm -rf "$work/build"
echo "$prefix"
