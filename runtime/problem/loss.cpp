#include "lsjit/runtime/loss.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "lsjit/common/error.h"

namespace lsjit {
namespace {

Loss make(Loss::Kind kind, double a) {
  if (!(a >= kMinLossScale && a <= kMaxLossScale)) {
    char value[32];
    std::snprintf(value, sizeof value, "%g", a);
    throw Error("lsjit: the scale of a " + std::string(loss_name(kind)) + " loss must be in [1e-150, 1e150] (its square " +
                "must be a normal double), not " + value);
  }
  return {kind, a};
}

constexpr double kTiny = std::numeric_limits<double>::min();

}  // namespace

Loss HuberLoss(double a) { return make(Loss::Kind::Huber, a); }
Loss SoftLOneLoss(double a) { return make(Loss::Kind::SoftLOne, a); }
Loss CauchyLoss(double a) { return make(Loss::Kind::Cauchy, a); }
Loss ArctanLoss(double a) { return make(Loss::Kind::Arctan, a); }
Loss TukeyLoss(double a) { return make(Loss::Kind::Tukey, a); }

std::string_view loss_name(Loss::Kind kind) {
  switch (kind) {
    case Loss::Kind::Trivial: return "trivial";
    case Loss::Kind::Huber: return "huber";
    case Loss::Kind::SoftLOne: return "soft_l_one";
    case Loss::Kind::Cauchy: return "cauchy";
    case Loss::Kind::Arctan: return "arctan";
    case Loss::Kind::Tukey: return "tukey";
  }
  return "?";
}

// As Ceres' loss_function.cc, ρ' clamped below by the smallest double where Ceres does so
// (so that a far outlier keeps a direction).
void Loss::evaluate(double s, double rho[3]) const {
  const double a = scale, b = a * a;
  switch (kind) {
    case Kind::Trivial:
      rho[0] = s;
      rho[1] = 1.0;
      rho[2] = 0.0;
      return;
    case Kind::Huber:
      if (s > b) {
        const double r = std::sqrt(s);
        rho[0] = 2.0 * a * r - b;
        rho[1] = std::max(kTiny, a / r);
        rho[2] = -rho[1] / (2.0 * s);
      } else {
        rho[0] = s;
        rho[1] = 1.0;
        rho[2] = 0.0;
      }
      return;
    case Kind::SoftLOne: {
      const double sum = 1.0 + s / b;
      const double tmp = std::sqrt(sum);
      rho[0] = 2.0 * b * (tmp - 1.0);
      rho[1] = std::max(kTiny, 1.0 / tmp);
      rho[2] = -(rho[1] / b) / (2.0 * sum);
      return;
    }
    case Kind::Cauchy: {
      const double sum = 1.0 + s / b;
      const double inv = 1.0 / sum;
      rho[0] = b * std::log(sum);
      rho[1] = std::max(kTiny, inv);
      rho[2] = -(inv * inv) / b;
      return;
    }
    case Kind::Arctan: {
      const double sum = 1.0 + s * s / b;
      const double inv = 1.0 / sum;
      rho[0] = a * std::atan2(s, a);
      rho[1] = std::max(kTiny, inv);
      rho[2] = -2.0 * s / b * (inv * inv);
      return;
    }
    case Kind::Tukey:
      if (s <= b) {
        const double value = 1.0 - s / b;
        const double value_sq = value * value;
        rho[0] = b / 3.0 * (1.0 - value_sq * value);
        rho[1] = value_sq;
        rho[2] = -2.0 / b * value;
      } else {
        rho[0] = b / 3.0;
        rho[1] = 0.0;
        rho[2] = 0.0;
      }
      return;
  }
}

namespace detail {

Correction correction(const Loss& loss, double s) {
  double rho[3];
  loss.evaluate(s, rho);
  Correction c{0.5 * rho[0], rho[1], 0.0};
  if (s > 0.0 && rho[2] > 0.0 && rho[1] > 0.0) {
    const double alpha = 1.0 - std::sqrt(1.0 + 2.0 * s * rho[2] / rho[1]);
    c.beta = (2.0 * alpha - alpha * alpha) / s;
  }
  return c;
}

}  // namespace detail

}  // namespace lsjit
