// Pang & Tedrake's convex time step (Pang & Tedrake's Anitescu slides): Anitescu's relaxation of Coulomb friction,
// quasistatic or quasi-dynamic objects, and robots modelled as impedances. One convex QP per
// step; derivation, signs and the "Anitescu gap" in docs/anitescu.md.
//
// Unknown: the velocity over the step v' = [v_u; v_a] (n_q), so that q^{l+1} = q + h v'.
// Per active contact i (phi_i <= contacts.margin, slot order) two rows, one per extreme ray
// of the planar friction cone (Pang & Tedrake's Anitescu slides slide "Modeling Coulomb friction as a convex
// program": d_i1 = +t, d_i2 = -t):
//   J_i1 = J_n,i + mu_i J_t,i   (row 2c),      J_i2 = J_n,i - mu_i J_t,i   (row 2c + 1),
// with multipliers beta_ij >= 0 (N s). The QP (Pang & Tedrake's Anitescu slides slide "Specializing to robotic
// manipulation", with the signs of its linear term derived from the dynamics, not copied):
//   minimise   1/2 v'^T Q v' + b^T v'
//   subject to phi_i / h + J_ij v' >= 0         for every active i and j = 1, 2
//   Q = diag(Q_u, h^2 K_a),   Q_u = 0 (quasistatic) or M_u(q) (quasi-dynamic),
//   b = -h [ tau_u ; K_a (q̄_a' - q_a) + tau_a^ext - tau_g,a ]
// whose KKT conditions are the step's dynamics
//   Q_u v_u' = h tau_u + J_u^T beta                                 (objects)
//   0 = h K_a (q̄_a' - (q_a + h v_a')) + h (tau_a^ext - tau_g,a) + J_a^T beta   (impedance robots)
//   0 <= beta _|_ phi / h + J v' >= 0                               (Anitescu contact)
// tau = [tau_u; tau_a^ext] = gravity + loads + efforts at the middle of the step
// (quasistep/core/kinematics.hpp), tau_g,a the robots' own gravity, which their controllers
// compensate (so tau_a^ext - tau_g,a is zero unless a load acts on a robot link). The reference q̄_a lives in
// State::memory (memory_size below): q̄_a' = q̄_a + h u(t + h/2), u the velocity commands.
//
// Solvers. Quasistatic: Q is singular (zero on v_u); the dense QP kernel (quasistep/kernels/dense_qp.hpp)
// is exact on positive semidefinite Hessians (inertia control, no regularisation). A load no
// contact can balance makes the QP unbounded: the step is `infeasible` and the detail names
// the kernel's verified ray. Quasi-dynamic: Q is positive definite and the step is solved
// through its dual LCP (symmetric PSD) by projected Gauss-Seidel in the template step of
// quasistep/core/formulations/anitescu_qp/anitescu_lanes.hpp (T = double here, T = Lane in the batch engine: one implementation,
// so a world's steps are bitwise the same on both), fixed slot layout, cold start. A step whose
// PGS answer is not accepted (PGS not solved within its sweeps, KKT residual above 1e-9, a
// singular M_u, more than kMaxContacts active slots) is redone from the same State by
// step_fallback(): Lemke on the compacted dual LCP (anitescu_dual_lcp below), and if Lemke
// fails or its answer fails the KKT check, the dense QP on the primal (solved, or
// `infeasible` with a verified Farkas certificate).
//
// Outputs per slot: normal_impulse = beta_i1 + beta_i2 (N s), tangent_impulse = mu_i (beta_i1
// - beta_i2) along t. report(): complementarity_residual is the QP's scaled KKT residual
// (qp_kkt_residual, <= 1e-9 when solved); linearised_penetration the most negative
// phi + h J_n v'; force_balance_residual max |h tau_u + J_u^T beta| (quasistatic) or the
// momentum balance max |M_u v_u' - h tau_u - J_u^T beta| (quasi-dynamic), N s; problem_size
// n_q (quasistatic QP), 2 n_slots (PGS's fixed layout) or 2 nc (Lemke's LCP); pivots the QP's
// LP pivots and active-set iterations, PGS's sweeps, or Lemke's pivots (a fallback step
// reports the fallback's alone).
//
// Smoothed step (model.log_barrier_weight = kappa, both modes; Pang, Suh, Yang & Tedrake,
// IEEE T-RO 2023, sec. "analytic smoothing"): the QP's constraints are replaced by a log
// barrier,
//   minimise   1/2 v'Hv + c'v - (1/kappa) sum_rows log(phi_i / h + J_ij v'),
// whose unique minimiser is a smooth function of (q, q̄_a, u): every row pushes with the
// impulse beta_ij = 1/(kappa s_ij) at its slack s_ij = phi_i / h + J_ij v' (contact acts
// at a distance), and as kappa grows the answer tends to the QP's. Solved by damped Newton
// (solve_smoothed) from the unsmoothed answer moved inside; never on the PGS template or
// the batch's lanes. docs/anitescu.md, "Smoothed step".
#pragma once

