// The scene reader's study sections: per-world overrides, uncertain parameters and the
// success criterion, and the parameter paths they name (resolve_parameter).

#include "scene_compiler.hpp"

#include "quasistep/core/formulation_table.hpp"
#include "quasistep/core/json_node.hpp"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace qs {

using json_input::json_quote;
using json_input::Node;

namespace {

/// The per-world gains the formulation table lists, for an error message: the model gains
/// as "c (halm_posa_lcp) or stiffness (pang_tedrake_miqp)", or the formulations with a joint gain.
std::string gain_owners(bool joint) {
  std::string out;
  for (const FormulationInfo& f : formulation_table()) {
    const std::string_view gain = joint ? f.joint_gain : f.model_gain;
    if (gain.empty()) continue;
    if (!out.empty()) out += " or ";
    out += joint ? std::string(f.name) : std::string(gain) + " (" + std::string(f.name) + ")";
  }
  return out;
}

}  // namespace

SceneCompiler::Range SceneCompiler::range_of(const Model& m, const ParameterRef& p) {
  switch (p.kind) {
    case ParameterRef::Kind::body_mass:
      return m.bodies[p.index].kind == BodyKind::free ? Range::positive : Range::nonnegative;
    case ParameterRef::Kind::body_scale:
    case ParameterRef::Kind::model_gain:
    case ParameterRef::Kind::joint_gain: return Range::positive;
    case ParameterRef::Kind::pair_friction: return Range::nonnegative;
    default: return Range::any;
  }
}

double SceneCompiler::check_value(const Model& m, const ParameterRef& p, const Node& n) {
  switch (range_of(m, p)) {
    case Range::positive: return n.positive();
    case Range::nonnegative: return n.nonnegative();
    default: return n.number();
  }
}

std::vector<std::vector<std::pair<ParameterRef, double>>> SceneCompiler::read_overrides(const Model& m, const Node& n) {
  n.expect_object({"worlds"});
  const Node worlds = n.at("worlds");
  const size_t k = worlds.array(1);
  std::vector<std::vector<std::pair<ParameterRef, double>>> out(k);
  for (size_t i = 0; i < k; ++i) {
    const Node w = worlds.item(i);
    if (!w.raw().is_object()) w.fail("must be an object mapping parameter paths to values");
    for (const auto& item : w.raw().items()) {
      const Node v = w.child(item.key());
      if (item.key() == "note") {
        v.string();
        continue;
      }
      const ParameterRef p = resolve_parameter(m, item.key(), v.path());
      for (const auto& [earlier, value] : out[i])
        if (earlier.same_as(p)) v.fail("names the same parameter as \"" + earlier.path + "\"");
      out[i].emplace_back(p, check_value(m, p, v));
    }
  }
  return out;
}

