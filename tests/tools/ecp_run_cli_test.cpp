// `quasistep run` on a body_on_plane scene: the trajectory CSV carries the ECP stepper's
// per-step outputs (Stepper::extra_columns(): ecp_x, ecp_y, ecp_z, p_n) after the 13 state
// columns, empty in row 0, and equal to the stepper's own values; other worlds' CSVs have
// no extra columns.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <cstddef>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "quasistep/core/formulations/ecp_ncp/ecp_ncp.hpp"
#include "quasistep/core/scene.hpp"
#include "tests/support/cli_run.hpp"

namespace qs::ecp_run_cli_test {
namespace {

using test::run_cli;

const std::string kDesk = std::string(QUASISTEP_SOURCE_DIR) + "/examples/ecp_desk.json";
const std::string kPush = std::string(QUASISTEP_SOURCE_DIR) + "/examples/halm_posa_push.json";
const std::string kStateHeader =
    "step,t,desk.x,desk.y,desk.z,desk.qw,desk.qx,desk.qy,desk.qz,desk.vx,desk.vy,desk.vz,desk.wx,desk.wy,desk.wz";

class EcpRunCliTest : public test::TempDirTest {
 protected:
  EcpRunCliTest() : TempDirTest("qs_ecp_run_cli_") {}
};

/// The CSV's lines after the provenance comment: header first, then the rows.
std::vector<std::string> csv_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line))
    if (line.empty() || line[0] != '#') lines.push_back(line);
  return lines;
}

/// Splits on commas, keeping empty cells (a trailing comma gives a trailing empty cell).
std::vector<std::string> cells(const std::string& row) {
  std::vector<std::string> out(1);
  for (const char c : row) {
    if (c == ',') out.emplace_back();
    else out.back() += c;
  }
  return out;
}

TEST_F(EcpRunCliTest, DeskCsvAppendsEcpAndNormalImpulseColumns) {
  const int steps = 20;
  const std::string out = path("desk.csv");
  const test::CliResult r = run_cli({"run", kDesk, "--steps", std::to_string(steps), "--out", out});
  ASSERT_EQ(r.code, cli::kOk) << r.err;
  const std::vector<std::string> lines = csv_lines(out);
  ASSERT_EQ(lines.size(), static_cast<std::size_t>(steps + 2));
  EXPECT_EQ(lines[0], kStateHeader + ",ecp_x,ecp_y,ecp_z,p_n");
  const std::size_t n_cols = cells(lines[0]).size();
  ASSERT_EQ(n_cols, 19u);

  // Row 0: the initial state, no step yet: the four cells are empty.
  const std::vector<std::string> row0 = cells(lines[1]);
  ASSERT_EQ(row0.size(), n_cols) << lines[1];
  for (std::size_t c = 0; c < 15; ++c) EXPECT_FALSE(row0[c].empty()) << "column " << c;
  for (std::size_t c = 15; c < n_cols; ++c) EXPECT_TRUE(row0[c].empty()) << "column " << c << ": " << lines[1];

  // Every later row: four finite numbers; on contact (p_n > 0, every desk step) the ECP is
  // on the plane.
  for (int l = 1; l <= steps; ++l) {
    const std::vector<std::string> row = cells(lines[l + 1]);
    ASSERT_EQ(row.size(), n_cols) << lines[l + 1];
    EXPECT_EQ(row[0], std::to_string(l));
    double v[4];
    for (int j = 0; j < 4; ++j) {
      ASSERT_FALSE(row[15 + j].empty()) << "row " << l;
      v[j] = std::stod(row[15 + j]);
      EXPECT_TRUE(std::isfinite(v[j])) << "row " << l << " column " << 15 + j;
    }
    EXPECT_GT(v[3], 0) << "row " << l << ": the desk stays in contact";
    EXPECT_LE(std::abs(v[2]), 1e-9) << "row " << l;
  }
}

TEST_F(EcpRunCliTest, CsvValuesAreTheSteppersOwnToTheLastBit) {
  const int steps = 5;
  const std::string out = path("desk.csv");
  const test::CliResult r = run_cli({"run", kDesk, "--steps", std::to_string(steps), "--out", out});
  ASSERT_EQ(r.code, cli::kOk) << r.err;
  const std::vector<std::string> lines = csv_lines(out);
  ASSERT_EQ(lines.size(), static_cast<std::size_t>(steps + 2));

  const Scene scene = load_scene_file(kDesk);
  const Model& m = *scene.model;
  EcpNcp stepper(m);
  EXPECT_EQ(stepper.extra_columns(), (std::vector<std::string>{"ecp_x", "ecp_y", "ecp_z", "p_n"}));
  State s = initial_state(m);
  std::vector<double> extra;
  for (int l = 1; l <= steps; ++l) {
    ASSERT_EQ(stepper.step(m, s), Status::solved) << stepper.report().detail;
    extra.clear();
    stepper.extra_values(extra);
    ASSERT_EQ(extra.size(), 4u);
    EXPECT_EQ(extra[0], stepper.ecp()[0]);
    EXPECT_EQ(extra[1], stepper.ecp()[1]);
    EXPECT_EQ(extra[2], stepper.ecp()[2]);
    EXPECT_EQ(extra[3], stepper.p_n());
    // Written with 17 significant digits, the CSV round-trips every double exactly.
    const std::vector<std::string> row = cells(lines[l + 1]);
    ASSERT_EQ(row.size(), 19u);
    for (int j = 0; j < 13; ++j) EXPECT_EQ(std::stod(row[2 + j]), s.q[j]) << "row " << l << " state " << j;
    for (int j = 0; j < 4; ++j) EXPECT_EQ(std::stod(row[15 + j]), extra[j]) << "row " << l << " column " << 15 + j;
    EXPECT_GT(stepper.p_n(), 0);
  }
}

