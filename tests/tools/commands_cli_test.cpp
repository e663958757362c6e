// The command layout (docs/scene-format.md, "Command layout"): command_names, the command
// file's reader and writer, and `quasistep run --commands`.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "quasistep/core/model.hpp"
#include "quasistep/core/scene.hpp"
#include "tests/support/cli_run.hpp"
#include "tools/cli/cli.hpp"
#include "quasistep/core/commands_csv.hpp"

namespace qs::cli::commands_cli_test {
namespace {

const std::string kGripper = std::string(QUASISTEP_SOURCE_DIR) + "/examples/pang_tedrake_gripper.json";
const std::string kPush = std::string(QUASISTEP_SOURCE_DIR) + "/examples/halm_posa_push.json";
const std::vector<std::string> kGripperNames = {"x_l", "x_r", "y_g"};

using Result = qs::test::CliResult;
Result run(std::vector<std::string> args) { return qs::test::run_cli(std::move(args)); }

/// The data rows of a trajectory CSV (its comment lines dropped).
std::string rows(const std::string& csv) {
  std::istringstream in(csv);
  std::string line, out;
  while (std::getline(in, line))
    if (line.empty() || line[0] != '#') out += line + "\n";
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// The cells of a CSV row from column `first` on.
std::string cells_from(const std::string& row, int first) {
  std::size_t at = 0;
  for (int k = 0; k < first; ++k) at = row.find(',', at) + 1;
  return row.substr(at);
}

io::CommandSequence read(const std::string& text, std::span<const std::string> names = kGripperNames) {
  std::istringstream in(text);
  return io::read_commands_csv(in, "c.csv", names);
}

/// The message of the error read() throws for `text`; empty when it throws none.
std::string read_error(const std::string& text) {
  try {
    read(text);
  } catch (const io::CommandsCsvError& e) {
    return e.what();
  }
  return "";
}

class CommandsTest : public qs::test::TempDirTest {
 protected:
  CommandsTest() : TempDirTest("quasistep_commands_test_") {}
};

TEST(CommandNames, AreTheVelocityControlledJointsInTheScenesJointOrder) {
  EXPECT_EQ(command_names(*load_scene_file(kGripper).model), kGripperNames);
  const Scene scene = load_scene_file(kPush);
  const Model& push = *scene.model;
  const std::vector<std::string> names = command_names(push);
  ASSERT_EQ(static_cast<int>(names.size()), push.n_a);
  for (const Joint& j : push.joints)
    if (j.control == Control::velocity) {
      EXPECT_EQ(names[j.dof - push.n_u], j.name);
    }
}

TEST(CommandNames, LeaveOutEffortControlledJoints) {
  const Scene scene = parse_scene(R"({"format": 1, "world": {"type": "vertical"}, "model": {"formulation": "trinkle_lcp"},
    "bodies": [{"name": "a", "kind": "linked"}, {"name": "b", "kind": "linked"}],
    "joints": [{"name": "pushed", "type": "prismatic", "parent": "world", "child": "a", "axis": [1, 0], "control": "effort"},
               {"name": "driven", "type": "prismatic", "parent": "world", "child": "b", "axis": [0, 1]}]})");
  EXPECT_EQ(command_names(*scene.model), std::vector<std::string>{"driven"});
}

TEST(CommandsCsv, ReadsRowsAfterCommentsAndTheHeader) {
  const io::CommandSequence c = read("# made by hand\r\nstep,x_l,x_r,y_g\r\n1,0.1,-0.1,0\n# a comment\n2,0,0,1e-3\n");
  ASSERT_EQ(c.steps, 2);
  EXPECT_EQ(c.names, kGripperNames);
  EXPECT_EQ(std::vector<double>(c.step(1).begin(), c.step(1).end()), (std::vector<double>{0.1, -0.1, 0}));
  EXPECT_EQ(std::vector<double>(c.step(2).begin(), c.step(2).end()), (std::vector<double>{0, 0, 1e-3}));
  EXPECT_EQ(read("step,x_l,x_r,y_g\n").steps, 0);
  // As spreadsheets write them: a byte order mark, spaces after commas, a leading '+'.
  const io::CommandSequence s = read("\xEF\xBB\xBFstep, x_l, x_r, y_g\n1, +0.1, -0.1 ,0\n");
  ASSERT_EQ(s.steps, 1);
  EXPECT_EQ(std::vector<double>(s.step(1).begin(), s.step(1).end()), (std::vector<double>{0.1, -0.1, 0}));
}

TEST(CommandsCsv, EveryMistakeIsOneLineNamingTheLineAndTheCause) {
  EXPECT_EQ(read_error(""), "c.csv: no header line \"step,x_l,x_r,y_g\"");
  EXPECT_EQ(read_error("step,x_r,x_l,y_g\n"),
            "c.csv: line 1: the header must be \"step,x_l,x_r,y_g\" (step, then the scene's velocity-commanded "
            "joints in order), not \"step,x_r,x_l,y_g\"");
  EXPECT_EQ(read_error("step,x_l,x_r,y_g\n1,0,0\n"), "c.csv: line 2: 3 columns where the header has 4");
  EXPECT_EQ(read_error("step,x_l,x_r,y_g\n1,0,0,0,0\n"), "c.csv: line 2: 5 columns where the header has 4");
  EXPECT_EQ(read_error("step,x_l,x_r,y_g\n2,0,0,0\n"),
            "c.csv: line 2: step must be 1 (rows are steps 1, 2, ... in order), not \"2\"");
  EXPECT_EQ(read_error("step,x_l,x_r,y_g\n1,0,0,0\n1,0,0,0\n"),
            "c.csv: line 3: step must be 2 (rows are steps 1, 2, ... in order), not \"1\"");
  EXPECT_EQ(read_error("step,x_l,x_r,y_g\n1,0,nan,0\n"), "c.csv: line 2: x_r: \"nan\" is not a finite number");
  EXPECT_EQ(read_error("step,x_l,x_r,y_g\n1,0,0,inf\n"), "c.csv: line 2: y_g: \"inf\" is not a finite number");
  EXPECT_EQ(read_error("step,x_l,x_r,y_g\n1,0.1m,0,0\n"), "c.csv: line 2: x_l: \"0.1m\" is not a finite number");
  EXPECT_EQ(read_error("step,x_l,x_r,y_g\n1,,0,0\n"), "c.csv: line 2: x_l: \"\" is not a finite number");
  EXPECT_EQ(read_error("step,x_l,x_r,y_g\n1,1e999,0,0\n"), "c.csv: line 2: x_l: \"1e999\" is not a finite number");
  EXPECT_EQ(read_error("step,x_l,x_r,y_g\n1,+,0,0\n"), "c.csv: line 2: x_l: \"+\" is not a finite number");
  EXPECT_EQ(read_error("step,x_l,x_r,y_g\n1,++1,0,0\n"), "c.csv: line 2: x_l: \"++1\" is not a finite number");
}

TEST(CommandsCsv, WrittenFilesReadBackToTheSameDoubles) {
  io::CommandSequence c;
  c.names = kGripperNames;
  c.steps = 2;
  c.values = {0.1, 1.0 / 3.0, -0.0, std::nextafter(1.0, 2.0), 5e-324, -std::numeric_limits<double>::max()};
  std::ostringstream out;
  io::write_commands_csv(c, "# provenance", out);
  EXPECT_EQ(out.str().substr(0, 30), "# provenance\nstep,x_l,x_r,y_g\n");
  const io::CommandSequence back = read(out.str());
  ASSERT_EQ(back.values.size(), c.values.size());
  for (std::size_t i = 0; i < c.values.size(); ++i) {
    EXPECT_EQ(back.values[i], c.values[i]) << i;
    EXPECT_EQ(std::signbit(back.values[i]), std::signbit(c.values[i])) << i;
  }
}

// The scene's own schedules, sampled where the steppers sample them (the midpoint of each
// step, docs/scene-format.md "Sampling convention"), replay its run bitwise.
TEST_F(CommandsTest, TheScenesOwnSchedulesAsACommandFileReplayItsRunBitwise) {
  for (const std::string& scene : {kGripper, kPush}) {
    const Scene loaded = load_scene_file(scene);
    const Model& m = *loaded.model;
    io::CommandSequence c;
    c.names = command_names(m);
    c.steps = m.step.steps;
    for (int l = 1; l <= c.steps; ++l)
      for (const Joint& j : m.joints)
        if (j.control == Control::velocity) c.values.push_back(j.command((l - 0.5) * m.step.h));
    std::ostringstream text;
    io::write_commands_csv(c, "# the scene's schedules", text);
    const std::string commands = file("commands.csv", text.str());

    const Result plain = run({"run", scene, "--out", path("plain.csv")});
    ASSERT_EQ(plain.code, kOk) << plain.err;
    const Result replay = run({"run", scene, "--commands", commands, "--out", path("replay.csv")});
    ASSERT_EQ(replay.code, kOk) << replay.err;
    EXPECT_EQ(rows(read_file(path("replay.csv"))), rows(read_file(path("plain.csv")))) << scene;
  }
}

TEST_F(CommandsTest, CommandsReplaceTheSchedulesAndTheirRowsSetTheSteps) {
  // Zero velocities for 5 steps: the fingers and the carriage stay where they start.
  const std::string still = file("still.csv", "step,x_l,x_r,y_g\n1,0,0,0\n2,0,0,0\n3,0,0,0\n4,0,0,0\n5,0,0,0\n");
  const Result r = run({"run", kGripper, "--commands", still, "--out", path("t.csv")});
  ASSERT_EQ(r.code, kOk) << r.err;
  EXPECT_NE(r.err.find("run: 5 of 5 steps"), std::string::npos) << r.err;
  std::istringstream csv(rows(read_file(path("t.csv"))));
  std::string header, first, line;
  std::getline(csv, header);
  EXPECT_EQ(header, "step,t,cylinder.x,cylinder.y,x_l,x_r,y_g");
  std::getline(csv, first);
  int n = 1;
  while (std::getline(csv, line)) {
    EXPECT_EQ(cells_from(line, 4), cells_from(first, 4)) << line;  // x_l, x_r, y_g
    ++n;
  }
  EXPECT_EQ(n, 6);
  // The trajectory's provenance names the command file.
  const std::string text = read_file(path("t.csv"));
  EXPECT_NE(text.substr(0, text.find('\n')).find(" commands=" + still), std::string::npos) << text.substr(0, 200);
}

TEST_F(CommandsTest, AVelocityThatThrowsTheStateBeyondItsRangeFailsTheStep) {
  // 1e308 m/s for one step of 0.025 s moved the disk 1.24e306 m, every step `solved`, and
  // the next step's gaps were inf. The step is refused, with the state it would reach.
  const std::string huge = file("huge.csv",
                                "step,finger1_x,finger1_y,finger2_x,finger2_y\n1,1e308,0.1,0,0.1\n2,0,0.1,0,0.1\n");
  const Result r = run({"run", kPush, "--commands", huge, "--out", path("t.csv")});
  EXPECT_EQ(r.code, kStepFailed) << r.err;
  EXPECT_NE(r.err.find("run: 0 of 2 steps"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("step 1 (t = 0 to 0.025 s): numerical_failure: the step would move disk.x to 1.24"),
            std::string::npos)
      << r.err;
  // Within the range (1e140 m/s: the disk at 1.2e138 m) the step is taken.
  const std::string large = file("large.csv", "step,finger1_x,finger1_y,finger2_x,finger2_y\n1,1e140,0.1,0,0.1\n");
  const Result ok = run({"run", kPush, "--commands", large});
  EXPECT_EQ(ok.code, kOk) << ok.err;
}

TEST_F(CommandsTest, AFileThatDoesNotFitIsAOneLineInputError) {
  const std::string two = file("two.csv", "step,x_l,x_r,y_g\n1,0,0,0\n2,0,0,0\n");
  Result r = run({"run", kGripper, "--commands", two, "--steps", "3"});
  EXPECT_EQ(r.code, kInputError);
  EXPECT_EQ(qs::test::count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("--commands: " + two + " holds 2 steps; --steps asks for 3"), std::string::npos) << r.err;
  EXPECT_EQ(run({"run", kGripper, "--commands", two, "--steps", "2"}).code, kOk);

  r = run({"run", kPush, "--commands", two, "--out", path("never.csv")});
  EXPECT_EQ(r.code, kInputError);
  EXPECT_EQ(qs::test::count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(two + ": line 1: the header must be \"step,"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(path("never.csv")));

  // The command file is an input: an output option naming it is refused, the file untouched.
  for (const char* option : {"--out", "--forces"}) {
    r = run({"run", kGripper, "--commands", two, option, two});
    EXPECT_EQ(r.code, kInputError) << option;
    EXPECT_NE(r.err.find(option), std::string::npos) << r.err;
    EXPECT_EQ(read_file(two), "step,x_l,x_r,y_g\n1,0,0,0\n2,0,0,0\n") << option;
  }

  r = run({"run", kGripper, "--commands", path("missing.csv")});
  EXPECT_EQ(r.code, kInputError);
  EXPECT_NE(r.err.find(path("missing.csv") + ": cannot be opened"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace qs::cli::commands_cli_test
