// lsjit generate: write a synthetic pose graph (g2o) or BAL problem (runtime/io/synthetic.h).
#include <charconv>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <string>

#include <sys/resource.h>
#include <unistd.h>

#include "commands.h"
#include "lsjit/ir/error.h"
#include "lsjit/runtime/io/synthetic.h"

namespace lsjit::cli {
namespace {

constexpr const char* kGenerateUsage = R"(usage:
  lsjit generate pose-graph --dim 2|3 --poses N --loop-closures M [--noise SIGMA] [--seed S]
                            [--indefinite-edges K] --out FILE
  lsjit generate bal --cameras C --points P --observations-per-point K [--noise SIGMA]
                     [--seed S] --out FILE

pose-graph   a Manhattan-world trajectory of N poses (SE2 or SE3), N - 1 odometry edges and
             M loop closures between nearby poses, written as g2o. SIGMA (default 0.02) is
             the standard deviation of the measurement noise, in grid steps for
             translations and in radians for rotations; the initial estimate composes the
             noisy odometry, so it drifts. K (default 0) edges, chosen by the seed, get
             information matrices that are not positive definite because of large
             translation-rotation coupling terms, as in some public 3D datasets; zeroing
             the coupling gives back their diagonal matrices (lsjit solve
             --repair-information block-diagonal|nearest-pd reads such files).
bal          C cameras on a ring around P points, each point seen by K distinct cameras,
             written as a BAL file. SIGMA (default 1) is the pixel noise; the initial
             cameras and points are perturbed from the truth.
S (default 1) seeds the generator: the same arguments write the same file.
)";

// Flag values as given, after checking that each flag is known and has a value.
using Flags = std::map<std::string, std::string>;

std::optional<Flags> parse_flags(const Args& args, const std::set<std::string>& known,
                                 const std::string& kind, std::ostream& err) {
  Flags flags;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (!known.contains(a)) {
      err << "lsjit generate " << kind << ": unknown option '" << a << "' (lsjit generate help)\n";
      return std::nullopt;
    }
    if (i + 1 >= args.size()) {
      err << "lsjit generate " << kind << ": " << a << " needs a value\n";
      return std::nullopt;
    }
    flags[a] = args[++i];
  }
  return flags;
}

// The integer value of `flag` in [lo, hi], its default when absent, or a message on err.
template <class Int>
std::optional<Int> integer_flag(const Flags& flags, const std::string& flag, Int lo, Int hi,
                                std::optional<Int> fallback, const std::string& expected,
                                std::ostream& err) {
  const auto it = flags.find(flag);
  if (it == flags.end()) {
    if (!fallback) err << "lsjit generate: " << flag << " is required: " << expected << "\n";
    return fallback;
  }
  const std::string& text = it->second;
  Int value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < lo || value > hi) {
    err << "lsjit generate: " << flag << " is '" << text << "': expected " << expected << "\n";
    return std::nullopt;
  }
  return value;
}

std::optional<double> noise_flag(const Flags& flags, double fallback, std::ostream& err) {
  const auto it = flags.find("--noise");
  if (it == flags.end()) return fallback;
  const std::string& text = it->second;
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value) || value < 0) {
    err << "lsjit generate: --noise is '" << text
        << "': expected a non-negative standard deviation\n";
    return std::nullopt;
  }
  return value;
}

std::optional<std::string> out_flag(const Flags& flags, std::ostream& err) {
  const auto it = flags.find("--out");
  if (it == flags.end() || it->second.empty()) {
    err << "lsjit generate: --out FILE is required: the file to write\n";
    return std::nullopt;
  }
  return it->second;
}

// Whether a problem of `bytes` (an estimate of what generating and writing it holds in
// memory at once) can be allocated: at most the machine's physical memory and the address
// space limit. A count that passes the flag's range can still ask for terabytes
// (--poses 2000000000), and that must be a message, not std::bad_alloc.
bool fits_in_memory(double bytes, const std::string& what, std::ostream& err) {
  double limit = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
  if (struct rlimit r {}; getrlimit(RLIMIT_AS, &r) == 0 && r.rlim_cur != RLIM_INFINITY)
    limit = std::min(limit, static_cast<double>(r.rlim_cur));
  if (!(limit > 0) || bytes <= limit) return true;
  char line[200];
  std::snprintf(line, sizeof line, "%s would need about %.1f GiB of memory; this machine allows %.1f GiB\n",
                what.c_str(), bytes / (1 << 30), limit / (1 << 30));
  err << "lsjit generate: " << line;
  return false;
}

// Bytes held per pose and per edge by generate_pose_graph and write_g2o (the truth and the
// perturbed graph, an edge's measurement and information matrix, the text being written),
// rounded up from SE3's sizes: an estimate for fits_in_memory, not an accounting.
constexpr double kBytesPerPose = 400, kBytesPerEdge = 1200;
constexpr double kBytesPerCamera = 400, kBytesPerPoint = 200, kBytesPerObservation = 150;

constexpr uint64_t kDefaultSeed = 1;
constexpr int64_t kMaxCount = std::numeric_limits<int32_t>::max();

