// The quasistep command line (docs/cli.md). Exit codes, one rule for every subcommand:
//   0  the command did its job (for question commands such as lcp/ucp: produced an
//      answer, `infeasible` included; batch commands count failed worlds as an outcome)
//   1  usage or input error: one line on stderr naming the field or cause; no output file
//      left behind that looks complete
//   2  `run`: a step could not be solved (the step is named)
//   3  `plan`: no plan reached the goal within the limits (nothing written)
#pragma once

#include <iosfwd>

namespace qs::cli {

enum ExitCode : int { kOk = 0, kInputError = 1, kStepFailed = 2, kNoPlan = 3 };

/// Runs the CLI on argv, writing to out/err instead of the process streams (testable).
int main(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace qs::cli
