#include "lsjit/compiler/tier0/tier0_flatten.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "lsjit/common/cpu.h"
#include "lsjit/common/error.h"

namespace lsjit::compiler {

namespace {

using ir::NodeId;
using ir::Op;
constexpr uint32_t kNever = 0xffffffffu;
using Unary = double (*)(double);
using Binary = double (*)(double, double);

// The libm function codegen calls per lane for `name` (declared by that name in the
// kernel, so resolved to the same libm symbol).
void* libm_function(std::string_view name) {
  struct Entry {
    std::string_view name;
    void* f;
  };
  static const Entry table[] = {
      {"cbrt", reinterpret_cast<void*>(static_cast<Unary>(::cbrt))},
      {"exp", reinterpret_cast<void*>(static_cast<Unary>(::exp))},
      {"expm1", reinterpret_cast<void*>(static_cast<Unary>(::expm1))},
      {"log", reinterpret_cast<void*>(static_cast<Unary>(::log))},
      {"log1p", reinterpret_cast<void*>(static_cast<Unary>(::log1p))},
      {"pow", reinterpret_cast<void*>(static_cast<Binary>(::pow))},
      {"sin", reinterpret_cast<void*>(static_cast<Unary>(::sin))},
      {"cos", reinterpret_cast<void*>(static_cast<Unary>(::cos))},
      {"tan", reinterpret_cast<void*>(static_cast<Unary>(::tan))},
      {"asin", reinterpret_cast<void*>(static_cast<Unary>(::asin))},
      {"acos", reinterpret_cast<void*>(static_cast<Unary>(::acos))},
      {"atan", reinterpret_cast<void*>(static_cast<Unary>(::atan))},
      {"atan2", reinterpret_cast<void*>(static_cast<Binary>(::atan2))},
      {"sinh", reinterpret_cast<void*>(static_cast<Unary>(::sinh))},
      {"cosh", reinterpret_cast<void*>(static_cast<Unary>(::cosh))},
      {"tanh", reinterpret_cast<void*>(static_cast<Unary>(::tanh))},
      {"hypot", reinterpret_cast<void*>(static_cast<Binary>(::hypot))},
  };
  for (const Entry& e : table)
    if (e.name == name) return e.f;
  return nullptr;
}

class Flattener {
 public:
  // `stores`: per node, the places (array, offset) its value is stored to. `segments`:
  // whether runs of segment_op() nodes become Segment steps (else every op is a step).
  Flattener(const ir::Graph& graph, const KernelLayout& layout, const CompileOptions& options,
            const std::vector<std::vector<KernelLayout::Place>>& stores, bool segments)
      : g_(graph), layout_(layout), options_(options), width_(resolve_vector_width(options.vector_width, options.cpu_level)),
        stores_(stores), segments_enabled_(segments), column_(graph.size(), kNever), unit_of_(graph.size(), kNever),
        last_unit_(graph.size(), 0), segment_op_(segments ? graph.size() : 0, kNever),
        constant_index_(segments ? graph.size() : 0, kNever) {}

  // Steps for every live node. Without segments: in node order, each output's stores right
  // after its node, and a register released after its value's last use (as an argument or
  // a store), so an output does not hold a register to the end (storing every output at
  // the end would keep them all live, and the scratch would grow by them). With
  // segments, loads and the constants a step reads come first and the stores last, an
  // output array at a time: a segment writes all its outputs at once anyway.
  void run() {
    plan_units();
    mark_columns();
    for (uint32_t u = 0; u < units_.size(); ++u) emit_unit(u);
    if (segments_enabled_) emit_stores();
  }
  Tier0Program take() {
    return {std::move(steps_), std::move(rows_), std::move(arrays_), std::move(segments_),
            std::move(segment_constants_), next_};
  }

 private:
  // A unit is one step's node, a segment's run of nodes, or (with segments) the inputs one
  // LoadRows step reads.
  enum class UnitKind : uint8_t { Step, Segment, Rows };
  struct Unit {
    UnitKind kind;
    std::vector<NodeId> nodes;
  };

  bool in_segment(const ir::Node& n) const {
    if (!segments_enabled_) return false;
    if (n.op == Op::Powi) return n.int_attr != 0 && n.int_attr != 1 && std::abs(int64_t{n.int_attr}) <= 16;
    return segment_op(n.op);
  }
  // A constant that no step reads and that is not stored lives in the segments' pool only.
  bool pool_only(NodeId i) const { return segments_enabled_ && g_[i].op == Op::Const && !column_constant_[i]; }

