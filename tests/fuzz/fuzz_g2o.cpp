// parse_g2o on arbitrary bytes: it returns a graph that keeps g2o.h's guarantees or throws
// lsjit::Error. A returned graph must also survive format_g2o -> parse_g2o unchanged, bit
// for bit (g2o.h: "a graph returned by the reader is written and read back to exactly the
// same numbers").
// The repair modes (G2oReadOptions): a file the default mode reads, every mode reads to the
// same graph with nothing repaired; a file it refuses, a repair mode either refuses too or
// returns a graph that keeps the guarantees, whose repaired edges have a factor of their
// repaired matrix, and which writes and reads back (without a repair) unchanged.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>

#include "fuzz_check.h"
#include "lsjit/runtime/io/g2o.h"

namespace {

using lsjit::fuzz::broken;
using lsjit::io::InformationRepair;
using lsjit::io::PoseGraph;

void check_guarantees(const PoseGraph& g) {
  if (g.dimension != 2 && g.dimension != 3) broken("dimension is not 2 or 3");
  if (g.vertex_ids.empty()) broken("a graph without vertices");
  const bool two = g.dimension == 2;
  if ((two ? g.poses2.size() : g.poses3.size()) != g.vertex_ids.size())
    broken("not one pose per vertex id");
  if (!(two ? g.poses3.empty() && g.edges3.empty() : g.poses2.empty() && g.edges2.empty()))
    broken("poses or edges of the other dimension");
  const std::unordered_set<int64_t> ids(g.vertex_ids.begin(), g.vertex_ids.end());
  if (ids.size() != g.vertex_ids.size()) broken("duplicate vertex ids");
  for (const int64_t id : g.fixed)
    if (!ids.contains(id)) broken("a FIX id that names no vertex");
  const auto check_edge = [&](const auto& e) {
    if (!ids.contains(e.from) || !ids.contains(e.to)) broken("an edge names no vertex");
    if (!e.information.allFinite() || !e.sqrt_information.allFinite())
      broken("a non-finite information matrix or factor");
    const auto u = lsjit::io::upper_cholesky(e.information);
    if (!u || *u != e.sqrt_information) broken("sqrt_information is not the factor of information");
    if (e.information_repaired && g.information_repair == InformationRepair::None)
      broken("an edge repaired without a repair mode");
  };
  for (const auto& e : g.edges2) check_edge(e);
  for (const auto& e : g.edges3) check_edge(e);
  for (const auto& p : g.poses2) {
    const double theta = std::atan2(p.rotation().params()(1), p.rotation().params()(0));
    if (!p.params().allFinite() || !std::isfinite(theta)) broken("a non-finite SE2 pose");
  }
  for (const auto& p : g.poses3)
    if (!p.params().allFinite() || std::abs(p.rotation().params().squaredNorm() - 1) > 1e-12)
      broken("a non-finite SE3 pose or a quaternion that is not unit");
}

bool same(const PoseGraph& a, const PoseGraph& b) {
  if (a.dimension != b.dimension || a.vertex_ids != b.vertex_ids || a.fixed != b.fixed ||
      a.poses2.size() != b.poses2.size() || a.poses3.size() != b.poses3.size() ||
      a.edges2.size() != b.edges2.size() || a.edges3.size() != b.edges3.size())
    return false;
  for (size_t k = 0; k < a.poses2.size(); ++k)
    if (a.poses2[k].params() != b.poses2[k].params()) return false;
  for (size_t k = 0; k < a.poses3.size(); ++k)
    if (a.poses3[k].params() != b.poses3[k].params()) return false;
  const auto same_edge = [](const auto& x, const auto& y) {
    return x.from == y.from && x.to == y.to && x.measurement.params() == y.measurement.params() &&
           x.information == y.information && x.sqrt_information == y.sqrt_information;
  };
  for (size_t k = 0; k < a.edges2.size(); ++k)
    if (!same_edge(a.edges2[k], b.edges2[k])) return false;
  for (size_t k = 0; k < a.edges3.size(); ++k)
    if (!same_edge(a.edges3[k], b.edges3[k])) return false;
  return true;
}

// A graph the reader returned keeps the guarantees and survives a write -> read.
void check_returned(const PoseGraph& g) {
  check_guarantees(g);
  std::string written;
  try {
    written = lsjit::io::format_g2o(g);
  } catch (const lsjit::Error& e) {
    broken(std::string("format_g2o refused a graph that parse_g2o returned: ") + e.what());
  }
  try {
    if (!same(lsjit::io::parse_g2o(written, "written.g2o"), g))
      broken("format_g2o -> parse_g2o changed the graph");
  } catch (const lsjit::Error& e) {
    broken(std::string("parse_g2o rejected what format_g2o wrote: ") + e.what());
  }
}

constexpr InformationRepair kRepairs[] = {InformationRepair::BlockDiagonal,
                                          InformationRepair::NearestPD};

PoseGraph parse(std::string_view text, InformationRepair mode) {
  return lsjit::io::parse_g2o(text, "fuzz.g2o", {.repair_information = mode});
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  bool plain_read = false;
  lsjit::fuzz::expect_only_lsjit_errors([&] {
    const PoseGraph g = parse(text, InformationRepair::None);
    plain_read = true;
    check_returned(g);
    for (const InformationRepair mode : kRepairs) {
      try {
        const PoseGraph r = parse(text, mode);
        if (r.num_repaired_edges() != 0 || !same(r, g))
          broken("a repair mode changed a file that needs no repair");
      } catch (const lsjit::Error& e) {
        broken(std::string("a repair mode refused a file that the default reads: ") + e.what());
      }
    }
  });
  if (plain_read) return 0;
  for (const InformationRepair mode : kRepairs)
    lsjit::fuzz::expect_only_lsjit_errors([&] { check_returned(parse(text, mode)); });
  return 0;
}
