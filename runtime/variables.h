// Variable types: what a cost's variable arguments are, and how lsjit perturbs them.
//
// A variable handle is a type plus an integer ID (IDs need not be contiguous or sorted).
// The type is static (it sets the Jacobian block size and the retraction); the ID is a
// runtime input. Each type provides:
//   kName, kAmbient, kTangent     its name in the IR and cache key, parameter and tangent size
//   Value<S>                      what v[var] returns inside a cost (S = double or Sym)
//   from_params<S>(p)             builds a Value from its ambient parameters
//   params(value)                 the ambient parameters of a double Value
//   retract<S>(x, delta)          x ⊞ delta: x + delta for Euclidean types, x·exp(delta)
//                                 for Lie groups (right perturbation)
//   retract_params(x, delta, out) the solver's step on raw parameters (double): the same
//                                 x ⊞ delta, with Lie group results renormalized so that
//                                 rounding does not drift off the group over iterations
//   batch(ids)                    many variables of this type at once, for Problem::add
// Parameter layouts and tangent orders of the Lie groups are documented in runtime/lie/.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <vector>

#include "lsjit/runtime/lie/lie.h"

namespace lsjit {

// Variables of one type for a batched Problem::add: instance k uses ids[k].
template <class Var>
struct VarBatch {
  std::vector<int64_t> ids;
};

namespace detail {
template <template <class> class G, class Self>
struct GroupVar {
  template <class S>
  using Value = G<S>;
  static constexpr int kAmbient = G<double>::kAmbient;
  static constexpr int kTangent = G<double>::kTangent;
  template <class S>
  static G<S> from_params(const Eigen::Matrix<S, kAmbient, 1>& p) {
    return G<S>::from_params(p);
  }
  static Eigen::Matrix<double, kAmbient, 1> params(const G<double>& g) { return g.params(); }
  template <class S>
  static G<S> retract(const G<S>& x, const Eigen::Matrix<S, kTangent, 1>& delta) {
    return x.retract(delta);
  }
  static void retract_params(const double* x, const double* delta, double* out) {
    const G<double> g = G<double>::from_params(Eigen::Map<const Eigen::Matrix<double, kAmbient, 1>>(x));
    Eigen::Map<Eigen::Matrix<double, kAmbient, 1>> result(out);
    result = g.retract(Eigen::Map<const Eigen::Matrix<double, kTangent, 1>>(delta)).normalized().params();
  }
  static VarBatch<Self> batch(std::vector<int64_t> ids) { return {std::move(ids)}; }

  int64_t id = 0;
  constexpr GroupVar() = default;
  constexpr explicit GroupVar(int64_t var_id) : id(var_id) {}
};
}  // namespace detail

struct SO2Var : detail::GroupVar<SO2, SO2Var> {
  using GroupVar::GroupVar;
  static constexpr std::string_view kName = "SO2";
};
struct SE2Var : detail::GroupVar<SE2, SE2Var> {
  using GroupVar::GroupVar;
  static constexpr std::string_view kName = "SE2";
};
struct SO3Var : detail::GroupVar<SO3, SO3Var> {
  using GroupVar::GroupVar;
  static constexpr std::string_view kName = "SO3";
};
struct SE3Var : detail::GroupVar<SE3, SE3Var> {
  using GroupVar::GroupVar;
  static constexpr std::string_view kName = "SE3";
};

namespace detail {
// "Vec1" ... "Vec99": VecVar<N>'s name, spelled at compile time.
template <int N>
struct VecName {
  static constexpr std::array<char, 5> chars = {'V', 'e', 'c', static_cast<char>(N < 10 ? '0' + N : '0' + N / 10),
                                                static_cast<char>('0' + N % 10)};
  static constexpr std::string_view view{chars.data(), N < 10 ? 4u : 5u};
};
}  // namespace detail

// The largest VecVar. Up to it the kernels' cost per Hessian entry was measured flat
// (docs/variables.md, "State sizes"); a larger state is split into kinds (Kind below).
inline constexpr int kMaxVecVarSize = 32;

// An N-vector in R^N.
template <int N>
struct VecVar {
  static_assert(N >= 1, "VecVar<N> needs N >= 1");
  static_assert(N <= kMaxVecVarSize,
                "VecVar<N>: sizes above 32 are not supported. Split the state into variables of its "
                "parts, each a kind of its own (e.g. a 45-vector as position, velocity and bias "
                "kinds: lsjit::Kind<lsjit::VecVar<3>, \"velocity\">, ...); see docs/variables.md");
  template <class S>
  using Value = Eigen::Matrix<S, N, 1>;
  static constexpr int kAmbient = N;
  static constexpr int kTangent = N;
  static constexpr std::string_view kName = detail::VecName<N>::view;
  template <class S>
  static Value<S> from_params(const Eigen::Matrix<S, N, 1>& p) { return p; }
  static Eigen::Matrix<double, N, 1> params(const Value<double>& v) { return v; }
  template <class S>
  static Value<S> retract(const Value<S>& x, const Eigen::Matrix<S, N, 1>& delta) {
    return x + delta;
  }
  static void retract_params(const double* x, const double* delta, double* out) {
    for (int i = 0; i < N; ++i) out[i] = x[i] + delta[i];
  }
  static VarBatch<VecVar> batch(std::vector<int64_t> ids) { return {std::move(ids)}; }

