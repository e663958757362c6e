// Distributions written the way a scene's uncertainty section gives them: for the sampling
// and Monte Carlo tests.
#pragma once

#include "quasistep/core/scene.hpp"

namespace qs::test {

inline Distribution uniform(double low, double high) {
  Distribution d;
  d.kind = Distribution::Kind::uniform;
  d.low = low;
  d.high = high;
  return d;
}

inline Distribution normal(double mean, double stddev) {
  Distribution d;
  d.kind = Distribution::Kind::normal;
  d.mean = mean;
  d.stddev = stddev;
  return d;
}

inline Distribution truncated(double mean, double stddev, double low, double high) {
  Distribution d = normal(mean, stddev);
  d.kind = Distribution::Kind::truncated_normal;
  d.low = low;
  d.high = high;
  return d;
}

}  // namespace qs::test
