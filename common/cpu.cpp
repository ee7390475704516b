// CPUID and XCR0, read directly (cpu.h says which words and why).
#include "lsjit/common/cpu.h"

#include <cstdio>
#include <initializer_list>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace lsjit {
namespace {

#if defined(__x86_64__)
struct Regs {
  uint32_t a = 0, b = 0, c = 0, d = 0;
};

Regs cpuid(uint32_t leaf, uint32_t subleaf, uint32_t max_basic, uint32_t max_extended) {
  Regs r;
  const uint32_t max = leaf >= 0x80000000u ? max_extended : max_basic;
  if (leaf <= max) __cpuid_count(leaf, subleaf, r.a, r.b, r.c, r.d);
  return r;
}

uint64_t xcr0() {
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t{hi} << 32) | lo;
}

HostCpu detect() {
  HostCpu h;
  uint32_t max_basic = 0, max_extended = 0, unused = 0;
  Regs l0;
  __cpuid(0, l0.a, l0.b, l0.c, l0.d);
  max_basic = l0.a;
  __cpuid(0x80000000u, max_extended, unused, unused, unused);
  auto get = [&](uint32_t leaf, uint32_t sub) { return cpuid(leaf, sub, max_basic, max_extended); };

  const Regs l1 = get(1, 0), l7 = get(7, 0), l7s1 = get(7, 1), ld1 = get(0xd, 1),
             l14 = get(0x14, 0), l19 = get(0x19, 0), l24 = get(0x24, 0),
             e1 = get(0x80000001u, 0), e8 = get(0x80000008u, 0);
  const bool osxsave = (l1.c >> 27) & 1;
  const uint64_t xcr = osxsave ? xcr0() : 0;

  const std::vector<uint32_t> words = {
      l0.a, l0.b, l0.c, l0.d, l1.a, l1.b & 0xffffu, l1.c, l1.d, l7.a, l7.b, l7.c, l7.d,
      l7s1.a, l7s1.b, l7s1.c, l7s1.d, ld1.a, ld1.b, ld1.c, ld1.d, l14.a, l14.b, l14.c, l14.d,
      l19.a, l19.b, l19.c, l19.d, l24.a, l24.b, l24.c, l24.d, max_extended, e1.c, e1.d, e8.b,
      static_cast<uint32_t>(xcr), static_cast<uint32_t>(xcr >> 32)};
  char hex[12];
  for (uint32_t w : words) {
    std::snprintf(hex, sizeof hex, "%08x", w);
    if (!h.fingerprint.empty()) h.fingerprint += ',';
    h.fingerprint += hex;
  }

  char vendor[13] = {};
  for (int k = 0; k < 4; ++k) {
    vendor[k] = static_cast<char>(l0.b >> (8 * k));
    vendor[4 + k] = static_cast<char>(l0.d >> (8 * k));
    vendor[8 + k] = static_cast<char>(l0.c >> (8 * k));
  }
  uint32_t family = (l1.a >> 8) & 0xf, model = (l1.a >> 4) & 0xf;
  if (family == 0xf) family += (l1.a >> 20) & 0xff;
  if (family >= 0x6) model += ((l1.a >> 16) & 0xf) << 4;
  char name[96];
  std::snprintf(name, sizeof name, "%s family 0x%x model 0x%x stepping %u", vendor, family,
                model, l1.a & 0xf);
  h.name = name;

  // The OS must save the registers: XMM|YMM (bits 1, 2) for AVX, and opmask|ZMM (5-7)
  // for AVX-512, as LLVM's HasAVXSave and HasAVX512Save.
  const bool ymm_saved = (xcr & 0x6) == 0x6;
  const bool zmm_saved = ymm_saved && (xcr & 0xe0) == 0xe0;
  h.sse2 = true;
  h.avx = ymm_saved && ((l1.c >> 28) & 1);
  h.fma = ymm_saved && ((l1.c >> 12) & 1);  // LLVM's HasFMA: the bit and AVX state saved
  h.avx2 = h.avx && ((l7.b >> 5) & 1);
  h.avx512f = zmm_saved && ((l7.b >> 16) & 1);
  // The psABI levels (x86-64-psABI, "Micro-architecture levels"), each needing the last.
  auto bits = [](uint32_t word, std::initializer_list<int> positions) {
    for (int b : positions)
      if (!((word >> b) & 1)) return false;
    return true;
  };
  const bool v2 = bits(l1.c, {0, 9, 13, 19, 20, 23}) && bits(e1.c, {0});  // SSE3 SSSE3 CX16 SSE4.1/4.2 POPCNT LAHF
  const bool v3 = v2 && h.avx2 && h.fma && bits(l7.b, {3, 8}) && bits(l1.c, {22, 29}) &&
                  bits(e1.c, {5});  // BMI1 BMI2 MOVBE F16C LZCNT
  const bool v4 = v3 && zmm_saved && bits(l7.b, {16, 17, 28, 30, 31});  // AVX512 F DQ CD BW VL
  h.x86_64_level = v4 ? 4 : v3 ? 3 : v2 ? 2 : 1;
  return h;
}
#else
// What LLVM reads on Linux elsewhere (aarch64): the CPU's implementer and part, and its
// feature list, from /proc/cpuinfo (of the first CPU listed).
HostCpu detect() {
  HostCpu h;
  h.name = "generic";
#if defined(__aarch64__)
  h.fma = true;  // AArch64's floating point has fused multiply-add (fmadd, fmla)
#endif
  if (std::FILE* f = std::fopen("/proc/cpuinfo", "r")) {
    char line[4096];
    while (std::fgets(line, sizeof line, f)) {
      const std::string l(line);
      for (const char* key : {"Features", "CPU implementer", "CPU architecture", "CPU variant",
                              "CPU part", "CPU revision"})
        if (l.rfind(key, 0) == 0 && h.fingerprint.find(key) == std::string::npos)
          h.fingerprint += l.substr(0, l.find_last_not_of("\n") + 1) + ";";
    }
    std::fclose(f);
  }
  return h;
}
#endif

}  // namespace

