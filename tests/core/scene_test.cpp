// Tests of the scene reader (core/scene.cpp): every error path names the JSON path of the
// offending field and the cause in one line; valid scenes compile into the documented Model.
#include "quasistep/core/scene.hpp"

#include "quasistep/core/formulations/anitescu_qp/anitescu_qp_params.hpp"
#include "quasistep/core/formulations/ecp_ncp/ecp_ncp_params.hpp"
#include "quasistep/core/formulations/halm_posa_lcp/halm_posa_lcp_params.hpp"
#include "quasistep/core/formulations/pang_tedrake_miqp/pang_tedrake_miqp_params.hpp"
#include "quasistep/core/limit_surface.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <cstdio>
#include <sys/resource.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <numbers>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/instrumented.hpp"

namespace qs::scene_test {
namespace {

using json = nlohmann::json;
using json_pointer = json::json_pointer;

// ---- fixtures ---------------------------------------------------------------------------

/// A valid vertical scene. Bodies: [0] ground (fixed half-plane), [1] cylinder (free disk,
/// DOFs x and y), [2] carriage (linked, no shape), [3] finger (linked segment).
/// Joints: [0] y_g world -> carriage (axis y), [1] x_l carriage -> finger (axis x).
json base_scene() {
  return json::parse(R"({
    "format": 1,
    "name": "base",
    "world": {"type": "vertical", "gravity": 9.81},
    "model": {"formulation": "trinkle_lcp"},
    "step": {"h": 0.01, "steps": 10},
    "bodies": [
      {"name": "ground", "kind": "fixed", "shapes": [{"type": "half_plane", "normal": [0, 1]}]},
      {"name": "cylinder", "kind": "free", "dofs": ["x", "y"], "mass": 1.0, "pose": [0, 0.05, 0],
       "shapes": [{"type": "disk", "radius": 0.05}]},
      {"name": "carriage", "kind": "linked"},
      {"name": "finger", "kind": "linked", "shapes": [{"type": "segment", "a": [0, 0], "b": [0, 0.1]}]}
    ],
    "joints": [
      {"name": "y_g", "type": "prismatic", "parent": "world", "child": "carriage", "axis": [0, 1], "position": 0.01},
      {"name": "x_l", "type": "prismatic", "parent": "carriage", "child": "finger", "axis": [1, 0], "position": -0.07}
    ],
    "contacts": {"friction": 0.5},
    "commands": {"x_l": {"velocity": 0.1}}
  })");
}

/// A valid tabletop scene for the Halm & Posa 2018 models. Bodies: [0] object (free box, x y theta),
/// [1] slider (linked, no shape), [2] pusher (linked disk). Joints px, py (both velocity).
json tabletop_scene() {
  return json::parse(R"({
    "format": 1,
    "world": {"type": "tabletop", "gravity": 9.81, "support_friction": 0.5},
    "model": {"formulation": "halm_posa_lcp"},
    "step": {"h": 0.1, "steps": 5},
    "bodies": [
      {"name": "object", "kind": "free", "mass": 1.0, "pose": [0, 0, 0],
       "shapes": [{"type": "box", "size": [0.1, 0.1]}]},
      {"name": "slider", "kind": "linked"},
      {"name": "pusher", "kind": "linked", "shapes": [{"type": "disk", "radius": 0.01}]}
    ],
    "joints": [
      {"name": "px", "type": "prismatic", "parent": "world", "child": "slider", "axis": [1, 0], "position": -0.1},
      {"name": "py", "type": "prismatic", "parent": "slider", "child": "pusher", "axis": [0, 1]}
    ],
    "contacts": {"friction": 0.3},
    "commands": {"px": {"velocity": 0.05}}
  })");
}

json_pointer ptr(const std::string& p) { return json_pointer(p); }

/// Parse `text`; succeed iff it throws a SceneError at exactly `path` whose what() is
/// "path: message" on one line and contains `fragment`.
::testing::AssertionResult FailsText(const std::string& text, const std::string& path, const std::string& fragment) {
  try {
    (void)parse_scene(text);
  } catch (const SceneError& e) {
    const std::string what = e.what();
    if (e.path() != path)
      return ::testing::AssertionFailure() << "path is \"" << e.path() << "\", expected \"" << path
                                           << "\"; what(): " << what;
    if (what.find(fragment) == std::string::npos)
      return ::testing::AssertionFailure() << "what() lacks \"" << fragment << "\": " << what;
    if (!path.empty() && what.rfind(path + ": ", 0) != 0)
      return ::testing::AssertionFailure() << "what() does not start with \"" << path << ": \": " << what;
    if (what.find('\n') != std::string::npos)
      return ::testing::AssertionFailure() << "what() is not one line: " << what;
    return ::testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw a non-SceneError exception: " << e.what();
  }
  return ::testing::AssertionFailure() << "parsed without error (expected \"" << path << ": ..." << fragment
                                       << "...\")";
}

::testing::AssertionResult Fails(const json& scene, const std::string& path, const std::string& fragment) {
  return FailsText(scene.dump(), path, fragment);
}

Scene parse(const json& scene) { return parse_scene(scene.dump()); }

/// The base scene with `value` set at JSON pointer `p`.
json with(const std::string& p, json value, json scene = base_scene()) {
  scene[ptr(p)] = std::move(value);
  return scene;
}
json without(const std::string& p, json scene = base_scene()) {
  const json_pointer jp = ptr(p);
  scene[jp.parent_pointer()].erase(jp.back());
  return scene;
}

// ---- fixtures are valid -----------------------------------------------------------------

TEST(SceneFixtures, BaseAndTabletopScenesParse) {
  EXPECT_NO_THROW(parse(base_scene()));
  EXPECT_NO_THROW(parse(tabletop_scene()));
}

// ---- the document -----------------------------------------------------------------------

TEST(SceneErrors, MalformedJsonNamesTheLine) {
  const std::string text = "{\n  \"format\": 1,\n  \"name\": ,\n  \"bodies\": []\n}\n";
  EXPECT_TRUE(FailsText(text, "", "malformed JSON"));
  EXPECT_TRUE(FailsText(text, "", "line 3"));
  EXPECT_TRUE(FailsText("", "", "malformed JSON"));
  EXPECT_TRUE(FailsText("{\"format\": 1", "", "malformed JSON"));
  // nlohmann's "[json.exception.parse_error.101] " prefix is stripped.
  try {
    (void)parse_scene(text);
    FAIL() << "no error";
  } catch (const SceneError& e) {
    EXPECT_EQ(std::string(e.what()).find("json.exception"), std::string::npos) << e.what();
  }
}

TEST(SceneErrors, DuplicateKey) {
  // Top level and deep inside: nlohmann keeps the last silently, the reader refuses.
  EXPECT_TRUE(FailsText(R"({"format": 1, "format": 1})", "", "duplicate key \"format\""));
  std::string text = base_scene().dump();
  const std::string from = "\"mass\":1.0,";
  ASSERT_NE(text.find(from), std::string::npos);
  text.replace(text.find(from), from.size(), "\"mass\":1.0,\"mass\":2.0,");
  // The path is that of the object holding the key twice.
  EXPECT_TRUE(FailsText(text, "bodies[1]", "malformed JSON: duplicate key \"mass\""));
}

TEST(SceneErrors, DuplicateKeyNamesTheObjectAtAnyDepth) {
  // In arrays of arrays and objects, and after other keys that repeat only across objects.
  EXPECT_TRUE(FailsText(R"({"format": 1, "a": [[0], [1, {"x": 1}, {"x": 2, "y": [{"z": 0, "z": 1}]}]]})",
                        "a[1][2].y[0]", "malformed JSON: duplicate key \"z\""));
  EXPECT_TRUE(FailsText(R"({"b": {"c": {"d": 1}, "e": {"d": 1, "f": 2, "d": 3}}})", "b.e", "duplicate key \"d\""));
  // The first duplicate in the text is the one named.
  EXPECT_TRUE(FailsText(R"({"p": {"k": 1, "k": 2}, "q": 1, "q": 2})", "p", "duplicate key \"k\""));
  // A syntax error anywhere in the text comes first, as when the whole text is checked.
  EXPECT_TRUE(FailsText(R"({"p": {"k": 1, "k": 2}, "q": })", "", "syntax error"));
  // Empty keys, and keys that need escapes, stay on one line in the message and the path.
  EXPECT_TRUE(FailsText(R"({"": 1, "": 2})", "", "duplicate key \"\""));
  EXPECT_TRUE(FailsText("{\"o\\nk\": {\"t\\tk\": 1, \"t\\tk\": 2}}", "o\\nk", "duplicate key \"t\\tk\""));
}

TEST(SceneErrors, ParsedDocumentsEqualNlohmannsOwn) {
  // parse_document builds the document itself (for the duplicate check, in linear time);
  // it must equal what nlohmann's parser builds, value types included.
  std::vector<std::string> texts = {R"({"i": -3, "u": 18446744073709551615, "f": 1.5e-300, "s": "\u00e9\n",
                                        "b": [true, false, null], "o": {}, "a": [], "n": [[[]], [{}]]})",
                                    "[1, 2.0, \"x\"]", "42", "\"text\"", "null"};
  for (const auto& entry : std::filesystem::directory_iterator(std::string(QUASISTEP_SOURCE_DIR) + "/examples")) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    texts.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  ASSERT_GT(texts.size(), 10u);
  for (const std::string& t : texts) {
    const json mine = json_input::parse_document(t), theirs = json::parse(t);
    EXPECT_EQ(mine, theirs) << t.substr(0, 200);
    EXPECT_EQ(mine.dump(), theirs.dump()) << t.substr(0, 200);  // also integer vs. float, signed vs. unsigned
  }
}

TEST(SceneErrors, UserTextInMessagesStaysOnOneLine) {
  // A key with a newline: the path shows it as the JSON escape \n.
  json s = base_scene();
  s["a\nb"] = 1;
  EXPECT_TRUE(Fails(s, "a\\nb", "unknown field"));
  s = with("/bodies/1/shapes/0/rad\r\nius", 1);
  EXPECT_TRUE(Fails(s, "bodies[1].shapes[0].rad\\r\\nius", "unknown field"));
  // Names and other strings are quoted as JSON strings.
  EXPECT_TRUE(Fails(with("/bodies/1/name", "cyl\r\ninder"), "bodies[1].name", "\"cyl\\r\\ninder\" may contain only"));
  EXPECT_TRUE(Fails(with("/world/type", "vert\tical"), "world.type", "\"vert\\tical\" is not one of"));
  EXPECT_TRUE(Fails(with("/contacts/exclude", json::parse(R"([["ground", "no\nbody"]])")), "contacts.exclude[0][1]",
                    "no body named \"no\\nbody\""));
  EXPECT_TRUE(Fails(with("/commands/x\x01y", json::object()), "commands.x\\u0001y", "no joint named \"x\\u0001y\""));
  EXPECT_TRUE(Fails(with("/overrides", json::parse(R"({"worlds": [{"bodies.cyl\ninder.mass": 2}]})")),
                    "overrides.worlds[0].bodies.cyl\\ninder.mass", "parameter \"bodies.cyl\\ninder.mass\""));
  // A missing file whose name holds a newline.
  EXPECT_THROW(
      {
        try {
          (void)load_scene_file("/nonexistent\nfolder/scene.json");
        } catch (const SceneError& e) {
          EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
          EXPECT_NE(std::string(e.what()).find("\"/nonexistent\\nfolder/scene.json\""), std::string::npos) << e.what();
          throw;
        }
      },
      SceneError);
}

TEST(SceneErrors, SameKeyInDifferentObjectsIsNotADuplicate) {
  // Every body has "name" and "kind"; that is not a duplicate.
  EXPECT_NO_THROW(parse_scene(base_scene().dump()));
}

TEST(SceneErrors, HugeNumberIsRejectedAsASceneError) {
  // nlohmann rejects 1e999 while parsing (out_of_range 406 "number overflow"), not with a
  // parse_error; the reader must still report it as a one-line SceneError.
  std::string text = with("/bodies/1/mass", 12345.5).dump();
  const std::string from = "12345.5";
  ASSERT_NE(text.find(from), std::string::npos);
  for (const char* huge : {"1e999", "-1e999"}) {
    std::string t = text;
    t.replace(t.find(from), from.size(), huge);
    try {
      (void)parse_scene(t);
      ADD_FAILURE() << huge << " accepted";
    } catch (const SceneError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
      EXPECT_NE(what.find(huge), std::string::npos) << "the message should quote the number: " << what;
    } catch (const std::exception& e) {
      ADD_FAILURE() << huge << ": threw a non-SceneError exception: " << e.what();
    }
  }
}

TEST(SceneErrors, TopLevelMustBeAnObject) {
  EXPECT_TRUE(FailsText("[1, 2]", "", "a scene must be a JSON object"));
  EXPECT_TRUE(FailsText("1", "", "a scene must be a JSON object"));
}

TEST(SceneErrors, Format) {
  EXPECT_TRUE(Fails(without("/format"), "format", "missing (required)"));
  EXPECT_TRUE(Fails(with("/format", 2), "format", "format version 2 is not known to this reader"));
  EXPECT_TRUE(Fails(with("/format", 0), "format", "is not known"));
  EXPECT_TRUE(Fails(with("/format", "1"), "format", "must be the integer 1"));
  EXPECT_TRUE(Fails(with("/format", 1.0), "format", "must be the integer 1"));
}

TEST(SceneErrors, UnknownFields) {
  EXPECT_TRUE(Fails(with("/colour", "red"), "colour", "unknown field (expected one of: format, name,"));
  EXPECT_TRUE(Fails(with("/bodies/1/shapes/0/radiuss", 0.05), "bodies[1].shapes[0].radiuss", "unknown field"));
  EXPECT_TRUE(Fails(with("/world/gravityy", 1), "world.gravityy", "unknown field"));
  EXPECT_TRUE(Fails(with("/step/dt", 1), "step.dt", "unknown field (expected one of: h, steps, note)"));
  EXPECT_TRUE(Fails(with("/joints/0/limit", 1), "joints[0].limit", "unknown field"));
  EXPECT_TRUE(Fails(with("/contacts/mu", 1), "contacts.mu", "unknown field"));
  // Fields of another kind of body, shape or formulation are unknown too.
  EXPECT_TRUE(Fails(with("/bodies/0/mass", 1.0), "bodies[0].mass", "unknown field"));
  EXPECT_TRUE(Fails(with("/bodies/2/pose", json::array({0, 0, 0})), "bodies[2].pose", "unknown field"));
  EXPECT_TRUE(Fails(with("/bodies/3/shapes/0/radius", 0.01), "bodies[3].shapes[0].radius", "unknown field"));
  EXPECT_TRUE(Fails(with("/model/stiffness", 100), "model.stiffness", "unknown field"));
}

