// The CLI's contract: exit codes, one-line errors, provenance, no output file that looks
// complete after a failure.
#include "tools/cli/cli.hpp"

#include "quasistep/core/derivatives.hpp"
#include "quasistep/core/formulations/pang_tedrake_miqp/pang_tedrake_miqp.hpp"
#include "quasistep/core/stepper.hpp"
#include "quasistep/core/scene.hpp"
#include "quasistep/kernels/lane.hpp"
#include "quasistep/version.hpp"
#include "tests/support/cli_run.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace qs::cli::cli_test {
namespace {

namespace fs = std::filesystem;

const std::string kGripper = std::string(QUASISTEP_SOURCE_DIR) + "/examples/pang_tedrake_gripper.json";

using Result = qs::test::CliResult;
Result run(std::vector<std::string> args) { return qs::test::run_cli(std::move(args)); }
int lines(const std::string& s) { return qs::test::count_lines(s); }

class CliTest : public qs::test::TempDirTest {
 protected:
  CliTest() : TempDirTest("quasistep_cli_test_") {}
};

TEST_F(CliTest, ValidateAcceptsTheGripperAndSummarisesIt) {
  const Result r = run({"validate", kGripper});
  EXPECT_EQ(r.code, kOk) << r.err;
  EXPECT_NE(r.out.find("ok: "), std::string::npos);
  EXPECT_NE(r.out.find("u = [cylinder.x, cylinder.y], a = [x_l, x_r, y_g]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("trinkle_lcp"), std::string::npos);
  EXPECT_TRUE(r.err.empty());
}

TEST_F(CliTest, ValidateSummarisesAPlanSection) {
  const Result r = run({"validate", std::string(QUASISTEP_SOURCE_DIR) + "/examples/plan_push.json"});
  EXPECT_EQ(r.code, kOk) << r.err;
  EXPECT_NE(r.out.find("  plan      goal: puck within (0.02, 0.02, 3.15) of (0.3, 0.1, 0); controls held 2 to 16 "
                       "steps; 1 keep-out region\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(run({"validate", kGripper}).out.find("  plan "), std::string::npos);
}

#ifndef QUASISTEP_HAVE_OMPL
TEST_F(CliTest, PlanWithoutOmplSaysSo) {
  const Result r = run({"plan", std::string(QUASISTEP_SOURCE_DIR) + "/examples/plan_push.json", "--out", path("p.csv")});
  EXPECT_EQ(r.code, kInputError);
  EXPECT_NE(r.err.find("this build has no OMPL planner"), std::string::npos) << r.err;
}
#endif

/// An example's text with `from` replaced by `to` (each must occur).
std::string edited(const std::string& example, const std::vector<std::pair<std::string, std::string>>& edits) {
  std::ifstream in(std::string(QUASISTEP_SOURCE_DIR) + "/examples/" + example);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const auto& [from, to] : edits) {
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
  }
  return text;
}

TEST_F(CliTest, ValidateEchoesWhichGainWentToWhichJoint) {
  const Result r = run({"validate", std::string(QUASISTEP_SOURCE_DIR) + "/examples/mc_grasp.json"});
  EXPECT_EQ(r.code, kOk) << r.err;
  EXPECT_NE(r.out.find("  gains     stiffness: x_l 2000 N/m, x_r 2000 N/m, y_g 10000 N/m (model.stiffness, in command "
                       "order)\n"),
            std::string::npos)
      << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;  // no warning: its parameters run in lanes
  EXPECT_EQ(run({"validate", kGripper}).out.find("  gains "), std::string::npos);  // trinkle_lcp has none
}

TEST_F(CliTest, ValidateWarnsOfBodiesThatOverlapAtTheStart) {
  // The cylinder 1 cm into the table: valid, but probably not meant.
  const std::string sunk = file("sunk.json", edited("anitescu_grasp.json", {{R"("pose": [0, 0.05, 0])", R"("pose": [0, 0.04, 0])"}}));
  const Result r = run({"validate", sunk});
  EXPECT_EQ(r.code, kOk) << r.err;
  EXPECT_NE(r.out.find("ok: "), std::string::npos);
  EXPECT_EQ(r.err, "validate: warning: the bodies overlap at the start: slot 2 (ground/cylinder) has a gap of -0.01 m; "
                   "check the initial poses and joint positions (validate --contacts lists every slot's gap)\n");
  EXPECT_TRUE(run({"validate", std::string(QUASISTEP_SOURCE_DIR) + "/examples/anitescu_grasp.json"}).err.empty());
}

TEST_F(CliTest, ValidateWarnsOfStudyParametersThatLeaveTheLanes) {
  // The table's height varies per sample: anitescu_qp's lanes do not carry a fixed body's pose.
  const std::string study = file("table.json", edited("mc_grasp.json", {{R"("parameters": [)", R"("parameters": [
      {"parameter": "bodies.ground.pose.y", "distribution": "uniform", "low": -0.001, "high": 0.001},)"}}));
  const Result r = run({"validate", study});
  EXPECT_EQ(r.code, kOk) << r.err;
  EXPECT_EQ(r.err, "validate: warning: parameter \"bodies.ground.pose.y\" varies per world and only friction, masses, "
                   "sizes, joint stiffness, and start poses run in lanes: the study's samples step one world at a time "
                   "per thread, typically 2 to 5 times slower than in the lanes (docs/performance.md)\n");
  // A varied mass, size or stiffness stays in the lanes: no warning.
  for (const char* p : {"bodies.cylinder.mass", "bodies.cylinder.scale", "joints.x_l.stiffness"}) {
    const std::string ok = file("ok.json", edited("mc_grasp.json", {{R"("parameters": [)", std::string(R"("parameters": [
      {"parameter": ")") + p + R"(", "distribution": "uniform", "low": 0.9, "high": 1.1},)"}}));
    const Result quiet = run({"validate", ok});
    EXPECT_EQ(quiet.code, kOk) << quiet.err;
    EXPECT_TRUE(quiet.err.empty()) << p << ": " << quiet.err;
  }
}

TEST_F(CliTest, ValidateContactsListsEverySlot) {
  const Result r = run({"validate", kGripper, "--contacts"});
  EXPECT_EQ(r.code, kOk);
  EXPECT_NE(r.out.find("left_finger/cylinder"), std::string::npos);
  EXPECT_NE(r.out.find("ground/cylinder"), std::string::npos);
}

TEST_F(CliTest, BadSceneIsOneLineNamingTheFieldAndExitsOne) {
  const std::string bad = file("bad.json", R"({"format": 1, "world": {"type": "vertical"},
    "model": {"formulation": "trinkle_lcp"},
    "bodies": [{"name": "b", "kind": "free", "mass": 1, "shapes": [{"type": "disk", "radius": -1}]}]})");
  const Result r = run({"validate", bad});
  EXPECT_EQ(r.code, kInputError);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("bodies[0].shapes[0].radius: must be > 0"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST_F(CliTest, MalformedJsonAndMissingFileAreOneLineErrors) {
  const Result malformed = run({"validate", file("m.json", "{\"format\": 1,,}")});
  EXPECT_EQ(malformed.code, kInputError);
  EXPECT_EQ(lines(malformed.err), 1) << malformed.err;
  EXPECT_NE(malformed.err.find("malformed JSON"), std::string::npos);
  const Result missing = run({"validate", path("nope.json")});
  EXPECT_EQ(missing.code, kInputError);
  EXPECT_NE(missing.err.find("cannot read scene file"), std::string::npos);
}

TEST_F(CliTest, UsageErrorsExitOne) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {}, {"frobnicate"}, {"run"}, {"run", kGripper, "--steps", "-1"}, {"validate", kGripper, "--threads", "x"},
           {"validate", kGripper, "--bogus"}}) {
    const Result r = run(args);
    EXPECT_EQ(r.code, kInputError) << (args.empty() ? "(none)" : args[0]);
    EXPECT_EQ(lines(r.err), 1) << r.err;
  }
}

TEST_F(CliTest, HelpAndVersionExitZero) {
  EXPECT_EQ(run({"--help"}).code, kOk);
  EXPECT_EQ(run({"run", "--help"}).code, kOk);
  const Result v = run({"--version"});
  EXPECT_EQ(v.code, kOk);
  EXPECT_NE(v.out.find(std::string("quasistep ") + kVersion + "\n"), std::string::npos);
  EXPECT_NE(v.out.find("lanes: " + std::to_string(kLaneWidth) + " worlds per lane group"), std::string::npos);
  EXPECT_NE(v.out.find("optional parts: Python module "), std::string::npos);
  EXPECT_NE(v.out.find("MuJoCo comparison "), std::string::npos);
}

TEST_F(CliTest, ThreadsIsAcceptedByEverySubcommand) {
  const std::string src = QUASISTEP_SOURCE_DIR;
  const std::string lcp = file("lcp.json", R"({"M": [[1]], "q": [-1]})");
  const std::string csv = path("s.csv");
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"validate", kGripper},
           {"run", kGripper, "--steps", "0"},
           {"lcp", lcp},
           {"ucp", src + "/tests/data/ucp/data_set_1.json"},
           {"export-miqp", src + "/examples/pang_tedrake_grasp.json", "--step", "1", "--out", path("x.lp")},
           {"throughput", kGripper, "--worlds", "4", "--steps", "2"},
           {"mc", "--samples", "4", "--out", csv},
           {"mc-merge", csv},
#ifdef QUASISTEP_HAVE_OMPL
           {"plan", src + "/examples/plan_pivot.json", "--out", path("p.csv"), "--max-propagations", "200000", "--time", "600"},
#endif
       }) {
    for (const char* threads : {"1", "2"}) {
      std::vector<std::string> a = args;
      a.insert(a.end(), {"--threads", threads});
      const Result r = run(a);
      EXPECT_EQ(r.code, kOk) << args[0] << ": " << r.err;
    }
  }
}

TEST_F(CliTest, RunZeroStepsWritesRowZeroWithProvenance) {
  const std::string out = path("traj.csv"), forces = path("forces.csv");
  const Result r = run({"run", kGripper, "--steps", "0", "--out", out, "--forces", forces});
  ASSERT_EQ(r.code, kOk) << r.err;
  EXPECT_EQ(lines(r.err), 1);  // the summary
  std::ifstream in(out);
  std::string provenance, header, row, extra;
  std::getline(in, provenance);
  std::getline(in, header);
  std::getline(in, row);
  EXPECT_FALSE(std::getline(in, extra));
  EXPECT_EQ(provenance.rfind("# quasistep ", 0), 0u) << provenance;
  EXPECT_NE(provenance.find("scene_hash="), std::string::npos);
  EXPECT_NE(provenance.find("model=trinkle_lcp"), std::string::npos);
  EXPECT_NE(provenance.find("seed="), std::string::npos);
  EXPECT_EQ(header, "step,t,cylinder.x,cylinder.y,x_l,x_r,y_g");
  EXPECT_EQ(row, "0,0,0,0.050000000000000003,-0.070000000000000007,0.070000000000000007,0.01");
  EXPECT_TRUE(fs::exists(forces));
  EXPECT_FALSE(fs::exists(out + ".partial"));
}

TEST_F(CliTest, RunWithoutAStepperLeavesNoOutputFile) {
  // ucp has no stepper in this build: refused before anything is written.
  const std::string scene = file("ucp.json", R"({"format": 1, "world": {"type": "vertical"},
    "model": {"formulation": "ucp"}, "step": {"h": 0.01, "steps": 3},
    "bodies": [{"name": "b", "kind": "free", "mass": 1, "shapes": [{"type": "disk", "radius": 1}]}]})");
  const std::string out = path("traj.csv");
  const Result r = run({"run", scene, "--out", out});
  EXPECT_EQ(r.code, kInputError);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("model.formulation"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(out + ".partial"));
}

std::vector<std::string> data_rows(const std::string& file) {
  std::ifstream in(file);
  std::vector<std::string> rows;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') rows.push_back(line);
  return rows;  // header first
}

/// The comma-separated cells of one CSV line (no quoting: the CLI's CSVs have none).
std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream in(line);
  for (std::string cell; std::getline(in, cell, ',');) out.push_back(cell);
  if (!line.empty() && line.back() == ',') out.emplace_back();
  return out;
}

TEST_F(CliTest, RunStepsTheGripperAndWritesTrajectoryAndForces) {
  const std::string out = path("traj.csv"), forces = path("forces.csv");
  const Result r = run({"run", kGripper, "--out", out, "--forces", forces});
  ASSERT_EQ(r.code, kOk) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("60 of 60 steps of trinkle_lcp"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("worst residual"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("worst penetration"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("0 failed"), std::string::npos) << r.err;
  const std::vector<std::string> traj = data_rows(out);
  ASSERT_EQ(traj.size(), 62u);  // header, rows 0..60
  EXPECT_EQ(traj[61].rfind("60,0.6", 0), 0u) << traj[61];
  const std::vector<std::string> f = data_rows(forces);
  EXPECT_EQ(f[0], "step,t,slot,pair,phi,normal_impulse,tangent_impulse,status");
  EXPECT_EQ(f.size(), 1u + 60 * 3);  // every slot of the gripper is active (no margin)
  EXPECT_EQ(f[1].rfind("1,0.01,0,left_finger/cylinder,", 0), 0u) << f[1];
  EXPECT_NE(f[1].find(",solved"), std::string::npos) << f[1];
}

TEST_F(CliTest, RunDerivativesWritesEveryStepsAAndBAsTheLibraryComputesThem) {
  // The grasp (Anitescu): x = [q; the impedance references], u the three joint velocities.
  const std::string scene = std::string(QUASISTEP_SOURCE_DIR) + "/examples/anitescu_grasp.json";
  const std::string file = path("d.csv");
  const Result r = run({"run", scene, "--steps", "25", "--derivatives", file});
  ASSERT_EQ(r.code, kOk) << r.err;
  EXPECT_NE(r.err.find("; derivatives in " + file), std::string::npos) << r.err;
  const std::vector<std::string> rows = data_rows(file);
  ASSERT_EQ(rows.size(), 26u);  // header, steps 1..25
  const std::vector<std::string> header = cells(rows[0]);
  // 8 state entries (5 DOFs, 3 references) and 3 commands: 64 + 24 derivative columns.
  ASSERT_EQ(header.size(), 2u + 64u + 24u + 3u);
  EXPECT_EQ(header[2], "dcylinder.x+/dcylinder.x");
  EXPECT_EQ(header[2 + 7], "dcylinder.x+/dy_g.reference");
  EXPECT_EQ(header[2 + 64], "dcylinder.x+/du_x_l");
  EXPECT_EQ(header[2 + 64 + 23], "dy_g.reference+/du_y_g");
  EXPECT_EQ(header.back(), "status");
  // Every row is the library's StepDerivatives of that step, to the last digit.
  const Scene sc = load_scene_file(scene);
  const Model& m = *sc.model;
  auto stepper = make_stepper(m);
  State s = initial_state(m);
  StepDerivatives d;
  for (int l = 1; l <= 25; ++l) {
    ASSERT_EQ(stepper->step(m, WorldParams(m), s, d), Status::solved);
    const std::vector<std::string> row = cells(rows[static_cast<size_t>(l)]);
    ASSERT_EQ(row.size(), header.size());
    EXPECT_EQ(std::stoi(row[0]), l);
    for (int i = 0; i < 8; ++i)
      for (int j = 0; j < 8; ++j) EXPECT_EQ(std::stod(row[2 + 8 * i + j]), d.A(i, j)) << l << " " << i << " " << j;
    for (int i = 0; i < 8; ++i)
      for (int a = 0; a < 3; ++a) EXPECT_EQ(std::stod(row[66 + 3 * i + a]), d.B(i, a)) << l << " " << i << " " << a;
    EXPECT_EQ(row[row.size() - 3], d.degenerate ? "1" : "0");
    EXPECT_EQ(row.back(), "solved");
  }
}

TEST_F(CliTest, RunDerivativesOfAFormulationWithoutThemIsRefusedAndWritesNothing) {
  const std::string file = path("d.csv");
  const Result r =
      run({"run", std::string(QUASISTEP_SOURCE_DIR) + "/examples/ecp_box_tip.json", "--derivatives", file});
  EXPECT_EQ(r.code, kInputError);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("--derivatives: ecp_ncp has no step derivatives"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(file));
}

TEST_F(CliTest, RunDerivativesOnStandardOutputLeavesOutTheFinalState) {
  const Result r = run({"run", std::string(QUASISTEP_SOURCE_DIR) + "/examples/halm_posa_push.json", "--steps", "2",
                        "--derivatives", "-"});
  ASSERT_EQ(r.code, kOk) << r.err;
  EXPECT_EQ(r.out.find("final state"), std::string::npos) << r.out;
  EXPECT_EQ(lines(r.out), 4);  // provenance, header, two steps
  EXPECT_NE(r.out.find("ddisk.x+/ddisk.theta"), std::string::npos);
}

TEST_F(CliTest, RunLogBarrierWeightStepsAsTheSceneFieldAndSaysSo) {
  // --log-barrier-weight K: the steps of the scene with model.log_barrier_weight = K, bitwise,
  // and the outputs' provenance says the run was smoothed.
  const std::string scene = std::string(QUASISTEP_SOURCE_DIR) + "/examples/anitescu_box_push.json";
  nlohmann::json edited = nlohmann::json::parse(std::ifstream(scene));
  edited["model"]["log_barrier_weight"] = 100;
  const std::string field = file("smoothed.json", edited.dump());
  const std::string a = path("a.csv"), b = path("b.csv");
  ASSERT_EQ(run({"run", scene, "--log-barrier-weight", "100", "--out", a}).code, kOk);
  ASSERT_EQ(run({"run", field, "--out", b}).code, kOk);
  const std::vector<std::string> ra = data_rows(a), rb = data_rows(b);
  ASSERT_EQ(ra.size(), rb.size());
  for (std::size_t k = 0; k < ra.size(); ++k) EXPECT_EQ(ra[k], rb[k]);
  std::ifstream in(a);
  std::string provenance;
  std::getline(in, provenance);
  EXPECT_NE(provenance.find(" log_barrier_weight=100"), std::string::npos) << provenance;
  // Not the unsmoothed run.
  ASSERT_EQ(run({"run", scene, "--out", path("c.csv")}).code, kOk);
  EXPECT_NE(data_rows(path("c.csv")).back(), ra.back());
  // Another formulation, or a kappa that is not > 0: one line, exit 1.
  Result r = run({"run", std::string(QUASISTEP_SOURCE_DIR) + "/examples/halm_posa_push.json", "--log-barrier-weight", "1"});
  EXPECT_EQ(r.code, kInputError);
  EXPECT_EQ(r.err, "quasistep: --log-barrier-weight: model.log_barrier_weight: the smoothed step is anitescu_qp's; this "
                   "scene's formulation is halm_posa_lcp\n");
  r = run({"run", scene, "--log-barrier-weight", "-1"});
  EXPECT_EQ(r.code, kInputError);
  EXPECT_NE(r.err.find("must be a finite number > 0"), std::string::npos) << r.err;
}

TEST_F(CliTest, RunHalmPosaLabelsImpulsesAsScaledByK) {
  const std::string forces = path("forces.csv");
  const Result r = run({"run", std::string(QUASISTEP_SOURCE_DIR) + "/examples/halm_posa_push.json", "--steps", "3",
                        "--forces", forces});
  ASSERT_EQ(r.code, kOk) << r.err;
  EXPECT_EQ(data_rows(forces)[0], "step,t,slot,pair,phi,normal_impulse_times_k,tangent_impulse_times_k,status");
}

TEST_F(CliTest, ValidateSaysWhereTheLimitSurfaceCameFrom) {
  const std::string push = std::string(QUASISTEP_SOURCE_DIR) + "/examples/halm_posa_push.json";
  EXPECT_NE(run({"validate", push}).out.find("A (body frame) = [1, 0, 0; 0, 1, 0; 0, 0, 1], given (model.A)"),
            std::string::npos);
  std::ifstream in(push);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const auto& [from, to] : {std::pair<std::string, std::string>{R"("A": [[1, 0, 0], [0, 1, 0], [0, 0, 1]],)", ""},
                                 {R"("gravity": 9.81})", R"("gravity": 10, "support_friction": 0.5})"}}) {
    const auto at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
  }
  // Disk of radius 1, mass 1: f_max = 0.5 * 1 * 10 = 5 N, m_max = f_max * 2/3 N m.
  const Result r = run({"validate", file("computed.json", text)});
  ASSERT_EQ(r.code, kOk) << r.err;
  EXPECT_NE(r.out.find("A (body frame) = [0.04, 0, 0; 0, 0.04, 0; 0, 0, 0.09], computed from mass, support friction and shape"),
            std::string::npos)
      << r.out;
}

TEST_F(CliTest, RunSaysWhenTheInitialStateOverlaps) {
  std::ifstream in(kGripper);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string from = R"("pose": [0, 0.05, 0])";
  const auto at = text.find(from);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, from.size(), R"("pose": [0, 0.049, 0])");  // 1 mm into the ground
  const Result r = run({"run", file("sunk.json", text), "--steps", "1"});
  EXPECT_NE(r.err.find("the initial state already overlaps by 0.001 m"), std::string::npos) << r.err;
}

TEST_F(CliTest, InfeasibleStepExitsTwoNamingStepAndCertificate) {
  // Pang & Tedrake 2018 command (29): squeezing on after contact. Step 21 has no solution.
  std::ifstream in(kGripper);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const std::string& j : {std::string("x_l"), std::string("x_r")}) {
    const std::string from = "\"" + j + "\": {\"velocity\": {\"breaks\": [0.2], \"values\": [" +
                             (j == "x_l" ? "0.1" : "-0.1") + ", 0.0]}}";
    const auto at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), "\"" + j + "\": {\"velocity\": " + (j == "x_l" ? "0.1" : "-0.1") + "}");
  }
  const std::string scene = file("squeeze.json", text);
  const std::string out = path("traj.csv"), forces = path("forces.csv");
  const Result r = run({"run", scene, "--out", out, "--forces", forces});
  EXPECT_EQ(r.code, kStepFailed);
  EXPECT_EQ(lines(r.err), 2) << r.err;  // the summary, then the failure
  EXPECT_NE(r.err.find("20 of 60 steps"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("step 21 (t = 0.2 to 0.21 s): infeasible: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("non-penetrating"), std::string::npos) << r.err;
  // The valid rows are kept, and the file says where and why it stops.
  const std::vector<std::string> traj = data_rows(out);
  EXPECT_EQ(traj.size(), 22u);  // header, rows 0..20
  std::ifstream t(out);
  std::string last, line;
  while (std::getline(t, line)) last = line;
  EXPECT_EQ(last.rfind("# stopped: step 21", 0), 0u) << last;
  const std::vector<std::string> f = data_rows(forces);
  EXPECT_NE(f.back().find(",infeasible"), std::string::npos) << f.back();
  EXPECT_EQ(f.back().rfind("21,", 0), 0u) << f.back();
}

TEST_F(CliTest, UnwritableOutputIsAnInputError) {
  const Result r = run({"run", kGripper, "--steps", "0", "--out", path("no/such/dir/traj.csv")});
  EXPECT_EQ(r.code, kInputError);
  EXPECT_NE(r.err.find("--out \""), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("does not exist"), std::string::npos) << r.err;
}

TEST_F(CliTest, RunWithoutOutPrintsTheFinalStateAfterItsSummary) {
  const Result r = run({"run", kGripper, "--steps", "3"});
  ASSERT_EQ(r.code, kOk) << r.err;
  EXPECT_NE(r.err.find("run: 3 of 3 steps of trinkle_lcp"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.rfind("final state (step 3, t = 0.03 s):\n  cylinder.x  ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("\n  y_g         0.013\n"), std::string::npos) << r.out;  // 0.01 m + 3 steps at 0.1 m/s
  EXPECT_EQ(lines(r.out), 6) << r.out;
  // With a trajectory file, or the forces CSV on standard output, nothing else goes there.
  EXPECT_TRUE(run({"run", kGripper, "--steps", "3", "--out", path("t.csv")}).out.empty());
  EXPECT_EQ(run({"run", kGripper, "--steps", "3", "--forces", "-"}).out.find("final state"), std::string::npos);
}

TEST_F(CliTest, StepsWithoutStepSectionNamesStepH) {
  const std::string scene = file("nostep.json", R"({"format": 1, "world": {"type": "vertical"},
    "model": {"formulation": "ucp"},
    "bodies": [{"name": "b", "kind": "free", "mass": 1, "shapes": [{"type": "disk", "radius": 1}]}]})");
  EXPECT_EQ(run({"run", scene, "--steps", "0"}).code, kOk);
  const Result r = run({"run", scene, "--steps", "3"});
  EXPECT_EQ(r.code, kInputError);
  EXPECT_NE(r.err.find("step.h"), std::string::npos) << r.err;
}

TEST_F(CliTest, LcpPrintsTheSolutionAsJson) {
  const std::string p = file("lcp.json", R"({"M": [[2, 1, 0], [1, 2, 1], [0, 1, 2]], "q": [-1, 1, -1]})");
  const Result r = run({"lcp", p});
  ASSERT_EQ(r.code, kOk) << r.err;
  EXPECT_EQ(r.out.rfind("{\"status\":\"solved\",\"z\":[0.5,0.0,0.5],\"w\":[0.0,2.0,0.0],\"pivots\":", 0), 0u) << r.out;
  EXPECT_TRUE(r.err.empty());
}

TEST_F(CliTest, LcpFarFromUnitScaleIsSolvedOrRefusedNeverWrong) {
  // M = [1e-12], q = [-1e-12] has the solution z = 1; absolute floors in the kernel's tests
  // once reported z = 0, w = -1e-12 as solved.
  Result r = run({"lcp", file("tiny.json", R"({"M": [[1e-12]], "q": [-1e-12]})")});
  ASSERT_EQ(r.code, kOk) << r.err;
  EXPECT_EQ(r.out.rfind("{\"status\":\"solved\",\"z\":[1.0],\"w\":[0.0],", 0), 0u) << r.out;
  // The same problem at 1e12 (stiffnesses in N/m): the same z.
  r = run({"lcp", file("huge.json", R"({"M": [[2e12, 1e12], [1e12, 2e12]], "q": [-1e12, -1e12]})")});
  ASSERT_EQ(r.code, kOk) << r.err;
  EXPECT_NE(r.out.find("\"status\":\"solved\""), std::string::npos) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_NEAR(j["z"][0].get<double>(), 1.0 / 3, 1e-12);
  EXPECT_NEAR(j["z"][1].get<double>(), 1.0 / 3, 1e-12);
}

TEST_F(CliTest, LcpWithFreeVariablesReportsAllOfThem) {
  const std::string p = file("mlcp.json", R"({"M": [[0, 1, -1], [1, 1, 0], [-1, 0, 1]], "q": [-1, 0.5, 0.25], "free": 1})");
  const Result r = run({"lcp", p});
  ASSERT_EQ(r.code, kOk) << r.err;
  EXPECT_NE(r.out.find("\"status\":\"solved\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"z\":[-1.5,1.0,0.0]"), std::string::npos) << r.out;
}

TEST_F(CliTest, LcpWithoutSolutionStillExitsZero) {
  const Result r = run({"lcp", file("none.json", R"({"M": [[-1]], "q": [-1]})")});
  EXPECT_EQ(r.code, kOk);
  EXPECT_NE(r.out.find("\"status\":\"not_found\",\"z\":null,\"w\":null"), std::string::npos) << r.out;
}

TEST_F(CliTest, LcpMethodLemkeIsTheDefaultByteForByte) {
  for (const char* text : {R"({"M": [[2, 1, 0], [1, 2, 1], [0, 1, 2]], "q": [-1, 1, -1]})", R"({"M": [[-1]], "q": [-1]})"}) {
    const std::string p = file("lcp.json", text);
    const Result plain = run({"lcp", p}), lemke = run({"lcp", p, "--method", "lemke"});
    EXPECT_EQ(plain.code, kOk);
    EXPECT_EQ(lemke.code, kOk);
    EXPECT_EQ(plain.out, lemke.out);
    EXPECT_EQ(plain.out.find("\"method\""), std::string::npos) << plain.out;
  }
}

TEST_F(CliTest, LcpExactProvesInfeasibilityWithACertificate) {
  const std::string p = file("none.json", R"({"M": [[-1]], "q": [-1]})");
  Result r = run({"lcp", p, "--method", "exact"});
  ASSERT_EQ(r.code, kOk) << r.err;
  EXPECT_EQ(r.out,
            "{\"status\":\"infeasible\",\"method\":\"exact\",\"z\":null,\"w\":null,\"residual\":0.0,\"nodes\":1,"
            "\"reason\":\"no solution: every leaf of the search is empty, each by a Farkas certificate (1 leaves, 1 "
            "nodes)\",\"certificate\":{\"free\":0,\"exact\":true,\"leaves\":[{\"z_zero\":[],\"w_zero\":[],\"y\":[1.0],"
            "\"exact\":true}]}}\n");
  // auto: Lemke first (a ray), then the same proof.
  r = run({"lcp", p, "--method", "auto"});
  ASSERT_EQ(r.code, kOk) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["method"], "exact");
  EXPECT_EQ(j["lemke_status"], "not_found");
  EXPECT_EQ(j["pivots"], 1);
  EXPECT_EQ(j["certificate"]["leaves"].size(), 1u);
}

TEST_F(CliTest, LcpAutoKeepsLemkesAnswerAndFallsBackPastItsLimit) {
  // Murty (1978): 1 on the diagonal, 2 below, q = -1; Lemke takes 2^n pivots.
  const auto murty = [&](int n) {
    std::string m = "[";
    for (int i = 0; i < n; ++i) {
      m += i ? ",[" : "[";
      for (int j = 0; j < n; ++j) m += std::string(j ? "," : "") + (j == i ? "1" : j < i ? "2" : "0");
      m += "]";
    }
    std::string q = "[";
    for (int i = 0; i < n; ++i) q += i ? ",-1" : "-1";
    return file("murty.json", "{\"M\": " + m + "], \"q\": " + q + "]}");
  };
  Result r = run({"lcp", murty(4), "--method", "auto"});
  ASSERT_EQ(r.code, kOk) << r.err;
  EXPECT_EQ(r.out.rfind("{\"status\":\"solved\",\"method\":\"lemke\",\"z\":[1.0,0.0,0.0,0.0],\"w\":[0.0,1.0,1.0,1.0],"
                       "\"residual\":",
                       0),
            0u)
      << r.out;
  EXPECT_NE(r.out.find(",\"pivots\":16}\n"), std::string::npos) << r.out;
  r = run({"lcp", murty(12), "--method", "auto"});  // 4096 pivots > the limit 1000 + 100 n
  ASSERT_EQ(r.code, kOk) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["status"], "solved");
  EXPECT_EQ(j["method"], "exact");
  EXPECT_EQ(j["lemke_status"], "iteration_limit");
  EXPECT_EQ(j["pivots"], 2200);
  EXPECT_EQ(j["z"][0], 1.0);
  for (int i = 1; i < 12; ++i) EXPECT_EQ(j["z"][i], 0.0);
  EXPECT_FALSE(j.contains("certificate"));
}

TEST_F(CliTest, LcpNodeLimitAndBadOptions) {
  const std::string p = file("inf.json", R"({"M": [[0, 0, 3], [1, 0, 2], [3, 1, 2]], "q": [1, -3, 1]})");
  Result r = run({"lcp", p, "--method", "exact"});
  ASSERT_EQ(r.code, kOk) << r.err;
  EXPECT_NE(r.out.find("\"status\":\"infeasible\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"nodes\":5"), std::string::npos) << r.out;
  // The node limit is an answer (exit 0), as for `ucp`.
  r = run({"lcp", p, "--method", "exact", "--node-limit", "2"});
  ASSERT_EQ(r.code, kOk) << r.err;
  EXPECT_EQ(r.out, "{\"status\":\"iteration_limit\",\"method\":\"exact\",\"z\":null,\"w\":null,\"residual\":0.0,"
                   "\"nodes\":2,\"reason\":\"node limit 2 reached without a solution or a proof\"}\n");
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"--method", "simplex"}, "--method: simplex not in {lemke,exact,auto}"},
      {{"--method", "exact", "--node-limit", "-1"}, "--node-limit: Value -1 not in range"},
      {{"--method", "exact", "--node-limit", "0"}, "--node-limit: Value 0 not in range"},
      {{"--method", "auto", "--node-limit", "x"}, "--node-limit"},
      {{"--node-limit", "5"}, "--node-limit 5: needs --method exact or auto"},
  };
  for (const auto& [args, fragment] : bad) {
    std::vector<std::string> a = {"lcp", p};
    a.insert(a.end(), args.begin(), args.end());
    r = run(a);
    EXPECT_EQ(r.code, kInputError) << fragment;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(fragment), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty());
  }
}

