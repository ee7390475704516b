// Kernel benchmark (issue 3): per-instance residual + Jacobian time, one thread, of
//   - lsjit's ResidualJacobian kernel: SIMD across instances at the host's width, at
//     width 4 (AVX2) when the host has wider vectors, and forced scalar,
//   - Ceres AutoDiff: CostFunction::Evaluate per residual block, and Problem::Evaluate for
//     the whole problem (residuals + Jacobian as a CRS matrix),
//   - hand-written residuals and analytic Jacobians, scalar C++ at -O3 -march=native,
// on BAL reprojection (problem-49-7776-pre) and the g2o SE3 between cost (sphere2500),
// all in one run; medians over repeats. Before timing, lsjit's Jacobians are checked
// against the analytic ones (and, for BAL, Ceres'), and the run stops if they disagree.
//
//   lsjit_bench_kernels [--repeats N] [--data DIR]      (DIR: ../shared/data by default)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "analytic_costs.h"
#include "ceres_costs.h"
#include "lsjit/common/clock.h"
#include "lsjit/common/error.h"
#include "lsjit/compiler/cache/kernel_cache.h"
#include "lsjit/runtime/builtin_costs.h"
#include "lsjit/runtime/io/bal.h"
#include "lsjit/runtime/io/g2o.h"
#include "bench_stats.h"

namespace {

using lsjit::bench::median;
using lsjit::Clock;
using lsjit::seconds_since;

namespace fs = std::filesystem;
namespace c = lsjit::compiler;
// Median seconds of `repeats` runs of f, after one warm-up run.
double time_median(int repeats, const std::function<void()>& f) {
  f();
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    const auto start = Clock::now();
    f();
    t.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  return median(t);
}

// The largest |a - b| over max |b|, across arrays of equal length.
double relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::abs(a[i] - b[i]));
    scale = std::max(scale, std::abs(b[i]));
  }
  return diff / std::max(scale, 1e-300);
}

// A ResidualJacobian kernel of a built-in cost and the arrays it runs on.
struct LsjitRun {
  std::shared_ptr<const c::Kernel> kernel;
  std::vector<const int32_t*> indices;
  std::vector<const double*> values;
  const double* data = nullptr;
  std::vector<std::vector<double>> outputs;  // res, J[0], J[1]
  std::vector<double*> output_ptrs;
  int64_t instances = 0;

  LsjitRun(c::KernelCache& cache, const std::string& cost, uint32_t vector_width, int64_t n,
           std::vector<const int32_t*> idx, std::vector<const double*> vals, const double* d)
      : indices(std::move(idx)), values(std::move(vals)), data(d), instances(n) {
    c::CompileOptions options;
    options.vector_width = vector_width;
    kernel = cache.get(lsjit::find_builtin_cost(cost)->trace(), c::KernelMode::ResidualJacobian, options);
    for (const c::OutputArray& a : kernel->layout.outputs) outputs.emplace_back(n * a.per_instance);
    for (auto& o : outputs) output_ptrs.push_back(o.data());
  }
  std::string label() const {
    return "lsjit kernel, width " + std::string(kernel->key.part("vector_width"));
  }
  void operator()() const {
    c::KernelArgs args;
    args.begin = 0;
    args.end = instances;
    args.indices = indices.data();
    args.values = values.data();
    args.data = data;
    args.outputs = output_ptrs.data();
    (*kernel)(args);
  }
};

struct Row {
  std::string method;
  double seconds;
};

void print_table(const std::string& title, int64_t instances, const std::vector<Row>& rows,
                 double ceres_blocks_s) {
  std::cout << "\n### " << title << " (" << instances << " instances)\n\n"
            << "| method | ns / instance | instances / s | vs Ceres AutoDiff per block |\n"
            << "| --- | ---: | ---: | ---: |\n";
  for (const Row& r : rows) {
    char line[256];
    std::snprintf(line, sizeof line, "| %s | %.1f | %.3g | %.2fx |\n", r.method.c_str(),
                  1e9 * r.seconds / instances, instances / r.seconds, ceres_blocks_s / r.seconds);
    std::cout << line;
  }
}