TEST(SceneErrors, NoteMustBeAString) {
  EXPECT_NO_THROW(parse(with("/bodies/1/note", "a comment")));
  EXPECT_NO_THROW(parse(with("/commands/note", "a comment")));
  EXPECT_TRUE(Fails(with("/bodies/1/note", 5), "bodies[1].note", "must be a string"));
  EXPECT_TRUE(Fails(with("/commands/note", 5), "commands.note", "must be a string"));
}

TEST(SceneErrors, WrongTypes) {
  EXPECT_TRUE(Fails(with("/bodies/1/mass", "1"), "bodies[1].mass", "must be a number"));
  EXPECT_TRUE(Fails(with("/step/h", "0.01"), "step.h", "must be a number"));
  EXPECT_TRUE(Fails(with("/bodies/1/shapes/0/radius", true), "bodies[1].shapes[0].radius", "must be a number"));
  EXPECT_TRUE(Fails(with("/bodies/1/name", 5), "bodies[1].name", "must be a string"));
  EXPECT_TRUE(Fails(with("/name", 5), "name", "must be a string"));
  EXPECT_TRUE(Fails(with("/description", 5), "description", "must be a string"));
  EXPECT_TRUE(Fails(with("/world", 5), "world", "must be an object"));
  EXPECT_TRUE(Fails(with("/model", "trinkle_lcp"), "model", "must be an object"));
  EXPECT_TRUE(Fails(with("/success", 5), "success", "must be an object"));
  EXPECT_TRUE(Fails(with("/bodies", json::object()), "bodies", "must be an array"));
  EXPECT_TRUE(Fails(with("/bodies/1", 5), "bodies[1]", "must be an object"));
  EXPECT_TRUE(Fails(with("/bodies/1/shapes", 5), "bodies[1].shapes", "must be an array"));
  EXPECT_TRUE(Fails(with("/bodies/1/shapes/0", 5), "bodies[1].shapes[0]", "must be an object"));
  EXPECT_TRUE(Fails(with("/joints", 5), "joints", "must be an array"));
  EXPECT_TRUE(Fails(with("/bodies/1/pose", json::array({0, 0})), "bodies[1].pose", "must be an array of 3 numbers"));
  EXPECT_TRUE(Fails(with("/bodies/1/pose/2", "0"), "bodies[1].pose[2]", "must be a number"));
  EXPECT_TRUE(Fails(with("/joints/0/axis", 1), "joints[0].axis", "must be an array of 2 numbers"));
  EXPECT_TRUE(Fails(with("/step/steps", 1.5), "step.steps", "must be an integer"));
  EXPECT_TRUE(Fails(with("/step/steps", "10"), "step.steps", "must be an integer"));
}

TEST(SceneErrors, MissingRequiredFields) {
  EXPECT_TRUE(Fails(without("/world"), "world", "missing (required)"));
  EXPECT_TRUE(Fails(without("/world/type"), "world.type", "missing (required)"));
  EXPECT_TRUE(Fails(without("/bodies"), "bodies", "missing (required)"));
  EXPECT_TRUE(Fails(without("/model"), "model", "missing (required)"));
  EXPECT_TRUE(Fails(without("/model/formulation"), "model.formulation", "missing (required)"));
  EXPECT_TRUE(Fails(without("/bodies/1/name"), "bodies[1].name", "missing (required)"));
  EXPECT_TRUE(Fails(without("/bodies/1/kind"), "bodies[1].kind", "missing (required)"));
  EXPECT_TRUE(Fails(without("/bodies/1/mass"), "bodies[1].mass", "missing (required)"));
  EXPECT_TRUE(Fails(without("/bodies/1/shapes/0/type"), "bodies[1].shapes[0].type", "missing (required)"));
  EXPECT_TRUE(Fails(without("/bodies/1/shapes/0/radius"), "bodies[1].shapes[0].radius", "missing (required)"));
  EXPECT_TRUE(Fails(without("/bodies/3/shapes/0/b"), "bodies[3].shapes[0].b", "missing (required)"));
  EXPECT_TRUE(Fails(without("/joints/0/parent"), "joints[0].parent", "missing (required)"));
  EXPECT_TRUE(Fails(without("/joints/0/child"), "joints[0].child", "missing (required)"));
  EXPECT_TRUE(Fails(without("/joints/0/type"), "joints[0].type", "missing (required)"));
  EXPECT_TRUE(Fails(without("/step/h"), "step.h", "missing (required)"));
}

TEST(SceneErrors, Choices) {
  EXPECT_TRUE(Fails(with("/bodies/1/kind", "floating"), "bodies[1].kind",
                    "\"floating\" is not one of: fixed, free, linked"));
  EXPECT_TRUE(Fails(with("/bodies/1/shapes/0/type", "circle"), "bodies[1].shapes[0].type", "\"circle\" is not one of"));
  EXPECT_TRUE(Fails(with("/world/type", "space"), "world.type", "\"space\" is not one of"));
  EXPECT_TRUE(Fails(with("/model/formulation", "magic"), "model.formulation", "\"magic\" is not one of"));
  EXPECT_TRUE(Fails(with("/joints/0/type", "ball"), "joints[0].type", "\"ball\" is not one of: prismatic, revolute"));
  EXPECT_TRUE(Fails(with("/joints/0/control", "position"), "joints[0].control", "is not one of: velocity, effort"));
  EXPECT_TRUE(Fails(with("/bodies/1/dofs", json::array({"x", "z"})), "bodies[1].dofs[1]", "\"z\" is not one of"));
}

// ---- world, model and step --------------------------------------------------------------

TEST(SceneErrors, World) {
  // A planar scene declared body_on_plane (Xie & Chakraborty 2021) fails at its first planar section.
  EXPECT_TRUE(Fails(with("/world/type", "body_on_plane"), "joints", "a body_on_plane world has no joints"));
  EXPECT_TRUE(Fails(with("/world/support_friction", 0.5), "world.support_friction",
                    "only a tabletop or body_on_plane world has a support"));
  EXPECT_TRUE(Fails(with("/world/gravity", -9.81), "world.gravity", "must be >= 0"));
  EXPECT_TRUE(Fails(with("/world/support_friction", -0.1, tabletop_scene()), "world.support_friction", "must be >= 0"));
}

TEST(SceneErrors, FormulationInTheWrongWorld) {
  EXPECT_TRUE(Fails(with("/model/formulation", "trinkle_lcp", tabletop_scene()), "model.formulation",
                    "\"trinkle_lcp\" does not apply in a tabletop world"));
  EXPECT_TRUE(Fails(with("/model/formulation", "halm_posa_lcp"), "model.formulation",
                    "\"halm_posa_lcp\" does not apply in a vertical world"));
  EXPECT_TRUE(Fails(with("/model/formulation", "perfect_velocity_lcp"), "model.formulation",
                    "does not apply in a vertical world"));
  EXPECT_TRUE(Fails(with("/model/formulation", "ecp_ncp"), "model.formulation",
                    "\"ecp_ncp\" does not apply in a vertical world"));
}

TEST(SceneErrors, FormulationParameters) {
  json s = with("/model", json{{"formulation", "pang_tedrake_miqp"}});
  EXPECT_TRUE(Fails(s, "model.stiffness", "missing (required)"));
  EXPECT_TRUE(Fails(with("/model/stiffness", 0, s), "model.stiffness", "must be > 0"));
  EXPECT_NO_THROW(parse(with("/model/stiffness", 1000, s)));
  // The search's round width: 8 by default, an integer in 1 .. 64.
  s = with("/model/stiffness", 1000, s);
  const auto round_width = [](const json& scene) {
    return formulation_params<PangTedrakeMiqpParams>(*parse(scene).model).search_round_width;
  };
  EXPECT_EQ(round_width(s), 8);
  EXPECT_EQ(round_width(with("/model/round_width", 1, s)), 1);
  EXPECT_EQ(round_width(with("/model/round_width", 64, s)), 64);
  EXPECT_TRUE(Fails(with("/model/round_width", 0, s), "model.round_width", "must be >= 1"));
  EXPECT_TRUE(Fails(with("/model/round_width", -2, s), "model.round_width", "must be >= 1"));
  EXPECT_TRUE(Fails(with("/model/round_width", 65, s), "model.round_width", "must be <= 64"));
  EXPECT_TRUE(Fails(with("/model/round_width", 1.5, s), "model.round_width", "must be an integer"));
  EXPECT_TRUE(Fails(with("/model/round_width", "8", s), "model.round_width", "must be an integer"));
  s = with("/model", json{{"formulation", "anitescu_qp"}, {"mode", "dynamic"}, {"stiffness", 1000}});
  EXPECT_TRUE(Fails(with("/model/round_width", 1, s), "model.round_width", "unknown field"));
  EXPECT_TRUE(Fails(s, "model.mode", "is not one of: quasistatic, quasi_dynamic"));
  const Scene qd = parse(with("/model/mode", "quasi_dynamic", s));
  EXPECT_TRUE(formulation_params<AnitescuQpParams>(*qd.model).quasi_dynamic);
  EXPECT_TRUE(Fails(with("/model", json{{"formulation", "ucp"}, {"A", 1}}), "model.A", "unknown field"));
}

TEST(SceneErrors, AnitescuStiffness) {
  // Pang & Tedrake's Anitescu slides: K_a, one positive stiffness per velocity-controlled joint (base scene: y_g, x_l).
  const json s = with("/model", json{{"formulation", "anitescu_qp"}});
  EXPECT_TRUE(Fails(s, "model.stiffness", "missing (required by anitescu_qp"));
  EXPECT_TRUE(Fails(with("/model/stiffness", 0, s), "model.stiffness", "must be > 0"));
  EXPECT_TRUE(Fails(with("/model/stiffness", -5, s), "model.stiffness", "must be > 0"));
  EXPECT_TRUE(Fails(with("/model/stiffness", "stiff", s), "model.stiffness", "must be a number or an array of 2 numbers"));
  EXPECT_TRUE(Fails(with("/model/stiffness", json::array({1000}), s), "model.stiffness",
                    "must be a number or an array of 2 numbers (one per velocity-controlled joint"));
  EXPECT_TRUE(Fails(with("/model/stiffness", json::array({1000, 0}), s), "model.stiffness[1]", "must be > 0"));
  const Scene one = parse(with("/model/stiffness", 500, s));
  ASSERT_TRUE(formulation_params<AnitescuQpParams>(*one.model).stiffness_Ka.has_value());
  EXPECT_EQ(*formulation_params<AnitescuQpParams>(*one.model).stiffness_Ka, Eigen::Vector2d(500, 500));
  const Scene each = parse(with("/model/stiffness", json::array({100, 200}), s));
  EXPECT_EQ(*formulation_params<AnitescuQpParams>(*each.model).stiffness_Ka, Eigen::Vector2d(100, 200));
  EXPECT_EQ(initial_state(*each.model).memory.head(2), Eigen::Vector2d(0.01, -0.07));  // q̄_a(0) = q_a(0)
  // No actuated joint: no stiffness needed.
  json no_robot = s;
  no_robot["joints"] = json::array();
  no_robot["bodies"].erase(3);
  no_robot["bodies"].erase(2);
  no_robot.erase("commands");
  const Scene free_only = parse(no_robot);
  EXPECT_EQ(free_only.model->n_a, 0);
  // A quasi-dynamic body that rotates needs its inertia.
  json rot = with("/model", json{{"formulation", "anitescu_qp"}, {"mode", "quasi_dynamic"}, {"stiffness", 1}});
  rot["bodies"][1]["dofs"] = json::array({"x", "y", "theta"});
  EXPECT_TRUE(Fails(rot, "bodies[1].inertia", "missing (required by anitescu_qp in quasi_dynamic mode"));
  rot["bodies"][1]["inertia"] = 1e-3;
  EXPECT_NO_THROW(parse(rot));
}

TEST(SceneErrors, TabletopObject) {
  // Two free objects.
  json two = tabletop_scene();
  two["bodies"].push_back(
      {{"name", "other"}, {"kind", "free"}, {"mass", 1.0}, {"shapes", json::array({{{"type", "disk"}, {"radius", 0.02}}})}});
  EXPECT_TRUE(Fails(two, "model.formulation", "bodies \"object\" and \"other\" are both free"));
  two["model"]["formulation"] = "perfect_velocity_lcp";
  EXPECT_TRUE(Fails(two, "model.formulation", "exactly one object"));
  // No free body.
  json none = tabletop_scene();
  none["bodies"][0]["kind"] = "fixed";
  none["bodies"][0].erase("mass");
  EXPECT_TRUE(Fails(none, "model.formulation", "need one free body"));
  // The object must move in x, y and theta.
  EXPECT_TRUE(Fails(with("/bodies/0/dofs", json::array({"x", "y"}), tabletop_scene()), "bodies[0].dofs",
                    "all three are required"));
}

TEST(SceneErrors, TabletopLimitSurface) {
  // halm_posa_lcp without A and without support_friction.
  EXPECT_TRUE(Fails(without("/world/support_friction", tabletop_scene()), "model",
                    "needs the limit surface: give model.A, or world.support_friction > 0"));
  EXPECT_TRUE(Fails(with("/world/support_friction", 0, tabletop_scene()), "model", "needs the limit surface"));
  // With A it needs no support friction.
  const json with_a = with("/model/A", json::parse("[[1,0,0],[0,1,0],[0,0,2]]"),
                           without("/world/support_friction", tabletop_scene()));
  const Scene s = parse(with_a);
  ASSERT_TRUE(formulation_params<HalmPosaParams>(*s.model).limit_surface_A.has_value());
  EXPECT_EQ((*formulation_params<HalmPosaParams>(*s.model).limit_surface_A)(2, 2), 2.0);
}

