#include "lsjit/runtime/linear/supernodal_kernels.h"

#include <algorithm>
#include <cmath>
#include <mutex>

#include "lsjit/runtime/cpu_features.h"
#include "lsjit/runtime/linear/vector_loops.h"

// OpenBLAS, linked directly (CMakeLists.txt): its LAPACK and BLAS entry points, 32-bit
// integers (Debian's libopenblas0-pthread is not the ILP64 build).
extern "C" {
void openblas_set_num_threads(int);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info);
void dtrsm_(const char* side, const char* uplo, const char* trans, const char* diag,
            const int* m, const int* n, const double* alpha, const double* a, const int* lda,
            double* b, const int* ldb);
void dsyrk_(const char* uplo, const char* trans, const int* n, const int* k, const double* alpha,
            const double* a, const int* lda, const double* beta, double* c, const int* ldc);
}

namespace lsjit::linear::supernodal {

namespace {

// Up to these sizes our loops run instead of OpenBLAS: columns of the diagonal block, and
// work (rows x columns x columns) of the below block's solve and product. Measured on
// sphere2500, M3500 and a random SE3 graph (docs/benchmarks.md): 0, 24 and 48 columns are
// within noise of each other after amalgamation; the loops stay for small problems, where
// a BLAS call's fixed cost is all there is.
constexpr int64_t kSmallColumns = 24;
constexpr int64_t kSmallWork = 24 * 24 * 48;

template <int V>
[[gnu::always_inline]] inline int64_t factor_body(double* a, int64_t n, int64_t ld) {
  for (int64_t c = 0; c < n; ++c) {
    double* column = a + c * ld;
    for (int64_t l = 0; l < c; ++l) {
      subtract_scaled<V>(column + c, a + l * ld + c, a[l * ld + c], n - c);
    }
    const double d = column[c];
    if (!(d > 0)) return c;
    const double root = std::sqrt(d), inverse = 1.0 / root;
    column[c] = root;
    for (int64_t r = c + 1; r < n; ++r) column[r] *= inverse;
  }
  return -1;
}

// B (m x n at a + n) ← B L11⁻ᵀ, column by column: column c is final once the columns before
// it, times L11(c, l), are subtracted and it is divided by L11(c, c).
template <int V>
[[gnu::always_inline]] inline void solve_body(double* a, int64_t n, int64_t m, int64_t ld) {
  for (int64_t c = 0; c < n; ++c) {
    double* column = a + c * ld + n;
    for (int64_t l = 0; l < c; ++l) subtract_scaled<V>(column, a + l * ld + n, a[l * ld + c], m);
    const double inverse = 1.0 / a[c * ld + c];
    for (int64_t r = 0; r < m; ++r) column[r] *= inverse;
  }
}

// C's tiles of kRows = V * RowVectors rows by Columns columns, for the columns [c0, c0 +
// Columns): each tile's sums stay in registers over X's n columns (X's rows are vectors,
// the tile's columns X's entries broadcast), tiles wholly above the diagonal are skipped.
// Rows past m are computed from the padding and never read.
template <int V, int RowVectors, int Columns>
[[gnu::always_inline]] inline void product_tiles(const double* x, int64_t n, int64_t m, int64_t c0,
                                                 int64_t ld, double* C, int64_t ldc) {
  typedef double Vec __attribute__((vector_size(V * sizeof(double))));
  constexpr int64_t kRows = int64_t{V} * RowVectors;
  static_assert(kProductRowPad % kRows == 0);
  for (int64_t r0 = c0 - c0 % kRows; r0 < m; r0 += kRows) {
    Vec sum[Columns][RowVectors] = {};
    for (int64_t l = 0; l < n; ++l) {
      const double* column = x + l * ld;
      Vec rows[RowVectors];
      for (int j = 0; j < RowVectors; ++j) __builtin_memcpy(&rows[j], column + r0 + j * V, sizeof(Vec));
      for (int c = 0; c < Columns; ++c) {
        const double f = column[c0 + c];
        for (int j = 0; j < RowVectors; ++j) sum[c][j] += rows[j] * f;
      }
    }
    for (int c = 0; c < Columns; ++c)
      for (int j = 0; j < RowVectors; ++j)
        __builtin_memcpy(C + (c0 + c) * ldc + r0 + j * V, &sum[c][j], sizeof(Vec));
  }
}

// Columns past m, up to the next multiple of 4, are computed and never read.
template <int V>
[[gnu::always_inline]] inline void product_body(const double* x, int64_t n, int64_t m, int64_t ld,
                                                double* W, int64_t ldw) {
  constexpr int kColumns = 4;
  static_assert(kProductRowPad % kColumns == 0);
  for (int64_t c = 0; c < m; c += kColumns) product_tiles<V, 2, kColumns>(x, n, m, c, ld, W, ldw);
}

template <int V>
[[gnu::always_inline]] inline void subtract_body(const double* W, int64_t ldw, int64_t first,
                                                 int64_t last, const int64_t* rows,
                                                 int64_t column_begin, double* target,
                                                 int64_t target_ld,
                                                 const SupernodalAnalysis::RowRun* runs,
                                                 int64_t num_runs) {
  typedef double Vec __attribute__((vector_size(V * sizeof(double))));
  for (int64_t w = first; w < last; ++w) {
    double* column = target + (rows[w] - column_begin) * target_ld;
    const double* source = W + w * ldw;
    for (int64_t e = 0; e < num_runs; ++e) {
      const SupernodalAnalysis::RowRun& run = runs[e];
      const int64_t end = run.source_row + run.length;
      if (end <= w) continue;
      int64_t r = std::max<int64_t>(run.source_row, w);
      double* dst = column + run.target_row - run.source_row;
      for (; r + V <= end; r += V) {
        Vec x, y;
        __builtin_memcpy(&x, dst + r, sizeof(Vec));
        __builtin_memcpy(&y, source + r, sizeof(Vec));
        x -= y;
        __builtin_memcpy(dst + r, &x, sizeof(Vec));
      }
      for (; r < end; ++r) dst[r] -= source[r];
    }
  }
}

// g = B y, by axpys down B's columns.
template <int V>
[[gnu::always_inline]] inline void multiply_body(const double* B, int64_t n, int64_t m, int64_t ld,
                                                 const double* y, double* g) {
  for (int64_t r = 0; r < m; ++r) g[r] = 0;
  for (int64_t c = 0; c < n; ++c) subtract_scaled<V>(g, B + c * ld, -y[c], m);
}

// y −= Bᵀ g: a dot product per column, in two vectors of partial sums (a single scalar sum
// waits on each addition: it was 14% of a sphere2500 factor-and-solve).
template <int V>
[[gnu::always_inline]] inline void multiply_transposed_body(const double* B, int64_t n, int64_t m,
                                                            int64_t ld, const double* g, double* y) {
  typedef double Vec __attribute__((vector_size(V * sizeof(double))));
  for (int64_t c = 0; c < n; ++c) {
    const double* column = B + c * ld;
    Vec s0 = {}, s1 = {};
    int64_t r = 0;
    for (; r + 2 * V <= m; r += 2 * V) {
      Vec a0, a1, b0, b1;
      __builtin_memcpy(&a0, column + r, sizeof(Vec));
      __builtin_memcpy(&a1, column + r + V, sizeof(Vec));
      __builtin_memcpy(&b0, g + r, sizeof(Vec));
      __builtin_memcpy(&b1, g + r + V, sizeof(Vec));
      s0 += a0 * b0;
      s1 += a1 * b1;
    }
    s0 += s1;
    double lanes[V], sum = 0;
    __builtin_memcpy(lanes, &s0, sizeof(Vec));
    for (int j = 0; j < V; ++j) sum += lanes[j];
    for (; r < m; ++r) sum += column[r] * g[r];
    y[c] -= sum;
  }
}

#define LSJIT_SUPERNODAL_KERNELS(SUFFIX, TARGET, V)                                             \
  TARGET int64_t factor_##SUFFIX(double* a, int64_t n, int64_t ld) {                           \
    return factor_body<V>(a, n, ld);                                                           \
  }                                                                                            \
  TARGET void solve_##SUFFIX(double* a, int64_t n, int64_t m, int64_t ld) {                    \
    solve_body<V>(a, n, m, ld);                                                                \
  }                                                                                            \
  TARGET void product_##SUFFIX(const double* x, int64_t n, int64_t m, int64_t ld, double* W,   \
                               int64_t ldw) {                                                  \
    product_body<V>(x, n, m, ld, W, ldw);                                                      \
  }                                                                                            \
  TARGET void subtract_##SUFFIX(const double* W, int64_t ldw, int64_t first, int64_t last,      \
                                const int64_t* rows, int64_t column_begin, double* target,     \
                                int64_t target_ld, const SupernodalAnalysis::RowRun* runs,     \
                                int64_t num_runs) {                                            \
    subtract_body<V / 2>(W, ldw, first, last, rows, column_begin, target, target_ld, runs,     \
                         num_runs);                                                            \
  }                                                                                            \
  TARGET void multiply_##SUFFIX(const double* B, int64_t n, int64_t m, int64_t ld,             \
                                const double* y, double* g) {                                  \
    multiply_body<V>(B, n, m, ld, y, g);                                                       \
  }                                                                                            \
  TARGET void multiply_transposed_##SUFFIX(const double* B, int64_t n, int64_t m, int64_t ld,  \
                                           const double* g, double* y) {                       \
    multiply_transposed_body<V>(B, n, m, ld, g, y);                                            \
  }                                                                                            \
  constexpr Kernels kKernels_##SUFFIX = {&factor_##SUFFIX, &solve_##SUFFIX, &product_##SUFFIX, \
                                         &subtract_##SUFFIX, &multiply_##SUFFIX, &multiply_transposed_##SUFFIX};

