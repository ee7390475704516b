#include "lsjit/runtime/huge_page_allocator.h"

#include <sys/mman.h>

#include <cstdlib>

namespace lsjit::detail {
namespace {

size_t rounded(size_t bytes) { return (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes; }

}  // namespace

void* allocate_huge(size_t bytes) {
  if (bytes < kHugePageThreshold) return ::operator new(bytes == 0 ? 1 : bytes);
  const size_t size = rounded(bytes);
  if (size < bytes) throw std::bad_alloc();
  void* p = std::aligned_alloc(kHugePageBytes, size);
  if (p == nullptr) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  // A hint: failure (an old kernel, THP compiled out) leaves ordinary pages, which is fine.
  madvise(p, size, MADV_HUGEPAGE);
#endif
  return p;
}

void deallocate_huge(void* p, size_t bytes) noexcept {
  if (p == nullptr) return;
  if (bytes < kHugePageThreshold) {
    ::operator delete(p);
    return;
  }
  std::free(p);
}

}  // namespace lsjit::detail
