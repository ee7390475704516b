#include "lsjit/runtime/cpu_features.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace lsjit::detail {

bool cpu_splits_512_bit_operations() {
  static const bool splits = [] {
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx512f")) return false;
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    // Vendor "AuthenticAMD" (ebx holds "Auth"), then the family: base + extended.
    if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx) || ebx != 0x68747541) return false;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
    const unsigned family = ((eax >> 8) & 0xf) + ((eax >> 20) & 0xff);
    return family == 0x19;
#else
    return false;
#endif
  }();
  return splits;
}

}  // namespace lsjit::detail
