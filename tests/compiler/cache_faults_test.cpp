// The kernel cache under disk faults, with the fake compiler backend: the directory
// removed mid-run, read-only, full, or holding an entry nobody may read. In every case
// get() must keep returning kernels (from memory, or compiled), say what happened at most
// once, and leave no half-written file behind. The same faults on the whole
// analyze/solve path, with LLVM, are in tests/runtime/faults_test.cpp.
#include <doctest/doctest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <functional>
#include <mutex>
#include <thread>

#include "cache_test_support.h"
#include "lsjit/compiler/cache/disk_cache.h"
#include "lsjit/compiler/cache/kernel_cache.h"

using namespace lsjit;
using namespace lsjit::compiler;
using namespace lsjit::cache_testing;

namespace {

size_t lines(const std::string& log) { return static_cast<size_t>(std::count(log.begin(), log.end(), '\n')); }

// Files in `dir` whose name starts with '.', but the key file: temporaries of an abandoned
// write.
std::vector<std::string> temporaries(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (const std::string name = it->path().filename().string();
        name[0] == '.' && name != compiler::kAuthKeyFileName)
      out.push_back(name);
  return out;
}

// Whether this process can create a file in `dir` despite its mode: root (or a process
// with CAP_DAC_OVERRIDE) ignores permission bits, so a chmod-based check cannot fail
// there. Probing is more honest than checking geteuid(): a root without the capability is
// denied like anyone.
bool permissions_ignored(const fs::path& dir) {
  const fs::path probe = dir / ".probe";
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) return false;
  ::close(fd);
  ::unlink(probe.c_str());
  return true;
}

// Restores a path's mode on scope exit, so that TempDir can remove it even when a check
// fails.
struct ModeGuard {
  fs::path path;
  ~ModeGuard() { ::chmod(path.c_str(), 0755); }
};

// Runs `scenario` in a forked child and returns its report (or "exception=..."), read
// through a pipe: a child has no doctest context, and a pipe is neither subject to
// RLIMIT_FSIZE nor to the child's permissions. `prepare` runs first in the child (drop
// privileges, set limits). The child is single-threaded here: the fake backend compiles
// inline, so fork() is safe.
std::string in_child(const std::function<void()>& prepare, const std::function<std::string()>& scenario,
                     bool& exited) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    std::string report;
    try {
      prepare();
      report = scenario();
    } catch (const std::exception& e) {
      report = std::string("exception=") + e.what() + "\n";
    }
    for (size_t done = 0; done < report.size();) {
      const ssize_t n = ::write(fds[1], report.data() + done, report.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string report;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) report.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  exited = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return report;
}

// Permission faults need a process that permissions apply to. Running as root (as CI
// containers often do), the scenario runs in a child that has become `nobody`, which
// drops CAP_DAC_OVERRIDE; if even that is impossible, or nobody cannot reach `dir`, the
// check is skipped and says so.
// `ignored` tells whether permissions fail to apply to the calling process. Returns
// "skip: why" or the scenario's report.
std::string without_privileges(const fs::path& dir, const std::function<bool()>& ignored,
                               const std::function<std::string()>& scenario) {
  const bool privileged = ignored();
  // The cache trusts only a directory of its own user: give the tree to nobody first.
  if (privileged) {
    std::error_code ec;
    ::chown(dir.c_str(), 65534, 65534);
    for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
      ::lchown(it->path().c_str(), 65534, 65534);
  }
  bool exited = false;
  const std::string report = in_child(
      [&] {
        if (privileged && (::setgid(65534) != 0 || ::setuid(65534) != 0))
          throw std::runtime_error("skip: running as root, and cannot become nobody (setuid: " +
                                   std::string(std::strerror(errno)) + ")");
      },
      [&]() -> std::string {
        if (ignored()) return "skip: permissions do not apply to this process (root or CAP_DAC_OVERRIDE)";
        if (::access(dir.c_str(), X_OK) != 0)  // e.g. a build tree under a 0700 home
          return "skip: " + dir.string() + " is not reachable without privileges";
        return scenario();
      },
      exited);
  CHECK(exited);
  if (report.rfind("exception=skip: ", 0) == 0) return report.substr(10);
  return report;
}

std::string line_of(const std::string& report, const std::string& key) {
  const std::string start = "\n" + report;  // every line, the first included, follows a \n
  const size_t at = start.find("\n" + key + "=");
  if (at == std::string::npos) return "(no " + key + ")";
  const size_t from = at + key.size() + 2, end = start.find('\n', from);
  return start.substr(from, end == std::string::npos ? std::string::npos : end - from);
}

}  // namespace