int pose_graph(const Args& args, std::ostream& out, std::ostream& err) {
  const auto flags =
      parse_flags(args, {"--dim", "--poses", "--loop-closures", "--noise", "--seed", "--indefinite-edges", "--out"},
                  "pose-graph", err);
  if (!flags) return 2;
  const auto dim = integer_flag<int>(*flags, "--dim", 2, 3, std::nullopt, "2 or 3", err);
  if (!dim) return 2;
  const auto poses = integer_flag<int64_t>(*flags, "--poses", 1, kMaxCount, std::nullopt,
                                           "a positive number of poses", err);
  if (!poses) return 2;
  const auto closures = integer_flag<int64_t>(*flags, "--loop-closures", 0, kMaxCount, std::nullopt,
                                              "a non-negative number", err);
  if (!closures) return 2;
  const auto noise = noise_flag(*flags, 0.02, err);
  if (!noise) return 2;
  const auto seed = integer_flag<uint64_t>(*flags, "--seed", 0, ~uint64_t{0}, kDefaultSeed,
                                           "a non-negative integer", err);
  if (!seed) return 2;
  // At most the number of edges: generate_pose_graph says so when it is more.
  const auto indefinite = integer_flag<int64_t>(*flags, "--indefinite-edges", 0, 2 * kMaxCount, int64_t{0},
                                                "a non-negative number, at most the number of edges", err);
  if (!indefinite) return 2;
  const auto file = out_flag(*flags, err);
  if (!file) return 2;
  if (!fits_in_memory(kBytesPerPose * *poses + kBytesPerEdge * (*poses + *closures),
                      "a pose graph of " + std::to_string(*poses) + " poses", err))
    return 2;

  io::PoseGraphSpec spec;
  spec.dimension = *dim;
  spec.poses = *poses;
  spec.loop_closures = *closures;
  spec.translation_sigma = spec.rotation_sigma = *noise;
  spec.seed = *seed;
  spec.indefinite_edges = *indefinite;
  io::GeneratedPoseGraph generated;
  try {
    generated = io::generate_pose_graph(spec);
  } catch (const Error& e) {  // only an impossible spec, e.g. too many loop closures
    err << "lsjit generate pose-graph: " << e.what() << "\n";
    return 2;
  }
  io::write_g2o(*file, generated.graph, {.allow_indefinite_information = *indefinite > 0});
  out << "wrote " << *file << ": SE" << *dim << " pose graph, " << *poses << " poses, "
      << generated.graph.num_edges() << " edges (" << *poses - 1 << " odometry, " << *closures
      << " loop closures), noise " << *noise << ", seed " << *seed;
  if (*indefinite > 0)
    out << ", " << *indefinite << " with an information matrix that is not positive definite (lsjit solve "
        << "--repair-information block-diagonal|nearest-pd reads them)";
  out << "\n";
  return 0;
}

int bal(const Args& args, std::ostream& out, std::ostream& err) {
  const auto flags = parse_flags(
      args, {"--cameras", "--points", "--observations-per-point", "--noise", "--seed", "--out"},
      "bal", err);
  if (!flags) return 2;
  const auto cameras = integer_flag<int32_t>(*flags, "--cameras", 1, INT32_MAX, std::nullopt,
                                             "a positive number of cameras", err);
  if (!cameras) return 2;
  const auto points = integer_flag<int32_t>(*flags, "--points", 0, INT32_MAX, std::nullopt,
                                            "a non-negative number of points", err);
  if (!points) return 2;
  const auto per_point =
      integer_flag<int32_t>(*flags, "--observations-per-point", 1, INT32_MAX, std::nullopt,
                            "a positive number, at most the number of cameras", err);
  if (!per_point) return 2;
  const auto noise = noise_flag(*flags, 1.0, err);
  if (!noise) return 2;
  const auto seed = integer_flag<uint64_t>(*flags, "--seed", 0, ~uint64_t{0}, kDefaultSeed,
                                           "a non-negative integer", err);
  if (!seed) return 2;
  const auto file = out_flag(*flags, err);
  if (!file) return 2;
  if (!fits_in_memory(kBytesPerCamera * *cameras + kBytesPerPoint * *points +
                          kBytesPerObservation * double(*points) * *per_point,
                      "a BAL problem of " + std::to_string(*points) + " points", err))
    return 2;

  io::BalSpec spec;
  spec.cameras = *cameras;
  spec.points = *points;
  spec.observations_per_point = *per_point;
  spec.pixel_sigma = *noise;
  spec.seed = *seed;
  io::GeneratedBal generated;
  try {
    generated = io::generate_bal(spec);
  } catch (const Error& e) {  // only an impossible spec, e.g. K > C
    err << "lsjit generate bal: " << e.what() << "\n";
    return 2;
  }
  io::write_bal(*file, generated.initial);
  out << "wrote " << *file << ": BAL problem, " << *cameras << " cameras, " << *points
      << " points, " << generated.initial.observations.size() << " observations, pixel noise "
      << *noise << ", seed " << *seed << "\n";
  return 0;
}

}  // namespace

int generate_command(const Args& args, std::ostream& out, std::ostream& err) {
  if (!args.empty() && (args[0] == "help" || args[0] == "--help" || args[0] == "-h")) {
    out << kGenerateUsage;
    return 0;
  }
  if (args.empty()) {
    err << "lsjit generate: name what to generate: pose-graph or bal\n" << kGenerateUsage;
    return 2;
  }
  if (args[0] == "pose-graph") return pose_graph(args, out, err);
  if (args[0] == "bal") return bal(args, out, err);
  err << "lsjit generate: unknown problem kind '" << args[0] << "': expected pose-graph or bal\n";
  return 2;
}

}  // namespace lsjit::cli
