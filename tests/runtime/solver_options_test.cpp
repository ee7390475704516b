// SolverOptions are checked before a solve does anything: every option out of its range is
// a Failure whose message names the option, its value and the valid range. Before, a
// negative max_iterations or num_threads, a NaN tolerance or a non-positive radius ran and
// failed deep inside the linear solver (or aborted the process, for 100000 threads).
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>

#include "lsjit/compiler/cache/kernel_cache.h"
#include "lsjit/lsjit.h"

using namespace lsjit;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

auto offset_cost = cost("options_offset", [](const auto& v, ScalarVar x, const auto& t) { return v[x] - t; });

struct Fixture {
  compiler::KernelCache cache{[] {
    compiler::KernelCache::Options o;
    o.use_disk = false;
    o.quiet = true;
    return o;
  }()};
  std::optional<AnalyzedProblem> analyzed;
  Values initial;
  Fixture() {
    Problem p;
    p.add(offset_cost, ScalarVar(0), 3.0);
    AnalyzeOptions a;
    a.cache = &cache;
    analyzed.emplace(p.analyze(a));
    initial.set(ScalarVar(0), 1.0);
  }
};

struct Case {
  const char* field;
  std::function<void(SolverOptions&)> set;
  const char* expected;  // a part of the message: the range
};

}  // namespace

TEST_CASE("solver options: the defaults are valid and solve") {
  Fixture f;
  CHECK(validate(SolverOptions{}) == "");
  const SolveResult r = f.analyzed->solve(f.initial);
  CHECK(r.summary.usable());
  CHECK(r.values.get(ScalarVar(0)) == doctest::Approx(3.0));
}

TEST_CASE("solver options: each value out of range is a Failure naming the option and its range") {
  const Case cases[] = {
      {"max_iterations", [](SolverOptions& o) { o.max_iterations = -1; }, "an integer from 0 to 2147483647"},
      {"num_threads", [](SolverOptions& o) { o.num_threads = -2; }, "an integer from 0 to 1024"},
      {"num_threads", [](SolverOptions& o) { o.num_threads = 100000; }, "an integer from 0 to 1024"},
      {"function_tolerance", [](SolverOptions& o) { o.function_tolerance = kNaN; }, "a number >= 0"},
      {"gradient_tolerance", [](SolverOptions& o) { o.gradient_tolerance = -1e-3; }, "a number >= 0"},
      {"parameter_tolerance", [](SolverOptions& o) { o.parameter_tolerance = kNaN; }, "a number >= 0"},
      {"initial_trust_region_radius", [](SolverOptions& o) { o.initial_trust_region_radius = 0; }, "a finite number > 0"},
      {"initial_trust_region_radius", [](SolverOptions& o) { o.initial_trust_region_radius = -5; }, "a finite number > 0"},
      {"initial_trust_region_radius", [](SolverOptions& o) { o.initial_trust_region_radius = kInf; }, "a finite number > 0"},
      {"initial_trust_region_radius", [](SolverOptions& o) { o.initial_trust_region_radius = kNaN; }, "a finite number > 0"},
      {"min_relative_decrease", [](SolverOptions& o) { o.min_relative_decrease = 2; }, "[0, 1]"},
      {"very_successful_radius_growth", [](SolverOptions& o) { o.very_successful_radius_growth = 0.5; }, "a finite number >= 1"},
      {"very_successful_radius_growth", [](SolverOptions& o) { o.very_successful_radius_growth = kNaN; }, "a finite number >= 1"},
      {"very_successful_radius_growth", [](SolverOptions& o) { o.very_successful_radius_growth = kInf; }, "a finite number >= 1"},
      {"min_lm_diagonal", [](SolverOptions& o) { o.min_lm_diagonal = 0; }, "a finite number > 0"},
      {"max_time_s", [](SolverOptions& o) { o.max_time_s = kNaN; }, "a number >= 0"},
      {"max_linear_iterations", [](SolverOptions& o) { o.max_linear_iterations = 0; }, "an integer from 1 to 2147483647"},
      {"linear_relative_tolerance", [](SolverOptions& o) { o.linear_relative_tolerance = kNaN; }, "[0, 1]"},
      {"max_num_refinement_iterations", [](SolverOptions& o) { o.max_num_refinement_iterations = 0; }, "an integer from 1 to 2147483647"},
      {"constraints.initial_penalty", [](SolverOptions& o) { o.constraints.initial_penalty = 0; }, "a finite number > 0"},
      {"constraints.violation_reduction", [](SolverOptions& o) { o.constraints.violation_reduction = 0; }, "(0, 1]"},
      {"constraints.max_outer_iterations", [](SolverOptions& o) { o.constraints.max_outer_iterations = -1; }, "from 0 to"},
      {"initial_trust_region_radius", [](SolverOptions& o) { o.initial_trust_region_radius = 1e20; },
       "must be at most SolverOptions::max_trust_region_radius"},
      {"min_lm_diagonal", [](SolverOptions& o) { o.min_lm_diagonal = 1e40; }, "must be at most SolverOptions::max_lm_diagonal"},
  };
  Fixture f;
  for (const Case& c : cases) {
    SolverOptions o;
    c.set(o);
    const std::string message = validate(o);
    CAPTURE(message);
    CHECK(message.find(std::string("SolverOptions::") + c.field) != std::string::npos);
    CHECK(message.find(c.expected) != std::string::npos);
    const SolveResult r = f.analyzed->solve(f.initial, o);
    CHECK(r.summary.termination == Termination::Failure);
    CHECK(r.summary.message == message);
    CHECK(r.summary.iterations == 0);
    CHECK(r.values.get(ScalarVar(0)) == 1.0);  // untouched
  }
}

