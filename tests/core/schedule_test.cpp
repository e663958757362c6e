#include "quasistep/core/schedule.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace qs::schedule_test {
namespace {

TEST(Schedule, DefaultIsZero) { EXPECT_EQ(Schedule()(3.0), 0.0); }

TEST(Schedule, Constant) {
  const Schedule s = Schedule::constant(0.1);
  EXPECT_TRUE(s.is_constant());
  EXPECT_EQ(s(-1.0), 0.1);
  EXPECT_EQ(s(1e9), 0.1);
}

TEST(Schedule, PiecewiseConstantIntervalsAreClosedOnTheLeft) {
  const Schedule s({0.2, 0.5}, {1.0, 2.0, 3.0}, {});
  EXPECT_FALSE(s.is_constant());
  EXPECT_EQ(s(0.0), 1.0);
  EXPECT_EQ(s(0.1999), 1.0);
  EXPECT_EQ(s(0.2), 2.0);  // values[k] holds on [breaks[k-1], breaks[k])
  EXPECT_EQ(s(0.4999), 2.0);
  EXPECT_EQ(s(0.5), 3.0);
  EXPECT_EQ(s(7.0), 3.0);
}

TEST(Schedule, Seed000Command30SampledAtStepMidpoints) {
  // x_l of eq. (30): 0.1 m/s for steps l = 1..20, then 0; step l sampled at (l - 1/2) h.
  const Schedule x_l({0.2}, {0.1, 0.0}, {});
  const double h = 0.01;
  for (int l = 1; l <= 60; ++l) EXPECT_EQ(x_l((l - 0.5) * h), l <= 20 ? 0.1 : 0.0) << "step " << l;
}

TEST(Schedule, SumOfSinusoidsOnTopOfPiecewiseConstant) {
  const Schedule s({1.0}, {0.5, -0.5},
                   {{Schedule::Wave::sin, 2.0, 3.0, 0.25}, {Schedule::Wave::cos, -1.0, 0.5, 0.0}});
  for (double t : {0.0, 0.3, 1.0, 2.7}) {
    const double base = t < 1.0 ? 0.5 : -0.5;
    EXPECT_NEAR(s(t), base + 2.0 * std::sin(3.0 * t + 0.25) - std::cos(0.5 * t), 1e-15) << t;
  }
}

}  // namespace
}  // namespace qs::schedule_test
