#include "lsjit/runtime/analyze/place_instances.h"

#include <algorithm>
#include <stdexcept>

#include "lsjit/common/error.h"
#include "lsjit/runtime/analyze/id_tables.h"

namespace lsjit::detail {
namespace {

// One recorded part's instances appended to its kernel group.
void append_part(const CostGroup& part, bool robust, const std::vector<RowOfId>& row_of_id, KernelGroup& kg) {
  if (robust) {
    if (part.losses.empty()) kg.losses.insert(kg.losses.end(), part.instances, TrivialLoss());
    else kg.losses.insert(kg.losses.end(), part.losses.begin(), part.losses.end());
  }
  for (size_t s = 0; s < kg.slot_type.size(); ++s) {
    const RowOfId& row_of = row_of_id[kg.slot_type[s]];
    for (int64_t id : part.ids[s]) kg.rows[s].push_back(row_of(id));
  }
  if (part.data_stride != kg.user_data_stride)
    throw std::logic_error("analyze: data stride differs from the kernel layout's");
  if (kg.kind == CostKind::LeastSquares) {
    kg.data.insert(kg.data.end(), part.data.begin(), part.data.end());
  } else {  // room for the multiplier (0) and the penalty (1) after the user's data
    kg.user_data.insert(kg.user_data.end(), part.data.begin(), part.data.end());
    for (size_t i = 0; i < part.instances; ++i) {
      const auto row = part.data.begin() + static_cast<ptrdiff_t>(i * kg.user_data_stride);
      kg.data.insert(kg.data.end(), row, row + kg.user_data_stride);
      kg.data.insert(kg.data.end(), kg.residual_dim, 0.0);
      kg.data.push_back(1.0);
    }
  }
  kg.instances += static_cast<int64_t>(part.instances);
}

}  // namespace

void place_instances(const std::vector<TracedGroup>& groups, ProblemLayout& layout) {
  std::vector<RowOfId> row_of_id;
  row_of_id.reserve(layout.types.size());
  for (const TypeTable& table : layout.types) row_of_id.emplace_back(table.ids);
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    KernelGroup& kg = layout.groups[gi];
    const std::vector<const CostGroup*>& parts = groups[gi].parts;
    kg.rows.resize(kg.slot_type.size());
    size_t group_instances = 0;
    for (const CostGroup* part : parts) group_instances += part->instances;
    for (auto& rows : kg.rows) rows.reserve(group_instances);
    const bool robust =
        std::any_of(parts.begin(), parts.end(), [](const CostGroup* part) { return !part->losses.empty(); });
    for (const CostGroup* part : parts) append_part(*part, robust, row_of_id, kg);
    kg.first_instance = layout.instances;
    layout.instances += kg.instances;
    kg.residual_offset = layout.residual_buffer_size;
    layout.residual_buffer_size += static_cast<uint64_t>(kg.instances) * kg.residual_dim;
    layout.residuals += static_cast<size_t>(kg.instances) * kg.residual_dim;
  }
  if (layout.instances > kMaxInstances)
    throw Error("analyze: " + std::to_string(layout.instances) + " cost instances, more than the " +
                std::to_string(kMaxInstances) + " one problem can hold");
}

}  // namespace lsjit::detail