#include "quasistep/kernels/eigen.hpp"
#include <memory>
#include <vector>

#include "quasistep/core/formulations/anitescu_qp/anitescu_lanes.hpp"
#include "quasistep/core/formulations/anitescu_qp/anitescu_qp_params.hpp"
#include "quasistep/core/contacts.hpp"
#include "quasistep/core/model.hpp"
#include "quasistep/core/stepper.hpp"
#include "quasistep/kernels/dense_qp.hpp"
#include "quasistep/kernels/lemke.hpp"

namespace qs {

/// The dual LCP of  min 1/2 v'Qv + c'v  s.t.  A v >= b  for positive definite Q (Pang & Tedrake's Anitescu slides,
/// quasi-dynamic mode). With v = v_free + Q^-1 A' beta and v_free = -Q^-1 c:
///   0 <= beta  _|_  w = (A Q^-1 A') beta + (A v_free - b) >= 0.
/// A: rows x n; b: rows; Q_inv: n x n; v_free: n. Writes QinvAt = Q^-1 A' (n x rows),
/// M = A Q^-1 A' (rows x rows, symmetric positive semidefinite) and q = A v_free - b. Plain
/// loops in a fixed order: allocates nothing, and the batch engine can reuse it.
void anitescu_dual_lcp(const Eigen::Ref<const Eigen::MatrixXd>& A, const Eigen::Ref<const Eigen::VectorXd>& b,
                       const Eigen::Ref<const Eigen::MatrixXd>& Q_inv, const Eigen::Ref<const Eigen::VectorXd>& v_free,
                       Eigen::Ref<Eigen::MatrixXd> QinvAt, Eigen::Ref<Eigen::MatrixXd> M, Eigen::Ref<Eigen::VectorXd> q);

class AnitescuQp final : public Stepper {
 public:
  static constexpr int kMaxContacts = kAnitescuMaxActiveContacts;  // 64 Anitescu rows
  using Solver = Lemke<2 * kMaxContacts>;
  /// Accepted scaled KKT residual of a step's answer (qp_kkt_residual).
  static constexpr double kKktTolerance = kAnitescuKktTolerance;

  /// State::memory of an anitescu_qp model: the impedance reference q̄_a of the actuated
  /// joints (n_a entries from kMemoryReference), then in quasi-dynamic mode the previous
  /// step's dual impulses beta in the fixed slot layout (2 n_slots from
  /// memory_warm_start(m), anitescu_lanes.hpp), the next PGS's warm start.
  static int memory_size(const Model& m) {
    return m.n_a + (formulation_params_or_default<AnitescuQpParams>(m).quasi_dynamic ? 2 * m.n_slots() : 0);
  }
  static constexpr int kMemoryReference = 0;
  static int memory_warm_start(const Model& m) { return m.n_a; }
  /// Its start at configuration q: the reference where the joints are, q̄_a(0) = q_a(0), and
  /// a cold PGS start (zeros).
  static void start_memory(const Model& m, const double* q, double* memory) {
    for (int a = 0; a < m.n_a; ++a) memory[kMemoryReference + a] = q[m.n_u + a];
    for (int i = m.n_a; i < memory_size(m); ++i) memory[i] = 0.0;
  }

  /// Sizes every buffer from the Model; a solved step then allocates nothing.
  explicit AnitescuQp(const Model& m);
  ~AnitescuQp() override;

  /// PGS settings of the quasi-dynamic template step (anitescu_pgs_settings() by default; a
  /// batch must use the same for its lanes).
  void set_pgs_settings(const PgsSettings& s) { pgs_ = s; }
  const PgsSettings& pgs_settings() const { return pgs_; }

  /// The last step's QP (valid after a step that got as far as solving):
  ///   min 1/2 v'Hv + c'v  s.t.  A_in v >= b_in,  rows 2c (+t) and 2c + 1 (-t) of active
  /// contact c, whose slot is contact_slots()[c].
  DenseQpProblem problem() const;
  /// The last solved step's v' (n_q) and beta (2 contacts()).
  Eigen::Ref<const Eigen::VectorXd> velocity() const { return v_; }
  Eigen::Ref<const Eigen::VectorXd> beta() const { return beta_.head(rows_); }
  int contacts() const { return rows_ / 2; }
  const std::vector<int>& contact_slots() const { return slot_; }
  /// Quasi-dynamic: the step was solved by the dense QP after Lemke failed (or its answer
  /// failed the KKT check).
  bool solved_by_qp_fallback() const { return fallback_; }
  /// Quasi-dynamic: the last step was the template step's PGS answer (not the fallback).
  bool solved_by_pgs() const { return by_pgs_; }

