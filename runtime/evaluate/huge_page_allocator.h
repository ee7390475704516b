// An allocator for the runtime's large arrays (H's values, the gather lists, per-instance
// buffers) that asks Linux for transparent huge pages.
//
// Why: these arrays are megabytes (hundreds of them at 10^6 observations) and are written
// once per analyze() or solve() into fresh memory, then swept every iteration in scattered
// order. With 4 KiB pages every first touch is a page fault, which under virtualization
// costs several microseconds, and the sweeps miss the TLB. Where the kernel's
// transparent_hugepage mode is "madvise" (Debian's default), only memory that asks
// (madvise(MADV_HUGEPAGE)) gets 2 MiB pages; under "always" it changes nothing, under
// "never" (or on other systems) the hint is ignored and the memory is ordinary.
//
// Contract: allocations of at least kHugePageThreshold come from 2 MiB-aligned, advised
// memory, aligned to kHugePageAlignment; smaller ones come from operator new. Up to
// kSharedChunkLimit they are carved, one after another, from a shared 2 MiB chunk, which is
// freed when its last allocation is (the chunk being carved is reused from its start
// instead); larger ones get their own whole huge pages, their size rounded up to 2 MiB.
// Why shared chunks: a set-up makes dozens of arrays of 32 KiB to 2 MiB (the problem's rows
// and data, H's pattern, the gather offsets, the Schur structure). With 4 KiB pages each of
// their pages is a fault, several times the cost per byte of faulting in a whole 2 MiB
// page, and with a huge page each they would fault and clear 2 MiB apiece. Deallocation
// must get the same n (std::vector does).
// Thread-safe; stateless: every instance compares equal.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace lsjit::detail {

inline constexpr size_t kHugePageBytes = size_t{2} << 20;
inline constexpr size_t kHugePageThreshold = size_t{32} << 10;
inline constexpr size_t kSharedChunkLimit = kHugePageBytes / 2;
inline constexpr size_t kHugePageAlignment = 64;

// The raw functions behind the allocator (runtime/evaluate/huge_page_allocator.cpp).
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

// Allocator `Base` (HugePageAllocator<T>, std::allocator<T>, ...) except that
// value-initialization (vector(n), resize(n)) leaves elements default-initialized: trivial
// types are not written. For buffers whose every element is written before it is read,
// where zeroing first would be a wasted pass over fresh memory (BlockSparseSymmetric::
// uninitialized: Ladybug-49's H is 7.5 MB; the incremental factor's panels). Other
// constructions (copies, assign(n, value)) write as usual.
template <typename Base>
struct DefaultInit : Base {
  template <typename U>
  struct rebind {
    using other = DefaultInit<typename std::allocator_traits<Base>::template rebind_alloc<U>>;
  };
  DefaultInit() = default;
  template <typename B>
  DefaultInit(const DefaultInit<B>& other) : Base(other) {}
  template <typename U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

template <typename T>
using DefaultInitHugePageAllocator = DefaultInit<HugePageAllocator<T>>;

// A BigVector that resize() does not zero (DefaultInitHugePageAllocator).
template <typename T>
using BigBuffer = std::vector<T, DefaultInitHugePageAllocator<T>>;

}  // namespace lsjit::detail
