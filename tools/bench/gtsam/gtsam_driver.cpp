// lsjit_bench_gtsam: GTSAM as the benchmarks' baseline, run as its users run it.
//
//   lsjit_bench_gtsam lm    FILE.g2o SOLUTION   LevenbergMarquardtOptimizer at its defaults
//   lsjit_bench_gtsam isam2 FILE.g2o SOLUTION   ISAM2 at its defaults, one update per pose
//   lsjit_bench_gtsam bal   FILE.bal SOLUTION   LM on GeneralSFMFactor<SfmCamera, Point3>
//
// A child of the comparison benchmarks (pose_graph_bench.cpp, bal_bench.cpp): it answers
// with "key value" lines on stdout (child_process.h) and writes its solution to SOLUTION
// with 17 digits, one variable per line, so that the parent evaluates it in lsjit's
// residual convention and the final costs compare. GTSAM's own error() is reported too,
// but it is not lsjit's cost: its priors and its Pose3 log differ.
//
// It links GTSAM and no lsjit library beyond lsjit_common: GTSAM ships its own METIS,
// whose symbols would clash with the one lsjit's runtime links.
//
// What the programs do follows GTSAM's examples:
// - g2o: readG2o, a prior on the first pose at its initial value with the variances of
//   examples/Pose{2,3}SLAMExample_g2o.cpp (lsjit instead holds that pose constant);
// - ISAM2: timing/timeIncremental.cpp's replay, each pose initialized from the estimate of
//   the pose before it composed with their odometry edge, or from the file without one;
// - BAL: examples/SFMExample_bal.cpp, with its priors on the first camera and point.
#include <gtsam/geometry/Pose2.h>
#include <gtsam/geometry/Pose3.h>
#include <gtsam/inference/Symbol.h>
#include <gtsam/nonlinear/ISAM2.h>
#include <gtsam/nonlinear/LevenbergMarquardtOptimizer.h>
#include <gtsam/nonlinear/NonlinearFactorGraph.h>
#include <gtsam/nonlinear/Values.h>
#include <gtsam/sfm/SfmData.h>
#include <gtsam/slam/BetweenFactor.h>
#include <gtsam/slam/GeneralSFMFactor.h>
#include <gtsam/slam/dataset.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "../child_process.h"
#include "lsjit/common/clock.h"
#include "lsjit/common/percentile.h"