TEST(SceneErrors, MatrixA) {
  const json t = tabletop_scene();
  EXPECT_TRUE(Fails(with("/model/A", json::parse("[[1,0.5,0],[0,1,0],[0,0,1]]"), t), "model.A", "must be symmetric"));
  EXPECT_TRUE(Fails(with("/model/A", json::parse("[[1,0,0],[0,-1,0],[0,0,1]]"), t), "model.A",
                    "must be positive definite"));
  EXPECT_TRUE(Fails(with("/model/A", json::parse("[[1,0,0],[0,0,0],[0,0,1]]"), t), "model.A",
                    "must be positive definite"));
  EXPECT_TRUE(Fails(with("/model/A", json::parse("[[1,0],[0,1]]"), t), "model.A", "must be a 3 x 3 matrix"));
  EXPECT_TRUE(Fails(with("/model/A", 1, t), "model.A", "must be a 3 x 3 matrix"));
  EXPECT_TRUE(Fails(with("/model/A", json::parse("[[1,0,0],[0,1],[0,0,1]]"), t), "model.A[1]",
                    "must be a row of 3 numbers (matrix is 3 x 3)"));
  EXPECT_TRUE(Fails(with("/model/A", json::parse("[[1,0,0],[0,1,\"0\"],[0,0,1]]"), t), "model.A[1][2]",
                    "must be a number"));
}

TEST(SceneErrors, HalmPosaGainAndScale) {
  const json t = tabletop_scene();  // n_a = 2
  EXPECT_TRUE(Fails(with("/model/B", json::parse("[[1,0,0],[0,1,0],[0,0,1]]"), t), "model.B", "must be a 2 x 2 matrix"));
  EXPECT_TRUE(Fails(with("/model/B", json::parse("[[1,2],[2,1]]"), t), "model.B", "must be positive definite"));
  EXPECT_TRUE(Fails(with("/model/B", 0, t), "model.B", "must be > 0"));
  EXPECT_TRUE(Fails(with("/model/c", 0, t), "model.c", "must be > 0"));
  EXPECT_TRUE(Fails(with("/model/c", -1, t), "model.c", "must be > 0"));
  EXPECT_TRUE(Fails(with("/model/relinearize", -1, t), "model.relinearize", "must be >= 0"));
  EXPECT_TRUE(Fails(with("/model/relinearize", 1.5, t), "model.relinearize", "must be an integer"));
  EXPECT_TRUE(Fails(with("/model/relinearize", 2000000000, t), "model.relinearize", "must be <= 1000000000"));
  // perfect_velocity_lcp has no B or c.
  json pv = with("/model/formulation", "perfect_velocity_lcp", t);
  EXPECT_NO_THROW(parse(pv));
  EXPECT_TRUE(Fails(with("/model/B", 1, pv), "model.B", "unknown field"));
  EXPECT_TRUE(Fails(with("/model/c", 1, pv), "model.c", "unknown field"));
  // Valid values.
  const Scene s = parse(with("/model/B", 2.0, with("/model/c", 0.5, with("/model/relinearize", 3, t))));
  const HalmPosaParams& p = formulation_params<HalmPosaParams>(*s.model);
  ASSERT_TRUE(p.gain_B.has_value());
  EXPECT_EQ(p.gain_B->rows(), 2);
  EXPECT_EQ((*p.gain_B)(1, 1), 2.0);
  EXPECT_EQ((*p.gain_B)(0, 1), 0.0);
  EXPECT_EQ(p.feedback_scale_c, 0.5);
  EXPECT_EQ(p.relinearize_iterations, 3);
  // Default B is the identity.
  const Scene d = parse(t);
  ASSERT_TRUE(formulation_params<HalmPosaParams>(*d.model).gain_B.has_value());
  EXPECT_TRUE(formulation_params<HalmPosaParams>(*d.model).gain_B->isIdentity());
}

TEST(SceneErrors, Step) {
  EXPECT_TRUE(Fails(with("/step/h", 0), "step.h", "must be > 0"));
  EXPECT_TRUE(Fails(with("/step/h", -0.01), "step.h", "must be > 0"));
  EXPECT_TRUE(Fails(with("/step/steps", -1), "step.steps", "must be >= 0"));
  EXPECT_TRUE(Fails(with("/step/steps", 1000000001), "step.steps", "must be <= 1000000000"));
  EXPECT_TRUE(Fails(with("/step", 0.01), "step", "must be an object"));
  EXPECT_TRUE(Fails(without("/step/steps"), "step.steps", "missing (required)"));
  // Without a step object the scene has no step.
  const Scene s = parse(without("/step"));
  EXPECT_EQ(s.model->step.steps, 0);
  EXPECT_EQ(s.model->step.h, 0.0);
  const Scene t = parse(base_scene());
  EXPECT_EQ(t.model->step.steps, 10);
  EXPECT_EQ(t.model->step.h, 0.01);
}

TEST(SceneErrors, IntegerBeyondInt64IsTooLargeNotNegative) {
  // 2^64 - 1 is stored by nlohmann as an unsigned integer; it is far above the limit.
  std::string text = with("/step/steps", 424242).dump();
  text.replace(text.find("424242"), 6, "18446744073709551615");
  EXPECT_TRUE(FailsText(text, "step.steps", "must be <= 1000000000"));
}

// ---- bodies -----------------------------------------------------------------------------

TEST(SceneErrors, BodyList) {
  EXPECT_TRUE(Fails(with("/bodies", json::array()), "bodies", "must have at least 1 entries"));
}

TEST(SceneErrors, BodyNames) {
  EXPECT_TRUE(Fails(with("/bodies/3/name", "cylinder"), "bodies[3].name", "duplicate body name \"cylinder\""));
  EXPECT_TRUE(Fails(with("/bodies/1/name", "world"), "bodies[1].name", "\"world\" is reserved"));
  EXPECT_TRUE(Fails(with("/bodies/1/name", "note"), "bodies[1].name", "\"note\" is reserved for comments"));
  EXPECT_TRUE(Fails(with("/bodies/1/name", "my cylinder"), "bodies[1].name",
                    "\"my cylinder\" may contain only letters, digits, '_' and '-'"));
  EXPECT_TRUE(Fails(with("/bodies/1/name", "a.b"), "bodies[1].name", "may contain only letters"));
  EXPECT_TRUE(Fails(with("/bodies/1/name", ""), "bodies[1].name", "must not be empty"));
  EXPECT_NO_THROW(parse(with("/bodies/2/name", "Car_riage-2", with("/joints/0/child", "Car_riage-2",
                                                                      with("/joints/1/parent", "Car_riage-2")))));
}

TEST(SceneErrors, Pose3IsReservedFor3DBodies) {
  EXPECT_TRUE(Fails(with("/bodies/1/pose3", json::array({0, 0, 0, 1, 0, 0, 0})), "bodies[1].pose3",
                    "reserved for 3D bodies"));
  // Checked before anything else in the body, on any kind.
  EXPECT_TRUE(Fails(with("/bodies/0/pose3", 5), "bodies[0].pose3", "only the body of a body_on_plane world"));
}

TEST(SceneErrors, BodyMassAndInertia) {
  EXPECT_TRUE(Fails(with("/bodies/1/mass", 0), "bodies[1].mass", "must be > 0"));
  EXPECT_TRUE(Fails(with("/bodies/1/mass", -1.0), "bodies[1].mass", "must be > 0"));
  EXPECT_TRUE(Fails(with("/bodies/1/inertia", 0), "bodies[1].inertia", "must be > 0"));
  EXPECT_TRUE(Fails(with("/bodies/3/mass", -0.1), "bodies[3].mass", "must be >= 0"));
  EXPECT_NO_THROW(parse(with("/bodies/3/mass", 0)));
  EXPECT_TRUE(Fails(with("/bodies/1/com", json::array({0})), "bodies[1].com", "must be an array of 2 numbers"));
}

TEST(SceneErrors, BodyDofs) {
  EXPECT_TRUE(Fails(with("/bodies/1/dofs", json::array({"x", "x"})), "bodies[1].dofs[1]", "repeated DOF"));
  EXPECT_TRUE(Fails(with("/bodies/1/dofs", json::array()), "bodies[1].dofs", "must have at least 1 entries"));
  EXPECT_TRUE(Fails(with("/bodies/1/dofs", "xy"), "bodies[1].dofs", "must be an array"));
}

TEST(SceneErrors, ShapeRadius) {
  EXPECT_TRUE(Fails(with("/bodies/1/shapes/0/radius", 0), "bodies[1].shapes[0].radius", "must be > 0"));
  EXPECT_TRUE(Fails(with("/bodies/1/shapes/0/radius", -0.05), "bodies[1].shapes[0].radius", "must be > 0"));
  const json capsule = {{"type", "capsule"}, {"a", {0, 0}}, {"b", {0, 0.1}}, {"radius", 0.0}};
  EXPECT_TRUE(Fails(with("/bodies/3/shapes/0", capsule), "bodies[3].shapes[0].radius", "must be > 0"));
  EXPECT_TRUE(Fails(with("/bodies/1/shapes/0", {{"type", "point"}, {"radius", 0.01}}), "bodies[1].shapes[0].radius",
                    "unknown field"));
}

TEST(SceneErrors, Segment) {
  EXPECT_TRUE(Fails(with("/bodies/3/shapes/0/b", json::array({0, 0})), "bodies[3].shapes[0].b", "must differ from a"));
  const json capsule = {{"type", "capsule"}, {"a", {0.1, 0.2}}, {"b", {0.1, 0.2}}, {"radius", 0.01}};
  EXPECT_TRUE(Fails(with("/bodies/3/shapes/0", capsule), "bodies[3].shapes[0].b", "must differ from a"));
}

TEST(SceneErrors, Box) {
  const json box = {{"type", "box"}, {"size", {0.1, 0}}};
  EXPECT_TRUE(Fails(with("/bodies/1/shapes/0", box), "bodies[1].shapes[0].size", "both entries must be > 0"));
  EXPECT_TRUE(Fails(with("/bodies/1/shapes/0", {{"type", "box"}, {"size", {-0.1, 0.1}}}), "bodies[1].shapes[0].size",
                    "both entries must be > 0"));
  EXPECT_TRUE(Fails(with("/bodies/1/shapes/0", {{"type", "box"}, {"size", {0.1}}}), "bodies[1].shapes[0].size",
                    "must be an array of 2 numbers"));
}

TEST(SceneErrors, HalfPlane) {
  const json hp = {{"type", "half_plane"}, {"normal", {0, 1}}};
  EXPECT_TRUE(Fails(with("/bodies/1/shapes/0", hp), "bodies[1].shapes[0].type",
                    "a half_plane is only allowed on a fixed body"));
  EXPECT_TRUE(Fails(with("/bodies/3/shapes/0", hp), "bodies[3].shapes[0].type", "only allowed on a fixed body"));
  EXPECT_TRUE(Fails(with("/bodies/0/shapes/0/normal", json::array({0, 0})), "bodies[0].shapes[0].normal",
                    "must be a non-zero vector"));
  EXPECT_TRUE(Fails(without("/bodies/0/shapes/0/normal"), "bodies[0].shapes[0].normal", "missing (required)"));
}

json polygon_on_cylinder(const json& vertices) {
  return with("/bodies/1/shapes/0", {{"type", "polygon"}, {"vertices", vertices}});
}

TEST(SceneErrors, PolygonNotConvex) {
  // A dart (reflex vertex at (0.5, 0.3)).
  EXPECT_TRUE(Fails(polygon_on_cylinder(json::parse("[[0,0],[1,0],[0.5,0.3],[1,1],[0,1]]")),
                    "bodies[1].shapes[0].vertices", "must form a strictly convex polygon"));
  // The same dart in clockwise order.
  EXPECT_TRUE(Fails(polygon_on_cylinder(json::parse("[[0,1],[1,1],[0.5,0.3],[1,0],[0,0]]")),
                    "bodies[1].shapes[0].vertices", "strictly convex"));
}

TEST(SceneErrors, PolygonCollinear) {
  // A vertex on an edge.
  EXPECT_TRUE(Fails(polygon_on_cylinder(json::parse("[[0,0],[1,0],[2,0],[1,1]]")), "bodies[1].shapes[0].vertices",
                    "collinear, repeated, reflex or crossing"));
  // All on one line.
  EXPECT_TRUE(Fails(polygon_on_cylinder(json::parse("[[0,0],[1,0],[2,0]]")), "bodies[1].shapes[0].vertices",
                    "strictly convex"));
  // A repeated vertex.
  EXPECT_TRUE(Fails(polygon_on_cylinder(json::parse("[[0,0],[1,0],[1,0],[1,1]]")), "bodies[1].shapes[0].vertices",
                    "strictly convex"));
}

TEST(SceneErrors, PolygonSelfIntersectingStar) {
  // A pentagram: the vertices of a regular pentagon taken every second one. Every turn is
  // to the left, but the outline winds twice around its center and crosses itself: it is
  // not a convex polygon and must be rejected.
  json v = json::array();
  for (int k : {0, 2, 4, 1, 3}) {
    const double a = std::numbers::pi / 2 + 2 * std::numbers::pi * k / 5;
    v.push_back({std::cos(a), std::sin(a)});
  }
  EXPECT_TRUE(Fails(polygon_on_cylinder(v), "bodies[1].shapes[0].vertices", "strictly convex"));
}

TEST(SceneErrors, PolygonVertexCount) {
  auto regular = [](int n) {
    json v = json::array();
    for (int k = 0; k < n; ++k) v.push_back({std::cos(2 * std::numbers::pi * k / n), std::sin(2 * std::numbers::pi * k / n)});
    return v;
  };
  EXPECT_NO_THROW(parse(polygon_on_cylinder(regular(16))));
  EXPECT_TRUE(Fails(polygon_on_cylinder(regular(17)), "bodies[1].shapes[0].vertices", "at most 16 vertices"));
  EXPECT_TRUE(Fails(polygon_on_cylinder(json::parse("[[0,0],[1,0]]")), "bodies[1].shapes[0].vertices",
                    "must have at least 3 entries"));
  EXPECT_TRUE(Fails(polygon_on_cylinder(json::parse("[[0,0],[1,0],[1]]")), "bodies[1].shapes[0].vertices[2]",
                    "must be an array of 2 numbers"));
}

