// Kernels linked into the program (compiler/cache/linked_kernels.h): found by their full key,
// before disk and compile, under every tiering; tables that do not hash to their ids are
// refused whole.
#include <doctest/doctest.h>

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "cache_test_support.h"
#include "lsjit/common/error.h"
#include "lsjit/compiler/cache/kernel_cache.h"
#include "lsjit/compiler/cache/linked_kernels.h"

using namespace lsjit;
using namespace lsjit::compiler;
using namespace lsjit::cache_testing;

namespace {

// A LinkedKernel table over strings that live as long as the process (the registry keeps
// pointers), as the generated source's constants do.
struct Table {
  std::deque<std::string> strings;
  std::deque<std::vector<const char*>> parts;
  std::vector<LinkedKernel> kernels;

  void add(const CacheKey& key, KernelFn function, const std::string& id, const std::string& symbol) {
    std::vector<const char*>& p = parts.emplace_back();
    for (const auto& [name, value] : key.parts) {
      p.push_back(strings.emplace_back(name).c_str());
      p.push_back(strings.emplace_back(value).c_str());
    }
    kernels.push_back({strings.emplace_back(id).c_str(), p.data(), static_cast<uint32_t>(key.parts.size()),
                       strings.emplace_back(symbol).c_str(), function});
  }
  void add(const CacheKey& key, KernelFn function) { add(key, function, key.id(), kernel_symbol(key)); }
};

// A compiled kernel of `traced`, kept loaded for the rest of the process.
std::shared_ptr<const Kernel> compiled(const ir::Trace& traced, KernelMode mode) {
  static std::vector<std::shared_ptr<const Kernel>> keep;
  KernelCache::Options o;
  o.use_disk = false;
  o.quiet = true;
  KernelCache cache(o);
  keep.push_back(cache.get(traced, mode));
  return keep.back();
}

KernelCache::Options memory_only(KernelCache::Options::Tiering tiering) {
  KernelCache::Options o;
  o.use_disk = false;
  o.quiet = true;
  o.tiering = tiering;
  return o;
}

}  // namespace

TEST_CASE("linked kernels: found by key before any compile, under every tiering") {
  const ir::Trace traced = trace_scaled(7.25, "linked_scaled");
  const auto made = compiled(traced, KernelMode::ResidualJacobian);
  static Table table;
  table.add(made->key, made->function.load());
  const size_t before = linked_kernel_count();
  CHECK(register_linked_kernels(table.kernels.data(), table.kernels.size()) == 1);
  CHECK(linked_kernel_count() == before + 1);
  CHECK(register_linked_kernels(table.kernels.data(), table.kernels.size()) == 0);  // again: skipped

  for (auto tiering : {KernelCache::Options::Tiering::Compiled, KernelCache::Options::Tiering::Tiered,
                       KernelCache::Options::Tiering::Tier0Only}) {
    KernelCache cache(memory_only(tiering));
    const KernelCache::Lookup l = cache.lookup(traced, KernelMode::ResidualJacobian);
    CHECK(l.source == KernelSource::Linked);
    CHECK((l.kernel->function.load() == made->function.load()));
    CHECK(l.kernel->layout.outputs.size() == made->layout.outputs.size());
    const CacheStats s = cache.stats();
    CHECK(s.linked_hits == 1);
    CHECK(s.compiles == 0);
    CHECK(s.misses == 0);
    // Another mode of the same cost was not linked: an ordinary miss.
    CHECK(cache.lookup(traced, KernelMode::Residual).source !=
          KernelSource::Linked);
    cache.wait_for_background();
  }

  // One part different (another scale constant is another structure): not found.
  CacheKey other = made->key;
  other.parts.back().second += "x";
  other = make_cache_key(other.parts);
  CHECK(find_linked_kernel(other) == nullptr);
  CHECK(find_linked_kernel(made->key) == &table.kernels[0]);
}

TEST_CASE("linked kernels: a table whose id, symbol or pointers do not match is refused whole") {
  const auto made = compiled(trace_scaled(9.5, "linked_refused"), KernelMode::Residual);
  const auto good = compiled(trace_scaled(10.5, "linked_refused"), KernelMode::Residual);
  const size_t before = linked_kernel_count();
  auto refused = [&](Table& t, const std::string& message) {
    CAPTURE(message);
    try {
      register_linked_kernels(t.kernels.data(), t.kernels.size());
      FAIL("registered");
    } catch (const Error& e) {
      CHECK(std::string(e.what()).find(message) != std::string::npos);
    }
    CHECK(linked_kernel_count() == before);
    CHECK(find_linked_kernel(good->key) == nullptr);  // its good neighbour was not added either
  };
  static Table wrong_id, wrong_symbol, no_function;
  wrong_id.add(good->key, good->function.load());
  wrong_id.add(made->key, made->function.load(), good->key.id(), kernel_symbol(made->key));
  refused(wrong_id, "but its key parts hash to " + made->key.id());
  wrong_symbol.add(good->key, good->function.load());
  wrong_symbol.add(made->key, made->function.load(), made->key.id(), kernel_symbol(good->key));
  refused(wrong_symbol, "names the symbol " + kernel_symbol(good->key));
  no_function.add(good->key, good->function.load());
  no_function.add(made->key, nullptr);
  refused(no_function, "null id, symbol, function or parts pointer");
  CHECK_THROWS_AS(register_linked_kernels(nullptr, 1), Error);
}
