#include "lsjit/runtime/formats/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>
#include <utility>
#include <vector>

#include "lsjit/common/error.h"

namespace lsjit::io {

InputFile::InputFile(const std::filesystem::path& path) {
  const bool standard_input = path == "-";
  name_ = standard_input ? "<stdin>" : path.string();
  const auto cannot_read = [this](int error) {
    throw Error(printable(name_, std::string::npos) + ": cannot read: " + std::strerror(error));
  };
  if (standard_input) {
    fd_ = STDIN_FILENO;
    owns_fd_ = false;
  } else {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) cannot_read(errno);
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int error = errno;
    if (owns_fd_) ::close(fd_);
    cannot_read(error);
  }
  if (S_ISDIR(st.st_mode)) {
    if (owns_fd_) ::close(fd_);
    throw Error(printable(name_, std::string::npos) + ": cannot read: is a directory");
  }
  device_ = st.st_dev;
  inode_ = st.st_ino;
  head_.resize(kHeadBytes);
  size_t got = 0;
  while (got < kHeadBytes) {
    const ssize_t n = ::read(fd_, head_.data() + got, kHeadBytes - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      if (owns_fd_) ::close(fd_);
      cannot_read(error);
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  head_.resize(got);
}

InputFile::~InputFile() {
  if (fd_ >= 0 && owns_fd_) ::close(fd_);
}

InputFile::InputFile(InputFile&& other) noexcept
    : name_(std::move(other.name_)),
      head_(std::move(other.head_)),
      fd_(std::exchange(other.fd_, -1)),
      owns_fd_(other.owns_fd_),
      device_(other.device_),
      inode_(other.inode_) {}

bool InputFile::is_same_file(const std::filesystem::path& target) const {
  struct stat st {};
  if (::stat(target.c_str(), &st) != 0) return false;
  return st.st_dev == device_ && st.st_ino == inode_;
}

int InputFile::take_descriptor(std::string& head) {
  if (fd_ < 0) throw Error(printable(name_, std::string::npos) + ": cannot read: the input was already read");
  head = std::move(head_);
  head_.clear();
  // Standard input is duplicated, so that the reader may close what it is given.
  const int fd = owns_fd_ ? std::exchange(fd_, -1) : ::fcntl(std::exchange(fd_, -1), F_DUPFD_CLOEXEC, 0);
  if (fd < 0) throw Error(printable(name_, std::string::npos) + ": cannot read: " + std::strerror(errno));
  return fd;
}

std::string format_from_head(std::string_view head) {
  std::istringstream in{std::string(head)};
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // a UTF-8 byte order mark
    const size_t start = line.find_first_not_of(" \t\r");
    if (start == std::string::npos || line[start] == '#') continue;
    if (line.compare(start, 7, "VERTEX_") == 0 || line.compare(start, 5, "EDGE_") == 0 ||
        line.compare(start, 3, "FIX") == 0)
      return "g2o";
    std::istringstream tokens(line);
    std::vector<std::string> t;
    for (std::string tok; tokens >> tok;) t.push_back(tok);
    const bool counts = t.size() == 3 && std::all_of(t.begin(), t.end(), [](const std::string& x) {
      return std::all_of(x.begin(), x.end(), [](char c) { return c >= '0' && c <= '9'; });
    });
    return counts ? "bal" : "";
  }
  return "";
}

}  // namespace lsjit::io
