// The CLI's standard output and error streams, made safe for a terminal in one place.
//
// Messages echo tokens from outside (flags, file contents, environment variables, cache
// entry names); each is escaped by lsjit::printable where it is quoted, and this filter is
// the backstop for every byte the process writes through std::cout and std::cerr, from the
// CLI or from the libraries: C0 control bytes other than '\n' and '\t', DEL, and the C1
// controls as UTF-8 encodes them (U+0080-U+009F, bytes C2 80-C2 9F) are written as \xNN,
// so that no input can move the cursor, retitle the window or run a terminal's escape
// sequences. Other UTF-8 passes through unchanged.
//
//   int main() { lsjit::cli::TerminalSafeStreams safe; ... std::cerr << message; }
#pragma once

#include <iostream>
#include <streambuf>

namespace lsjit::cli {

// A streambuf that escapes as above and forwards to `target` (not owned, must outlive it).
class TerminalSafeBuf : public std::streambuf {
 public:
  explicit TerminalSafeBuf(std::streambuf* target) : target_(target) {}
  ~TerminalSafeBuf() override;  // writes a held-back 0xC2, then flushes the target
  std::streambuf* target() const { return target_; }

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override;

 private:
  bool put(unsigned char c);  // false when the target refused the byte
  bool escape(unsigned char c);

  std::streambuf* target_;
  bool pending_c2_ = false;  // the last byte was 0xC2: a C1 control may follow
};

// For its lifetime, std::cout and std::cerr write through TerminalSafeBufs.
class TerminalSafeStreams {
 public:
  TerminalSafeStreams();
  ~TerminalSafeStreams();
  TerminalSafeStreams(const TerminalSafeStreams&) = delete;
  TerminalSafeStreams& operator=(const TerminalSafeStreams&) = delete;

 private:
  TerminalSafeBuf out_, err_;
};

}  // namespace lsjit::cli
