// A deterministic, task-parallel branch-and-bound over disjunctions.
//
// The problem: K disjunctions, each satisfied by one of two sides ("first" or "second"),
// e.g. a complementarity pair z_i w_i = 0 is  z_i = 0  or  w_i = 0.  A node fixes some
// disjunctions to a side; the caller's relaxation solves the problem with those fixings and
// the others relaxed, and says (a) whether it is infeasible, (b) its optimal cost, a lower
// bound for every node below, and (c) which free disjunction its solution violates (the
// one to branch on), or none, in which case the node is a *leaf*: its solution is feasible
// for the original problem. Used by the MIQP stepper (Pang & Tedrake 2018, a QP per node) and the exact
// UCP method (Pang, Trinkle & Lo 1996, two LPs per node).
//
// Which answer (the definition the result follows, whatever the thread count):
//   c*   = the least cost of any leaf (the global optimum),
//   tol  = options.absolute_gap + options.relative_gap * |c*|,
//   the answer is, among the leaves with cost <= c* + tol, the one with the smallest
//   canonical key: its number of fixings first (the shallowest leaf), then its fixings over
//   disjunctions 0..K-1 compared lexicographically with free < first < second.
//   (Lexicographic order alone made the MIQP explore whole subtrees tied with a leaf
//   found at depth 2, only to prove they held no tied leaf of smaller key: 39 nodes on one
//   36-pair step, 7 with the count first.)
// A node is pruned by bound only when its bound exceeds the incumbent's cost plus its tolerance;
// c + tol(c) grows with c (relative_gap is clamped below 1), so that threshold is never
// below c* + tol(c*) and no ancestor of a leaf with cost <= c* + tol is ever pruned:
// every such leaf is found, in any order of exploration. Two caveats: this assumes a
// child's relaxation cost is not below its parent's by more than the tolerance (true to
// the relaxation solver's accuracy); and more near-tied leaves than the candidate pool
// holds is reported as numerical_failure at a point that depends on the search order.
// A node is also dropped when it is *dominated*: some candidate leaf C already has
// cost(C) <= bound(n) + s and a smaller key, s = 1e-12 (|cost(C)| + |bound(n)|) + 1e-3
// absolute_gap (rounding: two solves of one optimum differ by that much, and without s a
// leaf one ulp above its parent's cost dominated nothing). If every leaf L below n costs at
// least bound(n) (monotonicity without the tolerance's slack), then since key(L) >= key(n)
// > key(C) (L fixes what n fixes and more: more fixings, or the same ones), L cannot lower c* by more
// than s; if C is within c* + tol, C precedes L, and if not, neither is L: the answer is the
// same as without this rule (BnbOptions::prune_dominated) but for that margin. A leaf below
// n that costs delta less than bound(n) (rounding) could have lowered c* by up to
// delta + s and pushed a candidate lying that close to the edge c* + tol out of the
// answer's set; so with the rule the answer is the smallest key among the leaves within tol
// of the best cost found, which is within delta + s of c*. The rule matters when many
// leaves tie, as the MIQP's zero-cost steps do (42% fewer nodes on the Pang & Tedrake 2018 grasp), and
// when a leaf ties with its parent's bound, as the MIQP's stage 2 does.
// Because the tree itself is deterministic (a node's relaxation depends only on its
// fixings, its parent's warm start and its workspace's earlier nodes, which are fixed by
// the round order below), so is the answer.
//
// Search order and parallelism: best-bound first, in synchronous *rounds*. Each round takes
// up to options.round_width open nodes in a fixed order (bound, then key), evaluates them in
// parallel (tbb::parallel_for inside this_task_arena::isolate, so a waiting thread never
// picks up another world's work on this solver's scratch), each with workspace number =
// its position in the round, then merges the results in that same order. The round width is
// an option, not the thread count, so the node limit, the statistics and the answer are the
// same on 1, 2 or 8 threads. Only the optional time limit depends on timing.
//
// Storage: nodes are stored as (parent, branched disjunction, side) and their fixings
// rebuilt by walking to the root, so a node costs a few dozen bytes plus the relaxation's
// Warm. Every pool is sized from the capacity at construction: solve() allocates nothing
// (beyond TBB's own task storage when it runs in parallel).
//
// References: Land & Doig (1960) for branch-and-bound; Lawler & Wood, "Branch-and-bound
// methods: a survey", Oper. Res. 14(4), 1966, for best-bound search.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "quasistep/kernels/bnb_stats.hpp"
#include "quasistep/kernels/status.hpp"

