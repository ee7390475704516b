// Pass 1 of analyze(): trace each cost group once, and merge the groups whose traces are
// identical (the same structural hash and signature), so that one kernel serves them all.
//
// Why merge: a Problem groups instances by the cost object they were added with, but two
// cost objects (or two add() sites of one lambda) often trace to the same graph; one
// group per graph means one kernel call per graph and fewer, larger instance ranges.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lsjit/ir/graph.h"
#include "lsjit/runtime/analyze/problem_layout.h"
#include "lsjit/runtime/problem.h"

namespace lsjit::detail {

// One traced graph and the recorded groups that share it, in the order they were added.
struct TracedGroup {
  ir::Trace traced;
  std::string hash;  // ir::structural_hash(traced), hex
  double trace_s = 0;
  std::vector<const CostGroup*> parts;
};

// Traces every group, adds the time to layout.trace_s, and returns the merged groups in
// the order of their first part. Throws lsjit::Error for a cost with no variable or more
// than kMaxSlots, and for more than 65535 groups. The CostGroups must outlive the result.
std::vector<TracedGroup> trace_groups(const std::vector<std::unique_ptr<CostGroup>>& groups,
                                      ProblemLayout& layout);

// Writes every stage of `group`'s trace to LSJIT_DUMP_DIR when it is set, one file per
// stage: <cost>-<first 12 hex digits of the structural hash>.<stage>.ir. A failure to
// write is reported once per process and otherwise ignored: dumping never breaks a solve.
void dump_trace(const TracedGroup& group);

}  // namespace lsjit::detail
