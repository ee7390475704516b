// The tracer as Python sees it: lsjit.Sym, the traced scalar, with Python's operators and
// the math functions (also as methods, so that numpy's ufuncs apply to arrays of dtype
// object holding Syms: np.sin(a) calls each element's .sin()); lsjit.SymBool, a traced
// condition that refuses to become a Python bool; and the primitives through which a
// Python cost reads its traced arguments while lsjit traces it.
//
// Why Syms and numpy object arrays rather than a Python IR: a Python cost then records
// into the same graph as a C++ one, node for node, so it is simplified, differentiated,
// compiled and cached by the same code, and a Python and a C++ cost that compute the same
// thing share a kernel.
#include <pybind11/stl.h>

#include <string>

#include "lsjit/common/error.h"
#include "lsjit/ir/sym_eigen.h"
#include "lsjit/runtime/cost.h"
#include "lsjit/runtime/variable_types.h"
#include "lsjit/runtime/variables.h"
#include "python/src/bindings.h"

namespace lsjit::python {
namespace {

const char* kWhereHint =
    "a traced value (lsjit.Sym or lsjit.SymBool) has no Python truth value while lsjit traces a cost: "
    "its value is known only when the kernel runs. Python's if, while, and, or, not and bool() "
    "cannot depend on it. Choose between values with lsjit.where(cond, a, b) "
    "(lsjit.numpy.where for arrays), as with jax.numpy.where";

py::handle& array_type();

py::object not_implemented() { return py::reinterpret_borrow<py::object>(Py_NotImplemented); }

std::string type_name(py::handle h) { return py::str(py::type::handle_of(h).attr("__name__")); }

// Binary operators return NotImplemented for anything but a Sym or a number, so that
// numpy applies them elementwise when the other operand is an array.
template <class Op>
py::object binary(py::handle a, py::handle b, Op op) {
  if (!is_scalar_like(a) || !is_scalar_like(b)) return not_implemented();
  return py::cast(op(to_sym(a), to_sym(b)));
}

// v[var] for the variable in argument slot `slot`: its parameters retracted by the traced
// tangent perturbation (cost.h's TracedValues), as the Python value of its layout: a Sym
// (Scalar), an object array (VecN) or a group of Sym (SO2 SE2 SO3 SE3, lie_bindings.cpp).
template <class Var>
py::object traced_variable_of(const Tracer& tracer, uint32_t slot) {
  Eigen::Matrix<Sym, Var::kAmbient, 1> params;
  for (int i = 0; i < Var::kAmbient; ++i) params(i) = tracer.var(slot, i);
  Eigen::Matrix<Sym, Var::kTangent, 1> delta;
  for (int i = 0; i < Var::kTangent; ++i) delta(i) = tracer.tangent(slot, i);
  const auto value = Var::retract(Var::template from_params<Sym>(params), delta);
  if constexpr (std::is_same_v<std::decay_t<decltype(value)>, Sym>) {
    return py::cast(value);
  } else if constexpr (requires { value.size(); }) {
    return object_array(std::vector<Sym>(value.data(), value.data() + value.size()));
  } else {
    return py::cast(value);
  }
}

template <int... N>
py::object traced_vec(int n, const Tracer& tracer, uint32_t slot, std::integer_sequence<int, N...>) {
  py::object out;
  ((n == N + 1 ? (out = traced_variable_of<VecVar<N + 1>>(tracer, slot), 0) : 0), ...);
  return out;
}

py::object traced_variable(int64_t id, const std::string& type, const std::string& layout) {
  Tracer* tracer = Tracer::active();
  if (!tracer) throw Error("lsjit: v[var] is read only while lsjit traces a cost");
  const uint32_t slot = detail::checked_slot(*tracer, id, type);
  if (layout == "Scalar") return traced_variable_of<ScalarVar>(*tracer, slot);
  if (layout == "SO2") return traced_variable_of<SO2Var>(*tracer, slot);
  if (layout == "SE2") return traced_variable_of<SE2Var>(*tracer, slot);
  if (layout == "SO3") return traced_variable_of<SO3Var>(*tracer, slot);
  if (layout == "SE3") return traced_variable_of<SE3Var>(*tracer, slot);
  const VariableType* vt = builtin_variable_type(layout);
  if (vt && layout.rfind("Vec", 0) == 0)
    return traced_vec(vt->ambient, *tracer, slot, std::make_integer_sequence<int, kMaxVecVarSize>{});
  throw Error("lsjit: '" + layout + "' is not a built-in variable layout");
}

std::vector<Sym> traced_data(uint32_t slot) {
  Tracer* tracer = Tracer::active();
  if (!tracer) throw Error("lsjit: a cost's data is read only while lsjit traces it");
  if (slot >= tracer->signature().data.size()) throw Error("lsjit: no data argument " + std::to_string(slot));
  std::vector<Sym> out;
  for (uint32_t c = 0; c < tracer->signature().data[slot].size(); ++c) out.push_back(tracer->data(slot, c));
  return out;
}

// The unary math of ir/sym.h, once for both of its Python forms: functions of lsjit._lsjit
// (function_name, as lsjit.numpy calls them) and methods of Sym (method, the name numpy's
// ufunc of that function calls on the elements of an object array).
struct UnaryMath {
  const char* function_name;
  const char* method;
  Sym (*function)(const Sym&);
};
const UnaryMath kUnaryMath[] = {
    {"sin", "sin", &sin},          {"cos", "cos", &cos},          {"tan", "tan", &tan},
    {"arcsin", "arcsin", &asin},   {"arccos", "arccos", &acos},   {"arctan", "arctan", &atan},
    {"sinh", "sinh", &sinh},       {"cosh", "cosh", &cosh},       {"tanh", "tanh", &tanh},
    {"sqrt", "sqrt", &sqrt},       {"cbrt", "cbrt", &cbrt},       {"exp", "exp", &exp},
    {"expm1", "expm1", &expm1},    {"log", "log", &log},          {"log1p", "log1p", &log1p},
    {"abs", "absolute", &abs},     {"floor", "floor", &floor},    {"ceil", "ceil", &ceil},
};

void bind_sym_class(py::module_& m) {
  py::class_<Sym> sym(m, "Sym",
                      "A traced scalar: a node of the graph lsjit records while it traces a cost. "
                      "Arithmetic, comparisons and the lsjit.numpy functions record nodes; "
                      "numpy arrays of dtype object hold them for vectors and matrices.");
  sym.def(py::init([](double value) { return Sym(value); }), py::arg("value"),
          "A constant of the active trace (an error outside one).")
      .def("__add__", [](py::handle a, py::handle b) { return binary(a, b, [](Sym x, Sym y) { return x + y; }); })
      .def("__radd__", [](py::handle a, py::handle b) { return binary(b, a, [](Sym x, Sym y) { return x + y; }); })
      .def("__sub__", [](py::handle a, py::handle b) { return binary(a, b, [](Sym x, Sym y) { return x - y; }); })
      .def("__rsub__", [](py::handle a, py::handle b) { return binary(b, a, [](Sym x, Sym y) { return x - y; }); })
      .def("__mul__", [](py::handle a, py::handle b) { return binary(a, b, [](Sym x, Sym y) { return x * y; }); })
      .def("__rmul__", [](py::handle a, py::handle b) { return binary(b, a, [](Sym x, Sym y) { return x * y; }); })
      .def("__truediv__", [](py::handle a, py::handle b) { return binary(a, b, [](Sym x, Sym y) { return x / y; }); })
      .def("__rtruediv__", [](py::handle a, py::handle b) { return binary(b, a, [](Sym x, Sym y) { return x / y; }); })
      .def("__pow__", [](py::handle a, py::handle b) {
        // A small integer exponent is one powi node, as std::pow(x, int) traces in C++.
        if (PyLong_Check(b.ptr()) && is_scalar_like(a)) {
          int overflow = 0;
          const long n = PyLong_AsLongAndOverflow(b.ptr(), &overflow);
          if (!overflow && n >= -1024 && n <= 1024) return py::cast(pow(to_sym(a), static_cast<int>(n)));
        }
        return binary(a, b, [](Sym x, Sym y) { return pow(x, y); });
      })
      .def("__rpow__", [](py::handle a, py::handle b) { return binary(b, a, [](Sym x, Sym y) { return pow(x, y); }); })
      .def("__neg__", [](const Sym& a) { return -a; })
      .def("__pos__", [](const Sym& a) { return a; })
      .def("__abs__", [](const Sym& a) { return abs(a); })
      .def("__lt__", [](py::handle a, py::handle b) { return binary(a, b, [](Sym x, Sym y) { return x < y; }); })
      .def("__le__", [](py::handle a, py::handle b) { return binary(a, b, [](Sym x, Sym y) { return x <= y; }); })
      .def("__gt__", [](py::handle a, py::handle b) { return binary(a, b, [](Sym x, Sym y) { return x > y; }); })
      .def("__ge__", [](py::handle a, py::handle b) { return binary(a, b, [](Sym x, Sym y) { return x >= y; }); })
      .def("__eq__", [](py::handle a, py::handle b) { return binary(a, b, [](Sym x, Sym y) { return x == y; }); })
      .def("__ne__", [](py::handle a, py::handle b) { return binary(a, b, [](Sym x, Sym y) { return x != y; }); })
      .def("__bool__", [](const Sym&) -> bool { throw ConcretizationError{kWhereHint}; })
      .def("__float__", [](const Sym&) -> double {
        throw ConcretizationError{"a traced value (lsjit.Sym) has no float value while lsjit traces a cost: it is "
                                  "known only when the kernel runs. Pass numbers to the cost as data"};
      })
      .def("__index__", [](const Sym&) -> int64_t {
        throw ConcretizationError{"a traced value (lsjit.Sym) cannot index or size anything: shapes are static in a "
                                  "trace. Use lsjit.where to choose between values"};
      })
      .def("__repr__", [](const Sym&) { return std::string("lsjit.Sym(traced)"); });
  sym.attr("__hash__") = py::none();  // == records a node; it cannot be a dictionary key
  // numpy's ufuncs on object arrays call the element's method of the ufunc's name.
  for (const UnaryMath& f : kUnaryMath)
    sym.def(f.method, [fn = f.function](const Sym& x) { return fn(x); });
  sym.def("square", [](const Sym& x) { return square(x); });
  sym.def("arctan2", [](const Sym& y, py::handle x) { return atan2(y, to_sym(x)); })
      .def("hypot", [](const Sym& a, py::handle b) { return hypot(a, to_sym(b)); });
}

void bind_sym_bool(py::module_& m) {
  py::class_<SymBool> cond(m, "SymBool",
                           "A traced condition: the result of comparing Syms. It decides nothing in Python; "
                           "lsjit.where(cond, a, b) chooses between values with it.");
  auto as_bool = [](py::handle h) -> SymBool {
    if (py::isinstance<SymBool>(h)) return h.cast<SymBool>();
    if (PyBool_Check(h.ptr())) return SymBool(h.ptr() == Py_True);
    throw py::type_error("lsjit: expected a traced condition (lsjit.SymBool) or a bool, got " + type_name(h));
  };
  cond.def("__and__", [as_bool](py::handle a, py::handle b) { return as_bool(a) && as_bool(b); })
      .def("__rand__", [as_bool](py::handle a, py::handle b) { return as_bool(b) && as_bool(a); })
      .def("__or__", [as_bool](py::handle a, py::handle b) { return as_bool(a) || as_bool(b); })
      .def("__ror__", [as_bool](py::handle a, py::handle b) { return as_bool(b) || as_bool(a); })
      .def("__invert__", [](const SymBool& a) { return !a; })
      .def("logical_and", [as_bool](py::handle a, py::handle b) { return as_bool(a) && as_bool(b); })
      .def("logical_or", [as_bool](py::handle a, py::handle b) { return as_bool(a) || as_bool(b); })
      .def("logical_not", [](const SymBool& a) { return !a; })
      .def("__bool__", [](const SymBool&) -> bool { throw ConcretizationError{kWhereHint}; })
      .def("__repr__", [](const SymBool&) { return std::string("lsjit.SymBool(traced)"); });
  cond.attr("__hash__") = py::none();
}

void bind_functions(py::module_& m) {
  for (const UnaryMath& f : kUnaryMath)
    m.def(f.function_name, [fn = f.function](py::handle x) { return fn(to_sym(x)); }, py::arg("x"));
#define LSJIT_BINARY(NAME, F) \
  m.def(NAME, [](py::handle a, py::handle b) { return F(to_sym(a), to_sym(b)); }, py::arg("a"), py::arg("b"));
  LSJIT_BINARY("arctan2", atan2)
  LSJIT_BINARY("hypot", hypot)
  LSJIT_BINARY("power", pow)
  LSJIT_BINARY("fmod", fmod)
  LSJIT_BINARY("minimum", min)
  LSJIT_BINARY("maximum", max)
#undef LSJIT_BINARY
  m.def("select", [](py::handle cond, py::handle a, py::handle b) {
    static const py::handle numpy_bool = py::object(py::module_::import("numpy").attr("bool_")).release();  // leaked
    if (PyBool_Check(cond.ptr()) || py::isinstance(cond, numpy_bool)) {
      const int truth = PyObject_IsTrue(cond.ptr());
      if (truth < 0) throw py::error_already_set();
      return to_sym(truth ? a : b);
    }
    if (!py::isinstance<SymBool>(cond))
      throw py::type_error("lsjit.where: the condition must be a traced comparison (lsjit.SymBool) or a bool, got " +
                           type_name(cond));
    return select(cond.cast<SymBool>(), to_sym(a), to_sym(b));
  }, py::arg("cond"), py::arg("a"), py::arg("b"), "Scalar where: a where cond holds, else b; both are computed.");
  m.def("_traced_variable", &traced_variable, py::arg("id"), py::arg("type"), py::arg("layout"));
  m.def("_traced_data", [](uint32_t slot) { return object_array(traced_data(slot)); }, py::arg("slot"));
  m.def("_is_tracing", [] { return Tracer::active() != nullptr; });
  m.def("_set_array_type", [](py::object type) { array_type() = type.release(); });
}

// The Python type object_array views its arrays as (kept for the process: a type object).
py::handle& array_type() {
  static py::handle type;
  return type;
}

}  // namespace

bool is_scalar_like(py::handle h) {
  if (py::isinstance<Sym>(h)) return true;
  if (PyFloat_Check(h.ptr()) || PyLong_Check(h.ptr())) return true;
  if (py::isinstance<py::array>(h) || py::isinstance<SymBool>(h)) return false;
  // numpy's scalars (np.float32, np.int64, ...) are numbers without being float or int.
  // Leaked on purpose: a static py::object would be released after the interpreter is gone.
  static const py::handle number = py::object(py::module_::import("numbers").attr("Number")).release();
  return py::isinstance(h, number);
}

Sym to_sym(py::handle h) {
  if (py::isinstance<Sym>(h)) return h.cast<Sym>();
  if (py::isinstance<SymBool>(h))
    throw py::type_error("lsjit: a traced condition (lsjit.SymBool) is not a number; choose values with "
                         "lsjit.where(cond, a, b)");
  if (is_scalar_like(h)) {
    const double value = PyFloat_AsDouble(h.ptr());
    if (PyErr_Occurred()) throw py::error_already_set();
    return Sym(value);
  }
  throw py::type_error("lsjit: expected a traced scalar (lsjit.Sym) or a number, got " + type_name(h));
}

std::vector<Sym> to_syms(py::handle h) {
  if (is_scalar_like(h) || py::isinstance<SymBool>(h)) return {to_sym(h)};
  static const py::handle numpy = py::module_::import("numpy").release();  // leaked, as above
  const py::array a = numpy.attr("asarray")(h, py::arg("dtype") = py::dtype("O")).attr("ravel")();
  std::vector<Sym> out;
  out.reserve(static_cast<size_t>(a.size()));
  for (py::handle e : a) out.push_back(to_sym(e));
  return out;
}

py::array object_array(const std::vector<Sym>& syms) {
  static const py::handle numpy = py::module_::import("numpy").release();  // leaked, as above
  py::array out = numpy.attr("empty")(syms.size(), py::arg("dtype") = py::dtype("O"));
  for (size_t i = 0; i < syms.size(); ++i) out[py::int_(i)] = py::cast(syms[i]);
  // lsjit.symarray.SymArray, registered by the package (lsjit/__init__.py) through _set_array_type.
  return array_type() ? py::array(out.attr("view")(array_type())) : out;
}

ir::Trace trace_python(const ir::Signature& signature, const py::object& function) {
  py::gil_scoped_acquire gil;
  Tracer tracer(signature);
  const py::object result = function();
  const std::string expected = ": a cost returns its residual, a Sym or an array or sequence of Syms";
  if (result.is_none()) raise_error("TraceError", "lsjit: cost '" + signature.name + "' returned None" + expected);
  std::vector<Sym> residual;
  try {
    residual = to_syms(result);
  } catch (const py::error_already_set& e) {
    if (!e.matches(PyExc_TypeError) && !e.matches(PyExc_ValueError)) throw;
    raise_error("TraceError", "lsjit: cost '" + signature.name + "' returned a " + type_name(result) + " (" +
                                  std::string(py::str(e.value())) + ")" + expected);
  } catch (const py::type_error& e) {
    raise_error("TraceError", "lsjit: cost '" + signature.name + "' returned a " + type_name(result) + " (" +
                                  e.what() + ")" + expected);
  }
  if (residual.empty()) raise_error("TraceError", "lsjit: cost '" + signature.name + "' returned no residual" + expected);
  tracer.set_residual(residual);
  return tracer.finish();
}

void bind_trace(py::module_& m) {
  static py::exception<ConcretizationError> concretization(
      m, "ConcretizationTypeError", py::make_tuple(error_type("Error"), py::handle(PyExc_TypeError)));
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ConcretizationError& e) {
      PyErr_SetString(concretization.ptr(), e.message.c_str());
    }
  });
  bind_sym_class(m);
  bind_sym_bool(m);
  bind_functions(m);
}

}  // namespace lsjit::python
