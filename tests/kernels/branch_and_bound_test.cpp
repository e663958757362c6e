// The generic branch-and-bound on a problem whose relaxation is exact and cheap: 0-1
// knapsack, disjunction i = "x_i = 0 (first) or x_i = 1 (second)", relaxed to the
// fractional knapsack (Dantzig's greedy bound). Checks the global optimum against brute
// force, the answer's definition (smallest key among the optimal leaves) against every
// round width and thread count, the node limit, infeasibility and relaxation failures.
#include "quasistep/kernels/branch_and_bound.hpp"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <numeric>
#include <random>
#include <tbb/global_control.h>

namespace qs::branch_and_bound_test {
namespace {

constexpr int kMaxItems = 20;

struct Knapsack {
  int n = 0;
  std::array<double, kMaxItems> value{}, weight{};
  double capacity = 0;
  int fail_at_depth = -1;  // a test hook: the relaxation "fails" at this depth

  struct Workspace {
    std::array<int, kMaxItems> order{};
  };
  struct Warm {
    int depth = 0;  // the parent's depth: checks that children get their own parent's warm
  };
  using Solution = std::array<double, kMaxItems>;

  int disjunctions() const { return n; }
  Workspace make_workspace() const { return {}; }

  BnbEvaluation evaluate(const Side* fix, const Warm* parent, Workspace& ws, Warm& warm_out, Solution& x) const {
    int fixed = 0;
    for (int i = 0; i < n; ++i) fixed += fix[i] != Side::free;
    const int depth = parent ? parent->depth + 1 : 0;
    if (fixed != depth) return {Status::numerical_failure, 0, -1};  // wrong warm start handed over
    if (depth == fail_at_depth) return {Status::numerical_failure, 0, -1};
    warm_out.depth = depth;
    x.fill(0.0);
    double room = capacity, cost = 0;
    for (int i = 0; i < n; ++i)
      if (fix[i] == Side::second) {
        x[i] = 1;
        room -= weight[i];
        cost -= value[i];
      }
    if (room < 0) return {Status::infeasible, 0, -1};
    // Greedy by value density, ties by index: the LP optimum of the fractional knapsack.
    int m = 0;
    for (int i = 0; i < n; ++i)
      if (fix[i] == Side::free) ws.order[m++] = i;
    std::stable_sort(ws.order.begin(), ws.order.begin() + m,
                     [&](int a, int b) { return value[a] * weight[b] > value[b] * weight[a]; });
    int branch = -1;
    for (int k = 0; k < m; ++k) {
      const int i = ws.order[k];
      const double take = std::min(1.0, room / weight[i]);
      if (take <= 0) break;
      x[i] = take;
      room -= take * weight[i];
      cost -= take * value[i];
      if (take < 1) {
        branch = i;
        break;
      }
    }
    return {Status::solved, cost, branch};
  }
};

double brute_force(const Knapsack& k) {
  double best = 0;
  for (unsigned mask = 0; mask < (1u << k.n); ++mask) {
    double w = 0, v = 0;
    for (int i = 0; i < k.n; ++i)
      if (mask >> i & 1u) {
        w += k.weight[i];
        v += k.value[i];
      }
    if (w <= k.capacity) best = std::min(best, -v);
  }
  return best;
}

Knapsack random_knapsack(int n, std::uint64_t seed, bool integer_ties) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> small(1, 4);
  std::uniform_real_distribution<double> unit(0.5, 2.0);
  Knapsack k;
  k.n = n;
  double total = 0;
  for (int i = 0; i < n; ++i) {
    k.value[i] = integer_ties ? small(rng) : unit(rng);
    k.weight[i] = integer_ties ? small(rng) : unit(rng);
    total += k.weight[i];
  }
  k.capacity = integer_ties ? std::floor(total / 2) : total / 2;
  return k;
}

TEST(BranchAndBound, FindsTheGlobalOptimumOfRandomKnapsacks) {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const Knapsack k = random_knapsack(6 + static_cast<int>(seed % 10), seed, seed % 2 == 0);
    BranchAndBound<Knapsack> bnb(k);
    const auto& r = bnb.solve(k);
    ASSERT_EQ(r.status, Status::solved) << seed;
    EXPECT_NEAR(r.cost, brute_force(k), 1e-9) << seed;
    EXPECT_EQ(r.bound, r.cost);
    // The solution is integral, feasible, and costs what it says.
    double w = 0, v = 0;
    for (int i = 0; i < k.n; ++i) {
      EXPECT_TRUE(r.solution[i] == 0.0 || r.solution[i] == 1.0);
      w += r.solution[i] * k.weight[i];
      v += r.solution[i] * k.value[i];
    }
    EXPECT_LE(w, k.capacity + 1e-12);
    EXPECT_NEAR(-v, r.cost, 1e-12);
    EXPECT_GT(r.stats.nodes, 0);
    EXPECT_GT(r.stats.leaves, 0);
  }
}

