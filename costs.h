// <lsjit/costs.h>: what a translation unit needs to write costs and add them to a
// lsjit::Problem, and nothing of analyze(), solve(), the file readers or the built-in
// problems: lsjit::cost and Cost::named, the tracer scalar Sym with its math and Eigen
// support, the variable handles and Lie groups, robust losses, the standard cost helpers
// (angle_axis_rotate, ...) and Problem with add() and set_constant().
//
// Why: a program's cost translation units are where compile time goes (each cost's trace
// is instantiated where it is added), and they need none of the solver. The translation
// unit that calls problem.analyze() includes <lsjit/lsjit.h>. Measured beside
// ceres/ceres.h by tools/bench/header_bench.sh (docs/benchmarks.md).
#pragma once

#include "lsjit/ir/sym_eigen.h"
#include "lsjit/runtime/cost.h"
#include "lsjit/runtime/lie/lie.h"
#include "lsjit/runtime/loss.h"
#include "lsjit/runtime/problem.h"
#include "lsjit/runtime/standard_costs.h"
#include "lsjit/runtime/variables.h"
