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
                          std::span<const double> data, size_t n, const Loss* loss) {
  const std::string where = "lsjit::Problem::add(" + cost.name + "): ";
  if (n == 0) throw Error(where + "no instances (an empty batch)");
  if (ids.size() != cost.var_types.size() || ids.empty())
    throw Error(where + "expected " + std::to_string(cost.var_types.size()) + " variable arguments, got " +
                std::to_string(ids.size()));
  for (size_t slot = 0; slot < ids.size(); ++slot)
    if (ids[slot].size() != n)
      throw Error(where + "variable argument " + std::to_string(slot + 1) + " has " + std::to_string(ids[slot].size()) +
                  " IDs, expected " + std::to_string(n));
  if (data.size() != n * size_t{cost.data_stride})
    throw Error(where + "expected " + std::to_string(n * size_t{cost.data_stride}) + " data values (" +
                std::to_string(n) + " instances of " + std::to_string(cost.data_stride) + "), got " +
                std::to_string(data.size()));
  if (loss && cost.kind != CostKind::LeastSquares)
    throw Error(where + "a robust loss applies to least-squares costs, not constraints");

  detail::CostGroup* g = cost.identity.empty() ? nullptr : group_with_identity(cost.identity);
  if (!g) {
    g = &new_group(cost.name, cost.identity, cost.trace);
    g->var_types = cost.var_types;
    g->ids.resize(cost.var_types.size());
  }
  for (size_t slot = 0; slot < ids.size(); ++slot)
    g->ids[slot].insert(g->ids[slot].end(), ids[slot].begin(), ids[slot].end());
  double* rows = append_instances(*g, n, cost.data_stride, loss);
  std::copy(data.begin(), data.end(), rows);
}

}  // namespace lsjit
