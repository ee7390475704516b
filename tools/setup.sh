#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine for lsjit, builds it, then runs one job:
#   bash tools/setup.sh main   the main job on a bundled default
#   bash tools/setup.sh test   what .ci/run runs: the test suite, the same suite again built
#                              with ASan + UBSan, and a bounded fuzz run of the parsers
#                              (docs/testing.md)
# Installs only the Debian packages that are missing (apt-get, as root or through sudo).
set -euo pipefail
cd "$(dirname "$0")/.."

job=${1:-main}
packages=(cmake ninja-build g++ ccache llvm-19-dev libeigen3-dev doctest-dev libsodium-dev libsuitesparse-dev
          libmetis-dev libopenblas-dev libceres-dev libcli11-dev)
# The test job also needs clang (libFuzzer and clang's sanitizer runtimes, tests/fuzz) and
# what the Python package is built and tested with (python/, docs/python.md).
if [ "$job" = test ]; then
  packages+=(clang-14 libclang-rt-14-dev python3-dev pybind11-dev python3-numpy python3-pytest)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
fi

# The test job builds the Python package or fails (AUTO would skip it without pybind11).
if [ "$job" = test ]; then cmake --preset default -DLSJIT_PYTHON=ON; else cmake --preset default; fi

case "$job" in
  # The main job builds only the CLI it runs (not the tests, examples and benchmarks).
  main)
    cmake --build --preset default --target lsjit
    ./build/lsjit solve data/pose_graph_se3_500.g2o --verbose
    ;;
  test)
    cmake --build --preset default
    ctest --preset default
    # The same tests built with AddressSanitizer and UndefinedBehaviorSanitizer.
    cmake --preset asan
    cmake --build --preset asan
    ctest --preset asan
    # Each parser fuzzed for 30 s from the seed corpus, one per core at a time (about
    # 3 minutes with the build).
    bash tests/fuzz/run.sh 30
    ;;
  *) echo "setup: unknown job '$job' (expected main or test)" >&2; exit 2 ;;
esac
