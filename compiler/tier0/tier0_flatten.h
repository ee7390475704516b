// Flattening a kernel's graph into tier 0's steps (tier0.h): the one pass between a mode
// graph and a Tier0Kernel.
//
// Every live node becomes a step over registers (columns of Tier0Kernel::kBlock doubles),
// taken from a free list and given back after the value's last use, so that scratch is the
// most values live at once, not the graph's size. With `segments` (a CPU that runs
// tier0_x86.h's code), maximal runs of segment_op() nodes become Segment steps instead, the
// loads of each variable slot and of the data come first as LoadRows steps, and the stores
// close the list, an output array whose every offset is stored as one StoreArray step.
// Constants live in the segments' pool unless a step reads them or they are stored.
#pragma once

#include <cstdint>
#include <vector>

#include "lsjit/compiler/tier0/tier0.h"
#include "lsjit/compiler/tier0/tier0_x86.h"
#include "lsjit/ir/graph.h"

namespace lsjit::compiler {

struct Tier0Program {
  std::vector<Tier0Kernel::Step> steps;
  std::vector<Tier0Kernel::RowLoad> rows;      // LoadRows' tables, by Step::a
  std::vector<Tier0Kernel::ArrayStore> arrays;  // StoreArray's tables, by Step::a
  std::vector<Segment> segments;               // by Step::c of Segment steps
  std::vector<double> segment_constants;       // what the segments' Constant refs index
  uint32_t registers = 0;                      // columns the steps use
};

// `graph`: executed_graph()'s; `stores`: per node, the places its value is stored to;
// `options`: the compiled kernel's (they choose the math functions). Throws lsjit::Error
// for a graph with tangent inputs or a math function tier 0 cannot find.
Tier0Program flatten_for_tier0(const ir::Graph& graph, const KernelLayout& layout, const CompileOptions& options,
                               const std::vector<std::vector<KernelLayout::Place>>& stores, bool segments);

}  // namespace lsjit::compiler
