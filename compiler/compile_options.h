// What a kernel compile is asked for (CompileOptions), the machine it targets (TargetInfo)
// and how long its stages took (StageTimes). Apart from the LLVM pass (llvm/codegen.h) so
// that the caches, tier 0 and the runtime can name them without it.
#pragma once

#include <cstdint>
#include <string>

#include "lsjit/common/cpu.h"

namespace lsjit::compiler {

// Options that change the machine code; all of them are part of the cache key.
struct CompileOptions {
  // SIMD lanes across instances: 0 picks the host's best (8 with AVX-512F, 4 with AVX2,
  // 2 otherwise); 1 compiles a scalar loop; else 2, 4, 8 or 16. Every instance goes
  // through the same vector code, also at the end of a range and in ranges shorter than
  // a vector (llvm/codegen.cpp), so results do not depend on how a range is split.
  uint32_t vector_width = 0;
  // Fuse a*b+c into one FMA where the host has it (ir/fuse_multiply_add.h, applied by
  // kernel_numerics.h's executed_graph): results differ from the interpreter on the
  // unfused graph by rounding only.
  bool fma_contraction = true;
  // Call glibc's libmvec for sin, cos, exp, log, ... on vectors (<= 4 ulp); false calls the
  // scalar libm function per lane.
  bool vector_math = true;
  CpuLevel cpu_level = CpuLevel::Host;
  bool operator==(const CompileOptions&) const = default;
};

// The machine code is for. Part of the cache key. Computed without LLVM (common/cpu.h), so
// that a process can find its kernels in the disk cache without loading libLLVM.
struct TargetInfo {
  std::string triple;         // LLVM's host triple, from the build's configuration
  std::string cpu;            // HostCpu::name: "AuthenticAMD family 0x1a model 0x44 stepping 0",
                              // or the CpuLevel's name ("x86-64-v3")
  std::string features;       // HostCpu::fingerprint: the CPUID words LLVM decides from, or
                              // the CpuLevel's name
  uint32_t vector_width = 1;  // resolved from CompileOptions
  std::string llvm_version;   // e.g. 19.1.7, from the build's configuration
};
// Defined in target.cpp. Throws lsjit::Error for a vector width that is not 0, 1, 2, 4,
// 8 or 16, and for a CpuLevel this CPU cannot run.
TargetInfo host_target(const CompileOptions& options);

// Seconds spent in each stage of producing one kernel. trace_s and differentiate_s are
// filled by whoever traced and differentiated (the cache); the rest by compile_kernel.
struct StageTimes {
  double trace_s = 0, differentiate_s = 0, simplify_s = 0;
  double llvm_ir_s = 0, optimize_s = 0, codegen_s = 0, link_s = 0;
  double total() const {
    return trace_s + differentiate_s + simplify_s + llvm_ir_s + optimize_s + codegen_s + link_s;
  }
};

// The SIMD width CompileOptions::vector_width means for `level`: 0 picks the best of
// target_isa(level) (8 with AVX-512F, 4 with AVX2, 2 otherwise); 1, 2, 4, 8 and 16 are
// taken as they are. Throws lsjit::Error for anything else. Defined in target.cpp.
uint32_t resolve_vector_width(uint32_t requested, CpuLevel level = CpuLevel::Host);

}  // namespace lsjit::compiler
