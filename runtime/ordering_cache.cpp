#include "lsjit/runtime/ordering_cache.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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

std::string encode(const linear::SupernodalAnalysis& a) {
  std::string out;
  out.reserve(4 * (a.ordered_blocks.size() + 1));
  put_u32(out, a.ordering == SupernodalOrdering::Amd ? 1 : 2);
  for (const int b : a.ordered_blocks) put_u32(out, static_cast<uint32_t>(b));
  return out;
}

struct Decoded {
  SupernodalOrdering chosen = SupernodalOrdering::Amd;
  std::vector<int> ordered_blocks;
};

// The ordering in `bytes` if they are one for `num_blocks` blocks; else nullopt and `why`.
// The size is checked before anything is allocated.
std::optional<Decoded> decode(std::string_view bytes, int num_blocks, std::string& why) {
  const size_t n = static_cast<size_t>(num_blocks);
  if (bytes.size() != 4 * (n + 1)) {
    why = std::to_string(bytes.size()) + " bytes, expected " + std::to_string(4 * (n + 1)) +
          " for " + std::to_string(n) + " blocks";
    return std::nullopt;
  }
  Decoded d;
  const uint32_t kind = get_u32(bytes, 0);
  if (kind != 1 && kind != 2) {
    why = "ordering code " + std::to_string(kind) + ", expected 1 (amd) or 2 (nested_dissection)";
    return std::nullopt;
  }
  d.chosen = kind == 1 ? SupernodalOrdering::Amd : SupernodalOrdering::NestedDissection;
  d.ordered_blocks.resize(n);
  for (size_t k = 0; k < n; ++k) d.ordered_blocks[k] = static_cast<int>(get_u32(bytes, 4 * (k + 1)));
  if (std::string problem = linear::block_permutation_problem(d.ordered_blocks, num_blocks); !problem.empty()) {
    why = problem + ": not a permutation";  // (an index past INT_MAX shows as negative)
    return std::nullopt;
  }
  return d;
}

}  // namespace

compiler::CacheKey ordering_cache_key(const linear::BlockPattern& p, SupernodalOrdering requested) {
  return compiler::make_cache_key({
      {"data", "block_ordering"},
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
  const compiler::CacheKey key = ordering_cache_key(pattern, ordering);
  std::optional<Decoded> decoded;
  const std::optional<std::string> bytes = cache->read_data(key, [&](std::string_view data) {
    std::string why;
    decoded = decode(data, pattern.num_blocks(), why);
    return why;
  });
  if (bytes && decoded)
    return std::make_shared<const linear::SupernodalAnalysis>(
        linear::analyze_supernodal(pattern, decoded->chosen, std::move(decoded->ordered_blocks)));
  auto analysis = std::make_shared<const linear::SupernodalAnalysis>(linear::analyze_supernodal(pattern, ordering));
  cache->store_data(key, encode(*analysis));
  return analysis;
}

}  // namespace lsjit::detail
