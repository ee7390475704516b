// TerminalSafeBuf (tools/lsjit/terminal_safe.h): what reaches the terminal from any write.
#include <doctest/doctest.h>

#include <ostream>
#include <sstream>

#include "../../tools/lsjit/terminal_safe.h"

namespace {

std::string through_filter(const std::string& bytes, bool byte_by_byte = false) {
  std::ostringstream sink;
  {
    lsjit::cli::TerminalSafeBuf buf(sink.rdbuf());
    std::ostream out(&buf);
    if (byte_by_byte)
      for (char c : bytes) out << c << std::flush;
    else
      out << bytes;
  }
  return sink.str();
}

}  // namespace

TEST_CASE("terminal safe: control bytes are escaped, newlines, tabs and UTF-8 pass") {
  for (const bool byte_by_byte : {false, true}) {
    CAPTURE(byte_by_byte);
    CHECK(through_filter("plain text\n\tindented\n", byte_by_byte) == "plain text\n\tindented\n");
    CHECK(through_filter("a\x1b[2Jb\r\x07\x7f", byte_by_byte) == "a\\x1b[2Jb\\x0d\\x07\\x7f");
    // UTF-8: "–" (E2 80 93) and "²" (C2 B2) pass; the C1 control CSI as UTF-8 (C2 9B) does not.
    CHECK(through_filter("\xe2\x80\x93 \xc2\xb2", byte_by_byte) == "\xe2\x80\x93 \xc2\xb2");
    CHECK(through_filter("x\xc2\x9b" "2J", byte_by_byte) == "x\\xc2\\x9b2J");
    CHECK(through_filter("ends in \xc2", byte_by_byte) == "ends in \xc2");
  }
}