namespace qs {

/// How a node fixes one disjunction. The numeric order is the canonical key's order.
enum class Side : std::uint8_t { free = 0, first = 1, second = 2 };

/// What the relaxation says about one node.
struct BnbEvaluation {
  /// solved: the relaxation has an optimum (bound, branch valid); infeasible: the node is
  /// empty; anything else: the relaxation failed, and the search stops with that status.
  Status status = Status::not_run;
  double bound = 0;  // the relaxation's optimal cost: a lower bound for the subtree
  int branch = -1;   // a free disjunction the solution violates; -1: none (a leaf)
};

struct BnbOptions {
  long max_nodes = 100000;     // relaxations evaluated before iteration_limit (deterministic)
  double absolute_gap = 1e-9;  // tol = absolute_gap + relative_gap * |c*| (file comment)
  double relative_gap = 1e-9;
  int round_width = 8;         // nodes evaluated per round: fixes the search, not the threads
  double time_limit = 0;       // seconds, 0: none. Timing-dependent: the one non-deterministic
                               // way to stop (status iteration_limit, like the node limit)
  bool parallel = true;        // false: evaluate each round's nodes in order on this thread
  /// Feasibility problems (every leaf is as good as any other): stop at the first leaf in
  /// the search order, i.e. in the merge order of the rounds. Deterministic for a given
  /// round_width, on any thread count; the answer is then that leaf, not the smallest key.
  bool stop_at_first_leaf = false;
  /// Drop dominated open nodes (file comment): fewer nodes, the same answer.
  bool prune_dominated = true;
};

/// Relaxation concept (see tests/kernels/branch_and_bound_test.cpp for a complete one):
///   struct R {
///     using Workspace = ...;  // scratch of one evaluation; the solver holds round_width
///     using Warm = ...;       // what a child needs from its parent (copyable, fixed size)
///     using Solution = ...;   // a leaf's solution (copyable, fixed size)
///     int disjunctions() const;
///     Workspace make_workspace() const;
///     // optional: Warm make_warm() const; Solution make_solution() const; pre-sized
///     // values the pools are filled with, so that assigning to them allocates nothing.
///     // fixings: K entries; parent: the parent's warm_out (at the root: solve()'s
///     // root_warm, null by default).
///     BnbEvaluation evaluate(const Side* fixings, const Warm* parent, Workspace& ws,
///                            Warm& warm_out, Solution& solution_out) const;
///   };
/// evaluate must be safe to call concurrently on different workspaces, and depend only on
/// its arguments, including what the workspace kept from its earlier calls (e.g. the last
/// factorization, for a hot start): the solver guarantees that the i-th node of every
/// round is evaluated on workspace i, whatever the thread count, so that state is itself
/// a deterministic function of the search (part of this contract; tested with the MIQP on
/// 1, 2 and 8 threads).
template <class Relaxation>
class BranchAndBound {
 public:
  using Workspace = typename Relaxation::Workspace;
  using Warm = typename Relaxation::Warm;
  using Solution = typename Relaxation::Solution;