TEST_CASE("cache faults: the directory removed between two gets of new keys is created again") {
  TempDir dir("removed");
  FakeCache c(dir / "cache");
  const auto k1 = c->get(trace_scaled(2.0, "first"), KernelMode::Residual);
  REQUIRE(DiskCache(dir / "cache").list().size() == 1);

  // What `rm -rf ~/.cache/lsjit` (or `lsjit cache clear` plus rmdir) does to a running
  // program. The next write recreates the directory: nothing is worth a warning.
  fs::remove_all(dir / "cache");
  const auto k2 = c->get(trace_scaled(2.0, "second"), KernelMode::Residual);
  CHECK(bool(k2->function));
  CHECK(c->get(trace_scaled(2.0, "first"), KernelMode::Residual) == k1);  // memory still has it
  CHECK(c.log.str().empty());
  CHECK(c->disk_writable());
  CHECK(c->stats().disk_writes == 2);
  CHECK(c->stats().compiles == 2);
  CHECK(temporaries(dir / "cache").empty());

  // A new process finds the second kernel on disk; the first was lost with the directory
  // and is recompiled silently (a missing entry is not a bad one).
  FakeCache fresh(dir / "cache");
  CHECK(fresh->lookup(trace_scaled(2.0, "second"), KernelMode::Residual).source == KernelSource::Disk);
  CHECK(fresh->lookup(trace_scaled(2.0, "first"), KernelMode::Residual).source == KernelSource::Compiled);
  CHECK(fresh.log.str().empty());
  CHECK(fresh->stats().bad_disk_entries == 0);
}

TEST_CASE("cache faults: the directory replaced by a file mid-run - one warning, then memory only") {
  TempDir dir("replaced");
  FakeCache c(dir / "cache");
  const auto k1 = c->get(trace_scaled(2.0, "first"), KernelMode::Residual);
  fs::remove_all(dir / "cache");
  write_bytes(dir / "cache", "not a directory");  // now it cannot be created again

  const auto k2 = c->get(trace_scaled(2.0, "second"), KernelMode::Residual);
  const auto k3 = c->get(trace_scaled(2.0, "third"), KernelMode::Residual);
  CHECK(bool(k2->function));
  CHECK(bool(k3->function));
  CHECK(c->get(trace_scaled(2.0, "first"), KernelMode::Residual) == k1);
  CHECK(c->get(trace_scaled(2.0, "second"), KernelMode::Residual) == k2);
  const std::string log = c.log.str();
  CAPTURE(log);
  CHECK(lines(log) == 1);  // the second failing write is not reported again
  CHECK(log.find("lsjit: warning: kernel cache directory '" + (dir / "cache").string() + "'") == 0);
  CHECK(log.find("memory only") != std::string::npos);
  CHECK(!c->disk_writable());
  CHECK(c->stats().compiles == 3);
  CHECK(c->stats().disk_writes == 1);
  CHECK(c->stats().bad_disk_entries == 0);  // reads below a file are plain misses
}

TEST_CASE("cache faults: a read-only directory - entries are still read, new kernels stay in memory") {
  TempDir dir("readonly");
  {
    FakeCache writer(dir.path);
    writer->get(trace_scaled(2.0, "stored"), KernelMode::Residual);
  }
  ModeGuard guard{dir.path};
  REQUIRE(::chmod(dir.path.c_str(), 0555) == 0);
  const std::string report = without_privileges(dir.path, [&] { return permissions_ignored(dir.path); }, [&] {
    FakeCache c(dir.path);
    const auto stored = c->lookup(trace_scaled(2.0, "stored"), KernelMode::Residual);
    const auto a = c->get(trace_scaled(2.0, "new_a"), KernelMode::Residual);
    const auto b = c->get(trace_scaled(2.0, "new_b"), KernelMode::Residual);
    const auto again = c->lookup(trace_scaled(2.0, "new_a"), KernelMode::Residual);
    const CacheStats s = c->stats();
    return "stored=" + std::string(source_name(stored.source)) + "\nfunctions=" +
           (a->function && b->function ? "yes" : "no") + "\nagain=" +
           std::string(source_name(again.source)) + "\nwritable=" + (c->disk_writable() ? "yes" : "no") +
           "\ncompiles=" + std::to_string(s.compiles) + "\nlog=" + c.log.str();
  });
  if (report.rfind("skip: ", 0) == 0) {
    MESSAGE("read-only directory not tested: " << report);
    return;
  }
  CAPTURE(report);
  CHECK(line_of(report, "stored") == "disk");
  CHECK(line_of(report, "functions") == "yes");
  CHECK(line_of(report, "again") == "memory");
  CHECK(line_of(report, "writable") == "no");
  CHECK(line_of(report, "compiles") == "2");
  const std::string log = report.substr(report.find("\nlog=") + 5);
  CHECK(lines(log) == 1);
  CHECK(log.find("cannot create a file in it: " + std::string(std::strerror(EACCES))) != std::string::npos);
  CHECK(log.find("memory only") != std::string::npos);
  CHECK(DiskCache(dir.path).list().size() == 1);
  CHECK(temporaries(dir.path).empty());
}

