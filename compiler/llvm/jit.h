// The process's ORC JIT session: loads kernel object files, resolves their calls into libm
// and libmvec, and hands out function pointers. Kernels can be unloaded, releasing their
// code memory. load_kernel (kernel_loader.h) uses it only on hosts the LLVM-free loader
// does not handle; on x86-64 Linux it is there to compare the two.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "lsjit/compiler/cache/kernel_loader.h"
#include "lsjit/compiler/kernel.h"

namespace lsjit::compiler {

// Links `object_code` into the process and returns the function named `symbol`. Thread
// safe. Throws lsjit::Error when the object is malformed, does not define `symbol`, or
// references a symbol that cannot be resolved.
std::shared_ptr<LoadedKernel> load_kernel_orc(const std::string& object_code,
                                              const std::string& symbol);

}  // namespace lsjit::compiler
