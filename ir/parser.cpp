#include "lsjit/ir/parser.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "lsjit/common/error.h"
#include "lsjit/ir/verify.h"
#include "lsjit/ir/work_limits.h"

namespace lsjit::ir {
namespace {

constexpr uint64_t kDefaultNan = 0x7ff8000000000000ull;
constexpr uint64_t kSignBit = 0x8000000000000000ull;
constexpr uint64_t kExponent = 0x7ff0000000000000ull;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }
bool is_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
// Characters of a word token: names, keywords, numbers (including 1e+100, -inf).
bool is_word_char(char c) { return is_alnum(c) || c == '_' || c == '.' || c == '-' || c == '+'; }

std::optional<double> parse_f64(std::string_view w, bool* out_of_range) {
  if (w == "nan") return std::bit_cast<double>(kDefaultNan);
  if (w == "-nan") return std::bit_cast<double>(kDefaultNan | kSignBit);
  if (w == "inf") return std::numeric_limits<double>::infinity();
  if (w == "-inf") return -std::numeric_limits<double>::infinity();
  // from_chars also reads "infinity", "NaN" and so on; the format has only the above.
  const size_t digits = !w.empty() && w[0] == '-' ? 1 : 0;
  if (w.size() <= digits || !((w[digits] >= '0' && w[digits] <= '9') || w[digits] == '.'))
    return std::nullopt;
  double v = 0;
  const auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
  if (ec == std::errc::result_out_of_range) *out_of_range = true;
  if (ec != std::errc() || end != w.data() + w.size()) return std::nullopt;
  return v;
}

// A variable's size beyond this is not a variable but an attack: the differentiation
// passes allocate per tangent component (docs/formats.md, "Limits").
constexpr uint32_t kMaxVariableDimension = 1024;
// Slots: the runtime takes at most 16 variables per cost (runtime/analyze/problem_layout.h,
// kMaxSlots); the printer and the normal equations loop over slot pairs.
constexpr uint32_t kMaxVariableSlots = 64;
constexpr uint32_t kMaxDataSlots = 64;
// All data components of one instance together (a kernel copies them per instance).
constexpr uint64_t kMaxDataComponents = uint64_t{1} << 16;

struct TypeSizes {
  uint32_t ambient, tangent;
};

// The sizes of the variable types of docs/variables.md, or nullopt for another type name
// (a custom type, interop's "SE3.ambient"), whose sizes are the declaration's.
std::optional<TypeSizes> known_type_sizes(std::string_view type) {
  static constexpr std::pair<std::string_view, TypeSizes> kKnown[] = {
      {"Scalar", {1, 1}}, {"SO2", {2, 1}}, {"SE2", {4, 3}}, {"SO3", {4, 3}}, {"SE3", {7, 6}}};
  for (const auto& [name, sizes] : kKnown)
    if (type == name) return sizes;
  // VecN, N = 1..32 (VecVar<N>); "Vec0" and "Vec01" are not names VecVar prints.
  if (type.size() > 3 && type.starts_with("Vec") && type[3] != '0') {
    uint32_t n = 0;
    const auto [end, ec] = std::from_chars(type.data() + 3, type.data() + type.size(), n);
    if (ec == std::errc() && end == type.data() + type.size() && n >= 1 && n <= 32)
      return TypeSizes{n, n};
  }
  return std::nullopt;
}

// One line of the text without its comment, and a read position in it. Every error is
// reported at a byte of the line.
class Line {
 public:
  Line(std::string_view source, int number, std::string_view text)
      : source_(source), number_(number), text_(text) {}

  int number() const { return number_; }
  size_t start() const { return start_; }  // where the last token read begins
  bool at_end() { return skip(), pos_ == text_.size(); }
  char peek() { return skip(), pos_ < text_.size() ? text_[pos_] : '\0'; }
  char peek_raw() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }

  // The longest run of word characters from here; may be empty.
  std::string_view word() {
    skip();
    start_ = pos_;
    while (pos_ < text_.size() && is_word_char(text_[pos_])) ++pos_;
    return text_.substr(start_, pos_ - start_);
  }
  // The longest run of characters other than spaces (type names); may be empty.
  std::string_view nonspace() {
    skip();
    start_ = pos_;
    while (pos_ < text_.size() && !is_space(text_[pos_])) ++pos_;
    return text_.substr(start_, pos_ - start_);
  }
  // Up to and including `close`, stopping early at a space or the end of the line.
  std::string_view through(char close) {
    const size_t from = pos_;
    while (pos_ < text_.size() && !is_space(text_[pos_]) && text_[pos_] != close) ++pos_;
    if (pos_ < text_.size() && text_[pos_] == close) ++pos_;
    return text_.substr(from, pos_ - from);
  }

  std::string describe(size_t at) const {
    if (at >= text_.size()) return "end of line";
    size_t end = at + (text_[at] == '%' ? 1 : 0);
    while (end < text_.size() && is_word_char(text_[end])) ++end;
    // A few dozen bytes say which token it is; a megabyte-long word is cut.
    constexpr size_t kShown = 40;
    const size_t length = std::max(end, at + 1) - at;
    if (length <= kShown) return quoted(text_.substr(at, length));
    return quoted(text_.substr(at, kShown)) + "...";
  }

  [[noreturn]] void fail_at(size_t at, std::string_view expected, std::string_view found) const {
    throw Error(std::string(source_) + ":" + std::to_string(number_) + ":" +
                std::to_string(at + 1) + ": expected " + std::string(expected) + ", found " +
                std::string(found));
  }
  [[noreturn]] void fail_token(std::string_view expected) const {
    fail_at(start_, expected, describe(start_));
  }
  [[noreturn]] void fail_here(std::string_view expected) {
    skip();
    start_ = pos_;
    fail_token(expected);
  }

  void expect(char c, std::string_view expected) {
    if (peek() != c) fail_here(expected);
    start_ = pos_++;
  }
  void keyword(std::string_view kw, std::string_view expected) {
    if (word() != kw) fail_token(expected);
  }
  // `key=`
  void key(std::string_view k) {
    keyword(k, quoted(std::string(k) + "="));
    if (peek_raw() != '=') fail_here(quoted(std::string(k) + "="));
    ++pos_;
  }
  uint32_t uint(std::string_view expected) {
    const std::string_view w = word();
    uint32_t v = 0;
    const auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
    if (w.empty() || ec != std::errc() || end != w.data() + w.size()) fail_token(expected);
    return v;
  }
  // `%N`; start() is left at the `%`.
  uint32_t node_ref(std::string_view expected) {
    const size_t at = (skip(), pos_);
    if (peek_raw() != '%') fail_here(expected);
    ++pos_;
    const std::string_view w = word();
    start_ = at;
    uint32_t v = 0;
    const auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
    if (w.empty() || ec != std::errc() || end != w.data() + w.size()) fail_token(expected);
    return v;
  }
  void end_of_line(std::string_view expected) {
    if (!at_end()) fail_here(expected);
  }

 private:
  void skip() {
    while (pos_ < text_.size() && is_space(text_[pos_])) ++pos_;
  }

  std::string_view source_;
  int number_;
  std::string_view text_;
  size_t pos_ = 0, start_ = 0;
};

class Parser {
 public:
  // A UTF-8 byte order mark at the start is skipped (columns of line 1 count from after it).
  Parser(std::string_view text, std::string_view source) : text_(text), source_(source) {
    if (text_.starts_with("\xEF\xBB\xBF")) text_.remove_prefix(3);
  }