  struct Result {
    Status status = Status::not_run;  // solved, infeasible (every leaf empty: the exhausted
                                      // tree is the certificate), iteration_limit, or the
                                      // relaxation's failure status
    BnbStats stats;
    bool has_solution = false;        // solved, or iteration_limit with an incumbent
    Solution solution{};              // the answer (file comment) or the best incumbent
    double cost = std::numeric_limits<double>::infinity();
    /// A lower bound on c*: c* itself when solved; at iteration_limit the least bound of
    /// the open nodes (or the incumbent's cost, if lower).
    double bound = -std::numeric_limits<double>::infinity();
    std::vector<Side> fixings;        // the answer's key (K entries; sized at construction)
  };

  /// Pools for at most options.max_nodes evaluations and candidates leaves within the
  /// tolerance of the best cost at any time (more is reported as numerical_failure, never
  /// silently dropped).
  BranchAndBound(const Relaxation& relax, const BnbOptions& options = {}, int max_candidates = 256)
      : opt_(sanitize(options)), k_(relax.disjunctions()) {
    const long cap = 2 * opt_.max_nodes + 1;  // every evaluated node adds at most two
    nodes_.resize(static_cast<size_t>(cap));
    Warm warm0{};
    Solution solution0{};
    if constexpr (requires { relax.make_warm(); }) warm0 = relax.make_warm();
    if constexpr (requires { relax.make_solution(); }) solution0 = relax.make_solution();
    warm_.assign(static_cast<size_t>(opt_.max_nodes), warm0);
    open_.reserve(static_cast<size_t>(cap));
    const int w = opt_.round_width;
    round_.resize(static_cast<size_t>(w));
    eval_.resize(static_cast<size_t>(w));
    round_warm_.assign(static_cast<size_t>(w), warm0);
    round_solution_.assign(static_cast<size_t>(w), solution0);
    round_fixings_.assign(static_cast<size_t>(w) * k_, Side::free);
    for (int i = 0; i < w; ++i) workspaces_.push_back(relax.make_workspace());
    candidates_.resize(static_cast<size_t>(max_candidates));
    candidate_solution_.assign(static_cast<size_t>(max_candidates), solution0);
    result_.solution = solution0;
    candidate_fixings_.assign(static_cast<size_t>(max_candidates) * k_, Side::free);
    key_a_.assign(k_, Side::free);
    branched_.assign(k_, 0);
    key_b_.assign(k_, Side::free);
    result_.fixings.assign(k_, Side::free);
  }

  const BnbOptions& options() const { return opt_; }
  /// The answer's tolerance (file comment) may change between solves; the sizes may not.
  void set_tolerance(double absolute_gap, double relative_gap) {
    BnbOptions o = opt_;
    o.absolute_gap = absolute_gap;
    o.relative_gap = relative_gap;
    opt_ = sanitize(o);
  }

  /// A root the caller has evaluated itself (to try a shortcut first): evaluate(all free,
  /// root_warm, workspace(0), *warm, *solution) gave `evaluation`. The search then takes it
  /// as round 0's node 0 instead of evaluating the root again (the same thing, so the
  /// answer does not change). The evaluation may also be made on a workspace of the
  /// caller's (one of the same relaxation, hot from other work) and that workspace then
  /// swapped into workspace(0): what matters is that workspace(0) holds what the root's
  /// evaluation left, since round 1's first node starts from it.
  struct Root {
    BnbEvaluation evaluation;
    const Warm* warm;
    const Solution* solution;
  };
  /// Workspace i: the one the i-th node of every round is evaluated on (for a Root).
  Workspace& workspace(int i) { return workspaces_[static_cast<size_t>(i)]; }

