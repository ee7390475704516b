// lsjit solve's flag parser (tools/lsjit/solve_flags.h) on arbitrary argument vectors: the
// input's bytes split at NUL into arguments. The parser never throws; it returns flags or a
// usage error. Returned flags must pass validate() and keep every number in its documented
// range (nothing truncated or wrapped), and an error message must be printable: no control
// byte of the input echoed raw, no token longer than the cut.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "../../tools/lsjit/solve_flags.h"
#include "fuzz_check.h"

namespace {

using lsjit::fuzz::broken;

void check_flags(const lsjit::cli::SolveFlags& f) {
  if (!validate(f.options).empty()) broken("parsed options fail validate(): " + validate(f.options));
  if (f.options.num_threads < 0 || f.options.num_threads > lsjit::kMaxThreads) broken("threads out of range");
  if (f.options.max_iterations < 0) broken("negative max_iterations");
  if (!f.help && f.file.empty()) broken("no FILE and no error");
  if (f.format != "" && f.format != "g2o" && f.format != "bal") broken("unknown format accepted");
  if (f.init != "auto" && f.init != "file" && f.init != "chordal") broken("unknown --init accepted");
  if (f.loss.kind != lsjit::Loss::Kind::Trivial &&
      !(f.loss.scale >= lsjit::kMinLossScale && f.loss.scale <= lsjit::kMaxLossScale))
    broken("a loss scale outside [kMinLossScale, kMaxLossScale] accepted");
  using lsjit::MixedPrecision;
  if (f.options.mixed_precision != MixedPrecision::Automatic && f.options.mixed_precision != MixedPrecision::Never &&
      f.options.mixed_precision != MixedPrecision::Always)
    broken("--mixed-precision parsed to no mode");
  const std::string_view repair = lsjit::io::information_repair_name(f.repair_information);
  if (lsjit::io::information_repair_from_name(repair) != f.repair_information)
    broken("--repair-information parsed to a mode without a name");
}

void check_error(const lsjit::cli::FlagError& e) {
  if (e.message.empty() || e.message.back() != '\n') broken("an error message that is not a line");
  for (size_t i = 0; i + 1 < e.message.size(); ++i) {
    const auto c = static_cast<unsigned char>(e.message[i]);
    if (c < 0x20 || c == 0x7f) broken("a control byte echoed raw in: " + e.message);
  }
  if (e.message.size() > 400) broken("an error message of " + std::to_string(e.message.size()) + " bytes");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> args(1);
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0) args.emplace_back();
    else args.back().push_back(static_cast<char>(data[i]));
  }
  if (args.size() > 64) return 0;  // a command line, not a file
  const auto parsed = lsjit::cli::parse_solve_flags(args);
  if (const auto* f = std::get_if<lsjit::cli::SolveFlags>(&parsed)) check_flags(*f);
  else check_error(std::get<lsjit::cli::FlagError>(parsed));
  return 0;
}
