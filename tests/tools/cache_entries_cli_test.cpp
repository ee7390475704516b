// `lsjit cache` on names that are not regular files: what solve refuses to load, verify
// reports as bad, list shows as bad, and clear removes (never following a link); and
// clear leaves a young temporary file to the writer that owns it.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "../support/run_cli.h"

namespace {

namespace fs = std::filesystem;
using lsjit::testing::CliRun;
using lsjit::testing::run;

}  // namespace

TEST_CASE("cache entries: a FIFO or a symlink with an entry's name is bad to verify and list, and clear removes it") {
  const fs::path dir = fs::path(LSJIT_TEST_TMP_DIR) / "cache_entries";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path cache = dir / "cache";
  const fs::path graph = dir / "g.g2o";
  REQUIRE(run("generate pose-graph --dim 2 --poses 10 --loop-closures 2 --out " + graph.string()).exit_code == 0);
  const std::string env = "LSJIT_CACHE_DIR=" + cache.string() + " LSJIT_TIER=compiled";
  REQUIRE(run("solve " + graph.string(), env).exit_code == 0);
  const std::string flag = " --dir " + cache.string();

  const fs::path fifo = cache / "0123456789abcdef0123456789abcdef.lsjitk";
  const fs::path link = cache / "fedcba9876543210fedcba9876543210.lsjitk";
  const fs::path target = dir / "target";
  std::ofstream(target) << "not the cache's\n";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  fs::create_symlink(target, link);

  const CliRun verify = run("cache verify" + flag);
  CAPTURE(verify.out);
  CHECK(verify.exit_code == 1);
  CHECK(verify.out.find("BAD  0123456789ab  untrusted: it is not a regular file") != std::string::npos);
  CHECK(verify.out.find("BAD  fedcba987654  untrusted: it is a symbolic link") != std::string::npos);
  CHECK(verify.out.find("2 bad") != std::string::npos);
  const CliRun list = run("cache list" + flag);
  CAPTURE(list.out);
  CHECK(list.out.find("0123456789ab  BAD") != std::string::npos);
  CHECK(list.out.find("fedcba987654  BAD") != std::string::npos);

  // A young temporary file (a writer at work) stays; an old one goes.
  const fs::path young = cache / ".00000000000000000000000000000001.lsjitk.tmp.1.2";
  const fs::path old = cache / ".00000000000000000000000000000002.lsjitk.tmp.1.2";
  std::ofstream(young) << "x";
  std::ofstream(old) << "x";
  fs::last_write_time(old, fs::file_time_type::clock::now() - std::chrono::hours(2));
  const CliRun clear = run("cache clear" + flag);
  CAPTURE(clear.out);
  CHECK(clear.exit_code == 0);
  CHECK_FALSE(fs::exists(fs::symlink_status(fifo)));
  CHECK_FALSE(fs::exists(fs::symlink_status(link)));
  CHECK_FALSE(fs::exists(old));
  CHECK(fs::exists(young));
  std::ifstream in(target);
  std::string kept;
  std::getline(in, kept);
  CHECK(kept == "not the cache's");  // the link was removed, not followed
  CHECK(run("cache verify" + flag).exit_code == 0);
}
