// Loading a kernel's object code into the process without LLVM.
//
// Why: a process whose kernels all come from the disk cache should not pay for LLVM. Its
// ORC session costs milliseconds to create and libLLVM tens of megabytes to map, while a
// kernel object is a few kilobytes of position-independent code with a handful of
// relocations. This loader links such an object itself: it checks every header, offset
// and index against the object's size before using it, copies the allocated sections into
// one fresh anonymous mapping, applies the x86-64 relocations codegen produces, and maps
// the code read+execute and everything else read-only. It never writes and executes the
// same page.
//
// What it accepts (anything else is an error, not a guess): a little-endian ELF64
// relocatable object for x86-64 with one symbol table, SHT_RELA relocation sections, and
// allocated sections that are PROGBITS (code or read-only data; no writable, no NOBITS,
// no TLS sections). Relocations: R_X86_64_64, PC32, PLT32, GOTPCREL, GOTPCRELX and
// REX_GOTPCRELX. Undefined symbols resolve in the process (libm and libmvec are loaded
// first, as jit.cpp's ORC session does); calls through PLT32 go through a stub in the
// same mapping, so they reach any address. EH frames are not registered: kernels are
// compiled nounwind.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lsjit/compiler/kernel.h"

namespace lsjit::compiler {

// A loaded kernel. Destroying the last handle unloads its code; the function pointer is
// valid while a handle exists.
class LoadedKernel {
 public:
  virtual ~LoadedKernel() = default;
  virtual KernelFn function() const = 0;
};

// True when load_object can load this host's objects (x86-64 Linux).
bool native_loader_supported();

// Links `object_code` into the process as described above and returns the function named
// `symbol`. Thread safe. Throws lsjit::Error naming what is wrong when the object is
// malformed or uses something outside what is accepted, when `symbol` is not a function
// it defines, or when an undefined symbol is not in the process.
std::shared_ptr<LoadedKernel> load_object(std::string_view object_code, const std::string& symbol);

// The global symbols an object defines and the ones it leaves undefined (what a linker
// must find elsewhere: libm, libmvec), in symbol-table order. `symbol` names the kernel in
// errors. Checks the headers, sections and symbol table as load_object does, and throws
// lsjit::Error the same way; loads nothing.
struct ObjectSymbols {
  std::vector<std::string> defined, undefined;
};
ObjectSymbols object_symbols(std::string_view object_code, const std::string& symbol);

// How kernels are loaded: load_object where native_loader_supported(), else the ORC session
// (jit.h). Same contract and errors as load_object.
std::shared_ptr<LoadedKernel> load_kernel(const std::string& object_code, const std::string& symbol);

}  // namespace lsjit::compiler
