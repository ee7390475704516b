// lsjit generate: write a synthetic pose graph (g2o) or BAL problem (runtime/io/synthetic.h).
#include <charconv>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <fstream>
#include <limits>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>
#include <filesystem>
#include <string>

#include <sys/resource.h>
#include <unistd.h>

#include "commands.h"
#include "flags.h"
#include "lsjit/common/error.h"
#include "lsjit/runtime/formats/text.h"
#include "lsjit/runtime/io/synthetic.h"

namespace lsjit::cli {
namespace {

constexpr const char* kGenerateUsage = R"(usage:
  lsjit generate pose-graph --dim 2|3 --poses N --loop-closures M [--noise SIGMA] [--seed S]
                            [--indefinite-edges K] [--drift D] --out FILE [--truth TRUTH]
  lsjit generate bal --cameras C --points P --observations-per-point K [--noise SIGMA]
                     [--seed S] --out FILE [--truth TRUTH]

pose-graph   a Manhattan-world trajectory of N poses (SE2 or SE3), N - 1 odometry edges and
             M loop closures between nearby poses, written as g2o. SIGMA (default 0.02) is
             the standard deviation of the measurement noise, in grid steps for
             translations and in radians for rotations; the initial estimate composes the
             noisy odometry, so it drifts. K (default 0) edges, chosen by the seed, get
             information matrices that are not positive definite because of large
             translation-rotation coupling terms, as in some public 3D datasets; zeroing
             the coupling gives back their diagonal matrices (lsjit solve
             --repair-information block-diagonal|nearest-pd reads such files). D
             (default 0, radians) adds a rotation error of that standard deviation to
             each odometry step of the initial estimate only: the measurements and the
             optimum stay the same, the start drifts further (to try lsjit solve --init).
bal          C cameras on a ring around P points, each point seen by K distinct cameras,
             written as a BAL file. SIGMA (default 1) is the pixel noise; the initial
             cameras and points are perturbed from the truth.
TRUTH, when given, gets the same problem with the true values in place of the initial
estimate (g2o: the true VERTEX lines and the same edges; BAL: the true cameras and points
and the same observations), so that the error of a solve can be measured against it.
SIGMA is 0 (no noise) or in [1e-12, 1e6]. S (default 1) seeds the generator: the same
arguments write the same file. A problem that would not fit in the memory this process
may use (RAM, ulimit -v, the cgroup's memory.max) is refused before any work.
)";

// The noise flag's range: 0 (noise-free) or a σ whose 1/σ² (the information written) and
// whose samples stay well inside a double's range.
constexpr double kMinNoise = 1e-12, kMaxNoise = 1e6;

CLI::Validator noise_in_range() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const std::optional<double> v = parse_number(text);
        if (!v || !(*v == 0 || (*v >= kMinNoise && *v <= kMaxNoise)))
          return "expected 0 or a standard deviation in [1e-12, 1e6], not '" + printable(text) + "'";
        return "";
      },
      "0 or a standard deviation in [1e-12, 1e6]");
}

// Parses the flags of `lsjit generate KIND` (args[0] is KIND) into `app`; false, with the
// message on err, on a usage error.
bool parse_generate_flags(CLI::App& app, const Args& args, const std::string& kind, std::ostream& err) {
  std::vector<std::string> positional;
  if (std::optional<std::string> error = parse_flags(app, Args(args.begin() + 1, args.end()), positional)) {
    if (error->rfind("unknown option", 0) == 0) error->insert(error->size() - 1, " (lsjit generate help)");
    err << "lsjit generate " << kind << ": " << *error;
    return false;
  }
  if (!positional.empty()) {
    err << "lsjit generate " << kind << ": unexpected argument '" << printable(positional[0]) << "'\n";
    return false;
  }
  return true;  // CLI11 itself refused a missing required flag ("--out is required")
}

// The first number on the first line of `path` that starts with `field`.
std::optional<double> number_in_file(const char* path, std::string_view field) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with(field)) continue;
    std::istringstream rest(line.substr(field.size()));
    std::string token;
    rest >> token;
    return parse_number(token);
  }
  return std::nullopt;
}