// Counts its evaluations (the search must not evaluate a root the caller gave it).
struct CountedKnapsack : Knapsack {
  std::atomic<long>* calls = nullptr;
  BnbEvaluation evaluate(const Side* fix, const Warm* parent, Workspace& ws, Warm& warm_out, Solution& x) const {
    ++*calls;
    return Knapsack::evaluate(fix, parent, ws, warm_out, x);
  }
};

TEST(BranchAndBound, ARootTheCallerEvaluatedIsTakenAsItIs) {
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    std::atomic<long> calls{0};
    CountedKnapsack k;
    static_cast<Knapsack&>(k) = random_knapsack(6 + static_cast<int>(seed % 8), seed, seed % 2 == 0);
    if (seed == 12) k.capacity = 1e9;  // everything fits: the root is a leaf
    k.calls = &calls;
    BranchAndBound<CountedKnapsack> plain(k), given(k);
    const auto r1 = plain.solve(k);
    ASSERT_EQ(r1.status, Status::solved) << seed;
    const std::vector<Side> free(static_cast<size_t>(k.n), Side::free);
    CountedKnapsack::Warm warm;
    CountedKnapsack::Solution x{};
    const BnbEvaluation e = k.evaluate(free.data(), nullptr, given.workspace(0), warm, x);
    calls = 0;
    const BranchAndBound<CountedKnapsack>::Root root{e, &warm, &x};
    const auto& r2 = given.solve(k, nullptr, &root);
    ASSERT_EQ(r2.status, Status::solved) << seed;
    EXPECT_EQ(calls.load(), r2.stats.nodes - 1) << seed;  // every node but the root
    EXPECT_EQ(r2.stats.nodes, r1.stats.nodes) << seed;
    EXPECT_EQ(r2.cost, r1.cost) << seed;
    EXPECT_EQ(r2.fixings, r1.fixings) << seed;
    EXPECT_EQ(r2.solution, r1.solution) << seed;
    if (seed == 12) {
      EXPECT_EQ(r2.stats.nodes, 1);
    }
  }
}

TEST(BranchAndBound, AnswerIsTheSameForEveryRoundWidthAndThreadCount) {
  // Integer data: many optimal leaves tie; the answer is defined by its key alone.
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    const Knapsack k = random_knapsack(14, 100 + seed, true);
    std::vector<Side> key;
    std::array<double, kMaxItems> sol{};
    double cost = 0;
    bool first = true;
    for (const int threads : {1, 2, 8}) {
      tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
      for (const int width : {1, 3, 8, 32}) {
        BnbOptions o;
        o.round_width = width;
        BranchAndBound<Knapsack> bnb(k, o);
        const auto& r = bnb.solve(k);
        ASSERT_EQ(r.status, Status::solved);
        if (first) {
          key = r.fixings;
          sol = r.solution;
          cost = r.cost;
          first = false;
          continue;
        }
        EXPECT_EQ(r.fixings, key) << "seed " << seed << ", threads " << threads << ", width " << width;
        EXPECT_EQ(r.solution, sol);
        EXPECT_EQ(r.cost, cost);
      }
    }
  }
}

TEST(BranchAndBound, DroppingDominatedNodesChangesNothingButTheNodeCount) {
  // Integer data: many optimal leaves tie, which is where domination applies.
  long dominated = 0;
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    const Knapsack k = random_knapsack(8 + static_cast<int>(seed % 8), 200 + seed, true);
    BnbOptions keep;
    keep.prune_dominated = false;
    BranchAndBound<Knapsack> with(k), without(k, keep, 4096);
    const auto& a = with.solve(k);
    const auto& b = without.solve(k);
    ASSERT_EQ(a.status, Status::solved) << seed;
    ASSERT_EQ(b.status, Status::solved) << seed;
    EXPECT_EQ(a.fixings, b.fixings) << seed;
    EXPECT_EQ(a.solution, b.solution) << seed;
    EXPECT_EQ(a.cost, b.cost) << seed;
    EXPECT_EQ(b.stats.dominated, 0);
    EXPECT_LE(a.stats.nodes, b.stats.nodes) << seed;
    EXPECT_EQ(a.stats.nodes < b.stats.nodes, a.stats.dominated > 0) << seed;
    dominated += a.stats.dominated;
  }
  EXPECT_GT(dominated, 0);
}

