// lsjit::Sym, the tracer scalar. A cost function written generically over its scalar type
// is called once with Syms; every operation on them appends a node to the graph of the
// active trace (a thread-local Tracer) instead of computing a number.
//
// Contract:
//  - A Sym is a node id plus the id of the trace that made it. Constructing one from a
//    number, or operating on one, needs an active trace on this thread and a Sym of that
//    trace; otherwise lsjit::Error is thrown, naming what went wrong. A default-constructed
//    Sym is "unset" (Eigen creates those); operating on it is an error too.
//  - Comparisons return a SymBool: a traced boolean, combinable with && || ! and usable
//    only through lsjit::select(cond, a, b). Converting a SymBool to bool (an `if`, `while`,
//    `?:`) does not compile: C++ control flow cannot depend on a traced value, exactly as
//    JAX raises ConcretizationTypeError. Use lsjit::select.
//  - Math functions are found by argument-dependent lookup, so generic code written as
//    `using std::sin; sin(x)` works for double and Sym alike.
#pragma once

#include <cstdint>
#include <vector>

#include "lsjit/common/error.h"
#include "lsjit/ir/graph.h"

namespace lsjit {

class Sym;
class SymBool;

namespace detail {
template <class T>
inline constexpr bool always_false = false;
}

// Records one trace. Construction checks the signature (verify_signature: identifier
// names, unique per kind; throws lsjit::Error) and makes it the active trace of this thread (saving any
// previous one, restored on destruction). Inputs are created up front in signature
// order: for each variable slot its ambient components, then its tangent components;
// then each data slot's components.
class Tracer {
 public:
  explicit Tracer(ir::Signature signature);
  ~Tracer();
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  Sym var(uint32_t slot, uint32_t component) const;
  Sym tangent(uint32_t slot, uint32_t component) const;
  Sym data(uint32_t slot, uint32_t component) const;

  // Sets the residual; its length must equal signature().residual_dim unless that is 0, in
  // which case it is set from the residual.
  void set_residual(const std::vector<Sym>& residual);
  const ir::Signature& signature() const { return signature_; }
  ir::Trace finish();

  static Tracer* active();
  uint32_t id() const { return id_; }
  ir::GraphBuilder& builder() { return builder_; }

 private:
  ir::Signature signature_;
  ir::GraphBuilder builder_;
  std::vector<std::vector<ir::NodeId>> var_inputs_, tangent_inputs_, data_inputs_;
  uint32_t id_;
  Tracer* previous_;
  bool finished_ = false;
};

class Sym {
 public:
  Sym() = default;
  Sym(double value);  // NOLINT: implicit, so literals mix with Syms as with doubles
  Sym(int value) : Sym(static_cast<double>(value)) {}  // NOLINT
  Sym(long value) : Sym(static_cast<double>(value)) {}  // NOLINT

  static Sym from_node(ir::NodeId node);  // in the active trace
  ir::NodeId node() const;                // checks that this Sym belongs to the active trace
  bool is_set() const { return node_ != ir::kNoNode; }

  Sym& operator+=(const Sym& o);
  Sym& operator-=(const Sym& o);
  Sym& operator*=(const Sym& o);
  Sym& operator/=(const Sym& o);

 private:
  ir::NodeId node_ = ir::kNoNode;
  uint32_t trace_ = 0;
};

class SymBool {
 public:
  static SymBool from_node(ir::NodeId node);
  SymBool(bool value);  // NOLINT: a constant condition
  ir::NodeId node() const;

  // Reading a traced condition as a C++ bool is not possible: the value is unknown until
  // the kernel runs. This template is instantiated only by such a conversion, so the
  // static_assert fires exactly there.
  template <class T = void>
  explicit operator bool() const {
    static_assert(detail::always_false<T>,
                  "lsjit: a traced comparison (lsjit::SymBool) cannot decide C++ control "
                  "flow such as if/while/?:. Use lsjit::select(cond, a, b) to choose between "
                  "values.");
    return false;
  }

