// Files that are not what a writer or reader expects: special files and symlinks in the
// writers' way, endless or binary input, byte order marks, unreadable paths, and values
// no rotation has (docs/testing.md, "Hostile input and file faults").
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "lsjit/common/error.h"
#include "lsjit/runtime/io/bal.h"
#include "lsjit/runtime/io/g2o.h"
#include "lsjit/runtime/values.h"

namespace {

namespace fs = std::filesystem;
using lsjit::io::PoseGraph;

fs::path hostile_dir(const std::string& name) {
  const fs::path dir = fs::path(LSJIT_TEST_TMP_DIR) / ("io_hostile_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

const PoseGraph& small_graph() {
  static const PoseGraph g = lsjit::io::parse_g2o("VERTEX_SE2 0 1 2 0.5\n", "small.g2o");
  return g;
}

template <class F>
std::string hostile_error_of(F&& f) {
  try {
    f();
  } catch (const lsjit::Error& e) {
    return e.what();
  }
  return "(no error)";
}

std::string write_error(const fs::path& path) {
  return hostile_error_of([&] { lsjit::io::write_g2o(path, small_graph()); });
}

std::string contents(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void put(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

mode_t lstat_mode(const fs::path& path) {
  struct stat st {};
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_mode;
}

// The names in `dir`: a failed write must leave no temporary file behind.
std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

const std::string kSpecial = "; lsjit writes only regular files";

}  // namespace

TEST_CASE("io: writers refuse a FIFO, a directory and a symlink to a device, and leave them be") {
  const fs::path dir = hostile_dir("special");
  const fs::path fifo = dir / "pipe.g2o";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(write_error(fifo) == fifo.string() + ": cannot write: is a FIFO (named pipe)" + kSpecial);
  CHECK(S_ISFIFO(lstat_mode(fifo)));

  const fs::path sub = dir / "sub";
  fs::create_directory(sub);
  CHECK(write_error(sub) == sub.string() + ": cannot write: is a directory");
  CHECK(S_ISDIR(lstat_mode(sub)));

  const fs::path null_link = dir / "null.g2o";
  fs::create_symlink("/dev/null", null_link);
  CHECK(write_error(null_link) == null_link.string() +
                                      ": cannot write: its target /dev/null is a character device" +
                                      kSpecial);
  CHECK(S_ISLNK(lstat_mode(null_link)));
  CHECK(S_ISCHR(lstat_mode("/dev/null")));  // only root could have replaced it
  // A link to a link to the FIFO is followed to the end.
  fs::create_symlink("pipe.g2o", dir / "pipe-link");
  fs::create_symlink("pipe-link", dir / "pipe-link-link");
  CHECK(write_error(dir / "pipe-link-link") ==
        (dir / "pipe-link-link").string() + ": cannot write: its target " + fifo.string() +
            " is a FIFO (named pipe)" + kSpecial);
  CHECK(names_in(dir) ==
        std::vector<std::string>{"null.g2o", "pipe-link", "pipe-link-link", "pipe.g2o", "sub"});
}

TEST_CASE("io: writers follow a symlink to its regular file, write it and keep the link") {
  const fs::path dir = hostile_dir("symlink");
  fs::create_directories(dir / "a");
  fs::create_directories(dir / "b");
  const fs::path real = dir / "b" / "real.g2o";
  put(real, "old\n");
  const fs::path link = dir / "a" / "link.g2o";
  fs::create_symlink("../b/real.g2o", link);  // relative to the link's directory
  REQUIRE(write_error(link) == "(no error)");
  CHECK(S_ISLNK(lstat_mode(link)));
  CHECK(fs::read_symlink(link) == "../b/real.g2o");
  CHECK(contents(real) == lsjit::io::format_g2o(small_graph()));
  // The temporary file was made next to the target, and is gone.
  CHECK(names_in(dir / "a") == std::vector<std::string>{"link.g2o"});
  CHECK(names_in(dir / "b") == std::vector<std::string>{"real.g2o"});

  // A dangling link creates its target, and stays a link.
  const fs::path dangling = dir / "a" / "new-link.g2o";
  fs::create_symlink("../b/new.g2o", dangling);
  REQUIRE(write_error(dangling) == "(no error)");
  CHECK(S_ISLNK(lstat_mode(dangling)));
  CHECK(contents(dir / "b" / "new.g2o") == lsjit::io::format_g2o(small_graph()));

  // One into a place that cannot be written is refused, naming the link.
  const fs::path nowhere = dir / "a" / "nowhere.g2o";
  fs::create_symlink("../missing-dir/x.g2o", nowhere);
  CHECK(write_error(nowhere) == nowhere.string() + ": cannot write: No such file or directory");
  CHECK(S_ISLNK(lstat_mode(nowhere)));
}

TEST_CASE("io: writers keep an existing file's mode and give a new file 0666 minus the umask") {
  const fs::path dir = hostile_dir("mode");
  const fs::path secret = dir / "secret.g2o";
  put(secret, "old\n");
  for (const mode_t mode : {0600, 0640, 0604}) {
    CAPTURE(mode);
    REQUIRE(::chmod(secret.c_str(), mode) == 0);
    REQUIRE(write_error(secret) == "(no error)");
    CHECK((lstat_mode(secret) & 07777) == mode);
    CHECK(contents(secret) == lsjit::io::format_g2o(small_graph()));
  }
  const mode_t umask_now = ::umask(022);
  ::umask(umask_now);
  const fs::path fresh = dir / "fresh.bal";
  lsjit::io::write_bal(fresh, lsjit::io::parse_bal("0 0 0\n", "empty.bal"));
  CHECK((lstat_mode(fresh) & 07777) == (0666 & ~umask_now));
}

TEST_CASE("io: readers refuse a line longer than 4096 bytes: binary garbage ends promptly") {
  CHECK(hostile_error_of([] { lsjit::io::parse_g2o(std::string(100000, '\0'), "zeros.g2o"); }) ==
        "zeros.g2o:1: the line is longer than 4096 bytes: expected a g2o line");
  CHECK(hostile_error_of([] { lsjit::io::parse_bal("1 1 1\n" + std::string(5000, 'x'), "x.bal"); }) ==
        "x.bal:2: the line is longer than 4096 bytes: expected a BAL line");
  // The limit is the documented one: a 4096-byte comment is a line like any other.
  const std::string vertex = "VERTEX_SE2 0 0 0 0\n";
  CHECK(hostile_error_of([&] {
          lsjit::io::parse_g2o(vertex + "#" + std::string(4095, 'c') + "\n" + vertex, "c.g2o");
        }).find("c.g2o:3: VERTEX_SE2 0: the vertex id is already defined at line 1") == 0);
  CHECK(hostile_error_of([&] {
          lsjit::io::parse_g2o(vertex + "#" + std::string(4096, 'c') + "\n", "c.g2o");
        }) == "c.g2o:2: the line is longer than 4096 bytes: expected a g2o line");
}

TEST_CASE("io: a reader stops early on an endless pipe of zeros, reading a bounded amount") {
  const fs::path dir = hostile_dir("fifo");
  const fs::path fifo = dir / "zeros";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // The writer stops at EPIPE when the reader has closed the FIFO; SIGPIPE would kill us.
  struct sigaction ignore {}, previous {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &previous);
  constexpr size_t kOffered = size_t{64} << 20;
  std::atomic<size_t> written = 0;
  std::thread writer([&] {
    const int fd = ::open(fifo.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return;
    const std::string zeros(64 * 1024, '\0');
    while (written < kOffered) {
      const ssize_t n = ::write(fd, zeros.data(), zeros.size());
      if (n <= 0) break;
      written += static_cast<size_t>(n);
    }
    ::close(fd);
  });
  const std::string message = hostile_error_of([&] { lsjit::io::read_g2o(fifo); });
  writer.join();
  ::sigaction(SIGPIPE, &previous, nullptr);
  CHECK(message == fifo.string() + ":1: the line is longer than 4096 bytes: expected a g2o line");
  // Reading the whole input first, as the readers once did, takes all 64 MB.
  CHECK(written < size_t{1} << 20);
}

TEST_CASE("io: a BAL header that promises more than a pipe delivers is an error, not an allocation") {
  const fs::path dir = hostile_dir("lying_pipe");
  const fs::path fifo = dir / "bal";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::thread writer([&] {
    const int fd = ::open(fifo.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return;
    const std::string text = "1 1 4000000000\n0 0 1 1\n";
    CHECK(::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
    ::close(fd);
  });
  const std::string message = hostile_error_of([&] { lsjit::io::read_bal(fifo); });
  writer.join();
  CHECK(message.find(fifo.string() +
                     ":2: expected 4000000000 observations, the file ends after 1 (") == 0);
}

TEST_CASE("io: /dev/zero as a g2o or BAL file is a prompt error") {
  CHECK(hostile_error_of([] { lsjit::io::read_g2o("/dev/zero"); }) ==
        "/dev/zero:1: the line is longer than 4096 bytes: expected a g2o line");
  CHECK(hostile_error_of([] { lsjit::io::read_bal("/dev/zero"); }) ==
        "/dev/zero:1: the line is longer than 4096 bytes: expected a BAL line");
}

TEST_CASE("io: reader errors echo control bytes as \\xNN and cut long tokens") {
  CHECK(hostile_error_of([] {
          lsjit::io::parse_g2o(std::string("VERT\x01" "EX\x1b[2J\0\xff", 13) + " 1 2\n", "t.g2o");
        }) == "t.g2o:1: unknown tag 'VERT\\x01EX\\x1b[2J\\x00\\xff': expected VERTEX_SE2, "
              "EDGE_SE2, VERTEX_SE3:QUAT, EDGE_SE3:QUAT or FIX");
  CHECK(hostile_error_of([] { lsjit::io::parse_g2o(std::string(1000, 'A') + "\n", "t.g2o"); }) ==
        "t.g2o:1: unknown tag '" + std::string(40, 'A') +
            "...': expected VERTEX_SE2, EDGE_SE2, VERTEX_SE3:QUAT, EDGE_SE3:QUAT or FIX");
  CHECK(hostile_error_of([] { lsjit::io::parse_g2o("VERTEX_SE2 0 0 \x7f\x07 0\n", "t.g2o"); }) ==
        "t.g2o:1: VERTEX_SE2 y is '\\x7f\\x07': expected a number");
  CHECK(hostile_error_of([] { lsjit::io::parse_bal("1 1 1\n0 0 " + std::string(300, '9') + "x 1\n", "t.bal"); }) ==
        "t.bal:2: observation 0 x is '" + std::string(40, '9') + "...': expected a number");
  CHECK(hostile_error_of([] { lsjit::io::parse_bal("0 0 0\n\x01\x02\n", "t.bal"); }) ==
        "t.bal:2: unexpected '\\x01\\x02' after the last point: the header (0 cameras, 0 points, "
        "0 observations) announces nothing more");
}

TEST_CASE("io: g2o and BAL files may start with a UTF-8 byte order mark") {
  const std::string bom = "\xEF\xBB\xBF";
  const PoseGraph g = lsjit::io::parse_g2o(bom + "VERTEX_SE2 3 1 2 0\n", "bom.g2o");
  CHECK(g.vertex_ids == std::vector<int64_t>{3});
  CHECK(lsjit::io::parse_bal(bom + "1 1 1\n0 0 1 2\n1 2 3 4 5 6 7 8 9\n1 2 3\n", "bom.bal")
            .observations.size() == 1);
  const fs::path dir = hostile_dir("bom");
  put(dir / "bom.g2o", bom + "VERTEX_SE2 3 1 2 0\n");
  CHECK(lsjit::io::read_g2o(dir / "bom.g2o").vertex_ids == std::vector<int64_t>{3});
  put(dir / "bom.bal", bom + "0 0 0\n");
  CHECK(lsjit::io::read_bal(dir / "bom.bal").observations.empty());
  // Only at the start: elsewhere it is a token like any other.
  CHECK(hostile_error_of([&] { lsjit::io::parse_g2o("VERTEX_SE2 3 1 2 0\n" + bom + "FIX 3\n", "t.g2o"); })
            .find("t.g2o:2: unknown tag '\\xef\\xbb\\xbfFIX'") == 0);
}

TEST_CASE("io: a path that cannot be read says why") {
  const fs::path dir = hostile_dir("unreadable");
  CHECK(hostile_error_of([&] { lsjit::io::read_bal(dir); }) == dir.string() + ": cannot read: is a directory");
  CHECK(hostile_error_of([&] { lsjit::io::read_g2o(dir / "absent"); }) ==
        (dir / "absent").string() + ": cannot read: No such file or directory");
  put(dir / "file", "VERTEX_SE2 0 0 0 0\n");
  CHECK(hostile_error_of([&] { lsjit::io::read_g2o(dir / "file" / "below"); }) ==
        (dir / "file" / "below").string() + ": cannot read: Not a directory");
  if (::geteuid() != 0) {  // root reads whatever the mode says
    REQUIRE(::chmod((dir / "file").c_str(), 0) == 0);
    CHECK(hostile_error_of([&] { lsjit::io::read_g2o(dir / "file"); }) ==
          (dir / "file").string() + ": cannot read: Permission denied");
  }
}

TEST_CASE("io: Values refuses an SE3 or SO3 value with a zero or non-finite quaternion") {
  lsjit::Values v;
  const Eigen::Vector3d t(1, 2, 3);
  CHECK(hostile_error_of([&] {
          v.set(lsjit::SE3Var(7), lsjit::SE3d(lsjit::SO3d::from_params(Eigen::Vector4d::Zero()), t));
        }) == "lsjit::Values: SE3 variable 7 has a zero quaternion (qx qy qz qw = 0.000000 0.000000 "
              "0.000000 0.000000): expected a rotation");
  CHECK(hostile_error_of([&] {
          v.set(lsjit::SO3Var(-2), lsjit::SO3d::from_params(Eigen::Vector4d(0, NAN, 0, 1)));
        }) == "lsjit::Values: SO3 variable -2 has a non-finite quaternion (qx qy qz qw = 0.000000 "
              "nan 0.000000 1.000000): expected a rotation");
  CHECK(v.empty());  // nothing half-set
  // A quaternion that is not unit but not zero is a rotation (solvers normalize it).
  v.set(lsjit::SE3Var(7), lsjit::SE3d(lsjit::SO3d::from_params(Eigen::Vector4d(0, 0, 0, 2)), t));
  CHECK(v.has(lsjit::SE3Var(7)));
}