LSJIT_SUPERNODAL_KERNELS(generic, , 2)
#if defined(__x86_64__)
LSJIT_SUPERNODAL_KERNELS(avx2, [[gnu::target("avx2,fma")]], 4)
LSJIT_SUPERNODAL_KERNELS(avx512, [[gnu::target("avx512f,fma")]], 8)
#endif
#undef LSJIT_SUPERNODAL_KERNELS

}  // namespace

bool isa_supported(Isa isa) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  switch (isa) {
    case Isa::Generic: return true;
    case Isa::Avx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case Isa::Avx512: return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
  }
  return false;
#else
  return isa == Isa::Generic;
#endif
}

const Kernels& kernels(Isa isa) {
#if defined(__x86_64__)
  if (isa == Isa::Avx512) return kKernels_avx512;
  if (isa == Isa::Avx2) return kKernels_avx2;
#endif
  return kKernels_generic;
}

const Kernels& host_kernels() {
  static const Kernels& chosen = []() -> const Kernels& {
    // Zen 4 issues each 512-bit operation as two halves (cpu_features.h): AVX2 there.
    if (isa_supported(Isa::Avx512) && !detail::cpu_splits_512_bit_operations())
      return kernels(Isa::Avx512);
    if (isa_supported(Isa::Avx2)) return kernels(Isa::Avx2);
    return kernels(Isa::Generic);
  }();
  return chosen;
}