TEST_CASE("cache faults: an entry that cannot be read is reported once and recompiled") {
  TempDir dir("unreadable");
  const ir::Trace t = trace_scaled(2.0);
  const fs::path path = residual_entry_written(dir.path, t);
  REQUIRE(::chmod(path.c_str(), 0) == 0);
  REQUIRE(::chmod(dir.path.c_str(), 0700) == 0);  // the child (its owner) may replace the entry
  auto readable = [&] {
    const int fd = ::open(path.c_str(), O_RDONLY);
    if (fd >= 0) ::close(fd);
    return fd >= 0;
  };
  const std::string report = without_privileges(dir.path, readable, [&] {
    FakeCache c(dir.path);
    const auto first = c->lookup(t, KernelMode::Residual);
    const auto second = c->lookup(t, KernelMode::Residual);
    FakeCache again(dir.path);
    const auto third = again->lookup(t, KernelMode::Residual);
    return "first=" + std::string(source_name(first.source)) + "\nsecond=" +
           std::string(source_name(second.source)) + "\nbad=" + std::to_string(c->stats().bad_disk_entries) +
           "\nwritable=" + (c->disk_writable() ? "yes" : "no") + "\nthird=" +
           std::string(source_name(third.source)) + "\nthird_log=" + std::to_string(again.log.str().size()) +
           "\nlog=" + c.log.str();
  });
  if (report.rfind("skip: ", 0) == 0) {
    MESSAGE("unreadable entry not tested: " << report);
    return;
  }
  CAPTURE(report);
  CHECK(line_of(report, "first") == "compiled");
  CHECK(line_of(report, "second") == "memory");
  CHECK(line_of(report, "bad") == "1");
  // Replaced by a readable entry (rename needs the directory's permission, not the
  // file's), which a new cache then loads silently.
  CHECK(line_of(report, "writable") == "yes");
  CHECK(line_of(report, "third") == "disk");
  CHECK(line_of(report, "third_log") == "0");
  const std::string log = report.substr(report.find("\nlog=") + 5);
  CHECK(lines(log) == 1);
  CHECK(log.find("is unreadable (" + std::string(std::strerror(EACCES)) + ")") != std::string::npos);
}