TEST_F(CliTest, LcpBadInputIsOneLineNamingTheField) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"M": [[1, 2]], "q": [1]})", "M[0]: must be a row of 1 numbers"},
      {R"({"M": [[1]], "q": [1, 2]})", "M: must be a 2 x 2 matrix"},
      {R"({"M": [[1]], "q": [1], "free": 2})", "free: must be <= n = 1"},
      {R"({"M": [[1]], "q": [1], "free": -1})", "free: must be >= 0"},
      {R"({"M": [], "q": []})", "q: must have at least 1 entries"},
      {R"({"M": [[1e999]], "q": [1]})", "malformed JSON"},
      {R"({"M": [["x"]], "q": [1]})", "M[0][0]: must be a number"},
      {R"({"M": [[1]], "q": [1], "extra": 0})", "extra: unknown field"},
      {R"({"M": [[1]]})", "q: missing"},
  };
  for (const auto& [text, fragment] : cases) {
    const Result r = run({"lcp", file("bad.json", text)});
    EXPECT_EQ(r.code, kInputError) << text;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(fragment), std::string::npos) << text << " -> " << r.err;
    EXPECT_TRUE(r.out.empty());
  }
  const std::string big = [] {
    std::string s = R"({"q": [)";
    for (int i = 0; i < 129; ++i) s += (i ? ",1" : "1");
    return s + "], \"M\": []}";
  }();
  const Result r = run({"lcp", file("big.json", big)});
  EXPECT_EQ(r.code, kInputError);
  EXPECT_NE(r.err.find("up to n = 128"), std::string::npos) << r.err;
}

