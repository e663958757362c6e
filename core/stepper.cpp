#include "quasistep/core/stepper.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include "quasistep/core/formulation_table.hpp"

namespace qs {

Status Stepper::run(const Model& m, const WorldParams& p, State& s, bool fallback) {
  // Stage 0: h is read here, once per step, and handed to the formulation inside p.
  if (!step_input_valid(m, p)) {
    report_ = StepReport{};
    std::fill(p_n_.begin(), p_n_.end(), 0.0);
    std::fill(p_t_.begin(), p_t_.end(), 0.0);
    return fail(Status::bad_input, step_input_refusal(m, p));
  }
  record_valid_ = false;  // stages 1-2 of this step: contact_record(), at most once
  step_start_q_ = s.q;  // sized at construction (a State of the Model's sizes): no allocation
  step_start_memory_ = s.memory;
  step_start_t_ = s.t;
  const Status st = fallback ? advance_fallback(m, p, s) : advance(m, p, s);
  if (st != Status::solved) return st;
  // Stage 5: the new configuration within kStateRange, else the step is refused.
  if (const int i = state_out_of_range(s.q); i >= 0) {
    const double reached = s.q[i];
    s.q = step_start_q_;
    s.memory = step_start_memory_;
    std::fill(p_n_.begin(), p_n_.end(), 0.0);
    std::fill(p_t_.begin(), p_t_.end(), 0.0);
    std::ostringstream d;
    d << "the step would move ";
    if (i < static_cast<int>(m.dofs.size())) d << m.dofs[static_cast<size_t>(i)].name;
    else d << "q[" << i << "]";
    d << " to " << reached << ", beyond +-" << kStateRange
      << " where the contact geometry overflows (a command or load too large for the scene)";
    report_ = StepReport{};
    return fail(Status::numerical_failure, d.str());
  }
  s.t = time_after_step(s.t, p.h);
  ++s.step;
  return st;
}

Status Stepper::step(const Model& m, const WorldParams& p, State& s, StepDerivatives& d) {
  differentiating_ = true;
  const Status st = run(m, p, s, false);
  differentiating_ = false;
  d.degenerate = false;
  d.margin = 1;
  d.detail.clear();
  if (derivative_nx_ < 0) derivative_nx_ = derivative_state_size(m);  // once: it names the entries
  const int nx = derivative_nx_;
  // A step without a derivative leaves A and B NaN, never an earlier step's or a partial one.
  const auto none = [&] {
    d.A.setConstant(nx, nx, std::numeric_limits<double>::quiet_NaN());  // no allocation once sized
    d.B.setConstant(nx, m.n_a, std::numeric_limits<double>::quiet_NaN());
  };
  if (st != Status::solved) {
    d.status = st;
    d.detail = "the step did not solve: " + report_.detail;
    none();
    return st;
  }
  d.A.setIdentity(nx, nx);
  d.B.setZero(nx, m.n_a);
  d.status = differentiate(m, p, d);
  if (d.status != Status::solved) none();
  return st;
}

Status Stepper::differentiate(const Model& m, const WorldParams&, StepDerivatives& d) {
  d.detail = std::string(formulation_info(m.formulation).name) + " has no step derivatives";
  return Status::bad_input;
}

std::string step_input_refusal(const Model& m, const WorldParams& p) {
  std::ostringstream d;
  if (!(p.h > 0) || !std::isfinite(p.h)) d << "step.h must be a finite number > 0 (got " << p.h << ")";
  else if (p.commanded && static_cast<int>(p.command.size()) != m.n_a)
    d << "WorldParams::command has " << p.command.size() << " entries; the model has " << m.n_a
      << " velocity-controlled joints (command_names)";
  return d.str();
}

Status Stepper::fail(Status st, std::string detail) {
  report_.status = st;
  report_.detail = std::move(detail);
  return st;
}

Status Stepper::record_enumeration(const LcpEnumeration::Result& ex) {
  report_.enumeration_nodes = ex.stats.nodes;
  const std::string nodes = std::to_string(ex.stats.nodes);
  switch (ex.status) {
    case Status::solved:
      report_.by_enumeration = true;
      report_.complementarity_residual = ex.residual;
      return Status::solved;
    case Status::infeasible:
      return fail(Status::infeasible, "the step's LCP has no solution: branch-and-bound over its complementarity pairs "
                                      "closed all " + nodes + " nodes, each by an infeasible LP (verified Farkas certificate)");
    default:
      return fail(ex.status == Status::iteration_limit ? Status::not_found : ex.status,
                  "Lemke ended on a ray and the exact enumeration stopped (" + std::string(to_string(ex.status)) +
                      ") after " + nodes + " nodes");
  }
}

std::unique_ptr<Stepper> make_stepper(const Model& m, const StepperOptions& options) {
  const FormulationInfo& f = formulation_info(m.formulation);
  return f.make_stepper ? f.make_stepper(m, options) : nullptr;
}

}  // namespace qs
