// The entry point of liblsjit_llvm.so (llvm_backend.h): codegen.cpp's and jit.cpp's
// functions behind a table whose functions return errors instead of throwing them. Built
// into the module only; everything else in the module is hidden.
#include "lsjit/compiler/llvm/codegen.h"
#include "lsjit/compiler/llvm/jit.h"
#include "lsjit/compiler/llvm/llvm_backend.h"

namespace lsjit::compiler {
namespace {

template <class F>
std::string guarded(F&& f) {
  try {
    f();
    return {};
  } catch (const std::exception& e) {
    return e.what()[0] ? std::string(e.what()) : std::string("unknown error");
  } catch (...) {
    return "unknown error";
  }
}

const LlvmBackendApi kApi = [] {
  LlvmBackendApi api;
  api.abi = kLlvmBackendAbi;
  api.trace_size = sizeof(ir::Trace);
  api.layout_size = sizeof(KernelLayout);
  api.options_size = sizeof(CompileOptions);
  api.object_size = sizeof(CompiledObject);
  api.compile = [](const ir::Trace& g, const KernelLayout& l, const CompileOptions& o,
                   const std::string& symbol, CompiledObject* out) {
    return guarded([&] { *out = compile_kernel(g, l, o, symbol); });
  };
  api.text = [](const ir::Trace& g, const KernelLayout& l, const CompileOptions& o,
                const std::string& symbol, TextStage stage, std::string* out) {
    return guarded([&] { *out = kernel_text(g, l, o, symbol, stage); });
  };
  api.load = [](const std::string& object, const std::string& symbol,
                std::shared_ptr<LoadedKernel>* out) {
    return guarded([&] { *out = load_kernel_orc(object, symbol); });
  };
  return api;
}();

}  // namespace
}  // namespace lsjit::compiler

extern "C" __attribute__((visibility("default"))) const lsjit::compiler::LlvmBackendApi*
lsjit_llvm_backend_v1() {
  return &lsjit::compiler::kApi;
}