// ---- joints -----------------------------------------------------------------------------

TEST(SceneErrors, JointNamesMissingBody) {
  EXPECT_TRUE(Fails(with("/joints/0/parent", "nobody"), "joints[0].parent", "no body named \"nobody\""));
  EXPECT_TRUE(Fails(with("/joints/0/child", "nobody"), "joints[0].child", "no body named \"nobody\""));
  EXPECT_TRUE(Fails(with("/joints/0/child", "world"), "joints[0].child", "no body named \"world\""));
}

TEST(SceneErrors, JointChildMustBeLinked) {
  EXPECT_TRUE(Fails(with("/joints/0/child", "cylinder"), "joints[0].child",
                    "body \"cylinder\" is free; a joint's child must be linked"));
  EXPECT_TRUE(Fails(with("/joints/0/child", "ground"), "joints[0].child",
                    "body \"ground\" is fixed; a joint's child must be linked"));
}

TEST(SceneErrors, BodyChildOfTwoJoints) {
  json s = base_scene();
  s["joints"].push_back({{"name", "x_2"}, {"type", "prismatic"}, {"parent", "world"}, {"child", "finger"}});
  EXPECT_TRUE(Fails(s, "joints[2].child", "body \"finger\" is already the child of joint \"x_l\""));
}

TEST(SceneErrors, JointCycle) {
  json s = base_scene();
  s["bodies"].push_back({{"name", "a"}, {"kind", "linked"}});
  s["bodies"].push_back({{"name", "b"}, {"kind", "linked"}});
  s["joints"].push_back({{"name", "j_a"}, {"type", "revolute"}, {"parent", "b"}, {"child", "a"}});
  s["joints"].push_back({{"name", "j_b"}, {"type", "revolute"}, {"parent", "a"}, {"child", "b"}});
  EXPECT_TRUE(Fails(s, "joints[2].parent", "the joints form a cycle through joint \"j_a\""));
}

TEST(SceneErrors, JointConnectingABodyToItself) {
  json s = base_scene();
  s["bodies"].push_back({{"name", "a"}, {"kind", "linked"}});
  s["joints"].push_back({{"name", "j_a"}, {"type", "revolute"}, {"parent", "a"}, {"child", "a"}});
  EXPECT_TRUE(Fails(s, "joints[2].parent", "a joint cannot connect a body to itself"));
}

TEST(SceneErrors, LinkedBodyWithoutJoint) {
  json s = base_scene();
  s["bodies"].push_back({{"name", "loose"}, {"kind", "linked"}});
  EXPECT_TRUE(Fails(s, "bodies[4]", "linked body \"loose\" is not the child of any joint"));
  EXPECT_TRUE(Fails(without("/joints"), "bodies[2]", "linked body \"carriage\" is not the child of any joint"));
}

TEST(SceneErrors, JointHangingFromAFreeBody) {
  EXPECT_TRUE(Fails(with("/joints/1/parent", "cylinder"), "joints[1].parent", "a joint cannot hang from a free body"));
}

TEST(SceneErrors, JointFields) {
  EXPECT_TRUE(Fails(with("/joints/1/name", "y_g"), "joints[1].name", "duplicate joint name \"y_g\""));
  EXPECT_TRUE(Fails(with("/joints/1/name", "x l"), "joints[1].name", "may contain only letters"));
  EXPECT_TRUE(Fails(with("/joints/1/name", "note"), "joints[1].name", "\"note\" is reserved for comments"));
  EXPECT_TRUE(Fails(with("/joints/1/axis", json::array({0, 0})), "joints[1].axis", "must be a non-zero vector"));
  EXPECT_TRUE(Fails(with("/joints/1/type", "revolute"), "joints[1].axis", "only a prismatic joint has an axis"));
  EXPECT_TRUE(Fails(with("/joints/1/origin", json::array({0, 0})), "joints[1].origin", "must be an array of 3 numbers"));
  EXPECT_TRUE(Fails(with("/joints/1/position", "0"), "joints[1].position", "must be a number"));
  // A non-unit axis is normalized.
  const Scene s = parse(with("/joints/1/axis", json::array({3, 4})));
  EXPECT_NEAR(s.model->joints[1].axis.x, 0.6, 1e-15);
  EXPECT_NEAR(s.model->joints[1].axis.y, 0.8, 1e-15);
}

// ---- contacts ---------------------------------------------------------------------------

json explicit_pairs(const json& pairs, json scene = base_scene()) {
  scene["contacts"]["pairs"] = pairs;
  return scene;
}

TEST(SceneErrors, NegativeFriction) {
  EXPECT_TRUE(Fails(with("/contacts/friction", -0.1), "contacts.friction", "must be >= 0"));
  EXPECT_TRUE(Fails(explicit_pairs(json::parse(R"([{"bodies": ["ground", "cylinder"], "friction": -1}])")),
                    "contacts.pairs[0].friction", "must be >= 0"));
  EXPECT_TRUE(Fails(with("/contacts/margin", -0.01), "contacts.margin", "must be >= 0"));
}

TEST(SceneErrors, MissingFriction) {
  // Explicit pair without its own friction and no default.
  EXPECT_TRUE(Fails(explicit_pairs(json::parse(R"([{"bodies": ["ground", "cylinder"]}])"),
                    without("/contacts/friction")),
                    "contacts.pairs[0]", "missing friction (give it here or as contacts.friction)"));
  // Automatic pairs and no default.
  EXPECT_TRUE(Fails(with("/contacts", json::object()), "contacts", "missing friction"));
  // A friction on each pair is enough.
  EXPECT_NO_THROW(parse(explicit_pairs(json::parse(R"([{"bodies": ["ground", "cylinder"], "friction": 0.2}])"),
                                       without("/contacts/friction"))));
}

// Run `body` in a child process (a gtest death-test fork) and expect it to exit with code 0:
// a scene the reader must handle is checked without letting a crash take the whole test
// binary down.
#define EXPECT_RUNS_CLEANLY(body)                 \
  EXPECT_EXIT(                                    \
      {                                           \
        body;                                     \
        std::exit(0);                             \
      },                                          \
      ::testing::ExitedWithCode(0), "")

TEST(SceneErrors, NoContactsSection) {
  // "contacts" is optional (default: automatic pairs). Without it the automatic pairs still
  // need a friction, reported at "contacts". The reader must not index the missing key
  // (nlohmann's const operator[] on a missing key is undefined behaviour and asserts in a
  // build with assertions enabled).
  EXPECT_RUNS_CLEANLY({
    const bool ok = Fails(without("/contacts"), "contacts", "missing friction");
    if (!ok) std::exit(1);
  });
  // Without contacts and with no pair arising (only the ground has shapes), the scene parses.
  EXPECT_RUNS_CLEANLY({
    json s = without("/contacts");
    s["bodies"][1].erase("shapes");
    s["bodies"][3].erase("shapes");
    if (parse(s).model->pairs.size() != 0) std::exit(1);
  });
}

TEST(SceneErrors, ExplicitPairs) {
  EXPECT_TRUE(Fails(explicit_pairs(json::parse(R"([{"bodies": ["ground", "cylinder"]},
                                                   {"bodies": ["cylinder", "ground"]}])")),
                    "contacts.pairs[1].bodies", "pair listed twice"));
  EXPECT_TRUE(Fails(explicit_pairs(json::parse(R"([{"bodies": ["cylinder", "cylinder"]}])")),
                    "contacts.pairs[0].bodies", "a body cannot touch itself"));
  json wall = base_scene();
  wall["bodies"].push_back({{"name", "wall"},
                            {"kind", "fixed"},
                            {"shapes", json::array({{{"type", "half_plane"}, {"normal", {1, 0}}}})}});
  EXPECT_TRUE(Fails(explicit_pairs(json::parse(R"([{"bodies": ["ground", "wall"]}])"), wall),
                    "contacts.pairs[0].bodies", "bodies \"ground\" and \"wall\" are both fixed"));
  EXPECT_TRUE(Fails(explicit_pairs(json::parse(R"([{"bodies": ["ground", "cylinder", "finger"]}])")),
                    "contacts.pairs[0].bodies", "must name exactly two bodies"));
  EXPECT_TRUE(Fails(explicit_pairs(json::parse(R"([{"bodies": ["ground", "nobody"]}])")),
                    "contacts.pairs[0].bodies[1]", "no body named \"nobody\""));
  EXPECT_TRUE(Fails(explicit_pairs(json::parse(R"([{"bodies": ["world", "cylinder"]}])")),
                    "contacts.pairs[0].bodies[0]", "no body named \"world\""));
  EXPECT_TRUE(Fails(explicit_pairs(json::parse(R"([{"bodies": ["ground", "cylinder"], "mu": 1}])")),
                    "contacts.pairs[0].mu", "unknown field"));
  EXPECT_TRUE(Fails(explicit_pairs("none"), "contacts.pairs", "must be an array"));
  EXPECT_TRUE(Fails(explicit_pairs(json::parse(R"([{"bodies": ["ground", "carriage"]}])")),
                    "contacts.pairs[0].bodies", "body \"carriage\" has no shapes to touch with"));
  // A joint's parent and child may be listed explicitly.
  json shaped = with("/bodies/2/shapes", json::array({{{"type", "disk"}, {"radius", 0.01}}}));
  EXPECT_NO_THROW(parse(explicit_pairs(json::parse(R"([{"bodies": ["carriage", "finger"]}])"), shaped)));
}

TEST(SceneErrors, Exclude) {
  json s = explicit_pairs(json::parse(R"([{"bodies": ["ground", "cylinder"]}])"));
  s["contacts"]["exclude"] = json::parse(R"([["ground", "finger"]])");
  EXPECT_TRUE(Fails(s, "contacts.exclude", "only with \"pairs\": \"auto\""));
  EXPECT_TRUE(Fails(with("/contacts/exclude", json::parse(R"([["ground"]])")), "contacts.exclude[0]",
                    "must name exactly two bodies"));
  EXPECT_TRUE(Fails(with("/contacts/exclude", json::parse(R"([["ground", "nobody"]])")), "contacts.exclude[0][1]",
                    "no body named \"nobody\""));
  EXPECT_TRUE(Fails(with("/contacts/exclude", "ground"), "contacts.exclude", "must be an array"));
  EXPECT_TRUE(Fails(with("/contacts/exclude", json::parse(R"([["ground", "ground"]])")), "contacts.exclude[0]",
                    "must name two different bodies"));
}

// ---- loads ------------------------------------------------------------------------------

TEST(SceneErrors, Loads) {
  EXPECT_TRUE(Fails(with("/loads", json::parse(R"([{"body": "ground", "force": [0, 1]}])")), "loads[0].body",
                    "a load on a fixed body has no effect"));
  EXPECT_TRUE(Fails(with("/loads", json::parse(R"([{"body": "nobody"}])")), "loads[0].body", "no body named"));
  EXPECT_TRUE(Fails(with("/loads", json::parse(R"([{"body": "cylinder", "force": [1]}])")), "loads[0].force",
                    "must have 2 components (x, y)"));
  EXPECT_TRUE(Fails(with("/loads", json::parse(R"([{"body": "cylinder", "force": [0, "1"]}])")), "loads[0].force[1]",
                    "must be an object"));
  EXPECT_TRUE(Fails(with("/loads", json::parse(R"([{"body": "cylinder", "frame": "local"}])")), "loads[0].frame",
                    "is not one of: world, body"));
  EXPECT_TRUE(Fails(with("/loads", json::parse(R"([{"body": "cylinder", "torque": {"value": 1}}])")),
                    "loads[0].torque.value", "unknown field"));
  EXPECT_TRUE(Fails(with("/loads", json::parse(R"({"body": "cylinder"})")), "loads", "must be an array"));
  const Scene s = parse(with("/loads", json::parse(R"([{"body": "cylinder", "force": [1, {"breaks": [0.5],
      "values": [0, 2]}], "torque": 0.5, "point": [0.01, 0], "frame": "body"}])")));
  ASSERT_EQ(s.model->loads.size(), 1u);
  const Load& l = s.model->loads[0];
  EXPECT_EQ(l.body, 1);
  EXPECT_EQ(l.force[0](0.0), 1.0);
  EXPECT_EQ(l.force[1](0.4), 0.0);
  EXPECT_EQ(l.force[1](0.6), 2.0);
  EXPECT_EQ(l.torque(3.0), 0.5);
  EXPECT_EQ(l.point.x, 0.01);
  EXPECT_TRUE(l.body_frame);
}

// ---- schedules and commands -------------------------------------------------------------

TEST(SceneErrors, Schedules) {
  EXPECT_TRUE(Fails(with("/commands/x_l/velocity", json::parse(R"({"breaks": [0.2, 0.2], "values": [1, 2, 3]})")),
                    "commands.x_l.velocity.breaks[1]", "breaks must be strictly increasing"));
  EXPECT_TRUE(Fails(with("/commands/x_l/velocity", json::parse(R"({"breaks": [0.3, 0.2], "values": [1, 2, 3]})")),
                    "commands.x_l.velocity.breaks[1]", "strictly increasing"));
  EXPECT_TRUE(Fails(with("/commands/x_l/velocity", json::parse(R"({"breaks": [0.2], "values": [1, 2, 3]})")),
                    "commands.x_l.velocity.values", "must have one more entry than breaks (2), has 3"));
  EXPECT_TRUE(Fails(with("/commands/x_l/velocity", json::parse(R"({"values": [1, 2]})")),
                    "commands.x_l.velocity.values", "must have one more entry than breaks (1), has 2"));
  EXPECT_TRUE(Fails(with("/commands/x_l/velocity", json::parse(R"({"breaks": [0.2]})")),
                    "commands.x_l.velocity.values", "missing (required)"));
  EXPECT_TRUE(Fails(with("/commands/x_l/velocity", json::parse(R"({"values": []})")),
                    "commands.x_l.velocity.values", "must have at least 1 entries"));
  EXPECT_TRUE(Fails(with("/commands/x_l/velocity", json::parse(R"({"terms": [{"wave": "tan", "amplitude": 1,
                    "frequency": 1}]})")),
                    "commands.x_l.velocity.terms[0].wave", "\"tan\" is not one of: sin, cos"));
  EXPECT_TRUE(Fails(with("/commands/x_l/velocity", json::parse(R"({"terms": [{"wave": "sin", "frequency": 1}]})")),
                    "commands.x_l.velocity.terms[0].amplitude", "missing (required)"));
  EXPECT_TRUE(Fails(with("/commands/x_l/velocity", json::parse(R"({"terms": [{"wave": "sin", "amplitude": 1,
                    "frequency": 1, "offset": 0}]})")),
                    "commands.x_l.velocity.terms[0].offset", "unknown field"));
  EXPECT_TRUE(Fails(with("/commands/x_l/velocity", "fast"), "commands.x_l.velocity", "must be an object"));
  // A valid schedule with a term.
  const Scene s = parse(with("/commands/x_l/velocity", json::parse(R"({"breaks": [0.2], "values": [1, 2],
      "terms": [{"wave": "cos", "amplitude": 0.5, "frequency": 0, "phase": 0}]})")));
  const Schedule& c = s.model->joints[1].command;
  EXPECT_EQ(c(0.1), 1.5);
  EXPECT_EQ(c(0.3), 2.5);
}