TEST_CASE("solver options: the evaluation functions and solve_batch check their thread counts") {
  Fixture f;
  CHECK_THROWS_WITH_AS(f.analyzed->cost(f.initial, -1), doctest::Contains("num_threads is -1"), Error);
  CHECK_THROWS_WITH_AS(f.analyzed->evaluate(f.initial, false, 5000), doctest::Contains("from 0 to 1024"), Error);
  CHECK_THROWS_AS(solve_batch(*f.analyzed, {f.initial}, SolverOptions{}, 100000), Error);
  CHECK(f.analyzed->cost(f.initial, 2) == doctest::Approx(2.0));
}

namespace {

// A stream buffer that shows what it holds only when flushed (sync), as a file or a pipe
// does to whoever reads it: what `published` holds is what a killed run leaves behind.
class FlushRecorder : public std::stringbuf {
 public:
  std::string published;

 protected:
  int sync() override {
    published = str();
    return 0;
  }
};

}  // namespace

TEST_CASE("solver options: verbose flushes every iteration row as it is written") {
  Fixture f;
  FlushRecorder buffer;
  std::ostream log(&buffer);
  SolverOptions o;
  o.verbose = true;
  o.log = &log;
  int rows_seen = 0;
  o.callback = [&](const IterationSummary& it) {
    // The callback runs after the row of iteration `it` was written: it must be visible.
    const std::string& shown = buffer.published;
    size_t lines = 0;
    for (char c : shown) lines += c == '\n';
    CHECK(lines == static_cast<size_t>(it.iteration) + 2);  // the header and rows 0..it
    ++rows_seen;
    return true;
  };
  const SolveResult r = f.analyzed->solve(f.initial, o);
  CHECK(r.summary.usable());
  CHECK(rows_seen >= 2);
}

TEST_CASE("solver options: termination messages print small numbers with significant digits") {
  CHECK(significant(1e-6) == "1e-06");
  CHECK(significant(3.5e-12) == "3.5e-12");
  CHECK(significant(0.25) == "0.25");
  Fixture f;
  SolverOptions o;
  o.function_tolerance = 1e-9;
  const SolveResult r = f.analyzed->solve(f.initial, o);
  CAPTURE(r.summary.message);
  CHECK(r.summary.message.find("0.000000") == std::string::npos);
  CHECK(r.summary.message.find("e-") != std::string::npos);  // e.g. "max |g| = 1.2e-16"
}

TEST_CASE("solve summary: a recorded initialization is printed, timed and counted in the total") {
  SolveSummary s;
  s.total_s = 2.0;
  CHECK(s.report().find("Initialization") == std::string::npos);  // not recorded: not claimed
  CHECK(s.json().find("\"initialization\": \"\", \"initialization_reason\": \"\", \"initialization_s\": 0,") !=
        std::string::npos);
  s.record_initialization("chordal", 0.00125);
  CHECK(s.initialization == "chordal");
  CHECK(s.initialization_s == 0.00125);
  CHECK(s.total_s == 2.00125);
  const std::string report = s.report();
  CHECK(report.find("Initialization                    chordal (1.25 ms)\n") != std::string::npos);
  CHECK(report.find("  Initialization                  0.001250\n") != std::string::npos);
  CHECK(s.json().find("\"initialization\": \"chordal\", \"initialization_reason\": \"\", \"initialization_s\": 0.00125,") !=
        std::string::npos);
  s.record_initialization("file", 0);
  CHECK(s.report().find("Initialization                    file\n") != std::string::npos);
  s.record_initialization("file", 0, "auto: initial cost 2 against 3 chordal");
  CHECK(s.report().find("Initialization                    file: auto: initial cost 2 against 3 chordal\n") !=
        std::string::npos);
  CHECK(s.json().find("\"initialization_reason\": \"auto: initial cost 2 against 3 chordal\"") != std::string::npos);
}

TEST_CASE("solve summary: a recorded information repair is printed when a mode was used, and in json") {
  SolveSummary s;
  CHECK(s.json().find("\"information_repair\": \"\", \"repaired_edges\": 0,") != std::string::npos);
  s.record_information_repair("none", 0);
  CHECK(s.report().find("Information repaired") == std::string::npos);  // nothing to say
  CHECK(s.json().find("\"information_repair\": \"none\", \"repaired_edges\": 0,") != std::string::npos);
  s.record_information_repair("block-diagonal", 12);
  CHECK(s.report().find("Information repaired              12 edges (block-diagonal)\n") != std::string::npos);
  CHECK(s.json().find("\"information_repair\": \"block-diagonal\", \"repaired_edges\": 12,") != std::string::npos);
  s.record_information_repair("nearest-pd", 1);
  CHECK(s.report().find("Information repaired              1 edge (nearest-pd)\n") != std::string::npos);
}

TEST_CASE("solve summary: every timed row keeps a space between its name and its seconds") {
  SolveSummary s;
  s.record_initialization("chordal", 0.5);
  s.setup_s = 0.25;
  std::istringstream lines(s.report());
  int timed = 0;
  for (std::string line; std::getline(lines, line);) {
    const size_t number = line.find_last_not_of("0123456789.");
    if (number == std::string::npos || number + 1 == line.size() || line.find('.', number) == std::string::npos)
      continue;  // not a row ending in seconds
    ++timed;
    CAPTURE(line);
    CHECK(line[number] == ' ');
  }
  CHECK(timed >= 10);
}
