// Pang & Tedrake's quasistatic time step (Pang & Tedrake 2018, sec. IV, eq. (23)): the actuated DOFs
// follow their commands as closely as non-penetration and force balance allow, and an
// elastic lower bound on the normal impulses (eq. (22)) makes a squeezing grasp carry load.
//
// Unknowns over the active contacts, x = [dq_u | dq_a | P_n | P_t+ | P_t- | Gamma]:
//   minimise  |dq_a - dqa_bar|^2                                                (23)
//   J_n^u' P_n + J_t^u' (P_t+ - P_t-) + h tau_u = 0                             (23a)
//   phi^+ = phi + J_n^u dq_u + J_n^a dq_a   >= 0  _|_  P_n   >= 0              (12-13)
//   rho+- = Gamma +- (J_t^u dq_u + J_t^a dq_a) >= 0 _|_ P_t+- >= 0             (14-16)
//   s     = mu P_n - P_t+ - P_t-             >= 0  _|_  Gamma >= 0              (17)
//   P_n >= -h K phi_bar,  phi_bar = phi + J_n^u dq_u + J_n^a dqa_bar            (21-22, 23f)
// (or, with model.elastic_bound = previous, Pang & Tedrake 2018, sec. V.B: the phi_bar the previous
// step computed, P_n >= -h K phi_bar_prev, a constant bound: one step of delay between
// contact and grip, a less stiff problem). The paper encodes each complementarity pair with a big-M binary;
// here the branch-and-bound (quasistep/kernels/branch_and_bound.hpp) branches on the pairs directly
// (left side = 0, or right side = 0): the same optimum, with no M to choose. Each node is a
// convex QP (quasistep/kernels/dense_qp.hpp) with H = 2 I on dq_a only (positive semidefinite).
//
// Which optimum. (23f) bounds the normal impulses only from below, so a lift step may have
// several optimal solutions ("lift" with a large grip, or "slip" with the grip at its bound
// and the table carrying the rest). Stage 1 finds c* and its actuated displacement dq_a*
// (unique within a convex piece: the objective is strictly convex in dq_a); stage 2
// fixes dq_a = dq_a* and minimises the total normal impulse of the manipulator's contacts
// (normal rows with an actuated column) over the same complementarity set, by the same
// branch-and-bound. (Summing the table's impulse too, as "least total normal impulse" would,
// lets friction mu >= 1 trade grip for table support at no cost: a grip far above the
// bound could then lift what the bound cannot.) The elastic bound then acts as the
// grip force, and the grasp slips exactly when friction at that force cannot carry the load.
// Ties in either stage go to the smallest key of fixings (branch_and_bound.hpp). Stage 1's
// answer x1 (complementary, with dq_a = dq_a*) shortens stage 2: it is the answer outright
// when its grip is the least possible (step()), and a stage-2 node x1 fits whose relaxation
// cannot beat it is a leaf at x1. When the root is not such a leaf, stage 2 first
// polishes: the least grip with every pair fixed to the side the last step's answer took,
// then to the side x1 satisfies (one QP each): a complementary point that replaces x1 as
// the hint when it grips less, and settles the root outright when it is down to the
// root's bound (the Pang & Tedrake 2018 lift steps: 2 QPs instead of 3). On a streak the polish
// settled, the last answer's sides go first, and the root is not solved at all when the
// polish's multipliers certify its optimum as the root relaxation's (after degenerate
// exchanges where that optimum is degenerate: the Pang & Tedrake 2018 lift steps after the first, 1
// QP on three steps in four). A polish that fails to settle the root is skipped on the
// next three searching steps, unless a step between
// needs no search, which starts the count over (State::memory keeps the last answer's
// sides and that record per world). Either way the hint stands for a leaf
// of that node's subtree, so stage 2's answer is within about twice the search's tolerance
// (1e-12 N s + 1e-9 relative) of the least grip, not once (tested against all patterns on
// the Pang & Tedrake 2018 grasp).
//
// Steps that repeat. A step whose data (memo_key(): every number its problem is posed from)
// are bitwise those of the world's last solved step is that step's problem again and takes
// its answer without a search (a finger sliding along a resting object: 27% of the Monte
// Carlo grasp study's steps). The key and the answer travel in
// State::memory, so a batch world is still bitwise its single-world run.
#pragma once

