#include "lsjit/runtime/cpu_features.h"

namespace lsjit::detail {

bool cpu_splits_512_bit_operations() {
  static const bool splits = [] {
#if defined(__x86_64__)
    // What libgcc read with CPUID when the process started, not CPUID again: the
    // instruction traps to the hypervisor, 8-10 µs each on this project's VMs.
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_is("amdfam19h");
#else
    return false;
#endif
  }();
  return splits;
}

}  // namespace lsjit::detail
