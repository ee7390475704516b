// The one exception type lsjit throws for user-facing errors: bad input files, malformed
// IR text, misuse of the tracer. Programming errors inside lsjit are std::logic_error.
#pragma once

#include <stdexcept>
#include <string>

namespace lsjit {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace lsjit