namespace {

using lsjit::Clock;
using lsjit::percentile;
using lsjit::seconds_since;
using lsjit::bench::emit;

bool is_3d(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error("cannot open " + file);
  for (std::string token; in >> token;) {
    if (token.rfind("VERTEX_SE3", 0) == 0 || token.rfind("EDGE_SE3", 0) == 0) return true;
    if (token.rfind("VERTEX_SE2", 0) == 0 || token.rfind("EDGE_SE2", 0) == 0) return false;
  }
  throw std::runtime_error(file + ": no SE2 or SE3 vertex or edge");
}

// The prior of GTSAM's g2o examples on the first pose, at that pose's initial value.
void add_first_pose_prior(gtsam::NonlinearFactorGraph& graph, const gtsam::Values& initial, bool three_d) {
  if (initial.empty()) throw std::runtime_error("the file has no vertices");
  const gtsam::KeyVector keys = initial.keys();  // a new vector each call
  const gtsam::Key first = *std::min_element(keys.begin(), keys.end());
  if (three_d) {
    graph.addPrior(first, initial.at<gtsam::Pose3>(first),
                   gtsam::noiseModel::Diagonal::Variances(
                       (gtsam::Vector(6) << 1e-6, 1e-6, 1e-6, 1e-4, 1e-4, 1e-4).finished()));
  } else {
    graph.addPrior(first, initial.at<gtsam::Pose2>(first),
                   gtsam::noiseModel::Diagonal::Variances(gtsam::Vector3(1e-6, 1e-6, 1e-8)));
  }
}

// One line per pose, by key: "id x y θ" or "id tx ty tz qx qy qz qw".
void write_poses(const std::string& path, const gtsam::Values& values, bool three_d) {
  std::FILE* out = std::fopen(path.c_str(), "w");
  if (!out) throw std::runtime_error("cannot write " + path);
  for (const gtsam::Key key : values.keys()) {
    if (three_d) {
      const auto p = values.at<gtsam::Pose3>(key);
      const auto q = p.rotation().toQuaternion();
      std::fprintf(out, "%llu %.17g %.17g %.17g %.17g %.17g %.17g %.17g\n", static_cast<unsigned long long>(key),
                   p.x(), p.y(), p.z(), q.x(), q.y(), q.z(), q.w());
    } else {
      const auto p = values.at<gtsam::Pose2>(key);
      std::fprintf(out, "%llu %.17g %.17g %.17g\n", static_cast<unsigned long long>(key), p.x(), p.y(),
                   p.theta());
    }
  }
  if (std::fclose(out) != 0) throw std::runtime_error("cannot write " + path);
}

void run_lm(const std::string& file, const std::string& solution) {
  const bool three_d = is_3d(file);
  const auto start = Clock::now();
  auto [graph, initial] = gtsam::readG2o(file, three_d);
  emit("read_s", seconds_since(start));
  emit("poses", static_cast<double>(initial->size()));
  emit("edges", static_cast<double>(graph->size()));
  const auto build_start = Clock::now();
  add_first_pose_prior(*graph, *initial, three_d);
  emit("build_s", seconds_since(build_start));
  const auto solve_start = Clock::now();
  gtsam::LevenbergMarquardtOptimizer optimizer(*graph, *initial, gtsam::LevenbergMarquardtParams());
  const gtsam::Values result = optimizer.optimize();
  emit("solve_s", seconds_since(solve_start));
  emit("total_s", seconds_since(start));
  emit("iterations", static_cast<double>(optimizer.iterations()));
  emit("linear_solves", optimizer.getInnerIterations());
  emit("gtsam_initial_error", graph->error(*initial));
  emit("gtsam_final_error", graph->error(result));
  emit("peak_mb", lsjit::bench::status_mb("VmHWM"));
  write_poses(solution, result, three_d);
}

template <class Pose>
using Between = gtsam::BetweenFactor<Pose>;

// The factors of the graph grouped by the later of their two poses, in key order.
std::map<gtsam::Key, gtsam::NonlinearFactorGraph> factors_by_last_key(const gtsam::NonlinearFactorGraph& graph) {
  std::map<gtsam::Key, gtsam::NonlinearFactorGraph> by_key;
  for (const auto& factor : graph) {
    const auto& keys = factor->keys();
    by_key[*std::max_element(keys.begin(), keys.end())].push_back(factor);
  }
  return by_key;
}

template <class Pose>
void replay_isam2(const gtsam::NonlinearFactorGraph& graph, const gtsam::Values& initial,
                  std::vector<double>& update_s, gtsam::ISAM2& isam) {
  const auto by_key = factors_by_last_key(graph);
  const gtsam::KeyVector keys = initial.keys();  // sorted
  gtsam::Key previous = keys.front();
  for (const gtsam::Key key : keys) {
    gtsam::NonlinearFactorGraph new_factors;
    gtsam::Values new_values;
    Pose start = initial.at<Pose>(key);
    if (key == keys.front()) {
      gtsam::Values first;
      first.insert(key, start);
      add_first_pose_prior(new_factors, first, std::is_same_v<Pose, gtsam::Pose3>);
    }
    if (const auto found = by_key.find(key); found != by_key.end()) {
      for (const auto& factor : found->second) {
        new_factors.push_back(factor);
        const auto between = std::dynamic_pointer_cast<Between<Pose>>(factor);
        if (!between || key == keys.front()) continue;
        if (between->key1() == previous && between->key2() == key)
          start = isam.calculateEstimate<Pose>(previous) * between->measured();
        else if (between->key2() == previous && between->key1() == key)
          start = isam.calculateEstimate<Pose>(previous) * between->measured().inverse();
      }
    }
    new_values.insert(key, start);
    const auto update_start = Clock::now();
    isam.update(new_factors, new_values);
    update_s.push_back(seconds_since(update_start));
    previous = key;
  }
}

void run_isam2(const std::string& file, const std::string& solution) {
  const bool three_d = is_3d(file);
  const auto start = Clock::now();
  auto [graph, initial] = gtsam::readG2o(file, three_d);
  emit("read_s", seconds_since(start));
  if (initial->empty()) throw std::runtime_error("the file has no vertices");
  gtsam::ISAM2 isam;  // ISAM2Params' defaults
  std::vector<double> update_s;
  const auto replay_start = Clock::now();
  if (three_d) replay_isam2<gtsam::Pose3>(*graph, *initial, update_s, isam);
  else replay_isam2<gtsam::Pose2>(*graph, *initial, update_s, isam);
  const gtsam::Values result = isam.calculateEstimate();
  emit("replay_s", seconds_since(replay_start));
  emit("total_s", seconds_since(start));
  emit("updates", static_cast<double>(update_s.size()));
  emit("update_s_median", percentile(update_s, 0.5));
  emit("update_s_p99", percentile(update_s, 0.99));
  emit("update_s_max", percentile(update_s, 1.0));
  emit("gtsam_final_error", isam.getFactorsUnsafe().error(result));
  emit("peak_mb", lsjit::bench::status_mb("VmHWM"));
  write_poses(solution, result, three_d);
}

// Cameras then points, in the file's order: "wx wy wz tx ty tz f k1 k2" in BAL's own
// convention (gtsam2openGL undoes the conversion FromBalFile makes), then "x y z".
void write_bal_solution(const std::string& path, const gtsam::Values& values, size_t cameras, size_t points) {
  std::FILE* out = std::fopen(path.c_str(), "w");
  if (!out) throw std::runtime_error("cannot write " + path);
  for (size_t i = 0; i < cameras; ++i) {
    const auto camera = values.at<gtsam::SfmCamera>(gtsam::Symbol('c', i));
    const gtsam::Pose3 gl = gtsam::gtsam2openGL(camera.pose());
    const gtsam::Vector3 w = gtsam::Rot3::Logmap(gl.rotation());
    const auto& k = camera.calibration();
    std::fprintf(out, "%.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g\n", w.x(), w.y(), w.z(), gl.x(),
                 gl.y(), gl.z(), k.fx(), k.k1(), k.k2());
  }
  for (size_t j = 0; j < points; ++j) {
    const auto p = values.at<gtsam::Point3>(gtsam::Symbol('p', j));
    std::fprintf(out, "%.17g %.17g %.17g\n", p.x(), p.y(), p.z());
  }
  if (std::fclose(out) != 0) throw std::runtime_error("cannot write " + path);
}

void run_bal(const std::string& file, const std::string& solution) {
  using Factor = gtsam::GeneralSFMFactor<gtsam::SfmCamera, gtsam::Point3>;
  const auto start = Clock::now();
  const gtsam::SfmData data = gtsam::SfmData::FromBalFile(file);
  emit("read_s", seconds_since(start));
  const auto build_start = Clock::now();
  gtsam::NonlinearFactorGraph graph;
  const auto noise = gtsam::noiseModel::Isotropic::Sigma(2, 1.0);
  size_t observations = 0;
  for (size_t j = 0; j < data.tracks.size(); ++j)
    for (const auto& [i, uv] : data.tracks[j].measurements) {
      graph.emplace_shared<Factor>(uv, noise, gtsam::Symbol('c', i), gtsam::Symbol('p', j));
      ++observations;
    }
  graph.addPrior(gtsam::Symbol('c', 0), data.cameras[0], gtsam::noiseModel::Isotropic::Sigma(9, 0.1));
  graph.addPrior(gtsam::Symbol('p', 0), data.tracks[0].p, gtsam::noiseModel::Isotropic::Sigma(3, 0.1));
  gtsam::Values initial;
  for (size_t i = 0; i < data.cameras.size(); ++i) initial.insert(gtsam::Symbol('c', i), data.cameras[i]);
  for (size_t j = 0; j < data.tracks.size(); ++j) initial.insert(gtsam::Symbol('p', j), data.tracks[j].p);
  emit("build_s", seconds_since(build_start));
  emit("observations", static_cast<double>(observations));
  const auto solve_start = Clock::now();
  gtsam::LevenbergMarquardtOptimizer optimizer(graph, initial, gtsam::LevenbergMarquardtParams());
  const gtsam::Values result = optimizer.optimize();
  emit("solve_s", seconds_since(solve_start));
  emit("total_s", seconds_since(start));
  emit("iterations", static_cast<double>(optimizer.iterations()));
  emit("linear_solves", optimizer.getInnerIterations());
  emit("gtsam_initial_error", graph.error(initial));
  emit("gtsam_final_error", graph.error(result));
  emit("peak_mb", lsjit::bench::status_mb("VmHWM"));
  write_bal_solution(solution, result, data.cameras.size(), data.tracks.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: lsjit_bench_gtsam lm|isam2 FILE.g2o SOLUTION, or lsjit_bench_gtsam bal FILE.bal SOLUTION\n";
    return 2;
  }
  const std::string mode = argv[1];
  try {
    if (mode == "lm") run_lm(argv[2], argv[3]);
    else if (mode == "isam2") run_isam2(argv[2], argv[3]);
    else if (mode == "bal") run_bal(argv[2], argv[3]);
    else throw std::runtime_error("unknown mode '" + mode + "' (expected lm, isam2 or bal)");
  } catch (const std::exception& e) {
    std::cerr << "lsjit_bench_gtsam " << mode << " " << argv[2] << ": " << e.what() << "\n";
    return 1;
  }
  return 0;
}
