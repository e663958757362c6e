// `quasistep throughput`: the report, the hash that does not depend on threads, and bad input
// as one-line errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/cli_run.hpp"
#include "tests/support/example_json.hpp"
#include "tools/cli/cli.hpp"

namespace qs::cli::throughput_cli_test {
namespace {

const std::string kPush = std::string(QUASISTEP_SOURCE_DIR) + "/examples/halm_posa_push.json";
const std::string kGripper = std::string(QUASISTEP_SOURCE_DIR) + "/examples/pang_tedrake_gripper.json";

using Result = qs::test::CliResult;
Result run(std::vector<std::string> args) { return qs::test::run_cli(std::move(args)); }

std::string hash_line(const std::string& out) {
  const auto p = out.find("hash");
  return p == std::string::npos ? std::string() : out.substr(p, out.find('\n', p) - p);
}

TEST(ThroughputCli, ReportsWorldStepsFailuresAndAThreadIndependentHash) {
  const Result one = run({"throughput", kPush, "--worlds", "19", "--steps", "30", "--threads", "1", "--hash"});
  ASSERT_EQ(one.code, kOk) << one.err;
  EXPECT_NE(one.out.find("19 worlds x 30 steps of halm_posa_lcp"), std::string::npos) << one.out;
  EXPECT_NE(one.out.find("world-steps   570 ("), std::string::npos) << one.out;
  EXPECT_NE(one.out.find("failed        0 of 19 worlds"), std::string::npos) << one.out;
  ASSERT_EQ(hash_line(one.out).size(), std::string("hash          ").size() + 16) << one.out;
  const Result two = run({"throughput", kPush, "--worlds", "19", "--steps", "30", "--threads", "2", "--hash"});
  ASSERT_EQ(two.code, kOk) << two.err;
  EXPECT_EQ(hash_line(two.out), hash_line(one.out));
  const Result scalar = run({"throughput", kPush, "--worlds", "19", "--steps", "30", "--scalar", "--hash"});
  EXPECT_EQ(hash_line(scalar.out), hash_line(one.out));
  // A different number of steps is a different state.
  const Result other = run({"throughput", kPush, "--worlds", "19", "--steps", "31", "--hash"});
  EXPECT_NE(hash_line(other.out), hash_line(one.out));
  // The trinkle gripper batches too.
  const Result grip = run({"throughput", kGripper, "--worlds", "3", "--steps", "5"});
  EXPECT_EQ(grip.code, kOk) << grip.err;
}

TEST(ThroughputCli, FailedWorldsAreReportedAndTheCommandSucceeds) {
  // Halm & Posa 2018, Fig. 4 top: perfect velocity tracking jams at the wall at step 82 in every world.
  nlohmann::json j = qs::test::example_json("halm_posa_wall.json");
  j["model"]["formulation"] = "perfect_velocity_lcp";
  j["model"].erase("B");
  j["model"].erase("c");
  const std::string path = (std::filesystem::temp_directory_path() / "quasistep_throughput_jam.json").string();
  std::ofstream(path) << j.dump();
  const Result r = run({"throughput", path, "--worlds", "3", "--steps", "90"});
  std::filesystem::remove(path);
  EXPECT_EQ(r.code, kOk) << r.err;  // one rule: batch commands count failed worlds as an outcome
  EXPECT_NE(r.out.find("failed        3 of 3 worlds"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("world 0 at step 82: infeasible"), std::string::npos) << r.out;  // as `run` says
}

TEST(ThroughputCli, AnitescuRunsOnLanesWithTheScalarPathsHash) {
  const std::string grasp = std::string(QUASISTEP_SOURCE_DIR) + "/examples/anitescu_grasp.json";
  const Result lanes = run({"throughput", grasp, "--worlds", "11", "--steps", "40", "--threads", "2", "--hash"});
  ASSERT_EQ(lanes.code, kOk) << lanes.err;
  EXPECT_NE(lanes.out.find("path          lanes of "), std::string::npos) << lanes.out;
  EXPECT_NE(lanes.out.find("fallbacks     0 world-steps"), std::string::npos) << lanes.out;
  const Result scalar = run({"throughput", grasp, "--worlds", "11", "--steps", "40", "--scalar", "--hash"});
  ASSERT_EQ(scalar.code, kOk) << scalar.err;
  EXPECT_NE(scalar.out.find("path          per-world: one world at a time on each thread (--scalar)"), std::string::npos)
      << scalar.out;
  EXPECT_EQ(hash_line(scalar.out), hash_line(lanes.out));
}

TEST(ThroughputCli, TheBodyOnPlaneModelStepsPerWorld) {
  // docs/cli.md: every time-stepping formulation runs; ecp_ncp has no lanes.
  const std::string tip = std::string(QUASISTEP_SOURCE_DIR) + "/examples/ecp_box_tip.json";
  const Result r = run({"throughput", tip, "--worlds", "3", "--steps", "4", "--hash"});
  ASSERT_EQ(r.code, kOk) << r.err;
  EXPECT_NE(r.out.find("3 worlds x 4 steps of ecp_ncp"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("path          per-world: one world at a time on each thread"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("failed        0 of 3 worlds"), std::string::npos) << r.out;
}

TEST(ThroughputCli, BadInputIsOneLineAndExitsOne) {
  const Result zero = run({"throughput", kPush, "--worlds", "0"});
  EXPECT_EQ(zero.code, kInputError);
  EXPECT_NE(zero.err.find("--worlds"), std::string::npos) << zero.err;
  const Result huge = run({"throughput", kPush, "--worlds", "2000000000", "--steps", "1"});
  EXPECT_EQ(huge.code, kInputError);
  EXPECT_EQ(qs::test::count_lines(huge.err), 1) << huge.err;
  EXPECT_NE(huge.err.find("2000000000 worlds need"), std::string::npos) << huge.err;
  EXPECT_TRUE(huge.out.empty());
  const Result ucp = run({"throughput", std::string(QUASISTEP_SOURCE_DIR) + "/tests/scenes/two_link_arms.json",
                          "--worlds", "2", "--steps", "1"});
  EXPECT_EQ(ucp.code, kInputError);
  EXPECT_NE(ucp.err.find("cannot step formulation ucp"), std::string::npos) << ucp.err;
  const Result missing = run({"throughput", "/nonexistent.json"});
  EXPECT_EQ(missing.code, kInputError);
  EXPECT_EQ(qs::test::count_lines(missing.err), 1) << missing.err;
}

}  // namespace
}  // namespace qs::cli::throughput_cli_test
