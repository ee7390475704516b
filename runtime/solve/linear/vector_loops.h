// Small loops on vector types that the hand-vectorized passes share (supernodal_kernels,
// blocked_cholesky). Each pass compiles them once per instruction set, inside functions
// with gnu::target attributes: always_inline makes them take the caller's instruction set
// (and its translation unit's floating-point contraction).
#pragma once

#include <cstdint>

namespace lsjit::linear {

// dst[r] −= f · src[r] for r in [0, m), in vectors of V scalars (double or float), then
// the remainder.
template <int V, class T>
[[gnu::always_inline]] inline void subtract_scaled(T* dst, const T* src, T f, int64_t m) {
  typedef T Vec __attribute__((vector_size(V * sizeof(T))));
  int64_t r = 0;
  for (; r + V <= m; r += V) {
    Vec x, y;
    __builtin_memcpy(&x, dst + r, sizeof(Vec));
    __builtin_memcpy(&y, src + r, sizeof(Vec));
    x -= y * f;
    __builtin_memcpy(dst + r, &x, sizeof(Vec));
  }
  for (; r < m; ++r) dst[r] -= f * src[r];
}

}  // namespace lsjit::linear
