// print -> parse -> print must be the identity on the text, parse must restore the graph
// and signature exactly, and the interpreter must give bit-identical node values on the
// parsed graph.
#pragma once

#include <doctest/doctest.h>

#include <bit>
#include <cstdint>
#include <string>

#include "lsjit/ir/interpreter.h"
#include "lsjit/ir/parser.h"
#include "lsjit/ir/printer.h"

namespace lsjit::testing {

inline void check_round_trip(const ir::Trace& t, const ir::InputValues& inputs) {
  const std::string text = ir::print(t);
  const ir::Trace back = ir::parse(text, t.signature.name + ".ir");
  CHECK_MESSAGE(ir::print(back) == text, t.signature.name);
  CHECK_MESSAGE(back.graph == t.graph, t.signature.name);
  CHECK_MESSAGE(back.signature == t.signature, t.signature.name);
  CHECK(back.stage == t.stage);
  const auto before = ir::evaluate_nodes(t.graph, inputs);
  const auto after = ir::evaluate_nodes(back.graph, inputs);
  REQUIRE(before.size() == after.size());
  size_t differing = 0;
  for (size_t i = 0; i < before.size(); ++i)
    differing += std::bit_cast<uint64_t>(before[i]) != std::bit_cast<uint64_t>(after[i]);
  CHECK_MESSAGE(differing == 0, t.signature.name << ": node values differ after parsing");
}

}  // namespace lsjit::testing