void bench_bal(const fs::path& file, int repeats, c::KernelCache& cache) {
  const lsjit::io::BalProblem bal = lsjit::io::read_bal(file);
  const int64_t n = static_cast<int64_t>(bal.observations.size());
  std::vector<int32_t> cam(n), pt(n);
  std::vector<double> obs(2 * n), cameras, points;
  for (int64_t i = 0; i < n; ++i) {
    cam[i] = bal.observations[i].camera;
    pt[i] = bal.observations[i].point;
    obs[2 * i] = bal.observations[i].xy(0);
    obs[2 * i + 1] = bal.observations[i].xy(1);
  }
  for (const auto& x : bal.cameras) cameras.insert(cameras.end(), x.data(), x.data() + 9);
  for (const auto& x : bal.points) points.insert(points.end(), x.data(), x.data() + 3);

  auto lsjit_run = [&](uint32_t width) {
    return LsjitRun(cache, "snavely_reprojection", width, n, {cam.data(), pt.data()},
                    {cameras.data(), points.data()}, obs.data());
  };
  const LsjitRun simd = lsjit_run(0), avx2 = lsjit_run(4), scalar = lsjit_run(1);
  lsjit::bench::CeresBal ceres(n, cam.data(), pt.data(), obs.data(), cameras.data(), points.data(),
                               static_cast<int64_t>(bal.cameras.size()),
                               static_cast<int64_t>(bal.points.size()));
  std::vector<double> res(2 * n), jc(18 * n), jp(6 * n);
  auto analytic = [&] {
    for (int64_t i = 0; i < n; ++i)
      lsjit::bench::snavely_analytic(&cameras[9 * cam[i]], &points[3 * pt[i]], &obs[2 * i],
                                     &res[2 * i], &jc[18 * i], &jp[6 * i]);
  };

  // Agreement before speed.
  simd();
  analytic();
  const double vs_analytic = std::max({relative_difference(simd.outputs[0], res),
                                       relative_difference(simd.outputs[1], jc),
                                       relative_difference(simd.outputs[2], jp)});
  ceres.evaluate_blocks(res.data(), jc.data(), jp.data());
  const double vs_ceres = std::max({relative_difference(simd.outputs[0], res),
                                    relative_difference(simd.outputs[1], jc),
                                    relative_difference(simd.outputs[2], jp)});
  std::printf("BAL %s: lsjit vs analytic max relative difference %.2e, vs Ceres %.2e\n",
              file.filename().c_str(), vs_analytic, vs_ceres);
  if (!(vs_analytic < 1e-9 && vs_ceres < 1e-9)) throw lsjit::Error("BAL Jacobians disagree");

  std::vector<Row> rows;
  const double ceres_blocks = time_median(repeats, [&] { ceres.evaluate_blocks(res.data(), jc.data(), jp.data()); });
  rows.push_back({simd.label() + " (this host's widest)", time_median(repeats, simd)});
  if (avx2.label() != simd.label()) rows.push_back({avx2.label(), time_median(repeats, avx2)});
  rows.push_back({scalar.label() + " (scalar)", time_median(repeats, scalar)});
  rows.push_back({"hand-written analytic, -O3 -march=native", time_median(repeats, analytic)});
  rows.push_back({"Ceres AutoDiff, CostFunction::Evaluate per block", ceres_blocks});
  rows.push_back({"Ceres AutoDiff, Problem::Evaluate (whole problem)",
                  time_median(repeats, [&] { ceres.evaluate_problem(); })});
  print_table("BAL reprojection, " + file.filename().string(), n, rows, ceres_blocks);
}

