#include "lsjit/runtime/analyze/trace_groups.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <mutex>
#include <set>
#include <utility>

#include "lsjit/common/clock.h"
#include "lsjit/common/error.h"
#include "lsjit/ir/differentiate.h"
#include "lsjit/ir/normal_equations.h"
#include "lsjit/ir/printer.h"
#include "lsjit/ir/structural_hash.h"

namespace lsjit::detail {

namespace {

// Groups that add() could not tell were one cost (closures that cannot be compared, made by
// separate lsjit::cost() calls) and that traced to one graph: said once per cost name, with
// the fix. A few are normal (one cost object per sensor); kSplitGroupsToWarn are a loop.
constexpr size_t kSplitGroupsToWarn = 16;

void warn_about_split_groups(const std::vector<TracedGroup>& merged, ProblemLayout& layout) {
  std::set<std::string> warned;
  for (const TracedGroup& m : merged) {
    const std::string& name = m.traced.signature.name;
    if (m.parts.size() < kSplitGroupsToWarn || !warned.insert(name).second) continue;
    layout.analysis_warnings.push_back(
        "cost '" + name + "' was added as " + std::to_string(m.parts.size()) +
        " separate cost objects whose closures cannot be compared before tracing (each lsjit::cost() call "
        "capturing a std::vector or another non-trivially-copyable value is a new object), so analyze() traced "
        "each one and merged them after: make the cost once outside the loop and add it many times, or pass "
        "the captured values as data");
  }
}

}  // namespace

std::vector<TracedGroup> trace_groups(const std::vector<std::unique_ptr<CostGroup>>& groups,
                                      ProblemLayout& layout) {
  if (groups.size() > std::numeric_limits<uint16_t>::max())
    throw Error("lsjit: more than 65535 cost groups in one problem");
  std::vector<TracedGroup> merged;
  for (const auto& g : groups) {
    if (g->var_types.size() > kMaxSlots || g->var_types.empty())
      throw Error("lsjit: cost '" + g->name + "' has " + std::to_string(g->var_types.size()) +
                  " variable arguments; a cost takes 1 to " + std::to_string(kMaxSlots));
    const auto t0 = Clock::now();
    ir::Trace traced = g->trace();
    const double trace_s = seconds_since(t0);
    layout.trace_s += trace_s;
    std::string hash = ir::structural_hash(traced).hex();
    auto same = std::find_if(merged.begin(), merged.end(), [&](const TracedGroup& m) {
      return m.hash == hash && m.traced.signature == traced.signature;
    });
    if (same == merged.end()) {
      merged.push_back({std::move(traced), std::move(hash), trace_s, {}});
      same = merged.end() - 1;
    }
    same->parts.push_back(g.get());
  }
  warn_about_split_groups(merged, layout);
  return merged;
}

void dump_trace(const TracedGroup& m) {
  const char* dir_env = std::getenv("LSJIT_DUMP_DIR");
  if (!dir_env || !*dir_env) return;
  namespace fs = std::filesystem;
  const fs::path dir(dir_env);
  static std::once_flag warned;
  try {
    fs::create_directories(dir);
    const ir::Trace jacobian = ir::differentiate(m.traced);
    const std::pair<const char*, ir::Trace> stages[] = {
        {"traced", m.traced},
        {"simplified", ir::simplify_residual(m.traced)},
        {"jacobian", jacobian},
        {"normal_equations", ir::normal_equations(jacobian)}};
    for (const auto& [stage, trace] : stages) {
      const fs::path path =
          dir / (m.traced.signature.name + "-" + m.hash.substr(0, 12) + "." + stage + ".ir");
      const fs::path tmp = path.string() + ".tmp";
      {
        std::ofstream out(tmp, std::ios::trunc);
        out << ir::print(trace);
        if (!out) throw std::runtime_error("cannot write " + tmp.string());
      }
      fs::rename(tmp, path);
    }
  } catch (const std::exception& e) {
    std::call_once(warned, [&] {
      std::cerr << "lsjit: LSJIT_DUMP_DIR: traces are not dumped (" << e.what() << ")\n";
    });
  }
}

}  // namespace lsjit::detail
