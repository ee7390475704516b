// For the I/O tests: exact comparisons of what the g2o format carries and the message the
// reader throws for a text.
#pragma once

#include <doctest/doctest.h>

#include <string>

#include "lsjit/ir/error.h"
#include "lsjit/runtime/io/g2o.h"

namespace lsjit::testing {

// Every number and id equal (==, so bit-exact up to the sign of zero). Edge::line is where
// an edge came from, not part of the graph, so it is not compared.
inline void check_same_graph(const io::PoseGraph& a, const io::PoseGraph& b) {
  REQUIRE(a.dimension == b.dimension);
  CHECK(a.vertex_ids == b.vertex_ids);
  CHECK(a.fixed == b.fixed);
  REQUIRE(a.poses2.size() == b.poses2.size());
  REQUIRE(a.poses3.size() == b.poses3.size());
  REQUIRE(a.edges2.size() == b.edges2.size());
  REQUIRE(a.edges3.size() == b.edges3.size());
  size_t differing = 0;
  for (size_t k = 0; k < a.poses2.size(); ++k)
    differing += a.poses2[k].params() != b.poses2[k].params();
  for (size_t k = 0; k < a.poses3.size(); ++k)
    differing += a.poses3[k].params() != b.poses3[k].params();
  for (size_t k = 0; k < a.edges2.size(); ++k) {
    const auto &x = a.edges2[k], &y = b.edges2[k];
    differing += x.from != y.from || x.to != y.to ||
                 x.measurement.params() != y.measurement.params() ||
                 x.information != y.information || x.sqrt_information != y.sqrt_information;
  }
  for (size_t k = 0; k < a.edges3.size(); ++k) {
    const auto &x = a.edges3[k], &y = b.edges3[k];
    differing += x.from != y.from || x.to != y.to ||
                 x.measurement.params() != y.measurement.params() ||
                 x.information != y.information || x.sqrt_information != y.sqrt_information;
  }
  CHECK_MESSAGE(differing == 0, differing << " poses or edges differ");
}

// The message of the lsjit::Error that parsing `text` as `name` throws, or a marker when it
// parses; a reader that returned anything on error would show here as the marker.
inline std::string g2o_error(const std::string& text, const std::string& name = "t.g2o") {
  try {
    io::parse_g2o(text, name);
  } catch (const lsjit::Error& e) {
    return e.what();
  }
  return "(parsed without error)";
}

}  // namespace lsjit::testing
