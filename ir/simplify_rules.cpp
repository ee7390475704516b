#include "lsjit/ir/simplify_rules.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <stdexcept>
#include <string>
#include <vector>

namespace lsjit::ir {
namespace {

constexpr uint32_t N = kAssumeNothing;
constexpr uint32_t F = kAssumeFinite;
constexpr uint32_t Z = kIgnoreSignedZero;

// clang-format off
constexpr RewriteRule kRules[] = {
  // additive identities and negation
  {"(add x 0)",               "x",                 Z},  // -0 + 0 = +0
  {"(sub x 0)",               "x",                 N},
  {"(sub 0 x)",               "(neg x)",           Z},
  {"(sub x x)",               "0",                 F},  // inf - inf = NaN
  {"(add x (neg y))",         "(sub x y)",         N},
  {"(sub x (neg y))",         "(add x y)",         N},
  {"(add (neg x) (neg y))",   "(neg (add x y))",   Z},
  {"(neg (neg x))",           "x",                 N},
  {"(neg (sub x y))",         "(sub y x)",         Z},
  // multiplicative identities
  {"(mul x 1)",               "x",                 N},
  {"(mul x -1)",              "(neg x)",           N},
  {"(mul x 0)",               "0",                 F | Z},
  {"(mul (neg x) (neg y))",   "(mul x y)",         N},
  {"(mul (neg x) y)",         "(neg (mul x y))",   N},
  {"(mul x (select c 1 0))",  "(select c x 0)",    F | Z},
  {"(mul x (select c 0 1))",  "(select c 0 x)",    F | Z},
  {"(div x 1)",               "x",                 N},
  {"(div x -1)",              "(neg x)",           N},
  {"(div 0 x)",               "0",                 F | Z},  // 0/0 = NaN
  {"(div x x)",               "1",                 F},
  {"(div (neg x) (neg y))",   "(div x y)",         N},
  {"(div (neg x) y)",         "(neg (div x y))",   N},
  {"(div x (neg y))",         "(neg (div x y))",   N},
  // powers and roots
  {"(powi x 0)",              "1",                 N},  // pow(x, 0) = 1 even for NaN
  {"(powi x 1)",              "x",                 N},
  {"(powi x 2)",              "(mul x x)",         N},  // both correctly rounded
  {"(powi x -1)",             "(div 1 x)",         N},
  {"(pow x 1)",               "x",                 N},
  {"(pow x 2)",               "(mul x x)",         N},
  {"(pow x 0.5)",             "(sqrt x)",          F | Z},  // pow(-inf, .5) = inf, sqrt = NaN
  // sqrt(x)*sqrt(x) -> x is left out: it differs from x by a rounding, not only for x < 0.
  {"(sqrt (mul x x))",        "(abs x)",           F},  // exact unless x*x over/underflows
  {"(exp (log x))",           "x",                 F},
  {"(log (exp x))",           "x",                 F},
  // sign symmetries
  {"(abs (neg x))",           "(abs x)",           N},
  {"(abs (abs x))",           "(abs x)",           N},
  {"(abs (mul x x))",         "(mul x x)",         N},
  {"(cos (neg x))",           "(cos x)",           N},
  {"(sin (neg x))",           "(neg (sin x))",     N},
  {"(hypot x 0)",             "(abs x)",           N},
  {"(min x x)",               "x",                 N},
  {"(max x x)",               "x",                 N},
  // selects and logic
  {"(select true x y)",       "x",                 N},
  {"(select false x y)",      "y",                 N},
  {"(select c x x)",          "x",                 N},
  {"(add (select c x 0) (select c 0 y))", "(select c x y)", Z},  // how derivatives of
  {"(add (select c 0 x) (select c y 0))", "(select c y x)", Z},  // select/min/max add up
  {"(select (not c) x y)",    "(select c y x)",    N},
  {"(not (not c))",           "c",                 N},
  {"(and c true)",            "c",                 N},
  {"(and c false)",           "false",             N},
  {"(or c true)",             "true",              N},
  {"(or c false)",            "c",                 N},
  {"(and c c)",               "c",                 N},
  {"(or c c)",                "c",                 N},
  {"(lt x x)",                "false",             F},  // NaN < NaN is false anyway,
  {"(gt x x)",                "false",             F},  // but kept with the others
  {"(le x x)",                "true",              F},
  {"(ge x x)",                "true",              F},
  {"(eq x x)",                "true",              F},
  {"(ne x x)",                "false",             F},
};
// clang-format on

// The most wildcards one rule names (x, y, c today); letters get slots in the order a
// rule first uses them, so matching copies 4 ids instead of one per letter.
constexpr int kMaxWilds = 4;

struct Pattern {
  enum Kind : uint8_t { Wild, Number, Boolean, Apply } kind = Wild;
  int wild = 0;        // Wild: the letter's slot in the rule
  double number = 0;   // Number
  bool boolean = false;
  Op op = Op::Add;     // Apply
  int32_t int_attr = 0;
  std::vector<Pattern> args;
};

class PatternParser {
 public:
  // `slots` maps letters to wildcard slots: shared by a rule's pattern and replacement,
  // which may name only letters its pattern bound (`new_letters` false).
  PatternParser(std::string_view text, std::array<int, 26>& slots, bool new_letters)
      : text_(text), slots_(slots), new_letters_(new_letters) {}
  Pattern parse() {
    Pattern p = term();
    skip_space();
    if (pos_ != text_.size()) fail("trailing text");
    return p;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::logic_error("bad rewrite pattern '" + std::string(text_) + "': " + what);
  }
  void skip_space() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }
  std::string_view atom() {
    skip_space();
    size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != ' ' && text_[pos_] != '(' && text_[pos_] != ')')
      ++pos_;
    if (start == pos_) fail("expected an atom");
    return text_.substr(start, pos_ - start);
  }
  Pattern term() {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == '(') {
      ++pos_;
      Pattern p;
      p.kind = Pattern::Apply;
      std::string_view op_name = atom();
      auto op = op_from_name(op_name);
      if (!op) fail("unknown op " + std::string(op_name));
      p.op = *op;
      for (int i = 0; i < info(p.op).arity; ++i) p.args.push_back(term());
      if (p.op == Op::Powi) p.int_attr = static_cast<int32_t>(number(atom()));
      skip_space();
      if (pos_ >= text_.size() || text_[pos_] != ')') fail("expected )");
      ++pos_;
      return p;
    }
    std::string_view a = atom();
    Pattern p;
    if (a == "true" || a == "false") {
      p.kind = Pattern::Boolean;
      p.boolean = a == "true";
    } else if (a.size() == 1 && std::islower(static_cast<unsigned char>(a[0]))) {
      p.kind = Pattern::Wild;
      int& slot = slots_[a[0] - 'a'];
      if (slot < 0) {
        if (!new_letters_) fail("wildcard " + std::string(a) + " is not in the pattern");
        slot = *std::max_element(slots_.begin(), slots_.end()) + 1;
        if (slot >= kMaxWilds) fail("more than " + std::to_string(kMaxWilds) + " wildcards");
      }
      p.wild = slot;
    } else {
      p.kind = Pattern::Number;
      p.number = number(a);
    }
    return p;
  }
  double number(std::string_view a) const {
    double v = 0;
    auto [end, ec] = std::from_chars(a.data(), a.data() + a.size(), v);
    if (ec != std::errc() || end != a.data() + a.size()) fail("bad number " + std::string(a));
    return v;
  }

  std::string_view text_;
  std::array<int, 26>& slots_;
  bool new_letters_;
  size_t pos_ = 0;
};

