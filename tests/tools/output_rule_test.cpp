// The output rule every output option follows (quasistep/core/output_file.hpp, docs/cli.md "Output
// files"): regular and new files atomically, "-" to standard output, devices and pipes
// straight through, symlinks followed, directories, missing folders and inputs refused
// before any work, and a command's outputs committed together. Everything happens in a
// temporary folder; the real /dev/null is never touched.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <array>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/cli_run.hpp"
#include "quasistep/core/output_file.hpp"

namespace qs::output_rule_test {
namespace {

namespace fs = std::filesystem;
using test::CliResult;
using test::count_lines;
using test::run_cli;

const std::string kScene = std::string(QUASISTEP_SOURCE_DIR) + "/examples/anitescu_grasp.json";
const std::string kStudy = std::string(QUASISTEP_SOURCE_DIR) + "/examples/mc_push.json";

class OutputRule : public test::TempDirTest {
 protected:
  OutputRule() : TempDirTest("quasistep_output_rule_") {}
  static std::string read(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  /// The names in the temporary folder, sorted.
  std::vector<std::string> listing() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  /// Runs, expecting exit 1 and one line on stderr containing every `parts`.
  void expect_refused(std::vector<std::string> args, std::vector<std::string> parts) {
    const CliResult r = run_cli(std::move(args));
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    for (const std::string& p : parts) EXPECT_NE(r.err.find(p), std::string::npos) << "'" << p << "' in " << r.err;
  }
  /// The trajectory `run` writes for kScene, for comparing with what a path received.
  std::string reference_trajectory() {
    const CliResult r = run_cli({"run", kScene, "--out", "-"});
    EXPECT_EQ(r.code, 0) << r.err;
    return r.out;
  }
};

TEST_F(OutputRule, ANewAndAnExistingRegularFileAreWrittenWholeAndKeepTheirMode) {
  const std::string out = path("t.csv");
  ASSERT_EQ(run_cli({"run", kScene, "--out", out}).code, 0);
  EXPECT_EQ(read(out), reference_trajectory());
  ASSERT_EQ(chmod(out.c_str(), 0640), 0);
  ASSERT_EQ(run_cli({"run", kScene, "--out", out}).code, 0);
  struct stat st;
  ASSERT_EQ(stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(listing(), std::vector<std::string>{"t.csv"});  // no temporary file left
}

TEST_F(OutputRule, AUsersOwnPartialFileIsNeverTouched) {
  const std::string mine = file("t.csv.partial", "my notes\n");
  ASSERT_EQ(run_cli({"run", kScene, "--out", path("t.csv")}).code, 0);
  EXPECT_EQ(read(mine), "my notes\n");
  // And a failed command does not remove it either.
  expect_refused({"run", kScene, "--out", path("t.csv"), "--forces", path("missing/f.csv")}, {"--forces"});
  EXPECT_EQ(read(mine), "my notes\n");
}

TEST_F(OutputRule, DashIsStandardOutputAndTheSummaryGoesToStderr) {
  const CliResult run = run_cli({"run", kScene, "--out", "-"});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(run.out.rfind("# quasistep ", 0), 0u);
  EXPECT_NE(run.err.find("trajectory in standard output"), std::string::npos) << run.err;
  EXPECT_TRUE(listing().empty());  // no file named "-"

  const CliResult mc = run_cli({"mc", kStudy, "--samples", "8", "--out", "-"});
  ASSERT_EQ(mc.code, 0) << mc.err;
  EXPECT_EQ(mc.out.rfind("# quasistep ", 0), 0u) << mc.out;  // the CSV alone on stdout
  EXPECT_EQ(mc.out.find("95% interval"), std::string::npos);
  EXPECT_NE(mc.err.find("95% interval"), std::string::npos) << mc.err;

  const CliResult lp = run_cli({"export-miqp", std::string(QUASISTEP_SOURCE_DIR) + "/examples/pang_tedrake_grasp.json",
                                "--out", "-"});
  ASSERT_EQ(lp.code, 0) << lp.err;
  EXPECT_NE(lp.out.find("Minimize"), std::string::npos);
}

TEST_F(OutputRule, AtMostOneOutputIsStandardOutput) {
  expect_refused({"run", kScene, "--out", "-", "--forces", "-"}, {"--forces", "only one output can be standard output"});
  expect_refused({"mc", kStudy, "--samples", "8", "--out", "-", "--report", "-"}, {"--report"});
}

TEST_F(OutputRule, AFifoIsWrittenThroughAndStaysAFifo) {
  const std::string fifo = path("pipe");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] {
    std::ifstream in(fifo, std::ios::binary);  // opening waits for the writer
    std::stringstream s;
    s << in.rdbuf();
    received = s.str();
  });
  const CliResult r = run_cli({"run", kScene, "--out", fifo});
  reader.join();
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(received, reference_trajectory());
  struct stat st;
  ASSERT_EQ(lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(listing(), std::vector<std::string>{"pipe"});
}

TEST_F(OutputRule, ACharacterDeviceIsWrittenThroughNeverReplaced) {
  // A private null device in the temporary folder (needs root / CAP_MKNOD).
  const std::string dev = path("null");
  if (mknod(dev.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) GTEST_SKIP() << "mknod needs root";
  const CliResult r = run_cli({"mc", kStudy, "--samples", "8", "--out", dev, "--report", dev});
  ASSERT_EQ(r.code, 0) << r.err;  // a device may take several outputs
  struct stat st;
  ASSERT_EQ(lstat(dev.c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_EQ(listing(), std::vector<std::string>{"null"});
}

TEST_F(OutputRule, ASymlinkIsFollowedAndStaysALink) {
  const std::string target = file("real.csv", "old\n");
  const std::string link = path("link.csv");
  fs::create_symlink("real.csv", link);
  ASSERT_EQ(run_cli({"run", kScene, "--out", link}).code, 0);
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(read(target), reference_trajectory());
  // A link to a file that does not exist yet creates that file.
  const std::string dangling = path("new_link.csv");
  fs::create_symlink("created.csv", dangling);
  ASSERT_EQ(run_cli({"run", kScene, "--out", dangling}).code, 0);
  EXPECT_TRUE(fs::is_symlink(dangling));
  EXPECT_EQ(read(path("created.csv")), reference_trajectory());
  // A loop is refused.
  fs::create_symlink("loop_b", path("loop_a"));
  fs::create_symlink("loop_a", path("loop_b"));
  expect_refused({"run", kScene, "--out", path("loop_a")}, {"--out", "symbolic links"});
}

TEST_F(OutputRule, ADirectoryOrAMissingFolderIsRefusedBeforeAnyWork) {
  fs::create_directory(path("d"));
  expect_refused({"run", kScene, "--out", path("d")}, {"--out", "is a directory"});
  expect_refused({"mc", kStudy, "--samples", "8", "--report", path("no/such/r.html")},
                 {"--report", "folder", "does not exist"});
  expect_refused({"run", kScene, "--forces", path("file/f.csv")}, {"--forces"});  // "file" does not exist
  file("plain", "x");
  expect_refused({"run", kScene, "--forces", path("plain/f.csv")}, {"--forces", "is not a folder"});
  EXPECT_EQ(listing(), (std::vector<std::string>{"d", "plain"}));
}

TEST_F(OutputRule, AnUnwritableFolderIsRefused) {
  if (geteuid() == 0) GTEST_SKIP() << "root writes into any folder";
  fs::create_directory(path("ro"));
  fs::permissions(path("ro"), fs::perms::owner_read | fs::perms::owner_exec);
  expect_refused({"run", kScene, "--out", path("ro/t.csv")}, {"--out", "not writable"});
  fs::permissions(path("ro"), fs::perms::owner_all);
}

TEST_F(OutputRule, AnInputIsNeverAnOutput) {
  const std::string scene = path("scene.json");
  fs::copy_file(kScene, scene);
  const std::string before = read(scene);
  expect_refused({"run", scene, "--out", scene}, {"--out", "is the input file"});
  fs::create_symlink("scene.json", path("alias.json"));
  expect_refused({"run", scene, "--forces", path("alias.json")}, {"--forces", "is the input file"});
  fs::create_hard_link(scene, path("hard.json"));
  expect_refused({"run", path("hard.json"), "--out", scene}, {"--out", "is the input file"});
  EXPECT_EQ(read(scene), before);
  const std::string miqp = path("miqp.json");
  fs::copy_file(std::string(QUASISTEP_SOURCE_DIR) + "/examples/pang_tedrake_grasp.json", miqp);
  const std::string miqp_before = read(miqp);
  expect_refused({"export-miqp", miqp, "--out", miqp}, {"--out", "is the input file"});
  EXPECT_EQ(read(miqp), miqp_before);
  // mc-merge's shards are its inputs.
  ASSERT_EQ(run_cli({"mc", kStudy, "--samples", "8", "--out", path("a.csv")}).code, 0);
  const std::string shard = read(path("a.csv"));
  expect_refused({"mc-merge", path("a.csv"), "--report", path("a.csv")}, {"--report", "is the input file"});
  EXPECT_EQ(read(path("a.csv")), shard);
}

TEST_F(OutputRule, TwoOptionsNamingOneFileAreRefused) {
  expect_refused({"run", kScene, "--out", path("x.csv"), "--forces", path("x.csv")}, {"--forces", "same file as --out"});
  file("z.csv", "z\n");
  expect_refused({"mc", kStudy, "--samples", "8", "--out", path("z.csv"), "--report", dir_.string() + "/./z.csv"},
                 {"--report", "same file as --out"});
  EXPECT_EQ(read(path("z.csv")), "z\n");
  EXPECT_EQ(listing(), std::vector<std::string>{"z.csv"});
}

TEST_F(OutputRule, ACommandsOutputsAreOneTransaction) {
  // Refused before the work: the CSV is not written either.
  expect_refused({"mc", kStudy, "--samples", "8", "--out", path("s.csv"), "--report", path("none/r.html")},
                 {"--report"});
  EXPECT_TRUE(listing().empty());
  // A failure while writing the second output leaves neither in place.
  {
    std::ostringstream standard_output;
    io::OutputSet set(standard_output, {});
    io::Output* a = set.add("--out", path("a.csv"));
    io::Output* b = set.add("--report", path("b.html"));
    set.open();
    a->stream() << "complete\n";
    b->stream().setstate(std::ios::badbit);  // as a full disk would
    EXPECT_THROW(set.commit(), io::OutputError);
  }
  EXPECT_TRUE(listing().empty());
  // A set destroyed uncommitted (an exception in the command) leaves nothing either.
  {
    std::ostringstream standard_output;
    io::OutputSet set(standard_output, {});
    set.add("--out", path("a.csv"));
    set.open();
    EXPECT_EQ(listing().size(), 1u);  // the temporary file
  }
  EXPECT_TRUE(listing().empty());
}

TEST_F(OutputRule, MessagesStayOnOneLine) {
  expect_refused({"run", kScene, "--out", path("no\nsuch/t.csv")}, {"no\\nsuch"});
}

/// A signal the process was started with ignored stays ignored (`nohup quasistep mc ...`
/// must survive a hang-up); every other one of io::kInterruptSignals gets the cleanup handler.
TEST(OutputRuleSignals, AnIgnoredSignalStaysIgnoredAndTheOthersCleanUp) {
  std::array<struct sigaction, io::kInterruptSignals.size()> saved{};
  for (std::size_t i = 0; i < io::kInterruptSignals.size(); ++i) sigaction(io::kInterruptSignals[i], nullptr, &saved[i]);
  std::signal(SIGHUP, SIG_IGN);
  io::install_interrupt_cleanup();
  for (std::size_t i = 0; i < io::kInterruptSignals.size(); ++i) {
    struct sigaction now {};
    sigaction(io::kInterruptSignals[i], nullptr, &now);
    if (io::kInterruptSignals[i] == SIGHUP || saved[i].sa_handler == SIG_IGN)
      EXPECT_EQ(now.sa_handler, SIG_IGN) << "signal " << io::kInterruptSignals[i];
    else
      EXPECT_TRUE(now.sa_handler != SIG_IGN && now.sa_handler != SIG_DFL) << "signal " << io::kInterruptSignals[i];
  }
  for (std::size_t i = 0; i < io::kInterruptSignals.size(); ++i) sigaction(io::kInterruptSignals[i], &saved[i], nullptr);
}

#ifdef QUASISTEP_CLI_PATH
/// Runs the real binary through the shell; returns its exit status as the shell sees it.
int shell(const std::string& command) {
  const int s = std::system(command.c_str());
  return WIFEXITED(s) ? WEXITSTATUS(s) : -1;
}

TEST_F(OutputRule, AnInterruptedRunLeavesNoTemporaryFile) {
  // A run far longer than the timeout, writing both of its outputs as it goes.
  const std::string cmd = std::string("timeout -s INT 1 ") + QUASISTEP_CLI_PATH + " run " + kScene +
                          " --steps 100000000 --out " + path("t.csv") + " --forces " + path("f.csv") + " 2>/dev/null";
  EXPECT_EQ(shell(cmd), 124);  // timeout's status: the command was stopped
  EXPECT_TRUE(listing().empty());
}

TEST_F(OutputRule, EverySignalThatEndsARunLeavesNoTemporaryFile) {
  // The signals a scheduler or ulimit sends (SIGINT is the test above).
  for (const char* sig : {"XCPU", "USR1"}) {
    const std::string cmd = std::string("timeout -s ") + sig + " 1 " + QUASISTEP_CLI_PATH + " run " + kScene +
                            " --steps 100000000 --out " + path("t.csv") + " --forces " + path("f.csv") +
                            " 2>/dev/null";
    EXPECT_EQ(shell(cmd), 124) << sig;
    EXPECT_TRUE(listing().empty()) << sig;
  }
}

TEST_F(OutputRule, AFailedWriteToStandardOutputFailsTheCommand) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  const std::string problem = file("p.json", R"({"M": [[1]], "q": [-1]})");
  EXPECT_EQ(shell(std::string(QUASISTEP_CLI_PATH) + " lcp " + problem + " > /dev/full 2>" + path("err.txt")), 1);
  EXPECT_NE(read(path("err.txt")).find("cannot write standard output"), std::string::npos);
  EXPECT_EQ(shell(std::string(QUASISTEP_CLI_PATH) + " run " + kScene + " --out - > /dev/full 2>/dev/null"), 1);
  EXPECT_EQ(shell(std::string(QUASISTEP_CLI_PATH) + " validate " + kScene + " > /dev/full 2>/dev/null"), 1);
  // A failed `--out -` (and a failed report) is said once: one "quasistep:" line.
  const std::string study = std::string(QUASISTEP_SOURCE_DIR) + "/examples/mc_push.json";
  for (const std::string& outputs :
       {std::string(" --out - > /dev/full"), std::string(" --report /dev/full > /dev/null")}) {
    EXPECT_EQ(shell(std::string(QUASISTEP_CLI_PATH) + " mc " + study + " --samples 4" + outputs + " 2>" +
                    path("err.txt")),
              1)
        << outputs;
    const std::string err = read(path("err.txt"));
    std::size_t lines = 0;
    for (std::size_t at = err.find("quasistep:"); at != std::string::npos; at = err.find("quasistep:", at + 1)) ++lines;
    EXPECT_EQ(lines, 1u) << outputs << ": " << err;
  }
}
#endif

}  // namespace
}  // namespace qs::output_rule_test
