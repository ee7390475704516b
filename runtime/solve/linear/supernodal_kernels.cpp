#include "lsjit/runtime/solve/linear/supernodal_kernels.h"

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "lsjit/common/cpu.h"
#include "lsjit/common/error.h"
#include "lsjit/runtime/solve/linear/vector_loops.h"

namespace lsjit::linear::supernodal {

namespace {

// OpenBLAS' LAPACK and BLAS entry points, 32-bit integers (Debian's libopenblas0-pthread
// is not the ILP64 build), loaded on first use rather than linked: loading the library and
// running its constructor (worker threads, buffers, gfortran) costs about 5 ms, a third of
// a small solve's whole process, while only factorizations with large supernodes call it.
struct Blas {
  void (*dpotrf)(const char* uplo, const int* n, double* a, const int* lda, int* info);
  void (*dtrsm)(const char* side, const char* uplo, const char* trans, const char* diag, const int* m,
                const int* n, const double* alpha, const double* a, const int* lda, double* b, const int* ldb);
  void (*dsyrk)(const char* uplo, const char* trans, const int* n, const int* k, const double* alpha,
                const double* a, const int* lda, const double* beta, double* c, const int* ldc);
  void (*spotrf)(const char* uplo, const int* n, float* a, const int* lda, int* info);
  void (*strsm)(const char* side, const char* uplo, const char* trans, const char* diag, const int* m,
                const int* n, const float* alpha, const float* a, const int* lda, float* b, const int* ldb);
  void (*ssyrk)(const char* uplo, const char* trans, const int* n, const int* k, const float* alpha,
                const float* a, const int* lda, const float* beta, float* c, const int* ldc);
};

// Where CMake found OpenBLAS (cmake/lsjitSparseDeps.cmake), by its soname.
#ifdef LSJIT_OPENBLAS_PATH
constexpr const char* kOpenBlasLibrary = LSJIT_OPENBLAS_PATH;
#else
constexpr const char* kOpenBlasLibrary = "libopenblas.so.0";
#endif

template <class F>
void resolve(void* library, const char* name, F*& out) {
  out = reinterpret_cast<F*>(dlsym(library, name));
  if (!out) throw Error(std::string("OpenBLAS has no ") + name + ": " + kOpenBlasLibrary);
}

// The library CMake found (LSJIT_OPENBLAS_PATH), else its soname in the loader's paths.
// Then single-threaded (lsjit does the threading), with the pthread build's idle workers
// joined: with one thread OpenBLAS never hands them work again, but each spins in
// sched_yield for about 2^28 cycles (0.1 s) before it sleeps, and a short process would
// lose its second core, which a cold solve's compiles use. blas_thread_shutdown_ is the
// pthread build's fork handler; the serial and OpenMP builds do not have it.
Blas load_blas() {
  void* library = dlopen(kOpenBlasLibrary, RTLD_NOW | RTLD_LOCAL);
  if (!library) library = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  if (!library)
    throw Error(std::string("the supernodal Cholesky needs OpenBLAS for its large supernodes, and ") +
                kOpenBlasLibrary + " cannot be loaded: " + dlerror());
  Blas b{};
  resolve(library, "dpotrf_", b.dpotrf);
  resolve(library, "dtrsm_", b.dtrsm);
  resolve(library, "dsyrk_", b.dsyrk);
  resolve(library, "spotrf_", b.spotrf);
  resolve(library, "strsm_", b.strsm);
  resolve(library, "ssyrk_", b.ssyrk);
  void (*set_num_threads)(int) = nullptr;
  resolve(library, "openblas_set_num_threads", set_num_threads);
  set_num_threads(1);
  if (auto* shutdown = reinterpret_cast<int (*)()>(dlsym(library, "blas_thread_shutdown_"))) shutdown();
  return b;  // the library stays loaded for the process's life
}

const Blas& blas() {
  static const Blas loaded = load_blas();  // thread-safe; a failed load throws and is retried
  return loaded;
}

// The BLAS routine of each precision, by overload.
void potrf(const int* n, double* a, const int* lda, int* info) { blas().dpotrf("L", n, a, lda, info); }
void potrf(const int* n, float* a, const int* lda, int* info) { blas().spotrf("L", n, a, lda, info); }
void trsm(const int* m, const int* n, const double* a, const int* lda, double* b, const int* ldb) {
  const double one = 1;
  blas().dtrsm("R", "L", "T", "N", m, n, &one, a, lda, b, ldb);
}
void trsm(const int* m, const int* n, const float* a, const int* lda, float* b, const int* ldb) {
  const float one = 1;
  blas().strsm("R", "L", "T", "N", m, n, &one, a, lda, b, ldb);
}
void syrk(const int* m, const int* n, const double* a, const int* lda, double* c, const int* ldc) {
  const double one = 1, zero = 0;
  blas().dsyrk("L", "N", m, n, &one, a, lda, &zero, c, ldc);
}
void syrk(const int* m, const int* n, const float* a, const int* lda, float* c, const int* ldc) {
  const float one = 1, zero = 0;
  blas().ssyrk("L", "N", m, n, &one, a, lda, &zero, c, ldc);
}

// Up to these sizes the block below's product runs in our register tiles instead of
// OpenBLAS' syrk: columns, and work (rows x rows x columns). Ours do not block for the
// cache, so large or wide products belong to syrk; below these limits syrk's fixed cost
// outweighs that, as on the mid-sized supernodes of small 3D pose graphs
// (docs/benchmarks-history.md, "Blocked panels of our own", has the measurements).
constexpr int64_t kOwnProductColumns = 64;
constexpr int64_t kOwnProductWork = int64_t{1} << 20;

// Up to this many entries (n x ld) a panel is factored by our blocked loops, beyond it by
// OpenBLAS' potrf and trsm. Ours make a pass over the panel per 16 columns and do not
// block for the cache; OpenBLAS has fixed costs that dominate the mid-sized supernodes of
// pose graphs. The limit is about where the two cross
// (docs/benchmarks-history.md, "Blocked panels of our own", has the measurements).
constexpr int64_t kOwnPanelEntries = int64_t{1} << 20;

// Column c's rows [c, rows) less Σ_{l<c} L(c, l) L(·, l), each entry's subtractions in the
// order l = 0, 1, ... as one fused multiply-subtract each (the order subtract_scaled would
// give, column by column): a tile of up to kTile vectors stays in registers across all of
// the columns before c, instead of a load and a store around every column's subtraction.
// On small supernodes (a few columns, a few dozen rows) that store and the load waiting on
// it are the largest share of the panel's time (docs/benchmarks-history.md, "A column's
// subtractions in registers").
template <class T, int V>
[[gnu::always_inline]] inline void update_column(T* a, int64_t c, int64_t ld, int64_t rows) {
  typedef T Vec __attribute__((vector_size(V * sizeof(T))));
  constexpr int kTile = 4;
  T* column = a + c * ld;
  int64_t r = c;
  for (; r + kTile * V <= rows; r += kTile * V) {
    Vec x[kTile];
#pragma GCC unroll 4
    for (int j = 0; j < kTile; ++j) __builtin_memcpy(&x[j], column + r + j * V, sizeof(Vec));
    for (int64_t l = 0; l < c; ++l) {
      const T* source = a + l * ld + r;
      const T f = a[l * ld + c];
#pragma GCC unroll 4
      for (int j = 0; j < kTile; ++j) {
        Vec y;
        __builtin_memcpy(&y, source + j * V, sizeof(Vec));
        x[j] -= y * f;
      }
    }
#pragma GCC unroll 4
    for (int j = 0; j < kTile; ++j) __builtin_memcpy(column + r + j * V, &x[j], sizeof(Vec));
  }
  for (; r + V <= rows; r += V) {
    Vec x;
    __builtin_memcpy(&x, column + r, sizeof(Vec));
    for (int64_t l = 0; l < c; ++l) {
      Vec y;
      __builtin_memcpy(&y, a + l * ld + r, sizeof(Vec));
      x -= y * a[l * ld + c];
    }
    __builtin_memcpy(column + r, &x, sizeof(Vec));
  }
  for (; r < rows; ++r) {
    T x = column[r];
    for (int64_t l = 0; l < c; ++l) x -= a[l * ld + c] * a[l * ld + r];
    column[r] = x;
  }
}

// Cholesky of the n columns' first `rows` rows (rows >= n), column by column: the
// diagonal block alone (rows = n: factor) or with the block below it (rows = ld:
// factor_panel, which is factor and then solve_body in one pass: column c's rows below
// take the same subtractions in the same order and the same scaling, so the result is the
// two loops', bit for bit, with half the calls of the vector loop and longer vectors;
// intel's supernodes have 3-15 columns and 6-24 rows).
template <class T, int V>
[[gnu::always_inline]] inline int64_t factor_rows_body(T* a, int64_t n, int64_t ld, int64_t rows) {
  typedef T Vec __attribute__((vector_size(V * sizeof(T))));
  for (int64_t c = 0; c < n; ++c) {
    T* column = a + c * ld;
    update_column<T, V>(a, c, ld, rows);
    const T d = column[c];
    if (!(d > 0)) return c;
    const T root = std::sqrt(d), inverse = T{1} / root;
    column[c] = root;
    int64_t r = c + 1;
    for (; r + V <= rows; r += V) {
      Vec x;
      __builtin_memcpy(&x, column + r, sizeof(Vec));
      x *= inverse;
      __builtin_memcpy(column + r, &x, sizeof(Vec));
    }
    for (; r < rows; ++r) column[r] *= inverse;
  }
  return -1;
}

// B (m x n at a + n) ← B L11⁻ᵀ, column by column: column c is final once the columns before
// it, times L11(c, l), are subtracted and it is divided by L11(c, c).
template <class T, int V>
[[gnu::always_inline]] inline void solve_body(T* a, int64_t n, int64_t m, int64_t ld) {
  for (int64_t c = 0; c < n; ++c) {
    T* column = a + c * ld + n;
    for (int64_t l = 0; l < c; ++l) subtract_scaled<V>(column, a + l * ld + n, a[l * ld + c], m);
    const T inverse = T{1} / a[c * ld + c];
    for (int64_t r = 0; r < m; ++r) column[r] *= inverse;
  }
}

// One register tile's sums over the columns [l0, l1) of x (leading dimension ld): rows
// [r0, r0 + V * RowVectors) of each column as vectors, times its entries c0 .. c0 + Columns
// - 1 broadcast. The loops are unrolled in full, so that the sums stay registers: rolled,
// GCC kept them in a stack array, a load and a store around every FMA.
template <class T, int V, int RowVectors, int Columns, class Vec>
[[gnu::always_inline]] inline void tile_sums(const T* x, int64_t l0, int64_t l1, int64_t ld,
                                             int64_t r0, int64_t c0, Vec (&sum)[Columns][RowVectors]) {
  for (int64_t l = l0; l < l1; ++l) {
    const T* column = x + l * ld;
    Vec rows[RowVectors];
#pragma GCC unroll 8
    for (int j = 0; j < RowVectors; ++j) __builtin_memcpy(&rows[j], column + r0 + j * V, sizeof(Vec));
#pragma GCC unroll 16
    for (int c = 0; c < Columns; ++c) {
      const T f = column[c0 + c];
#pragma GCC unroll 8
      for (int j = 0; j < RowVectors; ++j) sum[c][j] += rows[j] * f;
    }
  }
}

// C's tiles of kRows = V * RowVectors rows by Columns columns, for the columns [c0, c0 +
// Columns): each tile's sums stay in registers over X's n columns (X's rows are vectors,
// the tile's columns X's entries broadcast), tiles wholly above the diagonal are skipped.
// Rows past m are computed from the padding and never read.
template <class T, int V, int RowVectors, int Columns>
[[gnu::always_inline]] inline void product_tiles(const T* x, int64_t n, int64_t m, int64_t c0,
                                                 int64_t ld, T* C, int64_t ldc) {
  typedef T Vec __attribute__((vector_size(V * sizeof(T))));
  constexpr int64_t kRows = int64_t{V} * RowVectors;
  static_assert(kProductRowPad % kRows == 0);
  for (int64_t r0 = c0 - c0 % kRows; r0 < m; r0 += kRows) {
    Vec sum[Columns][RowVectors] = {};
    tile_sums<T, V, RowVectors, Columns>(x, 0, n, ld, r0, c0, sum);
#pragma GCC unroll 16
    for (int c = 0; c < Columns; ++c)
#pragma GCC unroll 8
      for (int j = 0; j < RowVectors; ++j)
        __builtin_memcpy(C + (c0 + c) * ldc + r0 + j * V, &sum[c][j], sizeof(Vec));
  }
}

// The trailing update of a blocked panel factorization: the panel's columns [c0, c0 +
// Columns) (those below n only), rows from c0 down to ld, less the product of the factored
// columns [k, k + b) with themselves, in tiles of kRows = V * RowVectors rows kept in
// registers over those b columns. A tile straddling the diagonal writes above it, into the
// diagonal block's upper triangle, which nothing reads; the last tile's rows past ld, and
// columns past n, are computed from the padding and not stored.
template <class T, int V, int RowVectors, int Columns>
[[gnu::always_inline]] inline void trailing_tiles(T* a, int64_t n, int64_t ld, int64_t k,
                                                  int64_t b, int64_t c0) {
  typedef T Vec __attribute__((vector_size(V * sizeof(T))));
  constexpr int64_t kRows = int64_t{V} * RowVectors;
  static_assert(kProductRowPad >= kRows);
  const int64_t columns = std::min<int64_t>(Columns, n - c0);
  for (int64_t r0 = c0; r0 < ld; r0 += kRows) {
    Vec sum[Columns][RowVectors] = {};
    tile_sums<T, V, RowVectors, Columns>(a, k, k + b, ld, r0, c0, sum);
    if (columns == Columns && r0 + kRows <= ld) {
#pragma GCC unroll 16
      for (int c = 0; c < Columns; ++c)
#pragma GCC unroll 8
        for (int j = 0; j < RowVectors; ++j) {
          T* dst = a + (c0 + c) * ld + r0 + j * V;
          Vec old;
          __builtin_memcpy(&old, dst, sizeof(Vec));
          old -= sum[c][j];
          __builtin_memcpy(dst, &old, sizeof(Vec));
        }
    } else {
      T tile[Columns][kRows];
      __builtin_memcpy(tile, sum, sizeof(tile));
      const int64_t rows = std::min<int64_t>(kRows, ld - r0);
      for (int64_t c = 0; c < columns; ++c)
        for (int64_t r = 0; r < rows; ++r) a[(c0 + c) * ld + r0 + r] -= tile[c][r];
    }
  }
}

// factor_panel for panels of any size, right-looking in blocks of kBlockColumns columns:
// factor_rows_body on the block's columns (their diagonal part and every row below it),
// then the columns right of the block less its contribution, in register tiles (most of
// the flops once n passes a few blocks). Each block's update streams the rest of the
// panel, so large panels go to OpenBLAS instead (kOwnPanelEntries).
constexpr int64_t kBlockColumns = 16;

template <class T, int V>
[[gnu::always_inline]] inline int64_t factor_blocked_body(T* a, int64_t n, int64_t ld) {
  // AVX-512 (32 registers): 16 accumulators; otherwise (16 registers) 8.
  constexpr int kRowVectors = V >= 16 ? 1 : 2;
  constexpr int kColumns = V * sizeof(T) == 64 ? 8 : 4;
  for (int64_t k = 0; k < n; k += kBlockColumns) {
    const int64_t b = std::min(kBlockColumns, n - k);
    if (const int64_t bad = factor_rows_body<T, V>(a + k * ld + k, b, ld, ld - k); bad >= 0)
      return k + bad;
    for (int64_t c0 = k + b; c0 < n; c0 += kColumns)
      trailing_tiles<T, V, kRowVectors, kColumns>(a, n, ld, k, b, c0);
  }
  return -1;
}

// Tiles of two vectors by 4 columns (8 accumulators), except for AVX-512 floats, whose 16
// lanes would make a two-vector tile taller than the padding: one vector by 8 columns.
// Columns past m, up to the next multiple of the tile's columns, are computed and never
// read (W's leading dimension is a multiple of kProductRowPad).
template <class T, int V>
[[gnu::always_inline]] inline void product_body(const T* x, int64_t n, int64_t m, int64_t ld, T* W,
                                                int64_t ldw) {
  constexpr int kRowVectors = V >= 16 ? 1 : 2;
  constexpr int kColumns = V >= 16 ? 8 : 4;
  static_assert(kProductRowPad % kColumns == 0);
  for (int64_t c = 0; c < m; c += kColumns)
    product_tiles<T, V, kRowVectors, kColumns>(x, n, m, c, ld, W, ldw);
}

template <class T, int V>
[[gnu::always_inline]] inline void subtract_body(const T* W, int64_t ldw, int64_t first,
                                                 int64_t last, const int64_t* rows,
                                                 int64_t column_begin, T* target,
                                                 int64_t target_ld,
                                                 const SupernodalAnalysis::RowRun* runs,
                                                 int64_t num_runs) {
  typedef T Vec __attribute__((vector_size(V * sizeof(T))));
  for (int64_t w = first; w < last; ++w) {
    T* column = target + (rows[w] - column_begin) * target_ld;
    const T* source = W + w * ldw;
    for (int64_t e = 0; e < num_runs; ++e) {
      const SupernodalAnalysis::RowRun& run = runs[e];
      const int64_t end = run.source_row + run.length;
      if (end <= w) continue;
      int64_t r = std::max<int64_t>(run.source_row, w);
      T* dst = column + run.target_row - run.source_row;
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
template <class T, int V>
[[gnu::always_inline]] inline void multiply_body(const T* B, int64_t n, int64_t m, int64_t ld,
                                                 const T* y, T* g) {
  for (int64_t r = 0; r < m; ++r) g[r] = 0;
  for (int64_t c = 0; c < n; ++c) subtract_scaled<V>(g, B + c * ld, -y[c], m);
}

// a · b over m entries in two vectors of partial sums (a single scalar sum waits on each
// addition).
template <class T, int V>
[[gnu::always_inline]] inline T dot_body(const T* a, const T* b, int64_t m) {
  typedef T Vec __attribute__((vector_size(V * sizeof(T))));
  Vec s0 = {}, s1 = {};
  int64_t r = 0;
  for (; r + 2 * V <= m; r += 2 * V) {
    Vec a0, a1, b0, b1;
    __builtin_memcpy(&a0, a + r, sizeof(Vec));
    __builtin_memcpy(&a1, a + r + V, sizeof(Vec));
    __builtin_memcpy(&b0, b + r, sizeof(Vec));
    __builtin_memcpy(&b1, b + r + V, sizeof(Vec));
    s0 += a0 * b0;
    s1 += a1 * b1;
  }
  s0 += s1;
  T lanes[V], sum = 0;
  __builtin_memcpy(lanes, &s0, sizeof(Vec));
  for (int j = 0; j < V; ++j) sum += lanes[j];
  for (; r < m; ++r) sum += a[r] * b[r];
  return sum;
}

// y −= Bᵀ g: a dot product per column.
template <class T, int V>
[[gnu::always_inline]] inline void multiply_transposed_body(const T* B, int64_t n, int64_t m,
                                                            int64_t ld, const T* g, T* y) {
  for (int64_t c = 0; c < n; ++c) y[c] -= dot_body<T, V>(B + c * ld, g, m);
}

// y ← L⁻¹ y for the lower-triangular n x n diagonal block L (leading dimension ld): column
// by column, y[c] /= L(c, c), then an axpy down the rest of the column. As plain loops in
// supernodal_cholesky.cpp these stayed scalar (the compiler could not rule out y aliasing
// L), and on large supernodes they are most of a mixed-precision substitution's time.
template <class T, int V>
[[gnu::always_inline]] inline void solve_diagonal_body(const T* L, int64_t n, int64_t ld, T* y) {
  for (int64_t c = 0; c < n; ++c) {
    const T yc = y[c] / L[c * ld + c];
    y[c] = yc;
    subtract_scaled<V>(y + c + 1, L + c * ld + c + 1, yc, n - c - 1);
  }
}

// y ← L⁻ᵀ y: from the last column back, y[c] = (y[c] − L(c+1.., c) · y[c+1..]) / L(c, c),
// each dot product in two vectors of partial sums (a scalar sum waits on every addition).
template <class T, int V>
[[gnu::always_inline]] inline void solve_diagonal_transposed_body(const T* L, int64_t n, int64_t ld, T* y) {
  for (int64_t c = n - 1; c >= 0; --c) {
    const T* column = L + c * ld;
    y[c] = (y[c] - dot_body<T, V>(column + c + 1, y + c + 1, n - c - 1)) / column[c];
  }
}

// The kernels of one scalar type T at one instruction set, V lanes of T per vector.
#define LSJIT_SUPERNODAL_KERNELS(SUFFIX, TARGET, T, V)                                          \
  TARGET int64_t factor_##SUFFIX(T* a, int64_t n, int64_t ld) {                                \
    return factor_rows_body<T, V>(a, n, ld, n);                                                \
  }                                                                                            \
  TARGET void solve_##SUFFIX(T* a, int64_t n, int64_t m, int64_t ld) {                         \
    solve_body<T, V>(a, n, m, ld);                                                             \
  }                                                                                            \
  TARGET int64_t factor_panel_##SUFFIX(T* a, int64_t n, int64_t ld) {                          \
    return factor_rows_body<T, V>(a, n, ld, ld);                                               \
  }                                                                                            \
  TARGET int64_t factor_blocked_##SUFFIX(T* a, int64_t n, int64_t ld) {                        \
    return factor_blocked_body<T, V>(a, n, ld);                                                \
  }                                                                                            \
  TARGET void product_##SUFFIX(const T* x, int64_t n, int64_t m, int64_t ld, T* W, int64_t ldw) { \
    product_body<T, V>(x, n, m, ld, W, ldw);                                                   \
  }                                                                                            \
  TARGET void subtract_##SUFFIX(const T* W, int64_t ldw, int64_t first, int64_t last,           \
                                const int64_t* rows, int64_t column_begin, T* target,          \
                                int64_t target_ld, const SupernodalAnalysis::RowRun* runs,     \
                                int64_t num_runs) {                                            \
    subtract_body<T, V / 2>(W, ldw, first, last, rows, column_begin, target, target_ld, runs,  \
                            num_runs);                                                         \
  }                                                                                            \
  TARGET void multiply_##SUFFIX(const T* B, int64_t n, int64_t m, int64_t ld, const T* y, T* g) { \
    multiply_body<T, V>(B, n, m, ld, y, g);                                                    \
  }                                                                                            \
  TARGET void multiply_transposed_##SUFFIX(const T* B, int64_t n, int64_t m, int64_t ld,       \
                                           const T* g, T* y) {                                 \
    multiply_transposed_body<T, V>(B, n, m, ld, g, y);                                         \
  }                                                                                            \
  TARGET void solve_diagonal_##SUFFIX(const T* L, int64_t n, int64_t ld, T* y) {                \
    solve_diagonal_body<T, V>(L, n, ld, y);                                                    \
  }                                                                                            \
  TARGET void solve_diagonal_transposed_##SUFFIX(const T* L, int64_t n, int64_t ld, T* y) {     \
    solve_diagonal_transposed_body<T, V>(L, n, ld, y);                                         \
  }                                                                                            \
  constexpr KernelsOf<T> kKernels_##SUFFIX = {&factor_##SUFFIX,   &solve_##SUFFIX,             \
                                              &factor_panel_##SUFFIX, &factor_blocked_##SUFFIX, \
                                              &product_##SUFFIX,  &subtract_##SUFFIX,          \
                                              &multiply_##SUFFIX, &multiply_transposed_##SUFFIX, \
                                              &solve_diagonal_##SUFFIX,                        \
                                              &solve_diagonal_transposed_##SUFFIX};

