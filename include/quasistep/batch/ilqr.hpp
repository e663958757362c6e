// Trajectory optimisation through contact with the step's derivatives: iterative LQR (Li &
// Todorov, "Iterative Linear Quadratic Regulator Design for Nonlinear Biological Movement
// Systems", ICINCO 2004), in the form of Tassa, Erez & Todorov, "Synthesis and
// Stabilization of Complex Behaviors through Online Trajectory Optimization" (IROS 2012):
// a backward pass of the Riccati recursion with Levenberg-Marquardt regularisation, a
// forward pass with a backtracking line search, and box limits on the commands by the
// projected-Newton QP of Tassa, Mansard & Todorov, "Control-Limited Differential Dynamic
// Programming" (ICRA 2014). docs/derivatives.md, "Trajectory optimisation", shows it
// pushing a puck to a goal inside a model-predictive loop.
//
// The dynamics are a Model's steps: x+ = f(x, u) with x = [q; the memory that is state]
// (quasistep/core/derivatives.hpp) and u the velocity commands (command_names order), held
// over each step of the Model's h. The optimiser linearises them with the step's exact
// derivatives, the smoothed step's (the log-barrier Anitescu step of Pang, Suh, Yang &
// Tedrake, IEEE T-RO 2023), or bundled ones (Suh, Pang & Tedrake, IEEE RA-L 2022), and
// always rolls out the Model's own steps, so the trajectory it returns is one `quasistep
// run` would step. The cost is a sum of squared residuals, and its Hessians are the
// Gauss-Newton ones (J'J), which keeps every backward pass convex in u.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "quasistep/batch/batch_stepper.hpp"
#include "quasistep/batch/bundled.hpp"
#include "quasistep/core/model.hpp"
#include "quasistep/kernels/eigen.hpp"
#include "quasistep/kernels/status.hpp"

namespace qs {

/// Which derivatives of the step the optimiser linearises the dynamics with.
enum class IlqrDerivatives {
  exact,     // the step's own (Stepper::step with StepDerivatives), one-sided at switches
  smoothed,  // the log-barrier-smoothed Anitescu step's, at the same states (anitescu_qp only)
  bundled,   // the first-order bundled estimate A1, B1 (BundledStep) at each step
};
const char* to_string(IlqrDerivatives d);

/// A cost as squared residuals: running cost 1/2 |r(t, x, u)|^2 at steps t = 0 .. T-1 and
/// terminal cost 1/2 |r_T(x)|^2 at the last state.
class IlqrCost {
 public:
  virtual ~IlqrCost() = default;
  virtual int running_size() const = 0;
  virtual int terminal_size() const = 0;
  /// r (running_size) and its Jacobians rx (running_size x n_x) and ru (running_size x n_u),
  /// each sized by the caller; rx and ru are zero on entry.
  virtual void running(int t, const Eigen::VectorXd& x, const Eigen::VectorXd& u, Eigen::VectorXd& r,
                       Eigen::MatrixXd& rx, Eigen::MatrixXd& ru) const = 0;
  /// r_T (terminal_size) and its Jacobian rx (terminal_size x n_x, zero on entry).
  virtual void terminal(const Eigen::VectorXd& x, Eigen::VectorXd& r, Eigen::MatrixXd& rx) const = 0;
};

struct IlqrOptions {
  int horizon = 20;        // T, steps of the Model's h
  int max_iterations = 50;
  /// Converged when an iteration lowers the cost by less than this fraction of it, or when
  /// the backward pass expects less than a thousandth of that (the trajectory is stationary).
  double tolerance = 1e-4;
  IlqrDerivatives derivatives = IlqrDerivatives::exact;
  double log_barrier_weight = 0.0;  // smoothed: kappa (> 0), as model.log_barrier_weight
  BundledOptions bundled{};         // bundled: samples, sigma (> 0), seed
  /// Box limits of each command (n_u entries each, or both empty for none), u_min <= u_max.
  std::vector<double> u_min, u_max;
  double regularization = 1e-6;     // the backward pass's first Levenberg-Marquardt mu
  int threads = 0;                  // for the linearisation (0: all this process may use)
};

struct IlqrResult {
  /// solved: `controls` are the best found (converged, or at the iteration limit; see
  /// `converged`). Otherwise why not in `detail`: bad_input (options, sizes), or the first
  /// rollout's failed step; a later failure (a linearisation that has no derivative) stops
  /// the iterations with the best trajectory so far kept, and its status and detail here.
  Status status = Status::not_run;
  std::string detail;
  bool converged = false;
  int iterations = 0;
  double initial_cost = 0.0, cost = 0.0;
  Eigen::MatrixXd controls;        // T x n_u, row t the command of step t
  std::vector<State> states;       // T + 1: the start and the state after each step
  std::vector<Eigen::MatrixXd> K;  // T feedback gains (n_u x n_x) of the last backward pass
  long long steps = 0;             // steps taken by the rollouts (line search included)
  long long linearised = 0;        // steps differentiated (bundled: each is `samples` steps)
};

/// One solve at a time: the optimiser keeps its steppers and buffers between calls (each
/// call already spreads the linearisation over the threads); give each planner thread its own.
class Ilqr {
 public:
  /// Throws BatchError for a formulation without step derivatives, `smoothed` on another
  /// formulation than anitescu_qp or with kappa <= 0, or bad limits or horizon.
  Ilqr(std::shared_ptr<const Model> model, IlqrOptions options);
  ~Ilqr();
  Ilqr(const Ilqr&) = delete;
  Ilqr& operator=(const Ilqr&) = delete;

  /// Optimises the commands from `start`, beginning at `initial` (T x n_u; clamped to the
  /// limits). The result is the optimiser's own, overwritten by the next call.
  const IlqrResult& solve(const State& start, const Eigen::MatrixXd& initial, const IlqrCost& cost);

  const IlqrOptions& options() const { return options_; }
  int n_x() const { return n_x_; }
  int n_u() const { return n_u_; }

 private:
  struct Impl;
  std::shared_ptr<const Model> model_;
  IlqrOptions options_;
  int n_x_ = 0, n_u_ = 0;
  std::unique_ptr<Impl> impl_;
  IlqrResult result_;
};

/// Solves min 1/2 d'H d + g'd subject to lo <= d <= hi by projected Newton (Tassa, Mansard &
/// Todorov 2014, Algorithm 3), H symmetric positive definite on the free set. Returns false
/// when H is not positive definite on the free set, or the search has not settled in 100
/// Newton steps. `free` receives 1 for the entries not
/// at an active limit, and `H_free_inverse` the inverse of H on them (zero elsewhere): the
/// feedback gain of a clamped command is zero.
bool box_qp(const Eigen::MatrixXd& H, const Eigen::VectorXd& g, const Eigen::VectorXd& lo, const Eigen::VectorXd& hi,
            const Eigen::VectorXd& start, Eigen::VectorXd& d, std::vector<char>& free, Eigen::MatrixXd& H_free_inverse);

}  // namespace qs