  Trace run() {
    if (!next_line()) fail_at_eof("the header 'lsjit.ir 1'");
    header(*line_);
    if (!next_line()) fail_at_eof("the cost line 'cost NAME kind=KIND stage=STAGE residuals=N'");
    cost(*line_);
    enum { kDecls, kNodes, kOutputs } section = kDecls;
    size_t end_at = 0;  // the column of `end`
    const char* const kNext[] = {"a declaration (var, data), a node, an output or 'end'",
                                 "a node, an output or 'end'", "an output or 'end'"};
    while (true) {
      if (!next_line()) fail_at_eof("'end' (the text is truncated)");
      Line& l = *line_;
      if (l.peek() == '%') {
        if (section == kOutputs) l.fail_here("an output or 'end' (nodes come before outputs)");
        section = kNodes;
        node(l);
        continue;
      }
      const std::string_view w = l.word();
      if (w == "var" || w == "data") {
        if (section != kDecls)
          l.fail_token(std::string(kNext[section]) + " (declarations come before nodes)");
        declaration(l, w == "var");
      } else if (const std::optional<OutputRole> role = output_role(w)) {
        if (!stage_has_role(trace_.stage, *role)) l.fail_token(outputs_of_stage(*role));
        section = kOutputs;
        output(l, *role);
      } else if (w == "end") {
        end_at = l.start();
        l.end_of_line("end of line after 'end'");
        break;
      } else {
        l.fail_token(kNext[section]);
      }
    }
    const Line end_line = *line_;
    if (next_line()) line_->fail_here("nothing but comments after 'end'");
    whole_trace(end_line, end_at);
    return std::move(trace_);
  }

 private:
  struct Declared {
    uint32_t slot;
    int line;
  };
  using Names = std::map<std::string, Declared, std::less<>>;

  static std::optional<OutputRole> output_role(std::string_view w) {
    if (w == "res") return OutputRole::Residual;
    if (w == "J") return OutputRole::Jacobian;
    if (w == "cost") return OutputRole::Cost;
    if (w == "g") return OutputRole::Gradient;
    if (w == "H") return OutputRole::Hessian;
    return std::nullopt;
  }

  // What may be written where an output of `role` is, which the stage does not have.
  std::string outputs_of_stage(OutputRole role) const {
    const std::string stage = "stage " + std::string(stage_name(trace_.stage));
    std::string expected = stage_has_normal_equations(trace_.stage)
                               ? "an output 'cost', 'g[VAR](ROW)', 'H[VAR,VAR](ROW,COL)' or 'end'"
                           : stage_has_jacobian(trace_.stage)
                               ? "an output 'res[ROW]', 'J[VAR](ROW,COL)' or 'end'"
                               : "a residual output 'res[ROW]' or 'end'";
    switch (role) {
      case OutputRole::Residual: return expected + " (" + stage + " has no residual outputs)";
      case OutputRole::Jacobian: return expected + " (" + stage + " has no Jacobian outputs)";
      default: return expected + " (" + stage + " has no normal-equation outputs)";
    }
  }

  // Moves to the next line that is not blank once its comment is removed.
  bool next_line() {
    while (offset_ <= text_.size()) {
      size_t end = text_.find('\n', offset_);
      if (end == std::string_view::npos) end = text_.size();
      std::string_view text = text_.substr(offset_, end - offset_);
      text = text.substr(0, text.find('#'));
      offset_ = end + 1;
      line_.emplace(source_, ++line_number_, text);
      if (!line_->at_end()) return true;
    }
    return false;
  }

  [[noreturn]] void fail_at_eof(std::string_view expected) const {
    const size_t last_newline = text_.rfind('\n');
    const size_t column = last_newline == std::string_view::npos ? text_.size() + 1
                                                                 : text_.size() - last_newline;
    const int line = 1 + static_cast<int>(std::count(text_.begin(), text_.end(), '\n'));
    throw Error(std::string(source_) + ":" + std::to_string(line) + ":" +
                std::to_string(column) + ": expected " + std::string(expected) +
                ", found end of file");
  }

