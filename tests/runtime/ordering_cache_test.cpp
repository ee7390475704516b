// The sparse Cholesky's ordering cached by structure (runtime/ordering_cache.h): an
// analysis made from a stored ordering is the analysis made from scratch, a stored ordering
// that is not a permutation of the pattern's blocks is never used, and a solve whose
// ordering came from the disk is bit-identical to one that computed it.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "../support/random_block_sparse.h"
#include "lsjit/compiler/kernel_cache.h"
#include "lsjit/ir/error.h"
#include "lsjit/runtime/io/synthetic.h"
#include "lsjit/runtime/ordering_cache.h"
#include "lsjit/runtime/pose_graph_problem.h"

using namespace lsjit;
using linear::SupernodalAnalysis;
using linear::SupernodalOrdering;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name)
      : path(fs::path(LSJIT_TEST_TMP_DIR) / ("ordering_" + name + "_" + std::to_string(::getpid()))) {
    fs::remove_all(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

compiler::KernelCache::Options on_disk(const fs::path& dir, std::ostream* log = nullptr) {
  compiler::KernelCache::Options o;
  o.directory = dir;
  o.log = log;
  o.quiet = log == nullptr;
  return o;
}

void check_same(const SupernodalAnalysis& a, const SupernodalAnalysis& b) {
  CHECK(a.ordering == b.ordering);
  CHECK(a.ordered_blocks == b.ordered_blocks);
  CHECK(a.block_perm == b.block_perm);
  CHECK(a.scalar_perm == b.scalar_perm);
  CHECK(a.column_begin == b.column_begin);
  CHECK(a.row_begin == b.row_begin);
  CHECK(a.row_index == b.row_index);
  CHECK(a.panel_offset == b.panel_offset);
  CHECK(a.update_begin == b.update_begin);
  CHECK(a.updates.size() == b.updates.size());
  CHECK(a.runs.size() == b.runs.size());
  CHECK(a.factorization_flops == b.factorization_flops);
  CHECK(a.factor_nonzeros == b.factor_nonzeros);
  REQUIRE(a.block_target.size() == b.block_target.size());
  for (size_t k = 0; k < a.block_target.size(); ++k) {
    CHECK(a.block_target[k].offset == b.block_target[k].offset);
    CHECK(a.block_target[k].ld == b.block_target[k].ld);
  }
}

linear::BlockSparseSymmetric random_pattern(uint64_t seed, int blocks) {
  std::mt19937_64 rng(seed);
  return lsjit::testing::make_matrix(lsjit::testing::random_block_structure(rng, blocks));
}

}  // namespace

TEST_CASE("ordering cache: an analysis from a given ordering is the analysis from scratch") {
  for (uint64_t seed : {1u, 2u, 3u}) {
    const linear::BlockSparseSymmetric A = random_pattern(seed, 60);
    for (SupernodalOrdering ordering : {SupernodalOrdering::Amd, SupernodalOrdering::NestedDissection,
                                        SupernodalOrdering::Automatic}) {
      CAPTURE(seed);
      CAPTURE(linear::supernodal_ordering_name(ordering));
      const SupernodalAnalysis scratch = linear::analyze_supernodal(A.pattern(), ordering);
      REQUIRE(scratch.ordered_blocks.size() == static_cast<size_t>(A.num_blocks()));
      check_same(linear::analyze_supernodal(A.pattern(), scratch.ordering, scratch.ordered_blocks), scratch);
    }
  }
}

TEST_CASE("ordering cache: a given ordering that is not a permutation of the blocks is refused") {
  const linear::BlockSparseSymmetric A = random_pattern(4, 20);
  std::vector<int> good(20);
  for (int k = 0; k < 20; ++k) good[k] = 19 - k;
  CHECK_NOTHROW(linear::analyze_supernodal(A.pattern(), SupernodalOrdering::Amd, good));
  std::vector<int> shorter(good.begin(), good.end() - 1), repeated = good, outside = good, negative = good;
  repeated[3] = repeated[4];
  outside[0] = 20;
  negative[0] = -1;
  for (const auto& bad : {shorter, repeated, outside, negative})
    CHECK_THROWS_AS(linear::analyze_supernodal(A.pattern(), SupernodalOrdering::Amd, bad), Error);
  CHECK_THROWS_AS(linear::analyze_supernodal(A.pattern(), SupernodalOrdering::Automatic, good), Error);
}

TEST_CASE("ordering cache: the second analysis of a structure reads the first one's ordering") {
  TempDir dir("round_trip");
  const linear::BlockSparseSymmetric A = random_pattern(5, 160);
  const SupernodalAnalysis scratch = linear::analyze_supernodal(A.pattern(), SupernodalOrdering::Automatic);
  {
    compiler::KernelCache cache(on_disk(dir.path));
    check_same(*detail::cached_supernodal_analysis(A.pattern(), SupernodalOrdering::Automatic, &cache), scratch);
    CHECK(cache.stats().data_hits == 0);
    CHECK(cache.stats().disk_writes == 1);
  }
  compiler::KernelCache cache(on_disk(dir.path));
  const auto read = detail::cached_supernodal_analysis(A.pattern(), SupernodalOrdering::Automatic, &cache);
  CHECK(cache.stats().data_hits == 1);
  CHECK(cache.stats().disk_writes == 0);
  check_same(*read, scratch);
  CHECK(read->seconds.amd == 0);  // not ordered again

  // Another structure, or another requested ordering, has a key of its own.
  const linear::BlockSparseSymmetric B = random_pattern(6, 160);
  CHECK_FALSE(detail::ordering_cache_key(A.pattern(), SupernodalOrdering::Automatic) ==
              detail::ordering_cache_key(B.pattern(), SupernodalOrdering::Automatic));
  CHECK_FALSE(detail::ordering_cache_key(A.pattern(), SupernodalOrdering::Automatic) ==
              detail::ordering_cache_key(A.pattern(), SupernodalOrdering::Amd));
  (void)detail::cached_supernodal_analysis(B.pattern(), SupernodalOrdering::Automatic, &cache);
  CHECK(cache.stats().data_hits == 1);
  CHECK(cache.stats().disk_writes == 1);

  // A pattern too small to be worth a read is ordered afresh, nothing stored.
  const linear::BlockSparseSymmetric small = random_pattern(8, detail::kMinCachedBlocks - 1);
  (void)detail::cached_supernodal_analysis(small.pattern(), SupernodalOrdering::Automatic, &cache);
  CHECK(cache.stats().disk_writes == 1);

  // No cache, or a memory-only one: computed, nothing stored.
  check_same(*detail::cached_supernodal_analysis(A.pattern(), SupernodalOrdering::Automatic, nullptr), scratch);
  compiler::KernelCache::Options memory;
  memory.use_disk = false;
  memory.quiet = true;
  compiler::KernelCache memory_cache(memory);
  check_same(*detail::cached_supernodal_analysis(A.pattern(), SupernodalOrdering::Automatic, &memory_cache), scratch);
  CHECK(memory_cache.stats().disk_writes == 0);
}

TEST_CASE("ordering cache: stored bytes that are not this pattern's ordering are warned about, not used") {
  const int n = detail::kMinCachedBlocks;
  const linear::BlockSparseSymmetric A = random_pattern(7, n);
  const SupernodalAnalysis scratch = linear::analyze_supernodal(A.pattern(), SupernodalOrdering::Automatic);
  const compiler::CacheKey key = detail::ordering_cache_key(A.pattern(), SupernodalOrdering::Automatic);
  auto u32 = [](std::string& out, uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  auto ordering_bytes = [&](uint32_t kind, std::vector<uint32_t> blocks) {
    std::string out;
    u32(out, kind);
    for (uint32_t b : blocks) u32(out, b);
    return out;
  };
  std::vector<uint32_t> identity(n);
  for (int k = 0; k < n; ++k) identity[k] = static_cast<uint32_t>(k);
  std::vector<uint32_t> repeated = identity, outside = identity;
  repeated[1] = 0;
  outside[n - 1] = n;
  const std::string blocks = " for " + std::to_string(n) + " blocks";
  const std::pair<std::string, std::string> cases[] = {
      {ordering_bytes(1, {0, 1, 2}), "16 bytes, expected " + std::to_string(4 * (n + 1)) + blocks},
      {ordering_bytes(3, identity), "ordering code 3"},
      {ordering_bytes(1, repeated), "block 0 at position 1 appears twice"},
      {ordering_bytes(2, outside), "block " + std::to_string(n) + " at position " + std::to_string(n - 1) + " is out of range"},
      {"", "0 bytes"},
  };
  for (const auto& [bytes, why] : cases) {
    CAPTURE(why);
    TempDir dir("bad_bytes");
    std::ostringstream log;
    compiler::KernelCache cache(on_disk(dir.path, &log));
    cache.store_data(key, bytes);
    check_same(*detail::cached_supernodal_analysis(A.pattern(), SupernodalOrdering::Automatic, &cache), scratch);
    CHECK(cache.stats().data_hits == 0);
    CAPTURE(log.str());
    CHECK(log.str().find("holds unusable data (" + why) != std::string::npos);
    // Replaced by the good ordering: the next cache reads it silently.
    std::ostringstream log2;
    compiler::KernelCache cache2(on_disk(dir.path, &log2));
    check_same(*detail::cached_supernodal_analysis(A.pattern(), SupernodalOrdering::Automatic, &cache2), scratch);
    CHECK(cache2.stats().data_hits == 1);
    CHECK(log2.str().empty());
  }
}

TEST_CASE("ordering cache: a solve with the ordering from disk is bit-identical - Auto and explicit") {
  io::PoseGraphSpec spec;
  spec.dimension = 2;
  spec.poses = 400;
  spec.loop_closures = 80;
  spec.seed = 11;
  const io::GeneratedPoseGraph g = io::generate_pose_graph(spec);
  for (LinearSolver solver : {LinearSolver::Auto, LinearSolver::SparseCholesky}) {
    CAPTURE(linear_solver_name(solver));
    TempDir dir("solve");
    SolverOptions options;
    options.linear_solver = solver;
    options.max_direct_factorization_flops = 1e12;
    SolveResult first, second;
    uint64_t hits[2] = {0, 0};
    for (int run = 0; run < 2; ++run) {  // two "processes": a fresh cache on one directory
      compiler::KernelCache cache(on_disk(dir.path));
      PoseGraphProblem p = make_pose_graph_problem(g.graph);
      AnalyzeOptions a;
      a.cache = &cache;
      (run == 0 ? first : second) = p.problem.analyze(a).solve(p.initial, options);
      hits[run] = cache.stats().data_hits;
    }
    CAPTURE(first.summary.report());
    REQUIRE(converged(first.summary.termination));
    CHECK(first.summary.linear_solver == "sparse_cholesky");
    CHECK(hits[0] == 0);
    CHECK(hits[1] == 1);
    CHECK(first.summary.final_cost == second.summary.final_cost);  // bit for bit
    CHECK(first.summary.iterations == second.summary.iterations);
  }
}