struct CompiledRule {
  Pattern pattern;
  Pattern replacement;
  uint32_t assumptions;
};

using Bindings = std::array<NodeId, kMaxWilds>;

bool match(const GraphBuilder& b, const Pattern& p, NodeId id, Bindings& bound);

// Whether node `n` can be what `p` asks for, looking at `n` alone: its op, or its value
// for a constant. Cheap, and false for most candidates, so the full match (which binds
// wildcards and tries both orders) runs only where a rule may apply.
bool shallow(const Pattern& p, const Node& n) {
  switch (p.kind) {
    case Pattern::Wild: return true;
    case Pattern::Number: return n.is_const(p.number);
    case Pattern::Boolean: return n.op == Op::Const && n.type == Type::Bool && (n.value != 0.0) == p.boolean;
    case Pattern::Apply: return n.op == p.op;
  }
  return false;
}

// The shallow test on the candidate's arguments, in either order for a commutative op.
bool may_match(const GraphBuilder& b, const Pattern& p, const Node& n) {
  bool in_order = true;
  for (size_t i = 0; i < p.args.size() && in_order; ++i) in_order = shallow(p.args[i], b[n.args[i]]);
  if (in_order) return true;
  return info(p.op).commutative && shallow(p.args[0], b[n.args[1]]) && shallow(p.args[1], b[n.args[0]]);
}

