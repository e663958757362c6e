// One thread's single-world stepper for the batch layer's per-world paths (Rollout's contacts
// and derivatives records, BundledStep's samples): a Stepper with a program's PGS settings,
// a WorldParams, a State and a StepDerivatives, each sized once, reused for every world the
// thread steps (a tbb::enumerable_thread_specific holds one per thread). Private to batch/.
#pragma once

#include <memory>

#include "quasistep/core/derivatives.hpp"
#include "quasistep/core/model.hpp"
#include "quasistep/core/stepper.hpp"
#include "quasistep/core/world_params.hpp"

namespace qs {

struct ThreadStepper {
  ThreadStepper(const Model& m, const StepperOptions& o) : stepper(make_stepper(m, o)), params(m), state(initial_state(m)) {}
  std::unique_ptr<Stepper> stepper;
  WorldParams params;
  State state;
  StepDerivatives derivatives;
};

}  // namespace qs