  /// The smoothed step (model.log_barrier_weight): Newton's method on the barrier problem
  /// stops when its squared decrement in the barrier's own units, kappa g'G^-1 g (g the
  /// gradient, G the Hessian of the objective above; dimensionless, the relative size of
  /// the rows' slack errors squared), falls to this, after taking that last step
  /// (quadratic convergence: the answer is then exact to about this relative size).
  static constexpr double kNewtonTolerance = 1e-14;
  static constexpr int kMaxNewtonSteps = 100;
  /// The barrier problem's Hessian H + (1/kappa) sum A_r'A_r / s_r^2 is singular where a
  /// Cholesky pivot is not above this fraction of its own diagonal entry.
  static constexpr double kBarrierPivotTolerance = 1e-12;
  /// The last step was the smoothed one; its Newton steps.
  bool smoothed() const { return smoothed_; }
  int newton_steps() const { return newton_steps_; }


 protected:
  /// One step of p.h (Stepper::step): q and the reference q̄_a move; on any other status than solved
  /// s is unchanged. bad_input: not a vertical world, a State without its n_a reference
  /// entries, a stiffness of the wrong size, more than kMaxContacts active slots, or
  /// (quasi-dynamic) a singular mass matrix of the unactuated DOFs.
  Status advance(const Model& m, const WorldParams& p, State& s) override;
  /// The last step's derivatives (quasistep/core/derivatives.hpp), both modes: the QP's KKT
  /// conditions differentiated at the answer's active set (quasistep/kernels/kkt_sensitivity.hpp),
  /// H, c, A and b differentiated in q by anitescu_pose_problem at T = Jet. State: q and the
  /// reference q̄_a (q̄_a' = q̄_a + h u); the PGS warm start is not state (the answer does
  /// not depend on it). The first call allocates its workspace.
  Status differentiate(const Model& m, const WorldParams& p, StepDerivatives& d) override;
  /// The step without the PGS template (Stepper::step_fallback): the dense QP (quasistatic),
  /// or Lemke on the dual LCP then the dense QP (quasi-dynamic). advance() falls back to it
  /// for a world whose PGS answer is not accepted; the batch engine calls it for such a
  /// lane's world, so both paths finish that world with the same code.
  Status advance_fallback(const Model& m, const WorldParams& p, State& s) override;

 private:
  void begin_step();
  Status check_input(const Model& m, const WorldParams& p, const State& s);
  Status solve_quasistatic(const Model& m);
  Status solve_quasi_dynamic(const Model& m, const WorldParams& p);
  /// The dense QP on the step's problem, in scaled variables (solve_equilibrated) when
  /// `equilibrated` or when the kernel fails on it as posed; fills v_, beta_ when solved,
  /// else fails the step. equilibrated_ says which was used.
  Status solve_with_qp(const Model& m, const char* mode, bool equilibrated);
  /// The same QP in the variables S v (S diagonal, powers of two: each DOF in units where
  /// its largest row entry is near 1), solved when the kernel failed on the problem as
  /// posed or its answer failed the step's checks; its x, z, ray stay in qp_ (x and ray in
  /// the scaled variables, scale_ holds S).
  Status solve_equilibrated();
  /// The smoothed step (anitescu_qp_smoothed.cpp) on the posed H, c, A, b: the unsmoothed
  /// answer (solve_quasistatic or solve_quasi_dynamic, whose verdicts stand), moved to a
  /// strictly feasible start, then damped Newton; fills v_ and beta_ = 1/(kappa s).
  Status solve_smoothed(const Model& m, const WorldParams& p, double kappa);
  /// The strictly feasible start from the unsmoothed answer in v_ (solve_smoothed).
  Status smoothed_start(const Model& m, double kappa);
  /// differentiate() for the smoothed step: its stationarity differentiated.
  Status differentiate_smoothed(const Model& m, const WorldParams& p, double kappa, StepDerivatives& d);
  /// R1 = dH v + dc - dA_S' beta_S and R2 = db_S - dA_S v into the derivative workspace,
  /// one column per direction (q by Jets, then q̄_a, then u), for the compact rows
  /// active_rows[0 .. rows) of the derivative workspace.
  void data_derivatives(const Model& m, const WorldParams& p, int rows);
  /// Quasi-dynamic: Q_u = M_u(q) from the bodies' mass, inertia and center of mass at the
  /// start of the step, and its inverse; false (with the report filled) when singular.
  bool mass_matrix(const Model& m, const WorldParams& p);
  std::string contact_label(const Model& m, int row) const;