 private:
  SymBool() = default;
  ir::NodeId node_ = ir::kNoNode;
  uint32_t trace_ = 0;
};

// Arithmetic.
Sym operator+(const Sym& a, const Sym& b);
Sym operator-(const Sym& a, const Sym& b);
Sym operator*(const Sym& a, const Sym& b);
Sym operator/(const Sym& a, const Sym& b);
inline Sym operator+(const Sym& a, double b) { return a + Sym(b); }
inline Sym operator-(const Sym& a, double b) { return a - Sym(b); }
inline Sym operator*(const Sym& a, double b) { return a * Sym(b); }
inline Sym operator/(const Sym& a, double b) { return a / Sym(b); }
inline Sym operator+(double a, const Sym& b) { return Sym(a) + b; }
inline Sym operator-(double a, const Sym& b) { return Sym(a) - b; }
inline Sym operator*(double a, const Sym& b) { return Sym(a) * b; }
inline Sym operator/(double a, const Sym& b) { return Sym(a) / b; }
Sym operator-(const Sym& a);
inline Sym operator+(const Sym& a) { return a; }

// Comparisons and logic.
SymBool operator<(const Sym& a, const Sym& b);
SymBool operator<=(const Sym& a, const Sym& b);
SymBool operator>(const Sym& a, const Sym& b);
SymBool operator>=(const Sym& a, const Sym& b);
SymBool operator==(const Sym& a, const Sym& b);
SymBool operator!=(const Sym& a, const Sym& b);
#define LSJIT_SYM_COMPARE_WITH_DOUBLE(OP)                                       \
  inline SymBool operator OP(const Sym& a, double b) { return a OP Sym(b); }   \
  inline SymBool operator OP(double a, const Sym& b) { return Sym(a) OP b; }
LSJIT_SYM_COMPARE_WITH_DOUBLE(<)
LSJIT_SYM_COMPARE_WITH_DOUBLE(<=)
LSJIT_SYM_COMPARE_WITH_DOUBLE(>)
LSJIT_SYM_COMPARE_WITH_DOUBLE(>=)
LSJIT_SYM_COMPARE_WITH_DOUBLE(==)
LSJIT_SYM_COMPARE_WITH_DOUBLE(!=)
#undef LSJIT_SYM_COMPARE_WITH_DOUBLE
SymBool operator&&(const SymBool& a, const SymBool& b);
SymBool operator||(const SymBool& a, const SymBool& b);
SymBool operator!(const SymBool& a);

// select(cond, a, b): a where cond holds, else b. The traced analogue of `cond ? a : b`
// (jnp.where). Both a and b are computed; derivatives flow through the chosen one.
Sym select(const SymBool& cond, const Sym& a, const Sym& b);
inline double select(bool cond, double a, double b) { return cond ? a : b; }
template <class T>
T select(bool cond, const T& a, const T& b) {
  return cond ? a : b;
}

// Math functions (ADL).
Sym sqrt(const Sym& x);
Sym cbrt(const Sym& x);
Sym exp(const Sym& x);
Sym expm1(const Sym& x);
Sym log(const Sym& x);
Sym log1p(const Sym& x);
Sym pow(const Sym& x, const Sym& y);
inline Sym pow(const Sym& x, double y) { return pow(x, Sym(y)); }
inline Sym pow(double x, const Sym& y) { return pow(Sym(x), y); }
Sym pow(const Sym& x, int n);  // integer power: one powi node
Sym sin(const Sym& x);
Sym cos(const Sym& x);
Sym tan(const Sym& x);
Sym asin(const Sym& x);
Sym acos(const Sym& x);
Sym atan(const Sym& x);
Sym atan2(const Sym& y, const Sym& x);
Sym sinh(const Sym& x);
Sym cosh(const Sym& x);
Sym tanh(const Sym& x);
Sym abs(const Sym& x);
inline Sym fabs(const Sym& x) { return abs(x); }
Sym hypot(const Sym& x, const Sym& y);
Sym floor(const Sym& x);
Sym ceil(const Sym& x);
Sym fmod(const Sym& x, const Sym& y);
Sym min(const Sym& a, const Sym& b);
Sym max(const Sym& a, const Sym& b);
inline Sym fmin(const Sym& a, const Sym& b) { return min(a, b); }
inline Sym fmax(const Sym& a, const Sym& b) { return max(a, b); }
inline Sym square(const Sym& x) { return x * x; }

}  // namespace lsjit
