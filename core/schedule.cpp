#include "quasistep/core/schedule.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "quasistep/kernels/lane.hpp"

namespace qs {

Schedule::Schedule(std::vector<double> breaks, std::vector<double> values, std::vector<Term> terms)
    : breaks_(std::move(breaks)), values_(std::move(values)), terms_(std::move(terms)) {
  assert(values_.size() == breaks_.size() + 1);
  assert(std::is_sorted(breaks_.begin(), breaks_.end()));
}

double Schedule::operator()(double t) const {
  // Index of the first break strictly greater than t: values_[k] holds on [breaks[k-1], breaks[k]).
  const auto k = std::upper_bound(breaks_.begin(), breaks_.end(), t) - breaks_.begin();
  double v = values_[static_cast<size_t>(k)];
  for (const Term& term : terms_) {
    const double arg = term.frequency * t + term.phase;
    v += term.amplitude * (term.wave == Wave::sin ? qs::sin(arg) : qs::cos(arg));
  }
  return v;
}

}  // namespace qs