// A full disk, simulated with RLIMIT_FSIZE: a process may not grow a file past the limit,
// and with SIGXFSZ ignored write() fails with EFBIG instead of killing it. The cache takes
// that path exactly as it takes ENOSPC (any failing write abandons the temporary file and
// disables writes). RLIMIT_FSIZE binds root too and needs no privilege, unlike a tiny
// tmpfs (mount) or a loop device, so the test runs the same in every container. The limit
// is set in a forked child so that the test process itself is unaffected; the child has no
// doctest context and reports back through a pipe, which the limit does not cover.
TEST_CASE("cache faults: a full disk (writes fail with EFBIG) - one warning, memory only, no "
          "partial file left") {
  TempDir dir("full");
  {
    FakeCache writer(dir.path);  // written before the disk "fills up": still readable after
    writer->get(trace_scaled(2.0, "stored"), KernelMode::Residual);
  }
  bool exited = false;
  const std::string report = in_child(
      [] {
        ::signal(SIGXFSZ, SIG_IGN);
        const rlimit limit{200, 200};  // a few hundred bytes: every entry is larger
        if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) throw std::runtime_error("setrlimit failed");
      },
      [&] {
        FakeCache c(dir.path);
        const auto stored = c->lookup(trace_scaled(2.0, "stored"), KernelMode::Residual);
        const auto a = c->get(trace_scaled(2.0, "new_a"), KernelMode::Residual);
        const auto b = c->get(trace_scaled(2.0, "new_b"), KernelMode::Residual);
        const auto again = c->lookup(trace_scaled(2.0, "new_a"), KernelMode::Residual);
        const CacheStats s = c->stats();
        return "stored=" + std::string(source_name(stored.source)) + "\nfunctions=" +
               (a->function && b->function ? "yes" : "no") + "\nagain=" +
               std::string(source_name(again.source)) + "\nwritable=" +
               (c->disk_writable() ? "yes" : "no") + "\ncompiles=" + std::to_string(s.compiles) +
               "\nwrites=" + std::to_string(s.disk_writes) + "\nlog=" + c.log.str();
      },
      exited);
  CAPTURE(report);
  REQUIRE(exited);  // not killed by SIGXFSZ or anything else
  CHECK(report.find("exception=") == std::string::npos);
  CHECK(line_of(report, "stored") == "disk");  // written before the disk filled up
  CHECK(line_of(report, "functions") == "yes");
  CHECK(line_of(report, "again") == "memory");
  CHECK(line_of(report, "writable") == "no");
  CHECK(line_of(report, "compiles") == "2");
  CHECK(line_of(report, "writes") == "0");
  const size_t log_at = report.find("\nlog=");
  REQUIRE(log_at != std::string::npos);
  const std::string log = report.substr(log_at + 5);
  CHECK(lines(log) == 1);
  CHECK(log.find("cannot write an entry: " + std::string(std::strerror(EFBIG))) != std::string::npos);
  CHECK(log.find("memory only") != std::string::npos);
  // The abandoned temporary is removed; only the entry written before remains.
  CHECK(temporaries(dir.path).empty());
  CHECK(DiskCache(dir.path).list().size() == 1);
}

// Not a fault, but what every analyze() after the first does: lookup_modes with kernels
// already in memory. Hits are answered on the calling thread (a thread per mode cost three
// times the rest of a small analyze + solve), and counted exactly as lookup() counts them.
TEST_CASE("cache: lookup_modes answers hits and a single miss on the calling thread") {
  TempDir dir("modes_inline");
  std::shared_ptr<FakeCounters> counters = std::make_shared<FakeCounters>();
  std::vector<std::thread::id> compiled_on;
  std::mutex m;
  KernelCache::Options o;
  o.directory = dir.path;
  o.quiet = true;
  o.backend = fake_backend(counters);
  auto compile = o.backend.compile;
  o.backend.compile = [&, compile](const ir::Trace& g, const compiler::KernelLayout& l,
                                   const compiler::CompileOptions& co, const std::string& symbol) {
    std::lock_guard lock(m);
    compiled_on.push_back(std::this_thread::get_id());
    return compile(g, l, co, symbol);
  };
  KernelCache cache(o);
  const ir::Trace t = trace_scaled(2.0);
  const std::vector<KernelMode> both = {KernelMode::Residual, KernelMode::NormalEquations};

  const auto first = cache.lookup_modes(t, both);  // two misses: compiled concurrently
  REQUIRE(compiled_on.size() == 2);
  const auto again = cache.lookup_modes(t, both);
  CHECK(again[0].source == KernelSource::Memory);
  CHECK(again[1].source == KernelSource::Memory);
  CHECK(again[0].kernel == first[0].kernel);
  CHECK(again[1].kernel == first[1].kernel);
  CHECK(compiled_on.size() == 2);
  CacheStats s = cache.stats();
  CHECK(s.gets == 4);
  CHECK(s.memory_hits == 2);
  CHECK(s.compiles == 2);

  // One hit and one miss: the miss compiles here.
  const auto mixed = cache.lookup_modes(t, {KernelMode::Residual, KernelMode::ResidualJacobian});
  CHECK(mixed[0].source == KernelSource::Memory);
  CHECK(mixed[1].source == KernelSource::Compiled);
  REQUIRE(compiled_on.size() == 3);
  CHECK(compiled_on[2] == std::this_thread::get_id());
  s = cache.stats();
  CHECK(s.gets == 6);
  CHECK(s.memory_hits == 3);
  const auto entries = cache.entries();
  uint64_t hits = 0;
  for (const CacheEntryInfo& e : entries) hits += e.hits;
  CHECK(hits == 3);  // per-entry hit counts see the inline hits too
}

// ---------------------------------------------------------------- trust

