// The MIQP step's two stages (Pang & Tedrake 2018: stage 1 the least command error, stage 2
// the least grip among stage 1's optima) and the step that runs them.
#include "quasistep/core/formulations/pang_tedrake_miqp/pang_tedrake_miqp.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "pang_tedrake_miqp_problem.hpp"
#include "quasistep/core/number_text.hpp"

namespace qs {

namespace {
// Stage 2's tolerance (the search's and the hint's): absolute in N s, and relative.
constexpr double kStage2Gap = 1e-12;
constexpr double kStage2Relative = 1e-9;
// Problem::unit_complementarity's bound (the pinned examples' answers reach 2.8e-13, measured).
constexpr double kUnitComplementarityTolerance = 1e-9;
constexpr double kInf = std::numeric_limits<double>::infinity();
// Searching steps without a polish after one that failed to settle stage 2's root.
constexpr double kPolishRetry = 3.0;
// Streak steps settled by a polish certified through degenerate exchanges before stage 2's
// root goes first again (stage_two()).
constexpr double kCertifiedStreak = 3.0;
}  // namespace

Status PangTedrakeMiqp::stage_two(double x1_grip, double last_record, const double* last_sides) {
  Problem& p = *problem_;
  const bool polish = !(last_record < 0.0);
  RootProbe& rp = *root_probe_;
  // Stage 2's root is evaluated on the root probe's workspace, hot from stage 1's root
  // there when that was a leaf (the same constraints, stage 2's equalities), and then
  // trades places with the search's workspace 0, where the search expects the root's
  // factorization (its children start hot from it). A polish goes on whichever of the two
  // does not hold a root.
  Problem::Workspace* polish_ws = &bnb_->workspace(0);
  const int n = p.n;
  stage2_ = BnbStats{};
  // x1 is the hint: a node it fits and whose relaxation cannot beat it is a leaf at x1.
  x1_.head(n) = hint_x_.head(n);
  const Eigen::VectorXd& x1 = x1_;
  p.hint = &hint_x_;
  p.hint_cost = x1_grip;
  p.hint_abs = kStage2Gap;
  p.hint_rel = kStage2Relative;
  long polished = 0;
  bool hint_polished = false;  // the hint is a polish's point, not x1
  const auto settled = [&](long qps) {
    p.hint = nullptr;
    polish_record_ = 1.0;
    stage2_.nodes = qps;
    stage2_.leaves = stage2_.rounds = 1;
    x_.head(n) = hint_x_.head(n);
    return Status::solved;
  };
  // A polish: every pair fixed to a side and stage 2's QP solved there, with the sides of
  // the last step's answer (where its slot was active then; a grip that slips goes on
  // slipping) or with the sides x1 satisfies (the one nearer zero; x1 is feasible there).
  // A solved polish is a complementary point: the hint when it grips less. False when the
  // pattern is the one just tried.
  bool exchanged = false;  // the last polish's root_optimal_at took degenerate exchanges
  const auto run_polish = [&](bool last, bool& root_optimal) {
    root_optimal = false;
    bool differs = polished == 0;
    for (int i = 0; i < p.n_slots; ++i) {
      const int c = p.contact_of_slot[i];
      for (int t = 0; t < 4; ++t) {
        const size_t d = static_cast<size_t>(4 * i + t);
        Side side = Side::free;
        if (c >= 0) {
          side = p.side_at(c, t, x1);
          const double l = last && last_sides ? last_sides[d] : 0.0;
          if (l == 1.0 || l == 2.0) side = static_cast<Side>(static_cast<int>(l));
        }
        differs = differs || side != rp.polish_fixings[d];
        rp.polish_fixings[d] = side;
      }
    }
    if (!differs) return false;
    const Eigen::VectorXd* hint = p.hint;
    p.hint = nullptr;  // the polish is a plain QP
    const BnbEvaluation e = p.evaluate(rp.polish_fixings.data(), &stage1_answer_, *polish_ws, rp.polish_warm, rp.polish);
    p.hint = hint;
    ++polished;
    const double g = p.c.head(n).dot(rp.polish.x.head(n));  // stage 2's cost (H = 0)
    if (e.status != Status::solved || p.complementarity(rp.polish.x) > p.tolerance) return true;
    root_optimal = p.root_optimal_at(rp.polish_fixings.data(), *polish_ws, exchanged);
    if (g < p.hint_cost || root_optimal) {
      hint_x_.head(n) = rp.polish.x.head(n);
      p.hint_cost = g;
      hint_polished = true;
    }
    return true;
  };
  // On a streak the polish settled (last_record 1 .. kCertifiedStreak), the last answer's
  // sides come first: when that polish's optimum is also the root relaxation's
  // (root_optimal_at: the fixings' multipliers have their signs, or do after degenerate
  // exchanges), the root is a leaf at it without being solved (1 QP). A certificate by
  // exchanges counts up the record: such a streak may go on where the root alone, hot
  // from stage 1's root and cheaper than the warm polish, would be a leaf too (the old
  // sign test sent those steps to the root), so every kCertifiedStreak + 1-th step of it
  // the root goes first again and the streak ends if the root settles alone (in the
  // Monte Carlo grasp study the polish-first streak was 4% slower than the root; on seed
  // 000's lift steps the root is not a leaf and the probe costs a QP in four steps).
  bool root_optimal = false, tried_last = false;
  if (polish && last_record >= 1.0 && last_record <= kCertifiedStreak && last_sides) {
    tried_last = run_polish(true, root_optimal);
    if (root_optimal) {
      const Status st = settled(1);
      if (exchanged) polish_record_ = last_record + 1.0;
      return st;
    }
  }
  // The root: mostly a leaf (the relaxation's own point, or the hint).
  const BnbEvaluation root =
      p.evaluate(free_fixings_.data(), &stage1_answer_, rp.ws, rp.root2_warm, rp.root2);
  std::swap(rp.ws, bnb_->workspace(0));  // moves: no copy, no allocation
  polish_ws = &rp.ws;
  if (root.status == Status::solved && root.branch < 0) {
    p.hint = nullptr;
    if (hint_polished && rp.root2.x.head(n) == hint_x_.head(n)) polish_record_ = 1.0;  // the streak goes on
    stage2_.nodes = 1 + polished;
    stage2_.leaves = stage2_.rounds = 1;
    x_.head(n) = rp.root2.x.head(n);
    return Status::solved;
  }
  // Not a leaf: the root's relaxation grips less than the hint. Polish (the last answer's
  // sides unless tried above, then x1's): when a polish's grip is down to the root's bound
  // the root is a leaf at it (the Pang & Tedrake 2018 lift steps: x1 grips with 0.39 N s, the root and
  // the answer with 0.2); else the search goes on with the best hint.
  if (polish && root.status == Status::solved) {
    polish_record_ = -kPolishRetry;  // unless a polish settles the root, below
    const auto down_to_root = [&] {
      return p.hint_cost <= root.bound + kStage2Gap + kStage2Relative * std::abs(root.bound);  // evaluate's rule
    };
    for (const bool last : {true, false}) {
      if (last && tried_last) continue;
      if (run_polish(last, root_optimal) && down_to_root()) return settled(1 + polished);
    }
  }
  if (!polish) polish_record_ = last_record + 1.0;  // one step nearer the next try
  const BranchAndBound<Problem>::Root evaluated{root, &rp.root2_warm, &rp.root2};
  const auto& r2 = bnb_->solve(p, &stage1_answer_, &evaluated);
  p.hint = nullptr;
  stage2_ = r2.stats;
  stage2_.nodes += polished;
  if (r2.status != Status::solved) {
    const bool node_limit = r2.status == Status::iteration_limit && r2.stats.nodes >= options_.max_nodes;
    std::string what = "stage 2 (least normal impulse at the optimal dq_a) ended ";
    what += node_limit ? std::string("at the node limit (") + std::to_string(r2.stats.nodes) + " nodes)"
                       : std::string(to_string(r2.status));
    return fail(node_limit ? Status::iteration_limit : Status::numerical_failure, what);
  }
  x_.head(n) = r2.solution.x.head(n);
  return Status::solved;
}

Status PangTedrakeMiqp::solve_stages(const Model& m, const State& s) {
  Problem& p = *problem_;
  const int nu = m.n_u, na = m.n_a, nc = p.nc, n = p.n;
  // Costs are m^2 (|dqa_bar|^2 ~ 1e-6 for the gripper): ties within 1e-9 of that scale.
  bnb_->set_tolerance(1e-9 * std::max(p.constant, 1e-12), 1e-9);
  // First the root warm-started from the last step's stage-1 answer (kept in State::memory,
  // so a batch keeps it per world; mapped onto this step's contacts by slot). Mostly the
  // contact mode goes on and that root is a leaf: it is then the whole tree, and the answer
  // (the 36-pair box: 1.9 instead of 20 nodes per step). Otherwise that root is the
  // search's root (moved into workspace 0, where the search expects it): the cold root it
  // saves is the dearest node (a phase-1 LP). Its vertex shapes the tree differently from a
  // cold root's, neither always smaller: 6% fewer QPs in the Monte Carlo grasp study, 12%
  // fewer nodes on the 36-pair box, 6 more on the Pang & Tedrake 2018 grasp's 60 steps. A warm root
  // that failed leaves a cold search.
  bool root_leaf = false, warm_root = false;
  BnbEvaluation warm_root_eval{};
  if (load_root_warm(m, s)) {
    RootProbe& rp = *root_probe_;
    const BnbEvaluation e = p.evaluate(free_fixings_.data(), &root_warm_, rp.ws, rp.warm, rp.solution);
    root_leaf = e.status == Status::solved && e.branch < 0;
    if (!root_leaf && e.status == Status::solved) {
      warm_root = true;
      warm_root_eval = e;
      std::swap(rp.ws, bnb_->workspace(0));  // moves: no copy, no allocation
    }
    if (root_leaf) {
      stage1_ = BnbStats{};
      stage1_.nodes = stage1_.leaves = 1;
      stage1_.rounds = 1;
      cost_ = e.bound;
    }
  }
  const BranchAndBound<Problem>::Root evaluated{warm_root_eval, &root_probe_->warm, &root_probe_->solution};
  const auto& r1 = root_leaf ? bnb_->result() : warm_root ? bnb_->solve(p, &root_warm_, &evaluated) : bnb_->solve(p);
  if (!root_leaf) stage1_ = r1.stats;
  if (!root_leaf && r1.status != Status::solved) {
    if (r1.status == Status::infeasible)
      return fail(Status::infeasible, "the step's MIQP has no feasible point: branch-and-bound closed all " +
                                          std::to_string(r1.stats.nodes) + " nodes, each by an infeasible QP");
    // The B&B passes a relaxation's own failure through: a node QP's iteration limit is
    // not the search's node limit.
    if (r1.status == Status::iteration_limit && r1.stats.nodes >= options_.max_nodes)
      return fail(r1.status, "node limit reached (" + std::to_string(r1.stats.nodes) + " nodes); best cost " +
                                 (r1.has_solution ? std::to_string(r1.cost) : std::string("none")) +
                                 ", lower bound " + std::to_string(r1.bound));
    std::string what = "stage 1: a node's QP ended ";
    what += to_string(r1.status);
    what += " after " + std::to_string(r1.stats.nodes) + " nodes";
    return fail(r1.status == Status::iteration_limit ? Status::numerical_failure : r1.status, what);
  }
  if (!root_leaf) cost_ = r1.cost;
  const Problem::Solution& answer1 = root_leaf ? root_probe_->solution : r1.solution;
  dqa_star_ = answer1.x.segment(nu, na);
  const Eigen::VectorXd& dqa_star = dqa_star_;

  // Stage 2: dq_a = dq_a*, minimise sum P_n (H = 0).
  p.H.topLeftCorner(n, n).setZero();
  p.c.head(n).setZero();
  // Only the manipulator's contacts (a normal row with an actuated column) count: the
  // least total grip. Counting every contact (the table too) lets friction mu >= 1 trade
  // grip against table support at no cost, and a grip far above the elastic bound could
  // then lift what the bound cannot (found in review: mu = 2, K = 10 N/m lifted).
  // The least grip any point of stage 2's root can have: each grip P_n >= 0, and under
  // elastic_bound = previous also >= its row's constant bound (P_n alone in that row; under
  // `current` the row holds dq_u, so no constant bound follows from it).
  double least_grip = 0, grip_here = 0;
  for (int c = 0; c < nc; ++c) {
    bool grip = false;
    for (int a = 0; a < na; ++a) grip = grip || record_.geometry.J_n(record_.slots[c], nu + a) != 0.0;
    if (!grip) continue;
    p.c[p.pair_var(c, 0)] = 1.0;
    grip_here += answer1.x[p.pair_var(c, 0)];
    if (formulation_params_or_default<PangTedrakeMiqpParams>(m).elastic_bound_previous) least_grip += std::max(0.0, p.b_in[4 * nc + c]);
  }
  p.constant = 0;
  p.m_eq = nu + na;
  p.A_eq.block(nu, 0, na, n).setZero();
  for (int a = 0; a < na; ++a) {
    p.A_eq(nu + a, nu + a) = 1.0;
    p.b_eq[nu + a] = dqa_star[a];
  }
  bnb_->set_tolerance(kStage2Gap, kStage2Relative);
  stage1_answer_ = answer1.ws;
  // Stage 1's answer x1 settles stage 2 without a search when its grip is already the least
  // possible: x1 is feasible for stage 2's root (dq_a = dq_a*), satisfies every pair (a
  // stage-1 leaf) and is within the tolerance of the optimum, so the root, whose key is the
  // smallest, is a leaf of the answer's cost. (Mostly: no grip, as before contact and after
  // the release.) Otherwise stage_two(): the root warm-started from x1 (copied: the search
  // overwrites its result), x1's polish, the search.
  hint_x_.head(n) = answer1.x.head(n);
  // Whether stage 2 polishes x1 (stage_two) follows the last step's record, the last entry
  // of State::memory.
  const bool has_memory = s.memory.size() == memory_.size;
  const double last_record = has_memory ? s.memory[memory_.polish] : kInf;
  const double* last_sides = has_memory ? s.memory.data() + memory_.sides : nullptr;
  polish_record_ = kInf;
  if (grip_here <= least_grip + kStage2Gap) {
    stage2_ = BnbStats{};
    x_.head(n) = hint_x_.head(n);
  } else if (const Status st2 = stage_two(grip_here, last_record, last_sides); st2 != Status::solved) {
    return st2;
  }
  return Status::solved;
}

Status PangTedrakeMiqp::advance(const Model& m, const WorldParams& wp, State& s) {
  if (build(m, wp, s) != Status::solved) return report_.status;
  Problem& p = *problem_;
  const int nu = m.n_u, na = m.n_a, nc = p.nc, n = p.n;
  // A step whose data are bitwise those of the last solved step (memo_key(): a finger
  // sliding along an object at rest) is the same problem: that
  // step's answer is its answer. Kept per world in State::memory, so a batch world is still
  // bitwise its single-world run.
  key_length_ = memo_key(m, wp);
  reused_ = reuse_ && memo_matches(s);
  if (reused_) {
    const double* x = s.memory.data() + memory_.memo_answer;
    for (int j = 0; j < n; ++j) x_[j] = x[j];
    cost_ = s.memory[memory_.memo_cost];
  } else if (const Status st = solve_stages(m, s); st != Status::solved) {
    return st;
  }
  report_.pivots = static_cast<int>(stage1_.nodes + stage2_.nodes);
  report_.complementarity_residual = p.complementarity(x_);
  if (report_.complementarity_residual > 1e-9) return fail(Status::numerical_failure, "the answer failed its complementarity check");
  // The same pairs in the step's own units (the check above has a floor of 1 length unit).
  if (const double r = p.unit_complementarity(x_); r > kUnitComplementarityTolerance)
    return fail(Status::numerical_failure,
                "the answer failed its complementarity check in the step's own units (relative residual " +
                    three_digits(r) + ")");

  // Per slot, residuals, integration.
  double lin = 0, balance = 0;
  for (int c = 0; c < nc; ++c) {
    const int i = record_.slots[c];
    p_n_[i] = x_[p.pair_var(c, 0)];
    p_t_[i] = x_[p.pair_var(c, 1)] - x_[p.pair_var(c, 2)];
    lin = std::min(lin, p.A_in.row(p.pair_row(c, 0)).head(n).dot(x_.head(n)) - p.b_in[p.pair_row(c, 0)]);
  }
  RelativeBalance relative;
  for (int e = 0; e < nu; ++e) {
    const double r = p.A_eq.row(e).head(n).dot(x_.head(n)) - p.b_eq[e];
    balance = std::max(balance, std::abs(r));
    double terms = std::abs(p.b_eq[e]);
    for (int j = 0; j < n; ++j) terms += std::abs(p.A_eq(e, j) * x_[j]);
    add_balance_row(relative, e, r, terms);
  }
  report_.linearised_penetration = lin;
  report_.force_balance_residual = balance;
  // The QP's equality tolerance is absolute; at a small enough h the whole load h tau fits
  // inside it (a step that ignored the ground's impulse was accepted at h = 1e-11).
  if (!relative.accepted())
    return fail(Status::numerical_failure, "the answer failed its force-balance check (relative residual " +
                                               three_digits(relative.worst()) + ")");
  // phi_bar^{l+1} = phi + J_n^u dq_u + J_n^a dqa_bar (eq. (21)) of this step, for the next.
  std::fill(phi_bar_.begin(), phi_bar_.end(), std::numeric_limits<double>::infinity());
  for (int c = 0; c < nc; ++c) {
    const int i = record_.slots[c];
    double v = record_.geometry.frame[i].phi;
    for (int e = 0; e < nu; ++e) v += record_.geometry.J_n(i, e) * x_[e];
    for (int a = 0; a < na; ++a) v += record_.geometry.J_n(i, nu + a) * dqa_bar_[a];
    phi_bar_[i] = v;
  }
  if (!reused_) store_memory(m, s);  // a reused answer leaves the memory as it was
  for (int e = 0; e < nu + na; ++e) s.q[e] += x_[e];
  return report_.status = Status::solved;
}

}  // namespace qs
