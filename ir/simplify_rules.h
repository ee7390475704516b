// The algebraic simplifier of the lsjit IR, written as a table of rewrite rules.
//
// Why a table: every rule is one line that a reader can check against IEEE 754, with the
// assumptions it needs stated beside it, and adding a rule cannot disturb another. The
// rules are S-expressions over IR op names: single lower-case letters are wildcards
// (a letter used twice must match the same node, which hash-consing makes a test of
// identity; at most four letters in a rule, and a replacement names only its pattern's),
// numbers are f64 constants compared by value, `true`/`false` are boolean
// constants, and the integer after `powi x` is its exponent. Commutative ops match in
// both argument orders.
//
// A rule with no assumptions is exact in IEEE 754 double arithmetic for every input,
// including NaN, infinities and signed zeros. Rules that are exact only when no value is
// NaN or infinite need kAssumeFinite; those exact only up to the sign of zero need
// kIgnoreSignedZero. No rule changes rounding (so no reassociation, no distribution).
// Which assumptions a pass may use is its own decision and is documented there; the
// default pipeline uses none except where differentiation substitutes delta = 0
// (differentiate.h).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "lsjit/ir/graph.h"

namespace lsjit::ir {

struct RewriteRule {
  std::string_view pattern;
  std::string_view replacement;
  uint32_t assumptions;
};

// The rule table, in the order rules are tried.
std::span<const RewriteRule> rewrite_rules();

// Applies the first rule that matches `candidate` (a node not yet interned, whose
// arguments are nodes of `builder`) and whose assumptions are allowed. Returns the id of
// the replacement, built through `builder` (and so itself simplified), or kNoNode.
NodeId rewrite(GraphBuilder& builder, const Node& candidate, uint32_t allowed_assumptions);

}  // namespace lsjit::ir
