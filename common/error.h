// The one exception type lsjit throws for user-facing errors: bad input files, malformed
// IR text, misuse of the tracer. Programming errors inside lsjit are std::logic_error.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace lsjit {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// `bytes` made safe to echo in a message: control bytes, DEL and bytes >= 0x80 as \xNN, at
// most `max_chars` input bytes, then "..." where there were more. Not quoted. Every token
// that lsjit echoes from outside (a file, a flag, an environment variable, a cache entry's
// name) goes through this one function, so none can garble or drive a terminal.
std::string printable(std::string_view bytes, size_t max_chars = 40);

}  // namespace lsjit
