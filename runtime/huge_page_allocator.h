// An allocator for the runtime's large arrays (H's values, the gather lists, per-instance
// buffers) that asks Linux for transparent huge pages.
//
// Why: these arrays are megabytes (hundreds of them at 10^6 observations) and are written
// once per analyze() or solve() into fresh memory, then swept every iteration in scattered
// order. With 4 KiB pages every first touch is a page fault, which under virtualization
// costs several microseconds (measured on the project's KVM machine: 14% of a Ladybug-49
// solve, 7.5 ms for one 7.5 MB H), and the sweeps miss the TLB. Where the kernel's
// transparent_hugepage mode is "madvise" (Debian's default), only memory that asks
// (madvise(MADV_HUGEPAGE)) gets 2 MiB pages; under "always" it changes nothing, under
// "never" (or on other systems) the hint is ignored and the memory is ordinary.
//
// Contract: allocations of at least kHugePageThreshold (a quarter of a huge page) are 2
// MiB-aligned, their size rounded up to a multiple of 2 MiB, and advised; smaller ones come
// from operator new. The threshold trades memory for time: an array of 512 KiB that takes a
// whole huge page wastes 1.5 MiB, but its 128 page faults would cost about 1.5 ms on the
// project's machine (12 µs each, against 0.2 ms to fault and clear one 2 MiB page).
// Deallocation must get the same n (std::vector does). Stateless: every instance compares equal.
#pragma once

#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace lsjit::detail {

inline constexpr size_t kHugePageBytes = size_t{2} << 20;
inline constexpr size_t kHugePageThreshold = kHugePageBytes / 4;

// The raw functions behind the allocator (runtime/huge_page_allocator.cpp).
void* allocate_huge(size_t bytes);               // throws std::bad_alloc
void deallocate_huge(void* p, size_t bytes) noexcept;

template <typename T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}

  T* allocate(size_t n) {
    if (n > static_cast<size_t>(-1) / sizeof(T)) throw std::bad_alloc();
    return static_cast<T*>(allocate_huge(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) noexcept { deallocate_huge(p, n * sizeof(T)); }

  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const { return true; }
};

// A std::vector whose storage is huge-page backed when large.
template <typename T>
using BigVector = std::vector<T, HugePageAllocator<T>>;

// As HugePageAllocator, except that value-initialization (vector(n), resize(n)) leaves
// elements default-initialized: trivial types are not written. For buffers whose every
// element is written before it is read, where zeroing first would be a wasted pass over
// fresh memory (BlockSparseSymmetric::uninitialized: Ladybug-49's H is 7.5 MB). Other
// constructions (copies, assign(n, value)) write as usual.
template <typename T>
struct DefaultInitHugePageAllocator : HugePageAllocator<T> {
  DefaultInitHugePageAllocator() = default;
  template <typename U>
  DefaultInitHugePageAllocator(const DefaultInitHugePageAllocator<U>&) {}
  template <typename U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

// A BigVector that resize() does not zero (DefaultInitHugePageAllocator).
template <typename T>
using BigBuffer = std::vector<T, DefaultInitHugePageAllocator<T>>;

}  // namespace lsjit::detail
