// The incremental sparse Cholesky factor behind IncrementalSolver: iSAM2's Bayes tree, seen
// as the supernodal elimination tree of H.
//
// Why a factor of its own. An online problem changes a few columns of H per update, and the
// Cholesky factor L (H = L Lᵀ) then changes only on the paths of the elimination tree from
// those columns to the root. Everything below stays valid, including what each untouched
// subtree sends up: its contribution block, the Schur complement of the subtree onto its
// separator. So this factor is multifrontal and keeps, per supernode ("clique" in the Bayes
// tree), its panel and its contribution block. refactor() detaches the cliques on the
// changed paths (the "top"), orders their variables afresh with the variables of new factors
// last (CAMD: iSAM2's constrained ordering), and eliminates them again from the linear
// factors lying wholly among them plus the stored contribution blocks of the subtrees left
// below ("orphans", hung back under the new top). Its cost depends on the size of the top,
// not on the history. SupernodalCholesky (supernodal_cholesky.h) stays the batch factor: it
// keeps no contribution blocks and orders the whole pattern at once.
//
// The system. Variables are numbered 0, 1, ... in the order add_variable() returns them;
// variable v has dim(v) scalars. A linear factor over the variables V_f (each at most once)
// adds ½ δ_fᵀ H_f δ_f + g_fᵀ δ_f to a quadratic; back_substitute() gives its minimizer, the
// δ with H δ = −g for H = Σ H_f and g = Σ g_f. The factor keeps copies of H_f and g_f.
//
// Exactness. After refactor() the panels are the exact Cholesky factor of the current H in
// the current ordering, which depends on the history of updates; only rounding differs from
// a batch factorization. back_substitute(0) is the exact solve. Above 0, a subtree is not
// revisited when nothing in its separator moved by the threshold or more (iSAM2's wildfire):
// its δ then lags the exact one by about that much.
//
// Errors. A variable whose column has no factor, or a top that is not positive definite,
// makes refactor() return false and leaves the previous factor as it was (the marks stay, so
// a caller can repair H and call it again). Bad arguments (unknown variables or factors,
// sizes that do not match) throw lsjit::Error before anything changes.
//
// Not thread-safe; one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "lsjit/runtime/evaluate/huge_page_allocator.h"

namespace lsjit::linear {

// Doubles that resize() leaves unset (DefaultInit, huge_page_allocator.h): panels and blocks are written
// in full right after they are sized, and zeroing them first was a tenth of an update's time.
using Doubles = std::vector<double, lsjit::detail::DefaultInit<std::allocator<double>>>;

class IncrementalFactor {
 public:
  // What the last refactor() and back_substitute() did.
  struct Stats {
    int64_t cliques_refactored = 0;     // new cliques of the top
    int64_t variables_reeliminated = 0; // variables of the top
    int64_t orphans = 0;                // untouched subtrees re-hung under the new top
    int64_t front_entries = 0;          // Σ (frontal + separator scalars)² over the new cliques
    int64_t cliques_backsubstituted = 0;
    int64_t variables_changed = 0;      // by the last back_substitute
  };

  // A new variable of `dim` scalars (1..64), with δ = 0, unmarked until a factor reaches it.
  int32_t add_variable(int dim);
  int32_t num_variables() const { return static_cast<int32_t>(vars_.size()); }
  int dim(int32_t v) const { return vars_.at(v).dim; }

  // Adds a factor over `vars` (distinct), with `H` the full symmetric n x n block, column-
  // major, and g of n, n = Σ dim(vars). Marks its variables; with constrain_last they are
  // ordered last in the next refactor (the variables of new factors, iSAM2's rule). Returns
  // the factor's handle, never reused.
  int64_t add_factor(std::span<const int32_t> vars, std::span<const double> H, std::span<const double> g,
                     bool constrain_last = true);
  // New values for factor f's H and g (a relinearization); marks its variables.
  void replace_factor(int64_t f, std::span<const double> H, std::span<const double> g);
  void remove_factor(int64_t f);
  // Whether f is a live factor handle.
  bool has_factor(int64_t f) const;
  // The factors over variable v (live handles, in no particular order).
  const std::vector<int64_t>& factors_of(int32_t v) const { return vars_.at(v).factors; }

