// How a kernel computes the values it does not get from one IEEE instruction: which
// products are fused into FMAs, and which library function computes each transcendental
// op at a given SIMD width. The compiled kernel (codegen.cpp) and tier 0 (tier0.h) both
// decide through this header, and nothing else changes a value (every other op is one
// correctly rounded IEEE operation, or exact), so the two tiers are bit-identical.
// No LLVM here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "lsjit/compiler/compile_options.h"
#include "lsjit/ir/graph.h"

namespace lsjit::compiler {

// Whether kernels compiled with `options` fuse products (ir/fuse_multiply_add.h): when
// fma_contraction is asked for and the host has FMA (HostCpu::fma). Without FMA in
// hardware an fma is a slow library call, so nothing is fused.
bool fuses_multiply_add(const CompileOptions& options);

// The graph a kernel of `mode_graph` (graph_for_mode's result) evaluates with `options`:
// mode_graph itself, or its products fused when fuses_multiply_add(options).
ir::Trace executed_graph(const ir::Trace& mode_graph, const CompileOptions& options);

// The C library name of a transcendental op (cbrt, exp, ..., pow, ..., hypot), or nullptr
// for ops that are instructions. (Powi past |n| = 16 also calls pow: codegen's lower_powi.)
const char* libm_name(ir::Op op);

// A glibc libmvec variant: `lanes` doubles per call, for the instruction set `isa` ('b'
// SSE2, 'c' AVX, 'd' AVX2, 'e' AVX-512). lanes == 0 means no variant: libm per lane.
struct MathVariant {
  char isa = 0;
  uint32_t lanes = 0;
};

// The variant a kernel of SIMD width `w` calls for function `name` of `arity` (1 or 2)
// arguments: none when !vector_math or w == 1; else the widest of e8, d4, c4, b2 that
// the host can run, has at most w lanes and that this process's libmvec exports. A wider
// w calls it on consecutive chunks of lanes. Every lane's result depends on that lane's
// arguments alone (libmvec computes lanes independently), so any grouping of instances
// into calls gives the same values.
MathVariant math_variant(const CompileOptions& options, uint32_t w, std::string_view name, unsigned arity);

// The variant's symbol, e.g. _ZGVeN8vv_atan2.
std::string mvec_symbol(MathVariant variant, std::string_view name, unsigned arity);

// The address of `symbol` in libmvec.so.1, or nullptr if the library or the symbol is not
// there (never on a host that is not x86-64), or if it is not a variant of a libm_name op.
// Thread safe. The first call loads libmvec and looks up every such variant at once.
void* libmvec_function(const std::string& symbol);
// That first call's work, for a thread that must not meet the dynamic loader's lock later
// (KernelCache calls it before it starts a background compile, which loads libLLVM).
void resolve_math_functions();

}  // namespace lsjit::compiler