bool match_apply(const GraphBuilder& b, const Pattern& p, const Node& n, Bindings& bound) {
  if (n.op != p.op || n.int_attr != p.int_attr) return false;
  Bindings saved = bound;
  bool ok = true;
  for (size_t i = 0; i < p.args.size() && ok; ++i) ok = match(b, p.args[i], n.args[i], bound);
  if (ok) return true;
  bound = saved;
  if (!info(p.op).commutative) return false;
  ok = match(b, p.args[0], n.args[1], bound) && match(b, p.args[1], n.args[0], bound);
  if (!ok) bound = saved;
  return ok;
}

bool match(const GraphBuilder& b, const Pattern& p, NodeId id, Bindings& bound) {
  const Node& n = b[id];
  switch (p.kind) {
    case Pattern::Wild:
      if (bound[p.wild] == kNoNode) {
        bound[p.wild] = id;
        return true;
      }
      return bound[p.wild] == id;
    case Pattern::Number: return n.is_const(p.number);
    case Pattern::Boolean:
      return n.op == Op::Const && n.type == Type::Bool && (n.value != 0.0) == p.boolean;
    case Pattern::Apply: return match_apply(b, p, n, bound);
  }
  return false;
}

NodeId build(GraphBuilder& b, const Pattern& p, const Bindings& bound) {
  switch (p.kind) {
    case Pattern::Wild: return bound[p.wild];
    case Pattern::Number: return b.constant(p.number);
    case Pattern::Boolean: return b.boolean(p.boolean);
    case Pattern::Apply: {
      NodeId a[3] = {kNoNode, kNoNode, kNoNode};
      for (size_t i = 0; i < p.args.size(); ++i) a[i] = build(b, p.args[i], bound);
      return b.make(p.op, a[0], a[1], a[2], p.int_attr);
    }
  }
  return kNoNode;
}

// Rules compiled once and grouped by the op at their root.
const std::vector<std::vector<CompiledRule>>& rules_by_op() {
  // Never destroyed: a background compile (compiler/cache/background_compile.cpp) may still
  // build graphs while exit() runs static destructors.
  static const auto* table = new std::vector<std::vector<CompiledRule>>([] {
    std::vector<std::vector<CompiledRule>> by_op(kNumOps);
    for (const RewriteRule& r : kRules) {
      std::array<int, 26> slots;
      slots.fill(-1);
      Pattern pattern = PatternParser(r.pattern, slots, true).parse();
      Pattern replacement = PatternParser(r.replacement, slots, false).parse();
      CompiledRule c{std::move(pattern), std::move(replacement), r.assumptions};
      if (c.pattern.kind != Pattern::Apply)
        throw std::logic_error("rewrite pattern must be an op: " + std::string(r.pattern));
      by_op[static_cast<size_t>(c.pattern.op)].push_back(std::move(c));
    }
    return by_op;
  }());
  return *table;
}

}  // namespace

std::span<const RewriteRule> rewrite_rules() { return kRules; }

NodeId rewrite(GraphBuilder& builder, const Node& candidate, uint32_t allowed) {
  for (const CompiledRule& rule : rules_by_op()[static_cast<size_t>(candidate.op)]) {
    if ((rule.assumptions & ~allowed) != 0 || !may_match(builder, rule.pattern, candidate)) continue;
    Bindings bound;
    bound.fill(kNoNode);
    if (match_apply(builder, rule.pattern, candidate, bound))
      return build(builder, rule.replacement, bound);
  }
  return kNoNode;
}

}  // namespace lsjit::ir
