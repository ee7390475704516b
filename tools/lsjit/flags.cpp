#include "flags.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

#include "lsjit/runtime/solver_options.h"

namespace lsjit::cli {
namespace {

std::string number_text(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

}  // namespace

std::optional<double> parse_number(std::string_view text) {
  if (text.empty()) return std::nullopt;
  for (char c : text)
    if (!((c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E'))
      return std::nullopt;
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v)) return std::nullopt;
  // A subnormal (4e-324) keeps no precision and its inverse or square is not finite.
  if (v != 0 && !std::isnormal(v)) return std::nullopt;
  return v;
}

CLI::Validator integer_in(int64_t lo, int64_t hi) {
  const std::string range = "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        int64_t v = 0;
        const bool digits = !text.empty() && (text[0] == '-' || (text[0] >= '0' && text[0] <= '9'));
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (!digits || ec != std::errc() || end != text.data() + text.size() || v < lo || v > hi)
          return "expected " + range + ", not '" + printable(text) + "'";
        return "";
      },
      range);
}

CLI::Validator number_in(double lo, double hi, bool lo_open) {
  const bool unbounded = hi >= std::numeric_limits<double>::max();
  const std::string range = unbounded ? std::string("a number ") + (lo_open ? "> " : ">= ") + number_text(lo)
                                           : std::string("a number in ") + (lo_open ? "(" : "[") +
                                                 number_text(lo) + ", " + number_text(hi) + "]";
  return CLI::Validator(
      [lo, hi, lo_open, range](std::string& text) -> std::string {
        const std::optional<double> v = parse_number(text);
        if (!v || (lo_open ? !(*v > lo) : !(*v >= lo)) || !(*v <= hi))
          return "expected " + range + ", not '" + printable(text) + "'";
        return "";
      },
      range);
}

CLI::Validator solver_option_value(const std::string& field) {
  const std::string range = option_range(field);
  const bool integer = option_is_integer(field);
  return CLI::Validator(
      [field, range, integer](std::string& text) -> std::string {
        std::optional<double> v;
        if (integer) {
          int64_t n = 0;
          const bool digits = !text.empty() && (text[0] == '-' || (text[0] >= '0' && text[0] <= '9'));
          const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
          if (digits && ec == std::errc() && end == text.data() + text.size()) v = static_cast<double>(n);
        } else {
          v = parse_number(text);
        }
        if (!v || !option_in_range(field, *v)) return "expected " + range + ", not '" + printable(text) + "'";
        return "";
      },
      range);
}

std::optional<std::string> parse_flags(CLI::App& app, const std::vector<std::string>& args,
                                       std::vector<std::string>& positional) {
  positional.clear();
  // Unknown options and positional arguments are taken from what CLI11 leaves over, so that
  // their messages are lsjit's ("unknown option '--bogus'"), not CLI11's.
  app.allow_extras(true);
  app.prefix_command(false);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 pops from the back
  try {
    app.parse(reversed);
  } catch (const CLI::ArgumentMismatch& e) {
    const std::string what = e.what();
    return what.substr(0, what.find(':')) + " needs a value\n";
  } catch (const CLI::ParseError& e) {
    // CLI11's own messages echo the input (e.g. "--verbose=VALUE" is a ConversionError that
    // quotes VALUE): escaped and cut like every echoed token.
    std::string message = printable(e.what(), std::string::npos);
    if (message.size() > 300) message = message.substr(0, 300) + "...";
    return message + "\n";
  }
  for (const std::string& extra : app.remaining()) {
    if (extra.size() > 1 && extra[0] == '-') return "unknown option '" + printable(extra) + "'\n";
    positional.push_back(extra);
  }
  return std::nullopt;
}

}  // namespace lsjit::cli
