// The derivatives of one time step (docs/derivatives.md). A step maps the state x = [q; m]
// and the commands u to the next state:
//   x+ = f(x, u),   A = df/dx (n_x x n_x),   B = df/du (n_x x n_a),
// with q the configuration (n_q), m the part of State::memory that is state
// (FormulationInfo::derivative_memory: anitescu_qp's impedance reference q̄_a,
// pang_tedrake_miqp's phi_bar under elastic_bound = previous; nothing for the LCP steppers),
// and u the velocity commands of the velocity-controlled joints in
// command_names order, held over the step (WorldParams::command, or the scene's schedules at
// the middle of the step: B is the derivative with respect to that value either way).
//
// They are exact: implicit differentiation of the step's solved problem at its active set
// (the QP's KKT conditions, quasistep/kernels/kkt_sensitivity.hpp), with the problem data's
// derivatives, the contact geometry's second derivatives included, by forward-mode automatic
// differentiation (quasistep/core/jet.hpp). Where the step sits at a switch (a contact row
// with neither impulse nor slack, within kSwitchMargin) the derivative is one-sided: the row
// is taken as inactive (the side on which the contact separates, or stops pushing), or as
// pressed where the motion without it would not be unique, and `degenerate` says so.
#pragma once

#include <string>
#include <vector>

#include "quasistep/core/model.hpp"
#include "quasistep/kernels/eigen.hpp"
#include "quasistep/kernels/status.hpp"

namespace qs {

/// A complementarity pair of the step within this (relative) distance of its switch makes
/// the derivative one-sided (StepDerivatives::degenerate). Relative: a row's impulse over
/// the step's impulse scale, its slack over its velocity scale (StepDerivatives::margin).
inline constexpr double kSwitchMargin = 1e-8;

struct StepDerivatives {
  /// solved: A and B hold the last step's derivatives. Otherwise why not in `detail`: the
  /// step did not solve (its own status), the formulation has no derivatives (bad_input),
  /// or its problem's solution is not unique, so has no derivative (numerical_failure).
  Status status = Status::not_run;
  Eigen::MatrixXd A;  // (n_x x n_x) d x+ / d x; NaN unless solved
  Eigen::MatrixXd B;  // (n_x x n_a) d x+ / d u; NaN unless solved
  /// Some complementarity pair was within kSwitchMargin of its switch: A and B are the
  /// one-sided derivative described in the header comment.
  bool degenerate = false;
  /// The step's smallest complementarity margin: over its contact rows, the larger of the
  /// row's impulse and slack, each relative to its scale (1 when it has no contact rows).
  /// Below kSwitchMargin: degenerate.
  double margin = 1;
  std::string detail;
};

/// The entries of State::memory (its leading ones) that are part of the differentiated state:
/// FormulationInfo::derivative_memory, 0 when the formulation has none.
int derivative_memory_size(const Model& m);
/// n_x = n_q + derivative_memory_size(m).
inline int derivative_state_size(const Model& m) { return m.n_q() + derivative_memory_size(m); }
/// x = [q; the memory that is state] of state s, into x (sized n_x; no allocation when it is).
void derivative_state(const Model& m, const State& s, Eigen::VectorXd& x);
/// The names of x's entries: the DOF names, then the memory's (anitescu_qp: "<joint>.reference").
std::vector<std::string> derivative_state_names(const Model& m);

}  // namespace qs
