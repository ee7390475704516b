// The public entry point: #include <lsjit/lsjit.h>.
#pragma once

#include "lsjit/ir/differentiate.h"
#include "lsjit/ir/graph.h"
#include "lsjit/ir/interpreter.h"
#include "lsjit/ir/printer.h"
#include "lsjit/ir/structural_hash.h"
#include "lsjit/ir/sym_eigen.h"
#include "lsjit/runtime/builtin_costs.h"
#include "lsjit/runtime/cost.h"
#include "lsjit/runtime/io/bal.h"
#include "lsjit/runtime/io/g2o.h"
#include "lsjit/runtime/io/synthetic.h"
#include "lsjit/runtime/lie/lie.h"
#include "lsjit/runtime/pose_graph_problem.h"
#include "lsjit/runtime/problem.h"
#include "lsjit/runtime/standard_costs.h"
#include "lsjit/runtime/variables.h"
