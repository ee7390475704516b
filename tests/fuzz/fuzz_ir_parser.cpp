// ir::parse on arbitrary bytes: it returns a trace or throws lsjit::Error. A returned trace
// keeps verify()'s invariants, so printer.h's contract applies to it: print -> parse gives
// back the same signature, stage and graph, and printing that gives the same bytes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "lsjit/ir/parser.h"
#include "lsjit/ir/printer.h"
#include "lsjit/ir/verify.h"

namespace {

using lsjit::fuzz::broken;

void check_round_trip(const lsjit::ir::Trace& t) {
  const std::string text = lsjit::ir::print(t);
  lsjit::ir::Trace back;
  try {
    back = lsjit::ir::parse(text, "printed.ir");
  } catch (const lsjit::Error& e) {
    broken(std::string("parse rejected the print of a parsed trace: ") + e.what() + "\n" + text);
  }
  if (!(back.signature == t.signature)) broken("print -> parse changed the signature\n" + text);
  if (back.stage != t.stage) broken("print -> parse changed the stage\n" + text);
  if (!(back.graph == t.graph)) broken("print -> parse changed the graph\n" + text);
  if (lsjit::ir::print(back) != text) broken("print -> parse -> print changed the text\n" + text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  lsjit::fuzz::expect_only_lsjit_errors([&] {
    const lsjit::ir::Trace t = lsjit::ir::parse(text, "fuzz.ir");
    // std::logic_error from verify() escapes and is reported: parser.h promises that a
    // parsed trace keeps verify()'s invariants.
    lsjit::ir::verify(t);
    check_round_trip(t);
  });
  return 0;
}
