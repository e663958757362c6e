// One time step of one world, whatever the formulation: the interface `quasistep run` (and
// the tests) drive every stepper through, and what a step reports about itself.
//
// A stepper is built once per Model (it sizes every buffer then) and advances a State by one
// step of h per call, with one world's parameters (quasistep/core/world_params.hpp). On any status but
// `solved` the State is left unchanged. Per-slot results use the Model's fixed slot
// numbering; inactive slots read zero.
//
// The step pipeline (docs/architecture.md): Stepper::step checks its input (stage 0:
// step_input_valid), hands the step to the formulation's advance(), which poses and solves
// its problem and moves q (and its State::memory), and on success moves the clock once
// (stage 5: time_after_step, step + 1). The batch engine's lane path runs the same two
// functions for a lane group of worlds around a formulation's LaneStep.
#pragma once

#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "quasistep/core/contacts.hpp"
#include "quasistep/core/derivatives.hpp"
#include "quasistep/core/model.hpp"
#include "quasistep/core/world_params.hpp"
#include "quasistep/kernels/lcp_enumeration.hpp"
#include "quasistep/kernels/pgs.hpp"
#include "quasistep/kernels/status.hpp"

namespace qs {

/// A step's force balance (the equilibrium rows of its model) is accepted in the step's own
/// units: max_e |r_e| (the residual of row e) against max_e terms_e, the largest sum of the
/// magnitudes of the terms that form a row (|h tau_e|, each contact's |J P| term, ...). The
/// same step is then judged alike at any h and in any units (both scale with the impulses);
/// a step whose contacts carry nothing while the load does not vanish has a row whose
/// residual is its whole load, a ratio of order 1, and is refused however small h tau_e is
/// in absolute terms. (Row by row, rounding in a row that carries nothing, 1e-17 against
/// 1e-17, would refuse good steps.)
inline constexpr double kForceBalanceTolerance = 1e-6;

/// max_e |r_e| over max_e terms_e, fed row by row (0 when both are 0; NaN fails). The rows
/// must be in one unit: a planar model's rows of angle DOFs (N m s) divided by a length
/// first (balance_row_lengths, quasistep/core/model.hpp).
class RelativeBalance {
 public:
  void row(double residual, double terms) {
    const double r = std::abs(residual);
    if (!(r <= worst_residual_) && !std::isnan(worst_residual_)) worst_residual_ = r;
    if (terms > largest_terms_) largest_terms_ = terms;
  }
  double worst() const { return worst_residual_ == 0 ? 0.0 : worst_residual_ / largest_terms_; }
  bool accepted() const { return worst() <= kForceBalanceTolerance; }