TEST_F(CliTest, KeysAndNamesWithLineBreaksGiveOneLineErrors) {
  // A key holding a newline, and a body name holding \r\n: one line on stderr each, with
  // the characters written as JSON escapes.
  const std::string scene = R"({"format": 1, "world": {"type": "vertical"}, "model": {"formulation": "trinkle_lcp"},
    "bodies": [{"name": "b", "kind": "free", "mass": 1, "shapes": [{"type": "disk", "radius": 1}]}]})";
  std::string with_key = "{\"a\\nb\": 1, ";
  with_key += scene.substr(1);
  const Result key = run({"validate", file("key.json", with_key)});
  EXPECT_EQ(key.code, kInputError);
  EXPECT_EQ(lines(key.err), 1) << key.err;
  EXPECT_NE(key.err.find("a\\nb: unknown field"), std::string::npos) << key.err;
  std::string with_name = scene;
  with_name.replace(with_name.find("\"b\""), 3, "\"b\\r\\nc\"");
  const Result name = run({"validate", file("name.json", with_name)});
  EXPECT_EQ(name.code, kInputError);
  EXPECT_EQ(lines(name.err), 1) << name.err;
  EXPECT_NE(name.err.find("bodies[0].name: \"b\\r\\nc\" may contain only"), std::string::npos) << name.err;
  // A tab and a control character in a duplicate key of a problem file.
  const Result dup = run({"lcp", file("dup.json", "{\"M\": [[1]], \"q\": [1], \"x\\ty\\u0007\": 1, \"x\\ty\\u0007\": 2}")});
  EXPECT_EQ(dup.code, kInputError);
  EXPECT_EQ(lines(dup.err), 1) << dup.err;
  EXPECT_NE(dup.err.find("malformed JSON: duplicate key \"x\\ty\\u0007\""), std::string::npos) << dup.err;
  const Result ucp = run({"ucp", file("ucp.json", "{\"P\": [[1]], \"P\": [[1]]}")});
  EXPECT_EQ(ucp.code, kInputError);
  EXPECT_NE(ucp.err.find("malformed JSON: duplicate key \"P\""), std::string::npos) << ucp.err;
}

