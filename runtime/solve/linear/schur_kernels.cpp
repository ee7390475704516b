#include "lsjit/runtime/solve/linear/schur_kernels.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <utility>
#include <vector>

#include "lsjit/common/cpu.h"

// Compile time matters here: the kernels are instantiated for some fifty (camera, point)
// size pairs. So whatever depends on one size only (inverting a point or camera block,
// products with A) is a separate, non-inlined template instantiated once per size, and the
// small products are plain loops over fixed-size Eigen maps (multiply() below), whose bounds
// are compile-time constants that the compiler unrolls. Eigen's product expressions and LLT
// compile many times slower than these loops for the same arithmetic, and blocks this small
// never reach Eigen's blocked kernels.

namespace lsjit::linear {

namespace {

// Eigen refuses a row-major column vector, which a camera x point block is for points of
// size 1; its memory is the same either way.
template <int R, int C>
using RowMajor = Eigen::Matrix<double, R, C, (C == 1 && R != 1) ? Eigen::ColMajor : Eigen::RowMajor>;
template <int R, int C>
using ConstBlock = Eigen::Map<const RowMajor<R, C>>;
template <int R, int C>
using StridedBlock = Eigen::Map<RowMajor<R, C>, 0, Eigen::OuterStride<>>;
template <int N>
using Vector = Eigen::Matrix<double, N, 1>;
template <int N>
using Square = Eigen::Matrix<double, N, N>;  // inverses are symmetric: the layout is moot

template <int N>
Eigen::Map<const Vector<N>> vec(const double* data, int n) {
  return {data, n};
}
template <int N>
Eigen::Map<Vector<N>> vec(double* data, int n) {
  return {data, n};
}
template <int N>
Eigen::Map<const Square<N>> square(const double* data, int n) {
  return {data, n, n};
}

// An uninitialized rows x cols M. Fixed sizes get no arguments: Eigen reads two arguments to
// a 2-vector (one to a 1x1) as its coefficients.
template <typename M>
M uninitialized(int rows, int cols) {
  if constexpr (M::SizeAtCompileTime == Eigen::Dynamic)
    return M(rows, cols);
  else
    return M();
}

// Σ_k l(a, k) r(k, c), summed in increasing k from 0. A compile-time inner size is
// unrolled: GCC -O2 keeps even a 3-term loop as a loop, which slows the iterative solver
// noticeably.
template <typename L, typename R>
inline double dot(const L& l, const R& r, Eigen::Index a, Eigen::Index c) {
  double v = 0;
  if constexpr (L::ColsAtCompileTime != Eigen::Dynamic) {
#pragma GCC unroll 16
    for (int k = 0; k < L::ColsAtCompileTime; ++k) v += l(a, k) * r(k, c);
  } else {
    for (Eigen::Index k = 0; k < l.cols(); ++k) v += l(a, k) * r(k, c);
  }
  return v;
}

enum class Update { Set, Add, Subtract };

// out (=, +=, −=) l r, for fixed- or runtime-sized Eigen matrices or maps (and transposes of
// them). Each entry is one dot product, then applied: the same rounding for any thread.
template <Update U, typename Out, typename L, typename R>
inline void multiply(Out&& out, const L& l, const R& r) {
  for (Eigen::Index a = 0; a < l.rows(); ++a)
    for (Eigen::Index c = 0; c < r.cols(); ++c) {
      const double v = dot(l, r, a, c);
      if constexpr (U == Update::Set) out(a, c) = v;
      if constexpr (U == Update::Add) out(a, c) += v;
      if constexpr (U == Update::Subtract) out(a, c) -= v;
    }
}

// The symmetric matrix whose upper triangle is that of the row-major n x n block at `upper`
// (H's diagonal blocks: their lower triangle is never read), plus diag(shift) if not null.
template <int N>
[[gnu::noinline]] Square<N> symmetric(const double* upper, const double* shift, int n) {
  auto M = uninitialized<Square<N>>(n, n);
  for (int a = 0; a < n; ++a) {
    M(a, a) = upper[a * n + a] + (shift != nullptr ? shift[a] : 0.0);
    for (int b = a + 1; b < n; ++b) M(a, b) = M(b, a) = upper[a * n + b];
  }
  return M;
}

// out = M⁻¹ through M = UᵀU (U upper): false, out untouched, when a pivot is <= 0, i.e. M
// is not positive definite. Then W = U⁻¹ and M⁻¹ = W Wᵀ.
template <int N>
[[gnu::noinline]] bool invert_spd(const Square<N>& M, double* out, int n) {
  auto U = uninitialized<Square<N>>(n, n);
  auto W = uninitialized<Square<N>>(n, n);
  for (int k = 0; k < n; ++k) {
    double d = M(k, k);
    for (int m = 0; m < k; ++m) d -= U(m, k) * U(m, k);
    if (!(d > 0)) return false;
    U(k, k) = std::sqrt(d);
    for (int c = k + 1; c < n; ++c) {
      double v = M(k, c);
      for (int m = 0; m < k; ++m) v -= U(m, k) * U(m, c);
      U(k, c) = v / U(k, k);
    }
  }
  for (int c = 0; c < n; ++c)
    for (int r = c; r >= 0; --r) {
      double v = r == c ? 1.0 : 0.0;
      for (int m = r + 1; m <= c; ++m) v -= U(r, m) * W(m, c);
      W(r, c) = v / U(r, r);
    }
  Eigen::Map<Square<N>> inverse(out, n, n);
  for (int a = 0; a < n; ++a)
    for (int b = a; b < n; ++b) {
      double v = 0;
      for (int m = b; m < n; ++m) v += W(a, m) * W(b, m);
      inverse(a, b) = inverse(b, a) = v;
    }
  return true;
}

// (U + diag(shift))⁻¹ for the n x n symmetric block whose upper triangle is row-major at
// `upper`, n = N fixed, into `out` (row-major, both triangles): what invert_spd(symmetric())
// computes, for the point blocks a Schur solve inverts by the thousand (7776 per Ladybug-49
// iteration). Inline, on arrays, and with one division per pivot (its reciprocal, then
// products) instead of one per entry: the divisions and square roots of one block form a
// long dependency chain, which the generic version makes longer.
// false, out untouched, when a pivot is <= 0 or not finite: every entry read reaches a
// pivot, which an infinite or NaN entry makes infinite or NaN, so a block with one is
// always rejected, which DenseSchur relies on (schur_dense.h).
template <int N>
[[gnu::always_inline]] inline bool invert_spd_fixed(const double* upper, const double* shift, double* out) {
  double U[N][N], W[N][N], reciprocal[N];
#pragma GCC unroll 8
  for (int k = 0; k < N; ++k) {
    double d = upper[k * N + k] + (shift != nullptr ? shift[k] : 0.0);
#pragma GCC unroll 8
    for (int m = 0; m < k; ++m) d -= U[m][k] * U[m][k];
    if (!(d > 0 && d <= std::numeric_limits<double>::max())) return false;
    U[k][k] = std::sqrt(d);
    reciprocal[k] = 1.0 / U[k][k];
#pragma GCC unroll 8
    for (int c = k + 1; c < N; ++c) {
      double v = upper[k * N + c];
#pragma GCC unroll 8
      for (int m = 0; m < k; ++m) v -= U[m][k] * U[m][c];
      U[k][c] = v * reciprocal[k];
    }
  }
#pragma GCC unroll 8
  for (int c = 0; c < N; ++c)
#pragma GCC unroll 8
    for (int r = c; r >= 0; --r) {
      double v = r == c ? 1.0 : 0.0;
#pragma GCC unroll 8
      for (int m = r + 1; m <= c; ++m) v -= U[r][m] * W[m][c];
      W[r][c] = v * reciprocal[r];
    }
#pragma GCC unroll 8
  for (int a = 0; a < N; ++a)
#pragma GCC unroll 8
    for (int b = a; b < N; ++b) {
      double v = 0;
#pragma GCC unroll 8
      for (int m = b; m < N; ++m) v += W[a][m] * W[b][m];
      out[a * N + b] = out[b * N + a] = v;
    }
  return true;
}

// The Schur update S −= E Bᵀ for a CS x PS E (row-major, at e), the row-major CS x PS block
// B at b and a CS x CS block of S at s (rows `stride` apart): most of the time of the
// Schur-Jacobi preconditioner (forming S walks observation pairs instead: update_block_columns
// below). Each entry is the dot product of multiply(), summed in increasing k from 0, computed
// four entries of a row of S at a time against a transposed copy of B (contiguous rows,
// where multiply()'s dot products stride through B; docs/benchmarks-history.md). No Eigen inside:
// the body is compiled twice, for generic x86-64 and for AVX2 + FMA (chosen once per Kernels by
// the CPU), and only code with nothing out of line can be compiled for two instruction sets
// in one program without the linker mixing the copies up.
// Four doubles as one value (GCC's vector extension): a ymm register under AVX2, two xmm
// registers in generic x86-64 code. Only ever a local (never passed or returned: its ABI
// differs between the two).
typedef double Double4 __attribute__((vector_size(32)));

template <int CS, int PS>
[[gnu::always_inline]] inline void subtract_e_bt_body(double* s, int64_t stride, const double* e,
                                                      const double* b) {
  constexpr int kFull = CS / 4 * 4;
  double bt[PS][CS];
#pragma GCC unroll 16
  for (int c = 0; c < CS; ++c)
#pragma GCC unroll 16
    for (int k = 0; k < PS; ++k) bt[k][c] = b[c * PS + k];
  for (int a = 0; a < CS; ++a) {
    double* row = s + a * stride;
#pragma GCC unroll 4
    for (int c = 0; c < kFull; c += 4) {
      Double4 sum = {0.0, 0.0, 0.0, 0.0}, term, old;
#pragma GCC unroll 16
      for (int k = 0; k < PS; ++k) {
        __builtin_memcpy(&term, &bt[k][c], sizeof term);
        sum += e[a * PS + k] * term;
      }
      __builtin_memcpy(&old, row + c, sizeof old);
      old -= sum;
      __builtin_memcpy(row + c, &old, sizeof old);
    }
#pragma GCC unroll 4
    for (int c = kFull; c < CS; ++c) {
      double sum = 0.0;
#pragma GCC unroll 16
      for (int k = 0; k < PS; ++k) sum += e[a * PS + k] * bt[k][c];
      row[c] -= sum;
    }
  }
}

using SubtractEBt = void (*)(double* s, int64_t stride, const double* e, const double* b);

template <int CS, int PS>
void subtract_e_bt_generic(double* s, int64_t stride, const double* e, const double* b) {
  subtract_e_bt_body<CS, PS>(s, stride, e, b);
}

#if defined(__x86_64__)
template <int CS, int PS>
[[gnu::target("avx2,fma")]] void subtract_e_bt_avx2(double* s, int64_t stride, const double* e,
                                                    const double* b) {
  subtract_e_bt_body<CS, PS>(s, stride, e, b);
}
#endif

// The update for fixed sizes on this CPU; null for runtime sizes (multiply() does those).
template <int CS, int PS>
SubtractEBt subtract_e_bt_for_host(bool host_isa) {
  if constexpr (CS == Eigen::Dynamic || PS == Eigen::Dynamic) {
    return nullptr;
  } else {
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (host_isa && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
      return &subtract_e_bt_avx2<CS, PS>;
#endif
    (void)host_isa;
    return &subtract_e_bt_generic<CS, PS>;
  }
}

// S_ij −= Σ_p E_ip B_jpᵀ over the pairs [begin, end) of one block (i, j) of S: what forming S
// (dense_schur, sparse_schur) spends its time in. E_ip = B_ip C_p⁻¹ is stored transposed, a
// PS x CS row-major block per observation of camera i at et + local * PS * CS; B_jp is the
// row-major CS x PS block of H at H + other. The block's sum is kept in registers over all
// its points and subtracted from the CS x CS block at s (rows `stride` apart) once: column c
// of the sum is lanes of V-wide vectors (E's column k, read contiguously from E transposed)
// times B_jp(c, k) broadcast. Columns go in groups of G, so that G times the row chunks fit in
// the registers (AVX-512: 9 x 2 accumulators of 8 doubles for CS = 9, on Zen 4 9 x 3 of 4;
// AVX2: 4 x 3 of 4);
// each group walks the pairs again. The last row chunk reads up to V − 1 doubles past an E
// (the next one's, or the scratch's padding) into lanes that are never stored. Each entry is
// summed in increasing point then k, whatever the range split. With kUpper (a diagonal
// block, i = j: a quarter of Ladybug-49's pairs) only its upper triangle is summed and
// stored: column c takes the row chunks that reach row c, 15 of the 27 multiply-adds per k
// for CS = 9 in 4-wide vectors; the lower triangle keeps what start_row put there. Like
// subtract_e_bt_body, no Eigen inside: compiled once per instruction set.
template <int CS, int PS, int V, int G, int C0, bool kUpper>
[[gnu::always_inline]] inline void update_block_columns(double* s, int64_t stride, const double* et,
                                                        const ObservationPairs::Pair* begin,
                                                        const ObservationPairs::Pair* end,
                                                        const double* H) {
  typedef double Vec __attribute__((vector_size(V * sizeof(double))));
  constexpr int kChunks = (CS + V - 1) / V;
  constexpr int kColumns = CS - C0 < G ? CS - C0 : G;
  Vec sum[kColumns][kChunks] = {};
  for (const ObservationPairs::Pair* pair = begin; pair != end; ++pair) {
    const double* e = et + int64_t{pair->local} * (PS * CS);
    const double* b = H + pair->other;
#pragma GCC unroll 16
    for (int k = 0; k < PS; ++k) {
      Vec column[kChunks];
#pragma GCC unroll 16
      for (int h = 0; h < kChunks; ++h) __builtin_memcpy(&column[h], e + k * CS + h * V, sizeof(Vec));
#pragma GCC unroll 16
      for (int c = 0; c < kColumns; ++c) {
        const double bc = b[(C0 + c) * PS + k];
#pragma GCC unroll 16
        for (int h = 0; h < kChunks; ++h)
          if (!kUpper || h * V <= C0 + c) sum[c][h] += column[h] * bc;
      }
    }
  }
#pragma GCC unroll 16
  for (int c = 0; c < kColumns; ++c) {
    double lanes[kChunks * V];
    __builtin_memcpy(lanes, sum[c], sizeof lanes);
#pragma GCC unroll 16
    for (int r = 0; r < (kUpper ? C0 + c + 1 : CS); ++r) s[r * stride + C0 + c] -= lanes[r];
  }
  if constexpr (C0 + G < CS)
    update_block_columns<CS, PS, V, G, C0 + G, kUpper>(s, stride, et, begin, end, H);
}

// update_block_columns for the whole block from column 0: the upper triangle alone when
// `upper` (a diagonal block of S).
template <int CS, int PS, int V, int G>
[[gnu::always_inline]] inline void update_block_body(double* s, int64_t stride, const double* et,
                                                     const ObservationPairs::Pair* begin,
                                                     const ObservationPairs::Pair* end, const double* H,
                                                     bool upper) {
  if (upper)
    update_block_columns<CS, PS, V, G, 0, true>(s, stride, et, begin, end, H);
  else
    update_block_columns<CS, PS, V, G, 0, false>(s, stride, et, begin, end, H);
}

// The passes over a camera's observations read (or write) point data at each observation's
// point: inverses, point vectors, the Bᵀx products. A camera's points are anywhere in the
// point arrays, and once those outgrow the caches (10^6 observations: 250k points) every
// such access misses; each pass asks for the point data this many observations ahead.
constexpr int64_t kPrefetchObservations = 8;

// et[m] = (B_ip C_p⁻¹)ᵀ, PS x CS row-major, for the observations [begin, end) of one camera,
// m counted from begin: entry (k, r) is Σ_l B_ip(r, l) C_p⁻¹(l, k), summed in increasing l.
// Four rows r at a time: column l of those rows of B gathered into one vector, then each
// row k of Eᵀ is Σ_l column_l · C_p⁻¹(l, k), a vector multiply-add per l; leftover rows one
// by one in the same order. The pass is bound by its arithmetic, not by its loads of B, so
// vector multiply-adds beat scalar products through a transposed copy of B.
template <int CS, int PS>
[[gnu::always_inline]] inline void e_transposed_body(double* et, const double* H, const double* inverses,
                                                     const SchurStructure::CameraObservation* begin,
                                                     const SchurStructure::CameraObservation* end) {
  constexpr int kFull = CS / 4 * 4;
  for (const SchurStructure::CameraObservation* c = begin; c != end; ++c, et += PS * CS) {
    if (end - c > kPrefetchObservations) __builtin_prefetch(inverses + int64_t{c[kPrefetchObservations].point} * (PS * PS));
    const double* b = H + c->offset;
    const double* inverse = inverses + int64_t{c->point} * (PS * PS);
#pragma GCC unroll 4
    for (int r = 0; r < kFull; r += 4) {
      Double4 column[PS];
#pragma GCC unroll 16
      for (int l = 0; l < PS; ++l)
        column[l] = Double4{b[r * PS + l], b[(r + 1) * PS + l], b[(r + 2) * PS + l], b[(r + 3) * PS + l]};
#pragma GCC unroll 16
      for (int k = 0; k < PS; ++k) {
        Double4 v = column[0] * inverse[k];
#pragma GCC unroll 16
        for (int l = 1; l < PS; ++l) v += column[l] * inverse[l * PS + k];
        __builtin_memcpy(et + k * CS + r, &v, sizeof v);
      }
    }
#pragma GCC unroll 4
    for (int r = kFull; r < CS; ++r)
#pragma GCC unroll 16
      for (int k = 0; k < PS; ++k) {
        double v = b[r * PS] * inverse[k];
#pragma GCC unroll 16
        for (int l = 1; l < PS; ++l) v += b[r * PS + l] * inverse[l * PS + k];
        et[k * CS + r] = v;
      }
  }
}

using ETransposed = void (*)(double* et, const double* H, const double* inverses,
                             const SchurStructure::CameraObservation* begin,
                             const SchurStructure::CameraObservation* end);

using UpdateBlock = void (*)(double* s, int64_t stride, const double* et,
                             const ObservationPairs::Pair* begin, const ObservationPairs::Pair* end,
                             const double* H, bool upper);

// Accumulators per column group: most of the vector registers (32 with AVX-512, 16 else),
// leaving some for E's column and the broadcast.
constexpr int column_group(int cs, int v, int registers) {
  const int chunks = (cs + v - 1) / v;
  const int g = registers / chunks;
  return g < 1 ? 1 : (g > cs ? cs : g);
}

template <int CS, int PS>
void e_transposed_generic(double* et, const double* H, const double* inverses,
                          const SchurStructure::CameraObservation* begin,
                          const SchurStructure::CameraObservation* end) {
  e_transposed_body<CS, PS>(et, H, inverses, begin, end);
}

template <int CS, int PS>
void update_block_generic(double* s, int64_t stride, const double* et, const ObservationPairs::Pair* begin,
                          const ObservationPairs::Pair* end, const double* H, bool upper) {
  update_block_body<CS, PS, 2, column_group(CS, 2, 12)>(s, stride, et, begin, end, H, upper);
}

#if defined(__x86_64__)
template <int CS, int PS>
[[gnu::target("avx2,fma")]] void update_block_avx2(double* s, int64_t stride, const double* et,
                                                   const ObservationPairs::Pair* begin,
                                                   const ObservationPairs::Pair* end, const double* H, bool upper) {
  update_block_body<CS, PS, 4, column_group(CS, 4, 12)>(s, stride, et, begin, end, H, upper);
}

template <int CS, int PS>
[[gnu::target("avx2,fma")]] void e_transposed_avx2(double* et, const double* H, const double* inverses,
                                                   const SchurStructure::CameraObservation* begin,
                                                   const SchurStructure::CameraObservation* end) {
  e_transposed_body<CS, PS>(et, H, inverses, begin, end);
}

template <int CS, int PS>
[[gnu::target("avx512f,fma")]] void e_transposed_avx512(double* et, const double* H, const double* inverses,
                                                        const SchurStructure::CameraObservation* begin,
                                                        const SchurStructure::CameraObservation* end) {
  e_transposed_body<CS, PS>(et, H, inverses, begin, end);
}

template <int CS, int PS>
[[gnu::target("avx512f,fma")]] void update_block_avx512(double* s, int64_t stride, const double* et,
                                                        const ObservationPairs::Pair* begin,
                                                        const ObservationPairs::Pair* end,
                                                        const double* H, bool upper) {
  update_block_body<CS, PS, 8, column_group(CS, 8, 24)>(s, stride, et, begin, end, H, upper);
}

// The update in 256-bit vectors but with AVX-512's 32 registers (AVX-512VL), for CPUs that
// execute a 512-bit operation as two 256-bit halves (AMD Zen 4): there a 512-bit broadcast
// and multiply-add cost two issue slots each, and for CS = 9 half of the second 8-row chunk's
// lanes are wasted. 81 multiply-adds of 4 lanes with 27 accumulators (all nine columns at
// once) therefore beat update_block_avx512 (54 of 8 lanes, 18 accumulators) there; a flat
// last row (27 + 7 accumulators) did not help.
template <int CS, int PS>
[[gnu::target("avx512f,avx512vl,fma")]] void update_block_avx512_halves(
    double* s, int64_t stride, const double* et, const ObservationPairs::Pair* begin,
    const ObservationPairs::Pair* end, const double* H, bool upper) {
  update_block_body<CS, PS, 4, column_group(CS, 4, 28)>(s, stride, et, begin, end, H, upper);
}
#endif

// The pair of functions that form S for fixed sizes on this CPU; nulls for runtime sizes.
struct FormS {
  ETransposed e_transposed = nullptr;
  UpdateBlock update_block = nullptr;
};

template <int CS, int PS>
FormS form_s_for_host(bool host_isa) {
  if constexpr (CS == Eigen::Dynamic || PS == Eigen::Dynamic) {
    return {};
  } else {
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (host_isa && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
        lsjit::cpu_splits_512_bit_operations())
      return {&e_transposed_avx512<CS, PS>, &update_block_avx512_halves<CS, PS>};
    if (host_isa && __builtin_cpu_supports("avx512f"))
      return {&e_transposed_avx512<CS, PS>, &update_block_avx512<CS, PS>};
    if (host_isa && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
      return {&e_transposed_avx2<CS, PS>, &update_block_avx2<CS, PS>};
#endif
    (void)host_isa;
    return {&e_transposed_generic<CS, PS>, &update_block_generic<CS, PS>};
  }
}

// The work on camera blocks alone: A and D_A.
template <int CS>
struct CameraOps {
  // ((A + D_A) x)_i.
  [[gnu::noinline]] static Vector<CS> times(const SchurStructure& s, const double* H,
                                            const double* shift, const double* x, int i) {
    const int m = s.camera_size(i);
    const double* di = shift != nullptr ? shift + s.camera_offset(i) : nullptr;
    auto sum = uninitialized<Vector<CS>>(m, 1);
    multiply<Update::Set>(sum, symmetric<CS>(H + s.camera_diagonal(i), di, m),
                          vec<CS>(x + s.camera_offset(i), m));
    for (const SchurStructure::CameraBlock& c : s.left(i)) {
      const int mj = s.camera_size(c.camera);
      multiply<Update::Add>(sum, ConstBlock<CS, CS>(H + c.offset, mj, m).transpose(),
                            vec<CS>(x + s.camera_offset(c.camera), mj));
    }
    for (const SchurStructure::CameraBlock& c : s.right(i)) {
      const int mj = s.camera_size(c.camera);
      multiply<Update::Add>(sum, ConstBlock<CS, CS>(H + c.offset, m, mj),
                            vec<CS>(x + s.camera_offset(c.camera), mj));
    }
    return sum;
  }

  // Block (i, j), i <= j, of the target as a writable row-major map.
  static StridedBlock<CS, CS> block(const SchurStructure& s, const SchurTarget& t, int i, int j) {
    const int m = s.camera_size(i), mj = s.camera_size(j);
    if (t.dense != nullptr)
      return {t.dense + s.camera_offset(i) * t.dense_stride + s.camera_offset(j), m, mj,
              Eigen::OuterStride<>(t.dense_stride)};
    // O(log row length); the product stored there costs far more.
    return {t.sparse->values().data() + t.sparse->find(i, j), m, mj, Eigen::OuterStride<>(mj)};
  }

  // Block row i of the target's upper triangle set to that of A + D_A (zero elsewhere).
  [[gnu::noinline]] static void start_row(const SchurStructure& s, const double* H,
                                          const double* shift, const SchurTarget& t, int i) {
    const int m = s.camera_size(i);
    if (t.dense != nullptr) {
      const int64_t r0 = s.camera_offset(i);
      for (int a = 0; a < m; ++a)
        std::fill(t.dense + (r0 + a) * t.dense_stride + r0,
                  t.dense + (r0 + a + 1) * t.dense_stride, 0.0);
    } else {
      const BlockPattern& p = t.sparse->pattern();
      double* values = t.sparse->values().data();
      std::fill(values + p.offset(p.row_begin(i)), values + p.offset(p.row_end(i)), 0.0);
    }
    block(s, t, i, i) =
        symmetric<CS>(H + s.camera_diagonal(i), shift ? shift + s.camera_offset(i) : nullptr, m);
    for (const SchurStructure::CameraBlock& c : s.right(i))
      block(s, t, i, c.camera) = ConstBlock<CS, CS>(H + c.offset, m, s.camera_size(c.camera));
  }

  [[gnu::noinline]] static void multiply_inverse(const SchurStructure& s, const double* inverses,
                                                 const double* r, double* z, int i) {
    const int m = s.camera_size(i);
    multiply<Update::Set>(vec<CS>(z + s.camera_offset(i), m),
                          square<CS>(inverses + s.camera_square_offset(i), m),
                          vec<CS>(r + s.camera_offset(i), m));
  }
};

template <int CS, int PS>
class Kernels final : public SchurKernels {
 public:
  Kernels(const SchurStructure& s, bool host_isa)
      : s_(s), subtract_(subtract_e_bt_for_host<CS, PS>(host_isa)), form_s_(form_s_for_host<CS, PS>(host_isa)) {}
  int camera_block_size() const override { return CS; }
  int point_block_size() const override { return PS; }

  int invert_points(const double* H, const double* shift, double* inverses, int begin,
                    int end) const override {
    for (int p = begin; p < end; ++p) {
      const int n = point_size(p);
      const double* dp = shift != nullptr ? shift + s_.camera_dim() + point_at(p) : nullptr;
      if constexpr (PS != Eigen::Dynamic) {
        if (!invert_spd_fixed<PS>(H + s_.point_diagonal(p), dp, inverses + point_square_at(p))) return p;
      } else if (!invert_spd<PS>(symmetric<PS>(H + s_.point_diagonal(p), dp, n),
                                 inverses + point_square_at(p), n)) {
        return p;
      }
    }
    return -1;
  }

  void multiply_bt(const double* H, const double* x, double* products, int begin,
                   int end) const override {
    for (int i = begin; i < end; ++i) {
      const int m = camera_size(i);
      const auto xi = vec<CS>(x + camera_at(i), m);
      const auto observations = s_.camera_observations(i);
      for (size_t q = 0; q < observations.size(); ++q) {
        const SchurStructure::CameraObservation& c = observations[q];
        if (q + kPrefetchObservations < observations.size()) {
          const SchurStructure::CameraObservation& ahead = observations[q + kPrefetchObservations];
          __builtin_prefetch(products + observation_at(ahead.point, ahead.in_point), 1);
        }
        const int n = point_size(c.point);
        multiply<Update::Set>(vec<PS>(products + observation_at(c.point, c.in_point), n),
                              ConstBlock<CS, PS>(H + c.offset, m, n).transpose(), xi);
      }
    }
  }

  void solve_points(const double* inverses, const double* b, const double* products,
                    double* out, int begin, int end) const override {
    for (int p = begin; p < end; ++p) {
      const int n = point_size(p);
      auto t = uninitialized<Vector<PS>>(n, 1);
      if (b != nullptr)
        t = vec<PS>(b + point_at(p), n);
      else
        t.setZero();
      if (products != nullptr) {
        for (int64_t q = s_.point_observations_begin(p); q < s_.point_observations_end(p); ++q)
          t -= vec<PS>(products + observation_at(p, q), n);
      }
      multiply<Update::Set>(vec<PS>(out + point_at(p), n),
                            square<PS>(inverses + point_square_at(p), n), t);
    }
  }

  void reduce_rhs(const double* H, const double* v, const double* b, double* r, int begin,
                  int end) const override {
    for (int i = begin; i < end; ++i) {
      const int m = camera_size(i);
      Vector<CS> y = vec<CS>(b + camera_at(i), m);
      add_b_times<Update::Subtract>(H, v, y, i);
      vec<CS>(r + camera_at(i), m) = y;
    }
  }

  void multiply_schur(const double* H, const double* shift, const double* x, const double* w,
                      double* y, int begin, int end) const override {
    for (int i = begin; i < end; ++i) {
      Vector<CS> sum = CameraOps<CS>::times(s_, H, shift, x, i);
      add_b_times<Update::Add>(H, w, sum, i);
      vec<CS>(y + camera_at(i), camera_size(i)) = sum;
    }
  }

  void assemble_schur(const double* H, const double* shift, const double* inverses,
                      const ObservationPairs& pairs, const SchurTarget& target, const double* b,
                      double* r, int begin, int end) const override {
    if constexpr (CS == Eigen::Dynamic || PS == Eigen::Dynamic) {
      (void)pairs;
      assemble_schur_runtime_sized(H, shift, inverses, target, b, r, begin, end);
    } else {
      assemble_schur_fixed(H, shift, inverses, pairs, target, b, r, begin, end);
    }
  }

  int invert_schur_diagonal(const double* H, const double* shift, const double* inverses,
                            double* out, int begin, int end) const override {
    for (int i = begin; i < end; ++i) {
      const int m = camera_size(i);
      Square<CS> Sii = symmetric<CS>(H + s_.camera_diagonal(i),
                                     shift != nullptr ? shift + camera_at(i) : nullptr, m);
      const auto observations = s_.camera_observations(i);
      for (size_t q = 0; q < observations.size(); ++q) {
        const SchurStructure::CameraObservation& c = observations[q];
        if (q + kPrefetchObservations < observations.size())
          __builtin_prefetch(inverses + point_square_at(observations[q + kPrefetchObservations].point));
        const int n = point_size(c.point);
        const ConstBlock<CS, PS> B(H + c.offset, m, n);
        auto E = uninitialized<RowMajor<CS, PS>>(m, n);
        multiply<Update::Set>(E, B, square<PS>(inverses + point_square_at(c.point), n));
        if (subtract_ != nullptr)  // Sii is column-major, and symmetric: its transpose
          subtract_(Sii.data(), m, E.data(), H + c.offset);
        else
          multiply<Update::Subtract>(Sii, E, B.transpose());
      }
      if (!invert_spd<CS>(Sii, out + s_.camera_square_offset(i), m)) return i;
    }
    return -1;
  }

  void multiply_camera_inverses(const double* inverses, const double* r, double* z, int begin,
                                int end) const override {
    for (int i = begin; i < end; ++i) CameraOps<CS>::multiply_inverse(s_, inverses, r, z, i);
  }

 private:
  // Sizes and offsets in camera and point vectors and in the point inverses: arithmetic on
  // a compile-time size when there is one, else the pattern's tables, which a pass over the
  // observations would read at random (the passes are bound by memory latency).
  int camera_size(int i) const {
    if constexpr (CS == Eigen::Dynamic) return s_.camera_size(i);
    return CS;
  }
  int point_size(int p) const {
    if constexpr (PS == Eigen::Dynamic) return s_.point_size(p);
    return PS;
  }
  int64_t camera_at(int i) const {
    if constexpr (CS == Eigen::Dynamic) return s_.camera_offset(i);
    return int64_t{i} * CS;
  }
  int64_t point_at(int p) const {
    if constexpr (PS == Eigen::Dynamic) return s_.point_offset(p);
    return int64_t{p} * PS;
  }
  int64_t observation_at(int p, int64_t q) const {
    if constexpr (PS == Eigen::Dynamic) return s_.observation_vector_offset(p, q);
    return q * PS;
  }
  int64_t point_square_at(int p) const {
    if constexpr (PS == Eigen::Dynamic) return s_.point_square_offset(p);
    return int64_t{p} * PS * PS;
  }

  // assemble_schur for fixed sizes: E_ip = B_ip C_p⁻¹ for camera i's observations,
  // transposed, in a scratch buffer from scratch_pool_ (update_block_columns reads up to
  // V − 1 doubles past the last), then r_i from them (a loop of its own: folded into
  // e_transposed it slowed the solve), then each block of row i from its pairs.
  void assemble_schur_fixed(const double* H, const double* shift, const double* inverses,
                            const ObservationPairs& pairs, const SchurTarget& target,
                            const double* b, double* r, int begin, int end) const {
    constexpr int64_t kE = int64_t{PS} * CS;
    const size_t needed = static_cast<size_t>(pairs.max_camera_observations() * kE + 8);
    std::vector<double> scratch = take_scratch();
    if (scratch.size() < needed) scratch.assign(needed, 0.0);
    assemble_rows_fixed(scratch.data(), H, shift, inverses, pairs, target, b, r, begin, end);
    std::lock_guard lock(scratch_mutex_);
    scratch_pool_.push_back(std::move(scratch));
  }

  // A buffer of the pool, or an empty one. Not a thread_local: its first use on a thread
  // registers a destructor under the dynamic loader's lock, which a background compile
  // holds while it loads libLLVM (a cold solve's first Schur assembly would wait for it).
  std::vector<double> take_scratch() const {
    std::lock_guard lock(scratch_mutex_);
    if (scratch_pool_.empty()) return {};
    std::vector<double> s = std::move(scratch_pool_.back());
    scratch_pool_.pop_back();
    return s;
  }

  void assemble_rows_fixed(double* et, const double* H, const double* shift, const double* inverses,
                           const ObservationPairs& pairs, const SchurTarget& target, const double* b,
                           double* r, int begin, int end) const {
    for (int i = begin; i < end; ++i) {
      CameraOps<CS>::start_row(s_, H, shift, target, i);
      const auto observations = s_.camera_observations(i);
      form_s_.e_transposed(et, H, inverses, observations.data(), observations.data() + observations.size());
      if (b != nullptr) {
        // r_i = b_i − Σ_p E_ip b_p, each term a dot product over k as multiply() sums it.
        Vector<CS> y = vec<CS>(b + camera_at(i), CS);
        const double* b_points = b + s_.camera_dim();
        const double* e = et;
        for (const SchurStructure::CameraObservation& c : observations) {
          const double* bp = b_points + point_at(c.point);
#pragma GCC unroll 16
          for (int row = 0; row < CS; ++row) {
            double v = 0;
#pragma GCC unroll 16
            for (int k = 0; k < PS; ++k) v += e[k * CS + row] * bp[k];
            y[row] -= v;
          }
          e += PS * CS;
        }
        vec<CS>(r + camera_at(i), CS) = y;
      }
      for (const ObservationPairs::Run& run : pairs.runs(i)) {
        auto S = CameraOps<CS>::block(s_, target, i, run.camera);
        form_s_.update_block(S.data(), S.outerStride(), et, pairs.pairs() + run.begin, pairs.pairs() + run.end, H,
                             run.camera == i);
      }
    }
  }

  // assemble_schur for runtime sizes: per observation of camera i, S_ij −= E B_jpᵀ in place.
  void assemble_schur_runtime_sized(const double* H, const double* shift, const double* inverses,
                                    const SchurTarget& target, const double* b, double* r,
                                    int begin, int end) const {
    for (int i = begin; i < end; ++i) {
      const int m = camera_size(i);
      CameraOps<CS>::start_row(s_, H, shift, target, i);
      auto y = uninitialized<Vector<CS>>(m, 1);
      if (b != nullptr) y = vec<CS>(b + camera_at(i), m);
      // S_ij −= B_ip C_p⁻¹ B_jpᵀ for the cameras j >= i of each point p of camera i, points in
      // increasing order: each block of row i is summed in the same order by any thread.
      for (const SchurStructure::CameraObservation& c : s_.camera_observations(i)) {
        const int n = point_size(c.point);
        auto E = uninitialized<RowMajor<CS, PS>>(m, n);
        multiply<Update::Set>(E, ConstBlock<CS, PS>(H + c.offset, m, n),
                              square<PS>(inverses + point_square_at(c.point), n));
        if (b != nullptr)
          multiply<Update::Subtract>(y, E, vec<PS>(b + s_.camera_dim() + point_at(c.point), n));
        const int64_t last = s_.point_observations_end(c.point);
        for (int64_t q = c.in_point; q < last; ++q) {
          const SchurStructure::Observation& other = s_.observation(q);
          const int mj = camera_size(other.camera);
          auto S = CameraOps<CS>::block(s_, target, i, other.camera);
          multiply<Update::Subtract>(S, E, ConstBlock<CS, PS>(H + other.offset, mj, n).transpose());
        }
      }
      if (b != nullptr) vec<CS>(r + camera_at(i), m) = y;
    }
  }

  // y (+= or −=) Σ_p B_ip w_p over camera i's points, in increasing point order.
  template <Update U>
  void add_b_times(const double* H, const double* w, Vector<CS>& y, int i) const {
    const int m = camera_size(i);
    const auto observations = s_.camera_observations(i);
    for (size_t q = 0; q < observations.size(); ++q) {
      const SchurStructure::CameraObservation& c = observations[q];
      if (q + kPrefetchObservations < observations.size())
        __builtin_prefetch(w + point_at(observations[q + kPrefetchObservations].point));
      const int n = point_size(c.point);
      multiply<U>(y, ConstBlock<CS, PS>(H + c.offset, m, n), vec<PS>(w + point_at(c.point), n));
    }
  }

  const SchurStructure& s_;
  const SubtractEBt subtract_;  // the fixed-size Schur update for this CPU, or null
  const FormS form_s_;          // the fixed-size functions forming S on this CPU, or nulls
  // assemble_schur_fixed's scratch buffers, one per call that ran at once, kept for later
  // calls.
  mutable std::mutex scratch_mutex_;
  mutable std::vector<std::vector<double>> scratch_pool_;
};

template <int CS, int PS>
std::unique_ptr<SchurKernels> make_kernels(const SchurStructure& s, bool host_isa) {
  return std::make_unique<Kernels<CS, PS>>(s, host_isa);
}

// The instantiation for camera size `cs` (1..12, else runtime-sized) and point size PS.
template <int PS, int... C>
std::unique_ptr<SchurKernels> for_camera_size(int cs, const SchurStructure& s, bool host_isa,
                                              std::integer_sequence<int, C...>) {
  std::unique_ptr<SchurKernels> kernels;
  (void)((cs == C + 1 && (kernels = make_kernels<C + 1, PS>(s, host_isa), true)) || ...);
  return kernels ? std::move(kernels) : make_kernels<Eigen::Dynamic, PS>(s, host_isa);
}

template <int PS>
std::unique_ptr<SchurKernels> for_point_size(int cs, const SchurStructure& s, bool host_isa) {
  return for_camera_size<PS>(cs, s, host_isa, std::make_integer_sequence<int, 12>{});
}

}  // namespace

std::unique_ptr<SchurKernels> make_schur_kernels(const SchurStructure& s, bool host_isa) {
  const int cs = s.uniform_camera_size();
  switch (s.uniform_point_size()) {
    case 1: return for_point_size<1>(cs, s, host_isa);
    case 2: return for_point_size<2>(cs, s, host_isa);
    case 3: return for_point_size<3>(cs, s, host_isa);
    case 4: return for_point_size<4>(cs, s, host_isa);
  }
  return make_kernels<Eigen::Dynamic, Eigen::Dynamic>(s, host_isa);
}

}  // namespace lsjit::linear
