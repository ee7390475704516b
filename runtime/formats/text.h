// What the g2o and BAL readers and writers share (internal to runtime/formats): bounded line
// reading, atomic writes that refuse special files, round-trip number formatting, strict
// number parsing, safe echoing of input bytes and the
// "FILE:LINE: what was wrong and what was expected" error format.
//
// Every failure is an lsjit::Error; nothing here leaves a partial file behind.
#pragma once

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lsjit/common/error.h"

namespace lsjit::io {
class InputFile;
}

namespace lsjit::io::detail {

// The longest line a reader accepts, '\n' excluded. The longest legal g2o line
// (EDGE_SE3:QUAT: 32 tokens of at most ~25 characters in %.17g) and BAL line are far
// shorter; a longer line is garbage (a binary file, /dev/zero) and is refused as soon as it
// is seen, so reading takes memory bounded by this, not by the input's size.
inline constexpr size_t kMaxLineBytes = 4096;

// Throws lsjit::Error("SOURCE:LINE: what").
[[noreturn]] void fail(std::string_view source, size_t line, std::string_view what);

using lsjit::printable;  // common/error.h: every echoed input byte goes through it

// The lines of a file or of an in-memory text, one at a time. A UTF-8 byte order mark at
// the very start is skipped. A file is read through a fixed buffer (never all at once), so
// a pipe, /dev/stdin or /dev/zero can be read with bounded memory.
class LineReader {
 public:
  // Reads `text`, which must outlive the reader; `source` names it in messages.
  LineReader(std::string_view text, std::string_view source, std::string_view expected_line);
  // Opens `path`: Error "PATH: cannot read: is a directory" for a directory, else
  // "PATH: cannot read: <strerror>" when it cannot be opened.
  // `expected_line` ("a g2o line") completes the too-long-line message.
  LineReader(const std::filesystem::path& path, std::string_view expected_line);
  // Reads `input` (input_file.h) from its head on, through the descriptor it opened.
  LineReader(InputFile&& input, std::string_view expected_line);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The next line without its '\n', valid until the next call; nullopt at the end of the
  // input. Throws "SOURCE:LINE: the line is longer than 4096 bytes: expected <expected_line>"
  // and "SOURCE: cannot read: <strerror>".
  std::optional<std::string_view> next();
  // The 1-based number of the last line returned (0 before the first).
  size_t line() const { return line_; }
  const std::string& source() const { return source_; }
  // How many more bytes the input can hold at most, when that is known (an in-memory text
  // or a regular file): a reader bounds what it reserves on the word of a header by this.
  std::optional<uint64_t> remaining_bytes() const;

 private:
  bool fill();  // reads more of the file into buffer_; false at its end

  std::string source_;
  std::string expected_line_;
  int fd_ = -1;                      // the file, or -1 for an in-memory text
  std::optional<uint64_t> file_size_;  // a regular file's size
  uint64_t consumed_ = 0;            // bytes of the input returned as lines so far
  std::string buffer_;               // a file's unread bytes are buffer_[begin_, end_)
  std::string_view text_;            // an in-memory text's unread bytes
  size_t begin_ = 0, end_ = 0;
  bool at_eof_ = false;
  size_t line_ = 0;
};

// A file written whole or not at all: the bytes go to a uniquely named temporary file in
// the directory of the file that `path` names, and commit() renames it over that file, so
// readers see the old file or the new one, never a part. Only regular files and new paths
// are written:
//   - a symlink is followed (to any depth) only where the kernel's protected_symlinks rule
//     would follow it for this process: when the link is owned by this process's user, or
//     by the owner of its directory where that directory is neither sticky nor writable by
//     group or others. Another user's link in /tmp (or any shared directory) is refused,
//     naming it and its owner: the link's owner, not the writer, chose its target. A
//     followed link stays a link: the rename goes over its final target, in the target's
//     directory; a dangling link creates its target;
//   - a directory, character or block device, FIFO or socket is refused, naming the path
//     and what it is ("PATH: cannot write: is a FIFO; lsjit writes only regular files");
//   - an existing file keeps its permission bits; a new file gets 0666 & ~umask.
// The constructor checks all this and creates the temporary file; write() buffers and
// appends; commit() writes the rest, fsyncs and renames. Every failure throws
// Error("PATH: cannot write: <reason>") and removes the temporary file; so does a writer
// destroyed without commit(), which leaves the old file as it was.
class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(const std::filesystem::path& path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  void write(std::string_view bytes);
  void commit();
  // The file the rename will replace: `path`, or the final target of the link it is.
  const std::filesystem::path& target() const { return target_; }

 private:
  [[noreturn]] void fail(int error);  // removes the temporary file, then throws

  std::filesystem::path path_, target_, temporary_;
  int fd_ = -1;
  bool committed_ = false;
};

// The file a write to `path` would replace (the final target of its symlinks, or `path`),
// after the same checks as AtomicFileWriter's constructor, which throws as it would; for
// refusing an output that is an input before any work is done. Creates nothing.
std::filesystem::path checked_write_target(const std::filesystem::path& path);

// AtomicFileWriter(path).write(text), then commit().
void write_file_atomically(const std::filesystem::path& path, std::string_view text);

// Text being formatted line by line: kept whole in text() (file == nullptr), or handed to
// `file` about every MiB, so that writing a file of gigabytes holds a MiB of it in memory.
class TextOut {
 public:
  explicit TextOut(AtomicFileWriter* file = nullptr) : file_(file) {}
  std::string& text() { return text_; }
  // Ends the current line ('\n') and passes the text on when enough has gathered.
  void end_line() {
    text_ += '\n';
    if (file_ && text_.size() >= kChunkBytes) flush();
  }
  // Hands what is left to the file (a no-op without one).
  void flush();

