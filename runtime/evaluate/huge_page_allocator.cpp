#include "lsjit/runtime/evaluate/huge_page_allocator.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <new>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

namespace lsjit::detail {
namespace {

// Under AddressSanitizer a chunk's memory is poisoned except the allocations carved from it,
// each followed by a redzone, so that reading past one is caught as it is for operator new.
#if defined(__SANITIZE_ADDRESS__)
constexpr size_t kRedzone = kHugePageAlignment;
void poison(void* p, size_t bytes) { ASAN_POISON_MEMORY_REGION(p, bytes); }
void unpoison(void* p, size_t bytes) { ASAN_UNPOISON_MEMORY_REGION(p, bytes); }
#else
constexpr size_t kRedzone = 0;
void poison(void*, size_t) {}
void unpoison(void*, size_t) {}
#endif

size_t rounded(size_t bytes, size_t unit) { return (bytes + unit - 1) / unit * unit; }

// Whole huge pages: 2 MiB-aligned, advised. nullptr when out of memory.
char* map_huge(size_t size) {
  void* p = std::aligned_alloc(kHugePageBytes, size);
#ifdef MADV_HUGEPAGE
  // A hint: failure (an old kernel, THP compiled out) leaves ordinary pages, which is fine.
  if (p != nullptr) madvise(p, size, MADV_HUGEPAGE);
#endif
  return static_cast<char*>(p);
}

// The shared chunks (header comment). A chunk begins with its count of live allocations;
// `current` is the one being carved, `used` its bytes taken, header included.
struct Chunks {
  static constexpr size_t kHeader = 64;
  std::mutex mutex;
  char* current = nullptr;
  size_t used = 0;
  static size_t& live(char* chunk) { return *reinterpret_cast<size_t*>(chunk); }
};

// Never destroyed: a static BigVector elsewhere may be freed after this file's statics.
Chunks& chunks() {
  static Chunks* c = new Chunks;
  return *c;
}

void* carve(size_t bytes) {
  const size_t need = rounded(bytes, kHugePageAlignment) + kRedzone;
  Chunks& c = chunks();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (c.current == nullptr || c.used + need > kHugePageBytes) {
    char* fresh = map_huge(kHugePageBytes);
    if (fresh == nullptr) throw std::bad_alloc();
    Chunks::live(fresh) = 0;
    poison(fresh + Chunks::kHeader, kHugePageBytes - Chunks::kHeader);
    // The chunk given up stays until its last allocation is freed (it has one: an empty
    // current chunk is carved from its start, where any request fits).
    c.current = fresh;
    c.used = Chunks::kHeader;
  }
  void* p = c.current + c.used;
  c.used += need;
  ++Chunks::live(c.current);
  unpoison(p, bytes);
  return p;
}

void uncarve(void* p, size_t bytes) {
  Chunks& c = chunks();
  char* chunk = reinterpret_cast<char*>(reinterpret_cast<uintptr_t>(p) & ~(uintptr_t{kHugePageBytes} - 1));
  std::lock_guard<std::mutex> lock(c.mutex);
  poison(p, bytes);
  if (--Chunks::live(chunk) != 0) return;
  if (chunk == c.current) {
    c.used = Chunks::kHeader;  // carved again from the start: its pages are already there
  } else {
    unpoison(chunk, kHugePageBytes);  // back to the C library whole
    std::free(chunk);
  }
}

}  // namespace

void* allocate_huge(size_t bytes) {
  if (bytes < kHugePageThreshold) return ::operator new(bytes == 0 ? 1 : bytes);
  if (bytes <= kSharedChunkLimit) return carve(bytes);
  const size_t size = rounded(bytes, kHugePageBytes);
  if (size < bytes) throw std::bad_alloc();
  char* p = map_huge(size);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

void deallocate_huge(void* p, size_t bytes) noexcept {
  if (p == nullptr) return;
  if (bytes < kHugePageThreshold) {
    ::operator delete(p);
  } else if (bytes <= kSharedChunkLimit) {
    uncarve(p, bytes);
  } else {
    std::free(p);
  }
}

}  // namespace lsjit::detail
