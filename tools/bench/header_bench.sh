#!/usr/bin/env bash
# Compile time of a user's translation unit: lsjit's headers beside ceres/ceres.h.
#
#   bash tools/bench/header_bench.sh [REPEATS]      (default 5; run from the source root)
#
# Compiles, as a user's build would (g++ -std=c++20 -O2 -c), interleaved, REPEATS times:
#   - an empty file that includes only the header (what parsing the header costs);
#   - tools/bench/header_tu/lsjit_cost_tu.cpp, one ported reprojection cost and the loop
#     that adds it, with each lsjit header, and ceres_cost_tu.cpp, its Ceres twin.
# Prints the median wall time of each and its ratio to ceres/ceres.h, and the lines after
# preprocessing. Needs g++, Eigen and libceres-dev; lsjit's headers from the source tree.
set -euo pipefail
repeats=${1:-5}
root=$(pwd)
[[ -f "$root/lsjit.h" ]] || { echo "run from the lsjit source root" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/include"
ln -s "$root" "$work/include/lsjit"
flags=(-std=c++20 -O2 -c -I"$work/include" -I/usr/include/eigen3 -o /dev/null)

variants=("header lsjit/lsjit.h" "header lsjit/costs.h" "header ceres/ceres.h"
          "tu lsjit/lsjit.h" "tu lsjit/costs.h" "tu ceres/ceres.h")
source_of() {  # kind header -> the file to compile, written into $work
  local kind=$1 header=$2 name
  name=$(echo "$kind-$header" | tr '/.' '__')
  if [[ $kind == header ]]; then
    echo "#include <$header>" > "$work/$name.cpp"
  elif [[ $header == ceres/ceres.h ]]; then
    cp "$root/tools/bench/header_tu/ceres_cost_tu.cpp" "$work/$name.cpp"
  else
    { echo "#define LSJIT_HEADER <$header>"; cat "$root/tools/bench/header_tu/lsjit_cost_tu.cpp"; } > "$work/$name.cpp"
  fi
  echo "$work/$name.cpp"
}

declare -A times lines
for v in "${variants[@]}"; do
  read -r kind header <<< "$v"
  src=$(source_of "$kind" "$header")
  lines[$v]=$(g++ -std=c++20 -E -I"$work/include" -I/usr/include/eigen3 "$src" | wc -l)
done
for ((r = 0; r < repeats; ++r)); do
  for v in "${variants[@]}"; do
    read -r kind header <<< "$v"
    src=$(source_of "$kind" "$header")
    start=$(date +%s.%N)
    g++ "${flags[@]}" "$src"
    times[$v]+="$(echo "$(date +%s.%N) - $start" | bc) "
  done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
echo "g++ $(g++ -dumpfullversion), -std=c++20 -O2, median of $repeats"
echo
echo "| what is compiled | header | lines after preprocessing | seconds | / ceres.h |"
echo "| --- | --- | ---: | ---: | ---: |"
for kind in header tu; do
  base=$(echo "${times["$kind ceres/ceres.h"]}" | median)
  for header in lsjit/lsjit.h lsjit/costs.h ceres/ceres.h; do
    m=$(echo "${times["$kind $header"]}" | median)
    what=$([[ $kind == header ]] && echo "the header alone" || echo "one reprojection cost + add loop")
    printf "| %s | \`%s\` | %s | %.2f | %.2f |\n" "$what" "$header" "${lines["$kind $header"]}" "$m" "$(echo "$m / $base" | bc -l)"
  done
done