namespace {

constexpr uid_t kNobody = 65534;

// A cache on `dir` with one kernel compiled, for the warnings a second get would give.
size_t warnings(const std::string& log) { return count_lines(log, "lsjit: warning:"); }

}  // namespace

TEST_CASE("cache trust: a new directory is created 0700 with a 0600 key file") {
  TempDir dir("trust_new");
  FakeCache cache(dir / "sub" / "cache");
  cache->get(trace_scaled(2.0), KernelMode::Residual);
  struct stat st {};
  REQUIRE(::stat((dir / "sub" / "cache").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0700);
  REQUIRE(::stat((dir / "sub" / "cache" / std::string(kAuthKeyFileName)).c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0600);
  CHECK(st.st_size == static_cast<off_t>(kAuthKeySize));
  CHECK(cache->stats().disk_writes == 1);
}

TEST_CASE("cache trust: a group- or world-writable directory is refused - one warning, memory only") {
  for (mode_t mode : {mode_t{0777}, mode_t{0770}, mode_t{01777}}) {
    CAPTURE(mode);
    TempDir dir("trust_writable_" + std::to_string(mode));
    { FakeCache filler(dir.path); filler->get(trace_scaled(2.0), KernelMode::Residual); }
    REQUIRE(::chmod(dir.path.c_str(), mode) == 0);
    FakeCache cache(dir.path);
    CHECK(cache->lookup(trace_scaled(2.0), KernelMode::Residual).source == KernelSource::Compiled);
    cache->get(trace_scaled(3.0), KernelMode::Residual);
    cache->get(trace_two_vars(), KernelMode::Residual);
    const std::string log = cache.log.str();
    CAPTURE(log);
    CHECK(warnings(log) == 1);
    CHECK(log.find("chmod 700 " + dir.path.string()) != std::string::npos);
    CHECK(log.find("memory only") != std::string::npos);
    CHECK(cache->stats().disk_writes == 0);
    CHECK(cache->stats().disk_hits == 0);
    CHECK(!cache->disk_writable());
    struct stat st {};
    REQUIRE(::stat(dir.path.c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == mode);  // never chmod'ed behind the user's back
    ::chmod(dir.path.c_str(), 0700);
  }
}

TEST_CASE("cache trust: a directory or entry owned by another user is refused") {
  if (::geteuid() != 0) {
    MESSAGE("skipped: chown to another user needs root");
    return;
  }
  SUBCASE("the directory") {
    TempDir dir("trust_dir_owner");
    { FakeCache filler(dir.path); filler->get(trace_scaled(2.0), KernelMode::Residual); }
    REQUIRE(::chown(dir.path.c_str(), kNobody, kNobody) == 0);
    FakeCache cache(dir.path);
    CHECK(cache->lookup(trace_scaled(2.0), KernelMode::Residual).source == KernelSource::Compiled);
    cache->get(trace_scaled(3.0), KernelMode::Residual);
    const std::string log = cache.log.str();
    CAPTURE(log);
    CHECK(warnings(log) == 1);
    CHECK(log.find("owned by another user (uid 65534)") != std::string::npos);
    CHECK(log.find("choose another LSJIT_CACHE_DIR") != std::string::npos);
    CHECK(cache->stats().disk_writes == 0);
  }
  SUBCASE("one entry") {
    TempDir dir("trust_entry_owner");
    const ir::Trace a = trace_scaled(2.0), b = trace_scaled(3.0);
    fs::path path_a;
    {
      FakeCache filler(dir.path);
      path_a = filler->disk_directory().value() / (filler->get(a, KernelMode::Residual)->key.id() + ".lsjitk");
      filler->get(b, KernelMode::Residual);
    }
    REQUIRE(::chown(path_a.c_str(), kNobody, kNobody) == 0);
    FakeCache cache(dir.path);
    CHECK(cache->lookup(a, KernelMode::Residual).source == KernelSource::Compiled);
    CHECK(cache->lookup(b, KernelMode::Residual).source == KernelSource::Disk);
    const std::string log = cache.log.str();
    CAPTURE(log);
    CHECK(warnings(log) == 1);
    CHECK(log.find(path_a.string() + " is refused (it is owned by another user (uid 65534))") !=
          std::string::npos);
  }
}

TEST_CASE("cache trust: a symlink in an entry's place is not followed") {
  TempDir dir("trust_symlink");
  const ir::Trace a = trace_scaled(2.0), b = trace_scaled(3.0);
  fs::path path_a, path_b;
  {
    FakeCache filler(dir / "cache");
    path_a = dir / "cache" / (filler->get(a, KernelMode::Residual)->key.id() + ".lsjitk");
    path_b = dir / "cache" / (filler->get(b, KernelMode::Residual)->key.id() + ".lsjitk");
  }
  // a's name points at b's (valid, authenticated) file elsewhere.
  fs::rename(path_b, dir / "elsewhere.lsjitk");
  fs::remove(path_a);
  fs::create_symlink(dir / "elsewhere.lsjitk", path_a);
  FakeCache cache(dir / "cache");
  CHECK(cache->lookup(a, KernelMode::Residual).source == KernelSource::Compiled);
  const std::string log = cache.log.str();
  CAPTURE(log);
  CHECK(log.find("is refused (it is a symbolic link)") != std::string::npos);
  CHECK(cache.counters->loads == 1);  // only the fresh compile was loaded
}

TEST_CASE("cache trust: a key file that is not 0600, not regular or not 32 bytes is refused") {
  for (int variant = 0; variant < 3; ++variant) {
    CAPTURE(variant);
    TempDir dir("trust_key_" + std::to_string(variant));
    { FakeCache filler(dir.path); filler->get(trace_scaled(2.0), KernelMode::Residual); }
    const fs::path key = dir / std::string(kAuthKeyFileName);
    if (variant == 0) REQUIRE(::chmod(key.c_str(), 0644) == 0);
    if (variant == 1) write_bytes(key, std::string(33, 'k'));
    if (variant == 2) {
      fs::remove(key);
      fs::create_directory(key);
    }
    FakeCache cache(dir.path);
    CHECK(cache->lookup(trace_scaled(2.0), KernelMode::Residual).source == KernelSource::Compiled);
    cache->get(trace_scaled(3.0), KernelMode::Residual);
    const std::string log = cache.log.str();
    CAPTURE(log);
    CHECK(warnings(log) == 1);
    CHECK(log.find("key file '" + key.string() + "' is refused") != std::string::npos);
    CHECK(log.find(variant == 0 ? "mode is 0644, not 0600" : variant == 1 ? "33 bytes" : "not a regular file") !=
          std::string::npos);
    CHECK(cache->stats().disk_writes == 0);
  }
}

TEST_CASE("cache trust: a directory in an entry's place is a miss for that key only") {
  TempDir dir("trust_dir_in_place");
  const ir::Trace a = trace_scaled(2.0), b = trace_scaled(3.0), c = trace_two_vars();
  fs::path path_a;
  {
    FakeCache probe(dir / "probe");
    path_a = dir / (probe->get(a, KernelMode::Residual)->key.id() + ".lsjitk");
  }
  fs::create_directories(path_a);
  {
    FakeCache cache(dir.path);
    CHECK(cache->lookup(a, KernelMode::Residual).source == KernelSource::Compiled);
    cache->get(b, KernelMode::Residual);
    cache->get(c, KernelMode::Residual);
    CHECK(cache->disk_writable());
    CHECK(cache->stats().disk_writes == 2);
    const std::string log = cache.log.str();
    CAPTURE(log);
    CHECK(warnings(log) <= 2);  // the read (not a regular file) and the write (taken)
    CHECK(log.find(path_a.string()) != std::string::npos);
  }
  FakeCache again(dir.path);
  CHECK(again->lookup(b, KernelMode::Residual).source == KernelSource::Disk);
  CHECK(again->lookup(c, KernelMode::Residual).source == KernelSource::Disk);
  CHECK(fs::is_directory(path_a));
}

TEST_CASE("cache: has_entries sees entry files by name only, in a directory that may be missing") {
  TempDir dir("has_entries");
  CHECK_FALSE(compiler::DiskCache(dir / "missing").has_entries());
  const compiler::DiskCache disk(dir.path);
  CHECK_FALSE(disk.has_entries());  // empty
  write_bytes(dir / std::string(kAuthKeyFileName), std::string(kAuthKeySize, 'k'));
  write_bytes(dir / ("." + std::string(32, 'a') + ".lsjitk.tmp.1"), "x");  // an unfinished write
  write_bytes(dir / (std::string(31, 'a') + ".lsjitk"), "x");              // a hex digit short
  write_bytes(dir / (std::string(32, 'g') + ".lsjitk"), "x");              // not hex
  CHECK_FALSE(disk.has_entries());
  write_bytes(dir / (std::string(32, 'a') + ".lsjitk"), "not even an entry");  // named as one
  CHECK(disk.has_entries());
}
