#!/usr/bin/env bash
# Where lsjit stands today against its baselines: the table at the top of docs/benchmarks.md.
#
#   bash tools/bench/summary.sh [--quick] [--build DIR] [--data DIR] [--log-dir DIR]
#                               [--cholmod-build DIR] [--skip-scaling] [--skip-header]
#                               [BUILD [DATA]]
#
# BUILD is a build with the benchmarks (default: build/ in the source root), DATA the shared
# data (default: ../shared/data beside the source root); paths given are taken relative to
# the directory it is started from. It runs the benchmark programs one after the other, each
# comparing lsjit with its baseline side by side in one run (medians over repeats; the
# machine is shared and moves by up to 40% between runs, so only ratios within a run count):
#   lsjit_bench_pose_graph   the seven g2o pose graphs, lsjit warm and cold against Ceres
#   lsjit_bench_bal          Ladybug-49 to Ceres' 20-iteration cost, against the fastest Ceres
#                            Schur solver; then synthetic problems up to 10^6 observations,
#                            time per LM iteration (--skip-scaling leaves these out)
#   lsjit_bench_process      `lsjit solve FILE` as a whole process against Ceres' process
#   lsjit_bench_kernels      residual + Jacobian kernels against Ceres AutoDiff and
#                            hand-written code
#   lsjit_bench_linear       sphere2500's sparse Cholesky factorization (against CHOLMOD
#                            only with --cholmod-build: a build configured with
#                            -DLSJIT_WITH_CHOLMOD=ON), and its GFlop/s against the core's peak
#   header_bench.sh          compiling a cost translation unit against ceres/ceres.h
#                            (--skip-header leaves it out)
# and prints the command, date, commit and CPU, then one Markdown table (problem, what is
# timed, lsjit, baseline, baseline time, baseline / lsjit: above 1 means lsjit is faster)
# and notes. What the programs print is kept in --log-dir (else a temporary directory that
# is removed at exit). Parts whose program or data is missing are skipped with a message.
# Defaults take about 5 minutes on the project's 2-core machine in a calm hour (more when it
# is busy); --quick (one repeat, small scaling problems, no header benchmark) about 20 s.
# Exit status 1 if a program failed or Ceres missed its reference final cost (its table is
# still used if printed).
set -euo pipefail

usage() { sed -n '2,/^set -euo pipefail/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

start_dir=$(pwd)
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
default_build=$root/build
default_data=$(realpath -m "$root/../shared/data")
build=$default_build
data=$default_data
log_dir=
cholmod_build=
quick=0
skip_scaling=0
skip_header=0
positional=()
while (($#)); do
  case $1 in
    --quick) quick=1 ;;
    --build) build=${2:?--build needs a directory}; shift ;;
    --data) data=${2:?--data needs a directory}; shift ;;
    --log-dir) log_dir=${2:?--log-dir needs a directory}; shift ;;
    --cholmod-build) cholmod_build=${2:?--cholmod-build needs a directory}; shift ;;
    --skip-scaling) skip_scaling=1 ;;
    --skip-header) skip_header=1 ;;
    -h | --help) usage; exit 0 ;;
    -*) echo "summary.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
    *) positional+=("$1") ;;
  esac
  shift
