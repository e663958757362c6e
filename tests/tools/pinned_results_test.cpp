// Pinned results: every example scene's `run` trajectory and forces, its `throughput --hash`
// and, for the Monte Carlo examples, a short study's sample CSV, checked against the values
// recorded in tests/data/pinned_results.json. A change of any number of any example shows up
// here; it must be deliberate and explained in the commit that re-pins it.
//
// One set of values for every instruction set: the numbers do not depend on the lane width
// or the register width (quasistep/kernels/lane.hpp, quasistep/kernels/eigen.hpp), so the
// native AVX-512 build, an AVX2 build, the clang sanitizer build (AVX2) and a baseline
// x86-64 build all check the same pins (tests/isa compares a native and a baseline build directly).
//
// To re-pin after a deliberate change:
//   QUASISTEP_PIN_UPDATE=1 build/tests/quasistep_tests --gtest_filter='PinnedResults.*'
// rewrites the file in the source tree.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "quasistep/core/scene.hpp"
#include "tests/support/cli_run.hpp"
#include "tests/support/instrumented.hpp"

namespace qs::test::pinned_results_test {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

const fs::path kSource = QUASISTEP_SOURCE_DIR;
const fs::path kPinFile = kSource / "tests/data/pinned_results.json";

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// FNV-1a of an output file without its first line (the provenance line names the version).
std::string body_hash(const fs::path& p) {
  const std::string text = read_file(p);
  const std::size_t eol = text.find('\n');
  return fnv1a_hex(eol == std::string::npos ? std::string_view() : std::string_view(text).substr(eol + 1));
}

std::string hash_line(const std::string& throughput_out) {
  std::istringstream in(throughput_out);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("  hash", 0) == 0) return line.substr(line.find_last_of(' ') + 1);
  return "";
}

// Worlds in the throughput pin: several lane groups at every lane width (2, 4 or 8), and the
// scenes' overrides cycled over them.
constexpr const char* kWorlds = "64";
// Samples in the Monte Carlo pin: both outcomes of every study occur within them.
constexpr const char* kSamples = "256";

/// The pinned values are the library's numbers on x86-64 machines with AVX2 and FMA (README,
/// "Same numbers on every machine"): elsewhere glibc's math functions may round otherwise.
bool machine_is_covered() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

std::vector<std::string> example_names() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(kSource / "examples"))
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(PinnedResultsFile, PinsExactlyTheExamples) {
  const ordered_json pins = ordered_json::parse(read_file(kPinFile));
  std::vector<std::string> pinned;
  for (const auto& [name, values] : pins.items()) pinned.push_back(name);
  std::sort(pinned.begin(), pinned.end());
  EXPECT_EQ(pinned, example_names()) << "an example was added or removed: re-pin (see the top of this file)";
}

class PinnedResults : public TempDirTest, public ::testing::WithParamInterface<std::string> {
 protected:
  PinnedResults() : TempDirTest("qs_pinned_") {}
};

TEST_P(PinnedResults, ExampleIsBitwiseAsPinned) {
  if (!machine_is_covered()) GTEST_SKIP() << "the pins hold on x86-64 machines with AVX2 and FMA; this one has not both";
  const std::string name = GetParam();
  const std::string scene = (kSource / "examples" / (name + ".json")).string();
  ordered_json got;
  const std::string traj = path("traj.csv"), forces = path("forces.csv");
  const CliResult run = run_cli({"run", scene, "--out", traj, "--forces", forces});
  ASSERT_EQ(run.code, 0) << run.err;
  got["run_trajectory"] = body_hash(traj);
  got["run_forces"] = body_hash(forces);

  const CliResult tp = run_cli({"throughput", scene, "--worlds", kWorlds, "--hash"});
  ASSERT_EQ(tp.code, 0) << tp.err;
  got["throughput_hash"] = hash_line(tp.out);
  // The scalar path promises the lanes' numbers (quasistep/batch/batch_stepper.hpp). Under the
  // sanitizers the lane tests run the scalar path (tests/batch); this third run is left out.
  if (!kAddressSanitizer) {
    const CliResult sc = run_cli({"throughput", scene, "--worlds", kWorlds, "--hash", "--scalar"});
    ASSERT_EQ(sc.code, 0) << sc.err;
    EXPECT_EQ(hash_line(sc.out), hash_line(tp.out)) << "scalar path and lanes differ";
  }

  if (name.rfind("mc_", 0) == 0) {
    const std::string csv = path("samples.csv");
    const CliResult mc = run_cli({"mc", scene, "--samples", kSamples, "--seed", "1", "--out", csv});
    ASSERT_EQ(mc.code, 0) << mc.err;
    got["mc_samples"] = body_hash(csv);
  }

  ordered_json pins = ordered_json::parse(read_file(kPinFile));
  if (std::getenv("QUASISTEP_PIN_UPDATE")) {
    // One process re-pins every example in turn (run the test binary, not ctest -j).
    pins[name] = got;
    std::ofstream(kPinFile) << pins.dump(2) << "\n";
    GTEST_SKIP() << "re-pinned " << name;
  }
  ASSERT_TRUE(pins.contains(name)) << name << " is not pinned: " << got.dump();
  const ordered_json& want = pins[name];
  EXPECT_EQ(got, want) << "got " << got.dump() << "\npinned " << want.dump();
}

INSTANTIATE_TEST_SUITE_P(Examples, PinnedResults, ::testing::ValuesIn(example_names()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
}  // namespace qs::test::pinned_results_test
