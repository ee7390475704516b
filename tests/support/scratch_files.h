// Files for tests that write and read them: a fresh folder under the build's test tmp
// directory (LSJIT_TEST_TMP_DIR), and a file's whole contents in and out.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace lsjit::testing {

// LSJIT_TEST_TMP_DIR/NAME, emptied and made anew.
inline std::filesystem::path fresh_dir(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(LSJIT_TEST_TMP_DIR) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::string file_contents(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void put_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

}  // namespace lsjit::testing
