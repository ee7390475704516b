// HugePageAllocator: large arrays are 2 MiB-aligned (so the kernel can back them with huge
// pages), small ones are ordinary, and both behave as std::vector storage.
#include <doctest/doctest.h>

#include <cstdint>
#include <numeric>

#include "lsjit/runtime/huge_page_allocator.h"

using lsjit::detail::BigVector;
using lsjit::detail::kHugePageBytes;
using lsjit::detail::kHugePageThreshold;

TEST_CASE("HugePageAllocator aligns large arrays to 2 MiB and keeps small ones ordinary") {
  BigVector<double> large(kHugePageBytes / sizeof(double) + 3, 1.5);
  CHECK(reinterpret_cast<uintptr_t>(large.data()) % kHugePageBytes == 0);
  CHECK(std::accumulate(large.begin(), large.end(), 0.0) == 1.5 * static_cast<double>(large.size()));

  // From the threshold on, below a huge page too.
  BigVector<char> quarter(kHugePageThreshold, 'q');
  CHECK(reinterpret_cast<uintptr_t>(quarter.data()) % kHugePageBytes == 0);
  CHECK(quarter.back() == 'q');

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