  // At `end`: the checks that need the whole trace. The parser has checked every other
  // invariant of verify.h where it read the token; verify() runs last as a backstop, so a
  // check missing here is still an lsjit::Error and not a malformed trace.
  void whole_trace(const Line& l, size_t at) {
    const Signature& sig = trace_.signature;
    if (const auto missing = first_missing_output(sig, trace_.stage, trace_.graph.outputs)) {
      if (missing->role == OutputRole::Residual)
        l.fail_at(at, "an output for every residual row (residuals=" +
                          std::to_string(sig.residual_dim) + ") before 'end'",
                  "none for " + output_name(sig, *missing));
      switch (missing->role) {
        case OutputRole::Jacobian:
          l.fail_at(at, "a Jacobian output for every variable, residual row and tangent column "
                        "at stage jacobian before 'end'",
                    "none for " + output_name(sig, *missing));
        case OutputRole::Cost:
          l.fail_at(at, "a cost output at stage normal_equations before 'end'", "none");
        case OutputRole::Gradient:
          l.fail_at(at, "a gradient output for every variable and tangent row at stage "
                        "normal_equations before 'end'",
                    "none for " + output_name(sig, *missing));
        default:
          l.fail_at(at, "a Hessian output for every pair of variables v <= w and every "
                        "entry of H[v,w] at stage normal_equations before 'end'",
                    "none for " + output_name(sig, *missing));
      }
    }
    try {
      verify(trace_);
    } catch (const std::logic_error& e) {
      l.fail_at(at, "a trace that keeps the invariants of verify.h", e.what());
    }
  }

  void header(Line& l) {
    l.keyword("lsjit.ir", "the header 'lsjit.ir 1'");
    if (l.uint("a format version") != 1) l.fail_token("format version 1");
    l.end_of_line("end of line after the header");
  }

  void cost(Line& l) {
    Signature& sig = trace_.signature;
    l.keyword("cost", "the cost line 'cost NAME kind=KIND stage=STAGE residuals=N'");
    const std::string_view name = l.word();
    if (!is_cost_name(name)) l.fail_token("a cost name (letters, digits, '_', '.', '-')");
    sig.name = name;
    l.key("kind");
    const std::optional<CostKind> kind = cost_kind_from_name(l.word());
    if (!kind) l.fail_token("a cost kind (least_squares, equality, inequality_le, inequality_ge)");
    sig.kind = *kind;
    l.key("stage");
    const std::optional<Stage> stage = stage_from_name(l.word());
    if (!stage) l.fail_token("a stage (traced, simplified, jacobian, normal_equations)");
    trace_.stage = *stage;
    l.key("residuals");
    sig.residual_dim = at_least_1(l, "the number of residuals");
    l.end_of_line("end of line after the cost line");
  }

  void declaration(Line& l, bool is_var) {
    const std::string what = is_var ? "variable" : "data";
    const size_t declared = is_var ? trace_.signature.vars.size() : trace_.signature.data.size();
    if (declared >= (is_var ? kMaxVariableSlots : kMaxDataSlots))
      l.fail_token("at most " + std::to_string(is_var ? kMaxVariableSlots : kMaxDataSlots) + " " + what +
                   " declarations");
    const std::string_view name = l.word();
    if (!is_identifier(name)) l.fail_token("a " + what + " name (an identifier)");
    Names& names = is_var ? var_names_ : data_names_;
    if (auto it = names.find(name); it != names.end())
      l.fail_at(l.start(), "a new " + what + " name",
                quoted(name) + ", already declared at line " + std::to_string(it->second.line));
    l.expect(':', "':' and the type of " + std::string(name));
    const std::string_view type = l.nonspace();
    if (!is_type_name(type)) l.fail_token("the type of " + std::string(name));
    const uint32_t slot = static_cast<uint32_t>(is_var ? trace_.signature.vars.size()
                                                       : trace_.signature.data.size());
    names.emplace(std::string(name), Declared{slot, l.number()});
    if (is_var) {
      VarSlot v{std::string(name), std::string(type)};
      l.key("ambient");
      const std::optional<TypeSizes> sizes = known_type_sizes(type);
      v.ambient = dimension(l, "ambient", type, sizes ? sizes->ambient : 0);
      l.key("tangent");
      v.tangent = dimension(l, "tangent", type, sizes ? sizes->tangent : 0);
      trace_.signature.vars.push_back(std::move(v));
    } else {
      DataSlot d{std::string(name), std::string(type)};
      l.key("rows");
      d.rows = at_least_1(l, "the number of rows");
      l.key("cols");
      d.cols = at_least_1(l, "the number of columns");
      if (uint64_t{d.rows} * d.cols > UINT32_MAX) l.fail_token("rows*cols below 2^32");
      data_components_ += uint64_t{d.rows} * d.cols;
      if (data_components_ > kMaxDataComponents)
        l.fail_token("at most " + std::to_string(kMaxDataComponents) + " data components in all");
      trace_.signature.data.push_back(std::move(d));
    }
    l.end_of_line("end of line after the declaration");
  }