const HostCpu& host_cpu() {
  static const HostCpu* h = new HostCpu(detect());  // never destroyed: a background
                                                     // compile may read it during exit()
  return *h;
}

const HostCpu& target_isa(CpuLevel level) {
  static const HostCpu* levels = [] {  // never destroyed, as host_cpu()
    auto* l = new HostCpu[5];
    for (int k = 1; k <= 4; ++k) {
      l[k].name = std::string(cpu_level_name(static_cast<CpuLevel>(k)));
      l[k].fingerprint = l[k].name;
      l[k].sse2 = true;
      l[k].avx = l[k].avx2 = l[k].fma = k >= 3;
      l[k].avx512f = k >= 4;
      l[k].x86_64_level = static_cast<uint8_t>(k);
    }
    return l;
  }();
  return level == CpuLevel::Host ? host_cpu() : levels[static_cast<int>(level)];
}

std::string_view cpu_level_name(CpuLevel level) {
  switch (level) {
    case CpuLevel::Host: return "host";
    case CpuLevel::X86_64: return "x86-64";
    case CpuLevel::X86_64_V2: return "x86-64-v2";
    case CpuLevel::X86_64_V3: return "x86-64-v3";
    case CpuLevel::X86_64_V4: return "x86-64-v4";
  }
  return "?";
}

std::optional<CpuLevel> cpu_level_from_name(std::string_view name) {
  for (CpuLevel l : {CpuLevel::Host, CpuLevel::X86_64, CpuLevel::X86_64_V2, CpuLevel::X86_64_V3,
                     CpuLevel::X86_64_V4})
    if (cpu_level_name(l) == name) return l;
  return std::nullopt;
}

bool cpu_splits_512_bit_operations() {
  static const bool splits = [] {
#if defined(__x86_64__)
    // What libgcc read with CPUID when the process started, not CPUID again: the
    // instruction traps to the hypervisor on virtual machines, microseconds each.
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_is("amdfam19h");
#else
    return false;
#endif
  }();
  return splits;
}

}  // namespace lsjit
