#include "lsjit/compiler/cache/linked_kernels.h"

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "lsjit/common/error.h"

namespace lsjit::compiler {
namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::pair<uint64_t, uint64_t>, const LinkedKernel*> by_hash;
};

// Never destroyed: kernels found here may run until the process exits.
Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}

std::vector<std::pair<std::string, std::string>> parts_of(const LinkedKernel& k) {
  std::vector<std::pair<std::string, std::string>> parts;
  parts.reserve(k.part_count);
  for (uint32_t i = 0; i < k.part_count; ++i) parts.emplace_back(k.parts[2 * i], k.parts[2 * i + 1]);
  return parts;
}

bool same_parts(const LinkedKernel& k, const CacheKey& key) {
  if (key.parts.size() != k.part_count) return false;
  for (uint32_t i = 0; i < k.part_count; ++i)
    if (key.parts[i].first != k.parts[2 * i] || key.parts[i].second != k.parts[2 * i + 1]) return false;
  return true;
}

// The entry's key, after checking that its pointers are there and its id and symbol agree
// with its parts. `where` names the entry in errors.
CacheKey checked_key(const LinkedKernel& k, const std::string& where) {
  if (!k.id || !k.symbol || !k.function || (k.part_count > 0 && !k.parts))
    throw Error(where + " has a null id, symbol, function or parts pointer");
  for (uint32_t i = 0; i < 2 * k.part_count; ++i)
    if (!k.parts[i]) throw Error(where + " has a null key part");
  CacheKey key = make_cache_key(parts_of(k));
  if (key.id() != k.id)
    throw Error(where + " has the id " + k.id + ", but its key parts hash to " + key.id() +
                ": the table was changed after `lsjit cache export` wrote it");
  if (kernel_symbol(key) != k.symbol)
    throw Error(where + " names the symbol " + k.symbol + " instead of " + kernel_symbol(key));
  return key;
}

}  // namespace

size_t register_linked_kernels(const LinkedKernel* table, size_t count) {
  if (count > 0 && !table) throw Error("register_linked_kernels: a null table of " + std::to_string(count) + " kernels");
  std::vector<CacheKey> keys;
  keys.reserve(count);
  for (size_t i = 0; i < count; ++i)
    keys.push_back(checked_key(table[i], "linked kernel " + std::to_string(i) + " of " + std::to_string(count)));

  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  for (size_t i = 0; i < count; ++i) {  // check every entry before adding any
    auto it = r.by_hash.find({keys[i].hash.hi, keys[i].hash.lo});
    if (it != r.by_hash.end() && !same_parts(*it->second, keys[i]))
      throw Error("linked kernel " + keys[i].id() + " is registered twice with different key parts");
  }
  size_t added = 0;
  for (size_t i = 0; i < count; ++i)
    added += r.by_hash.emplace(std::pair{keys[i].hash.hi, keys[i].hash.lo}, &table[i]).second;
  return added;
}

const LinkedKernel* find_linked_kernel(const CacheKey& key) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  if (r.by_hash.empty()) return nullptr;
  auto it = r.by_hash.find({key.hash.hi, key.hash.lo});
  return it != r.by_hash.end() && same_parts(*it->second, key) ? it->second : nullptr;
}

size_t linked_kernel_count() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  return r.by_hash.size();
}

}  // namespace lsjit::compiler
