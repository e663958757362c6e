// Runs the CLI in-process, as `quasistep ARGS...`, capturing its exit code and both streams:
// the shared harness of the CLI tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tools/cli/cli.hpp"

namespace qs::test {

struct CliResult {
  int code;
  std::string out;
  std::string err;
};

inline CliResult run_cli(std::vector<std::string> args) {
  args.insert(args.begin(), "quasistep");
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  const int code = qs::cli::main(static_cast<int>(argv.size()), argv.data(), out, err);
  return {code, out.str(), err.str()};
}

inline int count_lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

/// A fixture with a fresh temporary folder per test (named after the prefix, the run's
/// random seed and the test), removed afterwards; file() writes a file there.
class TempDirTest : public ::testing::Test {
 protected:
  explicit TempDirTest(std::string prefix) : prefix_(std::move(prefix)) {}
  void SetUp() override {
    const auto* unit = ::testing::UnitTest::GetInstance();
    std::string name = prefix_;
    name += std::to_string(unit->random_seed());
    name += "_";
    name += unit->current_test_info()->name();
    std::replace(name.begin(), name.end(), '/', '_');  // a parameterised test's name
    dir_ = std::filesystem::temp_directory_path() / name;
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string file(const std::string& name, const std::string& content) {
    const std::filesystem::path p = dir_ / name;
    std::ofstream(p) << content;
    return p.string();
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::filesystem::path dir_;

 private:
  std::string prefix_;
};

}  // namespace qs::test
