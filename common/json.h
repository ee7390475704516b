// JSON text for the summaries lsjit prints (`lsjit solve --json`, `lsjit cache --json`,
// SolveSummary::json()): the one string escaper and the one number format, so that every
// document escapes and rounds the same way.
#pragma once

#include <string>
#include <string_view>

namespace lsjit {

// `s` as a JSON string literal, quotes included: " and \ escaped, \n \r \t by name, other
// control bytes as \u00XX. Bytes >= 0x80 pass through (the caller's text is UTF-8).
std::string json_string(std::string_view s);

// `v` in the fewest digits that read back as the same double, or null when it is
// not finite (JSON has no NaN or infinity).
std::string json_number(double v);

}  // namespace lsjit
