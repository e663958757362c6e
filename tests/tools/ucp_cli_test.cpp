// `quasistep ucp`: the JSON it prints for the paper's data sets, the methods and --all, and
// one-line errors naming the field for bad problem files.
#include <gtest/gtest.h>

#include <cmath>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/cli_run.hpp"
#include "tools/cli/cli.hpp"

namespace qs::cli::ucp_cli_test {
namespace {

namespace fs = std::filesystem;

std::string data_set(int k) {
  return std::string(QUASISTEP_SOURCE_DIR) + "/tests/data/ucp/data_set_" + std::to_string(k) + ".json";
}

struct CliRun : qs::test::CliResult {
  nlohmann::json json() const { return nlohmann::json::parse(out); }
};
CliRun run(std::vector<std::string> args) { return {qs::test::run_cli(std::move(args))}; }
int lines(const std::string& s) { return qs::test::count_lines(s); }

class UcpCli : public qs::test::TempDirTest {
 protected:
  UcpCli() : TempDirTest("quasistep_ucp_cli_") {}
};

TEST_F(UcpCli, DataSet1SolvedByBilinearInOnePair) {
  const CliRun r = run({"ucp", data_set(1)});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(lines(r.out), 1);
  const nlohmann::json j = r.json();
  EXPECT_EQ(j["status"], "solved");
  EXPECT_EQ(j["method"], "auto");
  EXPECT_EQ(j["solved_by"], "bilinear");
  EXPECT_LE(j["pairs"].get<int>(), 2);
  EXPECT_LE(j["residual"].get<double>(), 1e-9);
  EXPECT_EQ(j["x"].size(), 9u);
  EXPECT_EQ(j["q_dot"].size(), 3u);
  EXPECT_EQ(j["c_n"].size(), 3u);
  EXPECT_EQ(j["tau"].size(), 6u);
  EXPECT_TRUE(j.contains("time"));
  EXPECT_FALSE(j.contains("nodes"));  // the exact method did not run
  // Complementary: x'y = 0.
  double xy = 0;
  for (size_t i = 0; i < 9; ++i) xy += j["x"][i].get<double>() * j["y"][i].get<double>();
  EXPECT_LE(xy, 1e-10);
}

TEST_F(UcpCli, SceneAtItsInitialState) {
  // The Pang & Tedrake 2018 gripper's cylinder rests on the ground, the fingers 2 cm away: one contact,
  // the ground carries the weight (m g = 9.81 N) and nothing moves.
  const std::string gripper = std::string(QUASISTEP_SOURCE_DIR) + "/examples/pang_tedrake_gripper.json";
  const CliRun r = run({"ucp", gripper, "--scene"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = r.json();
  EXPECT_EQ(j["status"], "solved");
  ASSERT_EQ(j["c_n"].size(), 1u);
  EXPECT_NEAR(j["c_n"][0].get<double>(), 9.81, 1e-9);
  for (const auto& v : j["q_dot"]) EXPECT_NEAR(v.get<double>(), 0.0, 1e-12);
  // A problem file is not a scene, and a scene is not a problem file: one-line errors.
  const CliRun bad = run({"ucp", data_set(1), "--scene"});
  EXPECT_EQ(bad.code, 1);
  EXPECT_EQ(lines(bad.err), 1) << bad.err;
  const CliRun bad2 = run({"ucp", gripper});
  EXPECT_EQ(bad2.code, 1);
  EXPECT_EQ(lines(bad2.err), 1) << bad2.err;
}

TEST_F(UcpCli, DataSet4IsProvenInfeasibleWithExitZero) {
  for (const char* method : {"exact", "auto"}) {
    const CliRun r = run({"ucp", data_set(4), "--method", method});
    ASSERT_EQ(r.code, 0) << r.err;
    const nlohmann::json j = r.json();
    EXPECT_EQ(j["status"], "infeasible") << method;
    EXPECT_TRUE(j["x"].is_null());
    EXPECT_TRUE(j["q_dot"].is_null());
    EXPECT_GT(j["nodes"].get<int>(), 1);
    EXPECT_NE(j["reason"].get<std::string>().find("every branch-and-bound node closed"), std::string::npos);
  }
  const nlohmann::json b = run({"ucp", data_set(4), "--method", "bilinear"}).json();
  EXPECT_EQ(b["status"], "not_found");  // the paper's algorithm cycles: no verdict
  EXPECT_EQ(b["restarts"], 20);
  EXPECT_EQ(b["products"].size(), b["pairs"].get<size_t>() + 1);
  EXPECT_NE(b["reason"].get<std::string>().find("stalled"), std::string::npos);
  const nlohmann::json lim = run({"ucp", data_set(4), "--method", "exact", "--node-limit", "2"}).json();
  EXPECT_EQ(lim["status"], "iteration_limit");
  EXPECT_EQ(lim["nodes"], 2);
}

TEST_F(UcpCli, AllListsEveryModeCombination) {
  const CliRun r = run({"ucp", data_set(1), "--all"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = r.json();
  EXPECT_EQ(j["status"], "solved");
  EXPECT_EQ(j["method"], "enumerate");
  ASSERT_EQ(j["count"], 3);
  for (const auto& s : j["solutions"]) {
    EXPECT_EQ(s["modes"].size(), 3u);
    EXPECT_EQ(s["c_n"].size(), 3u);
  }
  EXPECT_EQ(j["solutions"][1]["modes"], nlohmann::json({"sliding-", "rolling", "breaking"}));
  const nlohmann::json none = run({"ucp", data_set(4), "--all"}).json();
  EXPECT_EQ(none["status"], "infeasible");
  EXPECT_EQ(none["count"], 0);
}

TEST_F(UcpCli, AllNeverListsASolutionThatFailsTheCheck) {
  // J_n near the largest double: the enumeration's point has no finite motion. Every method
  // says numerical_failure, --all too, and no number that is not finite is printed.
  nlohmann::json d;
  {
    std::ifstream in(data_set(1));
    in >> d;
  }
  d["J_n"][0][0] = 1.797e308;
  const std::string p = file("huge.json", d.dump());
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"ucp", p, "--all"}, {"ucp", p}, {"ucp", p, "--method", "exact"}, {"ucp", p, "--method", "bilinear"}}) {
    const CliRun r = run(args);
    ASSERT_EQ(r.code, 0) << r.err;
    const nlohmann::json j = r.json();
    EXPECT_EQ(j["status"], "numerical_failure") << r.out;
    if (j.contains("solutions")) {
      EXPECT_EQ(j["count"], 0) << r.out;
      EXPECT_TRUE(j["solutions"].empty()) << r.out;
    }
  }
}

TEST_F(UcpCli, EmptyXIsAStatusWithAReason) {
  const std::string p = file("squeeze.json", R"({
    "P": [[1], [-1], [0], [0]],
    "J_n": [[1, 0, 0, 0], [0, 0, 1, 0]], "J_t": [[0, 1, 0, 0], [0, 0, 0, 1]],
    "theta_dot": [1, 0, 1, 0], "d": [0, 0, 0], "mu": [0.5, 0.5]})");
  const CliRun r = run({"ucp", p});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = r.json();
  EXPECT_EQ(j["status"], "infeasible");
  EXPECT_EQ(j["reason"].get<std::string>().rfind("X is empty", 0), 0u);
}

TEST_F(UcpCli, GivenLoadsAndEffortControlledJoints) {
  // Data set 1 with joint 5 effort-controlled at tau_5 = 0.05 (g_man = 0): P gains J's
  // column 5, and the output's tau_5 is the given effort, theta_dot_5 a recovered unknown.
  const std::string p = file("effort.json", R"({
    "P": [[0.966, 0.259, 0.0, 0], [0.0, 1.0, 0.24, 0], [-0.707, 0.707, 0.75, 0],
          [-0.259, 0.966, -2.0, 0], [-1.0, 0.0, -1.45, 0], [-0.707, -0.707, -1.9, 1]],
    "J_n": [[1, 0, 0, 0, 0, 0], [0, 0, 1, 0, 0, 0], [0, 0, 0, 0, 1, 0]],
    "J_t": [[0, 1, 0, 0, 0, 0], [0, 0, 0, 1, 0, 0], [0, 0, 0, 0, 0, 1]],
    "theta_dot": [0.1, 0.995, 0.1, -0.995, 0.1, 0],
    "alpha": [0, 1, 2, 3, 4],
    "g_obj": [0, -1, 0], "g_man": [0, 0, 0, 0, 0, 0], "tau": [0, 0, 0, 0, 0, 0.05],
    "mu": [0.5, 0.5, 0.3]})");
  const CliRun r = run({"ucp", p, "--method", "exact"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = r.json();
  ASSERT_EQ(j["status"], "solved");
  EXPECT_DOUBLE_EQ(j["tau"][5].get<double>(), 0.05);
  EXPECT_NEAR(j["c_t"][2].get<double>(), 0.05, 1e-9);
}

TEST_F(UcpCli, ANodeLimitWhosePoolsDoNotFitIsRefusedNotAborted) {
  // 200 point fingers on one object: the exact method's pools for 10^6 nodes would need
  // tens of GiB (it aborted with bad_alloc before the check).
  const int nc = 200, nq = 3;
  nlohmann::json P = nlohmann::json::array(), Jn = nlohmann::json::array(), Jt = nlohmann::json::array();
  for (int r = 0; r < 2 * nc; ++r) P.push_back({std::sin(r + 1.0), std::cos(r + 2.0), 0.1 * std::sin(3.0 * r)});
  for (int i = 0; i < nc; ++i) {
    std::vector<int> n(2 * nc, 0), t(2 * nc, 0);
    n[2 * i] = 1;
    t[2 * i + 1] = 1;
    Jn.push_back(n);
    Jt.push_back(t);
  }
  std::vector<double> theta(2 * nc, 0.1), d(nc + nq, 0.0), mu(nc, 0.5);
  d[nc + 1] = -1;
  const std::string p =
      file("n200.json", nlohmann::json{{"P", P}, {"J_n", Jn}, {"J_t", Jt}, {"theta_dot", theta}, {"d", d}, {"mu", mu}}.dump());
  const CliRun r = run({"ucp", p, "--method", "exact", "--node-limit", "1000000"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("--node-limit 1000000: the exact method's node pools for n_c = 200 would need"), std::string::npos)
      << r.err;
  // A limit that fits runs (whatever it concludes within its nodes).
  EXPECT_EQ(run({"ucp", p, "--method", "exact", "--node-limit", "20"}).code, 0);
}

TEST_F(UcpCli, BadProblemFilesGiveOneLineNamingTheField) {
  const std::string good_tail = R"("J_n": [[1, 0, 0, 0, 0, 0], [0, 0, 1, 0, 0, 0], [0, 0, 0, 0, 1, 0]],
    "J_t": [[0, 1, 0, 0, 0, 0], [0, 0, 0, 1, 0, 0], [0, 0, 0, 0, 0, 1]],
    "theta_dot": [0.1, 0.995, 0.1, -0.995, 0.1, 0.995])";
  const std::string P = R"("P": [[0.966, 0.259, 0.0], [0.0, 1.0, 0.24], [-0.707, 0.707, 0.75],
          [-0.259, 0.966, -2.0], [-1.0, 0.0, -1.45], [-0.707, -0.707, -1.9]], )";
  struct Case {
    std::string body, expect;
  };
  const std::vector<Case> cases = {
      {P + good_tail + R"(, "d": [0, 0, 0, 0, -1, 0], "mu": [0.5, -0.5, 0.3]})", "mu[1]: must be >= 0"},
      {P + good_tail + R"(, "d": [0, 0, 0, 0, -1, 0], "mu": [0.5, 0.5]})", "mu: must have n_c = 3 entries"},
      {P + good_tail + R"(, "d": [0, 0, 0, -1, 0], "mu": [0.5, 0.5, 0.3]})", "d: must have n_c + n_q + |abar| = 6"},
      {P + good_tail + R"(, "alpha": [0, 9], "d": [0, 0, 0, 0, -1, 0], "mu": [0.5, 0.5, 0.3]})",
       "alpha[1]: joint 9 does not exist"},
      {P + good_tail + R"(, "alpha": [0, -1], "d": [0, 0, 0, 0, -1, 0], "mu": [0.5, 0.5, 0.3]})",
       "alpha[1]: must be >= 0"},
      {P + good_tail + R"(, "alpha": [0, 1, 2], "d": [0, 0, 0, 0, -1, 0], "mu": [0.5, 0.5, 0.3]})",
       "P: has 3 columns"},
      {P + good_tail + R"(, "alpha": [0, 1, 2, 3, 4], "d": [0, 0, 0, 0, -1, 0], "mu": [0.5, 0.5, 0.3]})",
       "P: column 2 must equal column 5 of [J_n; J_t]"},
      {P + good_tail + R"(, "d": [0, 0, 0, 0, "x", 0], "mu": [0.5, 0.5, 0.3]})", "d[4]: must be a number"},
      {P + good_tail + R"(, "d": [0, 0, 0, 0, 1e999, 0], "mu": [0.5, 0.5, 0.3]})", ""},
      {P + good_tail + R"(, "mu": [0.5, 0.5, 0.3]})", "g_obj: missing"},
      {P + good_tail + R"(, "d": [0, 0, 0, 0, -1, 0], "mu": [0.5, 0.5, 0.3], "speed": 1})", "speed: unknown field"},
      {R"({"P": [[1, 0], [0, 1, 2]], )" + good_tail + R"(, "d": [0, 0], "mu": [1]})", "P[1]: must be a row of 2"},
      {good_tail.substr(0, 0) + "{" + good_tail + R"(, "d": [0, 0, 0, 0, -1, 0], "mu": [0.5, 0.5, 0.3]})",
       "P: missing (required)"},
  };
  for (const Case& c : cases) {
    const std::string body = c.body.front() == '{' ? c.body : "{" + c.body;
    const CliRun r = run({"ucp", file("bad.json", body)});
    EXPECT_EQ(r.code, 1) << body;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_TRUE(r.out.empty());
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << "expected \"" << c.expect << "\" in: " << r.err;
    EXPECT_NE(r.err.find("bad.json: "), std::string::npos) << r.err;
  }
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--method", "simplex"}, {"--node-limit", "0"}, {"--node-limit", "2000000"}}) {
    std::vector<std::string> full = {"ucp", data_set(1)};
    full.insert(full.end(), args.begin(), args.end());
    const CliRun m = run(full);
    EXPECT_EQ(m.code, 1) << args[0];
    EXPECT_EQ(lines(m.err), 1) << m.err;
    EXPECT_TRUE(m.out.empty());
  }
}

}  // namespace
}  // namespace qs::cli::ucp_cli_test