  int64_t id = 0;
  constexpr VecVar() = default;
  constexpr explicit VecVar(int64_t var_id) : id(var_id) {}
};

// A scalar in R.
struct ScalarVar {
  template <class S>
  using Value = S;
  static constexpr int kAmbient = 1;
  static constexpr int kTangent = 1;
  static constexpr std::string_view kName = "Scalar";
  template <class S>
  static S from_params(const Eigen::Matrix<S, 1, 1>& p) { return p(0); }
  static Eigen::Matrix<double, 1, 1> params(double v) { return Eigen::Matrix<double, 1, 1>(v); }
  template <class S>
  static S retract(const S& x, const Eigen::Matrix<S, 1, 1>& delta) { return x + delta(0); }
  static void retract_params(const double* x, const double* delta, double* out) {
    out[0] = x[0] + delta[0];
  }
  static VarBatch<ScalarVar> batch(std::vector<int64_t> ids) { return {std::move(ids)}; }

  int64_t id = 0;
  constexpr ScalarVar() = default;
  constexpr explicit ScalarVar(int64_t var_id) : id(var_id) {}
};

template <class T, class = void>
struct is_variable : std::false_type {};
template <class T>
struct is_variable<T, std::void_t<decltype(T::kName), decltype(T::kTangent), decltype(T{}.id)>>
    : std::true_type {};
template <class T>
inline constexpr bool is_variable_v = is_variable<std::remove_cvref_t<T>>::value;

// A kind: a variable type of its own with the layout of `Base`, declared in one line.
//
//   using Velocity = lsjit::Kind<lsjit::VecVar<3>, "velocity">;
//   using Landmark = lsjit::Kind<lsjit::VecVar<3>, "landmark">;
//   p.add(prior, Velocity(0), z1);   // velocity 0 and landmark 0 are two variables
//   p.add(prior, Landmark(0), z2);
//
// Variables are keyed by (type name, ID), so each kind has its own ID space, its own row
// in the summary, its own Schur elimination choice (AnalyzeOptions::schur_elimination =
// "landmark") and its name in every report and error. Inside a cost, v[x] is Base's value
// (a Vec3, an SE3, ...). The name is part of the kernel's key, like any type name: a cost
// traced with Velocity and the same code traced with VecVar<3> are two kernels.
//
// The name must be an identifier ([A-Za-z_][A-Za-z0-9_]*, at most 63 characters) and not
// a built-in type's name (Scalar, SO2, SE2, SO3, SE3, Vec1 ... Vec32): a kind that took
// "Vec3" would share VecVar<3>'s IDs, which is what kinds exist to prevent.
template <size_t N>
struct KindName {
  char text[N] = {};
  consteval KindName(const char (&name)[N]) { std::copy_n(name, N, text); }
  constexpr std::string_view view() const { return {text, N - 1}; }
};

namespace detail {
// constexpr, not consteval: Kind checks names at compile time, kind_variable_type
// (variable_types.h) the names it gets at run time, by the same rule.
constexpr bool is_kind_name(std::string_view name) {
  auto letter = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; };
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (name.empty() || name.size() > 63 || !letter(name[0])) return false;
  for (char c : name)
    if (!letter(c) && !digit(c)) return false;
  return true;
}
consteval bool is_builtin_type_name(std::string_view name) {
  for (std::string_view builtin : {"Scalar", "SO2", "SE2", "SO3", "SE3"})
    if (name == builtin) return true;
  if (name.size() < 4 || name.size() > 5 || name.substr(0, 3) != "Vec") return false;
  for (char c : name.substr(3))
    if (c < '0' || c > '9') return false;
  return true;
}
}  // namespace detail

template <class Base, KindName Name>
  requires is_variable_v<Base>
struct Kind : Base {
  static_assert(detail::is_kind_name(Name.view()),
                "lsjit::Kind: the name must be an identifier ([A-Za-z_][A-Za-z0-9_]*, at most 63 characters)");
  static_assert(!detail::is_builtin_type_name(Name.view()),
                "lsjit::Kind: the name is a built-in type's (Scalar, SO2, SE2, SO3, SE3, VecN): choose "
                "one of the kind's own");
  static constexpr std::string_view kName = Name.view();
  static constexpr std::string_view kLayoutName = Base::kName;  // the built-in layout's name
  static VarBatch<Kind> batch(std::vector<int64_t> ids) { return {std::move(ids)}; }

  constexpr Kind() = default;
  constexpr explicit Kind(int64_t var_id) : Base(var_id) {}
};

}  // namespace lsjit
