// The numeric kernels of the Schur complement solvers (internal to runtime/solve/linear), compiled
// for fixed camera and point block sizes. Nearly all of a Schur solver's time goes into
// products of small blocks: B_ip (C_p + D_p)⁻¹ B_jpᵀ for every two observations of a point,
// and B_ipᵀx_i, B_ip w_p in every CG iteration. With the sizes known at compile time the
// compiler unrolls them and temporaries live on the stack; with runtime sizes the loops are
// general and temporaries are allocated. On a 9/3 problem the fully runtime-sized fallback
// is markedly slower (a runtime camera size alone costs little: the passes are bound by
// memory, and the point size sets the innermost loops).
//
// make_schur_kernels dispatches once, on the structure's uniform camera and point sizes, to
// an instantiation for those sizes: every camera size 1..12 with every point size 1..4, a
// runtime camera size with each of those point sizes (cameras of mixed sizes), and a
// fully runtime-sized fallback for everything else.
//
// Each kernel works on a range [begin, end) of cameras or points and writes only the outputs
// of that range, each computed in a fixed order (observations in increasing camera or point
// order). So any split of the range over threads gives bit-identical results. Vectors follow
// SchurStructure's layout: camera vectors indexed by camera_offset(i), point vectors by
// point_offset(p), H is the values() of the full matrix, shift is dim() doubles or null.
#pragma once

#include <memory>

#include "lsjit/runtime/solve/linear/schur_structure.h"

namespace lsjit::linear {

// Where assemble_schur writes the upper blocks (i, j), i <= j, of S: a dense row-major
// matrix, or (when dense is null) a BlockSparseSymmetric with the reduced pattern.
struct SchurTarget {
  double* dense = nullptr;
  int64_t dense_stride = 0;  // scalar row length of the dense matrix
  BlockSparseSymmetric* sparse = nullptr;
};

class SchurKernels {
 public:
  virtual ~SchurKernels() = default;

  // The compile-time (camera, point) block sizes, Eigen::Dynamic (-1) when runtime-sized.
  virtual int camera_block_size() const = 0;
  virtual int point_block_size() const = 0;

  // inverses_p = (C_p + D_p)⁻¹ by Cholesky, for points [begin, end). Returns the first point
  // whose C_p + D_p is not positive definite, -1 if none.
  virtual int invert_points(const double* H, const double* shift, double* inverses, int begin,
                            int end) const = 0;

  // products_q = B_ipᵀ x_i for every observation q of cameras [begin, end), at
  // observation_vector_offset. Bᵀx is needed per point, but H stores B camera by camera: this
  // pass reads B in storage order and leaves each point's terms adjacent for solve_points
  // (reading B point by point would fetch a random 200-byte block per term).
  virtual void multiply_bt(const double* H, const double* x, double* products, int begin,
                           int end) const = 0;

  // out_p = inverses_p (b_p − Σ_q products_q), the sum over point p's observations in camera
  // order, for points [begin, end); b or products null is zero.
  virtual void solve_points(const double* inverses, const double* b, const double* products,
                            double* out, int begin, int end) const = 0;

  // r_i = b_i − Σ_p B_ip v_p for cameras [begin, end).
  virtual void reduce_rhs(const double* H, const double* v, const double* b, double* r, int begin,
                          int end) const = 0;

  // y_i = ((A + D_A) x)_i + Σ_p B_ip w_p for cameras [begin, end). With w = solve_points(b =
  // null, products = multiply_bt(x)) this is y = S x.
  virtual void multiply_schur(const double* H, const double* shift, const double* x,
                              const double* w, double* y, int begin, int end) const = 0;

  // Block rows [begin, end) of S = A + D_A − Σ_p B_p inverses_p B_pᵀ: every stored block
  // (i, j), j >= i, of those rows is overwritten; of a diagonal block only the upper
  // triangle is S's (the lower one is never read, as in H; it may hold A + D_A's). pairs is the
  // structure's ObservationPairs; each block's sum over its points is taken in increasing
  // point order. When b (the full right-hand side, dim() doubles) is not null, also the
  // reduced right-hand side of those cameras, r_i = b_i − Σ_p E_ip b_p with E_ip = B_ip
  // inverses_p, summed in increasing point order: E is at hand there, so this saves
  // reduce_rhs' pass over B (mathematically the same r; it rounds differently).
  virtual void assemble_schur(const double* H, const double* shift, const double* inverses,
                              const ObservationPairs& pairs, const SchurTarget& target,
                              const double* b, double* r, int begin, int end) const = 0;

  // out_i = (S_ii)⁻¹ by Cholesky, for cameras [begin, end): the Schur-Jacobi preconditioner.
  // Returns the first camera whose S_ii is not positive definite, -1 if none.
  virtual int invert_schur_diagonal(const double* H, const double* shift, const double* inverses,
                                    double* out, int begin, int end) const = 0;

  // z_i = inverses_i r_i for cameras [begin, end) (inverses from invert_schur_diagonal).
  virtual void multiply_camera_inverses(const double* inverses, const double* r, double* z,
                                        int begin, int end) const = 0;
};

// The kernels for structure's block sizes (see the file comment). structure must outlive them.
// host_isa: with fixed sizes, the Schur update (S −= B C⁻¹ Bᵀ, in assemble_schur and
// invert_schur_diagonal) uses AVX-512 or AVX2 + FMA where the CPU has them; false keeps
// generic x86-64 code everywhere (tests compare the two). The results differ by rounding
// (FMA), and are bit-identical for any split of the ranges either way.
std::unique_ptr<SchurKernels> make_schur_kernels(const SchurStructure& structure, bool host_isa = true);

}  // namespace lsjit::linear