TEST_F(CliTest, ThousandDisksAreRefusedWithOneLine) {
  // Auto pairs of 1,000 free disks: half a million slots x 3,000 DOFs. Refused when read,
  // before any pair is built, whatever the command.
  std::string scene = R"({"format": 1, "world": {"type": "vertical"}, "model": {"formulation": "trinkle_lcp"},
    "step": {"h": 0.01, "steps": 1}, "contacts": {"friction": 0.5}, "bodies": [)";
  for (int i = 0; i < 1000; ++i) {
    if (i) scene += ",";
    scene += R"({"name": "d)";
    scene += std::to_string(i);
    scene += R"(", "kind": "free", "mass": 1, "shapes": [{"type": "disk", "radius": 0.05}]})";
  }
  scene += "]}";
  const std::string p = file("disks.json", scene);
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"validate", p}, {"validate", p, "--contacts"}, {"run", p, "--out", path("t.csv")}}) {
    const Result r = run(args);
    EXPECT_EQ(r.code, kInputError) << args[0];
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("contacts: 1000 bodies give 499500 contact slots with 3000 DOFs: the contact Jacobians"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("more than the limit of 4.0 GiB per world"), std::string::npos) << r.err;
  }
  EXPECT_FALSE(fs::exists(path("t.csv")));
}

