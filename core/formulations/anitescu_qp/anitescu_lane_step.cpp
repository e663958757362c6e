// anitescu_qp's quasi-dynamic step for a lane group of worlds (the batch engine's lane
// path, quasistep/core/lane_step.hpp): anitescu_quasi_dynamic_step at T = Lane, each lane a
// world with its own friction, masses, sizes, stiffnesses and commands, its State::memory (the reference q̄_a, then the
// PGS warm start: AnitescuQp::memory_size) carried in the group's memory rows.
#include <memory>
#include <string>

#include "quasistep/core/formulations/anitescu_qp/anitescu_lanes.hpp"
#include "quasistep/core/formulations/anitescu_qp/anitescu_qp.hpp"
#include "quasistep/core/lane_step.hpp"

namespace qs {
namespace {

class AnitescuLaneStep final : public LaneStep {
 public:
  AnitescuLaneStep(const Model& m, const StepperOptions& o)
      : LaneStep(m), ws_(m), pgs_(o.pgs.value_or(anitescu_pgs_settings())) {}

  void step(const Model& m, const WorldParams& shared) override {
    LaneGroup& g = group;
    const int ref = AnitescuQp::kMemoryReference, warm = AnitescuQp::memory_warm_start(m), warm_rows = 2 * m.n_slots();
    anitescu_quasi_dynamic_step<Lane>(m, shared, ws_, g.q.data(), g.memory.data() + ref, g.mu.data(),
                                      g.commanded ? g.u.data() : nullptr, g.memory.data() + warm, g.t, pgs_,
                                      g.mass_varies ? g.mass.data() : nullptr, g.scale_varies ? g.scale.data() : nullptr,
                                      g.joint_gain_varies ? g.joint_gain.data() : nullptr);
    for (int i = 0; i < m.n_q(); ++i) g.q[i] = ws_.q_out[i];
    for (int a = 0; a < m.n_a; ++a) g.memory[ref + a] = ws_.qbar[a];
    for (int r = 0; r < warm_rows; ++r) g.memory[warm + r] = ws_.z[r];
    for (int l = 0; l < kLaneWidth; ++l) {
      g.ok[l] = ws_.ok[l];
      g.pivots[l] = ws_.pgs_result.iterations[l];
    }
    g.residual = ws_.kkt;
  }

 private:
  AnitescuStepWorkspace<Lane> ws_;
  PgsSettings pgs_;
};

std::string mode_refusal(const Model& m) {
  const AnitescuQpParams& params = formulation_params_or_default<AnitescuQpParams>(m);
  if (!params.quasi_dynamic) return "no lane kernel for anitescu_qp's quasistatic mode yet";
  // The lanes solve the QP by PGS; the smoothed step is Newton's method on its barrier problem.
  if (params.log_barrier_weight)
    return "no lane kernel for anitescu_qp's smoothed step (model.log_barrier_weight)";
  return {};
}

// The model's input the stepper refuses (and reports world by world).
std::string input_refusal(const Model& m) {
  const int na = m.n_a;
  const std::optional<Eigen::VectorXd>& K = formulation_params_or_default<AnitescuQpParams>(m).stiffness_Ka;
  if (m.world.type != WorldType::vertical || m.n_q() == 0 || (na > 0 && (!K || K->size() != na || !(K->minCoeff() > 0))))
    return "the scalar stepper reports this model's bad input";
  return {};
}

std::string describe(const Model&) {
  return "the anitescu_qp quasi-dynamic step by PGS, each world's friction, masses, sizes, stiffnesses and commands "
         "in its lane); steps a lane cannot settle fall back to the scalar path";
}

std::unique_ptr<LaneStep> make(const Model& m, const StepperOptions& o) {
  return std::make_unique<AnitescuLaneStep>(m, o);
}

}  // namespace

const LaneEntry kAnitescuQuasiDynamicLanes{.mode_refusal = mode_refusal,
                                           .input_refusal = input_refusal,
                                           .carries_mass = true,
                                           .carries_scale = true,
                                           .carries_joint_gains = true,
                                           .describe = describe,
                                           .make = make};

std::unique_ptr<Stepper> make_anitescu_qp(const Model& m, const StepperOptions& options) {
  auto stepper = std::make_unique<AnitescuQp>(m);
  if (options.pgs) stepper->set_pgs_settings(*options.pgs);
  return stepper;
}

}  // namespace qs