  // A declared name; returns its slot.
  uint32_t slot_name(Line& l, bool is_var) {
    const Names& names = is_var ? var_names_ : data_names_;
    const std::string_view name = l.word();
    if (auto it = names.find(name); it != names.end()) return it->second.slot;
    std::vector<std::string> in_order(names.size());
    for (const auto& [n, d] : names) in_order[d.slot] = n;
    std::string list;
    for (const std::string& n : in_order) list += (list.empty() ? "" : ", ") + n;
    l.fail_token(std::string(is_var ? "a declared variable" : "a declared data slot") + " (" +
                 (list.empty() ? "none is declared" : list) + ")");
  }

  uint32_t at_least_1(Line& l, std::string_view what) {
    const uint32_t v = l.uint(what);
    if (v == 0) l.fail_token(std::string(what) + " (at least 1)");
    return v;
  }

  // The ambient or tangent size of a variable of `type`: `expected` when the type is one
  // of docs/variables.md (expected > 0), else at most kMaxVariableDimension.
  uint32_t dimension(Line& l, std::string_view which, std::string_view type, uint32_t expected) {
    const std::string what = "the " + std::string(which) + " dimension";
    const uint32_t v = at_least_1(l, what);
    if (expected != 0 && v != expected)
      l.fail_token(std::string(which) + "=" + std::to_string(expected) + ", " + what + " of " +
                   std::string(type));
    if (v > kMaxVariableDimension)
      l.fail_token(what + " (at most " + std::to_string(kMaxVariableDimension) + ")");
    return v;
  }

  uint32_t below(Line& l, std::string_view what, uint32_t bound, std::string_view why) {
    const uint32_t v = l.uint(what);
    if (v >= bound)
      l.fail_token(std::string(what) + " below " + std::to_string(bound) + " (" +
                   std::string(why) + ")");
    return v;
  }

  void node(Line& l) {
    Graph& g = trace_.graph;
    const uint32_t id = l.node_ref("a node id");
    if (id != g.size())
      l.fail_token("%" + std::to_string(g.size()) + " (nodes are numbered in order)");
    if (g.size() >= kMaxGraphNodes)
      l.fail_token("at most " + std::to_string(kMaxGraphNodes) + " nodes (work_limits.h: split the cost)");
    l.expect('=', "'=' after the node id");
    const std::string_view op_name = l.word();
    Node n;
    std::string why;  // why the node has its type
    if (op_name == "const") {
      constant(l, n);
      why = n.type == Type::Bool ? "the type of true and false" : "the type of a number";
    } else if (op_name == "input") {
      input(l, n);
      why = "inputs are f64";
    } else {
      const std::optional<Op> op = op_from_name(op_name);
      if (!op || *op == Op::Const || *op == Op::Input)
        l.fail_token("an op (const, input, add, mul, ... as in op.h)");
      operation(l, n, *op);
      why = "the result type of " + std::string(op_name);
    }
    l.expect(':', "':' and the type of the node");
    const std::string_view type = l.word();
    if (type != "f64" && type != "bool") l.fail_token("a type (f64 or bool)");
    if (type != type_name(n.type))
      l.fail_token("type " + std::string(type_name(n.type)) + " (" + why + ")");
    l.end_of_line("end of line after the type");
    g.nodes.push_back(n);
  }

