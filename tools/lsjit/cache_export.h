// lsjit cache export: kernels from the disk cache as a static library and a registration
// source that a program links instead of LLVM (compiler/cache/linked_kernels.h).
//
// Writes, into `out_dir` (created if missing; each file atomically):
//   lib<NAME>.a   one relocatable object per kernel, as the disk entry holds it, with a
//                 symbol index (static_archive.h)
//   <NAME>.cpp    the table of compiler::LinkedKernel (id, key parts, symbol, function)
//                 and `std::size_t register_<NAME>()`, which registers it
//   <NAME>.h      the declaration of register_<NAME>()
// and prints the libraries the objects need besides lsjit (libmvec, libm).
//
// Which kernels: the ids or unique id prefixes given, those named by `lsjit: kernel` lines
// of a LSJIT_LOG_COMPILES=1 log (`from_log`: everything one program run used), or all
// entries. Every chosen entry must decode whole and authenticate with the directory's key,
// its id must be the hash of its key parts, its symbol the key's and an object that
// defines it; otherwise nothing is written and the entry is named in the error.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "lsjit/compiler/cache/disk_cache.h"

namespace lsjit::cli {

struct ExportRequest {
  std::vector<std::string> keys;                  // ids or unique prefixes
  std::optional<std::filesystem::path> from_log;  // a LSJIT_LOG_COMPILES=1 log
  bool all = false;
  std::string name;              // a C identifier: the library's and function's name
  std::filesystem::path out_dir;
};

// `key`: the directory's authentication key, nullptr if it has none (then no entry can be
// exported). Returns the exit status: 0, 1 (an entry or the log is bad, or writing
// failed) or 2 (bad usage).
int export_command(const compiler::DiskCache& disk, const compiler::AuthKey* key,
                   const ExportRequest& request, std::ostream& out, std::ostream& err);

}  // namespace lsjit::cli
