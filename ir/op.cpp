#include "lsjit/ir/op.h"

#include <array>
#include <stdexcept>

namespace lsjit::ir {
namespace {

constexpr Type F = Type::F64;
constexpr Type B = Type::Bool;

// Order must follow enum Op; checked below.
constexpr std::array<OpInfo, kNumOps> kOpTable = {{
    {Op::Const, "const", 0, F, {}, false},
    {Op::Input, "input", 0, F, {}, false},
    {Op::Add, "add", 2, F, {F, F}, true},
    {Op::Sub, "sub", 2, F, {F, F}, false},
    {Op::Mul, "mul", 2, F, {F, F}, true},
    {Op::Div, "div", 2, F, {F, F}, false},
    {Op::Neg, "neg", 1, F, {F}, false},
    {Op::Sqrt, "sqrt", 1, F, {F}, false},
    {Op::Cbrt, "cbrt", 1, F, {F}, false},
    {Op::Exp, "exp", 1, F, {F}, false},
    {Op::Expm1, "expm1", 1, F, {F}, false},
    {Op::Log, "log", 1, F, {F}, false},
    {Op::Log1p, "log1p", 1, F, {F}, false},
    {Op::Pow, "pow", 2, F, {F, F}, false},
    {Op::Powi, "powi", 1, F, {F}, false},
    {Op::Sin, "sin", 1, F, {F}, false},
    {Op::Cos, "cos", 1, F, {F}, false},
    {Op::Tan, "tan", 1, F, {F}, false},
    {Op::Asin, "asin", 1, F, {F}, false},
    {Op::Acos, "acos", 1, F, {F}, false},
    {Op::Atan, "atan", 1, F, {F}, false},
    {Op::Atan2, "atan2", 2, F, {F, F}, false},
    {Op::Sinh, "sinh", 1, F, {F}, false},
    {Op::Cosh, "cosh", 1, F, {F}, false},
    {Op::Tanh, "tanh", 1, F, {F}, false},
    {Op::Abs, "abs", 1, F, {F}, false},
    {Op::Hypot, "hypot", 2, F, {F, F}, true},
    {Op::Floor, "floor", 1, F, {F}, false},
    {Op::Ceil, "ceil", 1, F, {F}, false},
    {Op::Fmod, "fmod", 2, F, {F, F}, false},
    {Op::Min, "min", 2, F, {F, F}, true},
    {Op::Max, "max", 2, F, {F, F}, true},
    {Op::Select, "select", 3, F, {B, F, F}, false},
    {Op::Lt, "lt", 2, B, {F, F}, false},
    {Op::Le, "le", 2, B, {F, F}, false},
    {Op::Gt, "gt", 2, B, {F, F}, false},
    {Op::Ge, "ge", 2, B, {F, F}, false},
    {Op::Eq, "eq", 2, B, {F, F}, true},
    {Op::Ne, "ne", 2, B, {F, F}, true},
    {Op::And, "and", 2, B, {B, B}, true},
    {Op::Or, "or", 2, B, {B, B}, true},
    {Op::Not, "not", 1, B, {B}, false},
    {Op::Fma, "fma", 3, F, {F, F, F}, false},
}};

constexpr bool table_in_enum_order() {
  for (int i = 0; i < kNumOps; ++i)
    if (static_cast<int>(kOpTable[i].op) != i) return false;
  return true;
}
static_assert(table_in_enum_order(), "kOpTable rows must follow the order of enum Op");

}  // namespace

const OpInfo& info(Op op) {
  const auto i = static_cast<size_t>(op);
  if (i >= kOpTable.size()) throw std::logic_error("lsjit::ir::info: invalid op");
  return kOpTable[i];
}

std::optional<Op> op_from_name(std::string_view name) {
  for (const OpInfo& row : kOpTable)
    if (row.name == name) return row.op;
  return std::nullopt;
}

std::string_view type_name(Type type) { return type == Type::F64 ? "f64" : "bool"; }

}  // namespace lsjit::ir
