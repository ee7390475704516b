#include "lsjit/runtime/values.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "lsjit/runtime/problem/type_name_clash.h"

namespace lsjit {

size_t Values::size() const {
  size_t n = 0;
  for (const auto& [name, block] : blocks_) n += block.ids.size();
  return n;
}

namespace {

// splitmix64's finalizer: IDs are often consecutive, and the slot is the hash's low bits.
size_t slot_hash(int64_t id) {
  uint64_t z = static_cast<uint64_t>(id) + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return static_cast<size_t>(z ^ (z >> 31));
}

}  // namespace

int64_t Values::Block::find(int64_t id) const {
  if (slots.empty()) return -1;
  const size_t mask = slots.size() - 1;
  for (size_t s = slot_hash(id) & mask;; s = (s + 1) & mask) {
    const uint32_t row = slots[s];
    if (row == 0) return -1;
    if (ids[row - 1] == id) return static_cast<int64_t>(row - 1);
  }
}

void Values::Block::place(size_t row) {
  const size_t mask = slots.size() - 1;
  size_t s = slot_hash(ids[row]) & mask;
  while (slots[s] != 0) s = (s + 1) & mask;
  slots[s] = static_cast<uint32_t>(row + 1);
}

size_t Values::Block::insert(int64_t id) {
  if (const int64_t row = find(id); row >= 0) return static_cast<size_t>(row);
  if (ids.size() >= UINT32_MAX - 1) throw Error("lsjit::Values: more than 2^32 - 2 variables of one type");
  ids.push_back(id);
  params.resize(params.size() + static_cast<size_t>(type->ambient));
  if (2 * ids.size() > slots.size()) {  // grow, and place every row again
    slots.assign(std::max<size_t>(16, 2 * slots.size()), 0);
    for (size_t r = 0; r < ids.size(); ++r) place(r);
  } else {
    place(ids.size() - 1);
  }
  return ids.size() - 1;
}

const double* Values::params(std::string_view type, int64_t id) const {
  const auto b = blocks_.find(type);
  if (b == blocks_.end()) return nullptr;
  const int64_t row = b->second.find(id);
  if (row < 0) return nullptr;
  return b->second.params.data() + row * b->second.type->ambient;
}

Values::TypeRows Values::rows_of(std::string_view type) const {
  const auto b = blocks_.find(type);
  if (b == blocks_.end()) return {};
  return {b->second.ids, b->second.params, b->second.type};
}

void Values::check_value(const VariableType& type, int64_t id, const double* params) {
  // docs/variables.md: SO3 is qx qy qz qw, SE3 is tx ty tz qx qy qz qw; SO2 is cos sin, SE2
  // x y cos sin. Each rotation part is normalized by the solver, so it must not be zero.
  struct Part {
    int at, size;
    const char* what;
    const char* names;
  };
  const Part part = type.layout == "SO3"   ? Part{0, 4, "quaternion", "qx qy qz qw"}
                    : type.layout == "SE3" ? Part{3, 4, "quaternion", "qx qy qz qw"}
                    : type.layout == "SO2" ? Part{0, 2, "rotation (cos, sin)", "cos sin"}
                    : type.layout == "SE2" ? Part{2, 2, "rotation (cos, sin)", "cos sin"}
                                           : Part{-1, 0, "", ""};
  if (part.at < 0) return;
  const double* q = params + part.at;
  std::string problem;
  if (!std::all_of(q, q + part.size, [](double x) { return std::isfinite(x); }))
    problem = std::string("a non-finite ") + part.what;
  else if (std::all_of(q, q + part.size, [](double x) { return x == 0.0; }))
    problem = std::string("a zero ") + part.what;
  else
    return;
  std::string numbers;
  for (int k = 0; k < part.size; ++k) numbers += (k ? " " : "") + std::to_string(q[k]);
  throw Error("lsjit::Values: " + type.name + " variable " + std::to_string(id) + " has " + problem + " (" +
              part.names + " = " + numbers + "): expected a rotation");
}

Values::Block& Values::block_for(const VariableType* type) {
  Block& b = blocks_[type->name];
  if (!b.type) b.type = type;
  if (const std::string clash = detail::type_name_clash(*b.type, *type); !clash.empty())
    throw Error("lsjit::Values: " + clash);
  return b;
}

void Values::set_params(const VariableType* type, int64_t id, const double* params) {
  Block& b = block_for(type);
  const size_t ambient = static_cast<size_t>(b.type->ambient);
  std::copy(params, params + ambient, b.params.begin() + static_cast<ptrdiff_t>(b.insert(id) * ambient));
}

void Values::set_params_rows(const VariableType* type, std::span<const int64_t> ids, const double* params) {
  Block& b = block_for(type);
  const size_t ambient = static_cast<size_t>(b.type->ambient);
  if (std::equal(ids.begin(), ids.end(), b.ids.begin(), b.ids.end())) {
    std::copy(params, params + ids.size() * ambient, b.params.begin());
    return;
  }
  for (size_t k = 0; k < ids.size(); ++k)
    std::copy(params + k * ambient, params + (k + 1) * ambient,
              b.params.begin() + static_cast<ptrdiff_t>(b.insert(ids[k]) * ambient));
}

void Values::for_each(
    const std::function<void(const VariableType&, int64_t, const double*)>& f) const {
  for (const auto& [name, b] : blocks_)
    for (size_t r = 0; r < b.ids.size(); ++r) f(*b.type, b.ids[r], b.params.data() + r * b.type->ambient);
}

}  // namespace lsjit