  /// Runs the search. The relaxation must be the one the solver was built for (same K).
  /// root_warm, when given, is passed to the root's evaluation as its parent's warm start
  /// (e.g. the answer of an earlier search over the same constraints); the caller keeps it
  /// alive for the call. The answer then depends on it as on any parent's warm start.
  /// root, when given, is the root's evaluation, made as the Root comment says.
  const Result& solve(const Relaxation& relax, const Warm* root_warm = nullptr, const Root* root = nullptr) {
    const auto start = std::chrono::steady_clock::now();
    Result& r = result_;
    r.status = Status::not_run;
    r.stats = BnbStats{};
    r.has_solution = false;
    r.cost = std::numeric_limits<double>::infinity();
    r.bound = -std::numeric_limits<double>::infinity();
    std::fill(r.fixings.begin(), r.fixings.end(), Side::free);
    if (relax.disjunctions() != k_) return finish(Status::bad_input, start);

    n_nodes_ = 0;
    n_candidates_ = 0;
    std::fill(branched_.begin(), branched_.end(), 0);
    best_ = std::numeric_limits<double>::infinity();
    open_.clear();
    nodes_[0] = Node{-1, -1, Side::free, 0, -std::numeric_limits<double>::infinity(), -1};
    n_nodes_ = 1;
    push_open(0);

    while (!open_.empty()) {
      if (r.stats.nodes >= opt_.max_nodes || out_of_time(start)) {
        // Stopped early: the bound is the least of the open nodes' bounds.
        double lo = best_;
        for (const int n : open_) lo = std::min(lo, nodes_[n].bound);
        r.bound = lo;
        select_answer();
        return finish(Status::iteration_limit, start);
      }
      // 1. Take this round's nodes in (bound, key) order, dropping those the incumbent prunes.
      int m = 0;
      const long room = opt_.max_nodes - r.stats.nodes;
      while (!open_.empty() && m < opt_.round_width && m < room) {
        const int n = pop_open();
        if (nodes_[n].bound > best_ + tolerance(best_)) {
          ++r.stats.pruned;
          continue;
        }
        if (dominated(n)) {
          ++r.stats.dominated;
          continue;
        }
        round_[m++] = n;
      }
      if (m == 0) continue;
      // 2. Evaluate them, in parallel or not: slot i uses workspace i and writes slot i.
      for (int i = 0; i < m; ++i) rebuild_fixings(round_[i], &round_fixings_[static_cast<size_t>(i) * k_]);
      auto evaluate = [&](int i) {
        if (root && round_[i] == 0) {
          eval_[i] = root->evaluation;
          round_warm_[i] = *root->warm;
          round_solution_[i] = *root->solution;
          return;
        }
        const Node& nd = nodes_[round_[i]];
        const Warm* parent = nd.parent >= 0 ? &warm_[nodes_[nd.parent].warm] : root_warm;
        eval_[i] = relax.evaluate(&round_fixings_[static_cast<size_t>(i) * k_], parent, workspaces_[i],
                                  round_warm_[i], round_solution_[i]);
      };
      if (opt_.parallel && m > 1) {
        tbb::this_task_arena::isolate([&] {
          tbb::parallel_for(tbb::blocked_range<int>(0, m, 1), [&](const tbb::blocked_range<int>& br) {
            for (int i = br.begin(); i != br.end(); ++i) evaluate(i);
          });
        });
      } else {
        for (int i = 0; i < m; ++i) evaluate(i);
      }
      ++r.stats.rounds;
      // 3. Merge in round order.
      for (int i = 0; i < m; ++i) {
        const int n = round_[i];
        const BnbEvaluation& e = eval_[i];
        ++r.stats.nodes;
        r.stats.max_depth = std::max(r.stats.max_depth, nodes_[n].depth);
        if (e.status == Status::infeasible) {
          ++r.stats.infeasible;
          continue;
        }
        if (e.status != Status::solved || !std::isfinite(e.bound)) return finish(fail_status(e.status), start);
        if (e.branch < 0) {
          ++r.stats.leaves;
          if (!add_candidate(e.bound, &round_fixings_[static_cast<size_t>(i) * k_], round_solution_[i]))
            return finish(Status::numerical_failure, start);
          if (opt_.stop_at_first_leaf) {
            r.bound = best_;
            select_answer();
            return finish(Status::solved, start);
          }
          continue;
        }
        if (e.branch >= k_ || round_fixings_[static_cast<size_t>(i) * k_ + e.branch] != Side::free)
          return finish(Status::numerical_failure, start);  // the relaxation broke its contract
        if (e.bound > best_ + tolerance(best_)) {
          ++r.stats.pruned;
          continue;
        }
        if (!branched_[static_cast<size_t>(e.branch)]) {
          branched_[static_cast<size_t>(e.branch)] = 1;
          ++r.stats.branched;
        }
        // Keep the parent's warm start for its children, then open them.
        const long w = r.stats.nodes - 1;  // one warm slot per evaluated node
        warm_[static_cast<size_t>(w)] = round_warm_[i];
        nodes_[n].warm = static_cast<int>(w);
        for (const Side s : {Side::first, Side::second}) {
          nodes_[n_nodes_] = Node{n, e.branch, s, nodes_[n].depth + 1, e.bound, -1};
          push_open(n_nodes_++);
        }
      }
    }
    if (n_candidates_ == 0) return finish(Status::infeasible, start);
    r.bound = best_;
    select_answer();
    return finish(Status::solved, start);
  }

