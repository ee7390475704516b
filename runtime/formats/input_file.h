// A problem file opened once. Its first bytes are read at once, so that the caller can
// tell the format from them (format_from_head), and the reader then goes on from the same
// descriptor: a pipe, a FIFO or standard input is read once, never reopened. "-" names
// standard input.
//
//   io::InputFile input("-");
//   if (io::format_from_head(input.head()) == "g2o") graph = io::read_g2o(std::move(input));
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace lsjit::io {

class InputFile {
 public:
  // The most bytes head() holds: a few complete lines of any format.
  static constexpr size_t kHeadBytes = 64 * 1024;

  // Opens `path` ("-": standard input, named "<stdin>" in messages) and reads its head.
  // Throws lsjit::Error "PATH: cannot read: <reason>" when it cannot be opened or read,
  // and "PATH: cannot read: is a directory" for a directory.
  explicit InputFile(const std::filesystem::path& path);
  ~InputFile();
  InputFile(InputFile&& other) noexcept;
  InputFile& operator=(InputFile&&) = delete;
  InputFile(const InputFile&) = delete;

  // The first min(kHeadBytes, size) bytes of the input.
  std::string_view head() const { return head_; }
  // The name for messages: the path, or "<stdin>".
  const std::string& name() const { return name_; }
  // Whether the input is the file `target` names (the same device and inode): an output
  // that would replace an input is refused before anything is written.
  bool is_same_file(const std::filesystem::path& target) const;

  // For the readers (text.h's LineReader): the descriptor and the head, handed over once.
  int take_descriptor(std::string& head);

 private:
  std::string name_;
  std::string head_;
  int fd_ = -1;
  bool owns_fd_ = true;  // not for standard input
  uint64_t device_ = 0, inode_ = 0;  // of the open file
};

// "g2o" when the first non-blank, non-comment line starts with a g2o tag, "bal" when it is
// three non-negative integers (BAL's counts), else "".
std::string format_from_head(std::string_view head);

}  // namespace lsjit::io