TEST(SceneErrors, CommandForMissingJoint) {
  EXPECT_TRUE(Fails(with("/commands/nope", {{"velocity", 1}}), "commands.nope", "no joint named \"nope\""));
}

TEST(SceneErrors, CommandForAFreeBodyDof) {
  EXPECT_TRUE(Fails(with("/commands/cylinder.x", {{"velocity", 1}}), "commands.cylinder.x",
                    "not an actuated joint"));
}

TEST(SceneErrors, CommandForALockedDofOrABody) {
  // The cylinder's dofs are x and y: its rotation is locked, and no command may move it.
  EXPECT_TRUE(Fails(with("/commands/cylinder.theta", {{"velocity", 1}}), "commands.cylinder.theta",
                    "\"theta\" is a locked DOF of free body \"cylinder\""));
  EXPECT_TRUE(Fails(with("/commands/cylinder", {{"velocity", 1}}), "commands.cylinder", "names a body, not a joint"));
  EXPECT_TRUE(Fails(with("/commands/ground", {{"velocity", 1}}), "commands.ground", "names a body, not a joint"));
}

TEST(SceneErrors, CommandOfTheWrongControl) {
  const json effort = with("/joints/1/control", "effort");
  EXPECT_TRUE(Fails(effort, "commands.x_l.velocity", "joint \"x_l\" is effort-controlled; give \"effort\""));
  EXPECT_NO_THROW(parse(with("/commands/x_l", {{"effort", 1.0}}, effort)));
  EXPECT_TRUE(Fails(with("/commands/x_l", {{"effort", 1.0}}), "commands.x_l.effort",
                    "joint \"x_l\" is velocity-controlled; give \"velocity\""));
  EXPECT_TRUE(Fails(with("/commands/x_l", json::object()), "commands.x_l.velocity", "missing (required)"));
  EXPECT_TRUE(Fails(with("/commands/x_l/speed", 1), "commands.x_l.speed", "unknown field"));
  EXPECT_TRUE(Fails(with("/commands", 5), "commands", "must be an object mapping joint names to commands"));
}

// ---- overrides, uncertainty, success ----------------------------------------------------

json with_override(const std::string& parameter, json value, json scene = base_scene()) {
  scene["overrides"] = {{"worlds", json::array({{{parameter, std::move(value)}}})}};
  return scene;
}
json with_uncertain(const std::string& parameter, json scene = base_scene()) {
  scene["uncertainty"] = {
      {"parameters", json::array({{{"parameter", parameter}, {"distribution", "uniform"}, {"low", 0.1}, {"high", 0.2}}})}};
  return scene;
}

TEST(SceneErrors, BadParameterPaths) {
  struct Case {
    const char* path;
    const char* fragment;
  };
  const Case cases[] = {
      {"bodies.nobody.mass", "parameter \"bodies.nobody.mass\": no body named \"nobody\""},
      {"bodies.cylinder.colour", "a body parameter is mass, scale, or pose.x|y|theta"},
      {"bodies.cylinder.pose.z", "pose has components x, y and theta"},
      {"bodies.cylinder.mass.x", "a body parameter is mass, scale, or pose"},
      {"bodies.finger.pose.x", "a linked body's pose follows its joint; vary the joint position"},
      {"bodies.ground.mass", "a fixed body has no mass"},
      {"bodies.carriage.scale", "the body has no shapes to scale"},
      {"joints.nope.position", "no joint named \"nope\""},
      {"joints.x_l.velocity", "a joint parameter is position"},
      {"pairs.groundcylinder.friction", "a pair is named \"A/B\" after its two bodies"},
      {"pairs.ground/carriage.friction", "no contact pair between those bodies"},
      {"pairs.ground/nobody.friction", "no body named \"nobody\""},
      {"pairs.nobody/ground.friction", "no body named \"nobody\""},
      {"pairs.ground/cylinder.mu", "a pair parameter is friction"},
      {"gravity", "unknown parameter (expected bodies.NAME.mass"},
      {"bodies.cylinder", "unknown parameter"},
      {"joints.x_l", "unknown parameter"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.path);
    EXPECT_TRUE(Fails(with_override(c.path, 0.5), std::string("overrides.worlds[0].") + c.path, c.fragment));
    EXPECT_TRUE(Fails(with_uncertain(c.path), "uncertainty.parameters[0].parameter", c.fragment));
  }
}

TEST(SceneErrors, OverrideSameParameterUnderTwoNames) {
  json s = with_override("pairs.ground/cylinder.friction", 0.3);
  s["overrides"]["worlds"][0]["pairs.cylinder/ground.friction"] = 0.4;
  // Keys are visited in sorted order: "pairs.cylinder/..." first.
  EXPECT_TRUE(Fails(s, "overrides.worlds[0].pairs.ground/cylinder.friction",
                    "names the same parameter as \"pairs.cylinder/ground.friction\""));
  // The same parameter in two different worlds is fine.
  s["overrides"]["worlds"][0].erase("pairs.cylinder/ground.friction");
  s["overrides"]["worlds"].push_back({{"pairs.cylinder/ground.friction", 0.4}});
  EXPECT_NO_THROW(parse(s));
}

TEST(SceneErrors, OverrideValues) {
  EXPECT_TRUE(Fails(with_override("bodies.cylinder.mass", 0), "overrides.worlds[0].bodies.cylinder.mass",
                    "must be > 0"));
  EXPECT_NO_THROW(parse(with_override("bodies.finger.mass", 0)));
  EXPECT_TRUE(Fails(with_override("bodies.finger.mass", -0.1), "overrides.worlds[0].bodies.finger.mass",
                    "must be >= 0"));
  EXPECT_TRUE(Fails(with_override("bodies.cylinder.scale", -1), "overrides.worlds[0].bodies.cylinder.scale",
                    "must be > 0"));
  EXPECT_TRUE(Fails(with_override("pairs.ground/cylinder.friction", -0.1),
                    "overrides.worlds[0].pairs.ground/cylinder.friction", "must be >= 0"));
  EXPECT_TRUE(Fails(with_override("joints.x_l.position", "0"), "overrides.worlds[0].joints.x_l.position",
                    "must be a number"));
  EXPECT_TRUE(Fails(with("/overrides", {{"worlds", json::array()}}), "overrides.worlds", "must have at least 1 entries"));
  EXPECT_TRUE(Fails(with("/overrides", {{"worlds", json::array({5})}}), "overrides.worlds[0]",
                    "must be an object mapping parameter paths to values"));
  EXPECT_TRUE(Fails(with("/overrides", {{"world", json::array()}}), "overrides.world", "unknown field"));
  EXPECT_TRUE(Fails(with("/overrides", json::object()), "overrides.worlds", "missing (required)"));
  EXPECT_TRUE(Fails(with_override("note", 5), "overrides.worlds[0].note", "must be a string"));
}

json with_distribution(const json& entry, json scene = base_scene()) {
  scene["uncertainty"] = {{"parameters", json::array({entry})}};
  return scene;
}

TEST(SceneErrors, UncertaintyDistributions) {
  const std::string at = "uncertainty.parameters[0].";
  EXPECT_TRUE(Fails(with_distribution({{"parameter", "bodies.cylinder.mass"}, {"distribution", "uniform"}, {"low", 1},
                                       {"high", 1}}),
                    at + "high", "must be > low"));
  EXPECT_TRUE(Fails(with_distribution({{"parameter", "bodies.cylinder.mass"}, {"distribution", "uniform"}, {"low", 1},
                                       {"high", 0.5}}),
                    at + "high", "must be > low"));
  EXPECT_TRUE(Fails(with_distribution({{"parameter", "bodies.cylinder.mass"}, {"distribution", "truncated_normal"},
                                       {"mean", 1}, {"stddev", 0.1}, {"low", 2}, {"high", 1}}),
                    at + "high", "must be > low"));
  EXPECT_TRUE(Fails(with_distribution({{"parameter", "bodies.cylinder.mass"}, {"distribution", "normal"}, {"mean", 1},
                                       {"stddev", 0}}),
                    at + "stddev", "must be > 0"));
  EXPECT_TRUE(Fails(with_distribution({{"parameter", "bodies.cylinder.mass"}, {"distribution", "normal"}, {"mean", 1},
                                       {"stddev", -0.1}}),
                    at + "stddev", "must be > 0"));
  EXPECT_TRUE(Fails(with_distribution({{"parameter", "bodies.cylinder.mass"}, {"distribution", "normal"}, {"mean", 1},
                                       {"stddev", 0.1}, {"low", 0}}),
                    at + "low", "unknown field"));
  EXPECT_TRUE(Fails(with_distribution({{"parameter", "bodies.cylinder.mass"}, {"distribution", "lognormal"}}),
                    at + "distribution", "\"lognormal\" is not one of: uniform, normal, truncated_normal"));
  EXPECT_TRUE(Fails(with_distribution({{"parameter", "bodies.cylinder.mass"}, {"distribution", "uniform"}, {"low", 1}}),
                    at + "high", "missing (required)"));
  EXPECT_TRUE(Fails(with_distribution(5), "uncertainty.parameters[0]", "must be an object"));
  EXPECT_TRUE(Fails(with("/uncertainty", {{"parameters", json::array()}}), "uncertainty.parameters",
                    "must have at least 1 entries"));
}

TEST(SceneErrors, UncertaintyDuplicateParameter) {
  json s = with_uncertain("bodies.cylinder.mass");
  s["uncertainty"]["parameters"].push_back(
      {{"parameter", "bodies.cylinder.mass"}, {"distribution", "normal"}, {"mean", 1}, {"stddev", 0.1}});
  EXPECT_TRUE(Fails(s, "uncertainty.parameters[1].parameter",
                    "names the same parameter as \"bodies.cylinder.mass\" (listed twice)"));
}

TEST(SceneErrors, UncertaintySamePairFrictionUnderTwoNames) {
  // "pairs.A/B" and "pairs.B/A" name the same parameter (both resolve to one pair); listing
  // both is listing the parameter twice.
  json s = with_uncertain("pairs.ground/cylinder.friction");
  s["uncertainty"]["parameters"].push_back(
      {{"parameter", "pairs.cylinder/ground.friction"}, {"distribution", "uniform"}, {"low", 0.3}, {"high", 0.4}});
  EXPECT_TRUE(Fails(s, "uncertainty.parameters[1].parameter",
                    "names the same parameter as \"pairs.ground/cylinder.friction\" (listed twice)"));
}

TEST(SceneErrors, UncertaintySamplesMustLieInTheParameterRange) {
  const std::string at = "uncertainty.parameters[0].";
  EXPECT_TRUE(Fails(with_distribution({{"parameter", "bodies.cylinder.mass"}, {"distribution", "normal"}, {"mean", 1},
                                       {"stddev", 0.1}}),
                    at + "distribution",
                    "a normal distribution can reach any value, but this parameter must be > 0; use truncated_normal"));
  EXPECT_TRUE(Fails(with_distribution({{"parameter", "pairs.ground/cylinder.friction"}, {"distribution", "normal"},
                                       {"mean", 0.5}, {"stddev", 0.1}}),
                    at + "distribution", "this parameter must be >= 0"));
  EXPECT_TRUE(Fails(with_distribution({{"parameter", "bodies.cylinder.mass"}, {"distribution", "uniform"}, {"low", 0},
                                       {"high", 1}}),
                    at + "low", "must be > 0 for this parameter"));
  EXPECT_TRUE(Fails(with_distribution({{"parameter", "bodies.cylinder.scale"}, {"distribution", "truncated_normal"},
                                       {"mean", 1}, {"stddev", 0.1}, {"low", -1}, {"high", 2}}),
                    at + "low", "must be > 0 for this parameter"));
  EXPECT_TRUE(Fails(with_distribution({{"parameter", "pairs.ground/cylinder.friction"}, {"distribution", "uniform"},
                                       {"low", -0.1}, {"high", 1}}),
                    at + "low", "must be >= 0 for this parameter"));
  EXPECT_TRUE(Fails(with_distribution({{"parameter", "bodies.finger.mass"}, {"distribution", "uniform"},
                                       {"low", -0.1}, {"high", 1}}),
                    at + "low", "must be >= 0 for this parameter"));
  // Inside the range, and unbounded parameters with a normal distribution, are fine.
  EXPECT_NO_THROW(parse(with_distribution({{"parameter", "pairs.ground/cylinder.friction"}, {"distribution", "uniform"},
                                           {"low", 0}, {"high", 1}})));
  EXPECT_NO_THROW(parse(with_distribution({{"parameter", "bodies.finger.mass"}, {"distribution", "truncated_normal"},
                                           {"mean", 0.1}, {"stddev", 0.1}, {"low", 0}, {"high", 1}})));
  EXPECT_NO_THROW(parse(with_distribution({{"parameter", "bodies.cylinder.pose.x"}, {"distribution", "normal"},
                                           {"mean", 0}, {"stddev", 0.01}})));
}

