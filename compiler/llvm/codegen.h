// Compiling a mode graph into machine code with LLVM 19: lowering to an LLVM module that
// implements the kernel contract of kernel.h, a tuned optimization pipeline, and object
// code emission for the host. This header does not include LLVM; codegen.cpp is the only
// translation unit that does (with jit.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "lsjit/compiler/compile_options.h"
#include "lsjit/compiler/kernel.h"

namespace lsjit::compiler {

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
