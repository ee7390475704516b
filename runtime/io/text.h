// What the g2o and BAL readers and writers share (internal to runtime/io): whole-file
// reads, atomic writes, round-trip number formatting, strict number parsing and the
// "FILE:LINE: what was wrong and what was expected" error format.
//
// Every failure is an lsjit::Error; nothing here leaves a partial file behind.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lsjit::io::detail {

// Throws lsjit::Error("SOURCE:LINE: what").
[[noreturn]] void fail(std::string_view source, size_t line, std::string_view what);

// The whole file, or Error("PATH: cannot read: <reason>").
std::string read_file(const std::filesystem::path& path);

// Writes `text` to a uniquely named temporary file in path's directory, fsyncs it and
// renames it over `path`: readers see the old file or the new one, never a part. On
// failure the temporary file is removed and Error("PATH: cannot write: <reason>") thrown.
void write_file_atomically(const std::filesystem::path& path, std::string_view text);

// %.17g: strtod/from_chars of the text gives back exactly `v`.
void append_double(std::string& out, double v);

// A token and the 1-based line it is on.
struct Token {
  std::string_view text;
  size_t line = 0;
};

// Whitespace-separated tokens of a text in order; lines matter only for messages.
class TokenCursor {
 public:
  explicit TokenCursor(std::string_view text) : text_(text) {}
  std::optional<Token> next();
  // The line of the last token returned (1 before the first): where a reader that runs
  // out of tokens reports that the file ends.
  size_t last_line() const { return last_line_; }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  size_t line_ = 1;
  size_t last_line_ = 1;
};

// The tokens of one line, up to a '#' (the rest is a comment).
std::vector<std::string_view> split_line(std::string_view line);

// The number in `token`, or fail(source, line, "<what> is '<token>': expected a ...").
// NaN, infinities and values out of the range of a double are errors.
double parse_number(std::string_view token, std::string_view source, size_t line,
                    std::string_view what);
// Likewise for a decimal integer that fits in int64_t.
int64_t parse_integer(std::string_view token, std::string_view source, size_t line,
                      std::string_view what);
// What parse_number / parse_integer return, or nullopt where they would fail: for readers
// that build the `what` of a message only when there is an error to report.
std::optional<double> try_parse_number(std::string_view token);
std::optional<int64_t> try_parse_integer(std::string_view token);

}  // namespace lsjit::io::detail
