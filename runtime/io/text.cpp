#include "lsjit/runtime/io/text.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include "lsjit/ir/error.h"

namespace lsjit::io::detail {
namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// from_chars does not take a leading '+', which hand-written files sometimes have.
std::string_view without_plus(std::string_view token) {
  return token.size() > 1 && token[0] == '+' && token[1] != '-' && token[1] != '+' ? token.substr(1)
                                                                                   : token;
}

std::string temporary_name(const std::filesystem::path& path) {
  static const uint64_t salt = [] {
    std::random_device rd;
    return (uint64_t{rd()} << 32) ^ rd();
  }();
  static std::atomic<uint64_t> counter = 0;  // threads may write files concurrently
  return "." + path.filename().string() + ".tmp." + std::to_string(::getpid()) + "." +
         std::to_string(salt ^ ++counter);
}

[[noreturn]] void cannot_write(const std::filesystem::path& path, int error) {
  throw Error(path.string() + ": cannot write: " + std::strerror(error));
}

}  // namespace

void fail(std::string_view source, size_t line, std::string_view what) {
  throw Error(std::string(source) + ":" + std::to_string(line) + ": " + std::string(what));
}

std::string read_file(const std::filesystem::path& path) {
  // An ifstream opens a directory and reads it as empty, which would look like an empty file.
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored))
    throw Error(path.string() + ": cannot read: " + std::strerror(EISDIR));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path.string() + ": cannot read: " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw Error(path.string() + ": cannot read: " + std::strerror(errno));
  return std::move(text).str();
}

void write_file_atomically(const std::filesystem::path& path, std::string_view text) {
  if (path.filename().empty()) throw Error(path.string() + ": cannot write: not a file name");
  const std::filesystem::path directory =
      path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  const std::filesystem::path temporary = directory / temporary_name(path);
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) cannot_write(path, errno);
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n < 0 ? errno : EIO;
      ::close(fd);
      ::unlink(temporary.c_str());
      cannot_write(path, error);
    }
    done += static_cast<size_t>(n);
  }
  // Without the fsync a crash after the rename could leave an empty file under the name.
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    cannot_write(path, error);
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    cannot_write(path, error);
  }
}

void append_double(std::string& out, double v) {
  char buf[32];
  const int n = std::snprintf(buf, sizeof buf, "%.17g", v);
  out.append(buf, static_cast<size_t>(n));
}

std::optional<Token> TokenCursor::next() {
  while (pos_ < text_.size() && is_space(text_[pos_])) {
    if (text_[pos_] == '\n') ++line_;
    ++pos_;
  }
  if (pos_ == text_.size()) return std::nullopt;
  const size_t begin = pos_;
  while (pos_ < text_.size() && !is_space(text_[pos_])) ++pos_;
  last_line_ = line_;
  return Token{text_.substr(begin, pos_ - begin), line_};
}

std::vector<std::string_view> split_line(std::string_view line) {
  line = line.substr(0, line.find('#'));
  std::vector<std::string_view> tokens;
  size_t pos = 0;
  while (true) {
    while (pos < line.size() && is_space(line[pos])) ++pos;
    if (pos == line.size()) return tokens;
    const size_t begin = pos;
    while (pos < line.size() && !is_space(line[pos])) ++pos;
    tokens.push_back(line.substr(begin, pos - begin));
  }
}

std::optional<double> try_parse_number(std::string_view token) {
  const std::string_view digits = without_plus(token);
  double value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || end != digits.data() + digits.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

std::optional<int64_t> try_parse_integer(std::string_view token) {
  const std::string_view digits = without_plus(token);
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return value;
}

double parse_number(std::string_view token, std::string_view source, size_t line,
                    std::string_view what) {
  const std::string_view digits = without_plus(token);
  double value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  const bool whole = end == digits.data() + digits.size();
  if (!whole || (ec != std::errc() && ec != std::errc::result_out_of_range))
    fail(source, line, std::string(what) + " is '" + std::string(token) + "': expected a number");
  if (ec == std::errc::result_out_of_range)
    fail(source, line,
         std::string(what) + " is '" + std::string(token) +
             "': expected a number within the range of a double");
  if (!std::isfinite(value))
    fail(source, line,
         std::string(what) + " is '" + std::string(token) + "': expected a finite number");
  return value;
}

int64_t parse_integer(std::string_view token, std::string_view source, size_t line,
                      std::string_view what) {
  const std::string_view digits = without_plus(token);
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || end != digits.data() + digits.size())
    fail(source, line, std::string(what) + " is '" + std::string(token) + "': expected an integer");
  return value;
}

}  // namespace lsjit::io::detail
