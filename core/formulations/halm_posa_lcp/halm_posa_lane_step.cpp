// The tabletop formulations' step for a lane group of worlds (the batch engine's lane path,
// quasistep/core/lane_step.hpp): halm_posa_template_step at T = Lane, each lane a world
// with its own friction, gain scale c and commands.
#include <memory>
#include <string>

#include "quasistep/core/formulations/halm_posa_lcp/halm_posa_lanes.hpp"
#include "quasistep/core/formulations/halm_posa_lcp/halm_posa_lcp.hpp"
#include "quasistep/core/lane_step.hpp"

namespace qs {
namespace {

class HalmPosaLaneStep final : public LaneStep {
 public:
  explicit HalmPosaLaneStep(const Model& m) : LaneStep(m), ws_(m) {}

  void step(const Model& m, const WorldParams& shared) override {
    LaneGroup& g = group;
    halm_posa_template_step<Lane>(m, shared, ws_, g.q.data(), g.mu.data(), g.gain_varies ? &g.gain : nullptr,
                                  g.commanded ? g.u.data() : nullptr, g.t);
    for (int i = 0; i < m.n_q(); ++i) g.q[i] = ws_.q_end[i];
    for (int l = 0; l < kLaneWidth; ++l) {
      g.ok[l] = ws_.ok[l];
      g.pivots[l] = ws_.pivots[l];
      g.residual.set(l, ws_.residual[l]);
    }
  }

 private:
  HalmPosaStepWorkspace<Lane> ws_;
};

std::string input_refusal(const Model& m) {
  if (4 * m.n_slots() > kHalmPosaTemplateCapacity)
    return std::to_string(m.n_slots()) + " contact slots, more than the lane template's " +
           std::to_string(kHalmPosaTemplateCapacity / 4);
  if (!halm_posa_template_applies(m)) return "the scalar stepper reports this model's bad input";
  // The lanes share one fixed Ã; the exact surface's sequence of LCPs gives each world its own
  // Ã per program (Halm & Posa 2018, sec. 3.4), so those worlds step one at a time.
  if (formulation_params_or_default<HalmPosaParams>(m).support)
    return "model.support: the exact limit surface's sequence of LCPs steps one world at a time";
  return {};
}

std::string describe(const Model& m) {
  return "the " + std::string(to_string(m.formulation)) +
         " step by Lemke, each world's friction, c and commands in its lane); steps a lane cannot solve fall back "
         "to the scalar path";
}

std::unique_ptr<LaneStep> make(const Model& m, const StepperOptions&) { return std::make_unique<HalmPosaLaneStep>(m); }

}  // namespace

const LaneEntry kHalmPosaLanes{.input_refusal = input_refusal,
                               .gain_path = "model.c",
                               .describe = describe,
                               .make = make};

}  // namespace qs
