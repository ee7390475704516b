// Finding, checking and loading liblsjit_llvm.so (llvm_backend.h), and the functions of
// codegen.h and jit.h that forward to it.
#include "lsjit/compiler/cache/kernel_cache.h"
#include "lsjit/compiler/llvm/llvm_backend.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "lsjit/common/error.h"
#include "lsjit/compiler/llvm/jit.h"

#ifndef LSJIT_LLVM_BACKEND_BUILD_PATH
#error "LSJIT_LLVM_BACKEND_BUILD_PATH must be defined by the build"
#endif
#ifndef LSJIT_INSTALL_LIBDIR
#error "LSJIT_INSTALL_LIBDIR must be defined by the build"
#endif

// Defined by a program that wants the module from a particular place (llvm_backend.h).
extern "C" __attribute__((weak)) const char lsjit_llvm_backend_path[];

namespace lsjit::compiler {
namespace {

constexpr const char* kModuleName = "liblsjit_llvm.so";

std::vector<std::string> candidates() {
  std::vector<std::string> paths;
  if (lsjit_llvm_backend_path != nullptr && lsjit_llvm_backend_path[0] != '\0')
    paths.emplace_back(lsjit_llvm_backend_path);
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec)
    paths.push_back((exe.parent_path().parent_path() / LSJIT_INSTALL_LIBDIR / "lsjit" / kModuleName)
                        .lexically_normal()
                        .string());
  paths.emplace_back(LSJIT_LLVM_BACKEND_BUILD_PATH);
  return paths;
}

// Opens, checks and loads one candidate; on failure returns nullptr and says why.
void* open_trusted(const std::string& path, std::string& why) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    why = errno == ENOENT ? "not there" : std::string("cannot open: ") + std::strerror(errno);
    return nullptr;
  }
  struct stat st {};
  void* handle = nullptr;
  if (::fstat(fd, &st) != 0)
    why = std::string("cannot stat: ") + std::strerror(errno);
  else if (!S_ISREG(st.st_mode))
    why = "not a regular file";
  else if (st.st_uid != 0 && st.st_uid != ::geteuid())
    why = "owned by another user (uid " + std::to_string(st.st_uid) + ")";
  else if (st.st_mode & (S_IWGRP | S_IWOTH))
    why = "writable by group or others";
  else {
    const std::string by_fd = "/proc/self/fd/" + std::to_string(fd);
    handle = ::dlopen(by_fd.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) why = std::string("cannot be loaded: ") + ::dlerror();
  }
  ::close(fd);
  return handle;
}

const LlvmBackendApi* check_api(void* handle, std::string& why) {
  using Entry = const LlvmBackendApi* (*)();
  auto entry = reinterpret_cast<Entry>(::dlsym(handle, "lsjit_llvm_backend_v1"));
  const LlvmBackendApi* api = entry ? entry() : nullptr;
  if (!api) {
    why = "has no lsjit_llvm_backend_v1";
    return nullptr;
  }
  if (api->abi != kLlvmBackendAbi || api->trace_size != sizeof(ir::Trace) ||
      api->layout_size != sizeof(KernelLayout) || api->options_size != sizeof(CompileOptions) ||
      api->object_size != sizeof(CompiledObject) || !api->compile || !api->text || !api->load) {
    why = "is from another build of lsjit (its ABI or type sizes differ)";
    return nullptr;
  }
  return api;
}

std::once_flag loaded_once;
const LlvmBackendApi* loaded_api = nullptr;
std::string load_failure;

void load() {
  std::string tried;
  for (const std::string& path : candidates()) {
    std::string why;
    if (void* handle = open_trusted(path, why)) {
      if (const LlvmBackendApi* api = check_api(handle, why)) {
        loaded_api = api;
        // libLLVM registered its static destructors as it loaded; handlers registered
        // later run earlier, so this one lets background compiles finish before them.
        std::atexit(wait_for_background_compiles);
        return;
      }
      // A refused module stays mapped (dlclose of a module that may have run static
      // constructors is not worth the risk); it is never called.
    }
    tried += "\n  " + path + ": " + why;
  }
  load_failure = "cannot load the LLVM compiler module " + std::string(kModuleName) +
                 ", which compiling a kernel needs (kernels in the disk cache load without "
                 "it). Looked at:" + tried;
}

void check(const std::string& error) {
  if (!error.empty()) throw Error(error);
}

}  // namespace

const LlvmBackendApi& llvm_backend() {
  std::call_once(loaded_once, load);
  if (!loaded_api) throw Error(load_failure);
  return *loaded_api;
}

CompiledObject compile_kernel(const ir::Trace& mode_graph, const KernelLayout& layout,
                              const CompileOptions& options, const std::string& symbol) {
  CompiledObject out;
  check(llvm_backend().compile(mode_graph, layout, options, symbol, &out));
  return out;
}

std::string kernel_text(const ir::Trace& mode_graph, const KernelLayout& layout,
                        const CompileOptions& options, const std::string& symbol,
                        TextStage stage) {
  std::string out;
  check(llvm_backend().text(mode_graph, layout, options, symbol, stage, &out));
  return out;
}

std::shared_ptr<LoadedKernel> load_kernel_orc(const std::string& object_code,
                                              const std::string& symbol) {
  std::shared_ptr<LoadedKernel> out;
  check(llvm_backend().load(object_code, symbol, &out));
  return out;
}

}  // namespace lsjit::compiler