void bench_se3(const fs::path& file, int repeats, c::KernelCache& cache) {
  const lsjit::io::PoseGraph g = lsjit::io::read_g2o(file);
  if (g.dimension != 3) throw lsjit::Error(file.string() + " is not an SE3 pose graph");
  const int64_t n = static_cast<int64_t>(g.edges3.size());
  std::vector<int32_t> from(n), to(n);
  std::vector<double> poses, z(7 * n), U(36 * n);
  for (const auto& x : g.poses3) {
    const auto p = x.params();
    poses.insert(poses.end(), p.data(), p.data() + 7);
  }
  const auto index = g.vertex_index();
  for (int64_t i = 0; i < n; ++i) {
    const auto& e = g.edges3[i];
    from[i] = static_cast<int32_t>(index.at(e.from));
    to[i] = static_cast<int32_t>(index.at(e.to));
    const auto p = e.measurement.params();
    std::copy(p.data(), p.data() + 7, &z[7 * i]);
    std::copy(e.sqrt_information.data(), e.sqrt_information.data() + 36, &U[36 * i]);
  }
  // lsjit's data row per instance: z (7) then U (36, column-major), at the layout's offsets.
  std::vector<double> data;
  auto lsjit_run = [&](uint32_t width) {
    c::CompileOptions options;
    options.vector_width = width;
    const auto& layout = cache.get(lsjit::find_builtin_cost("se3_between")->trace(),
                                   c::KernelMode::ResidualJacobian, options)->layout;
    data.assign(n * layout.data_stride, 0.0);
    for (int64_t i = 0; i < n; ++i) {
      std::copy(&z[7 * i], &z[7 * i] + 7, &data[i * layout.data_stride + layout.data_offset[0]]);
      std::copy(&U[36 * i], &U[36 * i] + 36, &data[i * layout.data_stride + layout.data_offset[1]]);
    }
    return LsjitRun(cache, "se3_between", width, n, {from.data(), to.data()},
                    {poses.data(), poses.data()}, data.data());
  };
  const LsjitRun simd = lsjit_run(0), avx2 = lsjit_run(4), scalar = lsjit_run(1);
  lsjit::bench::CeresSe3Between ceres(n, from.data(), to.data(), z.data(), U.data(), poses.data(),
                                      static_cast<int64_t>(g.poses3.size()));
  std::vector<double> res(6 * n), ja(36 * n), jb(36 * n), ceres_j(84 * n);
  auto analytic = [&] {
    for (int64_t i = 0; i < n; ++i)
      lsjit::bench::se3_between_analytic(&poses[7 * from[i]], &poses[7 * to[i]], &z[7 * i],
                                         &U[36 * i], &res[6 * i], &ja[36 * i], &jb[36 * i]);
  };

  simd();
  analytic();
  const double vs_analytic = std::max({relative_difference(simd.outputs[0], res),
                                       relative_difference(simd.outputs[1], ja),
                                       relative_difference(simd.outputs[2], jb)});
  std::printf("SE3 %s: lsjit vs analytic max relative difference %.2e\n", file.filename().c_str(),
              vs_analytic);
  if (!(vs_analytic < 1e-9)) throw lsjit::Error("SE3 Jacobians disagree");

  std::vector<Row> rows;
  const double ceres_blocks = time_median(repeats, [&] { ceres.evaluate_blocks(res.data(), ceres_j.data()); });
  rows.push_back({simd.label() + " (this host's widest)", time_median(repeats, simd)});
  if (avx2.label() != simd.label()) rows.push_back({avx2.label(), time_median(repeats, avx2)});
  rows.push_back({scalar.label() + " (scalar)", time_median(repeats, scalar)});
  rows.push_back({"hand-written analytic, -O3 -march=native", time_median(repeats, analytic)});
  rows.push_back({"Ceres AutoDiff, CostFunction::Evaluate per block (ambient 7+7 Jacobian)", ceres_blocks});
  rows.push_back({"Ceres AutoDiff, Problem::Evaluate (whole problem, quaternion manifold)",
                  time_median(repeats, [&] { ceres.evaluate_problem(); })});
  print_table("SE3 between, " + file.filename().string(), n, rows, ceres_blocks);
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = 15;
  fs::path data_dir = fs::path(LSJIT_SHARED_DATA_DIR);
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--repeats" && i + 1 < argc) {
      repeats = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--data" && i + 1 < argc) {
      data_dir = argv[++i];
    } else {
      std::cerr << "usage: lsjit_bench_kernels [--repeats N] [--data DIR]\n";
      return 2;
    }
  }
  c::KernelCache::Options options;
  options.use_disk = false;
  options.quiet = true;
  c::KernelCache cache(options);
  try {
    const fs::path bal = data_dir / "bal/problem-49-7776-pre.txt";
    const fs::path sphere = data_dir / "pose_graph/sphere2500.g2o";
    for (const fs::path& p : {bal, sphere})
      if (!fs::exists(p)) {
        std::cerr << "lsjit_bench_kernels: " << p.string() << " is missing (pass --data DIR)\n";
        return 1;
      }
    std::printf("medians of %d repeats, one thread\n", repeats);
    bench_bal(bal, repeats, cache);
    bench_se3(sphere, repeats, cache);
  } catch (const std::exception& e) {
    std::cerr << "lsjit_bench_kernels: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
