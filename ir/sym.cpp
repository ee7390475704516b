#include "lsjit/ir/sym.h"

#include <atomic>
#include <string>

#include "lsjit/ir/verify.h"

namespace lsjit {
namespace {

thread_local Tracer* g_active = nullptr;
std::atomic<uint32_t> g_next_trace_id{1};

// Tracing folds constants and shares identical subexpressions but applies no rewrite
// rule: the traced stage shows what the cost computes, and its structural hash depends
// only on that.
constexpr ir::GraphBuilder::Options kTraceOptions{.fold_constants = true, .rewrite = false};

Tracer& active_or_throw(const char* what) {
  if (g_active == nullptr)
    throw Error(std::string("lsjit::Sym used outside a trace (") + what +
                "): Syms exist only while lsjit traces a cost function; compute with "
                "double outside of it");
  return *g_active;
}

ir::NodeId make(ir::Op op, ir::NodeId a, ir::NodeId b = ir::kNoNode, ir::NodeId c = ir::kNoNode,
                int32_t int_attr = 0) {
  return active_or_throw("operation").builder().make(op, a, b, c, int_attr);
}

Sym unary(ir::Op op, const Sym& x) { return Sym::from_node(make(op, x.node())); }
Sym binary(ir::Op op, const Sym& x, const Sym& y) {
  return Sym::from_node(make(op, x.node(), y.node()));
}
SymBool compare(ir::Op op, const Sym& x, const Sym& y) {
  return SymBool::from_node(make(op, x.node(), y.node()));
}

}  // namespace

Tracer::Tracer(ir::Signature signature)
    : signature_(std::move(signature)),
      builder_(kTraceOptions),
      id_(g_next_trace_id.fetch_add(1)),
      previous_(g_active) {
  // Before becoming the active trace: a throwing constructor runs no destructor.
  ir::verify_signature(signature_, ir::ResidualDim::MayBeZero);
  g_active = this;
  for (uint32_t s = 0; s < signature_.vars.size(); ++s) {
    const ir::VarSlot& v = signature_.vars[s];
    auto& vin = var_inputs_.emplace_back();
    for (uint32_t c = 0; c < v.ambient; ++c)
      vin.push_back(builder_.input({ir::InputKind::Var, s, c}));
    auto& tin = tangent_inputs_.emplace_back();
    for (uint32_t c = 0; c < v.tangent; ++c)
      tin.push_back(builder_.input({ir::InputKind::Tangent, s, c}));
  }
  for (uint32_t s = 0; s < signature_.data.size(); ++s) {
    auto& din = data_inputs_.emplace_back();
    for (uint32_t c = 0; c < signature_.data[s].size(); ++c)
      din.push_back(builder_.input({ir::InputKind::Data, s, c}));
  }
}

Tracer::~Tracer() { g_active = previous_; }

Tracer* Tracer::active() { return g_active; }

static Sym input_sym(const std::vector<std::vector<ir::NodeId>>& inputs, uint32_t slot,
                     uint32_t component, const char* what) {
  if (slot >= inputs.size() || component >= inputs[slot].size())
    throw Error(std::string("lsjit::Tracer: ") + what + " slot " + std::to_string(slot) +
                " component " + std::to_string(component) + " is not in the signature");
  return Sym::from_node(inputs[slot][component]);
}

Sym Tracer::var(uint32_t slot, uint32_t component) const {
  return input_sym(var_inputs_, slot, component, "variable");
}
Sym Tracer::tangent(uint32_t slot, uint32_t component) const {
  return input_sym(tangent_inputs_, slot, component, "tangent");
}
Sym Tracer::data(uint32_t slot, uint32_t component) const {
  return input_sym(data_inputs_, slot, component, "data");
}

void Tracer::set_residual(const std::vector<Sym>& residual) {
  if (signature_.residual_dim != 0 && residual.size() != signature_.residual_dim)
    throw Error("lsjit: cost '" + signature_.name + "' returned " +
                std::to_string(residual.size()) + " residuals, expected " +
                std::to_string(signature_.residual_dim));
  if (residual.empty()) throw Error("lsjit: cost '" + signature_.name + "' returned no residual");
  signature_.residual_dim = static_cast<uint32_t>(residual.size());
  for (uint32_t i = 0; i < residual.size(); ++i) {
    if (!residual[i].is_set())
      throw Error("lsjit: residual " + std::to_string(i) + " of cost '" + signature_.name +
                  "' was never assigned");
    builder_.add_output({ir::OutputRole::Residual, i, 0, 0, residual[i].node()});
  }
}

ir::Trace Tracer::finish() {
  if (finished_) throw std::logic_error("Tracer::finish called twice");
  if (signature_.residual_dim == 0 || builder_.size() == 0)
    throw Error("lsjit: cost '" + signature_.name + "' was traced without a residual");
  finished_ = true;
  ir::Trace trace{signature_, ir::Stage::Traced, builder_.finish()};
  ir::verify(trace);
  return trace;
}

Sym::Sym(double value) {
  Tracer& t = active_or_throw("constant");
  node_ = t.builder().constant(value);
  trace_ = t.id();
}

Sym Sym::from_node(ir::NodeId node) {
  Tracer& t = active_or_throw("from_node");
  Sym s;
  s.node_ = node;
  s.trace_ = t.id();
  return s;
}

ir::NodeId Sym::node() const {
  Tracer& t = active_or_throw("operation");
  if (node_ == ir::kNoNode)
    throw Error("lsjit::Sym used before it was assigned a value (a default-constructed Sym)");
  if (trace_ != t.id())
    throw Error("lsjit::Sym from another trace used in this one: a Sym must not outlive the "
                "trace that made it (do not store Syms in static or captured variables)");
  return node_;
}

SymBool SymBool::from_node(ir::NodeId node) {
  Tracer& t = active_or_throw("from_node");
  SymBool s;
  s.node_ = node;
  s.trace_ = t.id();
  return s;
}

SymBool::SymBool(bool value) {
  Tracer& t = active_or_throw("boolean constant");
  node_ = t.builder().boolean(value);
  trace_ = t.id();
}

ir::NodeId SymBool::node() const {
  Tracer& t = active_or_throw("boolean operation");
  if (trace_ != t.id()) throw Error("lsjit::SymBool from another trace used in this one");
  return node_;
}

Sym& Sym::operator+=(const Sym& o) { return *this = *this + o; }
Sym& Sym::operator-=(const Sym& o) { return *this = *this - o; }
Sym& Sym::operator*=(const Sym& o) { return *this = *this * o; }
Sym& Sym::operator/=(const Sym& o) { return *this = *this / o; }

Sym operator+(const Sym& a, const Sym& b) { return binary(ir::Op::Add, a, b); }
Sym operator-(const Sym& a, const Sym& b) { return binary(ir::Op::Sub, a, b); }
Sym operator*(const Sym& a, const Sym& b) { return binary(ir::Op::Mul, a, b); }
Sym operator/(const Sym& a, const Sym& b) { return binary(ir::Op::Div, a, b); }
Sym operator-(const Sym& a) { return unary(ir::Op::Neg, a); }

SymBool operator<(const Sym& a, const Sym& b) { return compare(ir::Op::Lt, a, b); }
SymBool operator<=(const Sym& a, const Sym& b) { return compare(ir::Op::Le, a, b); }
SymBool operator>(const Sym& a, const Sym& b) { return compare(ir::Op::Gt, a, b); }
SymBool operator>=(const Sym& a, const Sym& b) { return compare(ir::Op::Ge, a, b); }
SymBool operator==(const Sym& a, const Sym& b) { return compare(ir::Op::Eq, a, b); }
SymBool operator!=(const Sym& a, const Sym& b) { return compare(ir::Op::Ne, a, b); }
SymBool operator&&(const SymBool& a, const SymBool& b) {
  return SymBool::from_node(make(ir::Op::And, a.node(), b.node()));
}
SymBool operator||(const SymBool& a, const SymBool& b) {
  return SymBool::from_node(make(ir::Op::Or, a.node(), b.node()));
}
SymBool operator!(const SymBool& a) { return SymBool::from_node(make(ir::Op::Not, a.node())); }

Sym select(const SymBool& cond, const Sym& a, const Sym& b) {
  return Sym::from_node(make(ir::Op::Select, cond.node(), a.node(), b.node()));
}

Sym sqrt(const Sym& x) { return unary(ir::Op::Sqrt, x); }
Sym cbrt(const Sym& x) { return unary(ir::Op::Cbrt, x); }
Sym exp(const Sym& x) { return unary(ir::Op::Exp, x); }
Sym expm1(const Sym& x) { return unary(ir::Op::Expm1, x); }
Sym log(const Sym& x) { return unary(ir::Op::Log, x); }
Sym log1p(const Sym& x) { return unary(ir::Op::Log1p, x); }
Sym pow(const Sym& x, const Sym& y) { return binary(ir::Op::Pow, x, y); }
Sym pow(const Sym& x, int n) { return Sym::from_node(make(ir::Op::Powi, x.node(), ir::kNoNode, ir::kNoNode, n)); }
Sym sin(const Sym& x) { return unary(ir::Op::Sin, x); }
Sym cos(const Sym& x) { return unary(ir::Op::Cos, x); }
Sym tan(const Sym& x) { return unary(ir::Op::Tan, x); }
Sym asin(const Sym& x) { return unary(ir::Op::Asin, x); }
Sym acos(const Sym& x) { return unary(ir::Op::Acos, x); }
Sym atan(const Sym& x) { return unary(ir::Op::Atan, x); }
Sym atan2(const Sym& y, const Sym& x) { return binary(ir::Op::Atan2, y, x); }
Sym sinh(const Sym& x) { return unary(ir::Op::Sinh, x); }
Sym cosh(const Sym& x) { return unary(ir::Op::Cosh, x); }
Sym tanh(const Sym& x) { return unary(ir::Op::Tanh, x); }
Sym abs(const Sym& x) { return unary(ir::Op::Abs, x); }
Sym hypot(const Sym& x, const Sym& y) { return binary(ir::Op::Hypot, x, y); }
Sym floor(const Sym& x) { return unary(ir::Op::Floor, x); }
Sym ceil(const Sym& x) { return unary(ir::Op::Ceil, x); }
Sym fmod(const Sym& x, const Sym& y) { return binary(ir::Op::Fmod, x, y); }
Sym min(const Sym& a, const Sym& b) { return binary(ir::Op::Min, a, b); }
Sym max(const Sym& a, const Sym& b) { return binary(ir::Op::Max, a, b); }

}  // namespace lsjit
