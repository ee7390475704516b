#include "lsjit/runtime/values.h"

#include <algorithm>
#include <cmath>

namespace lsjit {

size_t Values::size() const {
  size_t n = 0;
  for (const auto& [name, block] : blocks_) n += block.ids.size();
  return n;
}

const double* Values::params(std::string_view type, int64_t id) const {
  const auto b = blocks_.find(type);
  if (b == blocks_.end()) return nullptr;
  const auto r = b->second.row.find(id);
  if (r == b->second.row.end()) return nullptr;
  return b->second.params.data() + r->second * b->second.type->ambient;
}

void Values::check_value(const VariableType& type, int64_t id, const double* params) {
  // docs/variables.md: SO3 is qx qy qz qw, SE3 is tx ty tz qx qy qz qw.
  const int quaternion_at = type.name == "SO3" ? 0 : type.name == "SE3" ? 3 : -1;
  if (quaternion_at < 0) return;
  const double* q = params + quaternion_at;
  std::string problem;
  if (!std::all_of(q, q + 4, [](double x) { return std::isfinite(x); }))
    problem = "a non-finite quaternion";
  else if (std::all_of(q, q + 4, [](double x) { return x == 0.0; }))
    problem = "a zero quaternion";
  else
    return;
  std::string numbers;
  for (int k = 0; k < 4; ++k) numbers += (k ? " " : "") + std::to_string(q[k]);
  throw Error("lsjit::Values: " + type.name + " variable " + std::to_string(id) + " has " +
              problem + " (qx qy qz qw = " + numbers + "): expected a rotation");
}

void Values::set_params(const VariableType* type, int64_t id, const double* params) {
  Block& b = blocks_[type->name];
  if (!b.type) b.type = type;
  const size_t ambient = static_cast<size_t>(type->ambient);
  const auto [it, inserted] = b.row.try_emplace(id, b.ids.size());
  if (inserted) {
    b.ids.push_back(id);
    b.params.resize(b.params.size() + ambient);
  }
  std::copy(params, params + ambient, b.params.begin() + static_cast<ptrdiff_t>(it->second * ambient));
}

void Values::for_each(
    const std::function<void(const VariableType&, int64_t, const double*)>& f) const {
  for (const auto& [name, b] : blocks_)
    for (size_t r = 0; r < b.ids.size(); ++r) f(*b.type, b.ids[r], b.params.data() + r * b.type->ambient);
}

}  // namespace lsjit
