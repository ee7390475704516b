// What the binding files of the Python module share (python/src/*.cpp, one per area of the
// API; module.cpp calls each bind_* once). The Python side of the package is python/lsjit/.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <vector>

#include "lsjit/ir/sym.h"

namespace lsjit::python {

namespace py = pybind11;

// A traced value in a Python `if`, `while`, `and`, `or` or bool(): the analogue of JAX's
// ConcretizationTypeError (Python class lsjit.ConcretizationTypeError, a TypeError).
struct ConcretizationError {
  std::string message;
};

// `h` as a Sym: a Sym itself, or a Python or numpy number as a constant of the active
// trace. Throws py::type_error naming what it got otherwise (a SymBool gets a hint at
// lsjit.where).
Sym to_sym(py::handle h);
// Whether to_sym accepts `h` (a Sym or a number; not an array).
bool is_scalar_like(py::handle h);
// Every element of a Sym, a number or an array-like of them (numpy's C order).
std::vector<Sym> to_syms(py::handle h);
// A 1-D numpy array of dtype object holding `syms`.
py::array object_array(const std::vector<Sym>& syms);

// The exception hierarchy (module.cpp), all under lsjit.Error (a RuntimeError; lsjit::Error
// from C++ becomes it): InputError (also a ValueError) for bad shapes, dtypes, batch axes
// and non-finite numbers; MissingValueError (also a KeyError) for a variable without a
// value; TraceError for a cost whose trace fails (returns None or no Syms);
// ConcretizationTypeError (also a TypeError) for a traced value used as a Python bool.
void bind_errors(py::module_& m);
py::handle error_type(const char* name);  // "Error", "InputError", ... once bind_errors ran
// Raises the Python exception `name` (above) with `message`.
[[noreturn]] void raise_error(const char* name, const std::string& message);

// Work done without the GIL, counted. Construct it with the GIL held: it refuses (an
// lsjit.Error) once the interpreter is exiting, else counts the call and releases the GIL;
// the destructor takes the GIL back, then uncounts. The package's atexit hook
// (lsjit/__init__.py, _finish_native_calls) refuses new calls and waits for the counted
// ones, so that no thread is inside lsjit without the GIL when Python finalizes (a thread
// that retakes the GIL then is ended by CPython, which would unwind through this
// destructor and terminate the process).
class NativeCall {
 public:
  NativeCall();
  ~NativeCall();
  NativeCall(const NativeCall&) = delete;
  NativeCall& operator=(const NativeCall&) = delete;

 private:
  PyThreadState* state_;
};

void bind_trace(py::module_& m);  // trace_bindings.cpp: Sym, SymBool, math, tracing
void bind_lie(py::module_& m);    // lie_bindings.cpp: SO2 SE2 SO3 SE3 of Sym and of double
void bind_solve(py::module_& m);  // solve_bindings.cpp: Problem, Values, options, summary
void bind_cache(py::module_& m);  // cache_bindings.cpp: lsjit cache's subcommands
void bind_incremental(py::module_& m);  // incremental_bindings.cpp: IncrementalSolver
void bind_io(py::module_& m);     // io_bindings.cpp: the g2o and BAL readers

}  // namespace lsjit::python

namespace lsjit::python {
// Records the graph of a Python cost: makes the active trace for `signature`, calls
// `function()` (which reads the traced arguments through lsjit._lsjit's _traced_* calls)
// with the GIL held, and takes its result as the residual (to_syms). A Python exception
// propagates as py::error_already_set.
ir::Trace trace_python(const ir::Signature& signature, const py::object& function);
}  // namespace lsjit::python