std::vector<UncertainParameter> SceneCompiler::read_uncertainty(const Model& m, const Node& n) {
  n.expect_object({"parameters"});
  const Node list = n.at("parameters");
  const size_t k = list.array(1);
  std::vector<UncertainParameter> out;
  for (size_t i = 0; i < k; ++i) {
    const Node u = list.item(i);
    if (!u.raw().is_object()) u.fail("must be an object");
    const Node dist = u.at("distribution");
    UncertainParameter up;
    up.distribution.kind = dist.choice<Distribution::Kind>({{"uniform", Distribution::Kind::uniform},
                                                            {"normal", Distribution::Kind::normal},
                                                            {"truncated_normal", Distribution::Kind::truncated_normal}});
    Distribution& d = up.distribution;
    switch (d.kind) {
      case Distribution::Kind::uniform: u.expect_object({"parameter", "distribution", "low", "high"}); break;
      case Distribution::Kind::normal: u.expect_object({"parameter", "distribution", "mean", "stddev"}); break;
      case Distribution::Kind::truncated_normal:
        u.expect_object({"parameter", "distribution", "mean", "stddev", "low", "high"});
        break;
    }
    const Node param = u.at("parameter");
    up.parameter = resolve_parameter(m, param.string(), param.path());
    for (const UncertainParameter& earlier : out)
      if (earlier.parameter.same_as(up.parameter))
        param.fail("names the same parameter as \"" + earlier.parameter.path + "\" (listed twice)");
    if (d.kind != Distribution::Kind::uniform) {
      d.mean = u.at("mean").number();
      d.stddev = u.at("stddev").positive();
    }
    if (d.kind != Distribution::Kind::normal) {
      d.low = u.at("low").number();
      d.high = u.at("high").number();
      if (!(d.high > d.low)) u.child("high").fail("must be > low");
    }
    // Every sample must be a value the parameter may take.
    const Range range = range_of(m, up.parameter);
    if (range != Range::any) {
      const char* bound = range == Range::positive ? "> 0" : ">= 0";
      if (d.kind == Distribution::Kind::normal)
        u.child("distribution").fail("a normal distribution can reach any value, but this parameter must be " +
                                     std::string(bound) + "; use truncated_normal");
      const bool ok = range == Range::positive ? d.low > 0 : d.low >= 0;
      if (!ok) u.child("low").fail(std::string("must be ") + bound + " for this parameter");
    }
    out.push_back(up);
  }
  return out;
}

SuccessCriterion SceneCompiler::read_success(const Model& m, const Node& n) {
  if (!n.raw().is_object()) n.fail("must be an object");
  SuccessCriterion s;
  s.kind = n.at("type").choice<SuccessCriterion::Kind>(
      {{"lifted", SuccessCriterion::Kind::lifted}, {"goal_region", SuccessCriterion::Kind::goal_region}});
  if (s.kind == SuccessCriterion::Kind::lifted) n.expect_object({"type", "body", "height", "hold_until"});
  else n.expect_object({"type", "body", "center", "tolerance"});
  const Node body = n.at("body");
  s.body = m.find_body(body.string());
  if (s.body < 0) body.fail("no body named " + json_quote(body.string()));
  if (m.bodies[s.body].kind != BodyKind::free) body.fail("must be a free body (the object)");
  if (s.kind == SuccessCriterion::Kind::lifted) {
    if (m.world.type != WorldType::vertical) n.child("type").fail("\"lifted\" needs a vertical world");
    s.height = n.at("height").positive();
    s.hold_until = n.at("hold_until").nonnegative();
  } else {
    s.center = n.at("center").fixed_vector<3>();
    const Node tol = n.at("tolerance");
    s.tolerance = tol.fixed_vector<3>();
    for (double t : s.tolerance)
      if (!(t > 0)) tol.fail("every entry must be > 0");
  }
  return s;
}