LSJIT_SUPERNODAL_KERNELS(generic, , double, 2)
LSJIT_SUPERNODAL_KERNELS(generic_float, , float, 4)
#if defined(__x86_64__)
LSJIT_SUPERNODAL_KERNELS(avx2, [[gnu::target("avx2,fma")]], double, 4)
LSJIT_SUPERNODAL_KERNELS(avx2_float, [[gnu::target("avx2,fma")]], float, 8)
LSJIT_SUPERNODAL_KERNELS(avx512, [[gnu::target("avx512f,fma")]], double, 8)
LSJIT_SUPERNODAL_KERNELS(avx512_float, [[gnu::target("avx512f,fma")]], float, 16)
#endif
#undef LSJIT_SUPERNODAL_KERNELS

// The table of each type and instruction set.
template <class T>
const KernelsOf<T>& table(Isa isa);
template <>
const KernelsOf<double>& table<double>(Isa isa) {
#if defined(__x86_64__)
  if (isa == Isa::Avx512) return kKernels_avx512;
  if (isa == Isa::Avx2) return kKernels_avx2;
#endif
  return kKernels_generic;
}
template <>
const KernelsOf<float>& table<float>(Isa isa) {
#if defined(__x86_64__)
  if (isa == Isa::Avx512) return kKernels_avx512_float;
  if (isa == Isa::Avx2) return kKernels_avx2_float;
#endif
  return kKernels_generic_float;
}

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

