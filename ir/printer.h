// The text form of an ir::Trace, and its printer. parse() (parser.h) reads it back.
//
// Contract: for every Trace that passes verify() (verify.h: the graph invariants, the
// stage rules of graph.h, the name and size rules of the signature), parse(print(t)) has
// the same signature, stage and graph (Graph::operator==, which compares constants bit
// for bit), and print(parse(print(t))) == print(t) byte for byte.
//
// The format: one item per line; `#` starts a comment that runs to the end of the line;
// blank lines and comments are ignored by the parser, so the comment lines below are
// regenerated on every print. Tokens are separated by spaces.
//
//   lsjit.ir 1                                         format and version
//   cost se2_between kind=least_squares stage=jacobian residuals=3
//   # structural hash 9f3c...(32 hex digits)            structural_hash.h
//   # nodes 57: const 3, input 10, ops 44 (add 12, mul 20, ...)    counts, op-table order
//   # outputs 12: res 3, J 9                           (cost 1, g G, H H at normal_equations)
//   # runtime inputs (never recompile): var a b; data z       the cache effect of inputs
//   # baked into the kernel (in the cache key): 4 constants; pass values ... as data
//   # jacobian sparsity: J[a] 3x3 9/9 nonzero, J[b] 3x3 5/9 nonzero   (if any J outputs)
//   # J[b] = [xx. | .x. | ..x]                          rows; x = an output not const 0
//   # hessian sparsity: H[a,a] 3x3 9/9 nonzero, ...     likewise for H[v,w] (if any H outputs)
//   var a : SE2 ambient=4 tangent=3                     variable slots, in slot order
//   data z : Vec3 rows=3 cols=1                         data slots, in slot order
//   %0 = input var a[0] : f64                           every node, %N = its index
//   %4 = input tangent a[0] : f64
//   %9 = input data z[0] : f64
//   %12 = const 0.5 : f64
//   %13 = const true : bool
//   %14 = mul %0 %12 : f64                              op name (op.h), arguments, type
//   %15 = powi %14 -3 : f64                             powi: its exponent follows
//   res[0] = %17                                        outputs, in graph order
//   J[a](0,1) = %20                                     J[var](row, tangent column)
//   cost = %30                                          at stage normal_equations: ½‖r‖²,
//   g[a](2) = %31                                       (J_aᵀ r)[2],
//   H[a,b](1,0) = %32                                   (J_aᵀ J_b)[1,0], a <= b in slot order
//   end                                                 so truncation is detected
//
// f64 constants print in the shortest form that parses back to the same double
// (std::to_chars), so -0 prints as `-0`; infinities as `inf` and `-inf`; the NaN with
// bits 0x7ff8000000000000 as `nan`, with bits 0xfff8000000000000 as `-nan`, and any other
// NaN as `nan(0x<the 16 hex digits of its bits>)`. Bool constants print `true`/`false`.
//
// Names: slot and cost names print verbatim. The output parses only if variable and data
// names are identifiers ([A-Za-z_][A-Za-z0-9_]*, unique per kind), the cost name uses
// letters, digits, `_`, `.` and `-`, and type names contain no space or `#`. Names that
// only code can produce print as follows, so that the output parses but the signature
// read back differs: an empty variable name prints as a, b, ..., z, then v26, v27, ...;
// an empty data name as d0, d1, ...; each with `_` appended while it collides with
// another slot's name; an empty cost name as `unnamed`; an empty type as `?`.
#pragma once

#include <string>

#include "lsjit/ir/graph.h"

namespace lsjit::ir {

std::string print(const Trace& trace);

}  // namespace lsjit::ir