json with_success(const json& success, json scene = base_scene()) {
  scene["success"] = success;
  return scene;
}

TEST(SceneErrors, Success) {
  EXPECT_TRUE(Fails(with_success({{"type", "lifted"}, {"body", "ground"}, {"height", 0.1}, {"hold_until", 0.5}}),
                    "success.body", "must be a free body (the object)"));
  EXPECT_TRUE(Fails(with_success({{"type", "lifted"}, {"body", "finger"}, {"height", 0.1}, {"hold_until", 0.5}}),
                    "success.body", "must be a free body"));
  EXPECT_TRUE(Fails(with_success({{"type", "lifted"}, {"body", "nobody"}, {"height", 0.1}, {"hold_until", 0.5}}),
                    "success.body", "no body named \"nobody\""));
  EXPECT_TRUE(Fails(with_success({{"type", "lifted"}, {"body", "object"}, {"height", 0.1}, {"hold_until", 0.5}},
                                 tabletop_scene()),
                    "success.type", "\"lifted\" needs a vertical world"));
  EXPECT_TRUE(Fails(with_success({{"type", "lifted"}, {"body", "cylinder"}, {"height", 0}, {"hold_until", 0.5}}),
                    "success.height", "must be > 0"));
  EXPECT_TRUE(Fails(with_success({{"type", "lifted"}, {"body", "cylinder"}, {"height", 0.1}, {"hold_until", -1}}),
                    "success.hold_until", "must be >= 0"));
  EXPECT_TRUE(Fails(with_success({{"type", "lifted"}, {"body", "cylinder"}, {"height", 0.1}}), "success.hold_until",
                    "missing (required)"));
  EXPECT_TRUE(Fails(with_success({{"type", "reached"}, {"body", "cylinder"}}), "success.type",
                    "\"reached\" is not one of: lifted, goal_region"));
  const json goal = {{"type", "goal_region"}, {"body", "object"}, {"center", {0.1, 0, 0}}, {"tolerance", {0.01, 0.01, 0.1}}};
  EXPECT_NO_THROW(parse(with_success(goal, tabletop_scene())));
  EXPECT_TRUE(Fails(with("/success/tolerance", {0.01, 0, 0.1}, with_success(goal, tabletop_scene())),
                    "success.tolerance", "every entry must be > 0"));
  EXPECT_TRUE(Fails(with("/success/tolerance", {0.01, 0.01, -0.1}, with_success(goal, tabletop_scene())),
                    "success.tolerance", "every entry must be > 0"));
  EXPECT_TRUE(Fails(with("/success/tolerance", {0.01, 0.01}, with_success(goal, tabletop_scene())),
                    "success.tolerance", "must be an array of 3 numbers"));
  EXPECT_TRUE(Fails(with("/success/height", 0.1, with_success(goal, tabletop_scene())), "success.height",
                    "unknown field"));
}

// ---- load_scene_file and hashes ---------------------------------------------------------

TEST(SceneFile, MissingFileNamesTheFile) {
  const std::string path = QUASISTEP_SOURCE_DIR "/examples/no_such_scene.json";
  try {
    (void)load_scene_file(path);
    FAIL() << "no error";
  } catch (const SceneError& e) {
    EXPECT_EQ(e.path(), "");
    EXPECT_NE(std::string(e.what()).find("cannot read scene file \"" + path + "\""), std::string::npos) << e.what();
  }
}

TEST(SceneFile, DirectoryIsAnUnreadableFileNamedInTheError) {
  // A directory opens as a stream on Linux but cannot be read: the error must name it.
  const std::string path = QUASISTEP_SOURCE_DIR "/examples";
  try {
    (void)load_scene_file(path);
    FAIL() << "no error";
  } catch (const SceneError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST(SceneFile, Fnv1a) {
  EXPECT_EQ(fnv1a_hex(""), "cbf29ce484222325");
  EXPECT_EQ(fnv1a_hex("a"), "af63dc4c8601ec8c");
  EXPECT_EQ(fnv1a_hex("foobar"), "85944171f73967e8");
}

TEST(SceneFile, HashIsOfTheTextAndSourceIsRecorded) {
  const std::string text = base_scene().dump(2);
  const Scene a = parse_scene(text, "first");
  const Scene b = parse_scene(text, "second");
  EXPECT_EQ(a.hash, b.hash);
  EXPECT_EQ(a.hash, fnv1a_hex(text));
  EXPECT_EQ(a.hash.size(), 16u);
  EXPECT_EQ(a.source, "first");
  EXPECT_EQ(b.source, "second");
  // Same content, different bytes: a different hash.
  const Scene c = parse_scene(text + "\n");
  EXPECT_NE(c.hash, a.hash);
  EXPECT_EQ(c.source, "<string>");
}

// ---- compiled models --------------------------------------------------------------------

TEST(SceneModel, PangTedrakeGripperExample) {
  const std::string path = QUASISTEP_SOURCE_DIR "/examples/pang_tedrake_gripper.json";
  const Scene s = load_scene_file(path);
  ASSERT_TRUE(s.model);
  const Model& m = *s.model;
  EXPECT_EQ(s.source, path);
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  EXPECT_EQ(s.hash, fnv1a_hex(bytes.str()));

  EXPECT_EQ(m.name, "pang_tedrake_gripper");
  EXPECT_EQ(m.world.type, WorldType::vertical);
  EXPECT_EQ(m.world.gravity, 9.81);
  EXPECT_EQ(m.formulation, Formulation::trinkle_lcp);
  EXPECT_EQ(m.step.h, 0.01);
  EXPECT_EQ(m.step.steps, 60);
  EXPECT_EQ(m.n_u, 2);
  EXPECT_EQ(m.n_a, 3);
  EXPECT_EQ(m.n_q(), 5);
  std::vector<std::string> names;
  for (const Dof& d : m.dofs) names.push_back(d.name);
  EXPECT_EQ(names, (std::vector<std::string>{"cylinder.x", "cylinder.y", "x_l", "x_r", "y_g"}));
  for (int i = 0; i < m.n_q(); ++i) EXPECT_EQ(m.dofs[i].actuated, i >= m.n_u) << m.dofs[i].name;
  const Body& cyl = m.bodies[m.find_body("cylinder")];
  EXPECT_EQ(cyl.dof[0], 0);
  EXPECT_EQ(cyl.dof[1], 1);
  EXPECT_EQ(cyl.dof[2], -1);
  EXPECT_EQ(cyl.mass, 1.0);

  ASSERT_EQ(m.pairs.size(), 3u);
  EXPECT_EQ(m.n_slots(), 3);
  const char* expected[3][2] = {{"left_finger", "cylinder"}, {"right_finger", "cylinder"}, {"ground", "cylinder"}};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(m.bodies[m.pairs[i].body_a].name, expected[i][0]);
    EXPECT_EQ(m.bodies[m.pairs[i].body_b].name, expected[i][1]);
    EXPECT_EQ(m.pairs[i].friction, 0.5);
    EXPECT_EQ(m.pairs[i].slot_count, 1);
    EXPECT_EQ(m.pairs[i].first_slot, i);
  }
  // Commands: eq. (30) as scheduled in the file.
  EXPECT_EQ(m.joints[m.find_joint("x_l")].command(0.005), 0.1);
  EXPECT_EQ(m.joints[m.find_joint("x_l")].command(0.205), 0.0);
  EXPECT_EQ(m.joints[m.find_joint("x_r")].command(0.005), -0.1);
  EXPECT_EQ(m.joints[m.find_joint("y_g")].command(0.595), 0.1);
  EXPECT_EQ(m.joints[m.find_joint("x_l")].initial_position, -0.07);
  // Parents before children.
  auto order_of = [&](const char* name) {
    return std::find(m.body_order.begin(), m.body_order.end(), m.find_body(name)) - m.body_order.begin();
  };
  EXPECT_EQ(m.body_order.size(), m.bodies.size());
  EXPECT_LT(order_of("carriage"), order_of("left_finger"));
  EXPECT_LT(order_of("carriage"), order_of("right_finger"));
  EXPECT_FALSE(s.success.has_value());
  EXPECT_TRUE(s.overrides.empty());
  EXPECT_TRUE(s.uncertainty.empty());
}

TEST(SceneModel, EffortJointsComeAfterFreeBodyDofsInQu) {
  json s = with("/joints/0/control", "effort");  // y_g: effort, x_l: velocity
  s["bodies"][1]["dofs"] = json::array({"theta", "x", "y"});
  s["commands"]["y_g"] = {{"effort", -1.0}};
  const Scene sc = parse(s);
  const Model& m = *sc.model;
  std::vector<std::string> names;
  for (const Dof& d : m.dofs) names.push_back(d.name);
  // Free-body DOFs in x, y, theta order whatever order the file lists them, then effort
  // joints (q_u), then velocity joints (q_a).
  EXPECT_EQ(names, (std::vector<std::string>{"cylinder.x", "cylinder.y", "cylinder.theta", "y_g", "x_l"}));
  EXPECT_EQ(m.n_u, 4);
  EXPECT_EQ(m.n_a, 1);
  EXPECT_EQ(m.joints[0].dof, 3);
  EXPECT_EQ(m.joints[1].dof, 4);
  EXPECT_EQ(m.dofs[3].kind, DofKind::joint);
  EXPECT_EQ(m.dofs[3].index, 0);
  EXPECT_FALSE(m.dofs[3].actuated);
  EXPECT_TRUE(m.dofs[4].actuated);
  EXPECT_EQ(m.dofs[2].kind, DofKind::body_theta);
  EXPECT_EQ(m.joints[0].command(0.0), -1.0);
}

TEST(SceneModel, FreeBodyDofsOfSeveralBodiesInBodyOrder) {
  json s = base_scene();
  s["bodies"].push_back({{"name", "ball"},
                         {"kind", "free"},
                         {"mass", 0.1},
                         {"dofs", json::array({"y"})},
                         {"shapes", json::array({{{"type", "disk"}, {"radius", 0.01}}})}});
  const std::shared_ptr<const Model> m_owner = parse(s).model;
  const Model& m = *m_owner;
  std::vector<std::string> names;
  for (const Dof& d : m.dofs) names.push_back(d.name);
  EXPECT_EQ(names, (std::vector<std::string>{"cylinder.x", "cylinder.y", "ball.y", "y_g", "x_l"}));
  EXPECT_EQ(m.n_u, 3);
  EXPECT_EQ(m.n_a, 2);
}

TEST(SceneModel, AutoPairsSkipParentChildAndFixedFixedAndOrientFixedLinkedFree) {
  json s = base_scene();
  // Give the carriage a shape: it must not pair with its child (finger); its parent is the
  // world frame, so it does pair with the fixed ground.
  s["bodies"][2]["shapes"] = json::array({{{"type", "box"}, {"size", {0.2, 0.02}}}});
  // A second fixed body: no fixed/fixed pair.
  s["bodies"].push_back({{"name", "wall"},
                         {"kind", "fixed"},
                         {"pose", {1, 0, 0}},
                         {"shapes", json::array({{{"type", "half_plane"}, {"normal", {-1, 0}}}})}});
  // Free body listed before the fixed ones it meets, to check orientation is by kind.
  json bodies = json::array({s["bodies"][1], s["bodies"][0], s["bodies"][2], s["bodies"][3], s["bodies"][4]});
  s["bodies"] = bodies;  // cylinder, ground, carriage, finger, wall
  const std::shared_ptr<const Model> m_owner = parse(s).model;
  const Model& m = *m_owner;
  std::vector<std::string> names;
  for (int i = 0; i < static_cast<int>(m.pairs.size()); ++i) names.push_back(m.pair_name(i));
  // Bodies i < j in file order; fixed -> linked -> free.
  EXPECT_EQ(names, (std::vector<std::string>{"ground/cylinder", "carriage/cylinder", "finger/cylinder",
                                             "wall/cylinder", "ground/carriage", "ground/finger", "wall/carriage",
                                             "wall/finger"}));
  for (const ContactPair& p : m.pairs) EXPECT_EQ(p.friction, 0.5);
  // Slots: disk vs anything is 1; half-plane vs box is 4, vs segment 2; box vs segment 4 + 2.
  int slots = 0;
  for (const ContactPair& p : m.pairs) {
    EXPECT_EQ(p.first_slot, slots);
    slots += p.slot_count;
  }
  EXPECT_EQ(slots, m.n_slots());
  EXPECT_EQ(m.pairs[0].slot_count, 1);  // ground/cylinder
  EXPECT_EQ(m.pairs[4].slot_count, 4);  // ground/carriage
  EXPECT_EQ(m.pairs[5].slot_count, 2);  // ground/finger
  for (const ContactSlot& sl : m.slots) EXPECT_NE(m.shapes[sl.feature_shape].core, ShapeCore::half_plane);
}

TEST(SceneModel, ExcludeRemovesAutoPairs) {
  const std::shared_ptr<const Model> all_owner = parse(base_scene()).model;
  const Model& all = *all_owner;
  std::vector<std::string> names;
  for (int i = 0; i < static_cast<int>(all.pairs.size()); ++i) names.push_back(all.pair_name(i));
  EXPECT_EQ(names, (std::vector<std::string>{"ground/cylinder", "ground/finger", "finger/cylinder"}));
  const std::shared_ptr<const Model> m_owner = parse(with("/contacts/exclude", json::parse(R"([["finger", "ground"]])"))).model;
  const Model& m = *m_owner;
  names.clear();
  for (int i = 0; i < static_cast<int>(m.pairs.size()); ++i) names.push_back(m.pair_name(i));
  EXPECT_EQ(names, (std::vector<std::string>{"ground/cylinder", "finger/cylinder"}));
  EXPECT_EQ(parse(with("/contacts/pairs", "auto")).model->pairs.size(), 3u);
}

TEST(SceneModel, ExplicitPairsKeepTheGivenOrderAndOrientation) {
  const std::shared_ptr<const Model> m_owner = parse(explicit_pairs(json::parse(R"([{"bodies": ["cylinder", "finger"], "friction": 0.1},
                                                         {"bodies": ["ground", "cylinder"]}])"))).model;
  const Model& m = *m_owner;
  ASSERT_EQ(m.pairs.size(), 2u);
  EXPECT_EQ(m.pair_name(0), "cylinder/finger");
  EXPECT_EQ(m.pairs[0].friction, 0.1);
  EXPECT_EQ(m.pair_name(1), "ground/cylinder");
  EXPECT_EQ(m.pairs[1].friction, 0.5);
}

TEST(SceneModel, ClockwisePolygonIsReorderedCounterClockwise) {
  const std::shared_ptr<const Model> m_owner = parse(polygon_on_cylinder(json::parse("[[0,0],[0,1],[1,1],[1,0]]"))).model;
  const Model& m = *m_owner;
  const Shape& sh = m.shapes[m.bodies[1].shapes[0]];
  EXPECT_EQ(sh.type, ShapeType::polygon);
  EXPECT_EQ(sh.core, ShapeCore::polygon);
  ASSERT_EQ(sh.points.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    const Vec2<double>& a = sh.points[i];
    const Vec2<double>& b = sh.points[(i + 1) % 4];
    const Vec2<double>& c = sh.points[(i + 2) % 4];
    EXPECT_GT(cross(b - a, c - b), 0.0) << "vertex " << i;
  }
  // The same vertices as given.
  for (const auto& v : std::vector<std::pair<double, double>>{{0, 0}, {0, 1}, {1, 1}, {1, 0}})
    EXPECT_TRUE(std::any_of(sh.points.begin(), sh.points.end(),
                            [&](const Vec2<double>& p) { return p.x == v.first && p.y == v.second; }));
}

TEST(SceneModel, PointAndCapsuleShapes) {
  json s = with("/bodies/1/shapes", json::array({{{"type", "point"}, {"pose", {0.01, 0.02, 0}}}}));
  s["bodies"][3]["shapes"][0] = {{"type", "capsule"}, {"a", {0, 0}}, {"b", {0, 0.1}}, {"radius", 0.005}};
  const Scene sc = parse(s);
  const Model& m = *sc.model;
  const Shape& pt = m.shapes[m.bodies[1].shapes[0]];
  EXPECT_EQ(pt.type, ShapeType::point);
  EXPECT_EQ(pt.core, ShapeCore::point);
  EXPECT_EQ(pt.radius, 0.0);
  ASSERT_EQ(pt.points.size(), 1u);
  EXPECT_EQ(pt.points[0].x, 0.01);
  EXPECT_EQ(pt.points[0].y, 0.02);
  const Shape& cap = m.shapes[m.bodies[3].shapes[0]];
  EXPECT_EQ(cap.type, ShapeType::capsule);
  EXPECT_EQ(cap.core, ShapeCore::segment);
  EXPECT_EQ(cap.radius, 0.005);
  EXPECT_EQ(cap.points.size(), 2u);
}

TEST(SceneModel, ShapesInBodyFrame) {
  json s = base_scene();
  s["bodies"][3]["shapes"][0]["pose"] = {0.5, 0, std::numbers::pi / 2};
  s["bodies"][0]["shapes"][0]["normal"] = {0, 2};
  const std::shared_ptr<const Model> m_owner = parse(s).model;
  const Model& m = *m_owner;
  const Shape& seg = m.shapes[m.bodies[3].shapes[0]];
  ASSERT_EQ(seg.points.size(), 2u);
  EXPECT_NEAR(seg.points[0].x, 0.5, 1e-15);
  EXPECT_NEAR(seg.points[1].x, 0.4, 1e-15);
  EXPECT_NEAR(seg.points[1].y, 0.0, 1e-15);
  const Shape& hp = m.shapes[m.bodies[0].shapes[0]];
  EXPECT_EQ(hp.normal.x, 0.0);
  EXPECT_EQ(hp.normal.y, 1.0);  // normalized
  const Shape& disk = m.shapes[m.bodies[1].shapes[0]];
  EXPECT_EQ(disk.radius, 0.05);
  EXPECT_EQ(disk.body, 1);
}

TEST(SceneModel, StudySectionsResolveParameters) {
  json s = base_scene();
  s["overrides"] = json::parse(R"({"worlds": [
      {"bodies.cylinder.mass": 2.0, "joints.x_l.position": -0.05, "note": "heavier"},
      {"bodies.cylinder.pose.x": 0.01, "bodies.cylinder.pose.y": 0.06, "bodies.ground.pose.theta": 0.1,
       "bodies.finger.scale": 1.1, "pairs.cylinder/ground.friction": 0.3}
    ]})");
  s["uncertainty"] = json::parse(R"({"parameters": [
      {"parameter": "bodies.cylinder.mass", "distribution": "uniform", "low": 0.5, "high": 1.5},
      {"parameter": "pairs.cylinder/finger.friction", "distribution": "truncated_normal", "mean": 0.5,
       "stddev": 0.05, "low": 0.3, "high": 0.7},
      {"parameter": "joints.y_g.position", "distribution": "normal", "mean": 0.01, "stddev": 0.001}
    ]})");
  s["success"] = {{"type", "lifted"}, {"body", "cylinder"}, {"height", 0.05}, {"hold_until", 0.6}};
  const Scene sc = parse(s);
  const Model& m = *sc.model;
  using K = ParameterRef::Kind;

  ASSERT_EQ(sc.overrides.size(), 2u);
  auto find = [&](size_t world, const std::string& path) -> const std::pair<ParameterRef, double>* {
    for (const auto& entry : sc.overrides[world])
      if (entry.first.path == path) return &entry;
    return nullptr;
  };
  EXPECT_EQ(sc.overrides[0].size(), 2u);  // "note" is not a parameter
  EXPECT_EQ(sc.overrides[1].size(), 5u);
  const auto* mass = find(0, "bodies.cylinder.mass");
  ASSERT_NE(mass, nullptr);
  EXPECT_EQ(mass->first.kind, K::body_mass);
  EXPECT_EQ(mass->first.index, 1);
  EXPECT_EQ(mass->second, 2.0);
  const auto* jp = find(0, "joints.x_l.position");
  ASSERT_NE(jp, nullptr);
  EXPECT_EQ(jp->first.kind, K::joint_position);
  EXPECT_EQ(jp->first.index, 1);
  EXPECT_EQ(jp->second, -0.05);
  const auto* px = find(1, "bodies.cylinder.pose.x");
  ASSERT_NE(px, nullptr);
  EXPECT_EQ(px->first.kind, K::body_pose_x);
  ASSERT_NE(find(1, "bodies.cylinder.pose.y"), nullptr);
  EXPECT_EQ(find(1, "bodies.cylinder.pose.y")->first.kind, K::body_pose_y);
  const auto* th = find(1, "bodies.ground.pose.theta");
  ASSERT_NE(th, nullptr);
  EXPECT_EQ(th->first.kind, K::body_pose_theta);
  EXPECT_EQ(th->first.index, 0);
  const auto* sc_ = find(1, "bodies.finger.scale");
  ASSERT_NE(sc_, nullptr);
  EXPECT_EQ(sc_->first.kind, K::body_scale);
  EXPECT_EQ(sc_->first.index, 3);
  const auto* fr = find(1, "pairs.cylinder/ground.friction");
  ASSERT_NE(fr, nullptr);
  EXPECT_EQ(fr->first.kind, K::pair_friction);
  // A pair parameter names the two bodies in the pair's orientation (A = ground).
  EXPECT_EQ(fr->first.index, m.find_body("ground"));
  EXPECT_EQ(fr->first.other, m.find_body("cylinder"));
  EXPECT_EQ(fr->second, 0.3);

  ASSERT_EQ(sc.uncertainty.size(), 3u);
  EXPECT_EQ(sc.uncertainty[0].parameter.kind, K::body_mass);
  EXPECT_EQ(sc.uncertainty[0].distribution.kind, Distribution::Kind::uniform);
  EXPECT_EQ(sc.uncertainty[0].distribution.low, 0.5);
  EXPECT_EQ(sc.uncertainty[0].distribution.high, 1.5);
  EXPECT_EQ(sc.uncertainty[1].parameter.kind, K::pair_friction);
  EXPECT_EQ(sc.uncertainty[1].parameter.index, m.find_body("finger"));  // the pair is finger/cylinder
  EXPECT_EQ(sc.uncertainty[1].parameter.other, m.find_body("cylinder"));
  EXPECT_EQ(sc.uncertainty[1].parameter.path, "pairs.cylinder/finger.friction");
  EXPECT_EQ(sc.uncertainty[1].distribution.kind, Distribution::Kind::truncated_normal);
  EXPECT_EQ(sc.uncertainty[1].distribution.mean, 0.5);
  EXPECT_EQ(sc.uncertainty[1].distribution.stddev, 0.05);
  EXPECT_EQ(sc.uncertainty[1].distribution.low, 0.3);
  EXPECT_EQ(sc.uncertainty[1].distribution.high, 0.7);
  EXPECT_EQ(sc.uncertainty[2].parameter.kind, K::joint_position);
  EXPECT_EQ(sc.uncertainty[2].parameter.index, 0);
  EXPECT_EQ(sc.uncertainty[2].distribution.kind, Distribution::Kind::normal);
  EXPECT_EQ(sc.uncertainty[2].distribution.mean, 0.01);
  EXPECT_EQ(sc.uncertainty[2].distribution.stddev, 0.001);

  ASSERT_TRUE(sc.success.has_value());
  EXPECT_EQ(sc.success->kind, SuccessCriterion::Kind::lifted);
  EXPECT_EQ(sc.success->body, 1);
  EXPECT_EQ(sc.success->height, 0.05);
  EXPECT_EQ(sc.success->hold_until, 0.6);
}