template <class T>
const KernelsOf<T>& kernels(Isa isa) {
  return table<T>(isa);
}

template <class T>
const KernelsOf<T>& host_kernels() {
  static const KernelsOf<T>& chosen = []() -> const KernelsOf<T>& {
    // Zen 4 issues each 512-bit operation as two halves (common/cpu.h): AVX2 there.
    if (isa_supported(Isa::Avx512) && !lsjit::cpu_splits_512_bit_operations())
      return kernels<T>(Isa::Avx512);
    if (isa_supported(Isa::Avx2)) return kernels<T>(Isa::Avx2);
    return kernels<T>(Isa::Generic);
  }();
  return chosen;
}

void init_blas() { (void)blas(); }

void prefer_avx512_blas() {
  const HostCpu& cpu = host_cpu();
  if (std::getenv("OPENBLAS_CORETYPE") || cpu.x86_64_level < 4 || cpu_splits_512_bit_operations() ||
      cpu.name.rfind("AuthenticAMD", 0) != 0)
    return;
  setenv("OPENBLAS_CORETYPE", "SkylakeX", /*overwrite=*/0);
}

namespace {

// The large panels' path (factor_panel): OpenBLAS.
template <class T>
int64_t factor_diagonal(T* panel, int64_t n, int64_t ld) {
  const int n32 = static_cast<int>(n), ld32 = static_cast<int>(ld);
  int info = 0;
  potrf(&n32, panel, &ld32, &info);
  if (info > 0) return info - 1;
  // OpenBLAS' blocked potrf does not stop at a NaN pivot (NaN <= 0 is false): look.
  for (int64_t c = 0; c < n; ++c)
    if (!(panel[c * ld + c] > 0)) return c;
  return -1;
}

template <class T>
void solve_below(T* panel, int64_t n, int64_t m, int64_t ld) {
  if (m == 0) return;
  const int m32 = static_cast<int>(m), n32 = static_cast<int>(n), ld32 = static_cast<int>(ld);
  trsm(&m32, &n32, panel, &ld32, panel + n, &ld32);
}

}  // namespace