// How many bytes this process can still allocate: the smallest of the machine's physical
// memory, the address-space limit (RLIMIT_AS, as `ulimit -v` sets it) less what the
// process already maps, and its cgroup's memory.max less what the cgroup already uses.
double allocatable_bytes() {
  double limit = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
  if (struct rlimit r {}; getrlimit(RLIMIT_AS, &r) == 0 && r.rlim_cur != RLIM_INFINITY) {
    const double mapped = number_in_file("/proc/self/status", "VmSize:").value_or(0) * 1024;  // in kB
    limit = std::min(limit, static_cast<double>(r.rlim_cur) - mapped);
  }
  if (const auto max = number_in_file("/sys/fs/cgroup/memory.max", ""))  // "max" is no limit
    limit = std::min(limit, *max - number_in_file("/sys/fs/cgroup/memory.current", "").value_or(0));
  return limit;
}

// Whether a problem of `bytes` (the generator's bound on what generating and writing it
// holds at once, synthetic.h) can be allocated: a count that passes the flag's range can
// still ask for terabytes (--poses 2000000000), and that must be a message up front, not
// std::bad_alloc or the OOM killer after minutes of work.
bool fits_in_memory(double bytes, const std::string& what, std::ostream& err) {
  const double limit = allocatable_bytes();
  if (bytes <= limit) return true;
  char line[200];
  std::snprintf(line, sizeof line, "%s would need about %.2f GiB of memory; this process may allocate %.2f GiB\n",
                what.c_str(), bytes / (1 << 30), std::max(limit, 0.0) / (1 << 30));
  err << "lsjit generate: " << line;
  return false;
}

constexpr uint64_t kDefaultSeed = 1;
constexpr int64_t kMaxCount = std::numeric_limits<int32_t>::max();

// Any decimal uint64_t: every seed is a valid one.
CLI::Validator any_seed() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        uint64_t v = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        const bool digits = !text.empty() && text[0] >= '0' && text[0] <= '9';
        return digits && ec == std::errc() && end == text.data() + text.size()
                   ? std::string()
                   : "expected a non-negative integer below 2^64, not '" + printable(text) + "'";
      },
      "a non-negative integer");
}

// --out: required, a file name; --truth: optional, another file name. Both are checked as
// outputs (text.h) before any work.
struct OutputFiles {
  std::string out, truth;
};
void add_outputs(CLI::App& app, OutputFiles& files) {
  auto file_name = [](const std::string& s) {
    return s.empty() ? std::string("expected a file name, not ''") : std::string();
  };
  app.add_option("--out", files.out)->required()->check(file_name);
  app.add_option("--truth", files.truth)->check(file_name);
}

// Whether two output names are one file: the same inode when both exist (a hard link, or a
// symbolic link to the other), else the same path once the existing part of each is
// resolved (a directory reached through a link).
bool same_file(const std::filesystem::path& a, const std::filesystem::path& b) {
  std::error_code error;
  if (std::filesystem::equivalent(a, b, error) && !error) return true;
  const std::filesystem::path ca = std::filesystem::weakly_canonical(a, error);
  if (error) return std::filesystem::absolute(a).lexically_normal() == std::filesystem::absolute(b).lexically_normal();
  const std::filesystem::path cb = std::filesystem::weakly_canonical(b, error);
  if (error) return std::filesystem::absolute(a).lexically_normal() == std::filesystem::absolute(b).lexically_normal();
  return ca == cb;
}

// "" when the outputs may be written, else why not (as a usage error).
std::string check_outputs(const OutputFiles& files) {
  if (!files.truth.empty() && same_file(files.truth, files.out))
    return "--truth and --out name the same file '" + printable(files.out) + "': expected two files";
  (void)io::detail::checked_write_target(files.out);  // a refused output is refused before the work
  if (!files.truth.empty()) (void)io::detail::checked_write_target(files.truth);
  return "";
}

std::string truth_note(const OutputFiles& files) {
  return files.truth.empty() ? "" : "; the truth in " + printable(files.truth, std::string::npos);
}

