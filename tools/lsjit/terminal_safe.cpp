#include "terminal_safe.h"

#include <cstdio>

namespace lsjit::cli {

TerminalSafeBuf::~TerminalSafeBuf() {
  if (pending_c2_) target_->sputc(static_cast<char>(0xc2));
  target_->pubsync();
}

bool TerminalSafeBuf::escape(unsigned char c) {
  char buf[8];
  const int n = std::snprintf(buf, sizeof buf, "\\x%02x", c);
  return target_->sputn(buf, n) == n;
}

bool TerminalSafeBuf::put(unsigned char c) {
  if (pending_c2_) {
    pending_c2_ = false;
    if (c >= 0x80 && c <= 0x9f) return escape(0xc2) && escape(c);
    if (target_->sputc(static_cast<char>(0xc2)) == traits_type::eof()) return false;
  }
  if (c == 0xc2) {
    pending_c2_ = true;
    return true;
  }
  if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) return escape(c);
  return target_->sputc(static_cast<char>(c)) != traits_type::eof();
}

TerminalSafeBuf::int_type TerminalSafeBuf::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  return put(static_cast<unsigned char>(traits_type::to_char_type(c))) ? c : traits_type::eof();
}

std::streamsize TerminalSafeBuf::xsputn(const char* s, std::streamsize n) {
  for (std::streamsize k = 0; k < n; ++k)
    if (!put(static_cast<unsigned char>(s[k]))) return k;
  return n;
}

// A 0xC2 held back stays held across a flush (std::cerr flushes after every <<): the
// byte after it decides whether the pair is a C1 control.
int TerminalSafeBuf::sync() { return target_->pubsync(); }

TerminalSafeStreams::TerminalSafeStreams() : out_(std::cout.rdbuf()), err_(std::cerr.rdbuf()) {
  std::cout.rdbuf(&out_);
  std::cerr.rdbuf(&err_);
}

TerminalSafeStreams::~TerminalSafeStreams() {
  std::cout.flush();
  std::cerr.flush();
  std::cout.rdbuf(out_.target());
  std::cerr.rdbuf(err_.target());
}

}  // namespace lsjit::cli
