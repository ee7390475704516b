#include "lsjit/runtime/solve/linear/schur_structure.h"

#include <algorithm>
#include <string>

#include "lsjit/common/error.h"

namespace lsjit::linear {

std::optional<int> eliminable_suffix(const BlockPattern& pattern) {
  const int n = pattern.num_blocks();
  if (n == 0) return std::nullopt;
  // A stored block (i, j), i < j, forbids eliminating both, so the run must start after i.
  int start = n - 1;
  const int size = pattern.block_size(n - 1);
  while (start > 0 && pattern.block_size(start - 1) == size) --start;
  for (int i = start; i < n; ++i)
    if (pattern.row_end(i) - pattern.row_begin(i) > 1) start = i + 1;
  return start;
}

namespace {

// Prefix sums of size² over blocks [begin, end).
detail::BigVector<int64_t> square_offsets(const BlockPattern& p, int begin, int end) {
  detail::BigVector<int64_t> offsets{0};
  for (int i = begin; i < end; ++i)
    offsets.push_back(offsets.back() + int64_t{p.block_size(i)} * p.block_size(i));
  return offsets;
}

}  // namespace

SchurStructure::SchurStructure(std::shared_ptr<const BlockPattern> pattern,
                               int first_eliminated_block)
    : pattern_(std::move(pattern)), first_point_(first_eliminated_block) {
  const BlockPattern& p = *pattern_;
  const int n = p.num_blocks(), e = first_point_;
  if (e < 0 || e > n)
    throw Error("Schur solver: first_eliminated_block = " + std::to_string(e) + " is outside [0, " +
                std::to_string(n) + "]");
  for (int q = e; q < n; ++q)
    if (p.row_end(q) - p.row_begin(q) > 1)
      throw Error("Schur solver: eliminated blocks " + std::to_string(q) + " and " +
                  std::to_string(p.col(p.row_begin(q) + 1)) +
                  " are coupled (a cost involves both); blocks from first_eliminated_block = " +
                  std::to_string(e) + " on must be coupled only to blocks before it");
  uniform_camera_size_ = p.uniform_block_size(0, e);
  uniform_point_size_ = p.uniform_block_size(e, n);
  point_square_ = square_offsets(p, e, n);
  camera_square_ = square_offsets(p, 0, e);

  // One pass over the camera rows of H: row i holds (i, i), then the blocks (i, j) with
  // j > i a camera, then the observations (i, point), each group in increasing column.
  const int np = n - e;
  std::vector<int64_t> left_count(e + 1, 0);
  point_begin_.assign(np + 1, 0);
  right_begin_.push_back(0);
  for (int i = 0; i < e; ++i) {
    for (int64_t k = p.row_begin(i) + 1; k < p.row_end(i); ++k) {
      const int j = p.col(k);
      if (j < e) {
        right_.push_back({j, p.offset(k)});
        ++left_count[j + 1];
      } else {
        ++point_begin_[j - e + 1];
      }
    }
    right_begin_.push_back(static_cast<int64_t>(right_.size()));
  }
  for (int i = 0; i < e; ++i) left_count[i + 1] += left_count[i];
  observation_vector_begin_.assign(np + 1, 0);
  for (int q = 0; q < np; ++q) {
    observation_vector_begin_[q + 1] = observation_vector_begin_[q] + point_begin_[q + 1] * point_size(q);
    point_begin_[q + 1] += point_begin_[q];
  }
  left_begin_ = left_count;
  left_.resize(right_.size());
  observations_.resize(point_begin_[np]);
  camera_observations_.reserve(observations_.size());
  camera_begin_.push_back(0);
  detail::BigVector<int64_t> point_next(point_begin_.begin(), point_begin_.end() - 1);
  // Scattering in increasing camera order keeps each point's list (and left(j)) sorted.
  for (int i = 0; i < e; ++i) {
    for (const CameraBlock& b : right(i)) left_[left_count[b.camera]++] = {i, b.offset};
    for (int64_t k = p.row_begin(i) + 1; k < p.row_end(i); ++k) {
      const int j = p.col(k);
      if (j < e) continue;
      const int64_t o = point_next[j - e]++;
      observations_[o] = {i, j - e, p.offset(k)};
      camera_observations_.push_back({j - e, p.offset(k), o});
    }
    camera_begin_.push_back(static_cast<int64_t>(camera_observations_.size()));
  }
}

std::vector<std::pair<int, int>> SchurStructure::reduced_pairs() const {
  std::vector<std::pair<int, int>> pairs;
  std::vector<int> marked(num_cameras(), -1);  // marked[j] == i: (i, j) already listed
  for (int i = 0; i < num_cameras(); ++i) {
    for (const CameraBlock& b : right(i)) {
      marked[b.camera] = i;
      pairs.emplace_back(i, b.camera);
    }
    for (const CameraObservation& c : camera_observations(i)) {
      const int64_t end = point_observations_end(c.point);
      for (int64_t q = c.in_point + 1; q < end; ++q) {
        const int j = observations_[q].camera;
        if (marked[j] == i) continue;
        marked[j] = i;
        pairs.emplace_back(i, j);
      }
    }
  }
  return pairs;
}

std::vector<int> SchurStructure::camera_sizes() const {
  std::vector<int> sizes(num_cameras());
  for (int i = 0; i < num_cameras(); ++i) sizes[i] = camera_size(i);
  return sizes;
}

ObservationPairs::ObservationPairs(const SchurStructure& s, Walk walk) {
  int64_t total = 0;  // Σ_p k_p(k_p + 1)/2: one allocation (growing it row by row copied it)
  for (int p = 0; p < s.num_points(); ++p) {
    const int64_t k = s.point_observations_end(p) - s.point_observations_begin(p);
    total += k * (k + 1) / 2;
  }
  pairs_.resize(static_cast<size_t>(total));
  run_begin_.reserve(static_cast<size_t>(s.num_cameras()) + 1);
  run_begin_.push_back(0);
  for (int i = 0; i < s.num_cameras(); ++i)
    max_camera_observations_ =
        std::max<int64_t>(max_camera_observations_, static_cast<int64_t>(s.camera_observations(i).size()));
  // A counter per block (i, j) of S costs num_cameras² entries: taken while that is no more
  // than the pairs themselves (dense Schur's cameras, not a city's).
  const int64_t blocks = int64_t{s.num_cameras()} * s.num_cameras();
  if (walk == Walk::ByPoint || (walk == Walk::Auto && blocks <= std::max<int64_t>(total, 1 << 16)))
    list_by_point(s);
  else
    list_by_camera(s);
}

// Per block row i, a counting sort of the row's pairs by the other camera j: counted, then
// placed, each run in increasing point (camera i's observations are in that order).
void ObservationPairs::list_by_camera(const SchurStructure& s) {
  std::vector<int64_t> next(s.num_cameras(), 0);
  std::vector<int> touched;
  int64_t at = 0;
  auto for_each_pair = [&](int i, auto&& visit) {
    const auto observations = s.camera_observations(i);
    for (size_t m = 0; m < observations.size(); ++m) {
      const SchurStructure::CameraObservation& c = observations[m];
      for (int64_t q = c.in_point; q < s.point_observations_end(c.point); ++q)
        visit(static_cast<int32_t>(m), s.observation(q));
    }
  };
  for (int i = 0; i < s.num_cameras(); ++i) {
    touched.clear();
    for_each_pair(i, [&](int32_t, const SchurStructure::Observation& o) {
      if (next[o.camera]++ == 0) touched.push_back(o.camera);
    });
    std::sort(touched.begin(), touched.end());
    for (int j : touched) {
      runs_.push_back({j, at, at + next[j]});
      const int64_t count = next[j];
      next[j] = at;
      at += count;
    }
    run_begin_.push_back(static_cast<int64_t>(runs_.size()));
    for_each_pair(i, [&](int32_t m, const SchurStructure::Observation& o) {
      pairs_[static_cast<size_t>(next[o.camera]++)] = {o.offset, m};
    });
    for (int j : touched) next[j] = 0;
  }
}

// One counting sort of all pairs by their block (i, j), walking the points in order: each
// point's observations are adjacent and in increasing camera, where a walk by camera
// would jump to a point's list from every observation of it.
void ObservationPairs::list_by_point(const SchurStructure& s) {
  const int cameras = s.num_cameras();
  detail::BigVector<int32_t> local(static_cast<size_t>(s.num_observations()));  // in its camera's list
  for (int i = 0; i < cameras; ++i) {
    const auto observations = s.camera_observations(i);
    for (size_t m = 0; m < observations.size(); ++m) local[observations[m].in_point] = static_cast<int32_t>(m);
  }
  detail::BigVector<int64_t> next(static_cast<size_t>(cameras) * cameras, 0);  // per block (i, j)
  auto for_each_pair = [&](auto&& visit) {
    for (int p = 0; p < s.num_points(); ++p) {
      const int64_t end = s.point_observations_end(p);
      for (int64_t a = s.point_observations_begin(p); a < end; ++a) {
        int64_t* row = next.data() + int64_t{s.observation(a).camera} * cameras;
        for (int64_t b = a; b < end; ++b) visit(row + s.observation(b).camera, a, s.observation(b));
      }
    }
  };
  for_each_pair([](int64_t* count, int64_t, const SchurStructure::Observation&) { ++*count; });
  int64_t at = 0;
  for (int i = 0; i < cameras; ++i) {
    for (int j = i; j < cameras; ++j) {
      int64_t& count = next[static_cast<size_t>(i) * cameras + j];
      if (count == 0) continue;
      runs_.push_back({j, at, at + count});
      const int64_t first = at;
      at += count;
      count = first;
    }
    run_begin_.push_back(static_cast<int64_t>(runs_.size()));
  }
  for_each_pair([&](int64_t* slot, int64_t a, const SchurStructure::Observation& o) {
    pairs_[static_cast<size_t>((*slot)++)] = {o.offset, local[a]};
  });
}

}  // namespace lsjit::linear