  // Marks v: its clique and its path to the root are eliminated again at the next refactor.
  void mark(int32_t v, bool constrain_last = false);
  // Marks every variable: the next refactor eliminates everything, ordered afresh (a full
  // reorder; constrained variables still last).
  void mark_all();
  bool has_marks() const { return !marked_.empty(); }

  // Eliminates the marked paths again. True on success (no marks remain); false, changing
  // nothing, when the top is not positive definite or a top variable has no factor, with
  // why in last_error().
  bool refactor();
  const std::string& last_error() const { return last_error_; }

  // Solves for δ top-down from the roots (see "Exactness"), and returns the variables whose
  // δ was rewritten. Call after a successful refactor().
  const std::vector<int32_t>& back_substitute(double wildfire_threshold);

  // δ of v (dim(v) scalars), as of the last back_substitute (zero before).
  std::span<const double> delta(int32_t v) const;
  // Sets δ of v to zero: after the caller moved v's linearization point by δ (the next
  // back_substitute rewrites it, v being marked by its relinearized factors).
  void clear_delta(int32_t v);

  const Stats& stats() const { return stats_; }
  int64_t num_cliques() const { return live_cliques_; }
  // Doubles held by panels and contribution blocks (the factor's memory, without factors).
  int64_t stored_doubles() const { return stored_doubles_; }

 private:
  struct Variable {
    int dim = 0;
    int64_t offset = 0;             // into delta_
    int32_t clique = -1;            // where v is frontal; -1 before its first elimination
    std::vector<int64_t> factors;   // live factors over v
  };
  struct Factor {
    std::vector<int32_t> vars;
    std::vector<double> H, g;       // n x n column-major, n
    bool live = false;
  };
  // One supernode: frontal variables F (eliminated here, in order) and separator S (the
  // later variables its columns reach). panel: (nf + ns) x nf column-major, [L_FF; L_SF];
  // y = L_FF⁻¹ (−g_F after the updates from below); C (ns x ns, lower triangle) and c (ns): what the
  // subtree rooted here sends to its ancestors: the Schur complement of the subtree's
  // variables out of [H, −g] restricted to S.
  struct Clique {
    std::vector<int32_t> vars;      // F then S
    int32_t frontal_vars = 0;
    int64_t nf = 0, ns = 0;         // scalars
    Doubles panel, C;
    std::vector<double> y, c;
    int32_t parent = -1;
    std::vector<int32_t> children;
    bool live = false;
    bool fresh = false;             // refactored since the last back_substitute
  };
  struct Top;

  void check_factor(std::span<const int32_t> vars, std::span<const double> H, std::span<const double> g) const;
  void mark_factor_vars(const Factor& f, bool constrain_last);
  // Steps of refactor().
  void collect_top(Top& top);
  void order_top(Top& top) const;
  void build_supernodes(Top& top) const;
  bool factor_top(Top& top);
  void commit_top(Top& top);
  struct TopSupernode;
  void assemble_front(const Clique& q, const TopSupernode& sn, const std::vector<Clique>& fresh);
  bool eliminate(Clique& q, const TopSupernode& sn, const std::vector<Clique>& fresh);
  Doubles take_spare(int64_t n);
  void give_spare(Doubles&& v);
  int32_t new_clique_id();

  std::vector<Variable> vars_;
  std::vector<Factor> factors_;
  std::vector<Clique> cliques_;
  std::vector<int32_t> free_cliques_;
  std::vector<int32_t> roots_;
  std::vector<double> delta_;
  std::vector<int32_t> marked_;           // distinct
  std::vector<uint8_t> mark_state_;       // per variable: 0, 1 marked, 2 marked and last
  std::vector<int32_t> changed_;          // by the last back_substitute
  std::vector<uint32_t> changed_epoch_;   // per variable
  uint32_t epoch_ = 0;
  std::vector<uint32_t> in_top_;          // per clique: top_epoch_ of the last top it was in
  uint32_t top_epoch_ = 0;
  Doubles front_, work_;                    // scratch
  std::vector<double> rhs_;
  std::vector<int64_t> to_;                 // scratch: front rows of a factor or child
  static constexpr size_t kMaxSpares = 64;
  std::vector<Doubles> spare_;              // freed cliques' buffers, for take_spare
  std::vector<int64_t> front_offset_;     // per variable: its offset in the current front
  int64_t live_cliques_ = 0, stored_doubles_ = 0;
  Stats stats_;
  std::string last_error_;
};

}  // namespace lsjit::linear