  void plan_units() {
    live_ = ir::live_nodes(g_);
    column_constant_.assign(g_.size(), false);
    for (NodeId i = 0; i < g_.size(); ++i) {
      if (!live_[i]) continue;
      const ir::Node& n = g_[i];
      if (n.op == Op::Const && !stores_[i].empty()) column_constant_[i] = true;
      if (!in_segment(n))
        for (int k = 0; k < n.num_args; ++k) column_constant_[n.args[k]] = true;
    }
    if (segments_enabled_) {  // loads (a unit per variable slot, one for data) and column
                              // constants first: they break no segment there
      for (NodeId i = 0; i < g_.size(); ++i)
        if (live_[i] && g_[i].op == Op::Const && column_constant_[i]) add_unit(UnitKind::Step, i);
      std::vector<uint32_t> rows_unit(layout_.num_vars + 1, kNever);
      for (NodeId i = 0; i < g_.size(); ++i) {
        if (!live_[i] || g_[i].op != Op::Input) continue;
        const ir::InputRef& in = g_[i].input;
        if (in.kind != ir::InputKind::Var && in.kind != ir::InputKind::Data)
          throw Error("tier 0: a kernel graph has no tangent inputs");
        uint32_t& u = rows_unit[in.kind == ir::InputKind::Var ? in.slot : layout_.num_vars];
        if (u == kNever) {
          u = static_cast<uint32_t>(units_.size());
          units_.push_back({UnitKind::Rows, {}});
        }
        units_[u].nodes.push_back(i);
        unit_of_[i] = u;
      }
    }
    for (NodeId i = 0; i < g_.size(); ++i) {
      if (!live_[i] || unit_of_[i] != kNever || pool_only(i)) continue;
      if (in_segment(g_[i])) {
        if (units_.empty() || units_.back().kind != UnitKind::Segment) units_.push_back({UnitKind::Segment, {}});
        units_.back().nodes.push_back(i);
        unit_of_[i] = static_cast<uint32_t>(units_.size() - 1);
      } else {
        add_unit(UnitKind::Step, i);
      }
    }
  }
  void add_unit(UnitKind kind, NodeId i) {
    units_.push_back({kind, {i}});
    unit_of_[i] = static_cast<uint32_t>(units_.size() - 1);
  }

  // Which values need a column (every step's; a segment's when something outside it reads
  // it or it is stored) and the last unit that reads each column.
  void mark_columns() {
    needs_column_.assign(g_.size(), false);
    for (NodeId i = 0; i < g_.size(); ++i) {
      if (!live_[i] || unit_of_[i] == kNever) continue;
      const uint32_t u = unit_of_[i];
      if (units_[u].kind != UnitKind::Segment || !stores_[i].empty()) needs_column_[i] = true;
      // Its stores follow its unit, or with segments close the step list (the epilogue,
      // "unit" units_.size()).
      last_unit_[i] = std::max(last_unit_[i], u);
      if (segments_enabled_ && !stores_[i].empty()) last_unit_[i] = static_cast<uint32_t>(units_.size());
      const ir::Node& n = g_[i];
      for (int k = 0; k < n.num_args; ++k) {
        const NodeId a = n.args[k];
        if (unit_of_[a] == u || pool_only(a)) continue;
        needs_column_[a] = true;
        last_unit_[a] = std::max(last_unit_[a], u);
      }
    }
  }

  void emit_unit(uint32_t u) {
    const Unit& unit = units_[u];
    // Columns for what the unit writes, taken before what it reads is released: a
    // segment reads its inputs while it writes its outputs.
    for (NodeId i : unit.nodes)
      if (needs_column_[i]) column_[i] = allocate();
    if (unit.kind == UnitKind::Segment) emit_segment(u);
    else if (unit.kind == UnitKind::Rows) emit_rows(unit);
    else emit_step(unit.nodes[0], g_[unit.nodes[0]]);
    if (!segments_enabled_)
      for (NodeId i : unit.nodes)
        for (const KernelLayout::Place& p : stores_[i]) emit_store(column_[i], p);
    for (NodeId i : unit.nodes) {
      const ir::Node& n = g_[i];
      for (int k = 0; k < n.num_args; ++k)
        if (last_unit_[n.args[k]] == u) release(n.args[k]);
      if (last_unit_[i] == u) release(i);
    }
  }

  uint32_t allocate() {
    if (free_.empty()) return next_++;
    const uint32_t r = free_.back();
    free_.pop_back();
    return r;
  }
  void release(NodeId node) {
    if (column_[node] == kNever) return;
    free_.push_back(column_[node]);
    column_[node] = kNever;  // released once (an op may use the same argument twice)
  }
  uint32_t arg(const ir::Node& n, int k) const { return k < n.num_args ? column_[n.args[k]] : 0; }