  void constant(Line& l, Node& n) {
    n.op = Op::Const;
    const std::string_view w = l.word();
    if (w == "true" || w == "false") {
      n.type = Type::Bool;
      n.value = w == "true" ? 1.0 : 0.0;
      return;
    }
    if ((w == "nan" || w == "-nan") && l.peek_raw() == '(') {
      const std::string_view payload = l.through(')');
      const std::string_view expected = "nan(0x followed by 16 hex digits) with no sign";
      uint64_t bits = 0;
      if (w != "nan" || payload.size() != 20 || payload.substr(0, 3) != "(0x" || payload.back() != ')')
        l.fail_at(l.start(), expected, quoted(std::string(w) + std::string(payload)));
      const auto [end, ec] = std::from_chars(payload.data() + 3, payload.data() + 19, bits, 16);
      if (ec != std::errc() || end != payload.data() + 19)
        l.fail_at(l.start(), expected, quoted(std::string(w) + std::string(payload)));
      if ((bits & kExponent) != kExponent || (bits & ~(kExponent | kSignBit)) == 0)
        l.fail_at(l.start(), "the bits of a NaN in nan(0x...)",
                  quoted(std::string(w) + std::string(payload)));
      n.value = std::bit_cast<double>(bits);
      return;
    }
    bool out_of_range = false;
    const std::optional<double> v = parse_f64(w, &out_of_range);
    if (out_of_range) l.fail_token("an f64 literal within the range of double");
    if (!v) l.fail_token("a constant (a number, inf, -inf, nan, -nan, nan(0x...), true, false)");
    n.value = *v;
  }

  void input(Line& l, Node& n) {
    n.op = Op::Input;
    const std::string_view kind = l.word();
    if (kind == "var") n.input.kind = InputKind::Var;
    else if (kind == "tangent" && stage_allows_tangent_inputs(trace_.stage))
      n.input.kind = InputKind::Tangent;
    else if (kind == "tangent")
      l.fail_token("'var' or 'data' after input (stage " +
                   std::string(stage_name(trace_.stage)) + " has no tangent inputs)");
    else if (kind == "data") n.input.kind = InputKind::Data;
    else l.fail_token("'var', 'data' or 'tangent' after input");
    const bool is_data = n.input.kind == InputKind::Data;
    n.input.slot = slot_name(l, !is_data);
    l.expect('[', "'[' and a component index");
    if (is_data) {
      const DataSlot& d = trace_.signature.data[n.input.slot];
      n.input.component = below(l, "a component", d.size(), "rows*cols of " + d.name);
    } else if (n.input.kind == InputKind::Var) {
      const VarSlot& v = trace_.signature.vars[n.input.slot];
      n.input.component = below(l, "a component", v.ambient, "ambient dimension of " + v.name);
    } else {
      const VarSlot& v = trace_.signature.vars[n.input.slot];
      n.input.component = below(l, "a component", v.tangent, "tangent dimension of " + v.name);
    }
    l.expect(']', "']'");
  }