 private:
  static constexpr size_t kChunkBytes = size_t{1} << 20;
  AtomicFileWriter* file_;
  std::string text_;
};

// %.17g: strtod/from_chars of the text gives back exactly `v`.
void append_double(std::string& out, double v);

// C's isspace in the "C" locale: ' ', '\t', '\n', '\v', '\f', '\r'.
inline bool is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

// A token and the 1-based line it is on.
struct Token {
  std::string_view text;
  size_t line = 0;
};

// Whitespace-separated tokens of the lines of a LineReader, in order; lines matter only
// for messages. A token is valid until the next call to next().
class TokenCursor {
 public:
  explicit TokenCursor(LineReader& lines) : lines_(lines) {}
  // Inline: a BAL file is a token every 10-15 bytes, and an out-of-line call would be a
  // sizeable part of reading one.
  std::optional<Token> next() {
    while (true) {
      const char* p = rest_.data();
      const char* const end = p + rest_.size();
      while (p < end && is_space(*p)) ++p;
      if (p < end) {
        const char* q = p;
        while (q < end && !is_space(*q)) ++q;
        rest_ = std::string_view(q, static_cast<size_t>(end - q));
        last_line_ = lines_.line();
        return Token{std::string_view(p, static_cast<size_t>(q - p)), last_line_};
      }
      const std::optional<std::string_view> line = lines_.next();
      if (!line) return std::nullopt;
      rest_ = *line;
    }
  }
  // The line of the last token returned (1 before the first): where a reader that runs
  // out of tokens reports that the file ends.
  size_t last_line() const { return last_line_; }

 private:
  LineReader& lines_;
  std::string_view rest_;  // the unread part of the current line
  size_t last_line_ = 1;
};

// The tokens of one line, up to a '#' (the rest is a comment), into `tokens` (cleared
// first; a reader passes the same vector for every line, which spares an allocation per
// line).
void split_line(std::string_view line, std::vector<std::string_view>& tokens);

// The number in `token`, or fail(source, line, "<what> is '<token>': expected a ...").
// NaN, infinities and values out of the range of a double are errors.
double parse_number(std::string_view token, std::string_view source, size_t line,
                    std::string_view what);
// Likewise for a decimal integer that fits in int64_t.
int64_t parse_integer(std::string_view token, std::string_view source, size_t line,
                      std::string_view what);
// from_chars does not take a leading '+', which hand-written files sometimes have.
inline std::string_view without_plus(std::string_view token) {
  return token.size() > 1 && token[0] == '+' && token[1] != '-' && token[1] != '+' ? token.substr(1)
                                                                                   : token;
}

// What parse_number / parse_integer return, or nullopt where they would fail: for readers
// that build the `what` of a message only when there is an error to report. Inline, as
// TokenCursor::next: they run once per value of a file.
inline std::optional<double> try_parse_number(std::string_view token) {
  const std::string_view digits = without_plus(token);
  double value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || end != digits.data() + digits.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}
inline std::optional<int64_t> try_parse_integer(std::string_view token) {
  const std::string_view digits = without_plus(token);
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return value;
}

}  // namespace lsjit::io::detail
