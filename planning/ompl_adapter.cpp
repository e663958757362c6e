#include "quasistep/planning/ompl_adapter.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>

#include <ompl/base/PlannerTerminationCondition.h>
#include <ompl/base/ProblemDefinition.h>
#include <ompl/base/ProjectionEvaluator.h>
#include <ompl/base/objectives/PathLengthOptimizationObjective.h>
#include <ompl/base/spaces/SE2StateSpace.h>
#include <ompl/base/spaces/SO2StateSpace.h>
#include <ompl/control/PathControl.h>
#include <ompl/control/planners/kpiece/KPIECE1.h>
#include <ompl/control/planners/rrt/RRT.h>
#include <ompl/control/planners/sst/SST.h>
#include <ompl/control/spaces/RealVectorControlSpace.h>

#include "quasistep/batch/monte_carlo.hpp"
#include "quasistep/core/kinematics.hpp"
#include "quasistep/kernels/splitmix64.hpp"

namespace qs::planning {

namespace ob = ompl::base;
namespace oc = ompl::control;

namespace {

constexpr double kPi = std::numbers::pi;

// The exact component's layout after q and the memory.
enum ExactTail { tail_t = 0, tail_step = 1, tail_status = 2, tail_size = 3 };

/// Uniform sampling of the planner's view from one seeded RNG; the exact component is left
/// at zero with status not_run (a sampled state is a target, never a start).
class ViewSampler : public ob::StateSampler {
 public:
  ViewSampler(const ob::StateSpace* space, std::uint32_t seed) : ob::StateSampler(space) { rng_.setLocalSeed(seed); }

  void sampleUniform(ob::State* state) override { fill(state, nullptr, 0.0, false); }
  void sampleUniformNear(ob::State* state, const ob::State* near, double distance) override {
    fill(state, near, distance, false);
  }
  void sampleGaussian(ob::State* state, const ob::State* mean, double stdDev) override { fill(state, mean, stdDev, true); }

