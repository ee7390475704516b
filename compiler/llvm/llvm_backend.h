// The LLVM half of the compiler as a module loaded on first use.
//
// Why: libLLVM is ~100 MB to map and tens of milliseconds to relocate and initialize, and a
// process whose kernels all come from the disk cache needs none of it: keys are computed
// from CPUID (common/cpu.h) and objects are linked by kernel_loader.h. So codegen.cpp and
// jit.cpp are built into a separate shared module, liblsjit_llvm.so, and the rest of lsjit
// does not link libLLVM. The first call that needs LLVM (a compile, kernel_text, an ORC
// load) loads the module; the functions of codegen.h and jit.h forward to it.
//
// Where the module is looked for, first found wins:
//   1. lsjit_llvm_backend_path, a C string a program may define (the installed package's
//      lsjitConfig.cmake adds a source that defines it as <prefix>/<libdir>/lsjit/...);
//   2. <directory of the executable>/../<libdir>/lsjit/liblsjit_llvm.so (an installed lsjit);
//   3. the path the build wrote it to.
// Trust: a candidate is opened with O_NOFOLLOW and must be a regular file owned by root or
// the effective user and not writable by group or others, checked on the open descriptor,
// and it is that descriptor which is loaded (/proc/self/fd/N), so the file checked is the
// file loaded. A module from another build is refused: it reports its ABI version and the
// sizes of the types that cross (ir::Trace, KernelLayout, CompileOptions, CompiledObject).
// The module is never unloaded (kernels it loaded through ORC keep pointers into it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "lsjit/compiler/cache/kernel_loader.h"
#include "lsjit/compiler/llvm/codegen.h"

namespace lsjit::compiler {

inline constexpr uint32_t kLlvmBackendAbi = 2;  // 2: CompileOptions::cpu_level

// What the module's entry point `lsjit_llvm_backend_v1` returns. Exceptions do not cross
// the boundary: each function returns an empty string on success, else the error message.
struct LlvmBackendApi {
  uint32_t abi = 0;
  size_t trace_size = 0, layout_size = 0, options_size = 0, object_size = 0;
  std::string (*compile)(const ir::Trace& mode_graph, const KernelLayout& layout,
                         const CompileOptions& options, const std::string& symbol,
                         CompiledObject* out) = nullptr;
  std::string (*text)(const ir::Trace& mode_graph, const KernelLayout& layout,
                      const CompileOptions& options, const std::string& symbol, TextStage stage,
                      std::string* out) = nullptr;
  std::string (*load)(const std::string& object_code, const std::string& symbol,
                      std::shared_ptr<LoadedKernel>* out) = nullptr;
};

// The module's API, loading it on the first call. Thread safe. Throws lsjit::Error naming
// every place looked at and why each was refused when no module can be loaded.
const LlvmBackendApi& llvm_backend();

}  // namespace lsjit::compiler