#include "quasistep/kernels/eigen.hpp"
#include <memory>
#include <string>
#include <vector>

#include "quasistep/core/contacts.hpp"
#include "quasistep/core/formulations/pang_tedrake_miqp/pang_tedrake_miqp_params.hpp"
#include "quasistep/core/model.hpp"
#include "quasistep/core/stepper.hpp"
#include "quasistep/kernels/branch_and_bound.hpp"
#include "quasistep/kernels/dense_qp.hpp"

namespace qs {

class PangTedrakeMiqp final : public Stepper {
 public:
  static constexpr int kMaxContacts = 18;  // 72 complementarity pairs

  /// The node limit per stage and step: 10000 by default (the pools hold one QP working set
  /// per node, about 0.4 KB each for the gripper); the round width is the model's
  /// (model.round_width, 8 by default).
  static BnbOptions default_options(const Model& m) {
    BnbOptions o;
    o.max_nodes = 10000;
    o.round_width = formulation_params_or_default<PangTedrakeMiqpParams>(m).search_round_width;
    return o;
  }
  /// State::memory of a pang_tedrake_miqp model: [phi_bar (n_slots) | the root warm start |
  /// the memo | the last answer's sides | the polish record]. phi_bar is each slot's hypothetical penetration of the last step (read under
  /// elastic_bound = previous). The root warm start is the last step's stage-1 answer as a
  /// QP working set: [nc, the nc slots (K entries), row flags (5 K), bound states (n_q + 4 K),
  /// the point (n_q + 4 K)], K = min(kMaxContacts, n_slots); then the memo of the last
  /// solved step: [its key's length, its key (key_capacity), its answer x (n_q + 4 K), its
  /// stage-1 cost] (a step whose key is bitwise the same reuses that answer); then the
  /// last answer's side of each pair (4 n_slots: 1 the left side, 2 the variable, 0 slot
  /// inactive; the next stage 2's first polish); last, stage 2's polish record
  /// (polish_record_). Every entry starts at +inf (none), as initial_state() gives it.
  static int memory_size(const Model& m);
  /// Its start: every entry +inf (no previous step: no elastic bound, no warm start, no memo).
  static void start_memory(const Model& m, const double* q, double* memory);

  explicit PangTedrakeMiqp(const Model& m) : PangTedrakeMiqp(m, default_options(m)) {}
  PangTedrakeMiqp(const Model& m, const BnbOptions& options);
  ~PangTedrakeMiqp() override;

  /// Poses the stage-1 MIQP of a step of p.h from state s without solving it (a step begins
  /// with this; so do the exhaustive test and the LP-format export). bad_input: not a
  /// vertical world, K <= 0, more active slots than kMaxContacts.
  Status build(const Model& m, const WorldParams& p, const State& s);
  /// The same with the scene's own parameters.
  Status build(const Model& m, const State& s) { return build(m, WorldParams(m), s); }
  /// For exhaustive cross-checks (exponential: 2^(4 nc) calls): the stage-1 cost of the
  /// built problem with every pair fixed as given (`fixings` over all 4 n_slots pairs,
  /// pair 4 i + t of slot i), +inf when that pattern is infeasible, NaN on a QP failure.
  double fixed_pattern_cost(const std::vector<Side>& fixings);
  int active_contacts() const;
  /// Whether the last step took the answer of the world's last solved step without a
  /// search: its problem's data (memo_key()) were bitwise that step's, kept in
  /// State::memory.
  bool reused_answer() const { return reused_; }
  /// Reuse such answers (on by default). Off, every step searches (its answer then agrees
  /// with the reused one to the search's tolerance): to time or test the search itself.
  void set_reuse(bool on) { reuse_ = on; }

