// SO2, SE2, SO3 and SE3 for Python: lsjit's own Lie groups (runtime/lie/), bound twice,
// over Sym for costs being traced and over double for numbers, as classes SE3_sym and
// SE3_f64 of lsjit._lsjit. python/lsjit/lie.py wraps each pair in one class (lsjit.SE3)
// that picks by its contents. Layouts and tangent orders are the C++ ones: SE3 parameters
// (tx, ty, tz, qx, qy, qz, qw), tangent (ρ, ω); SE2 (x, y, cos, sin), tangent (ρ, θ).
#include <pybind11/stl.h>

#include <string>

#include "lsjit/common/error.h"
#include "lsjit/runtime/lie/lie.h"
#include "python/src/bindings.h"

namespace lsjit::python {
namespace {

template <class S, int N>
Eigen::Matrix<S, N, 1> vector_in(py::handle h, const char* what, const std::string& group) {
  Eigen::Matrix<S, N, 1> out;
  if constexpr (std::is_same_v<S, double>) {
    const auto a = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(h);
    if (!a || a.size() != N)
      raise_error("InputError", "lsjit." + group + ": " + what + " must be " + std::to_string(N) + " numbers");
    for (int i = 0; i < N; ++i) out(i) = a.data()[i];
  } else {
    const std::vector<Sym> syms = to_syms(h);
    if (syms.size() != static_cast<size_t>(N))
      raise_error("InputError", "lsjit." + group + ": " + what + " must have " + std::to_string(N) +
                                    " entries, got " + std::to_string(syms.size()));
    for (int i = 0; i < N; ++i) out(i) = syms[static_cast<size_t>(i)];
  }
  return out;
}

template <class S, int R, int C>
py::array matrix_out(const Eigen::Matrix<S, R, C>& m) {
  if constexpr (std::is_same_v<S, double>) {
    py::array_t<double> out(C == 1 ? std::vector<py::ssize_t>{R} : std::vector<py::ssize_t>{R, C});
    double* d = out.mutable_data();
    for (int i = 0; i < R; ++i)
      for (int j = 0; j < C; ++j) d[i * C + j] = m(i, j);
    return out;
  } else {
    std::vector<Sym> row_major;
    for (int i = 0; i < R; ++i)
      for (int j = 0; j < C; ++j) row_major.push_back(m(i, j));
    py::array flat = object_array(row_major);
    return C == 1 ? flat : py::array(flat.attr("reshape")(R, C));
  }
}

template <template <class> class G, class S>
py::class_<G<S>> bind_group(py::module_& m, const std::string& group, const char* suffix) {
  using T = G<S>;
  constexpr int A = T::kAmbient, K = T::kTangent, D = T::kDim;
  py::class_<T> c(m, (group + suffix).c_str());
  c.def_static("identity", [] { return T::identity(); })
      .def_static("from_params", [group](py::handle p) { return T::from_params(vector_in<S, A>(p, "params", group)); })
      .def_static("exp", [group](py::handle xi) { return T::exp(vector_in<S, K>(xi, "the tangent", group)); })
      .def("log", [](const T& g) { return matrix_out<S, K, 1>(g.log()); })
      .def("params", [](const T& g) { return matrix_out<S, A, 1>(g.params()); })
      .def("inverse", &T::inverse)
      .def("compose", [](const T& a, const T& b) { return a * b; })
      .def("act", [group](const T& g, py::handle p) { return matrix_out<S, D, 1>(g.act(vector_in<S, D>(p, "the point", group))); })
      .def("as_matrix", [](const T& g) { return matrix_out(g.matrix()); })
      .def("retract", [group](const T& g, py::handle d) { return g.retract(vector_in<S, K>(d, "the tangent", group)); })
      .def("local", [](const T& g, const T& o) { return matrix_out<S, K, 1>(g.local(o)); });
  c.attr("ambient") = A;
  c.attr("tangent") = K;
  c.attr("dim") = D;
  if constexpr (std::is_same_v<S, double>)
    c.def("normalized", &T::normalized).def("__repr__", [](const T& g) {
      std::ostringstream os;
      os << g;
      return os.str();
    });
  return c;
}

template <class S>
void bind_groups(py::module_& m, const char* suffix) {
  bind_group<SO2, S>(m, "SO2", suffix)
      .def_static("from_angle", [](py::handle theta) {
        if constexpr (std::is_same_v<S, double>) return SO2<S>::from_angle(theta.cast<double>());
        else return SO2<S>::from_angle(to_sym(theta));
      });
  bind_group<SE2, S>(m, "SE2", suffix)
      .def("rotation", &SE2<S>::rotation)
      .def("translation", [](const SE2<S>& g) { return matrix_out<S, 2, 1>(g.translation()); })
      .def_static("from_rotation_and_translation", [](const SO2<S>& r, py::handle t) {
        return SE2<S>(r, vector_in<S, 2>(t, "the translation", "SE2"));
      });
  bind_group<SO3, S>(m, "SO3", suffix);
  bind_group<SE3, S>(m, "SE3", suffix)
      .def("rotation", &SE3<S>::rotation)
      .def("translation", [](const SE3<S>& g) { return matrix_out<S, 3, 1>(g.translation()); })
      .def_static("from_rotation_and_translation", [](const SO3<S>& r, py::handle t) {
        return SE3<S>(r, vector_in<S, 3>(t, "the translation", "SE3"));
      });
}

}  // namespace

void bind_lie(py::module_& m) {
  bind_groups<double>(m, "_f64");
  bind_groups<Sym>(m, "_sym");
}

}  // namespace lsjit::python
