// lsjit solve's flag parser (tools/lsjit/solve_flags.h), alone and through the CLI: every
// number is range-checked, never truncated (issue: --max-iterations 4294967295 used to run
// "-1 iterations", --threads 4294967297 one thread, --threads 100000 aborted the process).
#include <doctest/doctest.h>

#include <string>
#include <variant>
#include <vector>

#include "../../tools/lsjit/solve_flags.h"
#include "../support/run_cli.h"
#include "lsjit/runtime/pose_graph_problem.h"

namespace {

using lsjit::cli::FlagError;
using lsjit::cli::SolveFlags;

std::variant<SolveFlags, FlagError> parse(std::vector<std::string> args) {
  return lsjit::cli::parse_solve_flags(args);
}

std::string error_of(std::vector<std::string> args) {
  const auto r = parse(std::move(args));
  REQUIRE(std::holds_alternative<FlagError>(r));
  return std::get<FlagError>(r).message;
}

}  // namespace

TEST_CASE("solve flags: values in range are taken exactly") {
  const auto r = parse({"g.g2o", "--max-iterations", "2147483647", "--threads", "1024", "--function-tolerance",
                        "0", "--gradient-tolerance", "1e-12", "--parameter-tolerance", "2.5e-3",
                        "--initial-trust-region-radius", "1e8", "--radius-growth", "1", "--linear-solver", "cg",
                        "--loss", "huber:0.5",
                        "--format", "g2o", "--out", "o.g2o", "--verbose", "--json"});
  REQUIRE(std::holds_alternative<SolveFlags>(r));
  const SolveFlags& f = std::get<SolveFlags>(r);
  CHECK(f.file == "g.g2o");
  CHECK(f.options.max_iterations == 2147483647);
  CHECK(f.options.num_threads == 1024);
  CHECK(f.options.function_tolerance == 0);
  CHECK(f.options.gradient_tolerance == 1e-12);
  CHECK(f.options.parameter_tolerance == 2.5e-3);
  CHECK(f.options.initial_trust_region_radius == 1e8);
  // Given flags win over the problem's defaults, whatever those are.
  lsjit::SolverOptions defaults;
  defaults.initial_trust_region_radius = 3;
  defaults.max_iterations = 7;
  const lsjit::SolverOptions over = f.solver_options(defaults);
  CHECK(over.initial_trust_region_radius == 1e8);
  CHECK(over.max_iterations == 2147483647);
  CHECK(over.num_threads == 1024);
  CHECK(over.function_tolerance == 0);
  CHECK(over.linear_solver == lsjit::LinearSolver::ConjugateGradient);
  CHECK(over.verbose);
  CHECK(f.options.very_successful_radius_growth == 1);
  CHECK(f.options.linear_solver == lsjit::LinearSolver::ConjugateGradient);
  CHECK(f.loss.kind == lsjit::HuberLoss(0.5).kind);
  CHECK(f.format == "g2o");
  CHECK(f.out_file == "o.g2o");
  CHECK(f.options.verbose);
  CHECK(f.json);
}

TEST_CASE("solve flags: options not given are left to the runtime's defaults for the problem") {
  const auto r = parse({"g.g2o", "--gradient-tolerance", "1e-9"});
  REQUIRE(std::holds_alternative<SolveFlags>(r));
  const SolveFlags& f = std::get<SolveFlags>(r);
  const lsjit::SolverOptions pose_graph = f.solver_options(lsjit::pose_graph_solver_options());
  CHECK(pose_graph.initial_trust_region_radius == lsjit::kPoseGraphInitialTrustRegionRadius);
  CHECK(pose_graph.gradient_tolerance == 1e-9);
  const lsjit::SolverOptions general = f.solver_options(lsjit::SolverOptions{});
  CHECK(general.initial_trust_region_radius == lsjit::SolverOptions{}.initial_trust_region_radius);
  CHECK(general.max_iterations == lsjit::SolverOptions{}.max_iterations);
}

