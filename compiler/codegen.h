// Compiling a mode graph into machine code with LLVM 19: lowering to an LLVM module that
// implements the kernel contract of kernel.h, a tuned optimization pipeline, and object
// code emission for the host. This header does not include LLVM; codegen.cpp is the only
// translation unit that does (with jit.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "lsjit/compiler/kernel.h"

namespace lsjit::compiler {

// Options that change the machine code; all of them are part of the cache key.
// The instruction set kernels are compiled for. Host: this CPU exactly (its model and
// CPUID features, keyed by its fingerprint: the fastest code, found only on identical
// CPUs). The x86-64 psABI levels: code any CPU of that level runs, keyed by the level's
// name, so kernels exported on one machine (`lsjit cache export`) are found on any other
// of the level. A level this CPU cannot run is an error (host_target), never a guess.
enum class CpuLevel : uint8_t { Host, X86_64, X86_64_V2, X86_64_V3, X86_64_V4 };
std::string_view cpu_level_name(CpuLevel level);  // host, x86-64, x86-64-v2, -v3, -v4
std::optional<CpuLevel> cpu_level_from_name(std::string_view name);

struct CompileOptions {
  // SIMD lanes across instances: 0 picks the host's best (8 with AVX-512F, 4 with AVX2,
  // 2 otherwise); 1 compiles a scalar loop; else 2, 4, 8 or 16. Every instance goes
  // through the same vector code, also at the end of a range and in ranges shorter than
  // a vector (codegen.cpp), so results do not depend on how a range is split.
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

// The machine code is for. Part of the cache key. Computed without LLVM (host_cpu.h), so
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
// Defined in host_cpu.cpp. Throws lsjit::Error for a vector width that is not 0, 1, 2, 4,
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

struct CompiledObject {
  std::string symbol;       // the kernel function's name in the object
  std::string object_code;  // a relocatable ELF object for the host
  TargetInfo target;
  StageTimes times;         // llvm_ir_s, optimize_s, codegen_s
};

// Lowers `mode_graph` (graph_for_mode's result) for `layout`, optimizes it and emits an
// object file. `symbol` names the kernel function. Throws lsjit::Error if LLVM fails.
CompiledObject compile_kernel(const ir::Trace& mode_graph, const KernelLayout& layout,
                              const CompileOptions& options, const std::string& symbol);

enum class TextStage { Llvm, Optimized, Asm };
// The kernel's LLVM IR before or after optimization, or its assembly (`lsjit trace --stage`).
std::string kernel_text(const ir::Trace& mode_graph, const KernelLayout& layout,
                        const CompileOptions& options, const std::string& symbol,
                        TextStage stage);

}  // namespace lsjit::compiler
