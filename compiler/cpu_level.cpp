// The names of CompileOptions::cpu_level (codegen.h), apart from host_cpu.cpp: the cache key,
// the CLI's flag parser and their fuzz targets use them without the host's CPUID code or
// the LLVM version the build configures there.
#include "lsjit/compiler/codegen.h"

namespace lsjit::compiler {

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

}  // namespace lsjit::compiler