template <class T>
int64_t factor_panel(T* panel, int64_t n, int64_t ld) {
  if (n * ld <= kOwnPanelEntries) return host_kernels<T>().factor_blocked(panel, n, ld);
  const int64_t m = ld - n;
  if (const int64_t bad = factor_diagonal(panel, n, ld); bad >= 0) return bad;
  solve_below(panel, n, m, ld);
  return -1;
}

template <class T>
void below_product(const T* panel, int64_t n, int64_t m, int64_t ld, T* W, int64_t ldw) {
  if (m == 0) return;
  if (n <= kOwnProductColumns && m * m * n <= kOwnProductWork)
    return host_kernels<T>().product(panel + n, n, m, ld, W, ldw);
  const int m32 = static_cast<int>(m), n32 = static_cast<int>(n), ld32 = static_cast<int>(ld),
            ldw32 = static_cast<int>(ldw);
  syrk(&m32, &n32, panel + n, &ld32, W, &ldw32);
}

template <class T>
void subtract_update(const T* W, int64_t ldw, int64_t first, int64_t last, const int64_t* rows,
                     int64_t column_begin, T* target, int64_t target_ld,
                     const SupernodalAnalysis::RowRun* runs, int64_t num_runs) {
  host_kernels<T>().subtract(W, ldw, first, last, rows, column_begin, target, target_ld, runs,
                             num_runs);
}