  std::unique_ptr<DenseQp> qp_;
  std::unique_ptr<Solver> lemke_;
  std::unique_ptr<Solver::Result> lcp_result_;
  int nq_ = 0, rows_ = 0;
  bool fallback_ = false, by_pgs_ = false, equilibrated_ = false, smoothed_ = false;
  int newton_steps_ = 0;
  // The QP: H (n_q x n_q), c (n_q), A_in (capacity rows x n_q, column-major), b_in.
  Eigen::MatrixXd H_, A_, A_eq_;
  Eigen::VectorXd c_, b_, b_eq_, no_bounds_, y_, w_;
  // The equilibrated QP (solve_equilibrated): (V/P) S^-1 H S^-1, S^-1 c / P, A S^-1, b / V,
  // S's diagonal and the units V (velocities) and P (impulses).
  Eigen::MatrixXd Hs_, As_;
  Eigen::VectorXd cs_, bs_, scale_;
  double velocity_unit_ = 1, impulse_unit_ = 1;
  // Quasi-dynamic: Q^-1, v_free, Q^-1 A', the LCP, the mass matrix and its factor.
  Eigen::MatrixXd Qinv_, QinvAt_, M_lcp_, Mu_, L_;
  Eigen::VectorXd v_free_, q_lcp_;
  // Kinematic scratch (n_q each): com Jacobian rows, angular row.
  Eigen::VectorXd jx_, jy_, jw_;
  Eigen::VectorXd tau_, tau_grav_, qbar_, v_, beta_;
  std::vector<int> slot_;
  // The smoothed step: the barrier problem's Hessian and its Cholesky factor (n_q x n_q),
  // gradient and Newton step (n_q), the rows' slacks and their rates along the step; the
  // start's QP for a direction into the interior (identity, zero, the rows, their targets).
  Eigen::MatrixXd barrier_hessian_, barrier_factor_, interior_H_;
  Eigen::VectorXd barrier_gradient_, newton_step_, slack_, slack_rate_, interior_c_, interior_b_;
  // Quasi-dynamic: the template step's workspace (T = double) and its PGS settings.
  std::unique_ptr<AnitescuStepWorkspace<double>> step_ws_;
  PgsSettings pgs_;
  // differentiate()'s workspace (anitescu_qp_derivatives.cpp), built by its first call.
  struct DerivativeWork;
  std::unique_ptr<DerivativeWork> derivative_;
};

namespace json_input {
class Node;
}
/// Reads the "model" section of a scene whose formulation is anitescu_qp into m.params (an
/// AnitescuQpParams; the world, bodies, joints and contacts are read); throws SceneError naming the field.
void read_anitescu_qp_params(const json_input::Node& model, Model& m);
/// A copy of anitescu_qp model m whose steps are smoothed with log-barrier weight kappa
/// (model.log_barrier_weight, docs/anitescu.md): what `quasistep run --log-barrier-weight`
/// and Python's load(..., log_barrier_weight=) step. Throws SceneError naming the field for
/// another formulation or a kappa that is not a finite number > 0.
std::shared_ptr<const Model> with_log_barrier_weight(const Model& m, double kappa);
/// The scene's gains (the formulation table's scene_gains): K_a, one per velocity-controlled joint.
void anitescu_qp_scene_gains(const Model& m, double& model_gain, std::vector<double>& joint_gain);

/// The memory entries that are state for the step's derivatives (the formulation table's
/// derivative_memory): the reference q̄_a of each velocity-controlled joint, "<joint>.reference".
std::vector<std::string> anitescu_qp_derivative_memory(const Model& m);

/// Its stepper with a program's options (StepperOptions::pgs: the PGS settings of both
/// paths; anitescu_pgs_settings() when null): the formulation table's make_stepper
/// (anitescu_lane_step.cpp, beside the lane step that takes the same options).
std::unique_ptr<Stepper> make_anitescu_qp(const Model& m, const StepperOptions& options);

struct LaneEntry;
/// Its lane entry (quasistep/core/lane_step.hpp): the quasi-dynamic mode's template step on
/// lanes (anitescu_lane_step.cpp).
extern const LaneEntry kAnitescuQuasiDynamicLanes;

struct StepperBuffer;
/// Its stepper's own dense buffers for `slots` slots (the formulation table's stepper_buffers).
void anitescu_qp_stepper_buffers(const Model& m, double slots, std::vector<StepperBuffer>& out);

}  // namespace qs