TEST_F(CliTest, ExportMiqpWritesAnLpFileOurSolutionSatisfies) {
  // Step 25 of the grasp (squeezing and lifting): export it, then check that the solution
  // quasistep's branch-and-bound returns for that step, with z_k = 1 exactly where pair k's
  // left side is positive, satisfies every exported row and has the same objective.
  const std::string scene_path = std::string(QUASISTEP_SOURCE_DIR) + "/examples/pang_tedrake_grasp.json";
  const std::string lp = path("step25.lp");
  const Result r = run({"export-miqp", scene_path, "--step", "25", "--out", lp});
  ASSERT_EQ(r.code, kOk) << r.err;
  const Scene scene = load_scene_file(scene_path);
  const Model& m = *scene.model;
  PangTedrakeMiqp stepper(m);
  State s = initial_state(m);
  for (int l = 1; l < 25; ++l) ASSERT_EQ(stepper.step(m, s), Status::solved);
  ASSERT_EQ(stepper.build(m, s), Status::solved);
  std::map<std::string, double> value;
  {
    const PangTedrakeMiqp::View v = stepper.view();
    PangTedrakeMiqp solver(m);
    State s2 = s;
    ASSERT_EQ(solver.step(m, s2), Status::solved);
    const Eigen::VectorXd x = solver.solution().head(v.qp.c.size());
    for (int e = 0; e < m.n_q(); ++e) value["dq_" + m.dofs[e].name] = x[e];
    const char* kind[4] = {"Pn_", "Ptp_", "Ptm_", "Gamma_"};
    for (int c = 0; c < v.contacts; ++c)
      for (int t = 0; t < 4; ++t) {
        const std::string slot = std::to_string(v.slots[c]);
        value[kind[t] + slot] = x[v.pair_var(c, t)];
        const double left = v.qp.A_in.row(v.pair_row(c, t)).dot(x) - v.qp.b_in[v.pair_row(c, t)];
        value["z_" + slot + "_" + std::to_string(t)] = left > 1e-12 ? 1.0 : 0.0;
      }
    // The objective: linear part + [ quadratic ] / 2 + the constant in the comment.
    std::ifstream in(lp);
    std::string line;
    int rows = 0, binaries = 0;
    bool in_binaries = false;
    while (std::getline(in, line)) {
      if (line == "Binaries") {
        in_binaries = true;
        continue;
      }
      if (line == "End") break;
      if (in_binaries) {
        ++binaries;
        continue;
      }
      const auto colon = line.find(':');
      if (line.rfind(" obj:", 0) == 0) {
        // linear terms, then "+ [ q x ^2 ... ] / 2" (the grasp's H is diagonal)
        std::istringstream terms(line.substr(colon + 1));
        std::string tok;
        double sign = 1, coef = 1, obj = 0, factor = 1;
        while (terms >> tok) {
          if (tok == "+" || tok == "-") sign = tok == "-" ? -1 : 1;
          else if (tok == "[") factor = 0.5;
          else if (tok == "]") break;
          else if (tok == "^2") obj += 0;  // handled with its variable below
          else if (std::isdigit(static_cast<unsigned char>(tok[0]))) coef = std::stod(tok);
          else {
            std::string next;
            const std::streampos at = terms.tellg();
            const bool squared = (terms >> next) && next == "^2";
            if (!squared) terms.seekg(at);
            obj += factor * sign * coef * value[tok] * (squared ? value[tok] : 1.0);
            sign = 1;
            coef = 1;
          }
        }
        EXPECT_NEAR(obj + v.constant, solver.tracking_cost(), 1e-15);
        continue;
      }
      if (colon == std::string::npos || line[0] == '\\') continue;
      std::istringstream terms(line.substr(colon + 1));
      double lhs = 0, sign = 1, coef = 1;
      std::string tok, op;
      bool have_coef = false;
      while (terms >> tok) {
        if (tok == "+" || tok == "-") {
          sign = tok == "-" ? -1 : 1;
        } else if (tok == ">=" || tok == "<=" || tok == "=") {
          op = tok;
          break;
        } else if (!have_coef && (std::isdigit(static_cast<unsigned char>(tok[0])) || tok[0] == '.')) {
          coef = std::stod(tok);
          have_coef = true;
        } else {
          ASSERT_TRUE(value.count(tok)) << "unknown variable " << tok << " in " << line;
          lhs += sign * coef * value[tok];
          sign = 1;
          coef = 1;
          have_coef = false;
        }
      }
      double rhs = 0;
      terms >> rhs;
      const double tol = 1e-9 * (1 + std::abs(rhs));
      if (op == ">=") EXPECT_GE(lhs, rhs - tol) << line;
      else if (op == "<=") EXPECT_LE(lhs, rhs + tol) << line;
      else EXPECT_NEAR(lhs, rhs, tol) << line;
      ++rows;
    }
    EXPECT_EQ(binaries, 4 * v.contacts);
    EXPECT_EQ(rows, m.n_u + 3 * 4 * v.contacts + v.contacts);
  }
}

