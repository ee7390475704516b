// parse_bal on arbitrary bytes: it returns a problem whose indices are in range and whose
// numbers are finite, or throws lsjit::Error. A returned problem must also survive
// format_bal -> parse_bal unchanged (bal.h: read(write(p)) == p exactly).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "lsjit/runtime/io/bal.h"

namespace {

using lsjit::fuzz::broken;
using lsjit::io::BalProblem;

void check_guarantees(const BalProblem& p) {
  for (const BalProblem::Observation& o : p.observations) {
    if (o.camera < 0 || static_cast<size_t>(o.camera) >= p.cameras.size() || o.point < 0 ||
        static_cast<size_t>(o.point) >= p.points.size())
      broken("an observation index out of range");
    if (!o.xy.allFinite()) broken("a non-finite observation");
  }
  for (const auto& c : p.cameras)
    if (!c.allFinite()) broken("a non-finite camera");
  for (const auto& x : p.points)
    if (!x.allFinite()) broken("a non-finite point");
}

bool same(const BalProblem& a, const BalProblem& b) {
  if (a.observations.size() != b.observations.size() || a.cameras != b.cameras ||
      a.points != b.points)
    return false;
  for (size_t k = 0; k < a.observations.size(); ++k) {
    const auto &x = a.observations[k], &y = b.observations[k];
    if (x.camera != y.camera || x.point != y.point || x.xy != y.xy) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  lsjit::fuzz::expect_only_lsjit_errors([&] {
    const BalProblem p = lsjit::io::parse_bal(text, "fuzz.bal");
    check_guarantees(p);
    std::string written;
    try {
      written = lsjit::io::format_bal(p);
    } catch (const lsjit::Error& e) {
      broken(std::string("format_bal refused a problem that parse_bal returned: ") + e.what());
    }
    try {
      if (!same(lsjit::io::parse_bal(written, "written.bal"), p))
        broken("format_bal -> parse_bal changed the problem");
    } catch (const lsjit::Error& e) {
      broken(std::string("parse_bal rejected what format_bal wrote: ") + e.what());
    }
  });
  return 0;
}
