// lsjit.cache: the inspection `lsjit cache` offers (list, show, diff, stats, verify, gc,
// clear), by running the CLI's own subcommand (tools/lsjit/cache_command.cpp, linked into
// this module) with --json and handing its output to python/lsjit/cache.py, so the two
// can never disagree about what the cache holds or which entries are trusted.
#include <pybind11/stl.h>

#include <sstream>

#include "python/src/bindings.h"
#include "tools/lsjit/commands.h"

namespace lsjit::python {

void bind_cache(py::module_& m) {
  m.def("_cache_command", [](const std::vector<std::string>& args) {
    std::ostringstream out, err;
    int code = 0;
    {
      NativeCall call;
      code = cli::cache_command(args, out, err);
    }
    return py::make_tuple(code, out.str(), err.str());
  }, py::arg("args"));
}

}  // namespace lsjit::python
