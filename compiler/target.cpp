// The target a kernel is compiled for, resolved from CompileOptions without LLVM
// (compile_options.h). The build defines LLVM's host triple and version here, the only
// place that names the LLVM that compiles.
#include <string>

#include "lsjit/common/cpu.h"
#include "lsjit/common/error.h"
#include "lsjit/compiler/compile_options.h"

#ifndef LSJIT_LLVM_HOST_TRIPLE
#error "LSJIT_LLVM_HOST_TRIPLE must be defined by the build (LLVM's host triple)"
#endif
#ifndef LSJIT_LLVM_VERSION
#error "LSJIT_LLVM_VERSION must be defined by the build (LLVM's package version)"
#endif

namespace lsjit::compiler {

uint32_t resolve_vector_width(uint32_t requested, CpuLevel level) {
  if (requested == 0) {
    const HostCpu& h = target_isa(level);
    return h.avx512f ? 8 : h.avx2 ? 4 : 2;
  }
  if (requested > 16 || (requested & (requested - 1)) != 0)
    throw Error("lsjit codegen: vector_width must be 0 (host best), 1, 2, 4, 8 or 16, not " +
                std::to_string(requested));
  return requested;
}

TargetInfo host_target(const CompileOptions& options) {
  if (options.cpu_level != CpuLevel::Host &&
      static_cast<int>(options.cpu_level) > host_cpu().x86_64_level)
    throw Error("lsjit codegen: CompileOptions::cpu_level is " + std::string(cpu_level_name(options.cpu_level)) +
                ", which this CPU (" + host_cpu().name + ") cannot run; it runs up to " +
                (host_cpu().x86_64_level ? std::string(cpu_level_name(static_cast<CpuLevel>(host_cpu().x86_64_level)))
                                         : std::string("none of the x86-64 levels")));
  const HostCpu& h = target_isa(options.cpu_level);
  TargetInfo t;
  t.triple = LSJIT_LLVM_HOST_TRIPLE;
  t.cpu = h.name;
  t.features = h.fingerprint;
  t.vector_width = resolve_vector_width(options.vector_width, options.cpu_level);
  t.llvm_version = LSJIT_LLVM_VERSION;
  return t;
}

}  // namespace lsjit::compiler
