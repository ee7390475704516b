#!/usr/bin/env python3
"""Sums a perf profile of one lsjit_bench_bal child by phase, for docs/benchmarks.md.

SolveSummary splits lsjit's time into residual, jacobian (normal-equation kernels plus the
assembly of H and g) and linear solver (the Schur solver); this splits those further, by
where the samples fall. Usage (a child command line as lsjit_bench_bal runs it):

  perf record -F 10000 -o prof.data -- ./build/lsjit_bench_bal --child lsjit source=file:... \\
      cache=DIR solver=dense_schur tolerance=0.1 max_iterations=50 target=13345.0222 fixed=0
  perf report -i prof.data --no-children --sort dso,sym -g none --stdio | tools/bench/perf_split.py

Each sample goes to the first phase whose pattern matches "dso symbol"; the JIT-compiled
kernels have no symbols and show up as the [JIT] dso.
"""
import re
import sys

PHASES = [
    ("input (read_bal, generate_bal)", r"lsjit::io::"),
    ("JIT kernels (normal equations, residual; with libmvec sin/cos)", r"^\[JIT\]|^libmvec"),
    ("lsjit: assembly of H and g from the kernel outputs",
     r"Evaluator::(normal_equations|source|add_gather|sum_h_sources|scale)"
     r"|lsjit::detail::.*(sum_blocks|sum_fixed|scale_block|add_block|unpack_h_block)"),
    ("lsjit: Schur, form S (E = B C⁻¹, pair updates)",
     r"Kernels<.*>::assemble_schur|update_block|e_transposed|start_row"),
    ("lsjit: Schur, factor and solve S (blocked Cholesky)", r"blocked_cholesky|factor_(avx512|avx2|generic)|factor_body"),
    ("lsjit: Schur, point inverses, elimination, back substitution",
     r"Kernels<.*>::(invert_points|multiply_bt|solve_points|reduce_rhs)|invert_spd|symmetric<"),
    ("lsjit: Schur, implicit S products and preconditioner",
     r"Kernels<.*>::(multiply_schur|invert_schur_diagonal|multiply_camera_inverses)|IterativeSchur|subtract_e_bt"),
    ("lsjit: LM step bookkeeping (H*step, diagonal, finiteness check)",
     r"levenberg_marquardt|BlockSparseSymmetric::(multiply|diagonal)|all_finite"),
    ("Ceres: Schur elimination, implicit Schur products, preconditioner, CG",
     r"ceres::internal::\S*(SchurEliminator|SchurComplement|SchurJacobiPreconditioner|PartitionedMatrixView"
     r"|BlockRandomAccess|ConjugateGradients|DenseSchur|SparseSchur)"),
    ("Ceres: residual and Jacobian evaluation (AutoDiff, evaluator)",
     r"AutoDiff|SnavelyFunctor|ProgramEvaluator|BlockJacobianWriter|ResidualBlock::Evaluate|BlockEvaluatePreparer"
     r"|AngleAxisRotatePoint|Jet|__sincos"),
    ("Ceres: problem construction and preprocessor",
     r"ProblemImpl|_Hashtable|ceres::internal::Program|Reorder|Ordering|IndependentSet|Graph|Preprocessor"),
    ("Ceres: trust-region bookkeeping (J*step, scaling, vectors)",
     r"TrustRegion|LevenbergMarquardt|BlockSparseMatrix|SquaredColumnNorm|ceres::internal::.*Vector"),
    ("dense or sparse factorization (Eigen LLT, CHOLMOD, BLAS)",
     r"gebp_kernel|triangular_|llt_inplace|general_matrix_matrix|gemm|cholmod|libcholmod|libblas|libatlas|libopenblas|syrk|potrf|trsm"),
    ("memset / memmove (zeroing, copies)", r"__mem(set|move|cpy)"),
    ("Linux kernel (page faults)", r"^\[kernel"),
]


def main():
    totals = {name: 0.0 for name, _ in PHASES}
    other = {}
    for line in sys.stdin:
        m = re.match(r"\s*([\d.]+)%\s+(\S+(?: tid \d+)?)\s+\[[.k]\]\s+(.*)$", line)
        if not m:
            continue
        percent, dso, sym = float(m.group(1)), m.group(2), m.group(3).strip()
        key = dso + " " + sym
        for name, pattern in PHASES:
            if re.search(pattern, key):
                totals[name] += percent
                break
        else:
            other[sym[:70]] = other.get(sym[:70], 0.0) + percent
    for name, _ in PHASES:
        if totals[name] >= 0.05:
            print(f"| {name} | {totals[name]:.1f}% |")
    rest = sum(other.values())
    top = ", ".join(f"{s} {p:.1f}%" for s, p in sorted(other.items(), key=lambda x: -x[1])[:3])
    print(f"| other (largest: {top}) | {rest:.1f}% |")


if __name__ == "__main__":
    main()
