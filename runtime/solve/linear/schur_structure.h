// The block structure a Schur complement solver works on, computed once from a BlockPattern
// and the index of the first eliminated block.
//
// Bundle adjustment has two kinds of variables: cameras and points. No cost couples two
// points, so with the points ordered last the normal-equation matrix is
//
//   H = [ A   B ]     A: cameras x cameras (block-sparse, usually block diagonal)
//       [ Bᵀ  C ]     B: cameras x points, one block per observation
//                     C: points x points, block diagonal
//
// and the points can be eliminated one by one. In this file "camera" means any block that is
// kept (block index < first_eliminated_block) and "point" any block that is eliminated; a
// point is numbered from 0 (point p is block first_eliminated_block + p). An "observation"
// is a stored block B_ip of H between camera i and point p.
//
// Everything here is linear in the number of stored blocks of H (observations included),
// except reduced_pairs(), whose output is the pattern of the reduced camera system.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "lsjit/runtime/evaluate/huge_page_allocator.h"
#include "lsjit/runtime/solve/linear/block_sparse.h"

namespace lsjit::linear {

// Where a Schur solver could start eliminating: the first block of the longest run of
// trailing blocks that have the size of the last block and are coupled to no other block of
// the run (no stored block between two of them). nullopt for a pattern without blocks. For a
// bundle adjustment pattern with the points last, this is the first point; a camera that sees
// no point and happens to be last is not included, as its size differs. Point blocks of
// mixed sizes are not found this way; pass first_eliminated_block explicitly for those.
std::optional<int> eliminable_suffix(const BlockPattern& pattern);

class SchurStructure {
 public:
  struct Observation {
    int camera;      // block index of the camera
    int point;       // point number (block first_eliminated_block + point)
    int64_t offset;  // of the block B_ip (camera row, point column) in H's values()
  };
  // An observation as seen from its camera: self-contained, so that a pass over a camera's
  // points reads one contiguous array (and H's row, which holds the B blocks in this order).
  struct CameraObservation {
    int point;
    int64_t offset;    // of B_ip in H's values()
    int64_t in_point;  // index of the same observation in the point-major storage
  };
  struct CameraBlock {
    int camera;      // the other camera of an off-diagonal camera-camera block
    int64_t offset;  // of the stored block in H's values()
  };

  // Throws lsjit::Error when first_eliminated_block is not in [0, num_blocks], or when two
  // eliminated blocks share a stored block (the eliminated part of H would not be block
  // diagonal). pattern must not be null.
  SchurStructure(std::shared_ptr<const BlockPattern> pattern, int first_eliminated_block);

  const BlockPattern& pattern() const { return *pattern_; }
  int first_eliminated_block() const { return first_point_; }
  int num_cameras() const { return first_point_; }
  int num_points() const { return pattern_->num_blocks() - first_point_; }

  // Scalar layout. Camera vectors are the first camera_dim() entries of a dim() vector;
  // point vectors are the last point_dim() entries, indexed from 0 by point_offset(p).
  int64_t camera_dim() const { return pattern_->scalar_offset(first_point_); }
  int64_t point_dim() const { return pattern_->dim() - camera_dim(); }
  int camera_size(int i) const { return pattern_->block_size(i); }
  int point_size(int p) const { return pattern_->block_size(first_point_ + p); }
  int64_t camera_offset(int i) const { return pattern_->scalar_offset(i); }
  int64_t point_offset(int p) const {
    return pattern_->scalar_offset(first_point_ + p) - camera_dim();
  }
  // The size every camera (point) block has, or 0 when they differ or there are none: what
  // the fixed-size kernels are chosen by.
  int uniform_camera_size() const { return uniform_camera_size_; }
  int uniform_point_size() const { return uniform_point_size_; }

  // Offsets in H's values() of the diagonal blocks A_ii and C_p.
  int64_t camera_diagonal(int i) const { return pattern_->offset(pattern_->row_begin(i)); }
  int64_t point_diagonal(int p) const {
    return pattern_->offset(pattern_->row_begin(first_point_ + p));
  }

  // The camera-camera blocks of H off the diagonal that touch camera i: right(i) are the
  // stored blocks (i, j), j > i, in increasing j; left(i) the stored blocks (j, i), j < i, in
  // increasing j, which multiply transposed. Together with the diagonal: block row i of A.
  std::span<const CameraBlock> right(int i) const { return slice(right_, right_begin_, i); }
  std::span<const CameraBlock> left(int i) const { return slice(left_, left_begin_, i); }