/// Two disjunctions; every node costs 1 except the leaf fixing disjunction 1 "second",
/// which costs one rounding step more (1 + 2^-52, as two QP solves of the same optimum may
/// differ). The root branches on 1; the node fixing it "first" branches on 0; its children
/// are leaves.
/// The frame of a hand-made tree over two disjunctions; a node's solution codes its fixings.
struct TwoDisjunctions {
  struct Workspace {};
  struct Warm {};
  using Solution = int;
  int disjunctions() const { return 2; }
  Workspace make_workspace() const { return {}; }
  static int code(const Side* fix) { return 3 * static_cast<int>(fix[0]) + static_cast<int>(fix[1]); }
};

struct RoundingTie : TwoDisjunctions {
  BnbEvaluation evaluate(const Side* fix, const Warm*, Workspace&, Warm&, Solution& x) const {
    x = code(fix);
    if (fix[1] == Side::free) return {Status::solved, 1.0, 1};
    if (fix[1] == Side::second) return {Status::solved, 1.0 + 0x1p-52, -1};
    return {Status::solved, 1.0, fix[0] == Side::free ? 0 : -1};
  }
};

TEST(BranchAndBound, DominationLooksPastRoundingInTheCosts) {
  // The leaf (free, second) has the smaller key than any node below (free, first), whose
  // bound it exceeds by one rounding step only: those nodes are dominated (their leaves
  // could lower c* by that step at most), and the answer is the same as without the rule.
  const RoundingTie t;
  BnbOptions keep;
  keep.prune_dominated = false;
  BranchAndBound<RoundingTie> with(t), without(t, keep);
  const auto& a = with.solve(t);
  const auto& b = without.solve(t);
  ASSERT_EQ(a.status, Status::solved);
  ASSERT_EQ(b.status, Status::solved);
  EXPECT_EQ(a.solution, b.solution);
  EXPECT_EQ(a.solution, 2);  // (free, second)
  EXPECT_EQ(a.stats.nodes, 3);
  EXPECT_EQ(a.stats.dominated, 2);
  EXPECT_EQ(b.stats.nodes, 5);
}

// Three leaves of cost 1: (first, first) and (first, second) below (first, free), and
// (second, free). The canonical key puts fewer fixings first, so (second, free) is the
// answer although (first, first) is lexicographically smaller.
struct ShallowTie : TwoDisjunctions {
  BnbEvaluation evaluate(const Side* fix, const Warm*, Workspace&, Warm&, Solution& x) const {
    x = code(fix);
    if (fix[0] == Side::free) return {Status::solved, 1.0, 0};
    if (fix[0] == Side::first && fix[1] == Side::free) return {Status::solved, 1.0, 1};
    return {Status::solved, 1.0, -1};
  }
};

TEST(BranchAndBound, AmongTiedLeavesTheOneWithFewerFixingsIsTheAnswer) {
  const ShallowTie t;
  BnbOptions keep;
  keep.prune_dominated = false;
  for (const int width : {1, 2, 8}) {
    BnbOptions o;
    o.round_width = width;
    keep.round_width = width;
    BranchAndBound<ShallowTie> with(t, o), without(t, keep);
    const auto& a = with.solve(t);
    const auto& b = without.solve(t);
    ASSERT_EQ(a.status, Status::solved);
    ASSERT_EQ(b.status, Status::solved);
    EXPECT_EQ(a.solution, 6) << width;  // (second, free)
    EXPECT_EQ(b.solution, 6) << width;
    EXPECT_EQ(a.fixings, (std::vector<Side>{Side::second, Side::free}));
    // (first, free)'s children have two fixings: dominated by the one-fixing leaf.
    EXPECT_EQ(a.stats.nodes, 3) << width;
    EXPECT_EQ(a.stats.dominated, 2) << width;
    EXPECT_EQ(b.stats.nodes, 5) << width;
  }
}

