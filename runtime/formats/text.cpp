#include "lsjit/runtime/formats/text.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

#include "lsjit/common/error.h"
#include "lsjit/runtime/formats/input_file.h"

namespace lsjit::io::detail {
namespace {

std::string temporary_name(const std::filesystem::path& path) {
  static const uint64_t salt = [] {
    std::random_device rd;
    return (uint64_t{rd()} << 32) ^ rd();
  }();
  static std::atomic<uint64_t> counter = 0;  // threads may write files concurrently
  // The name's first 128 bytes at most: a name near NAME_MAX (255) must leave room for the
  // suffix, or a file that can be written could not be written atomically.
  return "." + path.filename().string().substr(0, 128) + ".tmp." + std::to_string(::getpid()) + "." +
         std::to_string(salt ^ ++counter);
}

[[noreturn]] void cannot_write(const std::filesystem::path& path, int error) {
  throw Error(path.string() + ": cannot write: " + std::strerror(error));
}

// What a file that is not a regular file is, for messages; nullptr for a regular file.
const char* special_kind(mode_t mode) {
  if (S_ISREG(mode)) return nullptr;
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// The file a write to `path` replaces: `path`, or the final target of the symlink it is.
struct WriteTarget {
  std::filesystem::path path;
  std::optional<mode_t> mode;  // the permission bits of the existing file; nullopt: new
};

// Whether this process may follow the link `link` (lstat'ed as `st`): the kernel's
// protected_symlinks rule, made stricter as text.h says. "" when it may, else why not.
std::string unsafe_link(const std::filesystem::path& link, const struct stat& st) {
  if (st.st_uid == ::geteuid()) return "";
  const std::filesystem::path directory = link.has_parent_path() ? link.parent_path() : ".";
  struct stat dir {};
  if (::stat(directory.c_str(), &dir) != 0) return std::string("its directory cannot be read: ") + std::strerror(errno);
  const bool shared = (dir.st_mode & S_ISVTX) != 0 || (dir.st_mode & (S_IWGRP | S_IWOTH)) != 0;
  if (st.st_uid == dir.st_uid && !shared) return "";
  return "it is a symlink owned by user " + std::to_string(st.st_uid) + ", not by this user (" +
         std::to_string(::geteuid()) + ")" + (shared ? ", in a directory others can write to" : "") +
         "; lsjit follows only links that the user or a private directory's owner made (as protected_symlinks)";
}

WriteTarget resolve_write_target(const std::filesystem::path& path) {
  constexpr int kMaxLinks = 40;  // as the kernel's ELOOP limit
  std::filesystem::path p = path;
  for (int links = 0;; ++links) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) {
      if (errno == ENOENT) return {p, std::nullopt};
      cannot_write(path, errno);
    }
    if (S_ISLNK(st.st_mode)) {
      if (links == kMaxLinks) cannot_write(path, ELOOP);
      if (const std::string why = unsafe_link(p, st); !why.empty())
        throw Error(path.string() + ": cannot write: " + (p == path ? "" : p.string() + ": ") + why);
      std::error_code error;
      const std::filesystem::path link = std::filesystem::read_symlink(p, error);
      if (error) cannot_write(path, error.value());
      p = link.is_absolute() || !p.has_parent_path() ? link : p.parent_path() / link;
      continue;
    }
    const char* kind = special_kind(st.st_mode);
    if (!kind) return {p, st.st_mode & 07777};
    const std::string what = p == path ? std::string("is ") + kind
                                       : "its target " + p.string() + " is " + kind;
    throw Error(path.string() + ": cannot write: " + what +
                (S_ISDIR(st.st_mode) ? "" : "; lsjit writes only regular files"));
  }
}

// Writes all of `text` to fd; 0 or the errno of the failure.
int write_all(int fd, std::string_view text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    done += static_cast<size_t>(n);
  }
  return 0;
}

// A file reader's buffer: large enough for a longest line and many more.
constexpr size_t kReadBufferBytes = 64 * 1024;
static_assert(kReadBufferBytes > 2 * kMaxLineBytes);

constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";

}  // namespace

void fail(std::string_view source, size_t line, std::string_view what) {
  throw Error(std::string(source) + ":" + std::to_string(line) + ": " + std::string(what));
}

LineReader::LineReader(std::string_view text, std::string_view source,
                       std::string_view expected_line)
    : source_(source), expected_line_(expected_line), text_(text) {
  if (text_.starts_with(kByteOrderMark)) text_.remove_prefix(kByteOrderMark.size());
}

LineReader::LineReader(const std::filesystem::path& path, std::string_view expected_line)
    : LineReader(InputFile(path), expected_line) {}

LineReader::LineReader(InputFile&& input, std::string_view expected_line)
    : source_(input.name()), expected_line_(expected_line) {
  std::string head;
  fd_ = input.take_descriptor(head);
  struct stat st {};
  if (::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode)) file_size_ = static_cast<uint64_t>(st.st_size);
  // The head is at most InputFile::kHeadBytes, which the buffer holds whole.
  static_assert(InputFile::kHeadBytes <= kReadBufferBytes);
  buffer_.resize(kReadBufferBytes);
  std::memcpy(buffer_.data(), head.data(), head.size());
  end_ = head.size();
  if (end_ < InputFile::kHeadBytes) at_eof_ = true;  // the head was all there is
  if (std::string_view(buffer_.data(), end_).starts_with(kByteOrderMark)) {
    begin_ = kByteOrderMark.size();
    consumed_ = begin_;
  }
}

LineReader::~LineReader() {
  if (fd_ >= 0) ::close(fd_);
}

