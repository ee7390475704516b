// Random valid inputs for each built-in cost: Lie groups from exp of a random tangent,
// cameras in front of their points with BAL-like intrinsics, curve-fit data in range.
#pragma once

#include <random>

#include "random_inputs.h"
#include "lsjit/ir/graph.h"
#include "lsjit/ir/interpreter.h"

namespace lsjit::testing {

inline ir::InputValues inputs_for(const lsjit::ir::Trace& t, std::mt19937_64& rng) {
  ir::InputValues in = random_inputs(t.signature, rng);
  if (t.signature.name == "snavely_reprojection") {
    // A camera ~10 units behind the points along +z (Snavely cameras look down -z), with
    // a focal length and small distortion as in BAL files.
    std::uniform_real_distribution<double> u(-1, 1);
    auto& cam = in.vars[0];
    for (int i = 0; i < 3; ++i) cam[i] = 0.3 * u(rng);
    cam[3] = u(rng);
    cam[4] = u(rng);
    cam[5] = -10 + u(rng);
    cam[6] = 500 + 50 * u(rng);
    cam[7] = 1e-3 * u(rng);
    cam[8] = 1e-5 * u(rng);
    in.data[0] = {30 * u(rng), 30 * u(rng)};
  }
  if (t.signature.name == "curve_fit") {
    std::uniform_real_distribution<double> u(0, 1);
    in.vars = {{0.3 * u(rng)}, {0.1 * u(rng)}};
    in.data = {{5 * u(rng)}, {2 * u(rng)}};
  }
  return in;
}

}  // namespace lsjit::testing
