// What every fuzz target shares: the rule that bad input may only ever raise lsjit::Error,
// and a way to report a broken contract that libFuzzer records as a crash (with the input
// saved as an artifact).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "lsjit/common/error.h"

namespace lsjit::fuzz {

[[noreturn]] inline void broken(const std::string& what) {
  std::fprintf(stderr, "fuzz: broken contract: %s\n", what.c_str());
  std::abort();
}

// Runs `body`; lsjit::Error is the documented answer to bad input, anything else that
// escapes is a bug. (Without this an escaping std::exception would also abort, but with a
// message that does not say what was thrown.)
template <class Body>
void expect_only_lsjit_errors(Body&& body) {
  try {
    body();
  } catch (const lsjit::Error&) {
  } catch (const std::exception& e) {
    broken(std::string("an exception other than lsjit::Error escaped: ") + e.what());
  }
}

}  // namespace lsjit::fuzz