template <class T>
void below_multiply(const T* panel, int64_t n, int64_t m, int64_t ld, const T* y, T* g) {
  host_kernels<T>().multiply(panel + n, n, m, ld, y, g);
}

template <class T>
void below_multiply_transposed(const T* panel, int64_t n, int64_t m, int64_t ld, const T* g,
                               T* y) {
  host_kernels<T>().multiply_transposed(panel + n, n, m, ld, g, y);
}

// Diagonal blocks of at least this many columns go through the vector kernels; smaller
// ones keep scalar loops, which a call through the kernel table and a vector loop's set-up
// do not beat on small supernodes; large ones gain from the vectors
// (docs/benchmarks-history.md, "The diagonal blocks of the substitution", has the measurements).
constexpr int64_t kVectorDiagonalColumns = 24;

// The small blocks' loops are latency chains (each y[c] waits on the one solved before it),
// so what sits on the chain is kept short: the diagonal's reciprocals are taken first, off
// the chain (a multiply on it instead of a division), and the transposed solve adds the
// terms of y[c]'s sum in the order their y[r] became final, the one solved last added last,
// so that all but one of its fused multiply-adds run while y[c + 1] is still being solved.
// This matters where a factor is many small supernodes, as on 2D pose graphs.

template <class T>
void diagonal_solve(const T* panel, int64_t n, int64_t ld, T* y) {
  if (n >= kVectorDiagonalColumns) return host_kernels<T>().solve_diagonal(panel, n, ld, y);
  T inverse[kVectorDiagonalColumns];
  for (int64_t c = 0; c < n; ++c) inverse[c] = T{1} / panel[c * ld + c];
  for (int64_t c = 0; c < n; ++c) {
    y[c] *= inverse[c];
    for (int64_t r = c + 1; r < n; ++r) y[r] -= panel[c * ld + r] * y[c];
  }
}