TEST_F(EcpRunCliTest, AirborneStepsWriteZeroImpulseAndTheLowestPointOfTheBody) {
  // A flat 0.2 x 0.1 x 0.05 m box dropped from 2 cm, sliding and spinning: while it falls
  // p_n = 0 and the ECP is a lowest point of its hull (eq. (13) with l_k l_2 the gap), so
  // ecp_z is the height of its bottom face, CM height - 0.025 m; then it lands (ecp_z = 0).
  const double a = 0.1, b = 0.05, c = 0.025, m = 1.0;
  nlohmann::json pts = nlohmann::json::array();
  for (int i = 0; i < 8; ++i) pts.push_back({i & 1 ? a : -a, i & 2 ? b : -b, i & 4 ? c : -c});
  const nlohmann::json scene = {
      {"format", 1},
      {"world", {{"type", "body_on_plane"}, {"gravity", 9.8}, {"support_friction", 0.3}}},
      {"model", {{"formulation", "ecp_ncp"}, {"e_r", 0.05}}},
      {"step", {{"h", 0.01}, {"steps", 12}}},
      {"bodies",
       {{{"name", "box"},
         {"kind", "free"},
         {"mass", m},
         {"inertia", {m / 3 * (b * b + c * c), m / 3 * (a * a + c * c), m / 3 * (a * a + b * b)}},
         {"pose3", {0, 0, 0.045, 1, 0, 0, 0}},
         {"velocity", {0.1, 0, 0}},
         {"angular_velocity", {0, 0, 0.5}},
         {"hull", {{"vertices", pts}}}}}}};
  const std::string out = path("box.csv");
  const test::CliResult r = run_cli({"run", file("box.json", scene.dump()), "--out", out});
  ASSERT_EQ(r.code, cli::kOk) << r.err;
  const std::vector<std::string> lines = csv_lines(out);
  ASSERT_EQ(lines.size(), 14u);
  const std::string extra = ",ecp_x,ecp_y,ecp_z,p_n";
  EXPECT_EQ(lines[0].substr(lines[0].size() - extra.size()), extra) << lines[0];
  int airborne = 0, landed = 0;
  for (std::size_t l = 2; l < lines.size(); ++l) {
    const std::vector<std::string> row = cells(lines[l]);
    ASSERT_EQ(row.size(), 19u) << lines[l];
    const double z = std::stod(row[4]), ecp_z = std::stod(row[17]), p_n = std::stod(row[18]);
    for (std::size_t j = 15; j < 19; ++j) EXPECT_TRUE(std::isfinite(std::stod(row[j]))) << lines[l];
    if (p_n == 0) {
      ++airborne;
      EXPECT_NEAR(ecp_z, z - c, 1e-12) << lines[l];
      EXPECT_GT(ecp_z, 0) << lines[l];
    } else {
      ++landed;
      EXPECT_GT(p_n, 0) << lines[l];
      EXPECT_LE(std::abs(ecp_z), 1e-9) << lines[l];
    }
  }
  EXPECT_GE(airborne, 3);
  EXPECT_GE(landed, 3);
}

TEST_F(EcpRunCliTest, StepsZeroWritesTheColumnsAndAnEmptyRowZero) {
  const std::string out = path("desk0.csv");
  const test::CliResult r = run_cli({"run", kDesk, "--steps", "0", "--out", out});
  ASSERT_EQ(r.code, cli::kOk) << r.err;
  const std::vector<std::string> lines = csv_lines(out);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], kStateHeader + ",ecp_x,ecp_y,ecp_z,p_n");
  EXPECT_EQ(lines[1].substr(lines[1].size() - 4), ",,,,") << lines[1];
}

TEST_F(EcpRunCliTest, OtherWorldsHaveNoExtraColumns) {
  const std::string out = path("push.csv");
  const test::CliResult r = run_cli({"run", kPush, "--steps", "3", "--out", out});
  ASSERT_EQ(r.code, cli::kOk) << r.err;
  const std::vector<std::string> lines = csv_lines(out);
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0].find("ecp"), std::string::npos) << lines[0];
  EXPECT_EQ(lines[0].find("p_n"), std::string::npos) << lines[0];
  const Scene scene = load_scene_file(kPush);
  std::string expected = "step,t";
  for (const Dof& d : scene.model->dofs) expected += "," + d.name;
  EXPECT_EQ(lines[0], expected);
  for (std::size_t i = 1; i < lines.size(); ++i) {
    EXPECT_EQ(cells(lines[i]).size(), 2 + scene.model->dofs.size()) << lines[i];
    EXPECT_NE(lines[i].back(), ',') << lines[i];
  }
}