TEST_CASE("solve flags: each solver flag's range is the runtime's for its field") {
  for (const auto& [flag, field] : std::vector<std::pair<std::string, std::string>>{
           {"--max-iterations", "max_iterations"}, {"--threads", "num_threads"},
           {"--initial-trust-region-radius", "initial_trust_region_radius"},
           {"--radius-growth", "very_successful_radius_growth"}, {"--function-tolerance", "function_tolerance"}}) {
    CAPTURE(flag);
    const auto r = parse({"g.g2o", flag, "-1"});
    REQUIRE(std::holds_alternative<FlagError>(r));
    CHECK(std::get<FlagError>(r).message.find("expected " + lsjit::option_range(field)) != std::string::npos);
  }
}

TEST_CASE("solve flags: --init is auto by default, file or chordal on request, and nothing else") {
  const auto by_default = parse({"g.g2o"});
  REQUIRE(std::holds_alternative<SolveFlags>(by_default));
  CHECK(std::get<SolveFlags>(by_default).init == "auto");
  const auto chordal = parse({"g.g2o", "--init", "chordal"});
  REQUIRE(std::holds_alternative<SolveFlags>(chordal));
  CHECK(std::get<SolveFlags>(chordal).init == "chordal");
  const auto file = parse({"g.g2o", "--init=file"});
  REQUIRE(std::holds_alternative<SolveFlags>(file));
  CHECK(std::get<SolveFlags>(file).init == "file");
  CHECK(error_of({"g", "--init", "odometry"}) == "--init: expected auto, file or chordal, not 'odometry'\n");
  CHECK(error_of({"g", "--init", "Chordal"}) == "--init: expected auto, file or chordal, not 'Chordal'\n");
  CHECK(error_of({"g", "--init", ""}) == "--init: expected auto, file or chordal, not ''\n");
  CHECK(error_of({"g", "--init"}) == "--init needs a value\n");
}

TEST_CASE("solve flags: --mixed-precision is auto by default, never or always on request") {
  using lsjit::MixedPrecision;
  const auto by_default = parse({"g.g2o"});
  REQUIRE(std::holds_alternative<SolveFlags>(by_default));
  CHECK(std::get<SolveFlags>(by_default).options.mixed_precision == MixedPrecision::Automatic);
  const std::pair<const char*, MixedPrecision> given[] = {
      {"auto", MixedPrecision::Automatic}, {"never", MixedPrecision::Never}, {"always", MixedPrecision::Always}};
  for (const auto& [text, value] : given) {
    CAPTURE(text);
    const auto r = parse({"g.g2o", "--mixed-precision", text});
    REQUIRE(std::holds_alternative<SolveFlags>(r));
    CHECK(std::get<SolveFlags>(r).options.mixed_precision == value);
  }
  CHECK(error_of({"g", "--mixed-precision", "on"}) == "--mixed-precision: expected auto, never or always, not 'on'\n");
  CHECK(error_of({"g", "--mixed-precision"}) == "--mixed-precision needs a value\n");
}

TEST_CASE("solve flags: integers that do not fit are rejected with their range, not truncated") {
  CHECK(error_of({"g", "--max-iterations", "4294967295"}) ==
        "--max-iterations: expected an integer from 0 to 2147483647, not '4294967295'\n");
  CHECK(error_of({"g", "--threads", "4294967297"}) ==
        "--threads: expected an integer from 0 to 1024, not '4294967297'\n");
  CHECK(error_of({"g", "--threads", "100000"}) == "--threads: expected an integer from 0 to 1024, not '100000'\n");
  CHECK(error_of({"g", "--threads", "99999999999999999999999"}).find("from 0 to 1024") != std::string::npos);
  for (const char* bad : {"-1", "0x10", "1e3", "+2", " 2", "2 ", "", "two", "2.0"})
    CHECK_MESSAGE(error_of({"g", "--threads", bad}).find("expected an integer from 0 to 1024") != std::string::npos,
                  bad);
}

TEST_CASE("solve flags: numbers must be finite and in range") {
  for (const char* bad : {"nan", "NaN", "inf", "-inf", "-1", "1e999", "0x1p3", "1,5", ""})
    CHECK_MESSAGE(error_of({"g", "--function-tolerance", bad}).find("expected a number >= 0") != std::string::npos,
                  bad);
  // The range is the runtime's for the field (validate()), the one check of it.
  CHECK(error_of({"g", "--initial-trust-region-radius", "0"}).find("expected a finite number > 0") != std::string::npos);
  CHECK(error_of({"g", "--radius-growth", "0.5"}).find("expected a finite number >= 1") != std::string::npos);
  CHECK(error_of({"g", "--loss", "cauchy:nan"}).find("expected NAME:SCALE") != std::string::npos);
}

