// The CPU this process runs on, as every layer needs it: the instruction-set levels kernels
// are compiled for (CpuLevel), the host's identity for the kernel cache (HostCpu), and what
// the runtime's hand-vectorized passes need to know beyond the instruction sets.
//
// The host's identity is read from CPUID without LLVM.
//
// Why: a cache key names the machine its code was compiled for. Asking LLVM for the host
// CPU name and features meant loading and initializing libLLVM (tens of megabytes, tens of
// milliseconds) in every process, also in one whose kernels all come from the disk cache.
// LLVM's x86 host detection (llvm/lib/TargetParser/Host.cpp, LLVM 19) is a pure function of
// a few CPUID leaves and XCR0, so keying on those words keys on everything LLVM would
// decide from them: two hosts with the same fingerprint get the same code from the same
// LLVM (whose version is a key part of its own).
//
// The fingerprint is the hex of, in this order: leaf 0 (max leaf, vendor), leaf 1 EAX ECX
// EDX and EBX bits 0-15 (not the APIC id and thread count, which differ between cores),
// leaf 7 subleaves 0 and 1, leaf 0xD subleaf 1, leaves 0x14, 0x19 and 0x24 (subleaf 0),
// leaf 0x80000000 EAX, 0x80000001 ECX EDX, 0x80000008 EBX, and XCR0 (xgetbv 0) when the OS
// enables XSAVE; a leaf past the CPU's maximum reads as zeros. A newer LLVM that reads more
// leaves comes with a new llvm_version part, which is the moment to extend this list.
//
// On a host that is not x86-64 the fingerprint is empty and the widths are the generic
// ones; codegen then keys on LLVM's own description.
//
// Why a 512-bit split flag: the runtime's hand-vectorized passes (the evaluator's assembly,
// the Schur kernels, the blocked Cholesky) are compiled once per instruction set and chosen
// at run time, and the fastest is not always the widest the CPU has: AMD's Zen 4 implements
// AVX-512 on 256-bit units, issuing every 512-bit operation as two halves, and there the
// 256-bit variants are faster. Zen 5 and Intel's AVX-512 CPUs have 512-bit units.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace lsjit {

// The instruction set kernels are compiled for. Host: this CPU exactly (its model and
// CPUID features, keyed by its fingerprint: the fastest code, found only on identical
// CPUs). The x86-64 psABI levels: code any CPU of that level runs, keyed by the level's
// name, so kernels exported on one machine (`lsjit cache export`) are found on any other
// of the level. A level this CPU cannot run is an error (compiler::host_target), never a
// guess.
enum class CpuLevel : uint8_t { Host, X86_64, X86_64_V2, X86_64_V3, X86_64_V4 };
std::string_view cpu_level_name(CpuLevel level);  // host, x86-64, x86-64-v2, -v3, -v4
std::optional<CpuLevel> cpu_level_from_name(std::string_view name);

struct HostCpu {
  std::string name;         // "AuthenticAMD family 0x1a model 0x44 stepping 0"
  std::string fingerprint;  // the CPUID words above, as hex, comma separated
  // Usable (by the CPU and enabled by the OS in XCR0) instruction sets. sse2 is x86-64's
  // baseline; fma is fused multiply-add (FMA3 on x86-64; always on aarch64).
  bool sse2 = false, avx = false, avx2 = false, avx512f = false, fma = false;
  // The highest x86-64 psABI level whose every feature the CPU has and the OS enables
  // (1 = x86-64, 2-4 = v2-v4); 0 on a host that is not x86-64.
  uint8_t x86_64_level = 0;
};

// Computed once, thread safe.
const HostCpu& host_cpu();

// The instruction sets kernels compiled for `level` may use: host_cpu()'s for Host, else
// the level's (x86-64 and v2: SSE2; v3: AVX2 and FMA; v4: AVX-512F too). Codegen and tier 0
// decide FMA fusion, SIMD width and math variants from these, never from the host alone.
const HostCpu& target_isa(CpuLevel level);

// True on a CPU with AVX-512 whose vector units are 256 bits wide (AMD family 19h: Zen 4),
// false elsewhere, including every CPU without AVX-512 and every non-x86 build. Computed
// once.
bool cpu_splits_512_bit_operations();

}  // namespace lsjit
