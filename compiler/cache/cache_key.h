// The cache key of a compiled kernel: everything docs/architecture.md ("Traced versus
// static") calls static, as readable (name, value) parts, and their 128-bit hash, whose
// hex is the cache entry's id.
//
// Parts, in this fixed order (make_cache_key; the hash covers the names and values in
// this order, so reordering or renaming a part changes every id):
//   cost             the cost's name
//   kind             least_squares, equality, inequality_le, inequality_ge
//   structural_hash  ir::structural_hash of the *traced* stage: the op graph with every
//                    captured constant, variable types, data shapes, residual dim, kind
//   vars             per variable slot: TYPE(ambient=A,tangent=T), space separated
//   data             per data slot: TYPE(ROWSxCOLS), space separated; `none` if no data
//   residuals        the residual dimension
//   mode             residual, residual_jacobian, normal_equations (mode_name)
//   options          the CompileOptions: vector_width=N fma_contraction=on|off vector_math=on|off,
//                    then cpu_level=NAME unless it is host
//   host_cpu         host_target(options).cpu: vendor, family, model, stepping; or the
//                    CpuLevel's name (x86-64-v3) when options ask for a level
//   host_cpuid       host_target(options).features: the CPUID fingerprint (common/cpu.h), or
//                    the level's name
//   vector_width     host_target(options).vector_width (the resolved SIMD width)
//   triple           host_target(options).triple
//   llvm_version     host_target(options).llvm_version
//   ir_version       kCacheIrVersion
// What never enters a key: the number of instances, variable IDs, variable values, data
// values, slot names (they are cosmetic: the machine code does not depend on them).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lsjit/compiler/compile_options.h"
#include "lsjit/compiler/kernel.h"
#include "lsjit/ir/graph.h"
#include "lsjit/ir/stable_hash.h"

namespace lsjit::compiler {

// The version of everything between the traced IR and the machine code that the other
// key parts do not capture: the IR's semantics, graph_for_mode's passes, the lowering and
// the kernel ABI of kernel.h. Bump it when any of those changes how a kernel behaves, so
// old cache entries stop matching.
// 2: diagonal H blocks packed; 3: off-diagonal H blocks scattered (kernel.h); 4: derivatives
// divide through reciprocals (ir/differentiate.cpp); 5: products fused by
// ir/fuse_multiply_add.h, not by LLVM's contraction
inline constexpr uint32_t kCacheIrVersion = 5;

struct CacheKey {
  std::vector<std::pair<std::string, std::string>> parts;
  Hash128 hash;

  std::string id() const { return hash.hex(); }  // 32 lowercase hex digits
  // The value of part `name`, or an empty view if there is none.
  std::string_view part(std::string_view name) const;
  bool operator==(const CacheKey&) const = default;
};

// 32 hex digits (either case) back to a hash; nullopt otherwise.
std::optional<Hash128> parse_hash_hex(std::string_view hex);

// The hash of `parts`, in their order (names and values).
Hash128 hash_key_parts(const std::vector<std::pair<std::string, std::string>>& parts);
// A key from parts (computes the hash).
CacheKey make_cache_key(std::vector<std::pair<std::string, std::string>> parts);
// The key of `traced` (a Traced-stage trace) compiled in `mode` with `options` for `target`.
CacheKey make_cache_key(const ir::Trace& traced, KernelMode mode, const CompileOptions& options,
                        const TargetInfo& target);
// The same with ir::structural_hash(traced) already computed (it walks the whole graph:
// callers making keys of several modes hash once).
CacheKey make_cache_key(const ir::Trace& traced, KernelMode mode, const CompileOptions& options,
                        const TargetInfo& target, const Hash128& structural_hash);

// The kernel function's symbol for a key: "lsjit_k_" + id.
std::string kernel_symbol(const CacheKey& key);

// Whether `key` names a data entry (KernelCache::read_data: something derived from a
// problem's static structure that is not machine code, e.g. a fill-reducing ordering)
// rather than a kernel: its first part is ("data", what). Its entry has no symbol, no
// stage times and no IR text; its object_code field holds the data.
bool is_data_key(const CacheKey& key);

// One part that differs between two keys. A part only one key has shows `(absent)` on
// the other side.
struct PartDifference {
  std::string part;
  std::string before, after;
};
// The differing parts, in `before`'s part order, then the parts only `after` has.
std::vector<PartDifference> diff_keys(const CacheKey& before, const CacheKey& after);
// How many parts have the same name and value in both keys.
size_t equal_parts(const CacheKey& a, const CacheKey& b);

// How two traced graphs with equal signatures differ.
struct GraphDifference {
  enum class Kind { Same, Constants, OpGraph };
  Kind kind = Kind::Same;
  struct Constant {
    ir::NodeId node;
    double before, after;
  };
  std::vector<Constant> constants;  // Kind::Constants: every constant that differs
  std::string detail;               // Kind::OpGraph: the first difference, in words
};
// Same ops, arguments and inputs node by node but different Const values (by bit
// pattern) -> Constants, naming each; anything else that differs -> OpGraph.
GraphDifference compare_graphs(const ir::Graph& before, const ir::Graph& after);

// Why a cost needed the kernel of `after` where it had `before`, in a few words for the
// recompile-limit warning: the compile options or target, the signature, a captured
// constant (with the advice to pass it as data) or the op graph (code that differs between
// the adds, or a branch on a captured value). The traced graphs may be null.
std::string recompile_cause(const CacheKey& before, const CacheKey& after, const ir::Trace* traced_before,
                            const ir::Trace* traced_after);

// A readable explanation of why `after` missed where `before` was cached, one line per
// item, each line starting with `prefix`: the parts that differ, and when only the
// structural hash differs, whether a captured constant (named, with both values) or the
// op graph differs, with the advice to pass varying values as data. The traced graphs may
// be null (then constants cannot be told from the op graph).
std::string explain_key_difference(const CacheKey& before, const CacheKey& after,
                                   const ir::Trace* traced_before, const ir::Trace* traced_after,
                                   std::string_view prefix = "");

// A double in the shortest form that reads back to the same value.
std::string format_double(double v);

}  // namespace lsjit::compiler