TEST_F(CliTest, ExportMiqpNeedsTheMiqpFormulation) {
  const Result r = run({"export-miqp", kGripper, "--step", "3", "--out", path("x.lp")});
  EXPECT_EQ(r.code, kInputError);
  EXPECT_NE(r.err.find("model.formulation: export-miqp needs \"pang_tedrake_miqp\""), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("x.lp")));
}

}  // namespace
}  // namespace qs::cli::cli_test

namespace qs::cli_test {
namespace {

TEST(CliNumbers, IntegerOptionsOutOfRangeAreRefusedNotClamped) {
  const std::string study = std::string(QUASISTEP_SOURCE_DIR) + "/examples/mc_push.json";
  for (const auto& [args, option] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"mc", study, "--seed", "99999999999999999999999"}, "--seed"},
           {{"mc", study, "--samples", "99999999999999999999"}, "--samples"},
           {{"run", study, "--steps", "4294967296"}, "--steps"},
           {{"throughput", study, "--worlds", "99999999999"}, "--worlds"},
           {{"validate", study, "--threads", "99999999999"}, "--threads"}}) {
    const test::CliResult r = test::run_cli(args);
    EXPECT_EQ(r.code, 1) << option << ": " << r.err;
    EXPECT_EQ(test::count_lines(r.err), 1) << r.err;
    EXPECT_EQ(r.err.rfind("quasistep: " + option + ": out of range", 0), 0u) << r.err;
  }
  // The largest seed is still a seed.
  EXPECT_EQ(test::run_cli({"mc", study, "--samples", "2", "--seed", "18446744073709551615"}).code, 0);
}

