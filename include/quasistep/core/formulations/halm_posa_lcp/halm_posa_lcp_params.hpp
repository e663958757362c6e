// The parameters of the two tabletop formulations, halm_posa_lcp and perfect_velocity_lcp
// (Halm & Posa 2018), read from a scene's "model" by core/formulations/halm_posa_lcp/
// halm_posa_lcp_params.cpp and held by the Model (Model::params, formulation_params).
#pragma once

#include "quasistep/kernels/eigen.hpp"
#include <memory>
#include <optional>
#include <string>

namespace qs {

struct SupportPressure;  // quasistep/core/limit_surface.hpp

struct HalmPosaParams {
  /// Ã of Halm & Posa 2018, eq. (11): body frame, torque about the body origin; symmetric positive
  /// definite. World-frame A = R Ã R' (eq. (12)) is formed by the stepper.
  std::optional<Eigen::Matrix3d> limit_surface_A;
  bool limit_surface_computed = false;    // Ã from the support (quasistep/core/limit_surface.hpp), not model.A
  std::optional<Eigen::MatrixXd> gain_B;  // Halm & Posa 2018, eq. (33), n_a x n_a, SPD (halm_posa_lcp only)
  double feedback_scale_c = 1.0;          // Halm & Posa 2018 c in M(cB), > 0 (the per-world model gain "c")
  int relinearize_iterations = 0;         // Halm & Posa 2018, sec. 5 fixed-point re-linearisation
  /// The scene's `model.support`: the object's support pressure distribution (points and
  /// friction weights, body frame). When set, limit_surface_A is the ellipsoid through the
  /// distribution's axis ends (f_max, m_max about its pressure center) and each step runs
  /// Halm & Posa 2018, sec. 3.4's sequence of LCPs from it, the j-th with Ã = the Hessian of
  /// the exact H at the (j-1)-th solution (HalmPosaLcp). Shared: immutable once read.
  std::shared_ptr<const SupportPressure> support;
  // "uniform", "ring" or "points" (what `validate` names); a literal, not a std::string, so that
  // the parameters' defaults stay constant-initialised (kDefaultFormulationParams, model.hpp).
  const char* support_form = "";
  int support_max_programs = 20;      // LCPs per step at most (model.support.max_programs)
  double support_tolerance = 1e-9;    // relative change of Ã (Frobenius) that ends the sequence
};

/// The unit the step's LCP holds A and cB in: a power of two at or below the larger of the
/// limit surface's two translational diagonal entries. Only the ratio of A to cB moves the
/// object (a factor common to both is absorbed by the impulses, k of Halm & Posa 2018,
/// eq. (10)), but the LCP's friction rows (eq. (36)) have entries of one whatever A's scale:
/// with A and cB divided by this unit the LCP is the same for A and B times any power of two
/// (a computed A is in 1/N^2, and moves with the scene's mass, length and time units), and
/// its rows are of one size. The LCP's impulses are then in units of 1 / unit; the reported ones are converted
/// back (exact: a power of two). 1 when A is missing.
double halm_posa_lcp_unit(const HalmPosaParams& p);

}  // namespace qs
