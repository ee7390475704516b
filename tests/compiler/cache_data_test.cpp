// KernelCache's data entries (read_data, store_data): what a solve derives from a problem's
// structure, kept beside the kernels under the same authentication.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "cache_test_support.h"
#include "lsjit/compiler/cache/cache_key.h"

namespace lsjit::cache_testing {
namespace {

using compiler::CacheKey;
using compiler::DiskCache;

CacheKey data_key(const std::string& value) {
  return compiler::make_cache_key({{"data", "test_blob"}, {"value", value}});
}

std::string accept(std::string_view) { return ""; }

TEST_CASE("data entries: stored by one cache, read by the next - not kernels") {
  TempDir dir("data_round_trip");
  const CacheKey key = data_key("a");
  CHECK(compiler::is_data_key(key));
  {
    FakeCache c(dir.path);
    CHECK_FALSE(c->read_data(key, accept).has_value());  // nothing yet: a miss, silent
    c->store_data(key, std::string("\x01\x02\x00\xff", 4));
    CHECK(c->stats().disk_writes == 1);
    CHECK(c->stats().data_hits == 0);
    CHECK(c.log.str().empty());
  }
  FakeCache c2(dir.path);
  const std::optional<std::string> bytes = c2->read_data(key, accept);
  REQUIRE(bytes.has_value());
  CHECK(*bytes == std::string("\x01\x02\x00\xff", 4));
  CHECK(c2->stats().data_hits == 1);
  CHECK(c2->stats().disk_hits == 0);  // kernels only
  CHECK(c2.counters->compiles == 0);
  CHECK_FALSE(c2->read_data(data_key("b"), accept).has_value());  // another key: a miss
  CHECK(c2.log.str().empty());

  // On disk it is an ordinary entry: authenticated, listed, collected by gc.
  const DiskCache disk(dir.path);
  const compiler::AuthKey auth = dir_key(disk);
  const compiler::DecodeResult r = DiskCache::read_file(disk.entry_path(key.hash), &auth);
  REQUIRE(r.status == compiler::EntryStatus::Ok);
  CHECK(r.entry->key == key);
  CHECK(r.entry->symbol.empty());
  CHECK(r.entry->ir_text.empty());
  CHECK(disk.list().size() == 1);
  CHECK(disk.gc(0).removed == 1);
}

TEST_CASE("data entries: only data keys - a kernel's key is refused") {
  TempDir dir("data_kernel_key");
  FakeCache c(dir.path);
  const CacheKey kernel_key = c->key_for(trace_scaled(2.0), compiler::KernelMode::Residual);
  CHECK_FALSE(compiler::is_data_key(kernel_key));
  CHECK_THROWS_AS(c->store_data(kernel_key, "x"), std::invalid_argument);
  CHECK_THROWS_AS((void)c->read_data(kernel_key, accept), std::invalid_argument);
  CHECK(DiskCache(dir.path).list().empty());
}

TEST_CASE("data entries: damaged / unauthenticated / rejected data is warned about once and not used") {
  const CacheKey key = data_key("a");
  for (const Damage& d : entry_damages()) {
    CAPTURE(d.name);
    TempDir dir(std::string("data_bad_") + d.tag);
    { FakeCache(dir.path)->store_data(key, "payload"); }
    const fs::path path = DiskCache(dir.path).entry_path(key.hash);
    std::string bytes = read_bytes(path);
    d.apply(bytes);
    write_bytes(path, bytes);
    FakeCache c(dir.path);
    CHECK_FALSE(c->read_data(key, accept).has_value());
    CHECK_FALSE(c->read_data(key, accept).has_value());
    const std::string log = c.log.str();
    CAPTURE(log);
    CHECK(count_lines(log, "kernel cache entry " + path.string()) == 1);  // once per process
    CHECK(log.find(d.expect) != std::string::npos);
    CHECK(c->stats().bad_disk_entries == 2);
    CHECK(c->stats().data_hits == 0);
    // The caller computes the data again and stores it: replaced, and read silently.
    c->store_data(key, "payload");
    FakeCache c2(dir.path);
    CHECK(c2->read_data(key, accept) == std::optional<std::string>("payload"));
    CHECK(c2.log.str().empty());
  }

  // Written under another key file (another user's, or a replaced one): never used.
  {
    TempDir dir("data_other_key");
    { FakeCache(dir.path)->store_data(key, "payload"); }
    write_bytes(dir / std::string(compiler::kAuthKeyFileName), std::string(compiler::kAuthKeySize, '\x5a'));
    FakeCache c(dir.path);
    CHECK_FALSE(c->read_data(key, accept).has_value());
    CHECK(c.log.str().find("is unauthenticated") != std::string::npos);
  }

  // Authenticated, but the reader's check refuses the bytes: warned with its reason.
  TempDir dir("data_rejected");
  { FakeCache(dir.path)->store_data(key, "payload"); }
  FakeCache c(dir.path);
  CHECK_FALSE(c->read_data(key, [](std::string_view b) { return "saw " + std::to_string(b.size()) + " bytes"; })
                  .has_value());
  CHECK(c.log.str().find("holds unusable data (saw 7 bytes)") != std::string::npos);
  CHECK(c->stats().data_hits == 0);
}

TEST_CASE("data entries: a tiered cache writes in the background - wait_for_background waits for it") {
  TempDir dir("data_background");
  KernelCache::Options o;
  o.tiering = KernelCache::Options::Tiering::Tiered;
  const CacheKey key = data_key("tiered");
  {
    FakeCache c(dir.path, o);
    c->store_data(key, std::string(100000, 'x'));
    c->wait_for_background();
    CHECK(c->stats().disk_writes == 1);
  }
  FakeCache c2(dir.path);
  CHECK(c2->read_data(key, accept) == std::optional<std::string>(std::string(100000, 'x')));
}

TEST_CASE("data entries: a memory-only or tier-0-only cache keeps nothing and touches no directory") {
  for (const bool tier0_only : {false, true}) {
    CAPTURE(tier0_only);
    TempDir dir("data_memory_only");
    KernelCache::Options o;
    if (tier0_only) o.tiering = KernelCache::Options::Tiering::Tier0Only;
    else o.use_disk = false;
    { FakeCache(dir.path)->store_data(data_key("m"), "stored"); }  // what a disk cache left
    const auto before = DiskCache(dir.path).list().size();
    FakeCache c(dir.path, o);
    c->store_data(data_key("n"), "payload");
    CHECK_FALSE(c->read_data(data_key("m"), accept).has_value());
    CHECK_FALSE(c->read_data(data_key("n"), accept).has_value());
    CHECK(DiskCache(dir.path).list().size() == before);
  }
}

}  // namespace
}  // namespace lsjit::cache_testing
