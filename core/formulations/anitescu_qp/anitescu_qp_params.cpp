// The anitescu_qp section of a scene's "model" (docs/scene-format.md).
#include <cmath>
#include <memory>
#include <string>

#include "quasistep/core/formulations/anitescu_qp/anitescu_qp.hpp"
#include "quasistep/core/formulation_table.hpp"
#include "quasistep/core/scene.hpp"

namespace qs {

void read_anitescu_qp_params(const json_input::Node& n, Model& m) {
  AnitescuQpParams& p = m.params.emplace<AnitescuQpParams>();
  n.expect_object({"formulation", "mode", "stiffness", "log_barrier_weight"});
  if (auto mode = n.get("mode")) p.quasi_dynamic = mode->choice<bool>({{"quasistatic", false}, {"quasi_dynamic", true}});
  // Pang & Tedrake's Anitescu slides: the robots are impedances, tau_a = K_a (q̄_a' - (q_a + h v_a')) - tau_g, one
  // stiffness per actuated joint (N/m or N m/rad). Required when there is a robot.
  const int na = m.n_a;
  Eigen::VectorXd K = Eigen::VectorXd::Zero(na);
  if (auto k = n.get("stiffness")) {
    if (k->raw().is_array()) {
      if (static_cast<int>(k->raw().size()) != na)
        k->fail("must be a number or an array of " + std::to_string(na) +
                " numbers (one per velocity-controlled joint, in joint order)");
      for (int a = 0; a < na; ++a) K[a] = k->item(static_cast<size_t>(a)).positive();
    } else {
      if (!k->raw().is_number()) k->fail("must be a number or an array of " + std::to_string(na) + " numbers");
      K.setConstant(k->positive());
    }
  } else if (na > 0) {
    throw SceneError(n.path() + ".stiffness",
                     "missing (required by anitescu_qp: the impedance K_a of the " + std::to_string(na) +
                         " velocity-controlled joints, a number or an array of " + std::to_string(na) + ")");
  }
  p.stiffness_Ka = K;
  // Pang, Suh, Yang & Tedrake, IEEE T-RO 2023, analytic smoothing: the log-barrier weight
  // kappa, a finite number > 0 (absent: the unsmoothed step).
  if (auto kappa = n.get("log_barrier_weight")) p.log_barrier_weight = kappa->positive();
  // Quasi-dynamic objects have mass (Pang & Tedrake's Anitescu slides, "take 2"): a free body that rotates
  // needs its moment of inertia, or its mass matrix is singular.
  if (p.quasi_dynamic)
    for (size_t b = 0; b < m.bodies.size(); ++b) {
      const Body& body = m.bodies[b];
      if (body.kind == BodyKind::free && body.dof[2] >= 0 && !body.inertia)
        throw SceneError("bodies[" + std::to_string(b) + "].inertia",
                         "missing (required by anitescu_qp in quasi_dynamic mode: body \"" + body.name +
                             "\" rotates, and its mass matrix needs it)");
    }
}

std::shared_ptr<const Model> with_log_barrier_weight(const Model& m, double kappa) {
  if (m.formulation != Formulation::anitescu_qp)
    throw SceneError("model.log_barrier_weight", "the smoothed step is anitescu_qp's; this scene's formulation is " +
                                                     std::string(formulation_info(m.formulation).name));
  if (!(kappa > 0) || !std::isfinite(kappa))
    throw SceneError("model.log_barrier_weight", "must be a finite number > 0");
  auto smoothed = std::make_shared<Model>(m);
  formulation_params<AnitescuQpParams>(*smoothed).log_barrier_weight = kappa;
  return smoothed;
}

void anitescu_qp_scene_gains(const Model& m, double&, std::vector<double>& joint_gain) {
  // The defaults (no K_a) for a model the reader did not fill: the stepper refuses it.
  const std::optional<Eigen::VectorXd>& K = formulation_params_or_default<AnitescuQpParams>(m).stiffness_Ka;
  if (!K) return;
  joint_gain.resize(static_cast<std::size_t>(K->size()));
  for (Eigen::Index a = 0; a < K->size(); ++a) joint_gain[static_cast<std::size_t>(a)] = (*K)[a];
}

void anitescu_qp_stepper_buffers(const Model& m, double slots, std::vector<StepperBuffer>& out) {
  const double nq = m.n_q(), nu = m.n_u, d = sizeof(double);
  out.push_back({(2 * slots) * (2 * slots) * d, "anitescu_qp's LCP matrix ((2 x slots)^2 doubles)"});
  out.push_back({(nq * nq + 2 * nu * nu) * d, "anitescu_qp's mass matrices (DOFs^2 doubles)"});
}

}  // namespace qs
