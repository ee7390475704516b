// The process's ORC JIT session: loads kernel object files (freshly compiled or read from
// the disk cache), resolves their calls into libm and libmvec, and hands out function
// pointers. Kernels can be unloaded, releasing their code memory.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "lsjit/compiler/kernel.h"

namespace lsjit::compiler {

// A loaded kernel. Destroying the last handle unloads its code; the function pointer is
// valid while a handle exists.
class LoadedKernel {
 public:
  virtual ~LoadedKernel() = default;
  virtual KernelFn function() const = 0;
};

// Links `object_code` into the process and returns the function named `symbol`. Thread
// safe. Throws lsjit::Error when the object is malformed, does not define `symbol`, or
// references a symbol that cannot be resolved.
std::shared_ptr<LoadedKernel> load_kernel(const std::string& object_code, const std::string& symbol);

}  // namespace lsjit::compiler
