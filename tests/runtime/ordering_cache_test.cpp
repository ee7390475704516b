// The sparse Cholesky's structure cached by pattern (runtime/analyze/ordering_cache.h): an analysis
// laid out from a stored structure is the analysis made from scratch, a stored structure
// that does not fit the pattern (out of order, out of range, or missing a row the factor
// needs) is never used, and a solve whose structure came from the disk is bit-identical to
// one that computed it.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "../support/random_block_sparse.h"
#include "lsjit/common/error.h"
#include "lsjit/compiler/cache/kernel_cache.h"
#include "lsjit/runtime/analyze/ordering_cache.h"
#include "lsjit/runtime/io/synthetic.h"
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
  CHECK(a.block_perm == b.block_perm);
  CHECK(a.block_position == b.block_position);
  CHECK(a.permuted_offset == b.permuted_offset);
  CHECK(a.supernode_of_block == b.supernode_of_block);
  CHECK(a.stored_entries == b.stored_entries);
  CHECK(a.max_rows == b.max_rows);
  CHECK(a.max_below_rows == b.max_below_rows);
  CHECK(a.scalar_perm == b.scalar_perm);
  CHECK(a.column_begin == b.column_begin);
  CHECK(a.row_begin == b.row_begin);
  CHECK(a.row_index == b.row_index);
  CHECK(a.panel_offset == b.panel_offset);
  CHECK(a.update_begin == b.update_begin);
  REQUIRE(a.updates.size() == b.updates.size());
  for (size_t u = 0; u < a.updates.size(); ++u) {
    CHECK(a.updates[u].target == b.updates[u].target);
    CHECK(a.updates[u].first == b.updates[u].first);
    CHECK(a.updates[u].last == b.updates[u].last);
    CHECK(a.updates[u].run_begin == b.updates[u].run_begin);
    CHECK(a.updates[u].run_end == b.updates[u].run_end);
  }
  REQUIRE(a.runs.size() == b.runs.size());
  for (size_t r = 0; r < a.runs.size(); ++r) {
    CHECK(a.runs[r].source_row == b.runs[r].source_row);
    CHECK(a.runs[r].target_row == b.runs[r].target_row);
    CHECK(a.runs[r].length == b.runs[r].length);
  }
  CHECK(a.factorization_flops == b.factorization_flops);
  CHECK(a.factor_nonzeros == b.factor_nonzeros);
  REQUIRE(a.block_target.size() == b.block_target.size());
  for (size_t k = 0; k < a.block_target.size(); ++k) {
    CHECK(a.block_target[k].offset == b.block_target[k].offset);
    CHECK(a.block_target[k].ld == b.block_target[k].ld);
    CHECK(a.block_target[k].placement == b.block_target[k].placement);
  }
}

linear::BlockSparseSymmetric random_pattern(uint64_t seed, int blocks) {
  std::mt19937_64 rng(seed);
  return lsjit::testing::make_matrix(lsjit::testing::random_block_structure(rng, blocks));
}

}  // namespace

TEST_CASE("ordering cache: an analysis laid out from its structure is the analysis from scratch") {
  for (uint64_t seed : {1u, 2u, 3u}) {
    const linear::BlockSparseSymmetric A = random_pattern(seed, 60);
    for (SupernodalOrdering ordering : {SupernodalOrdering::Amd, SupernodalOrdering::NestedDissection,
                                        SupernodalOrdering::Automatic}) {
      CAPTURE(seed);
      CAPTURE(linear::supernodal_ordering_name(ordering));
      const SupernodalAnalysis scratch = linear::analyze_supernodal(A.pattern(), ordering);
      const linear::SupernodalStructure structure = linear::supernodal_structure(scratch);
      CHECK(structure.supernode_begin.size() == static_cast<size_t>(scratch.num_supernodes() + 1));
      check_same(linear::analyze_supernodal(A.pattern(), structure), scratch);
    }
  }
  // No blocks: an empty structure, an empty analysis.
  const linear::BlockPattern empty(std::vector<int>{}, {});
  const SupernodalAnalysis none = linear::analyze_supernodal(empty, SupernodalOrdering::Automatic);
  CHECK(linear::analyze_supernodal(empty, linear::supernodal_structure(none)).num_supernodes() == 0);
}

