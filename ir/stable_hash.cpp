#include "lsjit/ir/stable_hash.h"

#include <bit>
#include <cstdio>

namespace lsjit {
namespace {

// The splitmix64 / murmur3 finalizer: a bijection with good avalanche.
uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

}  // namespace

std::string Hash128::hex() const {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(hi),
                static_cast<unsigned long long>(lo));
  return buf;
}

void StableHasher::add(uint64_t v) {
  ++count_;
  a_ = mix64(a_ ^ v) + 0x632be59bd9b4e019ull;
  b_ = mix64(b_ + std::rotl(v, 23) * 0x9e3779b97f4a7c15ull) ^ a_;
}

void StableHasher::add(std::string_view bytes) {
  add(static_cast<uint64_t>(bytes.size()));
  uint64_t word = 0;
  int n = 0;
  for (unsigned char c : bytes) {
    word |= static_cast<uint64_t>(c) << (8 * n);
    if (++n == 8) {
      add(word);
      word = 0;
      n = 0;
    }
  }
  if (n > 0) add(word);
}

void StableHasher::add_double(double v) { add(std::bit_cast<uint64_t>(v)); }

Hash128 StableHasher::finish() const {
  return {mix64(a_ ^ mix64(count_)), mix64(b_ + a_ + count_)};
}

}  // namespace lsjit