template <class T>
void diagonal_solve_transposed(const T* panel, int64_t n, int64_t ld, T* y) {
  if (n >= kVectorDiagonalColumns) return host_kernels<T>().solve_diagonal_transposed(panel, n, ld, y);
  T inverse[kVectorDiagonalColumns];
  for (int64_t c = 0; c < n; ++c) inverse[c] = T{1} / panel[c * ld + c];
  for (int64_t c = n - 1; c >= 0; --c) {
    T sum = y[c];
    for (int64_t r = n - 1; r > c; --r) sum -= panel[c * ld + r] * y[r];
    y[c] = sum * inverse[c];
  }
}

// Both precisions: double for every solve, float for the mixed-precision ones.
#define LSJIT_SUPERNODAL_INSTANTIATE(T)                                                          \
  template const KernelsOf<T>& kernels<T>(Isa);                                                \
  template const KernelsOf<T>& host_kernels<T>();                                              \
  template int64_t factor_panel<T>(T*, int64_t, int64_t);                                      \
  template void below_product<T>(const T*, int64_t, int64_t, int64_t, T*, int64_t);            \
  template void subtract_update<T>(const T*, int64_t, int64_t, int64_t, const int64_t*, int64_t, \
                                   T*, int64_t, const SupernodalAnalysis::RowRun*, int64_t);   \
  template void below_multiply<T>(const T*, int64_t, int64_t, int64_t, const T*, T*);          \
  template void below_multiply_transposed<T>(const T*, int64_t, int64_t, int64_t, const T*, T*); \
  template void diagonal_solve<T>(const T*, int64_t, int64_t, T*);                             \
  template void diagonal_solve_transposed<T>(const T*, int64_t, int64_t, T*);
LSJIT_SUPERNODAL_INSTANTIATE(double)
LSJIT_SUPERNODAL_INSTANTIATE(float)
#undef LSJIT_SUPERNODAL_INSTANTIATE

}  // namespace lsjit::linear::supernodal