  // The observations of point p, in increasing camera order (point-major storage).
  std::span<const Observation> point_observations(int p) const {
    return {observations_.data() + point_begin_[p],
            static_cast<size_t>(point_begin_[p + 1] - point_begin_[p])};
  }
  // The observations of camera i, in increasing point order. For one of them, c, the cameras
  // after camera i that also observe c.point are observation(q) for in_point < q <
  // point_observations_end(c.point).
  std::span<const CameraObservation> camera_observations(int i) const {
    return slice(camera_observations_, camera_begin_, i);
  }
  const Observation& observation(int64_t q) const { return observations_[q]; }
  int64_t point_observations_begin(int p) const { return point_begin_[p]; }
  int64_t point_observations_end(int p) const { return point_begin_[p + 1]; }
  int64_t num_observations() const { return static_cast<int64_t>(observations_.size()); }

  // One point-sized vector per observation, back to back in point-major order (a point's
  // vectors adjacent): where observation q of point p keeps its vector, and the total size.
  int64_t observation_vector_offset(int p, int64_t q) const {
    return observation_vector_begin_[p] + (q - point_begin_[p]) * point_size(p);
  }
  int64_t observation_vector_total() const { return observation_vector_begin_.back(); }

  // Storage for one square matrix per point (size_p²) or per camera (size_i²), back to back.
  int64_t point_square_offset(int p) const { return point_square_[p]; }
  int64_t point_square_total() const { return point_square_.back(); }
  int64_t camera_square_offset(int i) const { return camera_square_[i]; }
  int64_t camera_square_total() const { return camera_square_.back(); }

  // The blocks (i, j), i < j, of the reduced camera system S = A − B C⁻¹ Bᵀ that may be
  // nonzero: those of A, and every two cameras that observe a common point. In the form
  // BlockPattern takes, each pair once.
  std::vector<std::pair<int, int>> reduced_pairs() const;
  std::vector<int> camera_sizes() const;

 private:
  template <typename Vector>
  static std::span<const typename Vector::value_type> slice(const Vector& v, const std::vector<int64_t>& begin,
                                                            int i) {
    return {v.data() + begin[i], static_cast<size_t>(begin[i + 1] - begin[i])};
  }

  std::shared_ptr<const BlockPattern> pattern_;
  int first_point_;
  int uniform_camera_size_ = 0, uniform_point_size_ = 0;
  std::vector<CameraBlock> right_, left_;
  std::vector<int64_t> right_begin_, left_begin_;       // num_cameras + 1
  detail::BigVector<Observation> observations_;         // point-major
  detail::BigVector<int64_t> point_begin_;              // num_points + 1
  detail::BigVector<int64_t> observation_vector_begin_;  // num_points + 1
  detail::BigVector<CameraObservation> camera_observations_;  // camera-major
  std::vector<int64_t> camera_begin_;                   // num_cameras + 1
  detail::BigVector<int64_t> point_square_, camera_square_;  // count + 1
};

// Every two observations of a point, (B_ip, B_jp) with camera i <= j (i = j included),
// grouped by the block (i, j) of S they update, S_ij −= B_ip C_p⁻¹ B_jpᵀ: what the direct
// Schur solvers walk to form S. With a block's pairs adjacent its sum stays in registers
// until it is stored once, where walking the observations of camera i updated S_ij in memory
// once per pair (loads and stores of 81 doubles for 243 multiply-adds on BAL). Built once
// from the structure (which must outlive it); 16 bytes per pair: Σ_p k_p(k_p + 1)/2 pairs
// for points seen k_p times (Ladybug-49: 119k, 1.9 MB).
class ObservationPairs {
 public:
  struct Pair {
    int64_t other;  // offset in H's values() of B_jp
    int32_t local;  // index of B_ip in camera_observations(i)
  };
  struct Run {  // the pairs of block (i, camera), pairs()[begin, end), in increasing point
    int camera;
    int64_t begin, end;
  };
  // How the pairs are listed (the same list either way): by point, with a counter per block
  // of S, or by camera, with a counter per camera; Auto takes by point unless the counters
  // would outnumber the pairs. The choice is for tests.
  enum class Walk { Auto, ByPoint, ByCamera };
  explicit ObservationPairs(const SchurStructure& structure, Walk walk = Walk::Auto);

  // Block row i's runs, in increasing camera j (j >= i).
  std::span<const Run> runs(int i) const {
    return {runs_.data() + run_begin_[i], static_cast<size_t>(run_begin_[i + 1] - run_begin_[i])};
  }
  const Pair* pairs() const { return pairs_.data(); }
  int64_t num_pairs() const { return static_cast<int64_t>(pairs_.size()); }
  // The most observations any camera has: the rows a scratch of B_ip C_p⁻¹ needs.
  int64_t max_camera_observations() const { return max_camera_observations_; }

 private:
  detail::BigVector<Pair> pairs_;
  std::vector<Run> runs_;
  std::vector<int64_t> run_begin_;  // num_cameras + 1
  int64_t max_camera_observations_ = 0;

  void list_by_point(const SchurStructure& structure);
  void list_by_camera(const SchurStructure& structure);
};

}  // namespace lsjit::linear
