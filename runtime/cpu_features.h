// What the runtime's hand-vectorized passes (the evaluator's assembly, the Schur kernels, the
// blocked Cholesky) need to know about the CPU beyond its instruction sets.
//
// Why: those passes are compiled once per instruction set and chosen at run time. Which
// variant is fastest is not always the widest the CPU has: AMD's Zen 4 implements AVX-512
// on 256-bit units, issuing every 512-bit operation as two halves, and there the 256-bit
// variants measured faster (docs/benchmarks.md, issue 5). Zen 5 and Intel's AVX-512 CPUs
// have 512-bit units.
#pragma once

namespace lsjit::detail {

// True on a CPU with AVX-512 whose vector units are 256 bits wide (AMD family 19h: Zen 4),
// false elsewhere, including every CPU without AVX-512 and every non-x86 build. Computed
// once.
bool cpu_splits_512_bit_operations();

}  // namespace lsjit::detail
