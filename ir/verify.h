// The written-down invariants of an ir::Trace, and the checker for them (in the style of
// Halide's IR verifier). Every pass output is verified (differentiate.cpp), and so is every
// parsed text (parser.cpp); the tests verify every trace they build.
//
// verify(trace) checks, in this order, and throws std::logic_error naming the first
// violated invariant, the node or output it found it at, what it expected and what it found:
//
//   signature      the signature rules of verify_signature() below (residual_dim >= 1);
//                  the stage is one of enum Stage.
//   Per node %i, in order:
//   op table       the op is a row of kOpTable (op.h).
//   leaves         Const and Input have no arguments (num_args 0, args all kNoNode).
//   arity          an op's num_args is its arity in the op table; args beyond it are kNoNode.
//   topological order  every argument is an earlier node (id < i).
//   argument types as in the op table.
//   result type    as in the op table; a Const is f64 or bool (a bool Const is 0 or 1).
//   int attribute  only powi has a nonzero int_attr.
//   unused fields  value is +0 except on a Const, input is the default InputRef except on
//                  an Input (Graph::operator== and hash-consing compare them).
//   input range    an Input's slot and component are in the signature: var slot <
//                  vars.size() and component < ambient; tangent component < tangent; data
//                  slot < data.size() and component < rows*cols.
//   stage rules    no Tangent input unless the stage allows it (graph.h, enum Stage).
//   Per output k, in order:
//   output node    the node exists and is f64; the role is one of enum OutputRole.
//   stage rules    only the roles of the stage (graph.h, enum Stage): residual outputs at
//                  every stage but normal_equations, Jacobian outputs at stage jacobian,
//                  cost, gradient and Hessian outputs at stage normal_equations.
//   residual output  var == col == var2 == 0 and row < residual_dim.
//   jacobian output  var2 == 0, var < vars.size(), row < residual_dim, col < tangent of var.
//   cost output    row == var == col == var2 == 0.
//   gradient output  col == var2 == 0, var < vars.size(), row < tangent of var.
//   hessian output var < vars.size(), var2 < vars.size(), var <= var2, row < tangent of
//                  var, col < tangent of var2.
//   Then over all outputs:
//   unique outputs no two outputs have the same target (role, var, var2, row, col).
//   residual rows  every residual row has an output (except at stage normal_equations).
//   stage rules    at stage jacobian, every J[var](row, col) has an output; at stage
//                  normal_equations, the cost, every g[var](row) and every
//                  H[var,var2](row, col) with var <= var2 have one.
//
// verify() is linear in the graph, plus a sort of the outputs.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lsjit/ir/graph.h"

namespace lsjit::ir {

void verify(const Trace& trace);

// Whether residual_dim may still be 0: the Tracer takes it from the residual when it is.
enum class ResidualDim : uint8_t { Required, MayBeZero };

// The signature rules. Costs and slots are named by users, so this throws lsjit::Error
// (error.h), naming the cost, the slot and the bad name or size:
//   - the cost name is non-empty, of letters, digits, '_', '.' and '-' (is_cost_name);
//   - variable names are identifiers ([A-Za-z_][A-Za-z0-9_]*), unique among the variables;
//     data names likewise, unique among the data slots;
//   - type names are non-empty, without whitespace or '#' (is_type_name);
//   - residual_dim >= 1 (unless MayBeZero); every variable has ambient >= 1 and
//     tangent >= 1; every data slot has rows >= 1 and cols >= 1 and rows*cols < 2^32.
// These are exactly the names the text format can read back (printer.h).
void verify_signature(const Signature& signature,
                      ResidualDim residual_dim = ResidualDim::Required);

// The name rules, shared with the parser.
bool is_identifier(std::string_view name);
bool is_cost_name(std::string_view name);
bool is_type_name(std::string_view name);

// `s` in single quotes, with bytes outside printable ASCII as \xNN: how messages show names.
std::string quoted(std::string_view s);

// How messages name an output: res[ROW], J[VAR](ROW,COL), cost, g[VAR](ROW) or
// H[VAR,VAR2](ROW,COL), VAR being the variable's name (or #SLOT when it has none or the
// slot is out of range).
std::string output_name(const Signature& signature, const Output& output);

// The first output that `stage` requires and `outputs` lacks: residual rows in order, then
// (at stage jacobian) J[var](row, col) in order of var, row, col; at stage
// normal_equations the cost, then g[var](row) in order of var, row, then H[var,var2](row,
// col) in order of var, var2, row, col. nullopt when none is missing. Outputs out of range
// of the signature, and outputs of roles the stage does not require, are ignored.
std::optional<Output> first_missing_output(const Signature& signature, Stage stage,
                                           const std::vector<Output>& outputs);

}  // namespace lsjit::ir