TEST(SceneModel, GoalRegionSuccess) {
  const json goal = {{"type", "goal_region"}, {"body", "object"}, {"center", {0.1, 0.2, 0.3}}, {"tolerance", {0.01, 0.02, 0.1}}};
  const Scene s = parse(with_success(goal, tabletop_scene()));
  ASSERT_TRUE(s.success.has_value());
  EXPECT_EQ(s.success->kind, SuccessCriterion::Kind::goal_region);
  EXPECT_EQ(s.success->body, 0);
  EXPECT_EQ(s.success->center, (std::array<double, 3>{0.1, 0.2, 0.3}));
  EXPECT_EQ(s.success->tolerance, (std::array<double, 3>{0.01, 0.02, 0.1}));
}

TEST(SceneModel, ResolveParameterDirectly) {
  const Scene s = parse(base_scene());
  const ParameterRef r = resolve_parameter(*s.model, "joints.y_g.position", "here");
  EXPECT_EQ(r.kind, ParameterRef::Kind::joint_position);
  EXPECT_EQ(r.index, 0);
  EXPECT_EQ(r.path, "joints.y_g.position");
  try {
    (void)resolve_parameter(*s.model, "joints.nope.position", "here");
    FAIL() << "no error";
  } catch (const SceneError& e) {
    EXPECT_EQ(e.path(), "here");
    EXPECT_EQ(std::string(e.what()), "here: parameter \"joints.nope.position\": no joint named \"nope\"");
  }
}

TEST(SceneModel, DocumentedMinimalExample) {
  // docs/scene-format.md, "A complete minimal example".
  const Scene s = parse_scene(R"({
    "format": 1,
    "name": "push_box",
    "world": {"type": "vertical"},
    "model": {"formulation": "trinkle_lcp"},
    "step": {"h": 0.01, "steps": 100},
    "bodies": [
      {"name": "ground", "kind": "fixed", "shapes": [{"type": "half_plane", "normal": [0, 1]}]},
      {"name": "box", "kind": "free", "mass": 0.5, "pose": [0, 0.05, 0],
       "shapes": [{"type": "box", "size": [0.1, 0.1]}]},
      {"name": "finger", "kind": "linked", "shapes": [{"type": "disk", "radius": 0.01}]}
    ],
    "joints": [
      {"name": "finger_x", "type": "prismatic", "parent": "world", "child": "finger",
       "origin": [0, 0.05, 0], "axis": [1, 0], "position": -0.1}
    ],
    "contacts": {"friction": 0.5, "note": "auto: ground/box, ground/finger, finger/box"},
    "commands": {"finger_x": {"velocity": {"breaks": [0.5], "values": [0.05, 0.0]}}}
  })");
  const Model& m = *s.model;
  std::vector<std::string> names;
  for (const Dof& d : m.dofs) names.push_back(d.name);
  EXPECT_EQ(names, (std::vector<std::string>{"box.x", "box.y", "box.theta", "finger_x"}));
  EXPECT_EQ(m.n_u, 3);
  EXPECT_EQ(m.n_a, 1);
  ASSERT_EQ(m.pairs.size(), 3u);
  EXPECT_EQ(m.pair_name(0), "ground/box");
  EXPECT_EQ(m.pair_name(1), "ground/finger");
  EXPECT_EQ(m.pair_name(2), "finger/box");
  EXPECT_EQ(m.n_slots(), 6);
  EXPECT_EQ(m.pairs[0].slot_count, 4);
  EXPECT_EQ(m.world.gravity, 9.81);  // default
}

TEST(SceneModel, TabletopScene) {
  const std::shared_ptr<const Model> m_owner = parse(tabletop_scene()).model;
  const Model& m = *m_owner;
  EXPECT_EQ(m.world.type, WorldType::tabletop);
  EXPECT_EQ(m.world.support_friction, 0.5);
  EXPECT_EQ(m.formulation, Formulation::halm_posa_lcp);
  EXPECT_EQ(m.n_u, 3);
  EXPECT_EQ(m.n_a, 2);
  ASSERT_EQ(m.pairs.size(), 1u);
  EXPECT_EQ(m.pair_name(0), "pusher/object");
  EXPECT_EQ(m.pairs[0].slot_count, 1);
  EXPECT_EQ(m.pairs[0].friction, 0.3);
  const Shape& box = m.shapes[m.bodies[0].shapes[0]];
  EXPECT_EQ(box.core, ShapeCore::polygon);
  ASSERT_EQ(box.points.size(), 4u);
  EXPECT_EQ(box.points[0].x, -0.05);
  EXPECT_EQ(box.points[0].y, -0.05);
  EXPECT_EQ(box.points[2].x, 0.05);
  EXPECT_EQ(box.points[2].y, 0.05);
}

// ---- tabletop: limit surface from the support, loads and effort joints -----------------

