// HugePageAllocator: large arrays are 2 MiB-aligned (so the kernel can back them with huge
// pages), middle-sized ones share 2 MiB chunks, small ones are ordinary, and all behave as
// std::vector storage.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <set>
#include <thread>
#include <vector>

#include "lsjit/runtime/evaluate/huge_page_allocator.h"

using lsjit::detail::BigVector;
using lsjit::detail::kHugePageAlignment;
using lsjit::detail::kHugePageBytes;
using lsjit::detail::kHugePageThreshold;
using lsjit::detail::kSharedChunkLimit;

namespace {

uintptr_t chunk_of(const void* p) { return reinterpret_cast<uintptr_t>(p) & ~(uintptr_t{kHugePageBytes} - 1); }

// Fills each array with its own number, then checks that none was written by another.
bool each_holds_its_number(std::vector<BigVector<int32_t>>& arrays) {
  for (size_t k = 0; k < arrays.size(); ++k) std::fill(arrays[k].begin(), arrays[k].end(), static_cast<int32_t>(k));
  for (size_t k = 0; k < arrays.size(); ++k)
    if (std::any_of(arrays[k].begin(), arrays[k].end(), [&](int32_t x) { return x != static_cast<int32_t>(k); }))
      return false;
  return true;
}

}  // namespace

TEST_CASE("HugePageAllocator aligns large arrays to 2 MiB and keeps small ones ordinary") {
  BigVector<double> large(kHugePageBytes / sizeof(double) + 3, 1.5);
  CHECK(reinterpret_cast<uintptr_t>(large.data()) % kHugePageBytes == 0);
  CHECK(std::accumulate(large.begin(), large.end(), 0.0) == 1.5 * static_cast<double>(large.size()));

  // From the threshold on, below a huge page too: carved from a chunk, cache-line aligned.
  BigVector<char> shared(kHugePageThreshold, 'q');
  CHECK(reinterpret_cast<uintptr_t>(shared.data()) % kHugePageAlignment == 0);
  CHECK(shared.back() == 'q');

  BigVector<double> small(100, 2.0);
  CHECK(reinterpret_cast<uintptr_t>(small.data()) % alignof(double) == 0);
  CHECK(small.back() == 2.0);

  // Growing across the threshold and back moves the contents between the two kinds.
  BigVector<int64_t> v;
  for (int64_t i = 0; i < static_cast<int64_t>(kHugePageBytes / sizeof(int64_t)) * 2; ++i) v.push_back(i);
  CHECK(v[12345] == 12345);
  CHECK(v.back() == static_cast<int64_t>(v.size()) - 1);
  v.resize(10);
  v.shrink_to_fit();
  CHECK(v[9] == 9);

  CHECK_THROWS_AS(large.get_allocator().allocate(static_cast<size_t>(-1) / 4), std::bad_alloc);
}

TEST_CASE("HugePageAllocator carves middle-sized arrays from shared chunks, apart, and reuses them") {
  // Eight arrays of 200 KiB (1.6 MiB) take at most two chunks, not a huge page each.
  constexpr size_t kInts = 200 * 1024 / sizeof(int32_t);
  std::vector<BigVector<int32_t>> arrays;
  for (int k = 0; k < 8; ++k) arrays.emplace_back(kInts);
  std::set<uintptr_t> chunks;
  for (const auto& a : arrays) {
    CHECK(reinterpret_cast<uintptr_t>(a.data()) % kHugePageAlignment == 0);
    chunks.insert(chunk_of(a.data()));
    // Wholly inside its chunk, after the chunk's header.
    CHECK(chunk_of(a.data() + a.size() - 1) == chunk_of(a.data()));
    CHECK(reinterpret_cast<uintptr_t>(a.data()) != chunk_of(a.data()));
  }
  CHECK(chunks.size() <= 2);
  CHECK(each_holds_its_number(arrays));

  // Freed in any order and allocated again, in sizes up to the limit: never overlapping.
  for (int round = 0; round < 3; ++round) {
    for (size_t k = round % 2; k < arrays.size(); k += 2) arrays[k] = {};
    for (size_t k = round % 2; k < arrays.size(); k += 2)
      arrays[k].resize(kHugePageThreshold / sizeof(int32_t) + (k * 37 + round * 101) % (kSharedChunkLimit / 8));
    CHECK(each_holds_its_number(arrays));
  }
  // At the limit a chunk is shared; above it an array has its own huge pages.
  BigVector<char> at_limit(kSharedChunkLimit), above(kSharedChunkLimit + 1);
  CHECK(reinterpret_cast<uintptr_t>(at_limit.data()) % kHugePageBytes != 0);
  CHECK(reinterpret_cast<uintptr_t>(above.data()) % kHugePageBytes == 0);
}

TEST_CASE("HugePageAllocator's chunks are shared safely between threads") {
  auto work = [](int32_t seed, bool* ok) {
    for (int round = 0; round < 50; ++round) {
      std::vector<BigVector<int32_t>> arrays;
      for (int k = 0; k < 4; ++k) arrays.emplace_back(kHugePageThreshold / sizeof(int32_t) + (seed * 13 + k * 7 + round) % 4096);
      for (size_t k = 0; k < arrays.size(); ++k)
        std::fill(arrays[k].begin(), arrays[k].end(), seed * 100 + static_cast<int32_t>(k));
      for (size_t k = 0; k < arrays.size(); ++k)
        for (int32_t x : arrays[k])
          if (x != seed * 100 + static_cast<int32_t>(k)) *ok = false;
    }
  };
  bool ok[2] = {true, true};
  std::thread a(work, 1, &ok[0]), b(work, 2, &ok[1]);
  a.join();
  b.join();
  CHECK(ok[0]);
  CHECK(ok[1]);
}
