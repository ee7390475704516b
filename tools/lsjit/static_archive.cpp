#include "static_archive.h"

#include <cstdint>
#include <cstdio>

#include "lsjit/common/error.h"

namespace lsjit::cli {
namespace {

constexpr size_t kHeaderSize = 60;

std::string header(const std::string& name, uint64_t size) {
  if (size > 9'999'999'999ull) throw Error("static archive: member '" + name + "' is too large");
  char buf[kHeaderSize + 1];
  std::snprintf(buf, sizeof buf, "%-16s%-12s%-6s%-6s%-8s%-10llu`\n", name.c_str(), "0", "0", "0",
                "644", static_cast<unsigned long long>(size));
  return std::string(buf, kHeaderSize);
}

void append_be32(std::string& out, uint64_t v) {
  if (v > UINT32_MAX) throw Error("static archive: larger than 4 GiB, which its index cannot address");
  for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((v >> shift) & 0xff);
}

uint64_t padded(uint64_t size) { return size + (size & 1); }

}  // namespace

std::string static_archive(const std::vector<ArchiveMember>& members) {
  size_t symbol_count = 0, names_size = 0;
  for (const ArchiveMember& m : members) {
    if (m.name.empty() || m.name.size() > 15 || m.name.find('/') != std::string::npos)
      throw Error("static archive: member name '" + m.name + "' is not 1-15 characters without '/'");
    symbol_count += m.symbols.size();
    for (const std::string& s : m.symbols) names_size += s.size() + 1;
  }
  const uint64_t index_size = 4 + 4 * uint64_t{symbol_count} + names_size;

  // Where each member's header will start: after the magic and the padded index.
  std::vector<uint64_t> offsets;
  uint64_t at = 8 + kHeaderSize + padded(index_size);
  for (const ArchiveMember& m : members) {
    offsets.push_back(at);
    at += kHeaderSize + padded(m.bytes.size());
  }

  std::string out = "!<arch>\n";
  out += header("/", index_size);
  append_be32(out, symbol_count);
  for (size_t i = 0; i < members.size(); ++i)
    for (size_t k = 0; k < members[i].symbols.size(); ++k) append_be32(out, offsets[i]);
  for (const ArchiveMember& m : members)
    for (const std::string& s : m.symbols) out.append(s.c_str(), s.size() + 1);
  if (index_size & 1) out += '\n';
  for (const ArchiveMember& m : members) {
    out += header(m.name + "/", m.bytes.size());
    out += m.bytes;
    if (m.bytes.size() & 1) out += '\n';
  }
  if (out.size() != at) throw Error("static archive: internal size mismatch");
  return out;
}

}  // namespace lsjit::cli