TEST_CASE("solve flags: usage errors say what is wrong, and echo input safely") {
  CHECK(error_of({"g", "--threads"}) == "--threads needs a value\n");
  CHECK(error_of({"g", "--frobnicate"}) == "unknown option '--frobnicate'\n");
  CHECK(std::get<FlagError>(parse({"g", "--frobnicate"})).show_usage);
  CHECK(error_of({}) == "one FILE expected\n");
  CHECK(error_of({""}) == "FILE is an empty string: expected a file name\n");  // found by fuzz_cli_flags
  CHECK(error_of({"a", "b"}) == "one FILE expected, got 'a' and 'b'\n");
  const std::string nasty = error_of({"g", "--linear-solver", std::string("qr\x1b[2J\n\0x", 9)});
  CHECK(nasty.find('\x1b') == std::string::npos);
  CHECK(nasty.find("\\x1b[2J\\x0a\\x00x") != std::string::npos);
  // A value given to a flag that takes none: CLI11's message quoted it raw (fuzz_cli_flags).
  const std::string flag_value = error_of({"g", std::string("--verbose=\x1b\x01x", 13)});
  CHECK(flag_value.find('\x1b') == std::string::npos);
  CHECK(flag_value.find('\x01') == std::string::npos);
  const std::string long_value(5000, 'z');
  CHECK(error_of({"g", "--format", long_value}).size() < 200);
}

TEST_CASE("lsjit solve rejects out-of-range numbers before reading the file, with exit code 2") {
  // The file does not exist: a range error must come first, and nothing must abort.
  for (const char* flags : {"--max-iterations 4294967295", "--threads 4294967297", "--threads 100000",
                            "--threads -1", "--function-tolerance nan", "--radius-growth 0.5",
                            "--radius-growth inf"}) {
    const lsjit::testing::CliRun r = lsjit::testing::run_cli(std::string("solve /nonexistent.g2o ") + flags);
    CAPTURE(flags);
    CAPTURE(r.out);
    CHECK(r.exit_code == 2);
    CHECK(r.out.rfind("lsjit solve: --", 0) == 0);
    CHECK(r.out.find("expected") != std::string::npos);
  }
}

TEST_CASE("lsjit generate refuses a problem larger than this machine's memory before allocating") {
  const lsjit::testing::CliRun r = lsjit::testing::run_cli(
      "generate pose-graph --dim 3 --poses 2000000000 --loop-closures 0 --out " LSJIT_TEST_TMP_DIR "/huge.g2o");
  CAPTURE(r.out);
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("would need about") != std::string::npos);
  const lsjit::testing::CliRun b = lsjit::testing::run_cli(
      "generate bal --cameras 100 --points 2000000000 --observations-per-point 50 --out " LSJIT_TEST_TMP_DIR
      "/huge.bal");
  CAPTURE(b.out);
  CHECK(b.exit_code == 2);
  CHECK(b.out.find("would need about") != std::string::npos);
}

TEST_CASE("solve flags: --help returns help alone, whatever else is on the line") {
  // 1e32 passes the flag's own range check but not validate()'s initial <= max radius rule;
  // before, --help returned it anyway (the cli_flags fuzzer found that).
  const auto r = parse({"g.g2o", "--initial-trust-region-radius", "1e32", "--threads", "7", "-h"});
  REQUIRE(std::holds_alternative<SolveFlags>(r));
  const SolveFlags& f = std::get<SolveFlags>(r);
  CHECK(f.help);
  CHECK(f.file.empty());
  CHECK(lsjit::validate(f.options).empty());
  CHECK(f.options.initial_trust_region_radius == lsjit::SolverOptions{}.initial_trust_region_radius);
  CHECK(f.options.num_threads == lsjit::SolverOptions{}.num_threads);
}
