// Dense Cholesky factorization and solve, blocked, with the trailing update (nearly all the
// flops) in register tiles compiled for AVX-512, for AVX2 + FMA and for generic x86-64, chosen
// once by the CPU. It factors dense_schur's reduced camera system: Eigen's LLT, compiled for
// generic x86-64 like the rest of lsjit, reaches a small fraction of an AVX-512 CPU's
// peak. (Eigen cannot be compiled for a second instruction
// set in the same program: its templates would be instantiated twice under one name.)
//
// Layout: the matrix is column-major with leading dimension n (or, the same memory, the
// row-major upper triangle: element (i, j), i >= j, of the lower triangle is at
// a[j * n + i] = row-major (j, i)). Only the lower triangle (column-major) is read. n must
// be a multiple of kBlockedCholeskyPad; a caller with another size pads the matrix with an
// identity block (zeros off the diagonal), which leaves the factor of the rest unchanged.
// The strictly upper triangle is scratch: the factorization writes into it.
#pragma once

#include <cstdint>

namespace lsjit::linear {

inline constexpr int64_t kBlockedCholeskyPad = 16;

// a = L Lᵀ in place: the lower triangle becomes L. Returns -1, or the first column whose
// pivot is not > 0 (a not positive definite; NaN included), leaving a partly overwritten.
// host_isa false: the generic x86-64 code even where the CPU has more (for tests).
int64_t blocked_cholesky(double* a, int64_t n, bool host_isa = true);

// x ← (L Lᵀ)⁻¹ x for the factor blocked_cholesky left in a (n as there). host_isa as above.
void blocked_cholesky_solve(const double* a, int64_t n, double* x, bool host_isa = true);

// n rounded up to a multiple of kBlockedCholeskyPad: the size a caller pads its matrix to.
inline int64_t blocked_cholesky_padded(int64_t n) {
  return (n + kBlockedCholeskyPad - 1) / kBlockedCholeskyPad * kBlockedCholeskyPad;
}

// x (n) ← (L Lᵀ)⁻¹ b (n) for the factor blocked_cholesky left in a matrix padded to `padded`
// (n <= padded, the padding an identity block), through `scratch` (padded entries). b and x
// may be the same array.
void blocked_cholesky_solve_padded(const double* a, int64_t padded, int64_t n, const double* b,
                                   double* x, double* scratch);

}  // namespace lsjit::linear
