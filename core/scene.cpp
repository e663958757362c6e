// The scene reader: parse_scene and load_scene_file (docs/scene-format.md). A SceneCompiler
// reads one document; this file holds the order in which it reads the sections (the
// sections themselves: core/scene_compiler.hpp) and the helpers the formulations'
// parameter readers share (quasistep/core/scene_reading.hpp).

#include "quasistep/core/scene.hpp"

#include "quasistep/core/json_node.hpp"
#include "quasistep/core/scene_body_on_plane.hpp"
#include "scene_compiler.hpp"
#include "quasistep/core/scene_reading.hpp"

#include <Eigen/Cholesky>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <new>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace qs {

using json_input::json;
using json_input::json_quote;
using json_input::Node;

SceneCompiler::SceneCompiler(const json& doc) : root_(doc, "") {}

Scene SceneCompiler::run() {
  check_format();
  root_.expect_object({"format", "name", "description", "world", "model", "step", "bodies", "joints", "contacts",
                       "loads", "commands", "overrides", "uncertainty", "success", "plan"});
  if (auto n = root_.get("name")) m_.name = n->string();
  if (auto d = root_.get("description")) description_ = d->string();
  m_.world = read_world(root_.at("world"));
  // ---- body_on_plane (Xie & Chakraborty 2021, core/scene_body_on_plane.cpp): one 3D body on the plane z = 0 ----
  if (m_.world.type == WorldType::body_on_plane) {
    read_body_on_plane(root_, m_, read_schedule);
    read_model(root_.at("model"));
    if (auto s = root_.get("step")) read_step(*s);
    for (const char* key : {"overrides", "uncertainty", "success", "plan"})
      if (auto o = root_.get(key)) o->fail("not supported in a body_on_plane world yet");
    Scene scene;
    scene.model = std::make_shared<Model>(std::move(m_));
    scene.description = std::move(description_);
    return scene;
  }
  // ---- end body_on_plane ----
  read_bodies(root_.at("bodies"));
  if (auto j = root_.get("joints")) read_joints(*j);
  check_linked_bodies();
  number_dofs();
  order_bodies();
  read_model(root_.at("model"));
  if (auto s = root_.get("step")) read_step(*s);
  read_contacts(root_.get("contacts"));
  if (auto l = root_.get("loads")) read_loads(*l);
  if (auto c = root_.get("commands")) read_commands(*c);

  Scene scene;
  auto model = std::make_shared<Model>(std::move(m_));
  if (auto o = root_.get("overrides")) scene.overrides = read_overrides(*model, *o);
  if (auto u = root_.get("uncertainty")) scene.uncertainty = read_uncertainty(*model, *u);
  if (auto s = root_.get("success")) scene.success = read_success(*model, *s);
  if (auto p = root_.get("plan")) scene.plan = read_plan(*model, *p);
  scene.model = std::move(model);
  scene.description = std::move(description_);
  return scene;
}

void SceneCompiler::check_format() {
  if (!root_.raw().is_object()) root_.fail("a scene must be a JSON object");
  const Node f = root_.at("format");
  if (!f.raw().is_number_integer()) f.fail("must be the integer " + std::to_string(kSceneFormatVersion));
  if (f.raw() != kSceneFormatVersion)
    f.fail("format version " + f.raw().dump() + " is not known to this reader (it reads format " +
           std::to_string(kSceneFormatVersion) + ")");
}

World SceneCompiler::read_world(const Node& n) {
  n.expect_object({"type", "gravity", "support_friction"});
  World w;
  w.type = n.at("type").choice<WorldType>({{"vertical", WorldType::vertical},
                                           {"tabletop", WorldType::tabletop},
                                           {"body_on_plane", WorldType::body_on_plane}});
  if (auto g = n.get("gravity")) w.gravity = g->nonnegative();
  if (auto mu = n.get("support_friction")) {
    // body_on_plane (Xie & Chakraborty 2021): mu of the body on the plane z = 0.
    if (w.type == WorldType::vertical) mu->fail("only a tabletop or body_on_plane world has a support");
    w.support_friction = mu->nonnegative();
  }
  return w;
}

std::string fnv1a_hex(std::string_view bytes) {
  std::uint64_t h = 14695981039346656037ull;  // FNV-1a 64 offset basis 0xcbf29ce484222325
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  static const char* digits = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) out[i] = digits[h & 15];
  return out;
}

Scene parse_scene(std::string_view text, const std::string& source) {
  const json doc = json_input::parse_document(text);
  Scene scene;
  try {
    scene = SceneCompiler(doc).run();
  } catch (const std::bad_alloc&) {
    // Sizes that scale with bodies and slots are checked before allocating; this is the
    // last line of defence (e.g. a machine with less free memory than the limit).
    throw SceneError("", "out of memory while compiling the scene");
  } catch (const std::length_error&) {
    throw SceneError("", "the scene is too large to hold in memory");
  }
  scene.source = source;
  scene.hash = fnv1a_hex(text);
  return scene;
}

Scene load_scene_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw SceneError("", "cannot read scene file " + json_quote(path) + " (it is a directory)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SceneError("", "cannot read scene file " + json_quote(path));
  std::string text;
  try {
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } catch (const std::bad_alloc&) {
    text = std::string();  // free what was read before the message is made
    throw SceneError("", "cannot read scene file " + json_quote(path) + ": out of memory");
  }
  if (in.bad()) throw SceneError("", "error while reading scene file " + json_quote(path));
  return parse_scene(text, path);
}

// ---- helpers shared with the formulations' parameter readers (quasistep/core/scene_reading.hpp) ----

Eigen::MatrixXd read_spd(const json_input::Node& n, int size) {
  Eigen::MatrixXd a = n.matrix(size, size);
  if (!a.isApprox(a.transpose(), 1e-12) && (a - a.transpose()).norm() > 1e-12 * (1 + a.norm()))
    n.fail("must be symmetric");
  Eigen::LLT<Eigen::MatrixXd> llt(a);
  if (llt.info() != Eigen::Success) n.fail("must be positive definite");
  return a;
}

std::string gib_text(double bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

}  // namespace qs