bool LineReader::fill() {
  if (at_eof_) return false;
  if (begin_ > 0) {  // keep the unread bytes, at the front
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  while (true) {
    const ssize_t n = ::read(fd_, buffer_.data() + end_, buffer_.size() - end_);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(source_ + ": cannot read: " + std::strerror(errno));
    if (n == 0) at_eof_ = true;
    end_ += static_cast<size_t>(n);
    return n > 0;
  }
}

std::optional<std::string_view> LineReader::next() {
  const auto too_long = [this] {
    fail(source_, line_ + 1,
         "the line is longer than " + std::to_string(kMaxLineBytes) + " bytes: expected " +
             expected_line_);
  };
  if (fd_ < 0) {
    if (text_.empty()) return std::nullopt;
    const size_t end = std::min(text_.find('\n'), text_.size());
    if (end > kMaxLineBytes) too_long();
    const std::string_view line = text_.substr(0, end);
    text_.remove_prefix(std::min(end + 1, text_.size()));
    ++line_;
    return line;
  }
  size_t scanned = begin_;  // bytes before it hold no '\n'
  while (true) {
    const void* newline = std::memchr(buffer_.data() + scanned, '\n', end_ - scanned);
    const size_t end = newline ? static_cast<const char*>(newline) - buffer_.data() : end_;
    if (end - begin_ > kMaxLineBytes) too_long();
    if (newline || (at_eof_ && end_ > begin_)) {
      const std::string_view line(buffer_.data() + begin_, end - begin_);
      const size_t taken = std::min(end + 1, end_) - begin_;
      begin_ += taken;
      consumed_ += taken;
      ++line_;
      return line;
    }
    if (at_eof_) return std::nullopt;
    scanned = end_ - begin_;  // fill() moves the unread bytes to the front
    fill();
  }
}

std::optional<uint64_t> LineReader::remaining_bytes() const {
  if (fd_ < 0) return text_.size();
  if (!file_size_) return std::nullopt;
  return *file_size_ > consumed_ ? *file_size_ - consumed_ : 0;
}

std::filesystem::path checked_write_target(const std::filesystem::path& path) {
  if (path.filename().empty()) throw Error(path.string() + ": cannot write: not a file name");
  return resolve_write_target(path).path;
}

AtomicFileWriter::AtomicFileWriter(const std::filesystem::path& path) : path_(path) {
  if (path.filename().empty()) throw Error(path.string() + ": cannot write: not a file name");
  const WriteTarget target = resolve_write_target(path);
  target_ = target.path;
  const std::filesystem::path directory =
      target_.has_parent_path() ? target_.parent_path() : std::filesystem::path(".");
  temporary_ = directory / temporary_name(target_);
  // 0666: the kernel applies the umask, as for a file that a plain open creates.
  fd_ = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
  if (fd_ < 0) cannot_write(path, errno);
  if (target.mode && ::fchmod(fd_, *target.mode) != 0) fail(errno);
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !temporary_.empty()) ::unlink(temporary_.c_str());
}

void AtomicFileWriter::fail(int error) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  ::unlink(temporary_.c_str());
  temporary_.clear();
  cannot_write(path_, error);
}

void AtomicFileWriter::write(std::string_view bytes) {
  if (fd_ < 0) throw Error(path_.string() + ": cannot write: the file was already committed or failed");
  if (const int error = write_all(fd_, bytes); error != 0) fail(error);
}

void AtomicFileWriter::commit() {
  if (fd_ < 0) throw Error(path_.string() + ": cannot write: the file was already committed or failed");
  // Without the fsync a crash after the rename could leave an empty file under the name.
  if (::fsync(fd_) != 0) fail(errno);
  const int closed = ::close(fd_);
  fd_ = -1;
  if (closed != 0) fail(errno);
  if (std::rename(temporary_.c_str(), target_.c_str()) != 0) fail(errno);
  committed_ = true;
}

void write_file_atomically(const std::filesystem::path& path, std::string_view text) {
  AtomicFileWriter file(path);
  file.write(text);
  file.commit();
}

void TextOut::flush() {
  if (!file_) return;
  file_->write(text_);
  text_.clear();
}

void append_double(std::string& out, double v) {
  char buf[32];
  const int n = std::snprintf(buf, sizeof buf, "%.17g", v);
  out.append(buf, static_cast<size_t>(n));
}

void split_line(std::string_view line, std::vector<std::string_view>& tokens) {
  line = line.substr(0, line.find('#'));
  tokens.clear();
  size_t pos = 0;
  while (true) {
    while (pos < line.size() && is_space(line[pos])) ++pos;
    if (pos == line.size()) return;
    const size_t begin = pos;
    while (pos < line.size() && !is_space(line[pos])) ++pos;
    tokens.push_back(line.substr(begin, pos - begin));
  }
}

double parse_number(std::string_view token, std::string_view source, size_t line,
                    std::string_view what) {
  const std::string_view digits = without_plus(token);
  double value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  const bool whole = end == digits.data() + digits.size();
  if (!whole || (ec != std::errc() && ec != std::errc::result_out_of_range))
    fail(source, line, std::string(what) + " is '" + printable(token) + "': expected a number");
  if (ec == std::errc::result_out_of_range)
    fail(source, line,
         std::string(what) + " is '" + printable(token) +
             "': expected a number within the range of a double");
  if (!std::isfinite(value))
    fail(source, line,
         std::string(what) + " is '" + printable(token) + "': expected a finite number");
  return value;
}

int64_t parse_integer(std::string_view token, std::string_view source, size_t line,
                      std::string_view what) {
  if (const std::optional<int64_t> value = try_parse_integer(token)) return *value;
  fail(source, line, std::string(what) + " is '" + printable(token) + "': expected an integer");
}

}  // namespace lsjit::io::detail