  /// The last step's search: stage 1 (min |dq_a - dqa_bar|^2) and stage 2 (min sum P_n;
  /// no node when stage 1's answer already has the least grip possible, see step()).
  const BnbStats& stage1_stats() const { return stage1_; }
  const BnbStats& stage2_stats() const { return stage2_; }
  /// The last step's optimal |dq_a - dqa_bar|^2 (m^2) and its solution
  /// [dq_u | dq_a | P_n | P_t+ | P_t- | Gamma].
  double tracking_cost() const { return cost_; }
  const Eigen::VectorXd& solution() const { return x_; }
  /// The largest |min(left, right)| over the last step's complementarity pairs, each
  /// relative to 1 + |b_i| + sum_j |A_ij x_j| of its row (as the QP kernel's primal check).
  double complementarity_residual() const { return report_.complementarity_residual; }

  /// The stage-1 problem as build() left it (step() goes on to stage 2), for export:
  ///   min 1/2 x'Hx + c'x + constant  s.t.  A_eq x = b_eq,  A_in x >= b_in,
  ///   lower <= x <= upper,  and for each active contact c and type t the pair
  ///   row pair_row(c, t) of A_in (left side >= 0) _|_ variable pair_var(c, t) (>= 0);
  /// rows 4 nc .. 5 nc - 1 of A_in are the elastic bounds (23f) (under elastic_bound =
  /// current divided by h K: P_n / (h K) + J_n^u dq_u >= -(phi + J_n^a dqa_bar)). Variables
  /// [dq_u | dq_a | P_n | P_t+ | P_t- | Gamma] over the active contacts in slot order.
  struct View {
    DenseQpProblem qp;  // the relaxation's data, the kernel's own problem type
    double constant;
    int n_u, n_a, contacts;
    const std::vector<int>& slots;  // (contacts) the model slot of each active contact
    int pair_row(int c, int t) const { return t * contacts + c; }
    int pair_var(int c, int t) const { return n_u + n_a + t * contacts + c; }
  };
  View view() const;

  struct Problem;  // the node relaxation (defined in the .cpp)


 protected:
  /// One step of p.h (Stepper::step): build(), then the memo or the two-stage search.
  Status advance(const Model& m, const WorldParams& p, State& s) override;
  /// The step's derivatives (quasistep/core/derivatives.hpp) at the optimal mode the search
  /// found (pang_tedrake_miqp_derivatives.cpp).
  Status differentiate(const Model& m, const WorldParams& p, StepDerivatives& d) override;

