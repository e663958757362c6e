// The parameters of anitescu_qp (Pang & Tedrake's Anitescu slides), read from a scene's
// "model" by core/formulations/anitescu_qp/anitescu_qp_params.cpp and held by the Model
// (Model::params, formulation_params).
#pragma once

#include "quasistep/kernels/eigen.hpp"
#include <optional>

namespace qs {

struct AnitescuQpParams {
  bool quasi_dynamic = false;  // the mode: quasistatic (false) or quasi_dynamic objects
  /// The robots' impedance K_a (n_a, one positive entry per actuated joint, N/m or N m/rad;
  /// empty when the scene has no actuated joint): the per-world joint gain "stiffness".
  std::optional<Eigen::VectorXd> stiffness_Ka;
  /// The barrier weight kappa of the smoothed step (1/J: N s of impulse times m/s of slack
  /// is 1/kappa), or none for the unsmoothed QP: the step minimises the QP's objective minus
  /// (1/kappa) sum log(phi_i/h + J_ij v'), the log-barrier relaxation of Pang, Suh, Yang &
  /// Tedrake, IEEE T-RO 2023, sec. "analytic smoothing" (docs/anitescu.md, "Smoothed step").
  std::optional<double> log_barrier_weight;
};

}  // namespace qs
