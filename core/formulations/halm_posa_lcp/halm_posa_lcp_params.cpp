// The halm_posa_lcp and perfect_velocity_lcp sections of a scene's "model"
// (docs/scene-format.md).
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <memory>
#include <numbers>
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

/// model.support: the object's support pressure distribution (docs/scene-format.md), total
/// friction weight mu_s m g. Sets p.support and p.limit_surface_A to the ellipsoid through
/// the distribution's axis ends, where the sequence of LCPs starts (Halm & Posa 2018, sec. 3.4).
void read_support(const json_input::Node& n, const Model& m, int object, HalmPosaParams& p) {
  if (!n.raw().is_object()) n.fail("must be an object");
  const std::string form = n.at("type").string();
  const double mass = m.bodies[object].mass, mu = m.world.support_friction, g = m.world.gravity;
  const std::string whose = "the support of body \"" + m.bodies[object].name + "\"";
  if (!(mu > 0)) n.fail(whose + " needs world.support_friction > 0 (its friction weights are mu_s p_i a_i)");
  if (!(g > 0)) n.fail(whose + " needs world.gravity > 0 (it presses the object on the support)");
  if (!(mass > 0)) n.fail(whose + " needs the object's mass > 0 (it presses the object on the support)");
  auto s = std::make_shared<SupportPressure>();
  if (form == "uniform") {
    n.expect_object({"type", "subdivisions", "max_programs"});
    const int sub = n.get("subdivisions") ? n.child("subdivisions").integer(1) : 8;
    if (sub > 64) n.child("subdivisions").fail("must be <= 64");
    try {
      *s = support_pressure_uniform(m, object, mu, g, sub);
    } catch (const SceneError& e) {
      // limit_surface_from_support's reason, at this field (its own path is model.A).
      std::string why = e.what();
      if (const auto colon = why.find(": "); colon != std::string::npos) why = why.substr(colon + 2);
      if (const auto give = why.rfind("; give model.A"); give != std::string::npos) why.erase(give);
      n.child("type").fail(why);
    }
  } else if (form == "ring") {
    n.expect_object({"type", "radius", "center", "points", "max_programs"});
    const double r = n.at("radius").positive();
    Vec2<double> c{0.0, 0.0};
    if (auto cn = n.get("center")) {
      if (cn->array(2) != 2) cn->fail("must be [x, y]");
      c = {cn->item(0).number(), cn->item(1).number()};
    }
    const int k = n.get("points") ? n.child("points").integer(3) : 36;
    if (k > 100000) n.child("points").fail("must be <= 100000");
    for (int i = 0; i < k; ++i) {
      const double a = 2.0 * std::numbers::pi * i / k;
      s->points.push_back({c.x + r * std::cos(a), c.y + r * std::sin(a)});
      s->weights.push_back(mu * mass * g / k);
    }
  } else if (form == "points") {
    n.expect_object({"type", "points", "weights", "max_programs"});
    const json_input::Node pts = n.at("points");
    const size_t k = pts.array(2);
    if (k > 100000) pts.fail("must have at most 100000 entries");
    for (size_t i = 0; i < k; ++i) {
      const json_input::Node pt = pts.item(i);
      if (pt.array(2) != 2) pt.fail("must be [x, y]");
      s->points.push_back({pt.item(0).number(), pt.item(1).number()});
    }
    double total = 0;
    if (auto wn = n.get("weights")) {
      if (wn->array() != k)
        wn->fail("must have one entry per point (" + std::to_string(k) + "), has " + std::to_string(wn->raw().size()));
      for (size_t i = 0; i < k; ++i) total += s->weights.emplace_back(wn->item(i).positive());
    } else {
      s->weights.assign(k, 1.0);
      total = static_cast<double>(k);
    }
    if (!std::isfinite(total)) n.child("weights").fail("must sum to a finite number");
    // Relative weights: the pressures carry the object's weight, mu_s m g in all.
    for (double& w : s->weights) w = (w / total) * (mu * mass * g);  // no overflow for tiny weights
  } else {
    n.child("type").fail("must be one of: uniform, ring, points (got " + json_input::json_quote(form) + ")");
  }
  if (auto mp = n.get("max_programs")) {
    p.support_max_programs = mp->integer(2);
    if (p.support_max_programs > 1000) mp->fail("must be <= 1000");
  }
  const SupportAxes ax = support_axes(*s);
  // A distribution at one point resists no rotation about it: no limit surface (m_max = 0).
  if (!(ax.m_max > 1e-12 * ax.f_max * (1.0 + std::hypot(ax.pressure_center.x, ax.pressure_center.y))))
    n.fail(whose + " is concentrated at one point and would resist no rotation; spread its points");
  // The ellipsoid through the axis ends (limit_surface.hpp): the first program's Ã.
  const double cx = ax.pressure_center.x, cy = ax.pressure_center.y;
  Eigen::Matrix3d T;
  T << 1, 0, 0, 0, 1, 0, cy, -cx, 1;
  const Eigen::Vector3d d(1 / (ax.f_max * ax.f_max), 1 / (ax.f_max * ax.f_max), 1 / (ax.m_max * ax.m_max));
  // A support so large (or small) that the ellipsoid's entries leave the doubles' normal range
  // has no usable first program: refused here rather than failing in every step.
  if (!(std::isnormal(d[0]) && std::isnormal(d[2])))
    n.fail(whose + " is too large or too small for its limit surface to be represented (axis ends f_max = " +
           std::to_string(ax.f_max) + " N, m_max = " + std::to_string(ax.m_max) + " N m); rescale the scene");
  p.limit_surface_A = Eigen::Matrix3d(T.transpose() * d.asDiagonal() * T);
  p.limit_surface_computed = true;
  p.support = std::move(s);
  p.support_form = form == "uniform" ? "uniform" : form == "ring" ? "ring" : "points";
}

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
  if (auto sp = model.get("support")) {
    read_support(*sp, m, object, p);
    return;
  }
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
  if (hp) n.expect_object({"formulation", "A", "B", "c", "relinearize", "support"});
  else n.expect_object({"formulation", "A", "relinearize", "support"});
  if (n.has("A") && n.has("support"))
    n.child("support").fail("give model.A (an ellipsoid) or model.support (the exact limit surface), not both");
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
  if (p.support) {
    // The exact surface of model.support: which distribution, its axis ends, the program limit.
    const SupportAxes ax = support_axes(*p.support);
    out << "  limit     exact, of model.support (" << p.support_form << ", " << p.support->points.size()
        << " points; f_max = " << six_digits(ax.f_max) << " N, m_max = " << six_digits(ax.m_max)
        << " N m about (" << six_digits(ax.pressure_center.x) << ", " << six_digits(ax.pressure_center.y)
        << ")): a sequence of LCPs per step, each with A = the Hessian of H at the previous solution (Halm & Posa "
           "2018, sec. 3.4), at most "
        << p.support_max_programs << "; the first with the ellipsoid through those axis ends,\n";
  }
  out << "  limit     A (body frame) = [";
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) out << six_digits(A(i, j)) << (j < 2 ? ", " : i < 2 ? "; " : "], ");
  out << (p.support                    ? "the first program's"
           : p.limit_surface_computed ? "computed from mass, support friction and shape"
                                      : "given (model.A)")
      << "\n";
}

}  // namespace qs
