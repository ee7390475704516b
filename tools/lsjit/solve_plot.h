// `lsjit solve FILE --plot FILE.svg`: from a pose graph and its solve to the picture of
// plot_svg.h. The graph panels show the x-y positions of the poses (3D graphs projected on
// the x-y plane, which the subtitle says); the cost panel the cost after each iteration
// (SolveSummary::per_iteration).
#pragma once

#include <string>

#include "lsjit/runtime/analyzed_problem.h"
#include "lsjit/runtime/io/bal.h"
#include "lsjit/runtime/io/g2o.h"
#include "plot_svg.h"

namespace lsjit::cli {

// `before`: the graph the solve started from (as read, or after `--init chordal`). The after panel shows `result.values` when the solve is
// usable, else the initial estimate again, and its heading says so. `name`: the input
// file's name for the title.
SolvePlot make_solve_plot(const std::string& name, const io::PoseGraph& before, const SolveResult& result);

// Writes solve_plot_svg(make_solve_plot(...)) to `svg_path` as every output is written
// (io::detail::AtomicFileWriter); lsjit::Error "PATH: cannot write: REASON" if it cannot.
void write_solve_plot(const std::string& svg_path, const std::string& name, const io::PoseGraph& before,
                      const SolveResult& result);

// `lsjit solve FILE.bal --plot FILE.svg`: each observation's reprojection error ‖r‖ in
// pixels (the residual before any loss, AnalyzedProblem::evaluate_instances with the
// Residual kernels the solve used) at `initial` and at the result (the initial values
// again, and a heading that says so, when the solve is not usable), and the cost per
// iteration. `bal` gives the counts for the subtitle.
BundlePlot make_bundle_plot(const std::string& name, const io::BalProblem& bal, const AnalyzedProblem& analyzed,
                            const Values& initial, const SolveResult& result);
void write_bundle_plot(const std::string& svg_path, const std::string& name, const io::BalProblem& bal,
                       const AnalyzedProblem& analyzed, const Values& initial, const SolveResult& result);

}  // namespace lsjit::cli
