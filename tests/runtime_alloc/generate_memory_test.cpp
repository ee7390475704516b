// generated_bal_bytes and generated_pose_graph_bytes (synthetic.h) bound what generating
// and writing a problem holds at once: `lsjit generate` refuses a spec up front on their
// word, so a spec they pass must not run out of memory later. Measured by the heap's peak
// (counting_allocator.h) around the same calls the CLI makes.
#include <doctest/doctest.h>

#include <filesystem>

#include "counting_allocator.h"
#include "lsjit/runtime/io/bal.h"
#include "lsjit/runtime/io/g2o.h"
#include "lsjit/runtime/io/synthetic.h"

namespace {

namespace fs = std::filesystem;

fs::path scratch(const char* name) {
  const fs::path dir = fs::path(LSJIT_TEST_TMP_DIR) / "generate_memory";
  fs::create_directories(dir);
  return dir / name;
}

// The most heap bytes held at once while `work` runs, beyond what was held before.
template <class Work>
double peak_bytes_of(Work&& work) {
  const long long before = lsjit::testing::live_bytes.load();
  lsjit::testing::reset_peak_bytes();
  work();
  return static_cast<double>(lsjit::testing::peak_bytes.load() - before);
}

}  // namespace

TEST_CASE("generate: the memory bound of a BAL problem holds while it is generated and written") {
  for (const auto& [cameras, points, per_point] : {std::tuple{50, 200000, 3}, std::tuple{2000, 20000, 12}}) {
    lsjit::io::BalSpec spec;
    spec.cameras = cameras;
    spec.points = points;
    spec.observations_per_point = per_point;
    const fs::path file = scratch("problem.bal");
    const double held = peak_bytes_of([&] { lsjit::io::write_bal(file, lsjit::io::generate_bal(spec).initial); });
    const double bound = lsjit::io::generated_bal_bytes(spec);
    CAPTURE(points);
    CAPTURE(held);
    CAPTURE(bound);
    CHECK(held <= bound);
    // A bound, not a blanket: within 2x of what is held.
    CHECK(bound <= 2 * held);
    fs::remove(file);
  }
}

TEST_CASE("generate: the memory bound of a pose graph holds while it is generated and written") {
  for (const int dimension : {2, 3}) {
    lsjit::io::PoseGraphSpec spec;
    spec.dimension = dimension;
    spec.poses = 100000;
    spec.loop_closures = 20000;
    const fs::path file = scratch("graph.g2o");
    const double held = peak_bytes_of([&] { lsjit::io::write_g2o(file, lsjit::io::generate_pose_graph(spec).graph); });
    const double bound = lsjit::io::generated_pose_graph_bytes(spec);
    CAPTURE(dimension);
    CAPTURE(held);
    CAPTURE(bound);
    CHECK(held <= bound);
    CHECK(bound <= 2 * held);
    fs::remove(file);
  }
}
