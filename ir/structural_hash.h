// The structural hash of a trace: the part of a kernel's cache key that comes from the
// cost itself. It covers exactly what docs/architecture.md ("Traced versus static") calls
// static: the op graph with every captured constant (by bit pattern), the variable types
// with their ambient and tangent dimensions, the data slot types and shapes, the residual
// dimension, the cost kind and the stage. It leaves out everything that is a runtime input (variable IDs and values,
// data values, instance counts) and everything cosmetic (the cost's and slots' names).
// Node ids are assigned in trace order, so the hash is deterministic and the same across
// processes.
#pragma once

#include "lsjit/ir/graph.h"
#include "lsjit/ir/stable_hash.h"

namespace lsjit::ir {

Hash128 structural_hash(const Trace& trace);

}  // namespace lsjit::ir
