// lsjit._lsjit, the compiled half of the Python package (python/lsjit/ is the other).
#include <dlfcn.h>

#include <cstring>
#include <filesystem>

#include "python/src/bindings.h"

// Where the LLVM module (liblsjit_llvm.so) is looked for first (compiler/llvm/llvm_backend.h):
// this module is loaded by python3, whose /proc/self/exe says nothing about where lsjit is
// installed, so the installed package names the module's place relative to its own file,
// LSJIT_PYTHON_LLVM_BACKEND_RELATIVE (python/CMakeLists.txt). It is filled in once, when
// Python imports this module, before anything can compile. The backend declares it const:
// it only reads it. In the build tree the relative path finds nothing and the build's own
// copy is used.
extern "C" char lsjit_llvm_backend_path[4096];
char lsjit_llvm_backend_path[4096] = {};

namespace {

void locate_llvm_backend() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&locate_llvm_backend), &info) == 0 || !info.dli_fname) return;
  const std::string path = (std::filesystem::path(info.dli_fname).parent_path() / LSJIT_PYTHON_LLVM_BACKEND_RELATIVE)
                               .lexically_normal()
                               .string();
  if (path.size() < sizeof(lsjit_llvm_backend_path))
    std::memcpy(lsjit_llvm_backend_path, path.c_str(), path.size() + 1);
}

}  // namespace

PYBIND11_MODULE(_lsjit, m) {
  m.doc() = "lsjit's compiled core; use the lsjit package";
  locate_llvm_backend();
  lsjit::python::bind_trace(m);
  lsjit::python::bind_lie(m);
  lsjit::python::bind_solve(m);
  lsjit::python::bind_cache(m);
}
