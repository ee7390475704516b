#include "lsjit/compiler/cache/cache_key.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <sstream>

#include "lsjit/ir/op.h"
#include "lsjit/ir/structural_hash.h"

namespace lsjit::compiler {
namespace {

const char* on_off(bool b) { return b ? "on" : "off"; }

std::string vars_part(const ir::Signature& sig) {
  if (sig.vars.empty()) return "none";
  std::string s;
  for (const ir::VarSlot& v : sig.vars) {
    if (!s.empty()) s += ' ';
    s += (v.type.empty() ? "?" : v.type) + "(ambient=" + std::to_string(v.ambient) +
         ",tangent=" + std::to_string(v.tangent) + ")";
  }
  return s;
}

std::string data_part(const ir::Signature& sig) {
  if (sig.data.empty()) return "none";
  std::string s;
  for (const ir::DataSlot& d : sig.data) {
    if (!s.empty()) s += ' ';
    s += (d.type.empty() ? "?" : d.type) + "(" + std::to_string(d.rows) + "x" +
         std::to_string(d.cols) + ")";
  }
  return s;
}

std::string describe_node(const ir::Graph& g, ir::NodeId id) {
  const ir::Node& n = g[id];
  std::string s = "%" + std::to_string(id) + " = ";
  if (n.op == ir::Op::Const) {
    s += "const " + (n.type == ir::Type::Bool ? std::string(n.value != 0 ? "true" : "false")
                                              : format_double(n.value));
  } else if (n.op == ir::Op::Input) {
    static const char* kinds[] = {"var", "data", "tangent"};
    s += std::string("input ") + kinds[static_cast<int>(n.input.kind) % 3] + " slot " +
         std::to_string(n.input.slot) + "[" + std::to_string(n.input.component) + "]";
  } else {
    s += std::string(ir::name(n.op));
    for (int k = 0; k < n.num_args; ++k) s += " %" + std::to_string(n.args[k]);
    if (n.op == ir::Op::Powi) s += " " + std::to_string(n.int_attr);
  }
  return s;
}

bool same_shape(const ir::Node& a, const ir::Node& b) {
  if (a.op != b.op || a.type != b.type || a.num_args != b.num_args) return false;
  for (int k = 0; k < a.num_args; ++k)
    if (a.args[k] != b.args[k]) return false;
  if (a.op == ir::Op::Powi && a.int_attr != b.int_attr) return false;
  if (a.op == ir::Op::Input && !(a.input == b.input)) return false;
  // Bool constants are part of the graph's shape too (they decide selects).
  if (a.op == ir::Op::Const && a.type == ir::Type::Bool && a.value != b.value) return false;
  return true;
}

}  // namespace

std::string format_double(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string_view CacheKey::part(std::string_view name) const {
  for (const auto& [n, v] : parts)
    if (n == name) return v;
  return {};
}

std::optional<Hash128> parse_hash_hex(std::string_view hex) {
  if (hex.size() != 32) return std::nullopt;
  uint64_t words[2] = {0, 0};
  for (size_t i = 0; i < 32; ++i) {
    const char c = hex[i];
    uint64_t d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
    else return std::nullopt;
    words[i / 16] = (words[i / 16] << 4) | d;
  }
  return Hash128{words[0], words[1]};
}

Hash128 hash_key_parts(const std::vector<std::pair<std::string, std::string>>& parts) {
  StableHasher h;
  h.add("lsjit.cache_key.v1");
  h.add(static_cast<uint64_t>(parts.size()));
  for (const auto& [name, value] : parts) {
    h.add(name);
    h.add(value);
  }
  return h.finish();
}

CacheKey make_cache_key(std::vector<std::pair<std::string, std::string>> parts) {
  CacheKey key;
  key.hash = hash_key_parts(parts);
  key.parts = std::move(parts);
  return key;
}

CacheKey make_cache_key(const ir::Trace& traced, KernelMode mode, const CompileOptions& options,
                        const TargetInfo& target) {
  return make_cache_key(traced, mode, options, target, ir::structural_hash(traced));
}

CacheKey make_cache_key(const ir::Trace& traced, KernelMode mode, const CompileOptions& options,
                        const TargetInfo& target, const Hash128& structural_hash) {
  const ir::Signature& sig = traced.signature;
  std::vector<std::pair<std::string, std::string>> p;
  p.emplace_back("cost", sig.name);
  p.emplace_back("kind", std::string(ir::cost_kind_name(sig.kind)));
  p.emplace_back("structural_hash", structural_hash.hex());
  p.emplace_back("vars", vars_part(sig));
  p.emplace_back("data", data_part(sig));
  p.emplace_back("residuals", std::to_string(sig.residual_dim));
  p.emplace_back("mode", std::string(mode_name(mode)));
  p.emplace_back("options", "vector_width=" + std::to_string(options.vector_width) +
                                " fma_contraction=" + on_off(options.fma_contraction) +
                                " vector_math=" + on_off(options.vector_math) +
                                // Host, the default, is left out: every key made before
                                // levels existed keeps its id.
                                (options.cpu_level == CpuLevel::Host
                                     ? std::string()
                                     : " cpu_level=" + std::string(cpu_level_name(options.cpu_level))));
  p.emplace_back("host_cpu", target.cpu);
  p.emplace_back("host_cpuid", target.features);
  p.emplace_back("vector_width", std::to_string(target.vector_width));
  p.emplace_back("triple", target.triple);
  p.emplace_back("llvm_version", target.llvm_version);
  p.emplace_back("ir_version", std::to_string(kCacheIrVersion));
  return make_cache_key(std::move(p));
}

std::string kernel_symbol(const CacheKey& key) { return "lsjit_k_" + key.id(); }

bool is_data_key(const CacheKey& key) { return !key.parts.empty() && key.parts.front().first == "data"; }

std::vector<PartDifference> diff_keys(const CacheKey& before, const CacheKey& after) {
  std::vector<PartDifference> out;
  auto find = [](const CacheKey& k, const std::string& name) -> const std::string* {
    for (const auto& [n, v] : k.parts)
      if (n == name) return &v;
    return nullptr;
  };
  for (const auto& [name, value] : before.parts) {
    const std::string* other = find(after, name);
    if (!other)
      out.push_back({name, value, "(absent)"});
    else if (*other != value)
      out.push_back({name, value, *other});
  }
  for (const auto& [name, value] : after.parts)
    if (!find(before, name)) out.push_back({name, "(absent)", value});
  return out;
}

size_t equal_parts(const CacheKey& a, const CacheKey& b) {
  size_t n = 0;
  for (const auto& pa : a.parts)
    for (const auto& pb : b.parts)
      if (pa == pb) {
        ++n;
        break;
      }
  return n;
}

GraphDifference compare_graphs(const ir::Graph& before, const ir::Graph& after) {
  GraphDifference d;
  const size_t n = std::min(before.size(), after.size());
  for (size_t i = 0; i < n; ++i) {
    const ir::Node& a = before.nodes[i];
    const ir::Node& b = after.nodes[i];
    const auto id = static_cast<ir::NodeId>(i);
    if (!same_shape(a, b)) {
      d.kind = GraphDifference::Kind::OpGraph;
      d.detail = "node " + describe_node(before, id) + " is now " + describe_node(after, id);
      d.constants.clear();
      return d;
    }
    if (a.op == ir::Op::Const && std::bit_cast<uint64_t>(a.value) != std::bit_cast<uint64_t>(b.value))
      d.constants.push_back({id, a.value, b.value});
  }
  if (before.size() != after.size()) {
    d.kind = GraphDifference::Kind::OpGraph;
    d.detail = std::to_string(before.size()) + " nodes before, " + std::to_string(after.size()) +
               " now; the first " + std::to_string(n) + " have the same ops";
    d.constants.clear();
    return d;
  }
  if (before.outputs != after.outputs) {
    d.kind = GraphDifference::Kind::OpGraph;
    d.detail = "the same nodes, but different nodes are the outputs";
    d.constants.clear();
    return d;
  }
  d.kind = d.constants.empty() ? GraphDifference::Kind::Same : GraphDifference::Kind::Constants;
  return d;
}

namespace {
// The key parts that key_parts() takes from the cost's signature.
bool is_signature_part(std::string_view part) {
  return part == "kind" || part == "vars" || part == "data" || part == "residuals";
}
}  // namespace

std::string recompile_cause(const CacheKey& before, const CacheKey& after, const ir::Trace* traced_before,
                            const ir::Trace* traced_after) {
  std::string other_parts;
  bool hash_differs = false, signature_differs = false;
  for (const PartDifference& p : diff_keys(before, after)) {
    if (p.part == "structural_hash") hash_differs = true;
    else if (is_signature_part(p.part)) signature_differs = true;
    else other_parts += (other_parts.empty() ? "" : ", ") + p.part;
  }
  if (signature_differs)
    return "its signature (variable types, data shapes, residual dimension or kind) differs between the adds "
           "that share its name";
  if (!hash_differs)
    return "its compile options or target differ (" + (other_parts.empty() ? std::string("no part") : other_parts) + ")";
  if (traced_before && traced_after) {
    const GraphDifference g = compare_graphs(traced_before->graph, traced_after->graph);
    if (g.kind == GraphDifference::Kind::Constants)
      return "a value captured by the cost changes between instances; pass it as data";
    if (g.kind == GraphDifference::Kind::OpGraph)
      return "its op graph differs between the adds (different code under one name, or a branch on a captured "
             "value)";
  }
  return "the op graph or a captured value differs; a value that varies between instances belongs in data";
}

std::string explain_key_difference(const CacheKey& before, const CacheKey& after,
                                   const ir::Trace* traced_before, const ir::Trace* traced_after,
                                   std::string_view prefix) {
  std::ostringstream out;
  const std::vector<PartDifference> diffs = diff_keys(before, after);
  if (diffs.empty()) {
    out << prefix << "no part differs (the keys are equal)\n";
    return out.str();
  }
  bool hash_differs = false;
  bool signature_differs = false;
  for (const PartDifference& p : diffs) {
    out << prefix << p.part << ": " << p.before << " -> " << p.after << "\n";
    if (p.part == "structural_hash") hash_differs = true;
    if (is_signature_part(p.part)) signature_differs = true;
  }
  if (!hash_differs) return out.str();
  if (signature_differs) {
    out << prefix
        << "the structural hash differs because the cost's signature (variable types, data "
           "shapes, residual dimension or kind) differs\n";
    return out.str();
  }
  const char* advice =
      "captured values are baked into the kernel as constants: pass values that vary "
      "between instances as data arguments instead";
  GraphDifference g;
  if (traced_before && traced_after) g = compare_graphs(traced_before->graph, traced_after->graph);
  if (traced_before && traced_after && g.kind == GraphDifference::Kind::Constants) {
    out << prefix << "the signature is equal and the op graph is the same; "
        << (g.constants.size() == 1 ? "a captured constant differs:"
                                    : std::to_string(g.constants.size()) +
                                          " captured constants differ:")
        << "\n";
    const size_t shown = std::min<size_t>(g.constants.size(), 8);
    for (size_t i = 0; i < shown; ++i)
      out << prefix << "  constant %" << g.constants[i].node << ": "
          << format_double(g.constants[i].before) << " -> " << format_double(g.constants[i].after)
          << "\n";
    if (shown < g.constants.size())
      out << prefix << "  ... and " << g.constants.size() - shown << " more\n";
    out << prefix << advice << "\n";
  } else if (traced_before && traced_after && g.kind == GraphDifference::Kind::OpGraph) {
    out << prefix << "the signature is equal but the op graph differs: " << g.detail << "\n";
    out << prefix << "if that comes from a captured value (a branch on it, or a constant that "
        << "folded away), " << advice << "\n";
  } else if (traced_before && traced_after) {
    out << prefix << "the signature and the graph are equal; the stage differs\n";
  } else {
    out << prefix << "the signature is equal, so the op graph or a captured constant differs; "
        << advice << "\n";
  }
  return out.str();
}

}  // namespace lsjit::compiler
