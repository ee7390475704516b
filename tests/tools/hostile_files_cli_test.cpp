// lsjit solve and generate, run as child processes, on input and output paths that are
// not plain files: an endless pipe of zeros, a FIFO, a symlink to a device, a 0600 file
// (docs/testing.md, "Hostile input and file faults").
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "../support/run_cli_piped.h"

namespace {

namespace fs = std::filesystem;
using lsjit::testing::CliRun;

fs::path hostile_dir(const std::string& name) {
  const fs::path dir = fs::path(LSJIT_TEST_TMP_DIR) / ("hostile_cli_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

mode_t lstat_mode(const fs::path& path) {
  struct stat st {};
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_mode;
}

std::string contents(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

const std::string kGenerate = "generate pose-graph --dim 2 --poses 10 --loop-closures 2 --out ";

}  // namespace

TEST_CASE("lsjit solve on 128 MB of zeros through a pipe fails at line 1 in bounded memory") {
  for (const std::string format : {"g2o", "bal"}) {
    CAPTURE(format);
    const CliRun r = lsjit::testing::run_cli_piped("head -c 134217728 /dev/zero",
                                                   "solve /dev/stdin --format " + format);
    CAPTURE(r.out);
    CHECK(r.exit_code == 1);
    CHECK(r.out == "lsjit: /dev/stdin:1: the line is longer than 4096 bytes: expected a" +
                       std::string(format == "g2o" ? " g2o" : " BAL") + " line\n");
  }
  // Reading the whole input first, as the readers once did, took 5 times the input's size.
  const long long peak = lsjit::testing::children_peak_rss_bytes();
  INFO("peak RSS of the children: " << peak / (1 << 20) << " MB");
  CHECK(peak < 200ll << 20);
}

TEST_CASE("lsjit generate and solve --out refuse a FIFO and a symlink to /dev/null") {
  const fs::path dir = hostile_dir("special_out");
  const fs::path fifo = dir / "out.g2o";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CliRun r = lsjit::testing::run_cli(kGenerate + fifo.string());
  CAPTURE(r.out);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find(fifo.string() +
                   ": cannot write: is a FIFO (named pipe); lsjit writes only regular files") !=
        std::string::npos);
  CHECK(S_ISFIFO(lstat_mode(fifo)));

  const fs::path graph = dir / "graph.g2o";
  REQUIRE(lsjit::testing::run_cli(kGenerate + graph.string()).exit_code == 0);
  const fs::path null_link = dir / "null.g2o";
  fs::create_symlink("/dev/null", null_link);
  r = lsjit::testing::run_cli("solve " + graph.string() + " --out " + null_link.string());
  CAPTURE(r.out);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find(null_link.string() +
                   ": cannot write: its target /dev/null is a character device; lsjit writes "
                   "only regular files") != std::string::npos);
  CHECK(S_ISLNK(lstat_mode(null_link)));
  CHECK(S_ISCHR(lstat_mode("/dev/null")));
}

TEST_CASE("lsjit solve --out keeps a 0600 file 0600 and writes through a symlink") {
  const fs::path dir = hostile_dir("mode_out");
  const fs::path graph = dir / "graph.g2o";
  REQUIRE(lsjit::testing::run_cli(kGenerate + graph.string()).exit_code == 0);
  const fs::path secret = dir / "secret.g2o";
  REQUIRE(lsjit::testing::run_cli(kGenerate + secret.string()).exit_code == 0);
  REQUIRE(::chmod(secret.c_str(), 0600) == 0);
  const fs::path link = dir / "link.g2o";
  fs::create_symlink("secret.g2o", link);
  const CliRun r = lsjit::testing::run_cli("solve " + graph.string() + " --out " + link.string());
  CAPTURE(r.out);
  REQUIRE(r.exit_code == 0);
  CHECK(S_ISLNK(lstat_mode(link)));
  CHECK((lstat_mode(secret) & 07777) == 0600);
  // The solution went to the link's target, which was the same graph as the input before.
  CHECK(contents(secret) != contents(graph));
  CHECK(contents(secret).starts_with("VERTEX_SE2 "));
}

TEST_CASE("lsjit trace refuses an IR file larger than any trace, without reading it") {
  const fs::path dir = fs::path(LSJIT_TEST_TMP_DIR) / "hostile_trace";
  fs::create_directories(dir);
  const fs::path big = dir / "huge.ir";
  {
    std::ofstream(big) << "";
  }
  fs::resize_file(big, (64u << 20) + 1);  // sparse: no disk used, 64 MiB + 1 of zeros
  const lsjit::testing::CliRun r = lsjit::testing::run_cli("trace " + big.string());
  CAPTURE(r.out);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("expected an IR text file of at most 67108864 bytes") != std::string::npos);
  fs::remove(big);
}
