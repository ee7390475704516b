#include "lsjit/runtime/linear/supernodal_kernels.h"

#include <cmath>
#include <mutex>

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
[[gnu::always_inline]] inline void axpy(double* dst, const double* src, double f, int64_t m) {
  typedef double Vec __attribute__((vector_size(V * sizeof(double))));
  int64_t r = 0;
  for (; r + V <= m; r += V) {
    Vec x, y;
    __builtin_memcpy(&x, dst + r, sizeof(Vec));
    __builtin_memcpy(&y, src + r, sizeof(Vec));
    x -= y * f;
    __builtin_memcpy(dst + r, &x, sizeof(Vec));
  }
  for (; r < m; ++r) dst[r] -= f * src[r];
}

template <int V>
[[gnu::always_inline]] inline int64_t factor_body(double* a, int64_t n, int64_t ld) {
  for (int64_t c = 0; c < n; ++c) {
    double* column = a + c * ld;
    for (int64_t l = 0; l < c; ++l) {
      axpy<V>(column + c, a + l * ld + c, a[l * ld + c], n - c);
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
    for (int64_t l = 0; l < c; ++l) axpy<V>(column, a + l * ld + n, a[l * ld + c], m);
    const double inverse = 1.0 / a[c * ld + c];
    for (int64_t r = 0; r < m; ++r) column[r] *= inverse;
  }
}

// W(r, c) = Σ_l B(r, l) B(c, l) for r >= c, by columns of W: axpys down B's columns.
template <int V>
[[gnu::always_inline]] inline void product_body(const double* a, int64_t n, int64_t m,
                                                int64_t ld, double* W) {
  const double* B = a + n;
  for (int64_t c = 0; c < m; ++c) {
    double* column = W + c * m;
    for (int64_t r = c; r < m; ++r) column[r] = 0;
    for (int64_t l = 0; l < n; ++l) axpy<V>(column + c, B + l * ld + c, -B[l * ld + c], m - c);
  }
}

int64_t factor_generic(double* a, int64_t n, int64_t ld) { return factor_body<2>(a, n, ld); }
void solve_generic(double* a, int64_t n, int64_t m, int64_t ld) { solve_body<2>(a, n, m, ld); }
void product_generic(const double* a, int64_t n, int64_t m, int64_t ld, double* W) {
  product_body<2>(a, n, m, ld, W);
}
#if defined(__x86_64__)
[[gnu::target("avx2,fma")]] int64_t factor_avx2(double* a, int64_t n, int64_t ld) {
  return factor_body<4>(a, n, ld);
}
[[gnu::target("avx2,fma")]] void solve_avx2(double* a, int64_t n, int64_t m, int64_t ld) {
  solve_body<4>(a, n, m, ld);
}
[[gnu::target("avx2,fma")]] void product_avx2(const double* a, int64_t n, int64_t m, int64_t ld,
                                              double* W) {
  product_body<4>(a, n, m, ld, W);
}
#endif

bool use_avx2() {
#if defined(__x86_64__)
  static const bool avx2 = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  return avx2;
#else
  return false;
#endif
}

}  // namespace

void init_blas() {
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(1); });
}

int64_t factor_diagonal(double* panel, int64_t n, int64_t ld) {
  if (n <= kSmallColumns) {
#if defined(__x86_64__)
    if (use_avx2()) return factor_avx2(panel, n, ld);
#endif
    return factor_generic(panel, n, ld);
  }
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
  if (n <= kSmallColumns && m * n * n <= kSmallWork) {
#if defined(__x86_64__)
    if (use_avx2()) return solve_avx2(panel, n, m, ld);
#endif
    return solve_generic(panel, n, m, ld);
  }
  const int m32 = static_cast<int>(m), n32 = static_cast<int>(n), ld32 = static_cast<int>(ld);
  const double one = 1;
  dtrsm_("R", "L", "T", "N", &m32, &n32, &one, panel, &ld32, panel + n, &ld32);
}

void below_product(const double* panel, int64_t n, int64_t m, int64_t ld, double* W) {
  if (m == 0) return;
  if (n <= kSmallColumns && m * m * n <= 2 * kSmallWork) {
#if defined(__x86_64__)
    if (use_avx2()) return product_avx2(panel, n, m, ld, W);
#endif
    return product_generic(panel, n, m, ld, W);
  }
  const int m32 = static_cast<int>(m), n32 = static_cast<int>(n), ld32 = static_cast<int>(ld);
  const double one = 1, zero = 0;
  dsyrk_("L", "N", &m32, &n32, &one, panel + n, &ld32, &zero, W, &m32);
}

}  // namespace lsjit::linear::supernodal