TEST_CASE("ordering cache: a structure that does not fit the pattern is refused") {
  const linear::BlockSparseSymmetric A = random_pattern(4, 40);
  const linear::SupernodalStructure good =
      linear::supernodal_structure(linear::analyze_supernodal(A.pattern(), SupernodalOrdering::Amd));
  CHECK_NOTHROW(linear::analyze_supernodal(A.pattern(), good));
  const size_t ns = good.supernode_begin.size() - 1;
  REQUIRE(ns >= 3);
  REQUIRE(!good.below.empty());
  auto refused = [&](const linear::SupernodalStructure& bad, const std::string& why) {
    CAPTURE(why);
    try {
      (void)linear::analyze_supernodal(A.pattern(), bad);
      FAIL("accepted");
    } catch (const Error& e) {
      CAPTURE(e.what());
      CHECK(std::string(e.what()).find(why) != std::string::npos);
    }
  };
  linear::SupernodalStructure s = good;
  s.ordering = SupernodalOrdering::Automatic;
  refused(s, "automatic");
  s = good;
  s.factorization_flops = std::nan("");
  refused(s, "not finite");
  s = good;
  s.block_perm.pop_back();
  refused(s, "orders 39 blocks");
  s = good;
  s.block_perm[1] = s.block_perm[0];
  refused(s, "appears twice");
  s = good;
  s.supernode_begin.back() = 39;
  refused(s, "do not run from block 0 to block 40");
  s = good;
  s.supernode_begin[2] = s.supernode_begin[1];
  refused(s, "supernode 1 has no blocks");
  s = good;
  s.below_begin.pop_back();
  refused(s, "do not match");
  s = good;
  s.below.push_back(0);
  refused(s, "do not match");
  // A supernode's rows below: out of order, among its own blocks, past the last block.
  size_t with_below = 0;
  while (good.below_begin[with_below + 1] == good.below_begin[with_below]) ++with_below;
  s = good;
  s.below[good.below_begin[with_below]] = good.supernode_begin[with_below + 1] - 1;
  refused(s, "are not increasing past its own");
  s = good;
  s.below[good.below_begin[with_below + 1] - 1] = 40;
  refused(s, "within 40");
  // Each row below any supernode is a block of A or fill some update needs: without it the
  // layout refuses the structure, for one reason or the other.
  bool block_missing = false, update_missing = false;
  for (size_t sn = 0; sn < ns; ++sn)
    for (int64_t e = good.below_begin[sn]; e < good.below_begin[sn + 1]; ++e) {
      s = good;
      s.below.erase(s.below.begin() + e);
      for (size_t t = sn + 1; t <= ns; ++t) --s.below_begin[t];
      CAPTURE(sn);
      CAPTURE(e);
      try {
        (void)linear::analyze_supernodal(A.pattern(), s);
        FAIL("a structure without one of its rows below was accepted");
      } catch (const Error& error) {
        const std::string what = error.what();
        block_missing = block_missing || what.find("has no row in supernode") != std::string::npos;
        update_missing = update_missing || what.find("is not among the rows of its ancestor") != std::string::npos;
      }
    }
  CHECK(block_missing);
  CHECK(update_missing);
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
  CHECK(read->seconds.amd == 0);  // neither ordered again
  CHECK(read->seconds.symbolic == 0);  // nor factored symbolically

  // Another structure, or another requested ordering, has a key of its own.
  const linear::BlockSparseSymmetric B = random_pattern(6, 160);
  CHECK_FALSE(detail::structure_cache_key(A.pattern(), SupernodalOrdering::Automatic) ==
              detail::structure_cache_key(B.pattern(), SupernodalOrdering::Automatic));
  CHECK_FALSE(detail::structure_cache_key(A.pattern(), SupernodalOrdering::Automatic) ==
              detail::structure_cache_key(A.pattern(), SupernodalOrdering::Amd));
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

// The entry's format as runtime/analyze/ordering_cache.h documents it, written independently.
std::string entry_bytes(const linear::SupernodalStructure& s, uint32_t ordering_code) {
  std::string out;
  auto u32 = [&](uint64_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  auto f64 = [&](double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    u32(bits & 0xffffffffu);
    u32(bits >> 32);
  };
  u32(ordering_code);
  f64(s.factor_nonzeros);
  f64(s.factorization_flops);
  u32(s.supernode_begin.size() - 1);
  u32(s.below.size());
  for (int b : s.block_perm) u32(static_cast<uint32_t>(b));
  for (int b : s.supernode_begin) u32(static_cast<uint32_t>(b));
  for (int64_t e : s.below_begin) u32(static_cast<uint64_t>(e));
  for (int b : s.below) u32(static_cast<uint32_t>(b));
  return out;
}

TEST_CASE("ordering cache: stored bytes that are not this pattern's structure are warned about, not used") {
  const int n = detail::kMinCachedBlocks;
  const linear::BlockSparseSymmetric A = random_pattern(7, n);
  const SupernodalAnalysis scratch = linear::analyze_supernodal(A.pattern(), SupernodalOrdering::Automatic);
  const linear::SupernodalStructure good = linear::supernodal_structure(scratch);
  const uint32_t code = scratch.ordering == SupernodalOrdering::Amd ? 1 : 2;
  const compiler::CacheKey key = detail::structure_cache_key(A.pattern(), SupernodalOrdering::Automatic);
  const std::string good_bytes = entry_bytes(good, code);
  const size_t ns = good.supernode_begin.size() - 1;

  linear::SupernodalStructure repeated = good, outside = good, missing = good;
  repeated.block_perm[1] = repeated.block_perm[0];
  outside.below.back() = n;
  missing.below.pop_back();  // the last supernode with rows below loses its last one
  for (size_t t = ns; t > 0 && missing.below_begin[t] > static_cast<int64_t>(missing.below.size()); --t)
    missing.below_begin[t] -= 1;
  const std::string shape = " for " + std::to_string(n) + " blocks in " + std::to_string(ns) + " supernodes with " +
                            std::to_string(good.below.size()) + " blocks below";
  const std::pair<std::string, std::string> cases[] = {
      {good_bytes.substr(0, good_bytes.size() - 4),
       std::to_string(good_bytes.size() - 4) + " bytes, expected " + std::to_string(good_bytes.size()) + shape},
      {good_bytes.substr(0, 12), "12 bytes, fewer than a structure of " + std::to_string(n) + " blocks takes"},
      {entry_bytes(good, 3), "ordering code 3"},
      {entry_bytes(repeated, code), "block " + std::to_string(good.block_perm[0]) + " at position 1 appears twice"},
      {entry_bytes(outside, code), "are not increasing past its own, within " + std::to_string(n)},
      {entry_bytes(missing, code), "supernodal analysis: "},
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
    CHECK(log.str().find("holds unusable data (") != std::string::npos);
    CHECK(log.str().find(why) != std::string::npos);
    // Replaced by the good structure: the next cache reads it silently.
    std::ostringstream log2;
    compiler::KernelCache cache2(on_disk(dir.path, &log2));
    check_same(*detail::cached_supernodal_analysis(A.pattern(), SupernodalOrdering::Automatic, &cache2), scratch);
    CHECK(cache2.stats().data_hits == 1);
    CHECK(log2.str().empty());
  }
  // What this process wrote is the documented format, byte for byte.
  TempDir dir("format");
  {
    compiler::KernelCache cache(on_disk(dir.path));
    (void)detail::cached_supernodal_analysis(A.pattern(), SupernodalOrdering::Automatic, &cache);
  }
  compiler::KernelCache cache(on_disk(dir.path));
  const std::optional<std::string> stored = cache.read_data(key, [](std::string_view) { return std::string(); });
  REQUIRE(stored.has_value());
  CHECK(*stored == good_bytes);
}

TEST_CASE("ordering cache: a solve with the structure from disk is bit-identical - Auto and explicit") {
  io::PoseGraphSpec spec;
  spec.dimension = 2;
  spec.poses = 400;
  spec.loop_closures = 80;
  spec.seed = 11;
  const io::GeneratedPoseGraph g = io::generate_pose_graph(spec);
  for (lsjit::LinearSolver solver : {lsjit::LinearSolver::Auto, lsjit::LinearSolver::SparseCholesky}) {
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

// A pose graph grown online: its pattern changes at every step. Before, every step stored a
// structure entry that no later step could read (73 entries after 200 steps of a user's
// loop), and waited for its write.
TEST_CASE("ordering cache: a problem grown online writes one structure, not one per step") {
  io::PoseGraphSpec spec;
  spec.dimension = 2;
  spec.poses = 200;
  spec.loop_closures = 40;
  spec.seed = 5;
  const io::GeneratedPoseGraph g = io::generate_pose_graph(spec);
  TempDir dir("online");
  compiler::KernelCache cache(on_disk(dir.path));
  AnalyzeOptions a;
  a.cache = &cache;
  SolverOptions options;
  options.max_iterations = 2;
  constexpr int kSteps = 12;
  for (int step = 0; step < kSteps; ++step) {
    // The first 140 + 5·step poses (the generator numbers them 0, 1, ...) and the edges
    // among them.
    const int64_t poses = 140 + 5 * step;
    io::PoseGraph grown = g.graph;
    grown.vertex_ids.resize(static_cast<size_t>(poses));
    grown.poses2.resize(static_cast<size_t>(poses));
    std::erase_if(grown.edges2, [&](const io::PoseGraph::Edge2& e) { return e.from >= poses || e.to >= poses; });
    PoseGraphProblem p = make_pose_graph_problem(grown);
    const SolveResult r = p.problem.analyze(a).solve(p.initial, options);
    REQUIRE(r.summary.usable());
    CHECK(r.summary.linear_solver == "sparse_cholesky");
  }
  cache.wait_for_background();
  CHECK(cache.stats().disk_writes == 1 + cache.stats().compiles);  // the first structure, and the kernels

  // A pattern met a second time is worth its entry: the next process will read it.
  const linear::BlockSparseSymmetric again = random_pattern(21, 170);
  (void)detail::cached_supernodal_analysis(again.pattern(), SupernodalOrdering::Automatic, &cache);
  CHECK(cache.stats().disk_writes == 1 + cache.stats().compiles);
  (void)detail::cached_supernodal_analysis(again.pattern(), SupernodalOrdering::Automatic, &cache);
  cache.wait_for_background();
  CHECK(cache.stats().disk_writes == 2 + cache.stats().compiles);
  compiler::KernelCache next_process(on_disk(dir.path));
  (void)detail::cached_supernodal_analysis(again.pattern(), SupernodalOrdering::Automatic, &next_process);
  CHECK(next_process.stats().data_hits == 1);
}
