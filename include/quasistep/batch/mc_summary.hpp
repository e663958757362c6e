// The summary table of a Monte Carlo study (docs/monte-carlo.md): the success rate with its
// Wilson interval, the count of each outcome and the success rate per bin of each parameter.
// `quasistep mc` and `mc-merge` print it on stdout, the Python module's monte_carlo returns
// it as text; a study split into shards and merged reads exactly like one run.
#pragma once

#include <ostream>

#include "quasistep/batch/monte_carlo.hpp"

namespace qs {

void print_mc_summary(const McStudy& study, const McSummary& summary, std::ostream& out);

}  // namespace qs