TEST(BranchAndBound, StatisticsAreTheSameOnAnyThreadCount) {
  const Knapsack k = random_knapsack(16, 7, true);
  BnbStats reference{};
  for (const int threads : {1, 2, 8}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    BranchAndBound<Knapsack> bnb(k);
    const BnbStats s = bnb.solve(k).stats;
    if (threads == 1) {
      reference = s;
      continue;
    }
    EXPECT_EQ(s.nodes, reference.nodes);
    EXPECT_EQ(s.leaves, reference.leaves);
    EXPECT_EQ(s.pruned, reference.pruned);
    EXPECT_EQ(s.dominated, reference.dominated);
    EXPECT_EQ(s.rounds, reference.rounds);
    EXPECT_EQ(s.max_depth, reference.max_depth);
    EXPECT_EQ(s.branched, reference.branched);
  }
  // Distinct disjunctions split: at least the deepest path's, at most K, and at most one
  // per branched node.
  EXPECT_GE(reference.branched, reference.max_depth);
  EXPECT_LE(reference.branched, k.disjunctions());
  EXPECT_LE(reference.branched, reference.nodes - reference.leaves - reference.infeasible);
}

TEST(BranchAndBound, NodeLimitIsDeterministicAndReportsIncumbentAndBound) {
  const Knapsack k = random_knapsack(18, 11, false);
  const double optimum = brute_force(k);
  for (const long limit : {1L, 5L, 40L}) {
    std::vector<Side> key;
    for (const int threads : {1, 2, 8}) {
      tbb::global_control g(tbb::global_control::max_allowed_parallelism, threads);
      BnbOptions o;
      o.max_nodes = limit;
      BranchAndBound<Knapsack> bnb(k, o);
      const auto& r = bnb.solve(k);
      if (r.status == Status::solved) continue;  // small enough to finish
      ASSERT_EQ(r.status, Status::iteration_limit);
      EXPECT_EQ(r.stats.nodes, limit);
      EXPECT_LE(r.bound, optimum + 1e-12);  // a valid lower bound
      if (r.has_solution) {
        EXPECT_GE(r.cost, optimum - 1e-12);
      }
      if (threads == 1) {
        key = r.fixings;
      } else {
        EXPECT_EQ(r.fixings, key);
      }
    }
  }
}

TEST(BranchAndBound, EmptyProblemIsInfeasible) {
  Knapsack k = random_knapsack(5, 3, false);
  k.capacity = -1;  // even the empty set does not fit
  BranchAndBound<Knapsack> bnb(k);
  const auto& r = bnb.solve(k);
  EXPECT_EQ(r.status, Status::infeasible);
  EXPECT_FALSE(r.has_solution);
  EXPECT_EQ(r.stats.infeasible, 1);
}

TEST(BranchAndBound, ARelaxationFailureStopsTheSearchWithItsStatus) {
  Knapsack k = random_knapsack(12, 5, false);
  k.fail_at_depth = 2;
  BranchAndBound<Knapsack> bnb(k);
  EXPECT_EQ(bnb.solve(k).status, Status::numerical_failure);
}

TEST(BranchAndBound, TooManyTiedLeavesForTheCandidatePoolIsReportedNotDropped) {
  // Twelve identical items, room for six: C(12, 6) optimal sets; a pool of 2 is too small.
  Knapsack k;
  k.n = 12;
  for (int i = 0; i < k.n; ++i) k.value[i] = k.weight[i] = 1;
  k.capacity = 6.5;
  // Dominated nodes are kept, or the search would never hold more than a few candidates.
  BnbOptions o;
  o.prune_dominated = false;
  BranchAndBound<Knapsack> small(k, o, 2);
  const Status s = small.solve(k).status;
  BranchAndBound<Knapsack> big(k, o, 4096);
  const auto& r = big.solve(k);
  ASSERT_EQ(r.status, Status::solved);
  EXPECT_EQ(r.cost, -6);
  if (r.stats.leaves > 2) {
    EXPECT_EQ(s, Status::numerical_failure);
  }
}

TEST(BranchAndBound, WrongNumberOfDisjunctionsIsBadInput) {
  Knapsack k = random_knapsack(8, 1, false);
  BranchAndBound<Knapsack> bnb(k);
  k.n = 7;
  EXPECT_EQ(bnb.solve(k).status, Status::bad_input);
}

}  // namespace
}  // namespace qs::branch_and_bound_test
