// The halm_posa_lcp and perfect_velocity_lcp sections of a scene's "model"
// (docs/scene-format.md).
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <ostream>
#include <sstream>
#include <string>

#include "quasistep/core/formulations/halm_posa_lcp/halm_posa_lcp.hpp"
#include "quasistep/core/formulations/halm_posa_lcp/perfect_velocity_lcp.hpp"
#include "quasistep/core/limit_surface.hpp"
#include "quasistep/core/scene.hpp"
#include "quasistep/core/scene_reading.hpp"
#include "quasistep/kernels/unit_scale.hpp"

namespace qs {

double halm_posa_lcp_unit(const HalmPosaParams& p) {
  if (!p.limit_surface_A) return 1.0;
  return unit_power(std::max((*p.limit_surface_A)(0, 0), (*p.limit_surface_A)(1, 1)));
}

namespace {

/// Halm & Posa 2018 move exactly one object in x, y and theta on the support; its limit
/// surface is model.A or computed from the support.
void check_tabletop_object(const json_input::Node& model, Model& m, HalmPosaParams& p) {
  int object = -1;
  for (size_t b = 0; b < m.bodies.size(); ++b) {
    if (m.bodies[b].kind != BodyKind::free) continue;
    if (object >= 0)
      model.child("formulation").fail("the tabletop models move exactly one object; bodies \"" +
                                      m.bodies[object].name + "\" and \"" + m.bodies[b].name + "\" are both free");
    object = static_cast<int>(b);
  }
  if (object < 0) model.child("formulation").fail("the tabletop models need one free body (the object)");
  const Body& o = m.bodies[object];
  if (o.dof[0] < 0 || o.dof[1] < 0 || o.dof[2] < 0)
    throw SceneError("bodies[" + std::to_string(object) + "].dofs",
                     "the tabletop models move the object in x, y and theta; all three are required");
  // Halm & Posa 2018 commands every manipulator DOF by velocity (eq. (15)); an effort joint
  // would be an unknown the LCP of eqs. (31)-(38) has no row for.
  for (size_t j = 0; j < m.joints.size(); ++j)
    if (m.joints[j].control == Control::effort)
      throw SceneError("joints[" + std::to_string(j) + "].control",
                       "the tabletop models command every joint by velocity (Halm & Posa 2018, eq. (15)); joint \"" +
                           m.joints[j].name + "\" is effort-controlled");
  if (!p.limit_surface_A && !(m.world.support_friction > 0))
    model.fail("needs the limit surface: give model.A, or world.support_friction > 0 to compute it");
  // Bodies and shapes are read before the model section, so the support patch is known.
  if (!p.limit_surface_A) {
    p.limit_surface_A = limit_surface_from_support(m, object, m.world.support_friction, m.world.gravity).A;
    p.limit_surface_computed = true;
  }
}

/// hp: Halm-Posa (A, B, c, relinearize); otherwise perfect velocity (A, relinearize).
void read_tabletop_params(const json_input::Node& n, Model& m, bool hp) {
  HalmPosaParams& p = m.params.emplace<HalmPosaParams>();
  if (hp) n.expect_object({"formulation", "A", "B", "c", "relinearize"});
  else n.expect_object({"formulation", "A", "relinearize"});
  if (auto a = n.get("A")) p.limit_surface_A = Eigen::Matrix3d(read_spd(*a, 3));
  if (auto r = n.get("relinearize")) p.relinearize_iterations = r->integer(0);
  if (hp) {
    // B is n_a x n_a: checked before it is allocated (the scene's size limit).
    const double b_bytes = static_cast<double>(m.n_a) * m.n_a * sizeof(double);
    if (b_bytes > static_cast<double>(kMaxWorldBytes))
      n.fail("the gain matrix B of " + std::to_string(m.n_a) + " velocity-controlled joints would need " +
             gib_text(b_bytes) + ", more than the limit of " + gib_text(static_cast<double>(kMaxWorldBytes)) +
             " per world");
    if (auto c = n.get("c")) p.feedback_scale_c = c->positive();
    if (auto b = n.get("B")) {
      if (b->raw().is_number()) p.gain_B = Eigen::MatrixXd::Identity(m.n_a, m.n_a) * b->positive();
      else p.gain_B = read_spd(*b, m.n_a);
    } else {
      p.gain_B = Eigen::MatrixXd::Identity(m.n_a, m.n_a);
    }
  }
  check_tabletop_object(n, m, p);
}

}  // namespace

void read_halm_posa_lcp_params(const json_input::Node& n, Model& m) { read_tabletop_params(n, m, true); }

void read_perfect_velocity_lcp_params(const json_input::Node& n, Model& m) { read_tabletop_params(n, m, false); }

// Halm & Posa 2018: the object's motion comes from the limit surface A and the gains; A is
// computed once from the scene's mass (or given), so a sampled mass changes nothing.
std::string halm_posa_lcp_inert_parameter(const Model&, const ParameterRef& r) {
  if (r.kind != ParameterRef::Kind::body_mass) return {};
  return "halm_posa_lcp takes the object's resistance from the limit surface A, fixed when the model is "
         "built; a sampled mass would change nothing";
}

// Perfect velocity tracking on a table: mass scales every force and no motion.
std::string perfect_velocity_lcp_inert_parameter(const Model&, const ParameterRef& r) {
  if (r.kind != ParameterRef::Kind::body_mass) return {};
  return "under perfect_velocity_lcp the mass only rescales the contact forces, never the motion";
}

// Halm & Posa 2018: the support friction enters only the limit surface A, computed once when the
// model is built (not at all when A is given): a per-world value would change nothing.
std::string tabletop_fixed_world_parameter(const Model& m, std::string_view path) {
  if (path != "world.support_friction") return {};
  const HalmPosaParams& p = formulation_params<HalmPosaParams>(m);
  return p.limit_surface_A && !p.limit_surface_computed
             ? "the model's limit surface A is given, so the support friction is never used"
             : "the support friction only sets the limit surface A, computed once when the model is built: one "
               "value per study";
}

void halm_posa_scene_gains(const Model& m, double& model_gain, std::vector<double>&) {
  model_gain = formulation_params_or_default<HalmPosaParams>(m).feedback_scale_c;
}

// The object's limit surface is computed from its mass and support patch when the model is
// built (Halm & Posa 2018, sec. 3 with the support's pressure), once for the whole batch.
// Only the object's (the free body's) mass and size enter it: a finger's size may vary.
std::string tabletop_batch_fixed_parameter(const Model& m, const ParameterRef& r) {
  using K = ParameterRef::Kind;
  if ((r.kind != K::body_mass && r.kind != K::body_scale) || m.bodies[static_cast<std::size_t>(r.index)].kind != BodyKind::free)
    return {};
  if (formulation_params<HalmPosaParams>(m).limit_surface_computed)
    return "the tabletop limit surface is computed from the object's mass and shape when the scene is loaded, "
           "so varying them per world would need one limit surface per world (not supported yet)";
  if (r.kind == K::body_scale)
    return "scaling the tabletop object would change its support patch and limit surface (not supported yet)";
  return {};
}

void tabletop_describe(const Model& m, std::ostream& out) {
  const HalmPosaParams& p = formulation_params<HalmPosaParams>(m);
  if (!p.limit_surface_A) return;
  // Where Ã came from matters: a computed one has physical units (docs/steppers.md).
  const Eigen::Matrix3d& A = *p.limit_surface_A;
  const auto six_digits = [](double v) {
    std::ostringstream o;
    o << std::setprecision(6) << v;
    return o.str();
  };
  out << "  limit     A (body frame) = [";
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) out << six_digits(A(i, j)) << (j < 2 ? ", " : i < 2 ? "; " : "], ");
  out << (p.limit_surface_computed ? "computed from mass, support friction and shape" : "given (model.A)") << "\n";
}

}  // namespace qs
