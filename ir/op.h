// The scalar operations of the lsjit IR and their static properties.
//
// Every op has one row in kOpTable (op.cpp): its text name (used by the printer and
// parser), its arity, the type of its result and of its arguments, and whether it is
// commutative. Passes consult the table instead of switching on ops wherever a property,
// not a behaviour, is needed. The numeric meaning of each op is in eval_op.h, the single
// definition shared by constant folding and the reference interpreter.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace lsjit::ir {

enum class Type : uint8_t { F64, Bool };

enum class Op : uint8_t {
  // leaves
  Const,  // f64 constant, or a bool constant (value 0 or 1) when typed Bool
  Input,  // a runtime input: variable component, data component or tangent component
  // f64 arithmetic
  Add, Sub, Mul, Div, Neg,
  Sqrt, Cbrt, Exp, Expm1, Log, Log1p,
  Pow,   // pow(a, b)
  Powi,  // pow(a, n) with n an integer attribute of the node
  Sin, Cos, Tan, Asin, Acos, Atan, Atan2,
  Sinh, Cosh, Tanh,
  Abs, Hypot, Floor, Ceil, Fmod, Min, Max,
  Select,  // select(bool c, f64 a, f64 b)
  // comparisons: f64 x f64 -> bool
  Lt, Le, Gt, Ge, Eq, Ne,
  // boolean logic
  And, Or, Not,
  // fma(a, b, c) = a·b + c rounded once. Traces never contain it: fuse_multiply_add.h
  // makes it from a single-use product, so that the compiled kernel and tier 0 fuse the
  // same products (last in the enum, so no other op's code changes).
  Fma,
  kCount
};

struct OpInfo {
  Op op;
  std::string_view name;
  uint8_t arity;
  Type result;
  Type args[3];
  bool commutative;
};

const OpInfo& info(Op op);
inline std::string_view name(Op op) { return info(op).name; }
std::optional<Op> op_from_name(std::string_view name);
std::string_view type_name(Type type);

constexpr int kNumOps = static_cast<int>(Op::kCount);

}  // namespace lsjit::ir