 private:
  double worst_residual_ = 0, largest_terms_ = 0;
};

/// What the last step produced, beyond the new State.
struct StepReport {
  Status status = Status::not_run;
  int contacts = 0;        // active slots in the step's problem
  int problem_size = 0;    // variables of the (mixed) LCP
  int pivots = 0;          // Lemke pivots (summed over re-linearisations), or the MIQP's
                           // branch-and-bound nodes (both stages)
  /// The kernel's scaled natural residual of the accepted solution (<= 1e-9 when solved).
  double complementarity_residual = 0;
  /// The most negative linearised end-of-step gap phi^{l+1} of an active slot (0 when none
  /// is negative): complementarity makes it >= 0 to rounding.
  double linearised_penetration = 0;
  /// max |J^u' P + h tau_u| (N s) where the model has force balance (Trinkle); 0 otherwise.
  double force_balance_residual = 0;
  /// Lemke's method ended on a ray and the exact enumeration (quasistep/kernels/lcp_enumeration.hpp)
  /// solved the step's LCP instead; its nodes.
  bool by_enumeration = false;
  long enumeration_nodes = 0;
  /// halm_posa_lcp: Lemke did not solve and no active contact closes under the command alone,
  /// so the step took the open-contact solution (no impulse; docs/steppers.md).
  bool open_contacts = false;
  /// The step was taken as this many equal substeps (ecp_ncp's fallback when the whole
  /// step's MNCP found no solution, quasistep/core/formulations/ecp_ncp/ecp_ncp.hpp); 1 otherwise.
  int substeps = 1;
  /// Why the step failed, one line: for `infeasible` the condition that fails and its
  /// verified certificate; for `bad_input` the cause (e.g. capacity). Empty when solved.
  std::string detail;
};

/// Stage 0 of every step, for one world (Stepper::step) and for a lane group of worlds (the
/// batch engine's lane path): h is a finite number > 0 and a command vector given from
/// outside has one entry per velocity-controlled joint (the formulations index it by joint).
inline bool step_input_valid(const Model& m, const WorldParams& p) {
  return p.h > 0 && std::isfinite(p.h) && (!p.commanded || static_cast<int>(p.command.size()) == m.n_a);
}
/// Why step_input_valid is false, one line (a step refused with Status::bad_input).
std::string step_input_refusal(const Model& m, const WorldParams& p);

/// Stage 5 of every solved step, the clock: q moved by the whole step h. T = double for one
/// world (Stepper::step), T = Lane for the time row of a lane group in the batch engine.
template <class T>
T time_after_step(const T& t, double h) {
  return t + T(h);
}

/// Stage 5's range check: a solved step's configuration has every entry finite and of
/// magnitude at most kStateRange. Beyond it the contact geometry's squared distances
/// overflow (1e150 squared is 1e300, a double reaches 1.8e308): a step that lands there (a
/// velocity command of 1e308, say) is refused with numerical_failure and the State is left
/// as it was, on one world's path (Stepper::step) and on the batch's lane path alike.
inline constexpr double kStateRange = 1e150;

/// The first entry of q outside [-kStateRange, kStateRange] (NaN included), or -1.
inline int state_out_of_range(const Eigen::VectorXd& q) {
  for (Eigen::Index i = 0; i < q.size(); ++i)
    if (!(std::abs(q[i]) <= kStateRange)) return static_cast<int>(i);
  return -1;
}

class Stepper {
 public:
  explicit Stepper(const Model& m)
      : active_(m.n_slots(), 0),
        phi_(m.n_slots(), 0.0),
        p_n_(m.n_slots(), 0.0),
        p_t_(m.n_slots(), 0.0),
        record_(m),
        balance_length_(balance_row_lengths(m)),
        scene_(m),
        step_start_q_(m.n_q()),
        step_start_memory_(step_memory_size(m)) {}
  virtual ~Stepper() = default;
  Stepper(const Stepper&) = delete;
  Stepper& operator=(const Stepper&) = delete;

  /// Advances s by one step of p.h with one world's parameters p; the status is also in
  /// report().status. bad_input when h is not a finite number > 0.
  Status step(const Model& m, const WorldParams& p, State& s) { return run(m, p, s, false); }
  /// The same step with its derivatives (quasistep/core/derivatives.hpp): when the step
  /// solved, d holds A = dx+/dx and B = dx+/du at the step's start (d.status says whether
  /// the formulation could differentiate it, d.detail why not). Returns the step's status.
  /// d is sized on its first use; a later call of the same model allocates nothing.
  Status step(const Model& m, const WorldParams& p, State& s, StepDerivatives& d);
  /// The same step with the scene's own parameters (m.step.h, the Model's friction, ...).
  Status step(const Model& m, State& s) {
    scene_.reset(m);  // sized at construction: no allocation
    return run(m, scene_, s, false);
  }
  /// The batch's path for a world its lane template did not accept: the formulation's
  /// general method (Lemke, then the dense QP, ...) without trying the template again.
  Status step_fallback(const Model& m, const WorldParams& p, State& s) { return run(m, p, s, true); }

  const StepReport& report() const { return report_; }
  /// Per slot (n_slots), of the last step: active in its problem; phi at the configuration
  /// the step was linearised about (m); normal and net tangential impulse (N s, or N s
  /// times the unknown k of Halm & Posa 2018, eq. (10) when impulses_scaled_by_k()).
  const std::vector<char>& active() const { return active_; }
  const std::vector<double>& phi() const { return phi_; }
  const std::vector<double>& normal_impulse() const { return p_n_; }
  const std::vector<double>& tangent_impulse() const { return p_t_; }
  /// Halm-Posa's impulses are known only up to the positive factor k of Halm & Posa 2018, eq. (10).
  virtual bool impulses_scaled_by_k() const { return false; }

  /// Per-step outputs beyond the State, which `quasistep run` appends to every trajectory
  /// row after the DOF columns (docs/cli.md): their column names, the same for every step of
  /// this stepper; none by default (the CSV of such a stepper has the DOF columns only).
  virtual std::vector<std::string> extra_columns() const { return {}; }
  /// Appends to `out` the last solved step's values, one per extra_columns(), in that order.
  /// Meaningful after a step that returned `solved` only.
  virtual void extra_values(std::vector<double>& /*out*/) const {}