TEST(CliNumbers, InfiniteNumberOptionsAreRefused) {
  // An infinite big-M would write `inf` coefficients into the LP file; an infinite time limit
  // would never end.
  const std::string src = QUASISTEP_SOURCE_DIR;
  const std::string lp = ::testing::TempDir() + "qs_inf_big_m.lp";
  std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"export-miqp", src + "/examples/pang_tedrake_grasp.json", "--big-m", "inf", "--out", lp}, "--big-m"},
      {{"export-miqp", src + "/examples/pang_tedrake_grasp.json", "--big-m", "nan", "--out", lp}, "--big-m"},
      {{"export-miqp", src + "/examples/pang_tedrake_grasp.json", "--big-m", "1e400", "--out", lp}, "--big-m"}};
#ifdef QUASISTEP_HAVE_OMPL
  cases.push_back({{"plan", src + "/examples/plan_push.json", "--time", "inf"}, "--time"});
#endif
  for (const auto& [args, option] : cases) {
    const test::CliResult r = test::run_cli(args);
    EXPECT_EQ(r.code, 1) << option << ": " << r.err;
    EXPECT_EQ(test::count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(option), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("must be a finite number"), std::string::npos) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(lp));
}

TEST(CliMessages, TextThatIsNotUtf8InAReplaysFileIsRefusedWithItsLine) {
  // The stopped line and the header go into the page's JSON: bytes that are not UTF-8 are
  // refused while the file is read, with its name and line.
  const std::string dir = ::testing::TempDir();
  const std::string scene = std::string(QUASISTEP_SOURCE_DIR) + "/examples/anitescu_grasp.json";
  const std::string traj = dir + "qs_utf8_traj.csv", page = dir + "qs_utf8.html";
  ASSERT_EQ(test::run_cli({"run", scene, "--steps", "3", "--out", traj}).code, 0);
  std::string text;
  {
    std::ifstream in(traj);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::ofstream(traj, std::ios::app) << "# stopped: step 4: infeasible: \xff\xfe\n";
  test::CliResult r = test::run_cli({"render", scene, "--traj", traj, "--out", page});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(test::count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("qs_utf8_traj.csv: line 7: is not UTF-8 text"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("json.exception"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(page));
  // In the header (a column name) too.
  const std::size_t header = text.find("step,t,");
  ASSERT_NE(header, std::string::npos);
  text.replace(header, 4, "st\xffp");
  std::ofstream(traj, std::ios::trunc) << text;
  r = test::run_cli({"render", scene, "--traj", traj, "--out", page});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("line 2: is not UTF-8 text"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(page));
}

TEST(CliMessages, ControlCharactersInKeysNamesAndPathsAreEscapedOntoOneLine) {
  const std::string dir = ::testing::TempDir();
  const auto write = [&](const std::string& name, const std::string& text) {
    const std::string p = dir + name;
    std::ofstream(p) << text;
    return p;
  };
  const std::string key = write("qs_key.json", R"({"format": 1, "world": {"type": "vertical"}, "a\nb": 1})");
  const std::string name = write("qs_name.json", R"({"format": 1, "world": {"type": "vertical"},
    "model": {"formulation": "ucp"},
    "bodies": [{"name": "x\r\ny", "kind": "free", "mass": 1, "shapes": [{"type": "disk", "radius": 1}]},
               {"name": "x\r\ny", "kind": "free", "mass": 1, "shapes": [{"type": "disk", "radius": 1}]}]})");
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"validate", key}, {"validate", name}, {"validate", dir + "no\nsuch\r\nfile.json"},
           {"run", name, "--out", dir + "a\tb\n.csv"}, {"validate", dir + "bell\x07.json"}}) {
    const test::CliResult r = test::run_cli(args);
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_EQ(test::count_lines(r.err), 1) << r.err;
    EXPECT_EQ(r.err.find('\r'), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find('\x07'), std::string::npos) << r.err;
  }
  EXPECT_NE(test::run_cli({"validate", key}).err.find("a\\nb"), std::string::npos);
}

TEST(CliNumbers, AThreadCountBeyondReasonIsCappedWithANote) {
  const test::CliResult r = test::run_cli(
      {"mc", std::string(QUASISTEP_SOURCE_DIR) + "/examples/mc_push.json", "--samples", "4", "--threads", "10000"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("quasistep: note: --threads 10000 capped at "), std::string::npos) << r.err;
}

}  // namespace
}  // namespace qs::cli_test
