// The messages IR checks produce, as strings for assertions: what parse() or verify()
// throws for an input, or a marker when it is accepted.
#pragma once

#include <stdexcept>
#include <string>

#include "lsjit/common/error.h"
#include "lsjit/ir/parser.h"
#include "lsjit/ir/verify.h"

namespace lsjit::testing {

// The message of the lsjit::Error that parsing `text` (named t.ir) throws.
inline std::string parse_error(const std::string& text) {
  try {
    ir::parse(text, "t.ir");
  } catch (const lsjit::Error& e) {
    return e.what();
  }
  return "(parsed without error)";
}

// The message of the std::logic_error that verify throws.
inline std::string verify_violation(const ir::Trace& t) {
  try {
    ir::verify(t);
  } catch (const std::logic_error& e) {
    return e.what();
  }
  return "(no violation)";
}

}  // namespace lsjit::testing
