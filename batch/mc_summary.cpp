#include "quasistep/batch/mc_summary.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

namespace qs {
namespace {

std::string percent(double x) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(1) << 100.0 * x << "%";
  return o.str();
}

std::string fixed(double x, int digits) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(digits) << x;
  return o.str();
}

}  // namespace

void print_mc_summary(const McStudy& st, const McSummary& s, std::ostream& out) {
  out << "mc: " << s.samples << " samples of " << st.samples << " (seed " << st.seed << ", model " << st.model
      << ", scene " << st.scene_hash << ")\n";
  out << "  success      " << st.success << "\n";
  out << "  rate         " << fixed(s.rate, 4) << "  95% interval [" << fixed(s.wilson_low, 4) << ", "
      << fixed(s.wilson_high, 4) << "] (Wilson), " << s.successes << " of " << s.samples << "\n";
  out << "  outcomes\n";
  for (Outcome o : outcomes_of(st.success_kind)) {
    const long n = s.outcome_count[static_cast<int>(o)];
    out << "    " << std::left << std::setw(14) << to_string(o) << std::right << std::setw(10) << n << "  "
        << std::setw(6) << percent(s.samples > 0 ? static_cast<double>(n) / static_cast<double>(s.samples) : 0.0)
        << "\n";
  }
  // Each parameter's range in equal bins: the edges, the samples that fell in each and their
  // success rate (values outside the range count in the end bins, docs/monte-carlo.md).
  out << "  success rate per bin (" << kParameterBins << " equal bins of each parameter's range)\n";
  for (const ParameterBins& b : s.bins) {
    out << "    " << b.path << "\n";
    const double width = (b.high - b.low) / static_cast<double>(b.count.size());
    // Enough digits that neighbouring edges differ (a range far from 0 needs more than 4).
    const double magnitude = std::max(std::abs(b.low), std::abs(b.high));
    const int digits = width > 0 && magnitude > 0
                           ? std::max(4, static_cast<int>(std::ceil(std::log10(magnitude / width))) + 2)
                           : 4;
    for (std::size_t k = 0; k < b.count.size(); ++k) {
      const double lo = b.low + width * static_cast<double>(k);
      const double hi = k + 1 == b.count.size() ? b.high : b.low + width * static_cast<double>(k + 1);
      std::ostringstream edges;
      edges << "[" << std::setprecision(std::min(digits, 17)) << lo << ", " << hi
            << (k + 1 == b.count.size() ? "]" : ")");
      out << "      " << std::left << std::setw(22) << edges.str() << std::right << std::setw(10) << b.count[k]
          << " samples  "
          << (b.count[k] ? fixed(static_cast<double>(b.successes[k]) / static_cast<double>(b.count[k]), 2)
                         : std::string("   -"))
          << "\n";
    }
  }
}

}  // namespace qs
