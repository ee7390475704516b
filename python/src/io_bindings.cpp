// lsjit.io: lsjit's own g2o and BAL readers (runtime/io/), returning numpy arrays laid out
// for Problem.add: checked as the CLI checks them (an error names the file, the line and
// what was expected), and without a per-line Python loop.
#include <pybind11/stl.h>

#include "lsjit/runtime/io/bal.h"
#include "lsjit/runtime/io/g2o.h"
#include "python/src/bindings.h"

namespace lsjit::python {
namespace {

template <class Edge, class Pose>
void edges_to(py::dict& out, const std::vector<Edge>& edges, const std::vector<Pose>& poses,
              const std::vector<int64_t>& ids) {
  constexpr int A = Pose::kAmbient, T = Pose::kTangent;
  const auto m = static_cast<py::ssize_t>(edges.size()), n = static_cast<py::ssize_t>(poses.size());
  py::array_t<double> params(std::vector<py::ssize_t>{n, A});
  for (py::ssize_t k = 0; k < n; ++k) {
    const auto p = poses[static_cast<size_t>(k)].params();
    std::copy(p.data(), p.data() + A, params.mutable_data() + k * A);
  }
  py::array_t<int64_t> pairs(std::vector<py::ssize_t>{m, 2});
  py::array_t<double> z(std::vector<py::ssize_t>{m, A});
  py::array_t<double> U(std::vector<py::ssize_t>{m, T, T});
  for (py::ssize_t k = 0; k < m; ++k) {
    const Edge& e = edges[static_cast<size_t>(k)];
    pairs.mutable_data()[2 * k] = e.from;
    pairs.mutable_data()[2 * k + 1] = e.to;
    const auto p = e.measurement.params();
    std::copy(p.data(), p.data() + A, z.mutable_data() + k * A);
    for (int r = 0; r < T; ++r)
      for (int c = 0; c < T; ++c) U.mutable_data()[(k * T + r) * T + c] = e.sqrt_information(r, c);
  }
  out["vertex_ids"] = py::array_t<int64_t>(static_cast<py::ssize_t>(ids.size()), ids.data());
  out["poses"] = params;
  out["edges"] = pairs;
  out["measurements"] = z;
  out["sqrt_information"] = U;
}

py::dict read_g2o_arrays(const std::string& path) {
  io::PoseGraph g;
  {
    NativeCall call;
    g = io::read_g2o(path);
  }
  if (g.vertices_from_edges)
    raise_error("InputError", "lsjit.io.read_g2o: " + path + " has no VERTEX lines: its poses need a start "
                                  "(`lsjit solve --init chordal` computes one)");
  py::dict out;
  out["dimension"] = g.dimension;
  if (g.dimension == 2) edges_to(out, g.edges2, g.poses2, g.vertex_ids);
  else edges_to(out, g.edges3, g.poses3, g.vertex_ids);
  const std::vector<int64_t> constant = g.held_constant();
  out["held_constant"] = py::array_t<int64_t>(static_cast<py::ssize_t>(constant.size()), constant.data());
  return out;
}

py::dict read_bal_arrays(const std::string& path) {
  io::BalProblem b;
  {
    NativeCall call;
    b = io::read_bal(path);
  }
  const auto nc = static_cast<py::ssize_t>(b.cameras.size()), np_ = static_cast<py::ssize_t>(b.points.size()),
             no = static_cast<py::ssize_t>(b.observations.size());
  py::array_t<double> cameras(std::vector<py::ssize_t>{nc, 9}), points(std::vector<py::ssize_t>{np_, 3}),
      xy(std::vector<py::ssize_t>{no, 2});
  py::array_t<int64_t> camera_index(no), point_index(no);
  for (py::ssize_t k = 0; k < nc; ++k) std::copy_n(b.cameras[static_cast<size_t>(k)].data(), 9, cameras.mutable_data() + 9 * k);
  for (py::ssize_t k = 0; k < np_; ++k) std::copy_n(b.points[static_cast<size_t>(k)].data(), 3, points.mutable_data() + 3 * k);
  for (py::ssize_t k = 0; k < no; ++k) {
    const auto& o = b.observations[static_cast<size_t>(k)];
    camera_index.mutable_data()[k] = o.camera;
    point_index.mutable_data()[k] = o.point;
    xy.mutable_data()[2 * k] = o.xy(0);
    xy.mutable_data()[2 * k + 1] = o.xy(1);
  }
  py::dict out;
  out["cameras"] = cameras;
  out["points"] = points;
  out["camera_index"] = camera_index;
  out["point_index"] = point_index;
  out["observations"] = xy;
  return out;
}

}  // namespace

void bind_io(py::module_& m) {
  m.def("read_g2o", &read_g2o_arrays, py::arg("path"));
  m.def("read_bal", &read_bal_arrays, py::arg("path"));
}

}  // namespace lsjit::python