int pose_graph(const Args& args, std::ostream& out, std::ostream& err) {
  io::PoseGraphSpec spec;
  spec.seed = kDefaultSeed;
  double noise = 0.02;
  OutputFiles files;
  CLI::App app;
  app.add_option("--dim", spec.dimension)->required()->check(integer_in(2, 3));
  app.add_option("--poses", spec.poses)->required()->check(integer_in(1, kMaxCount));
  app.add_option("--loop-closures", spec.loop_closures)->required()->check(integer_in(0, kMaxCount));
  app.add_option("--noise", noise)->check(noise_in_range());
  app.add_option("--seed", spec.seed)->check(any_seed());
  // At most the number of edges: generate_pose_graph says so when it is more.
  app.add_option("--indefinite-edges", spec.indefinite_edges)->check(integer_in(0, 2 * kMaxCount));
  app.add_option("--drift", spec.drift_sigma)->check(noise_in_range());
  add_outputs(app, files);
  if (!parse_generate_flags(app, args, "pose-graph", err)) return 2;
  spec.translation_sigma = spec.rotation_sigma = noise;
  if (!fits_in_memory(io::generated_pose_graph_bytes(spec),
                      "a pose graph of " + std::to_string(spec.poses) + " poses", err))
    return 2;
  if (std::string refused = check_outputs(files); !refused.empty()) {
    err << "lsjit generate pose-graph: " << refused << "\n";
    return 2;
  }

  io::GeneratedPoseGraph generated;
  try {
    generated = io::generate_pose_graph(spec);
  } catch (const Error& e) {  // only an impossible spec, e.g. too many loop closures
    err << "lsjit generate pose-graph: " << e.what() << "\n";
    return 2;
  }
  io::write_g2o(files.out, generated.graph, {.allow_indefinite_information = spec.indefinite_edges > 0});
  if (!files.truth.empty()) {
    io::PoseGraph truth = generated.graph;
    truth.poses2 = generated.truth2;
    truth.poses3 = generated.truth3;
    io::write_g2o(files.truth, truth, {.allow_indefinite_information = spec.indefinite_edges > 0});
  }
  out << "wrote " << printable(files.out, std::string::npos) << ": SE" << spec.dimension << " pose graph, " << spec.poses
      << " poses, " << generated.graph.num_edges() << " edges (" << spec.poses - 1 << " odometry, "
      << spec.loop_closures << " loop closures), noise " << noise << ", seed " << spec.seed;
  if (spec.indefinite_edges > 0)
    out << ", " << spec.indefinite_edges << " with an information matrix that is not positive definite (lsjit solve "
        << "--repair-information block-diagonal|nearest-pd reads them)";
  out << truth_note(files) << "\n";
  return 0;
}

int bal(const Args& args, std::ostream& out, std::ostream& err) {
  io::BalSpec spec;
  spec.seed = kDefaultSeed;
  spec.pixel_sigma = 1.0;
  OutputFiles files;
  CLI::App app;
  app.add_option("--cameras", spec.cameras)->required()->check(integer_in(1, INT32_MAX));
  app.add_option("--points", spec.points)->required()->check(integer_in(0, INT32_MAX));
  // At most the number of cameras: generate_bal says so when it is more.
  app.add_option("--observations-per-point", spec.observations_per_point)->required()->check(integer_in(1, INT32_MAX));
  app.add_option("--noise", spec.pixel_sigma)->check(noise_in_range());
  app.add_option("--seed", spec.seed)->check(any_seed());
  add_outputs(app, files);
  if (!parse_generate_flags(app, args, "bal", err)) return 2;
  if (!fits_in_memory(io::generated_bal_bytes(spec), "a BAL problem of " + std::to_string(spec.points) + " points",
                      err))
    return 2;
  if (std::string refused = check_outputs(files); !refused.empty()) {
    err << "lsjit generate bal: " << refused << "\n";
    return 2;
  }

  io::GeneratedBal generated;
  try {
    generated = io::generate_bal(spec);
  } catch (const Error& e) {  // only an impossible spec, e.g. K > C
    err << "lsjit generate bal: " << e.what() << "\n";
    return 2;
  }
  io::write_bal(files.out, generated.initial);
  if (!files.truth.empty()) io::write_bal(files.truth, generated.truth);
  out << "wrote " << printable(files.out, std::string::npos) << ": BAL problem, " << spec.cameras << " cameras, "
      << spec.points << " points, " << generated.initial.observations.size() << " observations, pixel noise "
      << spec.pixel_sigma << ", seed " << spec.seed << truth_note(files) << "\n";
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
  err << "lsjit generate: unknown problem kind '" << printable(args[0]) << "': expected pose-graph or bal\n";
  return 2;
}

}  // namespace lsjit::cli
