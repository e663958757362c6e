// The formulation table (quasistep/core/formulation_table.hpp): one row per formulation,
// and the scene reader, initial_state, make_stepper and the batch engine agree with it.
#include "quasistep/core/formulation_table.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <string>

#include "quasistep/batch/batch_stepper.hpp"
#include "quasistep/core/formulations/anitescu_qp/anitescu_qp.hpp"
#include "quasistep/core/scene.hpp"
#include "quasistep/core/stepper.hpp"
#include "tests/support/example_json.hpp"

namespace qs::formulation_table_test {
namespace {

constexpr Formulation kAll[] = {Formulation::trinkle_lcp,   Formulation::perfect_velocity_lcp,
                                Formulation::halm_posa_lcp, Formulation::pang_tedrake_miqp,
                                Formulation::anitescu_qp,   Formulation::ucp,
                                Formulation::ecp_ncp};

/// One scene of every formulation: examples where there is one, otherwise an edited example.
std::map<Formulation, Scene> scene_of_every_formulation() {
  std::map<Formulation, Scene> out;
  for (const char* file : {"pang_tedrake_gripper.json", "halm_posa_push.json", "pang_tedrake_grasp.json",
                           "anitescu_grasp.json", "ecp_desk.json"}) {
    Scene s = load_scene_file(std::string(QUASISTEP_SOURCE_DIR) + "/examples/" + file);
    const Formulation f = s.model->formulation;
    out.emplace(f, std::move(s));
  }
  out.emplace(Formulation::ucp,
              load_scene_file(std::string(QUASISTEP_SOURCE_DIR) + "/tests/scenes/two_link_arms.json"));
  nlohmann::json push = test::example_json("halm_posa_push.json");
  push["model"] = {{"formulation", "perfect_velocity_lcp"}};
  push["model"]["A"] = nlohmann::json::parse("[[1, 0, 0], [0, 1, 0], [0, 0, 1]]");
  out.emplace(Formulation::perfect_velocity_lcp, parse_scene(push.dump()));
  return out;
}

TEST(FormulationTable, HasOneRowPerFormulationInEnumerationOrderWithDistinctNames) {
  // The library's own rows come first (a test program may register more after them:
  // registered_formulation_test.cpp).
  const auto table = formulation_table().first(std::size(kAll));
  std::set<std::string> names;
  for (std::size_t i = 0; i < table.size(); ++i) {
    EXPECT_EQ(table[i].id, kAll[i]);
    EXPECT_EQ(&formulation_info(kAll[i]), &table[i]);
    EXPECT_FALSE(table[i].name.empty());
    EXPECT_FALSE(table[i].reference.empty()) << table[i].name;
    EXPECT_TRUE(names.insert(std::string(table[i].name)).second) << table[i].name;
    EXPECT_EQ(table[i].time_stepping, table[i].make_stepper != nullptr) << table[i].name;
    EXPECT_NE(table[i].memory_size, nullptr) << table[i].name;
    EXPECT_NE(table[i].read_params, nullptr) << table[i].name;
  }
}

TEST(FormulationTable, NamesAndWorldsAreTheOnesScenesAndOutputsUse) {
  for (const FormulationInfo& f : formulation_table()) {
    EXPECT_EQ(to_string(f.id), f.name);
    for (WorldType w : {WorldType::vertical, WorldType::tabletop, WorldType::body_on_plane})
      EXPECT_EQ(formulation_applies(f.id, w), w == f.world) << f.name << " in " << to_string(w);
  }
  // The original mapping of formulations to worlds (docs/scene-format.md).
  EXPECT_EQ(formulation_info(Formulation::trinkle_lcp).world, WorldType::vertical);
  EXPECT_EQ(formulation_info(Formulation::halm_posa_lcp).world, WorldType::tabletop);
  EXPECT_EQ(formulation_info(Formulation::ecp_ncp).world, WorldType::body_on_plane);
  EXPECT_EQ(formulation_info(Formulation::ucp).world, WorldType::vertical);
}

TEST(FormulationTable, TheSceneReaderKnowsEveryRowByItsNameAndListsThemAll) {
  const auto scenes = scene_of_every_formulation();
  ASSERT_EQ(scenes.size(), std::size(kAll));
  for (const auto& [f, scene] : scenes) EXPECT_EQ(scene.model->formulation, f);

  nlohmann::json j = test::example_json("pang_tedrake_gripper.json");
  j["model"] = {{"formulation", "lcp_of_the_future"}};
  try {
    parse_scene(j.dump());
    FAIL() << "an unknown formulation was accepted";
  } catch (const SceneError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("model.formulation"), std::string::npos) << what;
    for (const FormulationInfo& f : formulation_table())
      EXPECT_NE(what.find(std::string(f.name)), std::string::npos) << what;
  }
}

TEST(FormulationTable, InitialStatesCarryTheRowsMemory) {
  for (const auto& [f, scene] : scene_of_every_formulation()) {
    const Model& m = *scene.model;
    const FormulationInfo& info = formulation_info(f);
    const State s = initial_state(m);
    EXPECT_EQ(s.memory.size(), info.memory_size(m)) << info.name;
    EXPECT_EQ(step_memory_size(m), info.memory_size(m)) << info.name;
    Eigen::VectorXd start(info.memory_size(m));
    info.start_memory(m, s.q.data(), start.data());
    for (Eigen::Index i = 0; i < s.memory.size(); ++i) ASSERT_EQ(s.memory[i], start[i]) << info.name;
  }
  // The formulations whose steppers carry something between steps, in these scenes.
  const auto scenes = scene_of_every_formulation();
  const State miqp = initial_state(*scenes.at(Formulation::pang_tedrake_miqp).model);
  ASSERT_GT(miqp.memory.size(), 0);
  EXPECT_TRUE(miqp.memory.array().isInf().all());  // no previous step: no bound, no warm start, no memo
  const Model& anitescu = *scenes.at(Formulation::anitescu_qp).model;
  const State a = initial_state(anitescu);
  ASSERT_EQ(a.memory.size(), anitescu.n_a + 2 * anitescu.n_slots());  // quasi-dynamic: q̄_a, then beta
  // q̄_a(0) = q_a(0), and a cold warm start.
  for (int k = 0; k < anitescu.n_a; ++k) EXPECT_EQ(a.memory[AnitescuQp::kMemoryReference + k], a.q[anitescu.n_u + k]);
  for (Eigen::Index i = anitescu.n_a; i < a.memory.size(); ++i) EXPECT_EQ(a.memory[i], 0.0);
  EXPECT_GT(initial_state(*scenes.at(Formulation::ecp_ncp).model).memory.size(), 0);
}

TEST(FormulationTable, TimeSteppingRowsBuildTheirStepperAndRunInABatch) {
  for (const auto& [f, scene] : scene_of_every_formulation()) {
    const Model& m = *scene.model;
    const FormulationInfo& info = formulation_info(f);
    const std::unique_ptr<Stepper> st = make_stepper(m);
    EXPECT_EQ(st != nullptr, info.time_stepping) << info.name;
    const std::string why = batch_unsupported_reason(m);
    EXPECT_EQ(why.empty(), info.time_stepping) << info.name << ": " << why;
    if (!info.time_stepping) {
      EXPECT_NE(why.find(std::string(info.name)), std::string::npos) << why;
    }
  }
}

}  // namespace
}  // namespace qs::formulation_table_test