  void emit_store(uint32_t column, const KernelLayout::Place& p) {
    Tier0Kernel::Step st;
    st.kind = Tier0Kernel::Kind::Store;
    st.dst = column;
    st.a = p.array;
    st.b = p.offset;
    steps_.push_back(st);
  }

  // Tiles of 8 consecutive offsets from the lowest: (offset, column) pairs in any order.
  static std::vector<Tier0Kernel::Tile> tiles(std::vector<std::pair<uint32_t, uint32_t>> at) {
    std::sort(at.begin(), at.end());
    std::vector<Tier0Kernel::Tile> out;
    for (const auto& [offset, column] : at) {
      if (out.empty() || offset >= out.back().first + 8) out.push_back({offset, 0, {}});
      const uint32_t k = offset - out.back().first;
      out.back().mask = static_cast<uint8_t>(out.back().mask | 1u << k);
      out.back().column[k] = column;
    }
    return out;
  }

  void emit_rows(const Unit& unit) {
    const ir::InputRef& first = g_[unit.nodes[0]].input;
    Tier0Kernel::RowLoad load{first.kind == ir::InputKind::Data, first.slot, {}};
    std::vector<std::pair<uint32_t, uint32_t>> at;
    for (NodeId i : unit.nodes) {
      const ir::InputRef& in = g_[i].input;
      at.emplace_back(load.data ? layout_.data_offset.at(in.slot) + in.component : in.component, column_[i]);
    }
    load.tiles = tiles(std::move(at));
    Tier0Kernel::Step st;
    st.kind = Tier0Kernel::Kind::LoadRows;
    st.a = static_cast<uint32_t>(rows_.size());
    rows_.push_back(std::move(load));
    steps_.push_back(st);
  }

  // With segments, every store at the end: an array whose every offset is stored in one
  // StoreArray step, any other value by its own Store.
  void emit_stores() {
    std::vector<std::vector<std::pair<uint32_t, uint32_t>>> by_array(layout_.outputs.size());
    for (NodeId i = 0; i < g_.size(); ++i)
      for (const KernelLayout::Place& p : stores_[i]) by_array[p.array].emplace_back(p.offset, column_[i]);
    for (uint32_t a = 0; a < by_array.size(); ++a) {
      std::vector<bool> covered(layout_.outputs[a].per_instance, false);
      for (const auto& [offset, column] : by_array[a]) covered[offset] = true;
      if (by_array[a].empty()) continue;
      if (std::find(covered.begin(), covered.end(), false) != covered.end()) {
        for (const auto& [offset, column] : by_array[a]) emit_store(column, {a, offset});
        continue;
      }
      Tier0Kernel::Step st;
      st.kind = Tier0Kernel::Kind::StoreArray;
      st.a = static_cast<uint32_t>(arrays_.size());
      arrays_.push_back({a, tiles(std::move(by_array[a]))});
      steps_.push_back(st);
    }
  }

  void emit_step(NodeId i, const ir::Node& n) {
    Tier0Kernel::Step s;
    s.dst = column_[i];
    s.op = n.op;
    switch (n.op) {
      case Op::Const:
        s.kind = Tier0Kernel::Kind::Constant;
        s.value = n.value;
        break;
      case Op::Input:
        if (n.input.kind == ir::InputKind::Var) {
          s.kind = Tier0Kernel::Kind::LoadVar;
          s.a = n.input.slot;
          s.b = n.input.component;
        } else if (n.input.kind == ir::InputKind::Data) {
          s.kind = Tier0Kernel::Kind::LoadData;
          s.b = layout_.data_offset.at(n.input.slot) + n.input.component;
        } else {
          throw Error("tier 0: a kernel graph has no tangent inputs");
        }
        break;
      default:
        s.a = arg(n, 0);
        s.b = arg(n, 1);
        s.c = arg(n, 2);
        s.int_attr = n.int_attr;
        if (n.op == Op::Powi && std::abs(int64_t{n.int_attr}) > 16) {
          // codegen calls pow(x, n) past |n| = 16: the exponent is a constant register.
          Tier0Kernel::Step k;
          k.kind = Tier0Kernel::Kind::Constant;
          k.dst = s.b = allocate();
          k.value = static_cast<double>(n.int_attr);
          steps_.push_back(k);
          math(s, "pow", 2);
          steps_.push_back(s);
          free_.push_back(s.b);
          return;
        }
        if (const char* name = libm_name(n.op)) math(s, name, n.num_args);
        else s.kind = Tier0Kernel::Kind::Op;  // (the kernel refuses an op it has no loop for)
    }
    steps_.push_back(s);
  }

