// Dense kernels of SupernodalCholesky on one supernode's panel (column-major, leading
// dimension ld; see supernodal_analysis.h), in double or in float (T; the float ones serve
// the mixed-precision solves, supernodal_cholesky.h). Mostly loops of our own, compiled per
// instruction set (AVX-512, AVX2+FMA, generic) and chosen at run time; a float vector holds
// twice the lanes of a double one. factor_panel and below_product call OpenBLAS (d* or s*
// routines) for large panels only, where its cache blocking pays.
//
//   factor_panel:     the panel's n columns ← their Cholesky factor: the n x n diagonal
//                     block ← L11 (lower triangle read and written; its upper triangle is
//                     scratch, overwritten) and the m = ld - n rows below ← themselves ·
//                     L11⁻ᵀ. Returns the first column whose pivot is not > 0 (NaN
//                     included), or -1 (the panel is then partly overwritten). Blocked:
//                     each 16 columns factored down all ld rows, then the columns right of
//                     them updated in register tiles; reads up to kProductRowPad - 1
//                     scalars past the panel's last column. Panels above a million
//                     entries: OpenBLAS' potrf and trsm.
//   below_product:    W (m x m, leading dimension ldw = product_leading_dimension(m), lower
//                     triangle) ← L_b L_bᵀ of the block below. Our loops keep tiles of W in
//                     registers over the block's columns; they read up to kProductRowPad - 1
//                     scalars past each column of the block (the arena is padded for it) and
//                     write W's rows and columns up to ldw.
//   subtract_update:  one ancestor's share of W: the target panel's columns rows[w] -
//                     column_begin (w in [first, last)) −= W's column w from row w down,
//                     through the row runs (W's rows [source_row, + length) land on the
//                     target's rows [target_row, + length)).
//   below_multiply:   g (m) ← B y (m x n block B at panel + n, y of n), for the forward
//                     substitution;
//   below_multiply_transposed: y (n) −= Bᵀ g, for the back substitution.
//   diagonal_solve:   y (n) ← L⁻¹ y for the panel's lower-triangular diagonal block L, the
//                     forward substitution's own rows; diagonal_solve_transposed: y ← L⁻ᵀ y
//                     (blocks of fewer than 24 columns by scalar loops, larger ones by the
//                     kernels' solve_diagonal and solve_diagonal_transposed).
#pragma once

#include <cstdint>

#include "lsjit/runtime/solve/linear/supernodal_analysis.h"

namespace lsjit::linear::supernodal {

// Loads OpenBLAS (dlopen: it is not linked, so a process whose factorizations never call
// it does not pay for loading it), sets it single-threaded (lsjit does the threading) and
// joins the idle workers that its pthread build starts when loaded. The BLAS kernels call
// it on first use; tests and benchmarks may call it to load early. Thread-safe; only the
// first successful call does anything. Throws lsjit::Error naming the library when it
// cannot be loaded. Process-wide: a program that links OpenBLAS and wants it threaded for
// its own calls sets openblas_set_num_threads again after lsjit's first large factorization.
void init_blas();

// Debian 12's OpenBLAS (0.3.21) does not know AMD's Zen 5 and runs its Haswell (AVX2)
// kernels there; its SkylakeX (AVX-512) kernels factor sphere2500 about 13% faster
// (docs/linear_solvers.md). OpenBLAS reads its choice from OPENBLAS_CORETYPE when it is
// loaded, so this sets OPENBLAS_CORETYPE=SkylakeX on an AMD CPU with full-width AVX-512
// (x86-64-v4, not split: common/cpu.h) unless the variable is already set, and does
// nothing elsewhere. setenv is not thread-safe: call it first thing in main(), before any
// thread exists (the CLI and the benchmarks do), and before OpenBLAS is loaded.
void prefer_avx512_blas();

template <class T>
int64_t factor_panel(T* panel, int64_t n, int64_t ld);

inline constexpr int64_t kProductRowPad = 16;
inline int64_t product_leading_dimension(int64_t m) {
  return (m + kProductRowPad - 1) / kProductRowPad * kProductRowPad;
}
template <class T>
void below_product(const T* panel, int64_t n, int64_t m, int64_t ld, T* W, int64_t ldw);
template <class T>
void subtract_update(const T* W, int64_t ldw, int64_t first, int64_t last, const int64_t* rows,
                     int64_t column_begin, T* target, int64_t target_ld,
                     const SupernodalAnalysis::RowRun* runs, int64_t num_runs);

// The loops of our own, per instruction set (signatures as above, on the block below where
// the function above takes the panel: product(panel + n, ...)), for tests and benchmarks;
// the functions above use host_kernels(): AVX-512 where its units are 512 bits wide, else
// AVX2+FMA where present, else generic.
enum class Isa { Generic, Avx2, Avx512 };
template <class T>
struct KernelsOf {
  // Unblocked, column by column: the diagonal block alone, the rows below given it, and
  // both in one pass (the same arithmetic as the two, bit for bit). factor_panel() no
  // longer calls these three: factor_blocked's blocks are factor_panel's loop. They stay
  // as the reference the tests hold the loop to.
  int64_t (*factor)(T* panel, int64_t n, int64_t ld);
  void (*solve)(T* panel, int64_t n, int64_t m, int64_t ld);
  int64_t (*factor_panel)(T* panel, int64_t n, int64_t ld);
  // Blocked (factor_panel above): factor_panel on each 16 columns, register tiles between.
  int64_t (*factor_blocked)(T* panel, int64_t n, int64_t ld);
  void (*product)(const T* below, int64_t n, int64_t m, int64_t ld, T* W, int64_t ldw);
  void (*subtract)(const T* W, int64_t ldw, int64_t first, int64_t last, const int64_t* rows,
                   int64_t column_begin, T* target, int64_t target_ld,
                   const SupernodalAnalysis::RowRun* runs, int64_t num_runs);
  void (*multiply)(const T* below, int64_t n, int64_t m, int64_t ld, const T* y, T* g);
  void (*multiply_transposed)(const T* below, int64_t n, int64_t m, int64_t ld, const T* g, T* y);
  void (*solve_diagonal)(const T* panel, int64_t n, int64_t ld, T* y);
  void (*solve_diagonal_transposed)(const T* panel, int64_t n, int64_t ld, T* y);
};
using Kernels = KernelsOf<double>;
bool isa_supported(Isa isa);
template <class T = double>
const KernelsOf<T>& kernels(Isa isa);  // whether or not the host supports it
template <class T = double>
const KernelsOf<T>& host_kernels();

template <class T>
void below_multiply(const T* panel, int64_t n, int64_t m, int64_t ld, const T* y, T* g);
template <class T>
void below_multiply_transposed(const T* panel, int64_t n, int64_t m, int64_t ld, const T* g,
                               T* y);
template <class T>
void diagonal_solve(const T* panel, int64_t n, int64_t ld, T* y);
template <class T>
void diagonal_solve_transposed(const T* panel, int64_t n, int64_t ld, T* y);

}  // namespace lsjit::linear::supernodal
