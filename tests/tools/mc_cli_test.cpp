// `quasistep mc` and `quasistep mc-merge`: the summary, the sample CSV and its provenance,
// shards that merge to exactly the single run's summary, the report file, and one-line
// refusals of bad input with no output file left behind.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/cli_run.hpp"
#include "tests/support/example_json.hpp"

namespace qs::mc_cli_test {
namespace {

using nlohmann::json;
using test::CliResult;
using test::count_lines;
using test::run_cli;

class McCli : public test::TempDirTest {
 protected:
  McCli() : TempDirTest("quasistep_mc_") {}
  std::string grasp = std::string(QUASISTEP_SOURCE_DIR) + "/examples/mc_grasp.json";
  std::string read(const std::string& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  /// Runs, expecting one line on stderr and exit 1; returns that line.
  std::string refused(std::vector<std::string> args) {
    const CliResult r = run_cli(std::move(args));
    EXPECT_EQ(r.code, 1) << r.out << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    return r.err;
  }
};

TEST_F(McCli, PrintsTheSummaryAndWritesTheSamples) {
  const CliResult r = run_cli({"mc", grasp, "--samples", "40", "--seed", "3", "--out", path("s.csv"), "--report",
                               path("r.html")});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("mc: 40 samples of 40 (seed 3, model anitescu_qp"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("95% interval ["), std::string::npos);
  for (const char* o : {"held", "slipped", "never_touched", "solver_failed"}) EXPECT_NE(r.out.find(o), std::string::npos);
  EXPECT_NE(r.err.find("report written to " + path("r.html")), std::string::npos) << r.err;
  // The scene, by path and description; the run's path as a sentence.
  EXPECT_NE(r.err.find("mc: " + grasp + ": The main job: how likely is the parallel gripper"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("; lanes of "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("fall back to the scalar path\n"), std::string::npos) << r.err;
  // Every bin by its edges, its samples and its rate: the cylinder's x in [-0.015, 0.015].
  EXPECT_NE(r.out.find("    bodies.cylinder.pose.x\n      [-0.015, -0.012)  "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("      [0.012, 0.015]  "), std::string::npos) << r.out;
  {
    std::istringstream summary(r.out.substr(r.out.find("    bodies.cylinder.pose.x\n")));
    std::string line;
    std::getline(summary, line);
    long samples = 0;
    for (int k = 0; k < 10 && std::getline(summary, line); ++k) samples += std::stol(line.substr(28, 10));
    EXPECT_EQ(samples, 40) << r.out;  // every sample in one bin
  }
  const std::string csv = read(path("s.csv"));
  EXPECT_EQ(csv.rfind("# quasistep ", 0), 0u);
  EXPECT_NE(csv.find(" seed=3 world=vertical model=anitescu_qp\n"), std::string::npos);
  for (const char* h : {"# format: mc-samples 1\n", "# scene_hash: ", "# model: anitescu_qp\n", "# seed: 3\n", "# samples: 40\n", "# shard: 0/1\n",
                        "# success: lifted cylinder | lifted cylinder >= 0.02 m until 0.6 s\n",
                        "# parameter: bodies.cylinder.pose.x truncated_normal mean=0 stddev=0.005 low=-0.015 high=0.015\n",
                        "sample,bodies.cylinder.pose.x,pairs.left_finger/cylinder.friction,"
                        "pairs.right_finger/cylinder.friction,outcome,x,y,theta,failed_step,status\n"})
    EXPECT_NE(csv.find(h), std::string::npos) << h;
  EXPECT_EQ(count_lines(csv), 12 + 40);  // provenance, format, 6 study lines, 3 parameters, columns
  const std::string html = read(path("r.html"));
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(path("s.csv.partial")));
}

TEST_F(McCli, ShardsMergeToTheSingleRunsSummary) {
  const CliResult whole = run_cli({"mc", grasp, "--samples", "30", "--seed", "9", "--threads", "1"});
  ASSERT_EQ(whole.code, 0) << whole.err;
  std::vector<std::string> files;
  for (int k = 0; k < 3; ++k) {
    files.push_back(path("part" + std::to_string(k) + ".csv"));
    const CliResult r = run_cli({"mc", grasp, "--samples", "30", "--seed", "9", "--shard", std::to_string(k) + "/3",
                                 "--out", files.back(), "--threads", "2"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("mc: 10 samples of 30"), std::string::npos);
  }
  // Any order of the files.
  const CliResult merged = run_cli({"mc-merge", files[2], files[0], files[1], "--report", path("m.html")});
  ASSERT_EQ(merged.code, 0) << merged.err;
  EXPECT_EQ(merged.out, whole.out);
  EXPECT_NE(read(path("m.html")).find("not available"), std::string::npos);

  // Refusals: a missing slice, an overlap, another seed, a truncated file.
  EXPECT_NE(refused({"mc-merge", files[0], files[1]}).find("shard 2/3 is missing (samples 20..29)"), std::string::npos);
  EXPECT_NE(refused({"mc-merge", files[0], files[1], files[2], files[1]}).find("are both shard 1/3"), std::string::npos);
  const std::string other = path("other.csv");
  ASSERT_EQ(run_cli({"mc", grasp, "--samples", "30", "--seed", "10", "--shard", "2/3", "--out", other}).code, 0);
  EXPECT_NE(refused({"mc-merge", files[0], files[1], other}).find("different study"), std::string::npos);
  EXPECT_NE(refused({"mc-merge", files[0], files[1], other}).find("seed 10 vs 9"), std::string::npos);
  std::string text = read(files[2]);
  text.erase(text.rfind('\n', text.size() - 2) + 1);  // the last row lost
  const std::string cut = file("cut.csv", text);
  EXPECT_NE(refused({"mc-merge", files[0], files[1], cut}).find("has 9 of its 10 samples"), std::string::npos);
  const std::string dup = file("dup.csv", read(files[2]) + text.substr(text.rfind('\n', text.size() - 2) + 1));
  EXPECT_NE(refused({"mc-merge", files[0], files[1], dup}).find("appears twice"), std::string::npos);
  EXPECT_NE(refused({"mc-merge", path("none.csv")}).find("cannot open"), std::string::npos);
  EXPECT_NE(refused({"mc-merge", file("junk.csv", "a,b\n1,2\n")}).find("not a sample CSV of quasistep mc"), std::string::npos);
  std::string bad_word = read(files[2]);
  bad_word.replace(bad_word.rfind(",held,") != std::string::npos ? bad_word.rfind(",held,") : bad_word.rfind(",slipped,"),
                   1, ",exploded");
  EXPECT_NE(refused({"mc-merge", files[0], files[1], file("word.csv", bad_word)}).find("unknown outcome"), std::string::npos);
  // More slices than samples: an empty shard says so (it said "samples 0..-1") and merges.
  std::vector<std::string> small;
  for (int k = 0; k < 3; ++k) {
    const std::string name = std::to_string(k);  // (GCC 12 warns on "e" + to_string(k) + ...)
    small.push_back(path("empty" + name));
    const CliResult r = run_cli({"mc", grasp, "--samples", "2", "--seed", "9", "--shard", name + "/3", "--out", small.back()});
    ASSERT_EQ(r.code, 0) << r.err;
    if (k == 0) {
      EXPECT_NE(r.err.find("mc: samples none (shard 0/3)"), std::string::npos) << r.err;
    }
  }
  const CliResult one_run = run_cli({"mc", grasp, "--samples", "2", "--seed", "9"});
  const CliResult small_merged = run_cli({"mc-merge", small[0], small[1], small[2]});
  ASSERT_EQ(small_merged.code, 0) << small_merged.err;
  EXPECT_EQ(small_merged.out, one_run.out);
}

TEST_F(McCli, WithoutASceneRunsTheBuiltInStudyByteForByteTheExample) {
  const CliResult builtin = run_cli({"mc", "--samples", "12", "--seed", "4", "--out", path("b.csv")});
  ASSERT_EQ(builtin.code, 0) << builtin.err;
  const CliResult file = run_cli({"mc", grasp, "--samples", "12", "--seed", "4", "--out", path("f.csv")});
  ASSERT_EQ(file.code, 0) << file.err;
  EXPECT_EQ(builtin.out, file.out);  // the summary names the scene hash: the same bytes
  // Shards of the built-in study and of the file are one study.
  ASSERT_EQ(run_cli({"mc", "--samples", "12", "--seed", "4", "--shard", "0/2", "--out", path("b0.csv")}).code, 0);
  ASSERT_EQ(run_cli({"mc", grasp, "--samples", "12", "--seed", "4", "--shard", "1/2", "--out", path("f1.csv")}).code, 0);
  const CliResult merged = run_cli({"mc-merge", path("b0.csv"), path("f1.csv")});
  ASSERT_EQ(merged.code, 0) << merged.err;
  EXPECT_EQ(merged.out, file.out);
  EXPECT_NE(read(path("b.csv")).find("scene=built-in examples/mc_grasp.json"), std::string::npos);
}

TEST_F(McCli, BadInputIsOneLineAndLeavesNoFile) {
  EXPECT_NE(refused({"mc", grasp, "--samples", "0", "--out", path("a.csv")}).find("--samples 0"), std::string::npos);
  EXPECT_NE(refused({"mc", grasp, "--samples", "10", "--shard", "3/3", "--out", path("a.csv")}).find("0 <= K < M"),
            std::string::npos);
  EXPECT_NE(refused({"mc", grasp, "--samples", "10", "--shard", "x", "--out", path("a.csv")}).find("expected K/M"),
            std::string::npos);
  // A negative seed would wrap to 2^64 - 1 as an unsigned number (found in review).
  EXPECT_NE(refused({"mc", grasp, "--samples", "10", "--seed", "-1", "--out", path("a.csv")}).find("--seed: must be >= 0 (got -1)"),
            std::string::npos);
  EXPECT_NE(refused({"mc", grasp, "--samples", "10", "--threads", "-2", "--out", path("a.csv")}).find("--threads: must be >= 0"),
            std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(path("a.csv")));
  EXPECT_FALSE(std::filesystem::exists(path("a.csv.partial")));

  json j = test::example_json("mc_grasp.json");
  j["uncertainty"]["parameters"][0]["stddev"] = -1;
  EXPECT_NE(refused({"mc", file("neg.json", j.dump()), "--samples", "5"}).find("stddev"), std::string::npos);
  j = test::example_json("mc_grasp.json");
  j["uncertainty"]["parameters"][0]["parameter"] = "bodies.cylinder.colour";
  EXPECT_NE(refused({"mc", file("unknown.json", j.dump()), "--samples", "5"}).find("bodies.cylinder.colour"),
            std::string::npos);
  j = test::example_json("mc_grasp.json");
  j["success"]["body"] = "teapot";
  EXPECT_NE(refused({"mc", file("teapot.json", j.dump()), "--samples", "5"}).find("teapot"), std::string::npos);
  j = test::example_json("mc_grasp.json");
  j.erase("success");
  EXPECT_NE(refused({"mc", file("nosuccess.json", j.dump()), "--samples", "5", "--out", path("b.csv")})
                .find("success: the scene has no success criterion"),
            std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(path("b.csv")));
}

/// `csv` with the first data row's field `column` (counted from 0) replaced by `value`.
std::string with_field(const std::string& csv, int column, const std::string& value) {
  std::istringstream in(csv);
  std::string out, line;
  bool done = false;
  while (std::getline(in, line)) {
    if (!done && !line.empty() && std::isdigit(static_cast<unsigned char>(line[0]))) {
      std::vector<std::string> f;
      std::stringstream ls(line);
      for (std::string cell; std::getline(ls, cell, ',');) f.push_back(cell);
      f[static_cast<std::size_t>(column)] = value;
      line.clear();
      for (std::size_t i = 0; i < f.size(); ++i) line += (i ? "," : "") + f[i];
      done = true;
    }
    out += line + "\n";
  }
  return out;
}

TEST_F(McCli, MergeRefusesRowsTheStudyCouldNotHaveWritten) {
  // The push study: sample, y (truncated normal on [-0.03, 0.03]), friction (uniform on
  // [0.1, 0.6]), outcome, x, y, theta, failed_step, status.
  const std::string push = std::string(QUASISTEP_SOURCE_DIR) + "/examples/mc_push.json";
  // Every row a real study writes passes the checks (both goal outcomes occur).
  ASSERT_EQ(run_cli({"mc", push, "--samples", "200", "--seed", "2", "--out", path("p.csv")}).code, 0);
  const std::string good = read(path("p.csv"));
  const CliResult merged = run_cli({"mc-merge", path("p.csv")});
  ASSERT_EQ(merged.code, 0) << merged.err;
  EXPECT_NE(merged.out.find("in_goal"), std::string::npos);
  struct Case {
    int column;
    std::string value, cause;
  };
  for (const Case& c : std::vector<Case>{
           {2, "-0.2", "pairs.pusher/puck.friction -0.2 is outside its distribution's support [0.1, 0.6]"},
           {1, "0.05", "bodies.puck.pose.y 0.05 is outside its distribution's support [-0.03, 0.03]"},
           {1, "nan", "is not a finite number"},
           {4, "nan", "pose x \"nan\" is not a finite number"},
           {6, "inf", "pose theta \"inf\" is not a finite number"},
           {3, "missed", "outcome missed contradicts the final pose"},  // sample 0 ends in the goal
           {3, "held", "outcome held is not one of a goal_region study's outcomes"},
           {3, "solver_failed", "outcome solver_failed does not agree with status solved and failed_step -1"},
           {8, "iteration_limit", "does not agree with status iteration_limit"},
           {7, "0", "failed_step \"0\" is not a step"}}) {
    SCOPED_TRACE(c.value);
    const std::string bad = file("bad.csv", with_field(good, c.column, c.value));
    const std::string err = refused({"mc-merge", bad});
    EXPECT_NE(err.find(c.cause), std::string::npos) << err;
    EXPECT_NE(err.find("bad.csv:12: "), std::string::npos) << err;  // file and line of the first row
  }
}

TEST_F(McCli, MergeRefusesAHeaderClaimingMoreSamplesThanMemoryWithoutAllocatingThem) {
  const std::string push = std::string(QUASISTEP_SOURCE_DIR) + "/examples/mc_push.json";
  ASSERT_EQ(run_cli({"mc", push, "--samples", "4", "--out", path("p.csv")}).code, 0);
  std::string csv = read(path("p.csv"));
  csv.replace(csv.find("# samples: 4"), 12, "# samples: 4000000000000000000");
  const std::string err = refused({"mc-merge", file("huge.csv", csv)});
  EXPECT_NE(err.find("has 4 of its"), std::string::npos) << err;
}

}  // namespace
}  // namespace qs::mc_cli_test