TEST(SceneErrors, TabletopTakesNoLoads) {
  const json load = json::parse(R"([{"body": "object", "force": [1, 0]}])");
  EXPECT_TRUE(Fails(with("/loads", load, tabletop_scene()), "loads",
                    "the tabletop models take no loads: their contact impulses are scaled by the unknown k of Halm & Posa 2018, "
                    "eq. (10)"));
  EXPECT_TRUE(Fails(with("/model/formulation", "perfect_velocity_lcp", with("/loads", load, tabletop_scene())), "loads",
                    "take no loads"));
  EXPECT_NO_THROW(parse(with("/loads", json::array(), tabletop_scene())));
}

TEST(SceneErrors, TabletopJointsAreVelocityControlled) {
  EXPECT_TRUE(Fails(with("/joints/1/control", "effort", tabletop_scene()), "joints[1].control",
                    "the tabletop models command every joint by velocity (Halm & Posa 2018, eq. (15)); joint \"py\" is "
                    "effort-controlled"));
  EXPECT_NO_THROW(parse(with("/joints/1/control", "velocity", tabletop_scene())));
}

TEST(SceneErrors, TabletopLimitSurfaceCannotBeComputed) {
  EXPECT_TRUE(Fails(with("/world/gravity", 0, tabletop_scene()), "model.A",
                    "cannot compute the limit surface of body \"object\": world.gravity must be > 0; give model.A"));
  const json capsule = json::parse(R"([{"type": "capsule", "a": [0, 0], "b": [0.1, 0], "radius": 0.02}])");
  EXPECT_TRUE(Fails(with("/bodies/0/shapes", capsule, tabletop_scene()), "model.A",
                    "bodies[0].shapes[0] is a capsule, whose support area is not modelled; give model.A"));
  const json segment = json::parse(R"([{"type": "segment", "a": [0, 0], "b": [0.1, 0]}])");
  EXPECT_TRUE(Fails(with("/bodies/0/shapes", segment, tabletop_scene()), "model.A", "it has no shape with area"));
  EXPECT_TRUE(Fails(with("/bodies/0/shapes", json::array(), tabletop_scene()), "model.A", "it has no shapes"));
  // Given model.A, none of this matters.
  EXPECT_NO_THROW(parse(with("/model/A", json::parse("[[1,0,0],[0,1,0],[0,0,1]]"),
                             with("/bodies/0/shapes", capsule, with("/world/gravity", 0, tabletop_scene())))));
}

TEST(SceneModel, TabletopLimitSurfaceComputedFromTheSupport) {
  for (const char* formulation : {"halm_posa_lcp", "perfect_velocity_lcp"}) {
    const Scene s = parse(with("/model/formulation", formulation, tabletop_scene()));
    const Model& m = *s.model;
    ASSERT_TRUE(formulation_params<HalmPosaParams>(m).limit_surface_A.has_value());
    EXPECT_TRUE(formulation_params<HalmPosaParams>(m).limit_surface_computed);
    // 0.1 m square box, 1 kg, support friction 0.5, g = 9.81 (quasistep/core/limit_surface.hpp).
    const double f = 0.5 * 1.0 * 9.81;
    const double m_max = f * 0.1 / 6 * (std::sqrt(2.0) + std::log(1 + std::sqrt(2.0)));
    const Eigen::Matrix3d& A = *formulation_params<HalmPosaParams>(m).limit_surface_A;
    EXPECT_NEAR(A(0, 0), 1 / (f * f), 1e-14 / (f * f));
    EXPECT_NEAR(A(1, 1), 1 / (f * f), 1e-14 / (f * f));
    EXPECT_NEAR(A(2, 2), 1 / (m_max * m_max), 1e-13 / (m_max * m_max));
    EXPECT_NEAR(A(0, 2), 0.0, 1e-12 * A(2, 2));  // the box is centered on the body origin
    EXPECT_NEAR(A(1, 2), 0.0, 1e-12 * A(2, 2));
    EXPECT_EQ(A, limit_surface_from_support(m, 0, 0.5, 9.81).A);
  }
  // An off-center shape couples force and torque at the body origin.
  const Scene off = parse(with("/bodies/0/shapes/0/pose", {0.02, 0, 0}, tabletop_scene()));
  const Eigen::Matrix3d& A = *formulation_params<HalmPosaParams>(*off.model).limit_surface_A;
  EXPECT_NEAR(A(1, 2), -0.02 * A(2, 2), 1e-12 * A(2, 2));
}

TEST(SceneModel, TabletopLimitSurfaceGivenIsKept) {
  const Scene s = parse(with("/model/A", json::parse("[[1,0,0],[0,1,0.1],[0,0.1,2]]"), tabletop_scene()));
  ASSERT_TRUE(formulation_params<HalmPosaParams>(*s.model).limit_surface_A.has_value());
  EXPECT_FALSE(formulation_params<HalmPosaParams>(*s.model).limit_surface_computed);
  EXPECT_EQ((*formulation_params<HalmPosaParams>(*s.model).limit_surface_A)(1, 2), 0.1);
  EXPECT_EQ((*formulation_params<HalmPosaParams>(*s.model).limit_surface_A)(2, 2), 2.0);
  // Not a tabletop formulation: its model holds no limit surface, and asking for one is a bug.
  const Scene vertical = parse(base_scene());
  EXPECT_EQ(std::any_cast<HalmPosaParams>(&vertical.model->params), nullptr);
  EXPECT_THROW((void)formulation_params<HalmPosaParams>(*vertical.model), std::logic_error);
  EXPECT_FALSE(formulation_params_or_default<HalmPosaParams>(*vertical.model).limit_surface_A.has_value());
}

}  // namespace
TEST(SceneModel, PangTedrakeElasticBoundVariant) {
  json s = with("/model", json::parse(R"({"formulation": "pang_tedrake_miqp", "stiffness": 1e4})"));
  EXPECT_FALSE(formulation_params<PangTedrakeMiqpParams>(*parse(s).model).elastic_bound_previous);
  s["model"]["elastic_bound"] = "previous";
  EXPECT_TRUE(formulation_params<PangTedrakeMiqpParams>(*parse(s).model).elastic_bound_previous);
  s["model"]["elastic_bound"] = "later";
  EXPECT_TRUE(Fails(s, "model.elastic_bound", "is not one of: current, previous"));
}

namespace {

/// A vertical scene: a ground half-plane and n free disks in a row, contacts "auto".
json disks(int n, const std::string& formulation = "trinkle_lcp") {
  json s = json::parse(R"({"format": 1, "world": {"type": "vertical"}, "step": {"h": 0.01, "steps": 1},
    "contacts": {"friction": 0.5},
    "bodies": [{"name": "ground", "kind": "fixed", "shapes": [{"type": "half_plane", "normal": [0, 1]}]}]})");
  s["model"] = {{"formulation", formulation}};
  if (formulation == "anitescu_qp") s["model"]["mode"] = "quasistatic";
  for (int i = 0; i < n; ++i)
    s["bodies"].push_back({{"name", "disk" + std::to_string(i)}, {"kind", "free"}, {"mass", 1}, {"inertia", 1e-3},
                           {"pose", {0.11 * i, 0.05, 0}}, {"shapes", {{{"type", "disk"}, {"radius", 0.05}}}}});
  return s;
}

}  // namespace

TEST(SceneSize, ThousandDisksAreRefusedBeforeAnyPairIsBuilt) {
  // 1,001 bodies: 500,500 slots x 3,000 DOFs; J_n and J_t alone need 22.4 GiB.
  EXPECT_TRUE(Fails(disks(1000), "contacts",
                    "1001 bodies give 500500 contact slots with 3000 DOFs: the contact Jacobians (2 x slots x DOFs "
                    "doubles) would need 22.4 GiB"));
  EXPECT_TRUE(Fails(disks(1000), "contacts", "more than the limit of 4.0 GiB per world"));
}

TEST(SceneSize, TheLargestBufferOfTheFormulationIsNamed) {
  // anitescu_qp holds a (2 x slots)^2 LCP matrix: 200 disks (20,100 slots) need 12 GiB for it.
  EXPECT_TRUE(Fails(disks(200, "anitescu_qp"), "contacts", "anitescu_qp's LCP matrix ((2 x slots)^2 doubles) would need 12.0 GiB"));
  // Listed pairs are counted too (at contacts.pairs): every disk against every other.
  json s = disks(200, "anitescu_qp");
  s["contacts"]["pairs"] = json::array();
  for (int i = 0; i < 200; ++i)
    for (int j = i + 1; j < 200; ++j)
      s["contacts"]["pairs"].push_back({{"bodies", {"disk" + std::to_string(i), "disk" + std::to_string(j)}}});
  EXPECT_TRUE(Fails(s, "contacts.pairs", "201 bodies give 19900 contact slots with 600 DOFs: anitescu_qp's LCP matrix"));
  json& listed = s["contacts"]["pairs"];
  listed.erase(listed.begin() + 100, listed.end());  // a hundred pairs are fine
  EXPECT_EQ(parse(s).model->n_slots(), 100);
}

TEST(SceneSize, ModerateScenesStillWork) {
  const Scene s = parse(disks(50));
  EXPECT_EQ(s.model->n_slots(), 50 * 49 / 2 + 50);
  EXPECT_EQ(s.model->pairs.size(), 50u * 49u / 2u + 50u);
  const Scene a = parse(disks(50, "anitescu_qp"));
  EXPECT_EQ(a.model->n_slots(), 50 * 49 / 2 + 50);
}

namespace {

/// The scene with a chain of n more prismatic joints, each link the child of the one
/// before: world -> l0 -> l1 ...
std::string numbered(char prefix, int i) {
  std::string s(1, prefix);  // appended: GCC 12 warns falsely (-Wrestrict) on "l" + std::string
  s += std::to_string(i);
  return s;
}

json chain(int n, json scene) {
  if (!scene.contains("joints")) scene["joints"] = json::array();
  for (int i = 0; i < n; ++i) {
    scene["bodies"].push_back({{"name", numbered('l', i)}, {"kind", "linked"}});
    scene["joints"].push_back({{"name", numbered('j', i)}, {"type", "prismatic"},
                               {"parent", i ? numbered('l', i - 1) : std::string("world")}, {"child", numbered('l', i)}});
  }
  scene.erase("commands");
  return scene;
}

}  // namespace

TEST(SceneSize, LongJointChainsAreReadWithoutDeepRecursion) {
  // 100,000 links: the cycle check walked every chain once per joint (10^10 steps) and the
  // body order recursed 100,000 deep.
  json s = chain(100000, disks(1));
  const Scene sc = parse(s);
  const Model& m = *sc.model;
  ASSERT_EQ(m.body_order.size(), m.bodies.size());
  for (size_t i = 0; i < m.body_order.size(); ++i) EXPECT_EQ(m.body_order[i], static_cast<int>(i)) << i;
  // A cycle is still found, at the first joint on it.
  json cyc = chain(3, disks(1));
  cyc["joints"][0]["parent"] = "l2";
  EXPECT_TRUE(Fails(cyc, "joints[0].parent", "the joints form a cycle through joint \"j0\""));
}

TEST(SceneSize, HalmPosaGainMatrixIsCheckedBeforeItIsBuilt) {
  // 25,000 velocity-controlled joints: B (n_a x n_a doubles) would need 4.7 GiB.
  EXPECT_TRUE(Fails(chain(25000, tabletop_scene()), "model",
                    "the gain matrix B of 25002 velocity-controlled joints would need 4.7 GiB"));
}

namespace {

/// In a death test's child: parse with the heap limited to 300 MB; exit 3 with the message
/// on a SceneError, 0 when the scene was read.
[[noreturn]] void parse_with_small_heap(const std::string& text) {
  rlimit limit{};
  limit.rlim_cur = limit.rlim_max = 300u << 20;
  setrlimit(RLIMIT_DATA, &limit);
  try {
    (void)parse_scene(text);
  } catch (const SceneError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    std::exit(3);
  }
  std::exit(0);
}

}  // namespace

TEST(SceneSize, OutOfMemoryWhileReadingIsASceneError) {
  if (test::kAddressSanitizer) GTEST_SKIP() << "AddressSanitizer reserves more address space than the limit below";
  // A 40 MB scene takes about 600 MB as a document; with the heap limited to 300 MB the
  // reader must fail with a SceneError, not abort with std::bad_alloc.
  json s = disks(1);
  std::string text = s.dump();
  text.pop_back();  // reopen the top-level object
  text += ", \"note\": [";
  for (int i = 0; text.size() < (40u << 20); ++i) text += i ? ", [1, 2, {\"a\": [3]}]" : "[1, 2, {\"a\": [3]}]";
  text += "]}";
  EXPECT_EXIT(parse_with_small_heap(text), ::testing::ExitedWithCode(3), "out of memory while reading [0-9]+ bytes of JSON");
}

TEST(SceneSize, AutoPairsKeepTheirOrderAmongManyFixedBodies) {
  // Fixed bodies pair only with moving ones; the pairs come in (i, j) order, i < j.
  json s = disks(3);
  for (int i = 0; i < 4; ++i)
    s["bodies"].push_back({{"name", "post" + std::to_string(i)}, {"kind", "fixed"}, {"pose", {1.0 + i, 0, 0}},
                           {"shapes", {{{"type", "box"}, {"size", {0.1, 0.1}}}}}});
  s["bodies"].push_back({{"name", "ghost"}, {"kind", "fixed"}});  // no shapes: no pairs
  const Scene sc = parse(s);
  const Model& m = *sc.model;
  std::vector<std::pair<int, int>> got, want;
  for (const ContactPair& p : m.pairs) got.emplace_back(std::min(p.body_a, p.body_b), std::max(p.body_a, p.body_b));
  for (int i = 0; i < 8; ++i)
    for (int j = i + 1; j < 8; ++j)
      if (!(m.bodies[i].kind == BodyKind::fixed && m.bodies[j].kind == BodyKind::fixed)) want.emplace_back(i, j);
  EXPECT_EQ(got, want);
  // A box against a disk is one slot (the disk's center).
  EXPECT_EQ(m.n_slots(), static_cast<int>(want.size()));
}

}  // namespace qs::scene_test