ParameterRef resolve_parameter(const Model& m, std::string_view path, const std::string& where) {
  using K = ParameterRef::Kind;
  auto fail = [&](const std::string& why) -> ParameterRef {
    throw SceneError(where, "parameter " + json_quote(path) + ": " + why);
  };
  std::vector<std::string> parts;
  {
    std::string cur;
    for (char c : path) {
      if (c == '.') {
        parts.push_back(cur);
        cur.clear();
      } else {
        cur += c;
      }
    }
    parts.push_back(cur);
  }
  ParameterRef ref;
  ref.path = std::string(path);
  if (parts.size() >= 3 && parts[0] == "bodies") {
    const int b = m.find_body(parts[1]);
    if (b < 0) return fail("no body named " + json_quote(parts[1]));
    const Body& body = m.bodies[b];
    ref.index = b;
    if (parts.size() == 3 && parts[2] == "mass") {
      if (body.kind == BodyKind::fixed) return fail("a fixed body has no mass");
      ref.kind = K::body_mass;
      return ref;
    }
    if (parts.size() == 3 && parts[2] == "scale") {
      if (body.shapes.empty()) return fail("the body has no shapes to scale");
      ref.kind = K::body_scale;
      return ref;
    }
    if (parts.size() == 4 && parts[2] == "pose") {
      if (body.kind == BodyKind::linked) return fail("a linked body's pose follows its joint; vary the joint position");
      if (parts[3] == "x") ref.kind = K::body_pose_x;
      else if (parts[3] == "y") ref.kind = K::body_pose_y;
      else if (parts[3] == "theta") ref.kind = K::body_pose_theta;
      else return fail("pose has components x, y and theta");
      return ref;
    }
    return fail("a body parameter is mass, scale, or pose.x|y|theta");
  }
  if (parts.size() == 3 && parts[0] == "joints") {
    ref.index = m.find_joint(parts[1]);
    if (ref.index < 0) return fail("no joint named " + json_quote(parts[1]));
    const FormulationInfo& f = formulation_info(m.formulation);
    if (parts[2] != "position") {
      // A formulation's gain per velocity-controlled joint (anitescu_qp's impedance K_a).
      if (f.joint_gain.empty() || parts[2] != f.joint_gain) {
        if (parts[2] == "stiffness") return fail("a joint's stiffness is a parameter of " + gain_owners(true) + " only");
        return fail("a joint parameter is position or stiffness");
      }
      const Joint& j = m.joints[ref.index];
      if (j.control != Control::velocity)
        return fail("the joint is effort-controlled: it has no impedance " + std::string(f.joint_gain));
      ref.kind = K::joint_gain;
      ref.index = j.dof - m.n_u;
      return ref;
    }
    ref.kind = K::joint_position;
    return ref;
  }
  if (parts.size() == 2 && parts[0] == "model") {
    const FormulationInfo& f = formulation_info(m.formulation);
    if (!f.model_gain.empty() && parts[1] == f.model_gain) {
      ref.kind = K::model_gain;
      return ref;
    }
    return fail("a model parameter is " + gain_owners(false) + "; per joint: joints.NAME.stiffness of " +
                gain_owners(true));
  }
  if (parts.size() == 2 && parts[0] == "world" && parts[1] == "support_friction") {
    // A formulation whose model uses the support friction once, when it is built, says why.
    if (const auto fixed = formulation_info(m.formulation).fixed_world_parameter) {
      const std::string why = fixed(m, "world.support_friction");
      if (!why.empty()) return fail(why);
    }
    return fail("the support friction cannot vary per world (only a tabletop or body_on_plane world has one, "
                "and neither varies it per world yet)");
  }
  if (parts.size() == 3 && parts[0] == "pairs") {
    const auto slash = parts[1].find('/');
    if (slash == std::string::npos) return fail("a pair is named \"A/B\" after its two bodies");
    const std::string name_a = parts[1].substr(0, slash), name_b = parts[1].substr(slash + 1);
    const int a = m.find_body(name_a);
    const int b = m.find_body(name_b);
    if (a < 0) return fail("no body named " + json_quote(name_a));
    if (b < 0) return fail("no body named " + json_quote(name_b));
    for (size_t k = 0; k < m.pairs.size(); ++k) {
      const ContactPair& p = m.pairs[k];
      if ((p.body_a == a && p.body_b == b) || (p.body_a == b && p.body_b == a)) {
        if (ref.pairs.empty()) {
          ref.index = p.body_a;
          ref.other = p.body_b;
        }
        ref.pairs.push_back(static_cast<int>(k));
      }
    }
    if (ref.pairs.empty()) return fail("no contact pair between those bodies");
    if (parts[2] != "friction") return fail("a pair parameter is friction");
    ref.kind = K::pair_friction;
    return ref;
  }
  return fail("unknown parameter (expected bodies.NAME.mass|scale|pose.x|pose.y|pose.theta, "
              "joints.NAME.position|stiffness, pairs.A/B.friction, model.stiffness or model.c)");
}

}  // namespace qs