done
((${#positional[@]} <= 2)) || { usage >&2; exit 2; }
((${#positional[@]} < 1)) || build=${positional[0]}
((${#positional[@]} < 2)) || data=${positional[1]}

absolute() { (cd "$start_dir" && realpath -m -- "$1"); }
build=$(absolute "$build")
data=$(absolute "$data")
[[ -z $cholmod_build ]] || cholmod_build=$(absolute "$cholmod_build")
[[ -d $build ]] || { echo "summary.sh: no build directory $build (pass --build DIR)" >&2; exit 2; }
if [[ -n $log_dir ]]; then
  log_dir=$(absolute "$log_dir")
  mkdir -p "$log_dir"
else
  log_dir=$(mktemp -d /tmp/lsjit-summary-XXXXXX)
  trap 'rm -rf "$log_dir"' EXIT
fi

# Repeats: the defaults, or --quick's.
if ((quick)); then
  pose_repeats=1 bal_repeats=1 scale_repeats=1 scale_max=30000 process_repeats=3
  kernel_repeats=5 factor_repeats=3 header_repeats=0
else
  pose_repeats=7 bal_repeats=5 scale_repeats=3 scale_max=1000000 process_repeats=7
  kernel_repeats=21 factor_repeats=9 header_repeats=3
fi
((!skip_header)) || header_repeats=0

have_data=1
if [[ ! -d $data/pose_graph || ! -d $data/bal ]]; then
  have_data=0
  echo "summary.sh: $data has no pose_graph/ and bal/: the parts on the shared data are skipped" >&2
fi

rows=()    # the table's rows
notes=()   # lines under it
((have_data)) || notes+=("- Pose graphs, Ladybug-49, whole processes and kernels: skipped, $data has no pose_graph/ and bal/ (pass --data DIR).")
failed=0
started=$SECONDS

say() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

# run NAME PROGRAM ARGS...: runs it with its output in $log_dir/NAME.txt; 0 if it printed
# something to parse (its exit status is noted when not 0), 1 if it is absent.
run() {
  local name=$1 program=$2
  shift 2
  if [[ ! -x $program ]]; then
    notes+=("- $name: skipped, $program is not built.")
    say "skipping $name: $program is not built"
    return 1
  fi
  say "$name: ${program#"$root"/} $*  (output: $log_dir/$name.txt)"
  local status=0 t0=$SECONDS
  "$program" "$@" > "$log_dir/$name.txt" 2>&1 || status=$?
  say "$name: $((SECONDS - t0)) s, exit status $status"
  if ((status != 0)); then
    failed=1
    notes+=("- $name: \`${program##*/} $*\` exited with status $status (a failure, or Ceres' final cost off its reference value; its output is in the log directory).")
  fi
  return 0
}

trim() {
  local s=$1
  s=${s#"${s%%[![:space:]]*}"}
  s=${s%"${s##*[![:space:]]}"}
  printf '%s' "$s"
}

# The data rows of the Markdown table under the first heading of file $1 that starts with $2
# (the header row and the separator left out).
table_rows() {
  awk -v h="$2" '
    !on && index($0, h) == 1 { on = 1; next }
    on && /^###/ { exit }
    on && /^\|/ { if (++seen > 2) print; next }
    on && seen && !/^\|/ { exit }
  ' "$1"
}

# Cell $2 (1-based) of Markdown row $1, trimmed.
cell() {
  local -a f
  IFS='|' read -r -a f <<< "$1"
  trim "${f[$2]:-}"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else printf "n/a" }'; }
ms_of_s() { awk -v s="$1" 'BEGIN { printf "%.1f", 1e3 * s }'; }

# ---- machine ----
cpu_field() { awk -F': ' -v k="$1" '$1 ~ "^"k"[ \t]*$" { print $2; exit }' /proc/cpuinfo; }
cpu_model=$(cpu_field "model name")
cpu_family=$(cpu_field "cpu family")
cpu_model_number=$(cpu_field "model")
cpu_mhz=$(cpu_field "cpu MHz")
cpu_count=$(grep -c '^processor' /proc/cpuinfo || true)
cpu_flags=$(cpu_field "flags")
has_flag() { [[ " $cpu_flags " == *" $1 "* ]]; }
# Double-precision flop per cycle of one core: 2 FMA pipes x lanes x 2. Family 25 (Zen 3/4)
# with AVX-512 issues 512-bit operations as two halves (lsjit then runs its AVX2 kernels).
if has_flag avx512f && [[ $cpu_family != 25 ]]; then
  flop_per_cycle=32 isa="AVX-512"
elif has_flag fma; then
  flop_per_cycle=16 isa=$(has_flag avx512f && echo "AVX-512 split in halves" || echo "AVX2 + FMA")
else
  flop_per_cycle=8 isa="SSE2"
fi
peak_gflops=$(awk -v f="$flop_per_cycle" -v m="$cpu_mhz" 'BEGIN { printf "%.0f", f * m / 1e3 }')
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo "unknown")
# --no-optional-locks: status does not refresh (write) the index.
if [[ $commit != unknown ]] &&
   [[ -n $(git --no-optional-locks -C "$root" status --porcelain --untracked-files=no 2>/dev/null | head -1) ]]; then
  commit="$commit + uncommitted changes"
fi
run_date=$(date -u '+%Y-%m-%d %H:%M UTC')
command_line="bash tools/bench/summary.sh"
args_text=
((quick)) && args_text+=" --quick"
[[ $build == "$default_build" ]] || args_text+=" --build ${build#"$root"/}"
[[ $data == "$default_data" ]] || args_text+=" --data $data"
[[ -z $cholmod_build ]] || args_text+=" --cholmod-build ${cholmod_build#"$root"/}"
((!skip_scaling)) || args_text+=" --skip-scaling"
((!skip_header)) || args_text+=" --skip-header"
command_line+=$args_text

export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1} OMP_THREAD_LIMIT=${OMP_THREAD_LIMIT:-1}

# ---- 1. pose graphs: lsjit_bench_pose_graph ----
pose_log=$log_dir/pose_graph.txt
if ((have_data)) && run pose_graph "$build/lsjit_bench_pose_graph" --repeats "$pose_repeats" --data "$data"; then
  while IFS= read -r row; do
    graph=$(cell "$row" 1)
    read -r poses _ edges <<< "$(cell "$row" 2)"
    lsjit_iters=$(cell "$row" 3); lsjit_iters=${lsjit_iters%% *}
    ceres_iters=$(cell "$row" 4); ceres_iters=${ceres_iters%% *}
    rows+=("| $graph ($poses poses, $edges edges) | solve to convergence, $lsjit_iters against $ceres_iters iterations; warm (cold) | $(cell "$row" 10) ms ($(cell "$row" 9)) | Ceres 2.1, LM, SPARSE_NORMAL_CHOLESKY | $(cell "$row" 11) ms | $(cell "$row" 13) ($(cell "$row" 12)) |")
  done < <(table_rows "$pose_log" "### Solves")
  # GTSAM, where lsjit_bench_gtsam was built (tools/bench/gtsam/build_gtsam.sh): columns
  # graph, lsjit iters, GTSAM iters / solves, lsjit cost, GTSAM cost, cost ratio, lsjit solve,
  # GTSAM solve, solve ratio, lsjit process, GTSAM process, process ratio, GTSAM peak.
  while IFS= read -r row; do
    rows+=("| $(cell "$row" 1) | solve to convergence, $(cell "$row" 2) against $(cell "$row" 3 | awk "{ print \$1 }") iterations, GTSAM's final cost $(cell "$row" 6)x lsjit's; solve (whole process) | $(cell "$row" 7) ms ($(cell "$row" 10)) | GTSAM 4.3a0, LevenbergMarquardtOptimizer at its defaults | $(cell "$row" 8) ms ($(cell "$row" 11)) | $(cell "$row" 9) ($(cell "$row" 12)) |")
  done < <(table_rows "$pose_log" "### GTSAM")
  grep -q "^skipping GTSAM" "$pose_log" &&
    notes+=("- GTSAM: skipped, lsjit_bench_gtsam was not built (tools/bench/gtsam/build_gtsam.sh, then configure again).")
  equal=$(table_rows "$pose_log" "### Equal settings" |
           awk -F'|' '{ gsub(/ /, ""); printf "%s%s %s (%s against %s iterations)", n++ ? ", " : "", $2, $8, $3, $4 }')
  [[ -z $equal ]] || notes+=("- Pose graphs, Ceres at lsjit's first trust-region radius (1e8) instead of its default (1e4), Ceres / lsjit warm: $equal (\`lsjit_bench_pose_graph\`, \"Equal settings\"); the difference from the ratios in the table is the iterations Ceres' default radius costs it.")
  cold=$(table_rows "$pose_log" "### lsjit cold vs warm" |
          awk -F'|' '{ gsub(/ /, ""); printf "%s%s %s", n++ ? ", " : "", $2, $11 }')
  [[ -z $cold ]] || notes+=("- Pose graphs, cold (an empty kernel cache), ms from analyze() to the first LM iteration: $cold (\`lsjit_bench_pose_graph\`, \"lsjit cold vs warm\").")
  split=$(table_rows "$pose_log" "### lsjit time split" | awk -F'|' '$2 ~ /^ *sphere2500 *$/')
  solves=$(table_rows "$pose_log" "### Solves" | awk -F'|' '$2 ~ /^ *sphere2500 *$/')
  if [[ -n $split ]]; then
    total=$(cell "$split" 11) linear=$(cell "$split" 9) factorizations=$(cell "$solves" 3)
    notes+=("- sphere2500, warm: $total ms in all; linear solver $linear ms ($(awk -v a="$linear" -v b="$total" 'BEGIN { printf "%.0f", 100 * a / b }')%, ${factorizations##* } factorizations), evaluations (jacobian + H) $(cell "$split" 7) ms, analyze() $(cell "$split" 5) ms, solve set-up $(cell "$split" 8) ms, the rest $(cell "$split" 10) ms (\`lsjit_bench_pose_graph\`, lsjit time split).")
  fi
  [[ -n $split || ${#rows[@]} -gt 0 ]] || notes+=("- pose_graph: no table in its output.")
fi

# ---- 2. Ladybug-49: lsjit_bench_bal ----
bal_log=$log_dir/bal_ladybug.txt
if ((have_data)) && run bal_ladybug "$build/lsjit_bench_bal" --skip-scaling --repeats "$bal_repeats" --data "$data"; then
  header=$(awk 'index($0, "| lsjit solver |") == 1 { print; exit }' "$bal_log")
  best=$(cell "$header" 7); best=${best%% *}
  best_row=$(table_rows "$bal_log" "### Ceres, 20 iterations" | awk -F'|' -v b="$best" '$2 ~ "^ *"b" *$"')
  if [[ -n $best_row ]]; then
    best_ms=$(cell "$best_row" 8)
    best_iters=$(cell "$best_row" 6)
    while IFS= read -r row; do
      solver=$(cell "$row" 1)
      iters=$(cell "$row" 2); iters=${iters%% *}
      rows+=("| Ladybug-49 (49 cameras, 7776 points, 31843 observations) | lsjit $solver to Ceres' 20-iteration cost, $iters against $best_iters iterations; warm (cold) | $(cell "$row" 6) ms ($(cell "$row" 5)) | Ceres 2.1, LM, ${best^^} (the fastest of its three Schur solvers) | $best_ms ms | $(cell "$row" 8) ($(cell "$row" 7)) |")
    done < <(table_rows "$bal_log" "### lsjit, stopped at the target")
  else
    notes+=("- bal_ladybug: no Ceres configuration reached the target, or no table in its output.")
  fi
  # GTSAM's BAL path (bal_bench_gtsam.cpp), both at their defaults to convergence: problem,
  # lsjit iters, GTSAM iters / solves, lsjit cost, GTSAM cost, GTSAM error(), lsjit solve,
  # GTSAM solve, ratio, lsjit process, GTSAM process, ratio, lsjit MB, GTSAM MB.
  while IFS= read -r row; do
    gtsam_iters=$(cell "$row" 3)
    rows+=("| $(cell "$row" 1) (BAL) | both at their defaults to convergence, $(cell "$row" 2) against ${gtsam_iters%% *} iterations; final cost $(cell "$row" 4) against $(cell "$row" 5) (lsjit's convention); solve (whole process) | $(cell "$row" 7) ms ($(cell "$row" 10)) | GTSAM 4.3a0, GeneralSFMFactor + LevenbergMarquardtOptimizer at its defaults | $(cell "$row" 8) ms ($(cell "$row" 11)) | $(cell "$row" 9) ($(cell "$row" 12)) |")
  done < <(table_rows "$bal_log" "### GTSAM 4.3a0 (0ffe6c9) BAL path")
fi

# ---- 3. bundle adjustment scaling: lsjit_bench_bal --skip-ladybug ----
scale_log=$log_dir/bal_scaling.txt
if ((!skip_scaling)) && run bal_scaling "$build/lsjit_bench_bal" --skip-ladybug --scale-repeats "$scale_repeats" \
     --max-observations "$scale_max" --data "$data"; then
  scale_rows=$(table_rows "$scale_log" "### Scaling")
  largest=$(awk -F'|' '$4 ~ /Ceres/ { n = $2 + 0 } END { print n + 0 }' <<< "$scale_rows")
  pick() { awk -F'|' -v n="$largest" -v s="$1" '$2 + 0 == n && index($4, s)' <<< "$scale_rows"; }
  for pair in "lsjit iterative_schur:Ceres ITERATIVE_SCHUR" "lsjit dense_schur:Ceres DENSE_SCHUR"; do
    l=$(pick "${pair%%:*}") c=$(pick "${pair#*:}")
    [[ -n $l && -n $c ]] || continue
    rows+=("| synthetic BAL, $largest observations ($(cell "$l" 2) cameras / points) | ms per LM iteration, $(cell "$l" 3); lsjit's time per observation is $(cell "$l" 6) the 10^4 problem's | $(cell "$l" 4) ms | ${pair#*:} (its time per observation: $(cell "$c" 6)) | $(cell "$c" 4) ms | $(ratio "$(cell "$c" 4)" "$(cell "$l" 4)") |")
  done
fi

# ---- 4. whole processes: lsjit_bench_process ----
process_log=$log_dir/process.txt
if ((have_data)) && run process "$build/lsjit_bench_process" --repeats "$process_repeats" --data "$data/pose_graph"; then
  while IFS= read -r row; do
    [[ $(cell "$row" 2) == lsjit ]] || continue
    cold=$(cell "$row" 3) warm=$(cell "$row" 4) ceres=$(cell "$row" 5)
    # warm / Ceres as the program divides its unrounded medians; the seconds have 3 decimals
    warm_ratio=$(cell "$row" 6)
    rows+=("| $(cell "$row" 1) | \`lsjit solve FILE\`, fork to exit, warm (cold); peak RSS $(cell "$row" 8) MB ($(cell "$row" 7)) against $(cell "$row" 9) | $(ms_of_s "$warm") ms ($(ms_of_s "$cold")) | Ceres 2.1 as its own process (\`lsjit_bench_pose_graph --child ceres\`) | $(ms_of_s "$ceres") ms | $(ratio 1 "${warm_ratio%x}") ($(ratio "$ceres" "$cold")) |")
  done < <(awk 'index($0, "| problem | program |") == 1 { on = 1; next } on && /^\| [^-]/' "$process_log")
  while IFS= read -r row; do
    rows+=("| $(cell "$row" 1) | \`lsjit solve FILE\`, fork to exit, warm; peak RSS $(cell "$row" 5) MB against $(cell "$row" 6) | $(ms_of_s "$(cell "$row" 2)") ms | GTSAM 4.3a0 as its own process (\`lsjit_bench_gtsam lm FILE\`: readG2o, LM at its defaults) | $(ms_of_s "$(cell "$row" 3)") ms | $(cell "$row" 4) |")
  done < <(table_rows "$process_log" "### GTSAM")
  help=$(awk '/`--help`:/ { sub(/^.*`--help`: /, ""); print; exit }' "$process_log")
  [[ -z $help ]] || notes+=("- \`lsjit --help\`, fork to exit: $help (\`lsjit_bench_process\`).")
fi

# ---- 5. kernels: lsjit_bench_kernels ----
kernel_log=$log_dir/kernels.txt
if ((have_data)) && run kernels "$build/lsjit_bench_kernels" --repeats "$kernel_repeats" --data "$data"; then
  for section in "### BAL reprojection" "### SE3 between"; do
    heading=$(awk -v h="$section" 'index($0, h) == 1 { sub(/^### /, ""); print; exit }' "$kernel_log")
    k_rows=$(table_rows "$kernel_log" "$section")
    own=$(awk -F'|' 'index($2, "this host") > 0' <<< "$k_rows")
    ceres=$(awk -F'|' 'index($2, "CostFunction::Evaluate per block") > 0' <<< "$k_rows")
    analytic=$(awk -F'|' 'index($2, "hand-written analytic") > 0' <<< "$k_rows")
    [[ -n $own ]] || continue
    label=$(cell "$own" 1); label=${label#lsjit kernel, }; label=${label% (this host*}
    [[ -z $ceres ]] ||  # the program's own ratio, of unrounded medians
      rows+=("| $heading | residual + Jacobian, ns per instance, one thread | $(cell "$own" 2) ns ($label) | $(cell "$ceres" 1) | $(cell "$ceres" 2) ns | $(cell "$own" 4) |")
    [[ -z $analytic ]] ||
      rows+=("| $heading | residual + Jacobian, ns per instance, one thread | $(cell "$own" 2) ns ($label) | $(cell "$analytic" 1) | $(cell "$analytic" 2) ns | $(ratio "$(cell "$analytic" 2)" "$(cell "$own" 2)") |")
  done
fi

# ---- 6. sphere2500's factorization: lsjit_bench_linear --factor ----
linear_program=$build/lsjit_bench_linear
[[ -z $cholmod_build ]] || linear_program=$cholmod_build/lsjit_bench_linear
factor_log=$log_dir/factor.txt
if LSJIT_SHARED_DATA_DIR=$data run factor "$linear_program" --factor --only sphere2500 --repeats "$factor_repeats"; then
  f_rows=$(awk '/^\| sphere2500/' "$factor_log")
  amd=$(awk -F'|' 'index($4, "supernodal (amd") > 0' <<< "$f_rows")
  auto=$(awk -F'|' 'index($4, "supernodal (automatic:") > 0' <<< "$f_rows")
  mixed=$(awk -F'|' 'index($4, "mixed precision") > 0' <<< "$f_rows")
  cholmod=$(awk -F'|' 'index($4, "cholmod") > 0' <<< "$f_rows")
  matrix=$(cell "$amd" 1)
  if [[ -n $cholmod && -n $amd ]]; then
    rows+=("| $matrix, H of dimension $(cell "$amd" 2) | one sparse Cholesky factorization + substitutions, the same block-AMD ordering ($(cell "$amd" 5) MFlop) | $(cell "$amd" 6) ms (supernodal) | CHOLMOD 3 supernodal + OpenBLAS, one thread | $(cell "$cholmod" 6) ms | $(ratio "$(cell "$cholmod" 6)" "$(cell "$amd" 6)") |")
  elif [[ -n $amd ]]; then
    rows+=("| $matrix, H of dimension $(cell "$amd" 2) | one sparse Cholesky factorization + substitutions, block AMD ($(cell "$amd" 5) MFlop) | $(cell "$amd" 6) ms (supernodal) | CHOLMOD: not in this build (configure a build with -DLSJIT_WITH_CHOLMOD=ON, pass --cholmod-build DIR) | n/a | n/a |")
  fi
  percent() { awk -v g="$1" -v p="$2" 'BEGIN { printf "%.0f", 100 * g / p }'; }
  if [[ -n $auto ]]; then
    gf=$(cell "$auto" 7)
    notes+=("- $matrix, $(cell "$auto" 3): $(cell "$auto" 5) MFlop per factorization in $(cell "$auto" 6) ms with its substitutions, $gf GFlop/s, $(percent "$gf" "$peak_gflops")% of this core's nominal double-precision peak of $peak_gflops GFlop/s ($flop_per_cycle flop/cycle, $isa, at $cpu_mhz MHz) (\`lsjit_bench_linear --factor\`).")
  fi
  if [[ -n $mixed ]]; then
    gf=$(cell "$mixed" 7)
    notes+=("- $matrix, $(cell "$mixed" 3), a float factorization refined in double: $(cell "$mixed" 6) ms, $gf GFlop/s counted in the double factorization's flops, $(percent "$gf" "$((2 * peak_gflops))")% of the float peak ($((2 * peak_gflops)) GFlop/s) (\`lsjit_bench_linear --factor\`).")
  fi
fi

# ---- 7. a user's translation unit: header_bench.sh ----
header_log=$log_dir/header.txt
if ((header_repeats > 0)); then
  if ! command -v g++ > /dev/null || ! command -v bc > /dev/null || [[ ! -f /usr/include/ceres/ceres.h ]]; then
    notes+=("- header: skipped, it needs g++, bc and libceres-dev.")
    say "skipping header: it needs g++, bc and libceres-dev"
  else
    say "header: bash tools/bench/header_bench.sh $header_repeats  (output: $header_log)"
    t0=$SECONDS status=0
    (cd "$root" && bash tools/bench/header_bench.sh "$header_repeats") > "$header_log" 2>&1 || status=$?
    say "header: $((SECONDS - t0)) s, exit status $status"
    if ((status != 0)); then
      failed=1
      notes+=("- header: \`header_bench.sh $header_repeats\` exited with status $status.")
    fi
    h_rows=$(awk '/^\| (the header alone|one reprojection cost)/' "$header_log")
    for what in "the header alone" "one reprojection cost + add loop"; do
      own=$(awk -F'|' -v w="$what" 'index($2, w) && index($3, "lsjit/costs.h")' <<< "$h_rows")
      ceres=$(awk -F'|' -v w="$what" 'index($2, w) && index($3, "ceres/ceres.h")' <<< "$h_rows")
      [[ -n $own && -n $ceres ]] || continue
      rows+=("| a user's translation unit: $what | \`g++ -std=c++20 -O2 -c\`, seconds | $(cell "$own" 4) s (\`<lsjit/costs.h>\`) | \`<ceres/ceres.h>\`$([[ $what == the* ]] || echo ", the same cost as AutoDiff") | $(cell "$ceres" 4) s | $(ratio "$(cell "$ceres" 4)" "$(cell "$own" 4)") |")
    done
  fi
fi

# ---- the table ----
elapsed=$((SECONDS - started))
echo "Command: \`$command_line\` (from the source root; build \`${build#"$root"/}\`, data \`$data\`)"
echo
echo "Run: $run_date, commit $commit, $((elapsed / 60)) min $((elapsed % 60)) s. Machine: $cpu_model, family $cpu_family model $cpu_model_number, $cpu_count logical CPUs at $cpu_mhz MHz, $isa; load average $load_before before, $(cut -d' ' -f1-3 /proc/loadavg) after."
echo
echo "Repeats: pose graphs $pose_repeats, Ladybug-49 $bal_repeats, scaling $scale_repeats (up to $scale_max observations), processes $process_repeats, kernels $kernel_repeats, factorization $factor_repeats, header $header_repeats. Every figure is a median over its program's repeats in this run, one solver thread each; \"baseline / lsjit\" divides the two medians (above 1: lsjit is faster)."
echo
echo "| problem | what is timed | lsjit | baseline | baseline time | baseline / lsjit |"
echo "| --- | --- | ---: | --- | ---: | ---: |"
((${#rows[@]} == 0)) || printf '%s\n' "${rows[@]}"
if ((${#notes[@]})); then
  echo
  printf '%s\n' "${notes[@]}"
fi
say "summary.sh took $((elapsed / 60)) min $((elapsed % 60)) s"
exit $failed