 private:
  struct DerivativeWork;  // differentiate()'s workspace, made on its first call
  std::unique_ptr<DerivativeWork> derivative_;
  std::unique_ptr<Problem> problem_;
  std::unique_ptr<BranchAndBound<Problem>> bnb_;
  struct Probe;  // fixed_pattern_cost's workspace, made on first use
  std::unique_ptr<Probe> probe_;
  BnbOptions options_;
  BnbStats stage1_, stage2_;
  double cost_ = 0;
  Eigen::VectorXd x_;
  Eigen::VectorXd hint_x_;  // stage 2's hint (Problem::hint): stage 1's answer or better
  Eigen::VectorXd x1_;      // stage 1's answer during stage 2
  /// Per slot, the hypothetical penetration phi_bar^{l+1} of the last solved step (+inf
  /// where the slot was inactive): the next step's bound under elastic_bound = previous,
  /// handed on in State::memory (so a batch keeps it per world).
  std::vector<double> phi_bar_;
  Eigen::VectorXd tau_;       // (n_q) generalized external force at the step's middle
  Eigen::VectorXd dqa_bar_;   // (n_a) the commanded displacement of the step
  Eigen::VectorXd dqa_star_;  // (n_a) stage 1's optimal dq_a
  QpWorkingSet stage1_answer_;  // stage 1's answer, stage 2's root warm start
  QpWorkingSet root_warm_;      // the last step's stage-1 answer, from State::memory
  struct RootProbe;             // the warm root's own evaluation (workspace, warm, solution)
  std::unique_ptr<RootProbe> root_probe_;
  std::vector<Side> free_fixings_;  // (4 n_slots) all free: the root
  /// This step's polish of x1 in stage 2 (stage_two), for the next step (the last entry of
  /// State::memory): +inf stage 2 needed no polish (nor search), 1 the polish settled the
  /// root, 2 .. 4 a streak's polish settled it by a certificate that took degenerate
  /// exchanges, 1 .. 3 times in a row (at 4 the next step's root goes first again, see
  /// stage_two()); -3 it did not, and a search followed: the next searching steps skip the
  /// polish, counting up to 0, where it is tried again (a failed polish costs one QP in four
  /// searching steps, and a streak it would help is not lost for good); a step that needs
  /// no search writes +inf, which starts the count over.
  double polish_record_ = std::numeric_limits<double>::infinity();
  /// Decodes the root warm start of s.memory into root_warm_, mapped onto this step's
  /// contacts by slot: false when there is none or no contact is shared.
  bool load_root_warm(const Model& m, const State& s);
  /// Stage 2 when stage 1's answer (hint_x_, working set stage1_answer_, grip x1_grip) does
  /// not have the least grip possible: the root, a polish of x1 (unless last_record, the
  /// last step's polish_record_, is negative), then the search. Sets x_, stage2_,
  /// polish_record_; a failure as step() reports it.
  Status stage_two(double x1_grip, double last_record, const double* last_sides);
  /// Stage 1, then stage 2, on the built problem (step() without the memo and the update).
  Status solve_stages(const Model& m, const State& s);
  /// Writes the step's key, answer, stage1_answer_ (and phi_bar) into s.memory for the next
  /// step.
  void store_memory(const Model& m, State& s);
  /// The capacities of an answer (n_q + 4 K) and of a memo key.
  static int answer_capacity(const Model& m);
  static int key_capacity(const Model& m);
  /// Where each field of State::memory starts (in doubles; memory_size's comment has the
  /// contents), K = min(kMaxContacts, n_slots):
  struct MemoryLayout {
    int phi_bar = 0;       // (n_slots) each slot's phi_bar of the last step
    int warm_count = 0;    // (1) the root warm start: its number of contacts nc, +inf for none
    int warm_slots = 0;    // (K) their slots
    int warm_active = 0;   // (5 K) row flags
    int warm_bound = 0;    // (answer_capacity) bound states
    int warm_point = 0;    // (answer_capacity) the point
    int memo_length = 0;   // (1) the memo: its key's length
    int memo_key = 0;      // (key_capacity) its key
    int memo_answer = 0;   // (answer_capacity) its answer x
    int memo_cost = 0;     // (1) its stage-1 cost
    int sides = 0;         // (4 n_slots) the last answer's side of each pair
    int polish = 0;        // (1) stage 2's polish record
    int size = 0;          // memory_size
    static MemoryLayout of(const Model& m);
  };
  /// Writes this step's key into key_ (build() done): every datum the step's problem is
  /// posed from; returns its length.
  int memo_key(const Model& m, const WorldParams& p);
  /// Whether s.memory holds the last solved step's key and it is bitwise this step's
  /// (key_, key_length_: memo_key() done).
  bool memo_matches(const State& s) const;
  MemoryLayout memory_;  // of the Model the stepper was built for
  Eigen::VectorXd key_;   // (key_capacity) this step's memo key
  int key_length_ = 0;
  bool reused_ = false;   // the last step reused the last solved step's answer
  bool reuse_ = true;     // set_reuse()
};

/// The entries of State::memory that are state for the step derivatives
/// (FormulationInfo::derivative_memory): under elastic_bound = previous each slot's phi_bar
/// of the last step, "slot<i>.phi_bar" (the bound of the next step's (23f)); none under
/// `current`.
std::vector<std::string> pang_tedrake_miqp_derivative_memory(const Model& m);

namespace json_input {
class Node;
}
/// Reads the "model" section of a scene whose formulation is pang_tedrake_miqp into m.params (a
/// PangTedrakeMiqpParams; the world, bodies, joints and contacts are read); throws SceneError naming the field.
void read_pang_tedrake_miqp_params(const json_input::Node& model, Model& m);
/// The scene's gains (the formulation table's scene_gains): the stiffness K.
void pang_tedrake_miqp_scene_gains(const Model& m, double& model_gain, std::vector<double>& joint_gain);

struct StepperBuffer;
/// Its stepper's step memory for `slots` slots (the formulation table's stepper_buffers).
void pang_tedrake_miqp_stepper_buffers(const Model& m, double slots, std::vector<StepperBuffer>& out);

}  // namespace qs
