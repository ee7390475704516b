// Command-line flags of the lsjit CLI, parsed with CLI11 (Debian's libcli11-dev) and
// checked strictly: a number flag takes only a complete decimal number in its valid range,
// and a value out of range is rejected with that range, never truncated or wrapped
// (`--threads 4294967297` is an error, not 1 thread).
//
//   CLI::App app;
//   app.add_option("--threads", n)->check(integer_in(0, kMaxThreads));
//   if (auto error = parse_flags(app, args)) { err << "lsjit solve: " << *error; return 2; }
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lsjit/common/error.h"

namespace lsjit::cli {

// Accepts a decimal integer (optional '-', digits only: no "0x10", "1e3", "+1" or spaces)
// in [lo, hi]. Its message: "expected an integer from LO to HI, not 'TEXT'".
CLI::Validator integer_in(int64_t lo, int64_t hi);
// The complete text as a decimal number (digits, sign, '.', exponent only: no hex, inf,
// nan or spaces) that is a normal double or 0; nullopt otherwise (also for a subnormal such
// as 4e-324, and for anything out of a double's range). The one number parser of every flag.
std::optional<double> parse_number(std::string_view text);

// Accepts a finite decimal number (as strtod reads one, but no hex, inf or nan) in
// [lo, hi], or (lo, hi] when lo_open. Its message names the range and the text.
CLI::Validator number_in(double lo, double hi, bool lo_open = false);

// Accepts a value of the SolverOptions field `field` (its name in lsjit::option_ranges())
// in the range validate() holds it to: the runtime's one range check, with the text read
// as integer_in or number_in read it. Its message names that range and the text.
CLI::Validator solver_option_value(const std::string& field);

using lsjit::printable;  // common/error.h: a flag's value may come from anywhere

// Parses args (everything after the subcommand's name) into app, which must have been set
// up with app.allow_extras() off. Returns nullopt on success, else one line (newline
// included) saying what was wrong: "--threads needs a value", "unknown option '--bogus'",
// "--threads: expected an integer from 0 to 1024, not '100000'". Positional arguments are
// returned in `positional` in order (app must not declare any).
std::optional<std::string> parse_flags(CLI::App& app, const std::vector<std::string>& args,
                                       std::vector<std::string>& positional);

}  // namespace lsjit::cli
