#include "lsjit/runtime/solve/linear/blocked_cholesky.h"

#include <algorithm>
#include <cmath>

#include "lsjit/runtime/solve/linear/vector_loops.h"

// Right-looking blocked Cholesky on column-major storage, panels of kPanel columns:
//   1. factor the panel's diagonal block (column by column),
//   2. the rows below it: A21 ← A21 L11⁻ᵀ (column by column, each an axpy down the rows),
//   3. the trailing matrix: A22 ← A22 − A21 A21ᵀ, in tiles of kTileRows x kTileColumns kept
//      in registers over the panel's columns (the rows of a tile are vectors; the columns are
//      A21's entries broadcast).
// Tiles straddling the diagonal are computed whole; their part above it lands in the scratch
// upper triangle. No Eigen, nothing out of line in the body: it is compiled once per
// instruction set (see subtract_e_bt_body in schur_kernels.cpp for why).

namespace lsjit::linear {

namespace {

// A multiple of kBlockedCholeskyPad. Steps 1 and 2 cost about n²·kPanel/2 multiply-adds in
// axpys, step 3 n³/6 in tiles: a narrow panel keeps the slower part small.
constexpr int64_t kPanel = 32;

template <int V, int RowVectors, int Columns>
[[gnu::always_inline]] inline int64_t factor_body(double* a, int64_t n) {
  typedef double Vec __attribute__((vector_size(V * sizeof(double))));
  constexpr int64_t kTileRows = int64_t{V} * RowVectors;
  static_assert(kBlockedCholeskyPad % kTileRows == 0 && kBlockedCholeskyPad % Columns == 0);
  auto at = [&](int64_t r, int64_t c) -> double& { return a[c * n + r]; };
  for (int64_t k = 0; k < n; k += kPanel) {
    const int64_t b = n - k < kPanel ? n - k : kPanel;
    // 1 and 2: the panel's columns, left to right; column c is final once the columns
    // before it in the panel are subtracted from it.
    for (int64_t c = k; c < k + b; ++c) {
      const int64_t m = n - c;  // rows from the diagonal down
      for (int64_t l = k; l < c; ++l) {
        subtract_scaled<V>(&at(c, c), &at(c, l), at(c, l), m);
      }
      const double d = at(c, c);
      if (!(d > 0)) return c;
      const double root = std::sqrt(d), inverse = 1.0 / root;
      at(c, c) = root;
      double* column = &at(c, c);
      for (int64_t r = 1; r < m; ++r) column[r] *= inverse;
    }
    // 3: the trailing update, lower tiles only.
    const int64_t t0 = k + b;
    for (int64_t c0 = t0; c0 < n; c0 += Columns) {
      for (int64_t r0 = c0 - c0 % kTileRows; r0 < n; r0 += kTileRows) {
        Vec sum[Columns][RowVectors] = {};
        for (int64_t l = k; l < t0; ++l) {
          const double* column = a + l * n;
          Vec rows[RowVectors];
#pragma GCC unroll 8
          for (int v = 0; v < RowVectors; ++v)
            __builtin_memcpy(&rows[v], column + r0 + v * V, sizeof(Vec));
#pragma GCC unroll 16
          for (int j = 0; j < Columns; ++j) {
            const double f = column[c0 + j];
#pragma GCC unroll 8
            for (int v = 0; v < RowVectors; ++v) sum[j][v] += rows[v] * f;
          }
        }
#pragma GCC unroll 16
        for (int j = 0; j < Columns; ++j) {
          double* dst = a + (c0 + j) * n + r0;
#pragma GCC unroll 8
          for (int v = 0; v < RowVectors; ++v) {
            Vec old;
            __builtin_memcpy(&old, dst + v * V, sizeof(Vec));
            old -= sum[j][v];
            __builtin_memcpy(dst + v * V, &old, sizeof(Vec));
          }
        }
      }
    }
  }
  return -1;
}

int64_t factor_generic(double* a, int64_t n) { return factor_body<2, 2, 4>(a, n); }

#if defined(__x86_64__)
[[gnu::target("avx2,fma")]] int64_t factor_avx2(double* a, int64_t n) {
  return factor_body<4, 2, 4>(a, n);
}
[[gnu::target("avx512f,fma")]] int64_t factor_avx512(double* a, int64_t n) {
  return factor_body<8, 2, 8>(a, n);
}
#endif

// L y = x down the columns (each an axpy on contiguous memory), then Lᵀ z = y up them
// (each a dot product with a contiguous column), in V-wide vectors. The dot products keep
// 2V partial sums: summed one after the other, the solve would be bound by the latency of
// its dependent additions.
template <int V>
[[gnu::always_inline]] inline void solve_body(const double* a, int64_t n, double* x) {
  typedef double Vec __attribute__((vector_size(V * sizeof(double))));
  for (int64_t c = 0; c < n; ++c) {
    const double* column = a + c * n;
    const double y = x[c] / column[c];
    x[c] = y;
    int64_t r = c + 1;
    for (; r + V <= n; r += V) {
      Vec xr, lr;
      __builtin_memcpy(&xr, x + r, sizeof xr);
      __builtin_memcpy(&lr, column + r, sizeof lr);
      xr -= y * lr;
      __builtin_memcpy(x + r, &xr, sizeof xr);
    }
    for (; r < n; ++r) x[r] -= y * column[r];
  }
  for (int64_t c = n - 1; c >= 0; --c) {
    const double* column = a + c * n;
    Vec sum0 = {}, sum1 = {};
    int64_t r = c + 1;
    for (; r + 2 * V <= n; r += 2 * V) {
      Vec l0, l1, x0, x1;
      __builtin_memcpy(&l0, column + r, sizeof l0);
      __builtin_memcpy(&l1, column + r + V, sizeof l1);
      __builtin_memcpy(&x0, x + r, sizeof x0);
      __builtin_memcpy(&x1, x + r + V, sizeof x1);
      sum0 += l0 * x0;
      sum1 += l1 * x1;
    }
    sum0 += sum1;
    double lanes[V];
    __builtin_memcpy(lanes, &sum0, sizeof lanes);
    double dot = 0;
    for (int k = 0; k < V; ++k) dot += lanes[k];
    for (; r < n; ++r) dot += column[r] * x[r];
    x[c] = (x[c] - dot) / column[c];
  }
}

void solve_generic(const double* a, int64_t n, double* x) { solve_body<2>(a, n, x); }

#if defined(__x86_64__)
[[gnu::target("avx2,fma")]] void solve_avx2(const double* a, int64_t n, double* x) { solve_body<4>(a, n, x); }
#endif

}  // namespace

int64_t blocked_cholesky(double* a, int64_t n, bool host_isa) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (host_isa && __builtin_cpu_supports("avx512f")) return factor_avx512(a, n);
  if (host_isa && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return factor_avx2(a, n);
#endif
  (void)host_isa;
  return factor_generic(a, n);
}

void blocked_cholesky_solve_padded(const double* a, int64_t padded, int64_t n, const double* b,
                                   double* x, double* scratch) {
  std::copy(b, b + n, scratch);
  std::fill(scratch + n, scratch + padded, 0.0);
  blocked_cholesky_solve(a, padded, scratch);
  std::copy(scratch, scratch + n, x);
}

void blocked_cholesky_solve(const double* a, int64_t n, double* x, bool host_isa) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (host_isa && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return solve_avx2(a, n, x);
#endif
  (void)host_isa;
  solve_generic(a, n, x);
}

}  // namespace lsjit::linear