  void math(Tier0Kernel::Step& s, const char* name, unsigned arity) {
    s.kind = Tier0Kernel::Kind::MathCall;
    s.arity = static_cast<uint8_t>(arity);
    s.variant = math_variant(options_, width_, name, arity);
    s.function = s.variant.lanes ? libmvec_function(mvec_symbol(s.variant, name, arity))
                                 : libm_function(name);
    if (!s.function) throw Error(std::string("tier 0: no function for ") + name);
  }

  // ---- segments

  void emit_segment(uint32_t u) {
    Segment seg;
    auto ref = [&](NodeId a) -> Segment::Ref {
      if (unit_of_[a] == u) return {Segment::Ref::Kind::Result, segment_op_[a]};  // its final op
      if (pool_only(a)) {  // one pool entry per constant node, however often it is read
        if (constant_index_[a] == kNever) constant_index_[a] = constant(g_[a].value).index;
        return {Segment::Ref::Kind::Constant, constant_index_[a]};
      }
      return {Segment::Ref::Kind::Column, column_[a]};
    };
    const Unit& unit = units_[u];
    for (NodeId i : unit.nodes) {
      const ir::Node& n = g_[i];
      Segment::Ref r;
      if (n.op == Op::Powi) {
        r = powi(seg, ref(n.args[0]), n.int_attr);
      } else {
        Segment::Op o{n.op, static_cast<uint8_t>(n.num_args), {}, -1};
        for (int k = 0; k < n.num_args; ++k) o.args[k] = ref(n.args[k]);
        r = push(seg, o);
      }
      if (needs_column_[i]) seg.ops[r.index].column = column_[i];
      segment_op_[i] = r.index;
    }
    Tier0Kernel::Step st;
    st.kind = Tier0Kernel::Kind::Segment;
    st.c = static_cast<uint32_t>(segments_.size());
    segments_.push_back(std::move(seg));
    steps_.push_back(st);
  }
  static Segment::Ref push(Segment& seg, const Segment::Op& o) {
    seg.ops.push_back(o);
    return {Segment::Ref::Kind::Result, static_cast<uint32_t>(seg.ops.size() - 1)};
  }
  Segment::Ref constant(double value) {
    segment_constants_.push_back(value);
    return {Segment::Ref::Kind::Constant, static_cast<uint32_t>(segment_constants_.size() - 1)};
  }
  // pow(x, n) for 2 <= |n| <= 16 or n = -1, as the powi loop (and codegen's lower_powi)
  // computes it: the same products in the same order, then 1 / result for n < 0.
  Segment::Ref powi(Segment& seg, Segment::Ref x, int32_t n) {
    const int64_t m = n < 0 ? -static_cast<int64_t>(n) : n;
    Segment::Ref result{}, square = x;
    bool have = false;
    for (int64_t k = m;; k >>= 1) {
      if (k & 1) {
        result = have ? push(seg, {Op::Mul, 2, {result, square}, -1}) : square;
        have = true;
      }
      if (k <= 1) break;
      square = push(seg, {Op::Mul, 2, {square, square}, -1});
    }
    return n < 0 ? push(seg, {Op::Div, 2, {constant(1.0), result}, -1}) : result;
  }

  const ir::Graph& g_;
  const KernelLayout& layout_;
  const CompileOptions& options_;
  const uint32_t width_;
  const std::vector<std::vector<KernelLayout::Place>>& stores_;
  const bool segments_enabled_;
  std::vector<bool> live_, column_constant_, needs_column_;
  std::vector<Unit> units_;
  std::vector<uint32_t> column_, unit_of_, last_unit_;
  std::vector<Tier0Kernel::Step> steps_;
  std::vector<Tier0Kernel::RowLoad> rows_;
  std::vector<Tier0Kernel::ArrayStore> arrays_;
  std::vector<Segment> segments_;
  std::vector<double> segment_constants_;
  std::vector<uint32_t> segment_op_, constant_index_;  // per node: its op in its segment; its pool entry
  std::vector<uint32_t> free_;
  uint32_t next_ = 0;
};

}  // namespace

Tier0Program flatten_for_tier0(const ir::Graph& graph, const KernelLayout& layout, const CompileOptions& options,
                               const std::vector<std::vector<KernelLayout::Place>>& stores, bool segments) {
  Flattener f(graph, layout, options, stores, segments);
  f.run();
  return f.take();
}

}  // namespace lsjit::compiler