 private:
  // Each coordinate uniform in its bounds, or around `near` (uniform within +-spread or normal
  // with that deviation), clipped to the bounds.
  double draw(double lo, double hi, const double* near, double spread, bool gaussian) {
    if (!near) return rng_.uniformReal(lo, hi);
    const double v = gaussian ? rng_.gaussian(*near, spread) : rng_.uniformReal(*near - spread, *near + spread);
    return std::clamp(v, lo, hi);
  }
  double draw_angle(const double* near, double spread, bool gaussian) {
    if (!near) return rng_.uniformReal(-kPi, kPi);
    const double v = gaussian ? rng_.gaussian(*near, spread) : rng_.uniformReal(*near - spread, *near + spread);
    return std::remainder(v, 2 * kPi);
  }
  void fill(ob::State* state, const ob::State* near, double spread, bool gaussian) {
    const auto* cs = space_->as<ob::CompoundStateSpace>();
    auto* s = state->as<ob::CompoundState>();
    const auto* n = near ? near->as<ob::CompoundState>() : nullptr;
    for (unsigned int c = 0; c < cs->getSubspaceCount(); ++c) {
      const ob::StateSpace* sub = cs->getSubspace(c).get();
      if (const auto* exact = dynamic_cast<const ExactStateSpace*>(sub)) {
        auto* v = s->components[c]->as<ob::RealVectorStateSpace::StateType>()->values;
        std::fill(v, v + exact->getDimension(), 0.0);
        v[exact->getDimension() - tail_size + tail_status] = static_cast<double>(Status::not_run);
      } else if (const auto* se2 = dynamic_cast<const ob::SE2StateSpace*>(sub)) {
        const ob::RealVectorBounds b = se2->getBounds();
        auto* st = s->components[c]->as<ob::SE2StateSpace::StateType>();
        const auto* ns = n ? n->components[c]->as<ob::SE2StateSpace::StateType>() : nullptr;
        const double nx = ns ? ns->getX() : 0, ny = ns ? ns->getY() : 0, nyaw = ns ? ns->getYaw() : 0;
        const double x = draw(b.low[0], b.high[0], ns ? &nx : nullptr, spread, gaussian);
        const double y = draw(b.low[1], b.high[1], ns ? &ny : nullptr, spread, gaussian);
        st->setXY(x, y);
        st->setYaw(draw_angle(ns ? &nyaw : nullptr, spread, gaussian));
      } else if (dynamic_cast<const ob::SO2StateSpace*>(sub)) {
        const auto* ns = n ? n->components[c]->as<ob::SO2StateSpace::StateType>() : nullptr;
        s->components[c]->as<ob::SO2StateSpace::StateType>()->value =
            draw_angle(ns ? &ns->value : nullptr, spread, gaussian);
      } else {
        const auto* rv = sub->as<ob::RealVectorStateSpace>();
        const ob::RealVectorBounds& b = rv->getBounds();
        auto* v = s->components[c]->as<ob::RealVectorStateSpace::StateType>()->values;
        const auto* nv = n ? n->components[c]->as<ob::RealVectorStateSpace::StateType>()->values : nullptr;
        for (unsigned int k = 0; k < rv->getDimension(); ++k)
          v[k] = draw(b.low[k], b.high[k], nv ? &nv[k] : nullptr, spread, gaussian);
      }
    }
  }
};

/// OMPL's uniform control sampler with a seeded RNG.
class SeededControlSampler : public oc::RealVectorControlUniformSampler {
 public:
  SeededControlSampler(const oc::ControlSpace* space, std::uint32_t seed) : oc::RealVectorControlUniformSampler(space) {
    rng_.setLocalSeed(seed);
  }
};

/// KPIECE's projection: the goal body's x and y, 20 cells across each bound.
class GoalBodyProjection : public ob::ProjectionEvaluator {
 public:
  GoalBodyProjection(const ob::StateSpace* space, const PlanningSpace* ps) : ob::ProjectionEvaluator(space), ps_(ps) {
    const Body& b = ps->model().bodies[ps->spec().goal_body];
    std::vector<double> cells(2);
    for (int k = 0; k < 2; ++k) {
      const int d = b.dof[k];
      cells[k] = d >= 0 ? (ps->spec().bounds[d][1] - ps->spec().bounds[d][0]) / 20.0 : 1.0;
    }
    setCellSizes(cells);
  }
  unsigned int getDimension() const override { return 2; }
  void project(const ob::State* state, Eigen::Ref<Eigen::VectorXd> projection) const override {
    const std::array<double, 3> p = ps_->goal_pose(ps_->q_of(state));
    projection[0] = p[0];
    projection[1] = p[1];
  }

