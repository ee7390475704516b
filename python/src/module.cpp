// lsjit._lsjit, the compiled half of the Python package (python/lsjit/ is the other).
#include <dlfcn.h>

#include <cstring>
#include <filesystem>
#include <atomic>
#include <chrono>
#include <map>
#include <string>
#include <thread>

#include "lsjit/common/error.h"

#include "python/src/bindings.h"

// Where the LLVM module (liblsjit_llvm.so) is looked for first (compiler/llvm/llvm_backend.h):
// this module is loaded by python3, whose /proc/self/exe says nothing about where lsjit is
// installed, so the installed package names the module's place relative to its own file,
// LSJIT_PYTHON_LLVM_BACKEND_RELATIVE (python/CMakeLists.txt). It is filled in once, when
// Python imports this module, before anything can compile. The backend declares it const:
// it only reads it. In the build tree the relative path finds nothing and the build's own
// copy is used.
extern "C" char lsjit_llvm_backend_path[4096];
char lsjit_llvm_backend_path[4096] = {};

namespace {

void locate_llvm_backend() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&locate_llvm_backend), &info) == 0 || !info.dli_fname) return;
  const std::string path = (std::filesystem::path(info.dli_fname).parent_path() / LSJIT_PYTHON_LLVM_BACKEND_RELATIVE)
                               .lexically_normal()
                               .string();
  if (path.size() < sizeof(lsjit_llvm_backend_path))
    std::memcpy(lsjit_llvm_backend_path, path.c_str(), path.size() + 1);
}

}  // namespace

namespace lsjit::python {

namespace {
std::map<std::string, py::handle>& error_types() {
  static std::map<std::string, py::handle> types;  // the module holds a reference to each
  return types;
}
}  // namespace

void bind_errors(py::module_& m) {
  static py::exception<Error> error(m, "Error", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      PyErr_SetString(error.ptr(), e.what());
    }
  });
  error_types()["Error"] = error;
  auto make = [&](const char* name, PyObject* also, const char* doc) {
    py::object bases = also ? py::object(py::make_tuple(error, py::handle(also))) : py::object(error);
    PyObject* type = PyErr_NewExceptionWithDoc((std::string("lsjit.") + name).c_str(), doc, bases.ptr(), nullptr);
    if (!type) throw py::error_already_set();
    m.add_object(name, py::handle(type));  // the module owns the reference
    error_types()[name] = type;
  };
  make("InputError", PyExc_ValueError, "Bad input: a shape, dtype, batch axis or non-finite number.");
  make("MissingValueError", PyExc_KeyError, "A variable without a value.");
  make("TraceError", nullptr, "A cost could not be traced (it returned None, or something that is not Syms).");
}

py::handle error_type(const char* name) { return error_types().at(name); }

namespace {
std::atomic<int64_t> g_native_calls{0};
std::atomic<bool> g_exiting{false};
}  // namespace

NativeCall::NativeCall() {
  if (g_exiting.load()) raise_error("Error", "lsjit: the interpreter is exiting; no new solve or analyze starts");
  g_native_calls.fetch_add(1);
  state_ = PyEval_SaveThread();
}

NativeCall::~NativeCall() {
  PyEval_RestoreThread(state_);
  g_native_calls.fetch_sub(1);
}

// The atexit hook's half (lsjit/__init__.py): no new native calls, then wait for the
// running ones, polling with the GIL released so that their threads can take it back.
void finish_native_calls() {
  g_exiting.store(true);
  while (g_native_calls.load() > 0) {
    Py_BEGIN_ALLOW_THREADS std::this_thread::sleep_for(std::chrono::milliseconds(1));
    Py_END_ALLOW_THREADS
  }
}

void raise_error(const char* name, const std::string& message) {
  PyErr_SetString(error_type(name).ptr(), message.c_str());
  throw py::error_already_set();
}

}  // namespace lsjit::python

PYBIND11_MODULE(_lsjit, m) {
  m.doc() = "lsjit's compiled core; use the lsjit package";
  locate_llvm_backend();
  lsjit::python::bind_errors(m);
  m.def("_finish_native_calls", &lsjit::python::finish_native_calls);
  lsjit::python::bind_trace(m);
  lsjit::python::bind_lie(m);
  lsjit::python::bind_solve(m);
  lsjit::python::bind_cache(m);
  lsjit::python::bind_io(m);
  lsjit::python::bind_incremental(m);
}
