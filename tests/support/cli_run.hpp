// Runs the CLI in-process, as `quasistep ARGS...`, capturing its exit code and both streams:
// the shared harness of the CLI tests.
#pragma once

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "tools/cli.hpp"

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

}  // namespace qs::test