 private:
  const PlanningSpace* ps_;
};

/// A planner whose own RNG is seeded (OMPL seeds it from a process-wide sequence otherwise).
template <class P>
class Seeded : public P {
 public:
  Seeded(const oc::SpaceInformationPtr& si, std::uint32_t seed) : P(si) { this->rng_.setLocalSeed(seed); }
};

}  // namespace

// ---- ExactStateSpace -----------------------------------------------------------------------

ExactStateSpace::ExactStateSpace(unsigned int dimension) : ob::RealVectorStateSpace(dimension) {
  setName("exact");
  setBounds(0.0, 0.0);
}

void ExactStateSpace::interpolate(const ob::State* from, const ob::State* to, double t, ob::State* state) const {
  // No meaningful blend of two solver states: the nearer end.
  copyState(state, t < 0.5 ? from : to);
}

// ---- PlanningSpace -------------------------------------------------------------------------

std::shared_ptr<PlanningSpace> PlanningSpace::create(const Scene& scene, std::uint64_t seed) {
  if (!scene.plan) throw PlanningError(scene.source + ": no plan section (docs/scene-format.md, \"plan\")");
  const Model& m = *scene.model;
  if (!(m.step.h > 0)) throw PlanningError(scene.source + ": step.h: missing (required to plan)");
  if (!make_stepper(m))
    throw PlanningError(scene.source + ": model.formulation: \"" + std::string(to_string(m.formulation)) +
                        "\" has no stepper in this build");
  std::shared_ptr<PlanningSpace> ps(new PlanningSpace(scene, seed));
  ps->build();
  return ps;
}

PlanningSpace::PlanningSpace(const Scene& scene, std::uint64_t seed) : scene_(scene), seed_(seed) {}

std::uint32_t PlanningSpace::next_seed() {
  std::uint64_t state = seed_ ^ (0xA0761D6478BD642Full * ++seeds_drawn_);
  const auto s = static_cast<std::uint32_t>(splitmix64_next(state) >> 32);
  return s == 0 ? 1u : s;  // OMPL's RNGs take nonzero seeds
}

void PlanningSpace::build() {
  const Model& m = model();
  const PlanSpec& plan = spec();
  const int nq = m.n_q();
  memory_size_ = step_memory_size(m);
  view_.assign(static_cast<std::size_t>(nq), {});
  auto space = std::make_shared<ob::CompoundStateSpace>();
  int components = 0;
  // A fully free planar body: one SE2 (x, y bounded; yaw an angle).
  for (const Body& b : m.bodies) {
    if (b.kind != BodyKind::free || b.dof[0] < 0 || b.dof[1] < 0 || b.dof[2] < 0) continue;
    auto se2 = std::make_shared<ob::SE2StateSpace>();
    ob::RealVectorBounds bounds(2);
    for (int k = 0; k < 2; ++k) {
      bounds.setLow(static_cast<unsigned int>(k), plan.bounds[static_cast<std::size_t>(b.dof[k])][0]);
      bounds.setHigh(static_cast<unsigned int>(k), plan.bounds[static_cast<std::size_t>(b.dof[k])][1]);
    }
    se2->setBounds(bounds);
    se2->setName(b.name);
    // The goal body's pose weighs 1 in distances, every other component plan.other_weight: the
    // tree should spread over where the object is, not over where the fingers are.
    space->addSubspace(se2, &b - m.bodies.data() == plan.goal_body ? 1.0 : plan.other_weight);
    for (int k = 0; k < 3; ++k) view_[static_cast<std::size_t>(b.dof[k])] = {components, k, ViewSlot::Kind::se2};
    ++components;
  }
  // Other DOFs: an unbounded rotation is an SO2; the rest share a real vector. A goal body that
  // is not wholly free keeps its own components, weighing 1 like a free goal body's SE2.
  const auto of_goal_body = [&](int d) {
    const Dof& dof = m.dofs[static_cast<std::size_t>(d)];
    return dof.kind != DofKind::joint && dof.index == plan.goal_body;
  };
  std::vector<int> reals[2];  // [0] the others, [1] the goal body's
  for (int d = 0; d < nq; ++d) {
    if (view_[static_cast<std::size_t>(d)].component >= 0) continue;
    const auto& bd = plan.bounds[static_cast<std::size_t>(d)];
    if (!std::isfinite(bd[0]) || !std::isfinite(bd[1])) {
      auto so2 = std::make_shared<ob::SO2StateSpace>();
      so2->setName(m.dofs[static_cast<std::size_t>(d)].name);
      space->addSubspace(so2, of_goal_body(d) ? 1.0 : plan.other_weight);
      view_[static_cast<std::size_t>(d)] = {components++, 0, ViewSlot::Kind::so2};
    } else {
      reals[of_goal_body(d) ? 1 : 0].push_back(d);
    }
  }
  for (int goal = 0; goal < 2; ++goal) {
    const std::vector<int>& dofs = reals[goal];
    if (dofs.empty()) continue;
    auto rv = std::make_shared<ob::RealVectorStateSpace>(static_cast<unsigned int>(dofs.size()));
    ob::RealVectorBounds bounds(static_cast<unsigned int>(dofs.size()));
    for (std::size_t i = 0; i < dofs.size(); ++i) {
      bounds.setLow(static_cast<unsigned int>(i), plan.bounds[static_cast<std::size_t>(dofs[i])][0]);
      bounds.setHigh(static_cast<unsigned int>(i), plan.bounds[static_cast<std::size_t>(dofs[i])][1]);
      rv->setDimensionName(static_cast<unsigned int>(i), m.dofs[static_cast<std::size_t>(dofs[i])].name);
      view_[static_cast<std::size_t>(dofs[i])] = {components, static_cast<int>(i), ViewSlot::Kind::real};
    }
    rv->setBounds(bounds);
    rv->setName(goal ? "goal_body" : "dofs");
    space->addSubspace(rv, goal ? 1.0 : plan.other_weight);
    ++components;
  }
  exact_component_ = components;
  space->addSubspace(std::make_shared<ExactStateSpace>(static_cast<unsigned int>(nq + memory_size_ + tail_size)), 0.0);
  space->lock();
  space->setStateSamplerAllocator(
      [this](const ob::StateSpace* s) { return std::make_shared<ViewSampler>(s, next_seed()); });
  space->registerDefaultProjection(std::make_shared<GoalBodyProjection>(space.get(), this));
  space_ = space;

  const std::vector<std::string> names = command_names(m);
  auto controls = std::make_shared<oc::RealVectorControlSpace>(space_, static_cast<unsigned int>(names.size()));
  ob::RealVectorBounds cb(static_cast<unsigned int>(names.size()));
  for (std::size_t i = 0; i < names.size(); ++i) {
    cb.setLow(static_cast<unsigned int>(i), plan.control_bounds[i][0]);
    cb.setHigh(static_cast<unsigned int>(i), plan.control_bounds[i][1]);
  }
  controls->setBounds(cb);
  controls->setControlSamplerAllocator(
      [this](const oc::ControlSpace* c) { return std::make_shared<SeededControlSampler>(c, next_seed()); });

  si_ = std::make_shared<oc::SpaceInformation>(space_, controls);
  si_->setStatePropagator(std::make_shared<StepPropagator>(si_.get(), this));
  si_->setStateValidityChecker(std::make_shared<PlanValidityChecker>(si_.get(), this));
  si_->setPropagationStepSize(m.step.h);
  si_->setMinMaxControlDuration(static_cast<unsigned int>(plan.min_control_steps),
                                static_cast<unsigned int>(plan.max_control_steps));
  si_->setup();
  pose_.resize(m.bodies.size());
  frame_.resize(m.joints.size());
}

void PlanningSpace::set_view(ob::State* out, int dof, double q) const {
  const ViewSlot& v = view_[static_cast<std::size_t>(dof)];
  const double value = v.kind == ViewSlot::Kind::real ? q : std::remainder(q, 2 * kPi);
  ob::State* c = out->as<ob::CompoundState>()->components[v.component];
  switch (v.kind) {
    case ViewSlot::Kind::se2: {
      auto* st = c->as<ob::SE2StateSpace::StateType>();
      if (v.index == 0) st->setX(value);
      else if (v.index == 1) st->setY(value);
      else st->setYaw(value);
      break;
    }
    case ViewSlot::Kind::so2: c->as<ob::SO2StateSpace::StateType>()->value = value; break;
    case ViewSlot::Kind::real: c->as<ob::RealVectorStateSpace::StateType>()->values[v.index] = value; break;
  }
}

void PlanningSpace::to_ompl(const State& s, Status status, ob::State* out) const {
  auto* cs = out->as<ob::CompoundState>();
  const int nq = model().n_q();
  if (s.q.size() != nq || s.memory.size() != memory_size_)
    throw PlanningError("a State of " + std::to_string(s.q.size()) + " DOFs and " + std::to_string(s.memory.size()) +
                        " memory values, where this scene has " + std::to_string(nq) + " and " +
                        std::to_string(memory_size_));
  for (int d = 0; d < nq; ++d) set_view(out, d, s.q[d]);
  double* e = cs->components[exact_component_]->as<ob::RealVectorStateSpace::StateType>()->values;
  std::copy(s.q.data(), s.q.data() + nq, e);
  if (memory_size_ > 0) std::copy(s.memory.data(), s.memory.data() + memory_size_, e + nq);
  double* tail = e + nq + memory_size_;
  tail[tail_t] = s.t;
  tail[tail_step] = static_cast<double>(s.step);
  tail[tail_status] = static_cast<double>(status);
}

const double* PlanningSpace::q_of(const ob::State* in) const {
  return in->as<ob::CompoundState>()->components[exact_component_]->as<ob::RealVectorStateSpace::StateType>()->values;
}

void PlanningSpace::from_ompl(const ob::State* in, State& s) const {
  const int nq = model().n_q();
  const double* e = q_of(in);
  s.q = Eigen::Map<const Eigen::VectorXd>(e, nq);
  s.memory = Eigen::Map<const Eigen::VectorXd>(e + nq, memory_size_);
  s.t = e[nq + memory_size_ + tail_t];
  s.step = static_cast<int>(e[nq + memory_size_ + tail_step]);
}

Status PlanningSpace::status_of(const ob::State* in) const {
  return static_cast<Status>(static_cast<int>(q_of(in)[model().n_q() + memory_size_ + tail_status]));
}

std::array<double, 3> PlanningSpace::goal_pose(const double* q) const {
  const Body& b = model().bodies[spec().goal_body];
  std::array<double, 3> p{};
  for (int k = 0; k < 3; ++k) p[k] = b.dof[k] >= 0 ? q[b.dof[k]] : b.pose[k];
  return p;
}

bool PlanningSpace::admissible(const double* q) const {
  const PlanSpec& plan = spec();
  const int nq = model().n_q();
  for (int d = 0; d < nq; ++d) {
    // NaN fails both comparisons' complement: checked explicitly.
    if (!std::isfinite(q[d])) return false;
    if (q[d] < plan.bounds[static_cast<std::size_t>(d)][0] || q[d] > plan.bounds[static_cast<std::size_t>(d)][1])
      return false;
  }
  if (plan.keep_out.empty()) return true;
  forward_kinematics(model(), q, pose_.data(), frame_.data());
  for (const PlanSpec::KeepOut& k : plan.keep_out) {
    const Vec2<double> o = pose_[static_cast<std::size_t>(k.body)].translation;
    if (plan_keep_out_hit(k, o.x, o.y)) return false;
  }
  return true;
}

// ---- StepPropagator ------------------------------------------------------------------------

StepPropagator::StepPropagator(oc::SpaceInformation* si, PlanningSpace* space)
    : oc::StatePropagator(si), space_(space), stepper_(make_stepper(space_->model())),
      params_(space_->model()) {
  params_.commanded = true;
  params_.command.assign(static_cast<std::size_t>(space_->model().n_a), 0.0);
}

void StepPropagator::propagate(const ob::State* state, const oc::Control* control, double duration,
                               ob::State* result) const {
  const Model& m = space_->model();
  const double* u = control->as<oc::RealVectorControlSpace::ControlType>()->values;
  std::copy(u, u + m.n_a, params_.command.begin());
  space_->from_ompl(state, state_);
  Status st = space_->status_of(state);
  // A state the solver did not reach is not stepped from (its validity check failed).
  const long steps = std::max(1L, std::lround(duration / m.step.h));
  for (long l = 0; l < steps && st == Status::solved; ++l) {
    st = stepper_->step(m, params_, state_);
    space_->propagations().fetch_add(1, std::memory_order_relaxed);
  }
  space_->to_ompl(state_, st, result);
}

// ---- PlanValidityChecker -------------------------------------------------------------------

PlanValidityChecker::PlanValidityChecker(ob::SpaceInformation* si, const PlanningSpace* space)
    : ob::StateValidityChecker(si), space_(space) {}

bool PlanValidityChecker::isValid(const ob::State* state) const {
  return space_->status_of(state) == Status::solved && space_->admissible(space_->q_of(state));
}

// ---- PlanGoal ------------------------------------------------------------------------------

PlanGoal::PlanGoal(const std::shared_ptr<PlanningSpace>& space)
    : ob::GoalSampleableRegion(space->space_information()), space_(space),
      sampler_(space->state_space()->allocStateSampler()), rng_(space->next_seed()) {
  setThreshold(0.0);
}

bool PlanGoal::isSatisfied(const ob::State* st) const { return isSatisfied(st, nullptr); }

bool PlanGoal::isSatisfied(const ob::State* st, double* distance) const {
  if (distance) *distance = distanceGoal(st);
  if (space_->status_of(st) != Status::solved) return false;
  const PlanSpec& plan = space_->spec();
  return in_goal_region(space_->goal_pose(space_->q_of(st)), plan.goal_center, plan.goal_tolerance);
}

double PlanGoal::distanceGoal(const ob::State* st) const {
  if (space_->status_of(st) != Status::solved) return std::numeric_limits<double>::infinity();
  const PlanSpec& plan = space_->spec();
  const std::array<double, 3> p = space_->goal_pose(space_->q_of(st));
  double worst = 0.0;
  for (int k = 0; k < 3; ++k) {
    double d = p[k] - plan.goal_center[k];
    if (k == 2) d = std::remainder(d, 2 * kPi);  // theta modulo 2 pi, as in_goal_region
    worst = std::max(worst, std::abs(d) / plan.goal_tolerance[k] - 1.0);
  }
  return worst;
}

void PlanGoal::sampleGoal(ob::State* st) const {
  sampler_->sampleUniform(st);
  // The goal body's pose uniform in the region, clipped to the bounds (the parser checked that
  // they overlap): written into the planner's view only.
  const PlanSpec& plan = space_->spec();
  const Body& b = space_->model().bodies[plan.goal_body];
  for (int k = 0; k < 3; ++k) {
    const int d = b.dof[k];
    if (d < 0) continue;
    const auto& bd = plan.bounds[static_cast<std::size_t>(d)];
    const double lo = std::max(plan.goal_center[k] - plan.goal_tolerance[k], bd[0]);
    const double hi = std::min(plan.goal_center[k] + plan.goal_tolerance[k], bd[1]);
    space_->set_view(st, d, lo < hi ? rng_.uniformReal(lo, hi) : lo);
  }
}

// ---- BatchedDirectedControlSampler ---------------------------------------------------------

BatchedDirectedControlSampler::BatchedDirectedControlSampler(const oc::SpaceInformation* si,
                                                             std::shared_ptr<PlanningSpace> space, int controls,
                                                             int threads)
    : oc::DirectedControlSampler(si), space_(std::move(space)), controls_(controls),
      sampler_(si->allocControlSampler()),
      rollout_(space_->scene().model, [&] {
        BatchOptions o;
        o.threads = threads;
        return o;
      }()),
      stepper_(make_stepper(space_->model())), params_(space_->model()) {
  if (controls_ < 1) throw PlanningError("batched control sampler: controls must be >= 1");
  for (int i = 0; i < controls_; ++i) candidates_.push_back(si->allocControl());
  scratch_ = si->allocState();
  params_.commanded = true;
}

BatchedDirectedControlSampler::~BatchedDirectedControlSampler() {
  for (oc::Control* c : candidates_) si_->freeControl(c);
  si_->freeState(scratch_);
}

unsigned int BatchedDirectedControlSampler::sampleTo(oc::Control* control, const ob::State* source, ob::State* dest) {
  return best(control, nullptr, source, dest);
}

unsigned int BatchedDirectedControlSampler::sampleTo(oc::Control* control, const oc::Control* previous,
                                                     const ob::State* source, ob::State* dest) {
  return best(control, previous, source, dest);
}

unsigned int BatchedDirectedControlSampler::best(oc::Control* control, const oc::Control* previous,
                                                 const ob::State* source, ob::State* dest) {
  const Model& m = space_->model();
  const int n_a = m.n_a, n_q = m.n_q();
  // Controls first, then the one duration, from the control sampler's RNG as OMPL's sampler draws them.
  for (oc::Control* c : candidates_) {
    if (previous) sampler_->sampleNext(c, previous, source);
    else sampler_->sample(c, source);
  }
  const int steps = static_cast<int>(
      sampler_->sampleStepCount(si_->getMinControlDuration(), si_->getMaxControlDuration()));
  space_->from_ompl(source, state_);
  starts_.assign(static_cast<std::size_t>(controls_), state_);
  actions_.resize(static_cast<std::size_t>(controls_) * static_cast<std::size_t>(steps) * static_cast<std::size_t>(n_a));
  for (int i = 0; i < controls_; ++i) {
    const double* u = candidates_[static_cast<std::size_t>(i)]->as<oc::RealVectorControlSpace::ControlType>()->values;
    for (int l = 0; l < steps; ++l)
      std::copy(u, u + n_a, actions_.begin() + (static_cast<std::ptrdiff_t>(i) * steps + l) * n_a);
  }
  const RolloutResult& r = rollout_.propagate(starts_, actions_, m.step.h, steps, RolloutRecord::every_step);
  // Steps taken: a candidate whose step failed is not stepped after it.
  long taken = 0;
  for (int i = 0; i < controls_; ++i) taken += r.failed_step[static_cast<std::size_t>(i)] > 0 ? r.failed_step[static_cast<std::size_t>(i)] : steps;
  space_->propagations().fetch_add(taken, std::memory_order_relaxed);

  // Each candidate's motion ends at its last valid state, as propagateWhileValid's would.
  int best_i = -1, best_valid = 0;
  double best_distance = std::numeric_limits<double>::infinity();
  for (int i = 0; i < controls_; ++i) {
    int valid = 0;
    while (valid < steps && r.step_status[static_cast<std::size_t>(i) * static_cast<std::size_t>(steps) +
                                         static_cast<std::size_t>(valid)] == Status::solved &&
           space_->admissible(r.state(i, valid + 1).data()))
      ++valid;
    // The view of the state reached: enough for the distance (the exact part weighs 0).
    State& at = starts_[static_cast<std::size_t>(i)];
    at.q = Eigen::Map<const Eigen::VectorXd>(r.state(i, valid).data(), n_q);
    space_->to_ompl(at, Status::solved, scratch_);
    const double d = si_->distance(scratch_, dest);
    if (best_i < 0 || d < best_distance) {
      best_i = i;
      best_distance = d;
      best_valid = valid;
    }
  }
  si_->copyControl(control, candidates_[static_cast<std::size_t>(best_i)]);
  if (best_valid == steps) {
    space_->to_ompl(r.next[static_cast<std::size_t>(best_i)], Status::solved, dest);
  } else {
    // Ended early: its memory, t and step after `best_valid` steps are not in the rollout's
    // record, so those steps are taken again one by one (bitwise the rollout's, as `run`'s).
    space_->from_ompl(source, state_);
    const double* u = candidates_[static_cast<std::size_t>(best_i)]->as<oc::RealVectorControlSpace::ControlType>()->values;
    params_.command.assign(u, u + n_a);
    Status st = Status::solved;
    for (int l = 0; l < best_valid && st == Status::solved; ++l) st = stepper_->step(m, params_, state_);
    // The steps the rollout validated, taken again: they must be the same, or the tree would
    // take in a state nobody checked.
    const std::span<const double> checked = r.state(best_i, best_valid);
    if (st != Status::solved || std::memcmp(state_.q.data(), checked.data(), sizeof(double) * checked.size()) != 0)
      throw PlanningError("internal error: a candidate stepped again does not end where the batch engine ended it");
    space_->propagations().fetch_add(best_valid, std::memory_order_relaxed);
    space_->to_ompl(state_, Status::solved, dest);
  }
  return static_cast<unsigned int>(best_valid);
}

// ---- planners and plan() -------------------------------------------------------------------

ob::PlannerPtr make_planner(PlannerKind kind, const oc::SpaceInformationPtr& si, PlanningSpace& space,
                            double goal_bias) {
  switch (kind) {
    case PlannerKind::rrt: {
      auto p = std::make_shared<Seeded<oc::RRT>>(si, space.next_seed());
      p->setGoalBias(goal_bias);
      return p;
    }
    case PlannerKind::sst: {
      auto p = std::make_shared<Seeded<oc::SST>>(si, space.next_seed());
      p->setGoalBias(goal_bias);
      // SST's radii are absolute (OMPL's defaults 0.2 and 0.1): a new state within the pruning
      // radius of a witness with a cheaper path is dropped, so radii larger than one control's
      // reach pin the tree to its start. Scaled to L, the farthest a joint moves under one
      // control (max steps x h x the fastest velocity bound), chosen here: 0.2 L and 0.1 L.
      const PlanSpec& plan = space.spec();
      double fastest = 0.0;
      for (const auto& b : plan.control_bounds) fastest = std::max({fastest, std::abs(b[0]), std::abs(b[1])});
      const double reach = plan.max_control_steps * space.model().step.h * fastest;
      p->setSelectionRadius(0.2 * reach);
      p->setPruningRadius(0.1 * reach);
      return p;
    }
    case PlannerKind::kpiece: {
      auto p = std::make_shared<Seeded<oc::KPIECE1>>(si, space.next_seed());
      p->setGoalBias(goal_bias);
      return p;
    }
  }
  throw PlanningError("unknown planner");
}

PlanResult plan(const Scene& scene, const PlanOptions& o) {
  if (o.batch_controls < 1) throw PlanningError("batch controls must be >= 1");
  if (o.threads < 0) throw PlanningError("threads must be >= 0 (0: all cores)");
  if (!(o.time_limit > 0)) throw PlanningError("the time limit must be > 0 s");
  std::shared_ptr<PlanningSpace> space = PlanningSpace::create(scene, o.seed);
  const oc::SpaceInformationPtr& si = space->space_information();
  const Model& m = space->model();
  if (o.sampling == ControlSampling::batched) {
    PlanningSpace* ps = space.get();
    const int k = o.batch_controls, threads = o.threads;
    si->setDirectedControlSamplerAllocator([ps, k, threads](const oc::SpaceInformation* s) {
      return std::make_shared<BatchedDirectedControlSampler>(s, ps->shared_from_this(), k, threads);
    });
  }
  auto pdef = std::make_shared<ob::ProblemDefinition>(si);
  const State start = initial_state(m);
  ob::State* s0 = si->allocState();
  space->to_ompl(start, Status::solved, s0);
  pdef->addStartState(s0);
  si->freeState(s0);
  pdef->setGoal(std::make_shared<PlanGoal>(space));
  // Any plan that reaches the goal is good enough: SST, which would otherwise spend the rest of
  // the time shortening its first solution, stops there as RRT and KPIECE do.
  auto objective = std::make_shared<ob::PathLengthOptimizationObjective>(si);
  objective->setCostThreshold(ob::Cost(std::numeric_limits<double>::infinity()));
  pdef->setOptimizationObjective(objective);

  ob::PlannerPtr planner = make_planner(o.planner, si, *space, o.goal_bias);
  planner->setProblemDefinition(pdef);
  planner->setup();
  std::atomic<long>& count = space->propagations();
  const long limit = o.max_propagations;
  ob::PlannerTerminationCondition ptc = ob::plannerOrTerminationCondition(
      ob::timedPlannerTerminationCondition(o.time_limit),
      ob::PlannerTerminationCondition([&count, limit] { return limit > 0 && count.load() >= limit; }));
  const auto t0 = std::chrono::steady_clock::now();
  const ob::PlannerStatus status = planner->solve(ptc);
  PlanResult result;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  result.propagations = count.load();
  result.planner = planner->getName();
  result.solved = status == ob::PlannerStatus::EXACT_SOLUTION;
  result.final_state = start;
  result.goal_distance = std::numeric_limits<double>::infinity();
  if (!pdef->hasSolution()) return result;
  const auto path = std::static_pointer_cast<oc::PathControl>(pdef->getSolutionPath());
  result.goal_distance = pdef->getSolutionDifference();
  if (result.solved) result.goal_distance = 0.0;
  result.controls = static_cast<int>(path->getControlCount());
  for (std::size_t i = 0; i < path->getControlCount(); ++i) {
    const long steps = std::lround(path->getControlDuration(static_cast<unsigned int>(i)) / m.step.h);
    const double* u = path->getControl(static_cast<unsigned int>(i))->as<oc::RealVectorControlSpace::ControlType>()->values;
    for (long l = 0; l < steps; ++l) result.commands.insert(result.commands.end(), u, u + m.n_a);
    result.steps += static_cast<int>(steps);
  }
  space->from_ompl(path->getState(static_cast<unsigned int>(path->getStateCount() - 1)), result.final_state);
  return result;
}

}  // namespace qs::planning
