#include "lsjit/runtime/analyze/ordering_cache.h"

#include <bit>
#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <type_traits>
#include <vector>

#include "lsjit/common/error.h"

namespace lsjit::detail {

using linear::SupernodalOrdering;

namespace {

void put_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint32_t get_u32(std::string_view bytes, size_t at) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
  return v;
}

void put_u64(std::string& out, uint64_t v) {
  put_u32(out, static_cast<uint32_t>(v));
  put_u32(out, static_cast<uint32_t>(v >> 32));
}

uint64_t get_u64(std::string_view bytes, size_t at) {
  return get_u32(bytes, at) | static_cast<uint64_t>(get_u32(bytes, at + 4)) << 32;
}

void put_f64(std::string& out, double v) { put_u64(out, std::bit_cast<uint64_t>(v)); }
double get_f64(std::string_view bytes, size_t at) { return std::bit_cast<double>(get_u64(bytes, at)); }

constexpr size_t kHeaderBytes = 4 + 8 + 8 + 4 + 4;

// The entry of the header comment, or "" when a count does not fit its u32.
std::string encode(const linear::SupernodalStructure& s) {
  const size_t ns = s.supernode_begin.size() - 1;
  if (s.below.size() > UINT32_MAX || s.block_perm.size() > UINT32_MAX) return "";
  std::string out;
  out.reserve(kHeaderBytes + 4 * (s.block_perm.size() + 2 * (ns + 1) + s.below.size()));
  put_u32(out, s.ordering == SupernodalOrdering::Amd ? 1 : 2);
  put_f64(out, s.factor_nonzeros);
  put_f64(out, s.factorization_flops);
  put_u32(out, static_cast<uint32_t>(ns));
  put_u32(out, static_cast<uint32_t>(s.below.size()));
  for (const int b : s.block_perm) put_u32(out, static_cast<uint32_t>(b));
  for (const int b : s.supernode_begin) put_u32(out, static_cast<uint32_t>(b));
  for (const int64_t e : s.below_begin) put_u32(out, static_cast<uint32_t>(e));
  for (const int b : s.below) put_u32(out, static_cast<uint32_t>(b));
  return out;
}

// The structure in `bytes` if their size is that of one for `num_blocks` blocks; else
// nullopt and `why`. The size is checked before anything is allocated; what the numbers
// mean is analyze_supernodal's to check. (An index past INT_MAX reads as negative.)
std::optional<linear::SupernodalStructure> decode(std::string_view bytes, int num_blocks, std::string& why) {
  const uint64_t n = static_cast<uint64_t>(num_blocks);
  if (bytes.size() < kHeaderBytes + 4 * (n + 2)) {
    why = std::to_string(bytes.size()) + " bytes, fewer than a structure of " + std::to_string(n) +
          " blocks takes";
    return std::nullopt;
  }
  const uint32_t kind = get_u32(bytes, 0);
  if (kind != 1 && kind != 2) {
    why = "ordering code " + std::to_string(kind) + ", expected 1 (amd) or 2 (nested_dissection)";
    return std::nullopt;
  }
  const uint64_t ns = get_u32(bytes, 20), below = get_u32(bytes, 24);
  const uint64_t expected = kHeaderBytes + 4 * (n + 2 * (ns + 1) + below);
  if (ns > n || bytes.size() != expected) {
    why = std::to_string(bytes.size()) + " bytes, expected " + std::to_string(expected) + " for " +
          std::to_string(n) + " blocks in " + std::to_string(ns) + " supernodes with " +
          std::to_string(below) + " blocks below";
    return std::nullopt;
  }
  linear::SupernodalStructure s;
  s.ordering = kind == 1 ? SupernodalOrdering::Amd : SupernodalOrdering::NestedDissection;
  s.factor_nonzeros = get_f64(bytes, 4);
  s.factorization_flops = get_f64(bytes, 12);
  size_t at = kHeaderBytes;
  auto read = [&](auto& v, uint64_t count) {  // block indices as int, offsets unsigned
    using T = typename std::decay_t<decltype(v)>::value_type;
    v.resize(count);
    for (T& x : v) {
      const uint32_t u = get_u32(bytes, at);
      x = std::is_same_v<T, int> ? static_cast<T>(static_cast<int>(u)) : static_cast<T>(u);
      at += 4;
    }
  };
  read(s.block_perm, n);
  read(s.supernode_begin, ns + 1);
  read(s.below_begin, ns + 1);
  read(s.below, below);
  return s;
}

}  // namespace

compiler::CacheKey structure_cache_key(const linear::BlockPattern& p, SupernodalOrdering requested) {
  return compiler::make_cache_key({
      {"data", "supernodal_structure"},
      {"provenance", linear::ordering_provenance()},
      {"ordering", linear::supernodal_ordering_name(requested)},
      {"blocks", std::to_string(p.num_blocks())},
      {"stored_blocks", std::to_string(p.num_stored_blocks())},
      {"pattern", p.structure_hash().hex()},
  });
}

std::shared_ptr<const linear::SupernodalAnalysis> cached_supernodal_analysis(
    const linear::BlockPattern& pattern, SupernodalOrdering ordering, compiler::KernelCache* cache) {
  // A small pattern (AMD orders it in less time than a read takes), or no directory to
  // keep anything in: nothing worth a key.
  if (cache == nullptr || pattern.num_blocks() < kMinCachedBlocks || !cache->disk_directory())
    return std::make_shared<const linear::SupernodalAnalysis>(linear::analyze_supernodal(pattern, ordering));
  const compiler::CacheKey key = structure_cache_key(pattern, ordering);
  std::shared_ptr<const linear::SupernodalAnalysis> analysis;
  (void)cache->read_data(key, [&](std::string_view data) {
    std::string why;
    std::optional<linear::SupernodalStructure> structure = decode(data, pattern.num_blocks(), why);
    if (!structure) return why;
    try {
      analysis = std::make_shared<const linear::SupernodalAnalysis>(linear::analyze_supernodal(pattern, *structure));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  });
  if (analysis) return analysis;
  analysis = std::make_shared<const linear::SupernodalAnalysis>(linear::analyze_supernodal(pattern, ordering));
  if (!cache->data_worth_storing(key)) return analysis;  // a pattern that keeps changing
  if (std::string bytes = encode(linear::supernodal_structure(*analysis)); !bytes.empty())
    cache->store_data(key, std::move(bytes));
  return analysis;
}

}  // namespace lsjit::detail
