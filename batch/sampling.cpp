#include "quasistep/batch/sampling.hpp"

#include <Random123/philox.h>

#include <climits>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

namespace qs {
namespace {

using Philox = r123::Philox4x64;

// The four words of counter {sample, attempt, 0, 0} under key {seed, parameter}.
Philox::ctr_type words(std::uint64_t seed, long sample, int parameter, std::uint64_t attempt) {
  const Philox::ctr_type ctr = {{static_cast<std::uint64_t>(sample), attempt, 0, 0}};
  const Philox::key_type key = {{seed, static_cast<std::uint64_t>(parameter)}};
  return Philox()(ctr, key);
}

double box_muller(std::uint64_t x0, std::uint64_t x1) {
  return std::sqrt(-2.0 * std::log(uniform01(x0))) * std::cos(2.0 * std::numbers::pi * uniform01(x1));
}

// Mass of the standard normal on [a, b], from whichever erfc form avoids cancellation.
double normal_mass(double a, double b) {
  const double r = std::numbers::sqrt2;
  if (a >= 0) return 0.5 * (std::erfc(a / r) - std::erfc(b / r));
  if (b <= 0) return 0.5 * (std::erfc(-b / r) - std::erfc(-a / r));
  return 1.0 - 0.5 * std::erfc(b / r) - 0.5 * std::erfc(-a / r);
}

[[noreturn]] void exhausted() {
  throw BatchError("sampling: truncated_normal rejection did not accept within " +
                   std::to_string(kMaxSampleAttempts) + " attempts");
}

// A standard normal truncated to [a, b] (a < b), by the method sampling.hpp describes.
double truncated_standard(double a, double b, std::uint64_t seed, long sample, int parameter) {
  if (normal_mass(a, b) >= 0.25) {
    for (int k = 0; k < kMaxSampleAttempts; ++k) {
      const auto w = words(seed, sample, parameter, static_cast<std::uint64_t>(k));
      const double z = box_muller(w[0], w[1]);
      if (z >= a && z <= b) return z;
    }
    exhausted();
  }
  // Mirror a lower tail to the upper one so that 0 <= a unless [a, b] contains 0.
  const bool mirror = b <= 0;
  if (mirror) {
    const double t = a;
    a = -b;
    b = -t;
  }
  const double sign = mirror ? -1.0 : 1.0;
  if (a < 0 || (b * b - a * a) / 2 <= 1) {
    // Uniform proposal: the density ratio exp(-z^2/2) is within e^-1 of its maximum at zs.
    const double zs = a < 0 ? 0.0 : a;
    for (int k = 0; k < kMaxSampleAttempts; ++k) {
      const auto w = words(seed, sample, parameter, static_cast<std::uint64_t>(k));
      const double z = a + (b - a) * uniform01(w[0]);
      if (uniform01(w[1]) <= std::exp(-(z * z - zs * zs) / 2)) return sign * z;
    }
    exhausted();
  }
  // Far tail: exponential proposal of rate lambda truncated to [a, b], by inverse CDF.
  const double lambda = (a + std::sqrt(a * a + 4)) / 2;
  const double span = std::expm1(-lambda * (b - a));  // in (-1, 0)
  for (int k = 0; k < kMaxSampleAttempts; ++k) {
    const auto w = words(seed, sample, parameter, static_cast<std::uint64_t>(k));
    double z = a - std::log1p(uniform01(w[0]) * span) / lambda;
    if (z > b) z = b;  // rounding only
    const double d = z - lambda;
    if (uniform01(w[1]) <= std::exp(-d * d / 2)) return sign * z;
  }
  exhausted();
}

}  // namespace

double uniform01(std::uint64_t x) {
  // 2 (x >> 12) + 1 < 2^53 is exact in a double, and so is the power-of-two scaling.
  return static_cast<double>(((x >> 12) << 1) | 1u) * 0x1p-53;
}

double draw(const Distribution& d, std::uint64_t seed, long sample, int parameter_index) {
  if (sample < 0) throw BatchError("sampling: sample index " + std::to_string(sample) + " must be >= 0");
  if (parameter_index < 0)
    throw BatchError("sampling: parameter index " + std::to_string(parameter_index) + " must be >= 0");
  using K = Distribution::Kind;
  if (d.kind != K::normal && !(std::isfinite(d.low) && std::isfinite(d.high) && d.high > d.low))
    throw BatchError("sampling: distribution needs finite low < high");
  if (d.kind != K::uniform && !(std::isfinite(d.mean) && std::isfinite(d.stddev) && d.stddev > 0))
    throw BatchError("sampling: distribution needs a finite mean and a finite stddev > 0");
  switch (d.kind) {
    case K::uniform: {
      const double x = d.low + (d.high - d.low) * uniform01(words(seed, sample, parameter_index, 0)[0]);
      return x < d.high ? x : std::nextafter(d.high, d.low);
    }
    case K::normal: {
      const auto w = words(seed, sample, parameter_index, 0);
      return d.mean + d.stddev * box_muller(w[0], w[1]);
    }
    case K::truncated_normal: {
      const double a = (d.low - d.mean) / d.stddev, b = (d.high - d.mean) / d.stddev;
      if (!(std::isfinite(a) && std::isfinite(b) && b > a))
        throw BatchError("sampling: truncated_normal bounds are too far from the mean in stddevs");
      const double x = d.mean + d.stddev * truncated_standard(a, b, seed, sample, parameter_index);
      return x < d.low ? d.low : (x > d.high ? d.high : x);
    }
  }
  throw BatchError("sampling: unknown distribution");
}

WorldBatch sample_batch(const Scene& scene, std::uint64_t seed, long first_sample, int count) {
  if (count < 1) throw BatchError("sampling: sample count " + std::to_string(count) + " must be >= 1");
  if (scene.uncertainty.empty()) throw BatchError("sampling: the scene has no uncertainty parameters");
  if (!scene.overrides.empty())
    throw BatchError("sampling: the scene has both overrides and uncertainty; sampling with overrides is not supported");
  std::vector<ParameterRef> varied;
  varied.reserve(scene.uncertainty.size());
  for (const UncertainParameter& u : scene.uncertainty) varied.push_back(u.parameter);
  WorldBatch b(scene.model, count, varied);
  fill_samples(b, scene, seed, first_sample);
  return b;
}

SampleWorld sample_world(const Scene& scene, std::uint64_t seed, long sample) {
  const Model& m = *scene.model;
  const WorldBatch b = sample_batch(scene, seed, sample, 1);
  SampleWorld w{initial_state(m), WorldParams(m)};
  b.load_state(0, w.start);
  for (int k = 0; k < b.varied_count(); ++k)
    if (!is_start_parameter(m, b.varied(k))) w.params.set(m, b.varied(k), b.param_value(k)[0]);
  return w;
}

void fill_samples(WorldBatch& b, const Scene& scene, std::uint64_t seed, long first_sample) {
  if (first_sample < 0)
    throw BatchError("sampling: first sample " + std::to_string(first_sample) + " must be >= 0");
  if (first_sample > LONG_MAX - b.size()) throw BatchError("sampling: sample index overflows");
  if (b.varied_count() != static_cast<int>(scene.uncertainty.size()))
    throw BatchError("sampling: the batch does not vary the scene's uncertainty parameters");
  for (int k = 0; k < b.varied_count(); ++k) {
    if (!b.varied(k).same_as(scene.uncertainty[static_cast<std::size_t>(k)].parameter))
      throw BatchError("sampling: the batch does not vary the scene's uncertainty parameters");
    const Distribution& d = scene.uncertainty[static_cast<std::size_t>(k)].distribution;
    for (int w = 0; w < b.size(); ++w) b.set_parameter(k, w, draw(d, seed, first_sample + w, k));
  }
  b.reset();
}

}  // namespace qs
