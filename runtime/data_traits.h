// Data arguments of a cost: how a per-instance value of a given C++ type becomes a data
// slot of the IR (a static shape) and, while tracing, the Sym-typed value the cost sees.
//
// Supported: double, fixed-size Eigen matrices of double (flattened column-major whatever
// their storage order), std::array<double, N>, and the Lie groups SO2d SE2d SO3d SE3d
// (flattened as their parameters). The shape is static, the numbers are runtime.
//
// Storage order is a property of the C++ value, not of the data: a row-major and a
// column-major Matrix3d with the same entries are the same data. Both flatten to the same
// column-major row and trace as the same column-major Sym matrix, so a cost gets one
// kernel for either (otherwise each order would trace to its own graph and compile its
// own kernels, and the cache would blame a captured value).
#pragma once

#include <array>
#include <string>
#include <type_traits>

#include "lsjit/runtime/lie/lie.h"

namespace lsjit {

// The stored type of a data argument: Eigen expressions (Vector3d::Zero(), a * b) are
// evaluated into their plain matrix type; everything else is taken as it is.
template <class T, class = void>
struct data_type {
  using type = std::remove_cvref_t<T>;
};
template <class T>
struct data_type<T, std::enable_if_t<std::is_base_of_v<Eigen::EigenBase<std::remove_cvref_t<T>>,
                                                       std::remove_cvref_t<T>>>> {
  using type = typename std::remove_cvref_t<T>::PlainObject;
};
template <class T>
using data_type_t = typename data_type<T>::type;

template <class T>
struct DataTraits {
  static_assert(sizeof(T) == 0,
                "lsjit: unsupported data argument type; use double, a fixed-size Eigen matrix "
                "of double, std::array<double, N> or a Lie group of double");
};

template <>
struct DataTraits<double> {
  using Traced = Sym;
  static constexpr int kRows = 1, kCols = 1;
  static std::string type_name() { return "f64"; }
  static Traced traced(const Sym* in) { return in[0]; }
  static void flatten(double v, double* out) { out[0] = v; }
};

template <int R, int C, int Options, int MaxR, int MaxC>
struct DataTraits<Eigen::Matrix<double, R, C, Options, MaxR, MaxC>> {
  static_assert(R > 0 && C > 0, "lsjit: data matrices must have a fixed size");
  // Column-major, except a row vector, which Eigen requires to be row-major (one layout
  // either way).
  using Traced = Eigen::Matrix<Sym, R, C, (R == 1 && C != 1) ? Eigen::RowMajor : Eigen::ColMajor>;
  static constexpr int kRows = R, kCols = C;
  static std::string type_name() {
    return C == 1 ? "Vec" + std::to_string(R) : "Mat" + std::to_string(R) + "x" + std::to_string(C);
  }
  static Traced traced(const Sym* in) {
    Traced m;
    for (int j = 0; j < C; ++j)
      for (int i = 0; i < R; ++i) m(i, j) = in[j * R + i];
    return m;
  }
  static void flatten(const Eigen::Matrix<double, R, C, Options, MaxR, MaxC>& m, double* out) {
    for (int j = 0; j < C; ++j)
      for (int i = 0; i < R; ++i) out[j * R + i] = m(i, j);
  }
};

template <size_t N>
struct DataTraits<std::array<double, N>> {
  using Traced = std::array<Sym, N>;
  static constexpr int kRows = static_cast<int>(N), kCols = 1;
  static std::string type_name() { return "Array" + std::to_string(N); }
  static Traced traced(const Sym* in) {
    Traced a;
    for (size_t i = 0; i < N; ++i) a[i] = in[i];
    return a;
  }
  static void flatten(const std::array<double, N>& a, double* out) {
    for (size_t i = 0; i < N; ++i) out[i] = a[i];
  }
};

namespace detail {
template <template <class> class G>
struct GroupDataTraits {
  using Traced = G<Sym>;
  static constexpr int kRows = G<double>::kAmbient, kCols = 1;
  static Traced traced(const Sym* in) {
    typename G<Sym>::Params p;
    for (int i = 0; i < kRows; ++i) p(i) = in[i];
    return G<Sym>::from_params(p);
  }
  static void flatten(const G<double>& g, double* out) {
    const auto p = g.params();
    for (int i = 0; i < kRows; ++i) out[i] = p(i);
  }
};
}  // namespace detail

template <>
struct DataTraits<SO2<double>> : detail::GroupDataTraits<SO2> {
  static std::string type_name() { return "SO2"; }
};
template <>
struct DataTraits<SE2<double>> : detail::GroupDataTraits<SE2> {
  static std::string type_name() { return "SE2"; }
};
template <>
struct DataTraits<SO3<double>> : detail::GroupDataTraits<SO3> {
  static std::string type_name() { return "SO3"; }
};
template <>
struct DataTraits<SE3<double>> : detail::GroupDataTraits<SE3> {
  static std::string type_name() { return "SE3"; }
};

}  // namespace lsjit
