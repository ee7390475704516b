// A 128-bit hash that is the same in every process, on every run and build: it hashes
// explicit integers and bytes in the order they are fed (no pointers, no container
// iteration order, no std::hash). Not cryptographic; collisions between different static
// keys are made unlikely by the width, and the cache (compiler/) also stores and compares
// the readable key parts, so a collision is detected rather than trusted.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace lsjit {

struct Hash128 {
  uint64_t hi = 0, lo = 0;
  bool operator==(const Hash128&) const = default;
  std::string hex() const;  // 32 lowercase hex digits
};

class StableHasher {
 public:
  void add(uint64_t v);
  void add(std::string_view bytes);  // length-prefixed, so ("ab","c") != ("a","bc")
  void add_double(double v);         // by bit pattern: -0 != +0, NaN payloads differ
  Hash128 finish() const;

 private:
  uint64_t a_ = 0x9e3779b97f4a7c15ull;
  uint64_t b_ = 0xc2b2ae3d27d4eb4full;
  uint64_t count_ = 0;
};

}  // namespace lsjit