  const Result& result() const { return result_; }

 private:
  struct Node {
    int parent;      // -1 at the root
    int disjunction; // the disjunction this node fixed relative to its parent (-1 at the root)
    Side side;
    int depth;
    double bound;    // the parent's relaxation cost (the root: -inf)
    int warm;        // index into warm_ once evaluated and branched
  };
  struct Candidate {
    double cost;
    bool alive;
  };

  static BnbOptions sanitize(BnbOptions o) {
    o.max_nodes = std::max(1L, o.max_nodes);
    o.round_width = std::max(1, o.round_width);
    // c + a + r |c| must grow with c for the pruning argument (file comment): r < 1.
    o.absolute_gap = std::max(0.0, o.absolute_gap);
    o.relative_gap = std::clamp(o.relative_gap, 0.0, 0.5);
    return o;
  }
  static Status fail_status(Status s) { return s == Status::solved ? Status::numerical_failure : s; }

  double tolerance(double cost) const {
    return std::isfinite(cost) ? opt_.absolute_gap + opt_.relative_gap * std::abs(cost) : 0.0;
  }
  bool out_of_time(std::chrono::steady_clock::time_point start) const {
    return opt_.time_limit > 0 &&
           std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > opt_.time_limit;
  }

  void rebuild_fixings(int n, Side* out) const {
    std::fill(out, out + k_, Side::free);
    for (int i = n; nodes_[i].parent >= 0; i = nodes_[i].parent) out[nodes_[i].disjunction] = nodes_[i].side;
  }

  /// Open-node order: smaller bound first, then smaller key. A binary heap on open_ whose
  /// "less" is "comes later", so the front is the next node.
  bool later(int a, int b) {
    if (nodes_[a].bound != nodes_[b].bound) return nodes_[a].bound > nodes_[b].bound;
    rebuild_fixings(a, key_a_.data());
    rebuild_fixings(b, key_b_.data());
    return key_less(key_b_.data(), key_a_.data());
  }
  void push_open(int n) {
    open_.push_back(n);
    std::push_heap(open_.begin(), open_.end(), [this](int a, int b) { return later(a, b); });
  }
  int pop_open() {
    std::pop_heap(open_.begin(), open_.end(), [this](int a, int b) { return later(a, b); });
    const int n = open_.back();
    open_.pop_back();
    return n;
  }

  /// The canonical key's order (file comment): fewer fixings first, then lexicographic.
  bool key_less(const Side* a, const Side* b) const {
    int da = 0, db = 0;
    for (int d = 0; d < k_; ++d) {
      da += a[d] != Side::free;
      db += b[d] != Side::free;
    }
    if (da != db) return da < db;
    return std::lexicographical_compare(a, a + k_, b, b + k_);
  }