 protected:
  /// The formulation's part of a step (stages 3-4 and q's update): poses and solves its
  /// problem over one step of p.h from the step's contact record (contact_record()) and moves s.q
  /// (and what it keeps in State::memory) on success, leaving s untouched otherwise; s.t and
  /// s.step are the pipeline's.
  virtual Status advance(const Model& m, const WorldParams& p, State& s) = 0;
  /// The derivatives of the last step, which solved from (step_start_q(), step_start_memory())
  /// at step_start_t() with parameters p: fills d.A, d.B (sized n_x x n_x and n_x x n_a,
  /// identity and zero on entry), d.degenerate, d.margin and, unless solved, d.detail.
  /// By default: bad_input, the formulation has no derivatives.
  virtual Status differentiate(const Model& m, const WorldParams& p, StepDerivatives& d);
  /// The step being taken was asked for its derivatives (step(m, p, s, d)): a formulation
  /// records then what differentiate() needs beyond the answer it keeps anyway.
  bool differentiating() const { return differentiating_; }
  const Eigen::VectorXd& step_start_q() const { return step_start_q_; }
  const Eigen::VectorXd& step_start_memory() const { return step_start_memory_; }
  double step_start_t() const { return step_start_t_; }
  /// step_fallback's advance; the formulations with a lane template override it.
  virtual Status advance_fallback(const Model& m, const WorldParams& p, State& s) { return advance(m, p, s); }

  /// The step's contact record (stages 1-2, quasistep/core/contacts.hpp) at the step's start state s:
  /// computed when a step first asks for it, and once per step (a formulation whose lane
  /// template computes its own contacts in a fixed layout asks only on its fallback path).
  /// Also sets active() and phi().
  const ContactRecord& contact_record(const Model& m, const WorldParams& p, const State& s) {
    if (!record_valid_) {
      record_.scan(m, p, s.q.data(), active_.data(), phi_.data());
      record_valid_ = true;
    }
    return record_;
  }
  /// A new contact record is needed (the state changed outside a step: PangTedrakeMiqp::build).
  void forget_contacts() { record_valid_ = false; }

  /// Ends a step that failed: its status and one-line reason go into the report.
  Status fail(Status st, std::string detail);
  /// After Lemke's ray, the exact enumeration's outcome: solved (report().by_enumeration; the
  /// caller copies the solution), or the step's failure (infeasible with the exhausted tree,
  /// not_found at the node limit, or the LP kernel's failure), recorded here.
  Status record_enumeration(const LcpEnumeration::Result& ex);

  StepReport report_;
  std::vector<char> active_;
  std::vector<double> phi_, p_n_, p_t_;
  ContactRecord record_;  // contact_record()
  /// DOF e's force-balance row (its residual and the sum of its terms' magnitudes) into
  /// `balance`, divided by the row's length (balance_row_lengths): every row an impulse.
  void add_balance_row(RelativeBalance& balance, int e, double residual, double terms) const {
    const double length = balance_length_[static_cast<size_t>(e)];
    balance.row(residual / length, terms / length);
  }

 private:
  bool record_valid_ = false;
  Status run(const Model& m, const WorldParams& p, State& s, bool fallback);

  std::vector<double> balance_length_;  // balance_row_lengths of the model
  WorldParams scene_;  // step(m, s)'s parameters
  // The State at the start of the step, restored when a solved step leaves kStateRange
  // (a formulation's own caches, such as the ECP's last face, keep the refused step's).
  Eigen::VectorXd step_start_q_, step_start_memory_;
  double step_start_t_ = 0;
  int derivative_nx_ = -1;  // derivative_state_size of the model, once known
  bool differentiating_ = false;
};

/// What a program may set on the steppers it builds (make_stepper, BatchOptions): the
/// projected Gauss-Seidel settings of a formulation that solves by PGS (anitescu_qp), or
/// its own when null.
struct StepperOptions {
  std::optional<PgsSettings> pgs{};
};

/// The stepper of m.formulation, or null when this build has none for it.
std::unique_ptr<Stepper> make_stepper(const Model& m, const StepperOptions& options = {});

}  // namespace qs
