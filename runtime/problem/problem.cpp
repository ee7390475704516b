// Problem's special members, and add()'s work that does not depend on the cost's type
// (problem.h): compiled once here instead of in every translation unit that adds a cost.
#include "lsjit/runtime/problem.h"

#include <algorithm>
#include <atomic>
#include <string>
#include <utility>

namespace lsjit {

uint64_t detail::next_cost_identity() {
  static std::atomic<uint64_t> last{0};
  return last.fetch_add(1, std::memory_order_relaxed) + 1;
}

Problem::Problem() = default;
Problem::~Problem() = default;
// A moved-from Problem is an empty one, as a moved-from std::vector is: its instance
// count goes with its groups, so it never reports instances it no longer holds.
Problem::Problem(Problem&& other) noexcept { *this = std::move(other); }
Problem& Problem::operator=(Problem&& other) noexcept {
  if (this == &other) return *this;
  groups_ = std::exchange(other.groups_, {});
  by_identity_ = std::exchange(other.by_identity_, {});
  constant_ = std::exchange(other.constant_, {});
  instances_ = std::exchange(other.instances_, 0);
  return *this;
}

size_t Problem::instance_count(const std::string& cost, const bool* is_batch, const size_t* lengths,
                               size_t arguments) {
  size_t n = 1, first_batch = arguments;
  for (size_t a = 0; a < arguments; ++a) {
    if (!is_batch[a]) continue;
    if (lengths[a] == 0)
      throw Error("lsjit::Problem::add(" + cost + "): argument " + std::to_string(a + 1) + " is an empty batch");
    if (first_batch == arguments) {
      first_batch = a;
      n = lengths[a];
    } else if (lengths[a] != n) {
      throw Error("lsjit::Problem::add(" + cost + "): batches of different lengths: argument " +
                  std::to_string(first_batch + 1) + " has " + std::to_string(n) + " entries, argument " +
                  std::to_string(a + 1) + " has " + std::to_string(lengths[a]));
    }
  }
  return n;
}

detail::CostGroup* Problem::group_with_identity(const std::string& identity) {
  const auto it = by_identity_.find(identity);
  return it == by_identity_.end() ? nullptr : groups_[it->second].get();
}

detail::CostGroup& Problem::new_group(const std::string& name, std::string identity,
                                      std::function<ir::Trace()> trace) {
  auto g = std::make_unique<detail::CostGroup>();
  g->name = name;
  g->identity = std::move(identity);
  g->trace = std::move(trace);
  if (!g->identity.empty()) by_identity_.emplace(g->identity, groups_.size());
  groups_.push_back(std::move(g));
  return *groups_.back();
}

double* Problem::append_instances(detail::CostGroup& g, size_t n, uint32_t stride, const Loss* loss) {
  g.data_stride = stride;
  const size_t first = g.data.size();
  g.data.resize(first + n * stride);
  if (loss || !g.losses.empty()) {
    g.losses.resize(g.instances, TrivialLoss());
    g.losses.insert(g.losses.end(), n, loss ? *loss : TrivialLoss());
  }
  g.instances += n;
  instances_ += n;
  return g.data.data() + first;
}

void Problem::add_runtime(const RuntimeCost& cost, const std::vector<std::span<const int64_t>>& ids,
                          const std::vector<RuntimeDataSlot>& data, size_t n, const Loss* loss) {
  const std::string where = "lsjit::Problem::add(" + cost.name + "): ";
  if (n == 0) throw Error(where + "no instances (an empty batch)");
  if (ids.size() != cost.var_types.size() || ids.empty())
    throw Error(where + "expected " + std::to_string(cost.var_types.size()) + " variable arguments, got " +
                std::to_string(ids.size()));
  for (size_t slot = 0; slot < ids.size(); ++slot)
    if (ids[slot].size() != n && ids[slot].size() != 1)
      throw Error(where + "variable argument " + std::to_string(slot + 1) + " has " + std::to_string(ids[slot].size()) +
                  " IDs, expected " + std::to_string(n) + " (or 1, shared)");
  size_t stride = 0;
  for (size_t k = 0; k < data.size(); ++k) {
    const size_t size = size_t{data[k].rows} * data[k].cols;
    if (size == 0 || (data[k].values.size() != n * size && data[k].values.size() != size))
      throw Error(where + "data argument " + std::to_string(k + 1) + " has " + std::to_string(data[k].values.size()) +
                  " values, expected " + std::to_string(n) + " instances of " + std::to_string(size) +
                  " (or one, shared)");
    stride += size;
  }
  if (stride != cost.data_stride)
    throw Error(where + "the data arguments hold " + std::to_string(stride) + " values per instance, the cost " +
                std::to_string(cost.data_stride));
  if (loss && cost.kind != CostKind::LeastSquares)
    throw Error(where + "a robust loss applies to least-squares costs, not constraints");

  detail::CostGroup* g = cost.identity.empty() ? nullptr : group_with_identity(cost.identity);
  if (!g) {
    g = &new_group(cost.name, cost.identity, cost.trace);
    g->var_types = cost.var_types;
    g->ids.resize(cost.var_types.size());
  }
  for (size_t slot = 0; slot < ids.size(); ++slot) {
    auto& to = g->ids[slot];
    if (ids[slot].size() == n) to.insert(to.end(), ids[slot].begin(), ids[slot].end());
    else to.insert(to.end(), n, ids[slot][0]);
  }
  double* rows = append_instances(*g, n, cost.data_stride, loss);
  size_t offset = 0;
  for (const RuntimeDataSlot& d : data) {
    const size_t r = d.rows, c = d.cols, size = r * c;
    const bool shared = d.values.size() != n * size;
    for (size_t i = 0; i < n; ++i) {
      const double* from = d.values.data() + (shared ? 0 : i * size);
      double* to = rows + i * cost.data_stride + offset;
      if (!d.row_major || c == 1 || r == 1) std::copy(from, from + size, to);
      else
        for (size_t col = 0; col < c; ++col)
          for (size_t row = 0; row < r; ++row) to[col * r + row] = from[row * c + col];
    }
    offset += size;
  }
}

}  // namespace lsjit
