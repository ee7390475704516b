#include "lsjit/common/error.h"

#include <algorithm>
#include <cstdio>

namespace lsjit {

std::string printable(std::string_view bytes, size_t max_chars) {
  std::string out;
  const size_t shown = std::min(bytes.size(), max_chars);
  for (size_t k = 0; k < shown; ++k) {
    const auto c = static_cast<unsigned char>(bytes[k]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  if (shown < bytes.size()) out += "...";
  return out;
}

}  // namespace lsjit
