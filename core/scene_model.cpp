// The scene reader's model: the formulation and its parameters (each formulation reads
// its own, quasistep/core/formulation_table.hpp), the time step, loads and commands,
// and the schedules loads and commands follow.

#include "scene_compiler.hpp"

#include "quasistep/core/formulation_table.hpp"
#include "quasistep/core/json_node.hpp"

#include <string>
#include <vector>

namespace qs {

using json_input::json_quote;
using json_input::Node;

Schedule SceneCompiler::read_schedule(const Node& n) {
  if (n.raw().is_number()) return Schedule::constant(n.number());
  n.expect_object({"breaks", "values", "terms"});
  std::vector<double> breaks, values;
  if (auto b = n.get("breaks")) {
    const size_t k = b->array();
    for (size_t i = 0; i < k; ++i) {
      breaks.push_back(b->item(i).number());
      if (i > 0 && !(breaks[i] > breaks[i - 1])) b->item(i).fail("breaks must be strictly increasing");
    }
  }
  if (auto v = n.get("values")) {
    const size_t k = v->array(1);
    for (size_t i = 0; i < k; ++i) values.push_back(v->item(i).number());
    if (values.size() != breaks.size() + 1)
      v->fail("must have one more entry than breaks (" + std::to_string(breaks.size() + 1) + "), has " +
              std::to_string(values.size()));
  } else {
    if (!breaks.empty()) n.at("values");  // throws "missing"
    values = {0.0};
  }
  std::vector<Schedule::Term> terms;
  if (auto t = n.get("terms")) {
    const size_t k = t->array();
    for (size_t i = 0; i < k; ++i) {
      const Node term = t->item(i);
      term.expect_object({"wave", "amplitude", "frequency", "phase"});
      Schedule::Term s;
      s.wave = term.at("wave").choice<Schedule::Wave>({{"sin", Schedule::Wave::sin}, {"cos", Schedule::Wave::cos}});
      s.amplitude = term.at("amplitude").number();
      s.frequency = term.at("frequency").number();
      if (auto p = term.get("phase")) s.phase = p->number();
      terms.push_back(s);
    }
  }
  return Schedule(std::move(breaks), std::move(values), std::move(terms));
}

void SceneCompiler::read_model(const Node& n) {
  if (!n.raw().is_object()) n.fail("must be an object");
  const Node f = n.at("formulation");
  {
    const std::string name = f.string();
    std::string known;
    const FormulationInfo* chosen = nullptr;
    for (const FormulationInfo& info : formulation_table()) {
      if (name == info.name) chosen = &info;
      known += (known.empty() ? "" : ", ") + std::string(info.name);
    }
    if (!chosen) f.fail(json_input::json_quote(name) + " is not one of: " + known);
    m_.formulation = chosen->id;
  }
  if (!formulation_applies(m_.formulation, m_.world.type))
    f.fail("\"" + std::string(to_string(m_.formulation)) + "\" does not apply in a " +
           std::string(to_string(m_.world.type)) + " world");
  // Each formulation reads its own parameters (quasistep/core/formulation_table.hpp).
  formulation_info(m_.formulation).read_params(n, m_);
}

void SceneCompiler::read_step(const Node& n) {
  n.expect_object({"h", "steps"});
  m_.step.h = n.at("h").positive();
  m_.step.steps = n.at("steps").integer(0);
}

void SceneCompiler::read_loads(const Node& list) {
  const size_t k = list.array();
  if (k > 0 && m_.world.type == WorldType::tabletop)
    list.fail("the tabletop models take no loads: their contact impulses are scaled by the unknown k of Halm & Posa 2018, "
              "eq. (10)");
  for (size_t i = 0; i < k; ++i) {
    const Node n = list.item(i);
    n.expect_object({"body", "force", "torque", "point", "frame"});
    Load l;
    const Node body = n.at("body");
    l.body = body_index(body, false);
    if (m_.bodies[l.body].kind == BodyKind::fixed) body.fail("a load on a fixed body has no effect");
    l.point = m_.bodies[l.body].com;
    if (auto f = n.get("force")) {
      if (f->array() != 2) f->fail("must have 2 components (x, y), each a number or a schedule");
      l.force = {read_schedule(f->item(0)), read_schedule(f->item(1))};
    }
    if (auto t = n.get("torque")) l.torque = read_schedule(*t);
    if (auto p = n.get("point")) l.point = p->vec2();
    if (auto fr = n.get("frame")) l.body_frame = fr->choice<bool>({{"world", false}, {"body", true}});
    m_.loads.push_back(std::move(l));
  }
}

void SceneCompiler::read_commands(const Node& n) {
  if (!n.raw().is_object()) n.fail("must be an object mapping joint names to commands");
  for (const auto& item : n.raw().items()) {
    const Node c = n.child(item.key());
    if (item.key() == "note") {
      c.string();
      continue;
    }
    const auto found = joint_by_name_.find(item.key());
    const int j = found == joint_by_name_.end() ? -1 : found->second;
    if (j < 0) {
      for (const Dof& d : m_.dofs)
        if (d.name == item.key()) c.fail("not an actuated joint (an unactuated DOF of a free body cannot be commanded)");
      // "body.theta" of a free body without that DOF, or a body's own name: a locked DOF
      // or a body moves only through its DOFs, never by command.
      const std::string& key = item.key();
      const size_t dot = key.rfind('.');
      const int body = find_body(dot == std::string::npos ? key : key.substr(0, dot));
      if (body >= 0 && dot != std::string::npos && m_.bodies[body].kind == BodyKind::free)
        c.fail(json_quote(key.substr(dot + 1)) + " is a locked DOF of free body \"" + m_.bodies[body].name +
               "\" (not in its \"dofs\"): it cannot move, so it cannot be commanded");
      if (body >= 0)
        c.fail("names a body, not a joint: only velocity- or effort-controlled joints take commands");
      c.fail("no joint named " + json_quote(key));
    }
    Joint& joint = m_.joints[j];
    c.expect_object({"velocity", "effort"});
    const char* want = joint.control == Control::velocity ? "velocity" : "effort";
    const char* other = joint.control == Control::velocity ? "effort" : "velocity";
    if (c.has(other))
      c.child(other).fail("joint \"" + joint.name + "\" is " + want + "-controlled; give \"" + want + "\"");
    joint.command = read_schedule(c.at(want));
  }
}

}  // namespace qs
