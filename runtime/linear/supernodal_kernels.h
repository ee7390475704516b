// Dense kernels of SupernodalCholesky on one supernode's panel (column-major, leading
// dimension ld; see supernodal_analysis.h). Each exists twice: OpenBLAS (for large panels)
// and loops of our own compiled per instruction set (AVX2+FMA, generic), chosen at run time
// (for the many small panels of pose graphs, where a BLAS call's fixed cost dominates).
//
//   factor_diagonal:  the n x n diagonal block ← its lower Cholesky factor L11 (lower
//                     triangle only read and written). Returns the first column whose pivot
//                     is not > 0 (NaN included), or -1.
//   solve_below:      the m x n block below (at panel + n) ← itself · L11⁻ᵀ.
//   below_product:    W (m x m, leading dimension m, lower triangle) ← L_b L_bᵀ of that block.
#pragma once

#include <cstdint>

namespace lsjit::linear::supernodal {

// Called once before any BLAS kernel: OpenBLAS single-threaded (lsjit does the threading).
void init_blas();

int64_t factor_diagonal(double* panel, int64_t n, int64_t ld);
void solve_below(double* panel, int64_t n, int64_t m, int64_t ld);
void below_product(const double* panel, int64_t n, int64_t m, int64_t ld, double* W);

}  // namespace lsjit::linear::supernodal