TEST_F(EcpRunCliTest, SummaryNamesDroppedHullPointsAndStepsTakenAsSubsteps) {
  // The T-bar lists the 16 corners of its two boxes; 4 are not extreme points of its hull.
  const std::string tbar = std::string(QUASISTEP_SOURCE_DIR) + "/examples/ecp_tbar.json";
  const test::CliResult v = run_cli({"validate", tbar});
  ASSERT_EQ(v.code, cli::kOk) << v.err;
  EXPECT_NE(v.out.find("hull      8 faces, 12 vertices from 16 points (4 not extreme"), std::string::npos) << v.out;
  const test::CliResult r = run_cli({"run", tbar});
  ASSERT_EQ(r.code, cli::kOk) << r.err;
  EXPECT_NE(r.err.find("hull of 16 points (4 not extreme, dropped)"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("substeps"), std::string::npos) << r.err;
  // A harder tilt: one landing step is taken as substeps (tests/core/ecp_tbar_test.cpp).
  std::ifstream in(tbar);
  nlohmann::json j = nlohmann::json::parse(in);
  nlohmann::json& tq = j["loads"][0]["torque"];
  tq[0]["breaks"] = tq[1]["breaks"] = {0.0, 0.15, 1.5, 1.65};
  tq[0]["values"] = {0.0, -7.5, 0.0, 7.5, 0.0};
  tq[1]["values"] = {0.0, 4.875, 0.0, 4.875, 0.0};
  const test::CliResult h = run_cli({"run", file("hard.json", j.dump())});
  ASSERT_EQ(h.code, cli::kOk) << h.err;
  EXPECT_NE(h.err.find("500 of 500 steps"), std::string::npos) << h.err;
  // How many landing steps need substeps depends on the last bits of the steps before (a
  // change of the library's arithmetic changes it); at least one does.
  EXPECT_TRUE(std::regex_search(h.err, std::regex(", [1-9][0-9]* taken as substeps \\(no solution for the whole step\\)")))
      << h.err;
  // A cylinder hull is named as such.
  const test::CliResult c =
      run_cli({"validate", std::string(QUASISTEP_SOURCE_DIR) + "/examples/ecp_dumbbell.json"});
  ASSERT_EQ(c.code, cli::kOk) << c.err;
  EXPECT_NE(c.out.find("hull      cylinder, radius 0.1 m, length 0.3 m (3 faces: 2 caps and the side)"),
            std::string::npos)
      << c.out;
  // The desk lists 24 points (legs and top); 16 of them are not extreme.
  const test::CliResult d = run_cli({"run", kDesk, "--steps", "1"});
  EXPECT_NE(d.err.find("hull of 24 points (16 not extreme, dropped)"), std::string::npos) << d.err;
}

TEST_F(EcpRunCliTest, SummaryCountsStepsSolvedInTheBodysOwnUnits) {
  // The released box in micrometres (lengths times 2^20: positions, hull, e_r, gravity and
  // inertia): far from the body's own units, so Newton works in those, every step, and the
  // summary says so.
  std::ifstream in(std::string(QUASISTEP_SOURCE_DIR) + "/examples/ecp_box_tip.json");
  nlohmann::json j = nlohmann::json::parse(in);
  const double s = std::ldexp(1.0, 20);
  j["world"]["gravity"] = j["world"]["gravity"].get<double>() * s;
  j["model"]["e_r"] = j["model"]["e_r"].get<double>() * s;
  nlohmann::json& body = j["bodies"][0];
  for (auto& v : body["inertia"]) v = v.get<double>() * s * s;
  for (int i = 0; i < 3; ++i) body["pose3"][i] = body["pose3"][i].get<double>() * s;
  for (auto& p : body["hull"]["vertices"])
    for (auto& c : p) c = c.get<double>() * s;
  const test::CliResult r = run_cli({"run", file("micro.json", j.dump())});
  ASSERT_EQ(r.code, cli::kOk) << r.err;
  EXPECT_NE(r.err.find("100 of 100 steps"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(", 100 solved in the body's own units (instead of the scene's)"), std::string::npos) << r.err;
  // In metres no step needs them.
  const test::CliResult m = run_cli({"run", std::string(QUASISTEP_SOURCE_DIR) + "/examples/ecp_box_tip.json"});
  ASSERT_EQ(m.code, cli::kOk) << m.err;
  EXPECT_EQ(m.err.find("own units"), std::string::npos) << m.err;
}

}  // namespace
}  // namespace qs::ecp_run_cli_test