  /// Costs this close are the same optimum evaluated twice (file comment).
  double rounding_slack(double a, double b) const {
    return 1e-12 * (std::abs(a) + std::abs(b)) + 1e-3 * opt_.absolute_gap;
  }

  /// A candidate with cost <= the node's bound (to rounding) and a smaller key than the
  /// node's (file comment): then no leaf below the node can be the answer.
  bool dominated(int n) {
    if (!opt_.prune_dominated) return false;
    const double bound = nodes_[n].bound;
    bool key_built = false;
    for (int c = 0; c < n_candidates_; ++c) {
      if (!(candidates_[c].cost <= bound + rounding_slack(bound, candidates_[c].cost))) continue;
      if (!key_built) {
        rebuild_fixings(n, key_a_.data());
        key_built = true;
      }
      const Side* key_c = &candidate_fixings_[static_cast<size_t>(c) * k_];
      if (key_less(key_c, key_a_.data())) return true;
    }
    return false;
  }

  /// Keeps every leaf within the tolerance of the best cost seen so far.
  bool add_candidate(double cost, const Side* fixings, const Solution& sol) {
    if (cost > best_ + tolerance(best_)) return true;  // cannot be within c* + tol
    if (cost < best_) {
      best_ = cost;
      // Drop the candidates the new best excludes, compacting the pool.
      int kept = 0;
      for (int c = 0; c < n_candidates_; ++c) {
        if (candidates_[c].cost > best_ + tolerance(best_)) continue;
        if (kept != c) {
          candidates_[kept] = candidates_[c];
          candidate_solution_[kept] = candidate_solution_[c];
          std::copy_n(&candidate_fixings_[static_cast<size_t>(c) * k_], k_,
                      &candidate_fixings_[static_cast<size_t>(kept) * k_]);
        }
        ++kept;
      }
      n_candidates_ = kept;
    }
    if (n_candidates_ == static_cast<int>(candidates_.size())) return false;
    candidates_[n_candidates_] = Candidate{cost, true};
    candidate_solution_[n_candidates_] = sol;
    std::copy_n(fixings, k_, &candidate_fixings_[static_cast<size_t>(n_candidates_) * k_]);
    ++n_candidates_;
    return true;
  }

  /// The answer: the smallest key among the candidates within tolerance of the best cost.
  void select_answer() {
    int pick = -1;
    for (int c = 0; c < n_candidates_; ++c) {
      if (candidates_[c].cost > best_ + tolerance(best_)) continue;
      if (pick < 0 || key_less(&candidate_fixings_[static_cast<size_t>(c) * k_],
                               &candidate_fixings_[static_cast<size_t>(pick) * k_]))
        pick = c;
    }
    if (pick < 0) return;
    result_.has_solution = true;
    result_.cost = candidates_[pick].cost;
    result_.solution = candidate_solution_[pick];
    std::copy_n(&candidate_fixings_[static_cast<size_t>(pick) * k_], k_, result_.fixings.begin());
  }

  const Result& finish(Status s, std::chrono::steady_clock::time_point start) {
    result_.status = s;
    result_.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result_;
  }

  BnbOptions opt_;
  int k_;
  std::vector<Node> nodes_;
  std::vector<Warm> warm_;
  std::vector<int> open_;
  std::vector<int> round_;
  std::vector<BnbEvaluation> eval_;
  std::vector<Warm> round_warm_;
  std::vector<Solution> round_solution_;
  std::vector<Side> round_fixings_;
  std::vector<Workspace> workspaces_;
  std::vector<Candidate> candidates_;
  std::vector<Solution> candidate_solution_;
  std::vector<Side> candidate_fixings_;
  std::vector<Side> key_a_, key_b_;
  std::vector<unsigned char> branched_;  // (K) branched on in this search
  int n_nodes_ = 0, n_candidates_ = 0;
  double best_ = std::numeric_limits<double>::infinity();
  Result result_;
};

}  // namespace qs
