// IncrementalFactor (incremental_factor.h): refactor() is a script of five steps over a
// Top, the part of the tree eliminated again: collect_top, order_top, build_supernodes,
// factor_top and commit_top. Only commit_top changes the factor, so a failure anywhere
// before it leaves the previous factor whole.
#include "lsjit/runtime/solve/linear/incremental_factor.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "lsjit/common/error.h"
#include "lsjit/runtime/solve/linear/supernodal_kernels.h"

extern "C" {
#include <suitesparse/camd.h>
}

namespace lsjit::linear {

using namespace supernodal;

// A supernode of the top, by ranks of its order.
struct IncrementalFactor::TopSupernode {
  int32_t first = 0, last = 0;    // ranks
  int32_t parent = -1;            // supernode index
  std::vector<int64_t> factors;
  std::vector<int32_t> children;  // supernode indices
  std::vector<int32_t> orphans;   // clique ids hung here
};

// The variables eliminated again, their order and supernodes, and the new cliques.
struct IncrementalFactor::Top {
  std::vector<int32_t> old_cliques;  // detached: the marked paths
  std::vector<int32_t> orphans;      // children of old_cliques that are not in it
  std::vector<int32_t> vars;         // local index -> variable
  std::vector<int64_t> factors;      // lying wholly among vars
  std::vector<int32_t> order;        // rank -> local index
  std::vector<int32_t> rank;         // local index -> rank
  std::vector<std::vector<int32_t>> adjacency;  // per local index, other local indices
  std::vector<std::vector<int32_t>> below;      // per rank: later ranks its column reaches
  std::vector<int32_t> etree;                   // per rank: parent rank or -1
  std::vector<TopSupernode> supernodes;
  std::vector<int32_t> supernode_of;  // per rank
  std::vector<Clique> fresh;          // one per supernode
};

namespace {

int64_t sum_dims(const std::vector<int32_t>& vars, size_t begin, size_t end, auto&& dim) {
  int64_t n = 0;
  for (size_t k = begin; k < end; ++k) n += dim(vars[k]);
  return n;
}

}  // namespace

int32_t IncrementalFactor::add_variable(int dim) {
  if (dim < 1 || dim > 64)
    throw Error("lsjit::IncrementalFactor::add_variable: dimension " + std::to_string(dim) +
                ": expected 1 to 64 scalars");
  Variable v;
  v.dim = dim;
  v.offset = static_cast<int64_t>(delta_.size());
  delta_.resize(delta_.size() + dim, 0.0);
  vars_.push_back(std::move(v));
  mark_state_.push_back(0);
  changed_epoch_.push_back(0);
  front_offset_.push_back(-1);
  return static_cast<int32_t>(vars_.size() - 1);
}

void IncrementalFactor::check_factor(std::span<const int32_t> vars, std::span<const double> H,
                                     std::span<const double> g) const {
  const std::string where = "lsjit::IncrementalFactor: a factor ";
  if (vars.empty()) throw Error(where + "needs at least one variable");
  int64_t n = 0;
  for (size_t a = 0; a < vars.size(); ++a) {
    if (vars[a] < 0 || vars[a] >= num_variables())
      throw Error(where + "names variable " + std::to_string(vars[a]) + ": expected 0 to " +
                  std::to_string(num_variables() - 1));
    for (size_t b = 0; b < a; ++b)
      if (vars[a] == vars[b]) throw Error(where + "names variable " + std::to_string(vars[a]) + " twice");
    n += vars_[vars[a]].dim;
  }
  if (static_cast<int64_t>(H.size()) != n * n || static_cast<int64_t>(g.size()) != n)
    throw Error(where + "over " + std::to_string(n) + " scalars has H of " + std::to_string(H.size()) +
                " and g of " + std::to_string(g.size()) + " entries: expected " + std::to_string(n * n) +
                " and " + std::to_string(n));
  for (double x : H)
    if (!std::isfinite(x)) throw Error(where + "has a non-finite entry in H");
  for (double x : g)
    if (!std::isfinite(x)) throw Error(where + "has a non-finite entry in g");
}

void IncrementalFactor::mark_factor_vars(const Factor& f, bool constrain_last) {
  for (int32_t v : f.vars) mark(v, constrain_last);
}

int64_t IncrementalFactor::add_factor(std::span<const int32_t> vars, std::span<const double> H,
                                      std::span<const double> g, bool constrain_last) {
  check_factor(vars, H, g);
  Factor f;
  f.vars.assign(vars.begin(), vars.end());
  f.H.assign(H.begin(), H.end());
  f.g.assign(g.begin(), g.end());
  f.live = true;
  const auto id = static_cast<int64_t>(factors_.size());
  for (int32_t v : f.vars) vars_[v].factors.push_back(id);
  mark_factor_vars(f, constrain_last);
  factors_.push_back(std::move(f));
  return id;
}

bool IncrementalFactor::has_factor(int64_t f) const {
  return f >= 0 && f < static_cast<int64_t>(factors_.size()) && factors_[f].live;
}

void IncrementalFactor::replace_factor(int64_t f, std::span<const double> H, std::span<const double> g) {
  if (!has_factor(f)) throw Error("lsjit::IncrementalFactor::replace_factor: no factor " + std::to_string(f));
  Factor& factor = factors_[f];
  check_factor(factor.vars, H, g);
  std::copy(H.begin(), H.end(), factor.H.begin());
  std::copy(g.begin(), g.end(), factor.g.begin());
  mark_factor_vars(factor, false);
}

void IncrementalFactor::remove_factor(int64_t f) {
  if (!has_factor(f)) throw Error("lsjit::IncrementalFactor::remove_factor: no factor " + std::to_string(f));
  Factor& factor = factors_[f];
  for (int32_t v : factor.vars) std::erase(vars_[v].factors, f);
  mark_factor_vars(factor, false);
  factor.live = false;
  factor.H = {};
  factor.g = {};
}

void IncrementalFactor::mark(int32_t v, bool constrain_last) {
  if (v < 0 || v >= num_variables())
    throw Error("lsjit::IncrementalFactor::mark: no variable " + std::to_string(v));
  if (mark_state_[v] == 0) marked_.push_back(v);
  mark_state_[v] = std::max<uint8_t>(mark_state_[v], constrain_last ? 2 : 1);
}

void IncrementalFactor::mark_all() {
  for (int32_t v = 0; v < num_variables(); ++v) mark(v, false);
}

std::span<const double> IncrementalFactor::delta(int32_t v) const {
  const Variable& var = vars_.at(v);
  return {delta_.data() + var.offset, static_cast<size_t>(var.dim)};
}

void IncrementalFactor::clear_delta(int32_t v) {
  const Variable& var = vars_.at(v);
  std::fill(delta_.begin() + var.offset, delta_.begin() + var.offset + var.dim, 0.0);
}

int32_t IncrementalFactor::new_clique_id() {
  if (!free_cliques_.empty()) {
    const int32_t id = free_cliques_.back();
    free_cliques_.pop_back();
    return id;
  }
  cliques_.emplace_back();
  return static_cast<int32_t>(cliques_.size() - 1);
}

// ---------------------------------------------------------------------------------------
// refactor()

bool IncrementalFactor::refactor() {
  stats_ = {};
  last_error_.clear();
  if (marked_.empty()) return true;
  Top top;
  // front_offset_ is -1 outside a step that uses it, whatever the step throws (CAMD may).
  struct Restore {
    const Top& top;
    std::vector<int64_t>& offsets;
    ~Restore() {
      for (int32_t v : top.vars) offsets[v] = -1;
    }
  } restore{top, front_offset_};
  collect_top(top);
  order_top(top);
  build_supernodes(top);
  if (!factor_top(top)) return false;
  commit_top(top);
  return true;
}

// The marked variables' cliques and their paths to the roots, the orphans below them, the
// variables to eliminate (those paths' frontal variables and the marked new ones) and the
// factors lying wholly among them. A factor that also reaches an untouched variable u was
// assembled where u was eliminated, below the top: it is inside an orphan's contribution.
void IncrementalFactor::collect_top(Top& top) {
  // in_top_[q] == stamp: clique q is on a marked path. A fresh stamp per call instead of a
  // cleared array keeps this step O(top), not O(cliques).
  in_top_.resize(cliques_.size(), 0);
  const uint32_t stamp = ++top_epoch_;
  for (int32_t v : marked_)
    for (int32_t q = vars_[v].clique; q >= 0 && in_top_[q] != stamp; q = cliques_[q].parent) {
      in_top_[q] = stamp;
      top.old_cliques.push_back(q);
    }
  for (int32_t q : top.old_cliques) {
    const Clique& clique = cliques_[q];
    top.vars.insert(top.vars.end(), clique.vars.begin(), clique.vars.begin() + clique.frontal_vars);
    for (int32_t child : clique.children)
      if (in_top_[child] != stamp) top.orphans.push_back(child);
  }
  for (int32_t v : marked_)
    if (vars_[v].clique < 0) top.vars.push_back(v);

  // front_offset_ doubles as "is in the top" (its local index) until factor_top.
  for (size_t k = 0; k < top.vars.size(); ++k) front_offset_[top.vars[k]] = static_cast<int64_t>(k);
  for (int32_t v : top.vars)
    for (int64_t f : vars_[v].factors) {
      const Factor& factor = factors_[f];
      if (factor.vars.front() != v) continue;  // counted once, at its first variable
      bool inside = true;
      for (int32_t u : factor.vars) inside = inside && front_offset_[u] >= 0;
      if (inside) top.factors.push_back(f);
    }
}

// The top's pattern (its factors' variable pairs and a clique on each orphan's separator),
// ordered by CAMD with the variables marked "last" in the later constraint set.
void IncrementalFactor::order_top(Top& top) const {
  const auto m = static_cast<int32_t>(top.vars.size());
  auto local = [&](int32_t v) { return static_cast<int32_t>(front_offset_[v]); };
  top.adjacency.assign(m, {});
  auto connect = [&](const std::vector<int32_t>& vars, size_t begin) {
    for (size_t a = begin; a < vars.size(); ++a)
      for (size_t b = begin; b < vars.size(); ++b)
        if (a != b) top.adjacency[local(vars[a])].push_back(local(vars[b]));
  };
  for (int64_t f : top.factors) connect(factors_[f].vars, 0);
  for (int32_t q : top.orphans) connect(cliques_[q].vars, cliques_[q].frontal_vars);
  std::vector<int> Ap(m + 1, 0), Ai;
  for (int32_t k = 0; k < m; ++k) {
    std::vector<int32_t>& adj = top.adjacency[k];
    std::sort(adj.begin(), adj.end());
    adj.erase(std::unique(adj.begin(), adj.end()), adj.end());
    Ai.insert(Ai.end(), adj.begin(), adj.end());
    Ap[k + 1] = static_cast<int>(Ai.size());
  }
  std::vector<int> constraint(m);
  int last = 0;
  for (int32_t k = 0; k < m; ++k) last += constraint[k] = mark_state_[top.vars[k]] == 2 ? 1 : 0;
  const bool constrained = last > 0 && last < m;
  std::vector<int> P(m);
  if (m > 0) {
    Ai.push_back(0);  // CAMD wants a non-null array even for a pattern without edges
    const int status = camd_order(m, Ap.data(), Ai.data(), P.data(), nullptr, nullptr,
                                  constrained ? constraint.data() : nullptr);
    if (status != CAMD_OK && status != CAMD_OK_BUT_JUMBLED)
      throw Error("lsjit::IncrementalFactor: CAMD failed on a top of " + std::to_string(m) + " variables (status " +
                  std::to_string(status) + ")");
  }
  top.order.assign(P.begin(), P.end());
  top.rank.assign(m, 0);
  for (int32_t k = 0; k < m; ++k) top.rank[top.order[k]] = k;
}

// Symbolic elimination of the ordered top: each rank's below set (its pattern neighbours
// after it, and its etree children's below sets), the etree, and the fundamental supernodes
// (a column joins its only child's supernode when their below sets nest exactly). Factors
// and orphans go to the supernode of their earliest variable. Not cut to a size: cutting
// the dense top separator into a chain of small cliques did not shrink sphere2500's tops
// (its updates reach a hundred poses through their loop closures anyway) and made their
// fronts larger.
void IncrementalFactor::build_supernodes(Top& top) const {
  const auto m = static_cast<int32_t>(top.vars.size());
  top.below.assign(m, {});
  top.etree.assign(m, -1);
  std::vector<std::vector<int32_t>> etree_children(m);
  std::vector<int32_t> stamp(m, -1);
  for (int32_t k = 0; k < m; ++k) {
    std::vector<int32_t>& below = top.below[k];
    auto add = [&](int32_t r) {
      if (r > k && stamp[r] != k) {
        stamp[r] = k;
        below.push_back(r);
      }
    };
    for (int32_t u : top.adjacency[top.order[k]]) add(top.rank[u]);
    for (int32_t child : etree_children[k])
      for (int32_t r : top.below[child]) add(r);
    std::sort(below.begin(), below.end());
    if (!below.empty()) {
      top.etree[k] = below.front();
      etree_children[below.front()].push_back(k);
    }
  }
  top.supernode_of.assign(m, -1);
  for (int32_t k = 0; k < m; ++k) {
    const bool joins = k > 0 && top.etree[k - 1] == k && etree_children[k].size() == 1 &&
                       top.below[k - 1].size() == top.below[k].size() + 1;
    if (joins) {
      top.supernodes.back().last = k;
    } else {
      top.supernodes.emplace_back();
      top.supernodes.back().first = top.supernodes.back().last = k;
    }
    top.supernode_of[k] = static_cast<int32_t>(top.supernodes.size() - 1);
  }
  for (size_t s = 0; s < top.supernodes.size(); ++s) {
    TopSupernode& sn = top.supernodes[s];
    const int32_t parent_rank = top.etree[sn.last];
    if (parent_rank >= 0) {
      sn.parent = top.supernode_of[parent_rank];
      top.supernodes[sn.parent].children.push_back(static_cast<int32_t>(s));
    }
  }
  auto earliest = [&](const std::vector<int32_t>& vars, size_t begin) {
    int32_t r = std::numeric_limits<int32_t>::max();
    for (size_t a = begin; a < vars.size(); ++a) r = std::min(r, top.rank[front_offset_[vars[a]]]);
    return r;
  };
  for (int64_t f : top.factors) top.supernodes[top.supernode_of[earliest(factors_[f].vars, 0)]].factors.push_back(f);
  for (int32_t q : top.orphans) {
    const Clique& orphan = cliques_[q];
    top.supernodes[top.supernode_of[earliest(orphan.vars, orphan.frontal_vars)]].orphans.push_back(q);
  }
}

// Numeric elimination of the new supernodes, children before parents (rank order).
bool IncrementalFactor::factor_top(Top& top) {
  for (int32_t v : top.vars) front_offset_[v] = -1;  // from local indices to front offsets
  top.fresh.resize(top.supernodes.size());
  for (size_t s = 0; s < top.supernodes.size(); ++s) {
    const TopSupernode& sn = top.supernodes[s];
    Clique& q = top.fresh[s];
    for (int32_t k = sn.first; k <= sn.last; ++k) q.vars.push_back(top.vars[top.order[k]]);
    q.frontal_vars = static_cast<int32_t>(q.vars.size());
    for (int32_t r : top.below[sn.last]) q.vars.push_back(top.vars[top.order[r]]);
    auto dim = [&](int32_t v) { return vars_[v].dim; };
    q.nf = sum_dims(q.vars, 0, q.frontal_vars, dim);
    q.ns = sum_dims(q.vars, q.frontal_vars, q.vars.size(), dim);
    if (!eliminate(q, sn, top.fresh)) return false;
  }
  return true;
}

// Adds the symmetric block `H` (n x n, column-major) of a factor or child into the front's
// lower triangle (all factor_panel reads): entry (r, c) of H goes to front row to[r],
// column to[c], or to its mirror when that lies above the diagonal.
void add_lower(double* F, int64_t m, const double* H, int64_t n, const int64_t* to) {
  for (int64_t c = 0; c < n; ++c) {
    const int64_t tc = to[c];
    const double* column = H + c * n;
    for (int64_t r = c; r < n; ++r) {
      const int64_t tr = to[r];
      F[tr >= tc ? tr + tc * m : tc + tr * m] += column[r];
    }
  }
}

// One front: F = the clique's factors + its children's contribution blocks, over F ∪ S with
// the right-hand side −g beside it, in F's lower triangle.
void IncrementalFactor::assemble_front(const Clique& q, const TopSupernode& sn, const std::vector<Clique>& fresh) {
  const int64_t m = q.nf + q.ns;
  if (static_cast<int64_t>(front_.size()) < m * m + kProductRowPad) front_.resize(m * m + kProductRowPad);
  double* F = front_.data();
  for (int64_t c = 0; c < m; ++c) std::fill(F + c * m + c, F + (c + 1) * m, 0.0);
  rhs_.assign(m, 0.0);
  int64_t offset = 0;
  for (int32_t v : q.vars) {
    front_offset_[v] = offset;
    offset += vars_[v].dim;
  }
  for (int64_t f : sn.factors) {
    const Factor& factor = factors_[f];
    to_.clear();
    for (int32_t v : factor.vars)
      for (int r = 0; r < vars_[v].dim; ++r) to_.push_back(front_offset_[v] + r);
    const auto n = static_cast<int64_t>(to_.size());
    add_lower(F, m, factor.H.data(), n, to_.data());
    for (int64_t r = 0; r < n; ++r) rhs_[to_[r]] -= factor.g[r];
  }
  auto extend_add = [&](const Clique& child) {
    to_.clear();
    for (size_t a = child.frontal_vars; a < child.vars.size(); ++a)
      for (int r = 0; r < vars_[child.vars[a]].dim; ++r) to_.push_back(front_offset_[child.vars[a]] + r);
    add_lower(F, m, child.C.data(), child.ns, to_.data());
    for (int64_t r = 0; r < child.ns; ++r) rhs_[to_[r]] += child.c[r];
  };
  for (int32_t s : sn.children) extend_add(fresh[s]);
  for (int32_t o : sn.orphans) extend_add(cliques_[o]);
}

// The front's partial factorization: the panel [L_FF; L_SF], y, and the contribution C
// (lower triangle; ns x ns) and c (incremental_factor.h).
bool IncrementalFactor::eliminate(Clique& q, const TopSupernode& sn, const std::vector<Clique>& fresh) {
  const int64_t nf = q.nf, ns = q.ns, m = nf + ns;
  stats_.front_entries += m * m;
  assemble_front(q, sn, fresh);
  for (int32_t v : q.vars) front_offset_[v] = -1;
  double* F = front_.data();
  const int64_t bad = factor_panel(F, nf, m);
  if (bad >= 0) {
    last_error_ = "the system is not positive definite: pivot " + std::to_string(bad) + " of a clique of " +
                  std::to_string(q.frontal_vars) + " variables is not > 0 (a variable without a factor, an "
                  "unanchored gauge, or a non-finite value)";
    return false;
  }
  q.y.assign(rhs_.begin(), rhs_.begin() + nf);
  diagonal_solve(F, nf, m, q.y.data());
  if (ns > 0) {
    const int64_t ldw = product_leading_dimension(ns);
    if (static_cast<int64_t>(work_.size()) < ldw * ldw) work_.resize(ldw * ldw);
    below_product(F, nf, ns, m, work_.data(), ldw);
    q.C = take_spare(ns * ns);
    for (int64_t c = 0; c < ns; ++c)
      for (int64_t r = c; r < ns; ++r) q.C[r + c * ns] = F[(nf + r) + (nf + c) * m] - work_[r + c * ldw];
    q.c.resize(ns);
    below_multiply(F, nf, ns, m, q.y.data(), q.c.data());
    for (int64_t r = 0; r < ns; ++r) q.c[r] = rhs_[nf + r] - q.c[r];
  }
  q.panel = take_spare(m * nf);
  std::copy(F, F + m * nf, q.panel.begin());
  return true;
}

// A buffer of n doubles (contents unspecified), from the freed cliques' buffers when one is
// large enough: an update frees and makes cliques of similar sizes, and reusing their memory
// spares the allocator and the page faults of fresh memory.
Doubles IncrementalFactor::take_spare(int64_t n) {
  for (size_t k = spare_.size(); k-- > 0;)
    if (static_cast<int64_t>(spare_[k].capacity()) >= n) {
      Doubles v = std::move(spare_[k]);
      spare_[k] = std::move(spare_.back());
      spare_.pop_back();
      v.resize(n);
      return v;
    }
  return Doubles(n);
}

void IncrementalFactor::give_spare(Doubles&& v) {
  if (v.capacity() == 0) return;
  if (spare_.size() >= kMaxSpares) spare_.erase(spare_.begin());
  spare_.push_back(std::move(v));
}

// Swaps the new top in: frees the old cliques, files the new ones, re-hangs the orphans.
void IncrementalFactor::commit_top(Top& top) {
  for (int32_t q : top.old_cliques) {
    Clique& old = cliques_[q];
    stored_doubles_ -= static_cast<int64_t>(old.panel.size() + old.C.size());
    give_spare(std::move(old.panel));
    give_spare(std::move(old.C));
    old = Clique{};
    free_cliques_.push_back(q);
    --live_cliques_;
  }
  // Before the freed ids are handed out again.
  std::erase_if(roots_, [&](int32_t q) { return !cliques_[q].live; });
  std::vector<int32_t> id(top.supernodes.size());
  for (size_t s = 0; s < top.supernodes.size(); ++s) id[s] = new_clique_id();
  for (size_t s = 0; s < top.supernodes.size(); ++s) {
    const TopSupernode& sn = top.supernodes[s];
    Clique& q = cliques_[id[s]];
    q = std::move(top.fresh[s]);
    q.live = q.fresh = true;
    q.parent = sn.parent >= 0 ? id[sn.parent] : -1;
    for (int32_t child : sn.children) q.children.push_back(id[child]);
    for (int32_t orphan : sn.orphans) {
      q.children.push_back(orphan);
      cliques_[orphan].parent = id[s];
    }
    for (int32_t a = 0; a < q.frontal_vars; ++a) vars_[q.vars[a]].clique = id[s];
    stored_doubles_ += static_cast<int64_t>(q.panel.size() + q.C.size());
    ++live_cliques_;
  }
  for (size_t s = 0; s < top.supernodes.size(); ++s)
    if (top.supernodes[s].parent < 0) roots_.push_back(id[s]);
  for (int32_t v : marked_) mark_state_[v] = 0;
  marked_.clear();
  stats_.cliques_refactored = static_cast<int64_t>(top.supernodes.size());
  stats_.variables_reeliminated = static_cast<int64_t>(top.vars.size());
  stats_.orphans = static_cast<int64_t>(top.orphans.size());
}

// ---------------------------------------------------------------------------------------
// back_substitute()

const std::vector<int32_t>& IncrementalFactor::back_substitute(double wildfire_threshold) {
  ++epoch_;
  changed_.clear();
  stats_.cliques_backsubstituted = 0;
  std::vector<int32_t> stack(roots_.rbegin(), roots_.rend());
  std::vector<double> x, xs;
  while (!stack.empty()) {
    const int32_t id = stack.back();
    stack.pop_back();
    Clique& q = cliques_[id];
    bool dirty = q.fresh;
    for (size_t a = q.frontal_vars; a < q.vars.size() && !dirty; ++a)
      dirty = changed_epoch_[q.vars[a]] == epoch_;
    if (!dirty) continue;
    ++stats_.cliques_backsubstituted;
    x = q.y;
    if (q.ns > 0) {
      xs.clear();
      for (size_t a = q.frontal_vars; a < q.vars.size(); ++a) {
        const Variable& var = vars_[q.vars[a]];
        xs.insert(xs.end(), delta_.begin() + var.offset, delta_.begin() + var.offset + var.dim);
      }
      below_multiply_transposed(q.panel.data(), q.nf, q.ns, q.nf + q.ns, xs.data(), x.data());
    }
    diagonal_solve_transposed(q.panel.data(), q.nf, q.nf + q.ns, x.data());
    int64_t at = 0;
    for (int32_t a = 0; a < q.frontal_vars; ++a) {
      const int32_t v = q.vars[a];
      const Variable& var = vars_[v];
      double moved = 0;
      for (int r = 0; r < var.dim; ++r) moved = std::max(moved, std::abs(x[at + r] - delta_[var.offset + r]));
      if (q.fresh || moved >= wildfire_threshold) {
        std::copy(x.begin() + at, x.begin() + at + var.dim, delta_.begin() + var.offset);
        changed_epoch_[v] = epoch_;
        changed_.push_back(v);
      }
      at += var.dim;
    }
    q.fresh = false;
    stack.insert(stack.end(), q.children.begin(), q.children.end());
  }
  stats_.variables_changed = static_cast<int64_t>(changed_.size());
  return changed_;
}

}  // namespace lsjit::linear
