// Reads the text form of an ir::Trace that print() writes; the format is described in
// printer.h. Hand-written IR is welcome as long as it follows the same grammar:
//
//   file    = "lsjit.ir 1"  cost  decl*  node*  output*  "end"
//   cost    = "cost" NAME "kind=" KIND "stage=" STAGE "residuals=" UINT
//   decl    = "var" ID ":" TYPE "ambient=" UINT "tangent=" UINT
//           | "data" ID ":" TYPE "rows=" UINT "cols=" UINT
//   node    = "%"N "=" rhs ":" ("f64" | "bool")
//   rhs     = "const" LITERAL | "input" ("var" | "data" | "tangent") ID "[" UINT "]"
//           | OP ("%"N)*  [INT, for powi only]
//   output  = target "=" "%"N
//   target  = "res[" UINT "]"  |  "J[" ID "](" UINT "," UINT ")"
//           | "cost"  |  "g[" ID "](" UINT ")"  |  "H[" ID "," ID "](" UINT "," UINT ")"
//
// The graph is rebuilt exactly as written: nodes are appended as they are, with no
// folding, rewriting or hash-consing, so node ids are the printed ones. What the parser
// does check is every invariant that later passes rely on for correctness:
//   - node N is the N-th node, and its arguments are earlier nodes;
//   - the op exists, has its arity, argument types and result type from the op table;
//     only powi carries an integer (a 32-bit exponent);
//   - inputs name a declared slot and a component below its ambient dimension (var),
//     tangent dimension (tangent) or rows*cols (data);
//   - outputs: res row < residuals; J names a variable, row < residuals, column < its
//     tangent dimension; g names a variable, row < its tangent dimension; H names two
//     variables a, b with a declared no later than b, row < the tangent dimension of a,
//     column < that of b; the node exists and is f64; no output target appears twice;
//   - names are declared once per kind; sections come in the order above; the text ends
//     with `end` and nothing but comments follows it (so a truncated file is an error);
//   - the signature rules of verify.h: names as below, residuals, ambient, tangent, rows
//     and cols at least 1;
//   - the stage rules of graph.h: a `tangent` input only at stage traced, J outputs only at
//     stage jacobian, cost, g and H outputs only at stage normal_equations and res outputs
//     at every other stage (reported where they are written); at `end`, that every residual
//     row has an output, at stage jacobian that every J[var](row, col) has one, and at stage
//     normal_equations that the cost, every g[var](row) and every H[var,var2](row, col) have
//     one (reported at the `end` line, naming the first missing output).
// Finally it runs verify() (verify.h) on the result, reporting any violation at the `end`
// line, so a parsed trace always keeps the invariants of verify.h. It does not check that
// the graph is hash-consed or canonically ordered.
//
// Errors throw lsjit::Error with the message
//   SOURCE:LINE:COL: expected WHAT, found WHAT
// where LINE and COL (1-based, in bytes) locate the offending token, e.g.
//   <ir>:9:15: expected argument 1 of select to be bool, found %3 of type f64
//   <ir>:1:1: expected the header 'lsjit.ir 1', found end of file
#pragma once

#include <string_view>

#include "lsjit/ir/graph.h"

namespace lsjit::ir {

Trace parse(std::string_view text, std::string_view source_name = "<ir>");

}  // namespace lsjit::ir
