// The pass that fuses a product into the sum that is its only use: a·b + c → fma(a, b, c),
// with one rounding instead of two.
//
// Why a pass and not LLVM's contraction: the compiled kernel and tier 0 (the interpreter
// that runs while LLVM compiles, compiler/tier0/tier0.h) must give bit-identical results, so the
// choice of which products are fused has to be made once, in the graph both of them run.
// LLVM's instruction selection made it before, out of sight of any other executor. The
// rule is the one it applied (DAGCombiner without aggressive fusion): a Mul whose value
// has exactly one use, that use being an Add or a Sub, is fused into it.
//   add(mul(a, b), c), add(c, mul(a, b))  →  fma(a, b, c)       (the first operand first)
//   sub(mul(a, b), c)                      →  fma(a, b, neg(c))  (vfmsub)
//   sub(c, mul(a, b))                      →  fma(neg(a), b, c)  (vfnmadd)
// Negation is exact, so each line is the hardware instruction's value. A Mul that is an
// output, or has two uses, stays a Mul.
#pragma once

#include "lsjit/ir/graph.h"

namespace lsjit::ir {

// `trace` with its single-use products fused, at the same stage and with the same outputs;
// no other rewriting. Verifies the result.
Trace fuse_multiply_add(const Trace& trace);

}  // namespace lsjit::ir
