// The numeric meaning of every IR op on doubles: the one definition that constant folding
// and the reference interpreter share, and that the JIT must reproduce. Booleans are the
// doubles 0.0 and 1.0. Each op follows the C library function of the same name
// (fmin/fmax for min/max, so NaN-ignoring and commutative); powi is pow with an integer
// exponent; fma is C fma (one rounding).
#pragma once

#include <cmath>
#include <stdexcept>

#include "lsjit/ir/op.h"

namespace lsjit::ir {

inline double eval_op(Op op, double a, double b, double c, int int_attr) {
  switch (op) {
    case Op::Add: return a + b;
    case Op::Sub: return a - b;
    case Op::Mul: return a * b;
    case Op::Div: return a / b;
    case Op::Neg: return -a;
    case Op::Sqrt: return std::sqrt(a);
    case Op::Cbrt: return std::cbrt(a);
    case Op::Exp: return std::exp(a);
    case Op::Expm1: return std::expm1(a);
    case Op::Log: return std::log(a);
    case Op::Log1p: return std::log1p(a);
    case Op::Pow: return std::pow(a, b);
    case Op::Powi: return std::pow(a, static_cast<double>(int_attr));
    case Op::Sin: return std::sin(a);
    case Op::Cos: return std::cos(a);
    case Op::Tan: return std::tan(a);
    case Op::Asin: return std::asin(a);
    case Op::Acos: return std::acos(a);
    case Op::Atan: return std::atan(a);
    case Op::Atan2: return std::atan2(a, b);
    case Op::Sinh: return std::sinh(a);
    case Op::Cosh: return std::cosh(a);
    case Op::Tanh: return std::tanh(a);
    case Op::Abs: return std::fabs(a);
    case Op::Hypot: return std::hypot(a, b);
    case Op::Floor: return std::floor(a);
    case Op::Ceil: return std::ceil(a);
    case Op::Fmod: return std::fmod(a, b);
    case Op::Min: return std::fmin(a, b);
    case Op::Max: return std::fmax(a, b);
    case Op::Select: return a != 0.0 ? b : c;
    case Op::Lt: return a < b ? 1.0 : 0.0;
    case Op::Le: return a <= b ? 1.0 : 0.0;
    case Op::Gt: return a > b ? 1.0 : 0.0;
    case Op::Ge: return a >= b ? 1.0 : 0.0;
    case Op::Eq: return a == b ? 1.0 : 0.0;
    case Op::Ne: return a != b ? 1.0 : 0.0;
    case Op::And: return (a != 0.0 && b != 0.0) ? 1.0 : 0.0;
    case Op::Or: return (a != 0.0 || b != 0.0) ? 1.0 : 0.0;
    case Op::Not: return a != 0.0 ? 0.0 : 1.0;
    case Op::Fma: return std::fma(a, b, c);
    case Op::Const:
    case Op::Input:
    case Op::kCount: break;
  }
  throw std::logic_error("lsjit::ir::eval_op: op has no numeric meaning");
}

}  // namespace lsjit::ir
