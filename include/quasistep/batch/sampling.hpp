// Monte Carlo samples of a scene's uncertain parameters (docs/scene-format.md,
// "uncertainty"), drawn from a counter-based random stream: Random123's Philox4x64 with
// key {seed, parameter index} and counter {sample index, attempt, 0, 0}. A value depends
// only on (seed, sample, parameter index), never on the batch split or thread count.
//
// Methods (exact up to libm's log, sqrt, cos, exp and erfc, which are deterministic for
// one machine and build, not across libms):
// - uniform in (0,1): u = (2 (x >> 12) + 1) * 2^-53 from the 64-bit word x: the top 52
//   bits, offset by half a step, so 0 and 1 never occur and the conversion is exact.
// - uniform(low, high): low + (high - low) u, kept below high (one ulp) when rounding
//   reaches it: values in [low, high).
// - normal: Box-Muller, mean + stddev sqrt(-2 log u0) cos(2 pi u1), from words 0 and 1 of
//   the counter {sample, 0}.
// - truncated_normal on [low, high], standardized to [a, b]: when the normal's mass on
//   [a, b] (via std::erfc) is >= 1/4, rejection from the normal (attempt k uses counter
//   {sample, k}); else, when [a, b] contains 0 or is narrow ((b^2 - a^2)/2 <= 1 after
//   mirroring to a >= 0), rejection from the uniform on [a, b] with acceptance
//   exp(-(z^2 - z*^2)/2) (z* the point of [a, b] nearest 0); else (a far tail) rejection
//   from the exponential of rate lambda = (a + sqrt(a^2 + 4))/2 truncated to [a, b]
//   (Robert 1995), acceptance exp(-(z - lambda)^2 / 2). Each branch accepts with
//   probability >= ~0.37, so the loop is bounded at kMaxAttempts (exhaustion, with
//   probability < 1e-120, is a BatchError). The result is clamped to [low, high] against
//   rounding in mean + stddev z.
#pragma once

#include <cstdint>

#include "quasistep/batch/world_batch.hpp"
#include "quasistep/core/scene.hpp"

namespace qs {

/// Attempts the truncated-normal rejection loop makes before giving up.
inline constexpr int kMaxSampleAttempts = 1000;

/// The uniform in (0,1) that the 64-bit word x maps to (see the method above).
double uniform01(std::uint64_t x);

/// The value of parameter `parameter_index` (its place in Scene::uncertainty) in sample
/// `sample` of the stream `seed`. Throws BatchError for sample < 0, parameter_index < 0,
/// or a distribution the scene reader would refuse (stddev <= 0, high <= low, non-finite).
double draw(const Distribution& d, std::uint64_t seed, long sample, int parameter_index);

/// A batch of `count` worlds for samples first_sample .. first_sample + count - 1: the
/// varied parameters are the scene's uncertainty parameters (in order), world i takes
/// draw(..., first_sample + i, k) for parameter k, and the batch is reset so that initial
/// poses and joint positions take effect. Throws BatchError for count < 1, first_sample <
/// 0, a scene without uncertainty, a scene with both overrides and uncertainty, or a value
/// the batch refuses.
WorldBatch sample_batch(const Scene& scene, std::uint64_t seed, long first_sample, int count);

/// One sample of a study as a single world: its start State and its WorldParams (the
/// sampled values of every uncertain parameter). Stepping `start` with `params` by the
/// scene's Stepper reproduces the sample's run in a Monte Carlo study, bitwise (the batch
/// engine's lanes step each world as the Stepper does): a report replays a sample this way.
struct SampleWorld {
  State start;
  WorldParams params;
};
SampleWorld sample_world(const Scene& scene, std::uint64_t seed, long sample);

/// Refills a batch made by sample_batch (same scene) with samples first_sample ..
/// first_sample + size() - 1 and resets it: a Monte Carlo run reuses one batch for every
/// chunk. Throws BatchError for first_sample < 0 or a batch that varies other parameters.
void fill_samples(WorldBatch& batch, const Scene& scene, std::uint64_t seed, long first_sample);

}  // namespace qs
