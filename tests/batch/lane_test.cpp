// Every operation of the lane type (quasistep/kernels/lane.hpp) equals, lane by lane and bit for bit,
// the double operation of the same name: the batch engine's determinism rests on it.
#include "quasistep/kernels/lane.hpp"
#include "tests/support/bitwise.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace qs::lane_test {
namespace {

using test::same_bits;

/// Operand values with the awkward cases in them: signed zeros, NaN, infinities,
/// subnormals, huge and tiny, and random numbers.
std::vector<double> awkward_values() {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> v = {0.0, -0.0, 1.0, -1.0, 0.5, 3.0, -2.5, 1e300, -1e-300, 4.9e-324,
                           inf, -inf, std::numeric_limits<double>::quiet_NaN(), 3.141592653589793, -1e-17};
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-10, 10);
  while (v.size() % kLaneWidth != 0 || v.size() < 64) v.push_back(u(rng));
  return v;
}

TEST(Lane, WidthFollowsTheInstructionSet) {
#if defined(QUASISTEP_FORCE_SCALAR) && QUASISTEP_FORCE_SCALAR
  EXPECT_EQ(kLaneWidth, 1);
#elif defined(__AVX512F__)
  EXPECT_EQ(kLaneWidth, 8);
#elif defined(__AVX__)
  EXPECT_EQ(kLaneWidth, 4);
#else
  EXPECT_GE(kLaneWidth, 1);
#endif
  EXPECT_EQ(lanes_of<Lane>, kLaneWidth);
  EXPECT_EQ(lanes_of<double>, 1);
}

TEST(Lane, LoadStoreAndLaneAccessRoundTrip) {
  alignas(kLaneAlignment) double in[kLaneWidth], out[kLaneWidth];
  for (int i = 0; i < kLaneWidth; ++i) in[i] = 0.25 * i - 1.0;
  const Lane a = Lane::load(in);
  a.store(out);
  for (int i = 0; i < kLaneWidth; ++i) {
    EXPECT_TRUE(same_bits(out[i], in[i]));
    EXPECT_TRUE(same_bits(a[i], in[i]));
    EXPECT_TRUE(same_bits(lane_of(a, i), in[i]));
  }
  Lane b(7.0);
  b.set(kLaneWidth - 1, -3.0);
  EXPECT_EQ(b[0], 7.0);
  EXPECT_EQ(b[kLaneWidth - 1], -3.0);
}

TEST(Lane, EveryOperationEqualsTheScalarOneBitwisePerLane) {
  const std::vector<double> v = awkward_values();
  const int n = static_cast<int>(v.size());
  // All pairs (x, y), kLaneWidth at a time, the y's rotated so lanes see different pairs.
  for (int shift = 0; shift < n; ++shift) {
    for (int base = 0; base < n; base += kLaneWidth) {
      Lane x, y;
      double xs[kLaneWidth], ys[kLaneWidth];
      for (int i = 0; i < kLaneWidth; ++i) {
        xs[i] = v[base + i];
        ys[i] = v[(base + i + shift) % n];
        x.set(i, xs[i]);
        y.set(i, ys[i]);
      }
      const Lane sum = x + y, diff = x - y, prod = x * y, quot = x / y, neg = -x;
      const Lane mn = min(x, y), mx = max(x, y), cl = clamp(x, min(y, Lane(0.0)), max(y, Lane(0.0)));
      const Lane sq = sqrt(x), ab = abs(x), sn = sin(x), cs = cos(x), at = atan2(x, y);
      const Mask lt = x < y, le = x <= y, gt = x > y;
      const Lane sel = select(lt, x, y);
      for (int i = 0; i < kLaneWidth; ++i) {
        const double a = xs[i], b = ys[i];
        SCOPED_TRACE(testing::Message() << "x = " << a << ", y = " << b);
        EXPECT_TRUE(same_bits(sum[i], a + b));
        EXPECT_TRUE(same_bits(diff[i], a - b));
        EXPECT_TRUE(same_bits(prod[i], a * b));
        EXPECT_TRUE(same_bits(quot[i], a / b));
        EXPECT_TRUE(same_bits(neg[i], -a));
        EXPECT_TRUE(same_bits(mn[i], qs::min(a, b)));
        EXPECT_TRUE(same_bits(mx[i], qs::max(a, b)));
        EXPECT_TRUE(same_bits(cl[i], qs::clamp(a, qs::min(b, 0.0), qs::max(b, 0.0))));
        EXPECT_TRUE(same_bits(sq[i], qs::sqrt(a)) || (std::isnan(sq[i]) && std::isnan(qs::sqrt(a))));
        EXPECT_TRUE(same_bits(ab[i], qs::abs(a)));
        EXPECT_TRUE(same_bits(sn[i], qs::sin(a)) || (std::isnan(sn[i]) && std::isnan(qs::sin(a))));
        EXPECT_TRUE(same_bits(cs[i], qs::cos(a)) || (std::isnan(cs[i]) && std::isnan(qs::cos(a))));
        EXPECT_TRUE(same_bits(at[i], qs::atan2(a, b)) || (std::isnan(at[i]) && std::isnan(qs::atan2(a, b))));
        EXPECT_EQ(lt[i], a < b);
        EXPECT_EQ(le[i], a <= b);
        EXPECT_EQ(gt[i], a > b);
        EXPECT_TRUE(same_bits(sel[i], qs::select(a < b, a, b)));
      }
    }
  }
}

TEST(Lane, MaskReductionsAndLogic) {
  Lane x;
  for (int i = 0; i < kLaneWidth; ++i) x.set(i, i);
  const Mask first = x < Lane(1.0);  // lane 0 only
  EXPECT_TRUE(any(first));
  EXPECT_EQ(all(first), kLaneWidth == 1);
  EXPECT_EQ(count(first), 1);
  EXPECT_FALSE(none(first));
  EXPECT_EQ(count(!first), kLaneWidth - 1);
  EXPECT_EQ(count(first || !first), kLaneWidth);
  EXPECT_EQ(count(first && !first), 0);
  EXPECT_TRUE(any(true) && all(true) && none(false) && count(true) == 1);
}

}  // namespace
}  // namespace qs::lane_test
