#include "lsjit/compiler/kernel_numerics.h"

#include <dlfcn.h>

#include <map>
#include <string>

#include "lsjit/common/cpu.h"
#include "lsjit/ir/fuse_multiply_add.h"
#include "lsjit/ir/op.h"

namespace lsjit::compiler {

bool fuses_multiply_add(const CompileOptions& options) {
  return options.fma_contraction && target_isa(options.cpu_level).fma;
}

ir::Trace executed_graph(const ir::Trace& mode_graph, const CompileOptions& options) {
  return fuses_multiply_add(options) ? ir::fuse_multiply_add(mode_graph) : mode_graph;
}

const char* libm_name(ir::Op op) {
  using ir::Op;
  switch (op) {
    case Op::Cbrt: return "cbrt";
    case Op::Exp: return "exp";
    case Op::Expm1: return "expm1";
    case Op::Log: return "log";
    case Op::Log1p: return "log1p";
    case Op::Pow: return "pow";
    case Op::Sin: return "sin";
    case Op::Cos: return "cos";
    case Op::Tan: return "tan";
    case Op::Asin: return "asin";
    case Op::Acos: return "acos";
    case Op::Atan: return "atan";
    case Op::Atan2: return "atan2";
    case Op::Sinh: return "sinh";
    case Op::Cosh: return "cosh";
    case Op::Tanh: return "tanh";
    case Op::Hypot: return "hypot";
    default: return nullptr;
  }
}

std::string mvec_symbol(MathVariant variant, std::string_view name, unsigned arity) {
  return std::string("_ZGV") + variant.isa + "N" + std::to_string(variant.lanes) +
         std::string(arity, 'v') + "_" + std::string(name);
}

MathVariant math_variant(const CompileOptions& options, uint32_t w, std::string_view name, unsigned arity) {
  if (!options.vector_math || w == 1) return {};
  const HostCpu& h = target_isa(options.cpu_level);
  const MathVariant candidates[] = {{'e', 8}, {'d', 4}, {'c', 4}, {'b', 2}};
  const bool isa_ok[] = {h.avx512f, h.avx2, h.avx, h.sse2};
  for (size_t k = 0; k < 4; ++k) {
    if (!isa_ok[k] || candidates[k].lanes > w) continue;
    if (libmvec_function(mvec_symbol(candidates[k], name, arity))) return candidates[k];
  }
  return {};
}

namespace {

// libmvec's entry points that kernels can call: every libm_name op in every variant, looked
// up once, when the library is first wanted. After that no lookup takes the dynamic
// loader's lock, which a background compile holds for tens of milliseconds while it loads
// libLLVM (a tier-0 kernel built on the solving thread would wait for it in dlsym).
struct Mvec {
  void* library = nullptr;
  std::map<std::string, void*, std::less<>> functions;
};

const Mvec& mvec() {
  // Never destroyed, like every static that compiling a kernel uses: a background compile
  // (background_compile.cpp) can still be running while exit() runs static destructors.
  static const Mvec* table = [] {
    auto* t = new Mvec;
    t->library = host_cpu().sse2 ? dlopen("libmvec.so.1", RTLD_NOW | RTLD_GLOBAL) : nullptr;
    if (!t->library) return t;
    const MathVariant variants[] = {{'e', 8}, {'d', 4}, {'c', 4}, {'b', 2}};
    for (int k = 0; k < ir::kNumOps; ++k) {
      const ir::OpInfo& op = ir::info(static_cast<ir::Op>(k));
      const char* name = libm_name(op.op);
      if (!name) continue;
      for (const MathVariant& v : variants) {
        const std::string symbol = mvec_symbol(v, name, op.arity);
        if (void* f = dlsym(t->library, symbol.c_str())) t->functions.emplace(symbol, f);
      }
    }
    return t;
  }();
  return *table;
}

}  // namespace

void resolve_math_functions() { (void)mvec(); }

void* libmvec_function(const std::string& symbol) {
  const Mvec& m = mvec();
  const auto it = m.functions.find(symbol);
  return it == m.functions.end() ? nullptr : it->second;
}

}  // namespace lsjit::compiler
