// A static library (an `ar` archive) written without binutils, for `lsjit cache export`.
//
// Format: the GNU/SysV archive that GNU ld, gold, lld and `ar t` read. The magic
// "!<arch>\n", then a symbol index member named "/" (a big-endian u32 count, that many
// big-endian u32 offsets of the member headers that define each symbol, then the symbols'
// names, each NUL-terminated), then one member per object. Every member has the 60-byte
// header (name/, date, uid, gid, mode, size, "`\n") with date, uid and gid 0 and mode 644,
// so the same objects give the same bytes; a member of odd size is padded with '\n'.
// Without the index a linker would refuse the archive ("run ranlib").
#pragma once

#include <string>
#include <vector>

namespace lsjit::cli {

struct ArchiveMember {
  std::string name;                  // at most 15 characters, no '/' (no long-name table)
  std::string bytes;                 // the object
  std::vector<std::string> symbols;  // the global symbols it defines (the index's entries)
};

// The archive's bytes. Throws lsjit::Error for a name that does not fit or a member
// larger than the header's 10 decimal digits.
std::string static_archive(const std::vector<ArchiveMember>& members);

}  // namespace lsjit::cli