void init_blas() {
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(1); });
}

int64_t factor_diagonal(double* panel, int64_t n, int64_t ld) {
  if (n <= kSmallColumns) return host_kernels().factor(panel, n, ld);
  const int n32 = static_cast<int>(n), ld32 = static_cast<int>(ld);
  int info = 0;
  dpotrf_("L", &n32, panel, &ld32, &info);
  if (info > 0) return info - 1;
  // OpenBLAS' blocked dpotrf does not stop at a NaN pivot (NaN <= 0 is false): look.
  for (int64_t c = 0; c < n; ++c)
    if (!(panel[c * ld + c] > 0)) return c;
  return -1;
}

void solve_below(double* panel, int64_t n, int64_t m, int64_t ld) {
  if (m == 0) return;
  if (n <= kSmallColumns && m * n * n <= kSmallWork) return host_kernels().solve(panel, n, m, ld);
  const int m32 = static_cast<int>(m), n32 = static_cast<int>(n), ld32 = static_cast<int>(ld);
  const double one = 1;
  dtrsm_("R", "L", "T", "N", &m32, &n32, &one, panel, &ld32, panel + n, &ld32);
}

void below_product(const double* panel, int64_t n, int64_t m, int64_t ld, double* W, int64_t ldw) {
  if (m == 0) return;
  if (n <= kSmallColumns && m * m * n <= 2 * kSmallWork)
    return host_kernels().product(panel + n, n, m, ld, W, ldw);
  const int m32 = static_cast<int>(m), n32 = static_cast<int>(n), ld32 = static_cast<int>(ld),
            ldw32 = static_cast<int>(ldw);
  const double one = 1, zero = 0;
  dsyrk_("L", "N", &m32, &n32, &one, panel + n, &ld32, &zero, W, &ldw32);
}

void subtract_update(const double* W, int64_t ldw, int64_t first, int64_t last,
                     const int64_t* rows, int64_t column_begin, double* target, int64_t target_ld,
                     const SupernodalAnalysis::RowRun* runs, int64_t num_runs) {
  host_kernels().subtract(W, ldw, first, last, rows, column_begin, target, target_ld, runs, num_runs);
}

void below_multiply(const double* panel, int64_t n, int64_t m, int64_t ld, const double* y,
                    double* g) {
  host_kernels().multiply(panel + n, n, m, ld, y, g);
}

void below_multiply_transposed(const double* panel, int64_t n, int64_t m, int64_t ld,
                               const double* g, double* y) {
  host_kernels().multiply_transposed(panel + n, n, m, ld, g, y);
}

}  // namespace lsjit::linear::supernodal
