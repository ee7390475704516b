// A writer whose temporary file is removed before its rename (by an `lsjit cache clear` of
// an older lsjit, or a user's rm) tries once more instead of giving up on the disk; and
// `clear` itself leaves a young temporary file, which a writer at work owns, alone.
#include <doctest/doctest.h>
#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "cache_test_support.h"
#include "lsjit/compiler/cache/cache_key.h"

namespace lsjit::cache_testing {
namespace {

using compiler::DiskCache;

// Watches `dir` and unlinks the first writer's temporary file that appears in it; `hit`
// says whether that unlink removed it (else the writer had renamed it first).
class FirstTemporaryRemover {
 public:
  explicit FirstTemporaryRemover(const std::filesystem::path& dir) : dir_(dir) {
    fd_ = inotify_init1(IN_CLOEXEC);
    REQUIRE(fd_ >= 0);
    REQUIRE(inotify_add_watch(fd_, dir.c_str(), IN_CREATE) >= 0);
    thread_ = std::thread([this] { run(); });
  }
  ~FirstTemporaryRemover() {
    thread_.join();
    ::close(fd_);
  }
  bool hit() const { return hit_; }

 private:
  void run() {
    alignas(inotify_event) char buf[4096];
    while (true) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 10000) <= 0) return;  // nothing in 10 s: give up, never hang
      const ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n <= 0) return;
      for (ssize_t off = 0; off < n;) {
        const auto* e = reinterpret_cast<const inotify_event*>(buf + off);
        off += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
        if (e->len == 0 || std::strstr(e->name, ".lsjitk.tmp.") == nullptr) continue;
        hit_ = ::unlink((dir_ / e->name).c_str()) == 0;
        return;
      }
    }
  }

  std::filesystem::path dir_;
  int fd_ = -1;
  std::atomic<bool> hit_{false};
  std::thread thread_;
};

}  // namespace

TEST_CASE("disk cache: a writer whose temporary file is removed before the rename writes again") {
  // The remover must win the race once: the entry is large, so that writing and syncing it
  // take longer than one inotify wake-up. Tried a few times in case it loses.
  bool exercised = false;
  for (int round = 0; round < 5 && !exercised; ++round) {
    TempDir dir("concurrent_clear_" + std::to_string(round));
    const DiskCache disk(dir.path);
    const compiler::AuthKey auth = dir_key(disk);  // made before the remover watches
    const compiler::CacheKey key = compiler::make_cache_key({{"data", "retry"}, {"round", std::to_string(round)}});
    const compiler::DiskEntry entry{key, "", {}, "", std::string(16 << 20, 'x')};
    {
      FirstTemporaryRemover remover(dir.path);
      CHECK_NOTHROW(disk.write(entry, auth));
      exercised = remover.hit();  // it has acted: it saw the first temporary file's creation
    }
    if (!exercised) continue;
    const compiler::DecodeResult r = DiskCache::read_file(disk.entry_path(key.hash), &auth);
    REQUIRE(r.status == compiler::EntryStatus::Ok);
    CHECK(r.entry->object_code == entry.object_code);
  }
  if (!exercised) MESSAGE("the remover never won the race with the writer: the retry was not exercised");
}

TEST_CASE("disk cache: clear leaves a young temporary file and removes an old one") {
  TempDir dir("clear_temporaries");
  FakeCache c(dir.path);
  const std::filesystem::path young = dir.path / ".0123456789abcdef0123456789abcdef.lsjitk.tmp.1.young";
  const std::filesystem::path old = dir.path / ".0123456789abcdef0123456789abcdef.lsjitk.tmp.1.old";
  std::ofstream(young) << "being written";
  std::ofstream(old) << "abandoned";
  std::filesystem::last_write_time(old, std::filesystem::file_time_type::clock::now() -
                                            compiler::kTemporaryFileLifetime - std::chrono::minutes(1));
  const DiskCache disk(dir.path);
  const DiskCache::RemoveResult r = disk.clear();
  CHECK(r.removed == 1);
  CHECK(std::filesystem::exists(young));
  CHECK_FALSE(std::filesystem::exists(old));
  // gc follows the same rule.
  std::ofstream(old) << "abandoned";
  std::filesystem::last_write_time(old, std::filesystem::file_time_type::clock::now() - std::chrono::hours(2));
  CHECK(disk.gc(0).removed == 1);
  CHECK(std::filesystem::exists(young));
}

}  // namespace lsjit::cache_testing