  void operation(Line& l, Node& n, Op op) {
    const OpInfo& oi = info(op);
    const std::string op_name(oi.name);
    n.op = op;
    n.type = oi.result;
    n.num_args = oi.arity;
    for (int i = 0; i < oi.arity; ++i) {
      const std::string arg = "argument " + std::to_string(i + 1) + " of " + op_name;
      const NodeId a = l.node_ref(arg + " (a node id like %0)");
      if (a >= trace_.graph.size())
        l.fail_token("a node defined before %" + std::to_string(trace_.graph.size()));
      const Type t = trace_.graph[a].type;
      if (t != oi.args[i])
        l.fail_at(l.start(), arg + " to be " + std::string(type_name(oi.args[i])),
                  "%" + std::to_string(a) + " of type " + std::string(type_name(t)));
      n.args[i] = a;
    }
    const std::string takes = op_name + " takes " + std::to_string(oi.arity) + " argument" +
                              (oi.arity == 1 ? "" : "s");
    if (l.peek() == '%') l.fail_here("':' and the type (" + takes + ")");
    if (op == Op::Powi) {
      const std::string_view w = l.word();
      int32_t e = 0;
      const auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), e);
      if (w.empty() || ec != std::errc() || end != w.data() + w.size())
        l.fail_token("the exponent of powi (a 32-bit integer)");
      n.int_attr = e;
    } else if (const char c = l.peek(); (c >= '0' && c <= '9') || c == '-') {
      l.fail_here("':' and the type (only powi takes an integer)");
    }
  }

  void output(Line& l, OutputRole role) {
    const size_t at = l.start();
    const int line = l.number();
    const uint32_t rows = trace_.signature.residual_dim;
    const std::string residuals = "residuals=" + std::to_string(rows);
    const auto var = [&](uint32_t slot) -> const VarSlot& { return trace_.signature.vars[slot]; };
    const auto tangent = [](const VarSlot& v) { return "tangent dimension of " + v.name; };
    Output o;
    o.role = role;
    switch (role) {
      case OutputRole::Residual:
        l.expect('[', "'[' and a residual row");
        o.row = below(l, "a residual row", rows, residuals);
        l.expect(']', "']'");
        break;
      case OutputRole::Jacobian:
        l.expect('[', "'[' and a variable name");
        o.var = slot_name(l, true);
        l.expect(']', "']'");
        l.expect('(', "'(' and the row and column");
        o.row = below(l, "a residual row", rows, residuals);
        l.expect(',', "',' and the column");
        o.col = below(l, "a tangent column", var(o.var).tangent, tangent(var(o.var)));
        l.expect(')', "')'");
        break;
      case OutputRole::Cost: break;
      case OutputRole::Gradient:
        l.expect('[', "'[' and a variable name");
        o.var = slot_name(l, true);
        l.expect(']', "']'");
        l.expect('(', "'(' and the tangent row");
        o.row = below(l, "a tangent row", var(o.var).tangent, tangent(var(o.var)));
        l.expect(')', "')'");
        break;
      case OutputRole::Hessian: {
        l.expect('[', "'[' and two variable names");
        o.var = slot_name(l, true);
        l.expect(',', "',' and the second variable name");
        o.var2 = slot_name(l, true);
        if (o.var2 < o.var)
          l.fail_token("a variable at or after " + var(o.var).name +
                       " in slot order (H[v,w] is written for v <= w)");
        l.expect(']', "']'");
        l.expect('(', "'(' and the row and column");
        o.row = below(l, "a tangent row", var(o.var).tangent, tangent(var(o.var)));
        l.expect(',', "',' and the column");
        o.col = below(l, "a tangent column", var(o.var2).tangent, tangent(var(o.var2)));
        l.expect(')', "')'");
        break;
      }
    }
    l.expect('=', "'=' and the node");
    o.node = l.node_ref("a node id like %0");
    if (o.node >= trace_.graph.size())
      l.fail_token("a defined node (below %" + std::to_string(trace_.graph.size()) + ")");
    if (trace_.graph[o.node].type != Type::F64)
      l.fail_at(l.start(), "an f64 node",
                "%" + std::to_string(o.node) + " of type " +
                    std::string(type_name(trace_.graph[o.node].type)));
    l.end_of_line("end of line after the output");
    const auto target = std::make_tuple(o.role, o.var, o.var2, o.row, o.col);
    if (auto [it, inserted] = outputs_.try_emplace(target, line); !inserted)
      l.fail_at(at, "each output once",
                "a second one for the same target (the first is at line " +
                    std::to_string(it->second) + ")");
    trace_.graph.outputs.push_back(o);
  }

  std::string_view text_, source_;
  size_t offset_ = 0;
  int line_number_ = 0;
  std::optional<Line> line_;
  Trace trace_;
  Names var_names_, data_names_;
  uint64_t data_components_ = 0;
  std::map<std::tuple<OutputRole, uint32_t, uint32_t, uint32_t, uint32_t>, int> outputs_;
};

}  // namespace

Trace parse(std::string_view text, std::string_view source_name) {
  return Parser(text, source_name).run();
}

}  // namespace lsjit::ir
