// The lane type: one double per world, kLaneWidth worlds in one value, so that the
// geometry, kinematics and kernel templates written on a scalar T (core/vec2.hpp,
// core/contacts.hpp, kernels/pgs.hpp) run a group of worlds with the same instructions.
//
// Why GCC's <experimental/simd> (Parallelism TS v2) rather than xsimd or intrinsics: it is
// part of the compiler we already require (no new package; xsimd is not installed on the
// target machines), its native width follows the -march the build targets (8 doubles with
// AVX-512, 4 with AVX2, 2 with plain SSE2), and its + - * / and sqrt are the IEEE-exact
// element-wise operations, so with -ffp-contract=off a lane computes bit for bit what the
// scalar path computes. This header is the thin wrapper: the templates only ever see Lane,
// Mask and the free functions below, the same names core/scalar_math.hpp defines for
// double, so swapping the implementation touches this file only.
//
// What may not be vectorised: sin, cos and atan2 are evaluated lane by lane by the scalar
// functions of core/scalar_math.hpp (one implementation for both paths, as the batch
// engine's determinism promise requires; a vector libm would round differently).
// QUASISTEP_FORCE_SCALAR (CMake option) makes the width 1.
#pragma once

#include <cstddef>

#include "core/scalar_math.hpp"
#include "kernels/simd.hpp"

namespace qs {

namespace stdx = std::experimental;

// Each lane operation is one or two instructions; GCC left select() out of line (20% of the
// Anitescu lane step in a profile), so they are forced inline. Inlining changes no rounding.
#define QS_LANE_INLINE [[gnu::always_inline]] inline

#if defined(QUASISTEP_FORCE_SCALAR) && QUASISTEP_FORCE_SCALAR
inline constexpr int kLaneWidth = 1;
#else
inline constexpr int kLaneWidth = static_cast<int>(stdx::native_simd<double>::size());
#endif

/// Worlds' storage is aligned to this many bytes (a cache line, and an AVX-512 vector).
inline constexpr std::size_t kLaneAlignment = 64;

struct Mask;

/// kLaneWidth doubles, one per world of a lane group.
struct Lane {
  // The native ABI at full width (one AVX-512 register), the scalar ABI at width 1.
  using Simd = stdx::simd<double, stdx::simd_abi::deduce_t<double, kLaneWidth>>;
  static constexpr int width = kLaneWidth;
  Simd v;

  Lane() : v(0.0) {}
  Lane(double x) : v(x) {}  // NOLINT: broadcast, as T(double) in the templates
  explicit Lane(const Simd& s) : v(s) {}

  /// Lanes from kLaneWidth consecutive doubles (SoA storage: one quantity, consecutive worlds).
  static Lane load(const double* p) { return Lane(Simd(p, stdx::element_aligned)); }
  void store(double* p) const { v.copy_to(p, stdx::element_aligned); }
  double operator[](int lane) const { return v[lane]; }
  void set(int lane, double x) { v[lane] = x; }

  Lane& operator+=(const Lane& b) { v += b.v; return *this; }
  Lane& operator-=(const Lane& b) { v -= b.v; return *this; }
  Lane& operator*=(const Lane& b) { v *= b.v; return *this; }
  Lane& operator/=(const Lane& b) { v /= b.v; return *this; }
};

/// One bool per lane: the result of a comparison, the argument of select.
struct Mask {
  using Simd = Lane::Simd::mask_type;
  Simd m;
  Mask() : m(false) {}
  Mask(bool b) : m(b) {}  // NOLINT: broadcast
  explicit Mask(const Simd& s) : m(s) {}
  bool operator[](int lane) const { return m[lane]; }
  void set(int lane, bool b) { m[lane] = b; }
};

QS_LANE_INLINE Lane operator+(const Lane& a, const Lane& b) { return Lane(a.v + b.v); }
QS_LANE_INLINE Lane operator-(const Lane& a, const Lane& b) { return Lane(a.v - b.v); }
QS_LANE_INLINE Lane operator*(const Lane& a, const Lane& b) { return Lane(a.v * b.v); }
QS_LANE_INLINE Lane operator/(const Lane& a, const Lane& b) { return Lane(a.v / b.v); }
QS_LANE_INLINE Lane operator-(const Lane& a) { return Lane(-a.v); }

QS_LANE_INLINE Mask operator<(const Lane& a, const Lane& b) { return Mask(a.v < b.v); }
QS_LANE_INLINE Mask operator<=(const Lane& a, const Lane& b) { return Mask(a.v <= b.v); }
QS_LANE_INLINE Mask operator>(const Lane& a, const Lane& b) { return Mask(a.v > b.v); }
QS_LANE_INLINE Mask operator>=(const Lane& a, const Lane& b) { return Mask(a.v >= b.v); }
QS_LANE_INLINE Mask operator==(const Lane& a, const Lane& b) { return Mask(a.v == b.v); }
QS_LANE_INLINE Mask operator!=(const Lane& a, const Lane& b) { return Mask(a.v != b.v); }
QS_LANE_INLINE Mask operator&&(const Mask& a, const Mask& b) { return Mask(a.m && b.m); }
QS_LANE_INLINE Mask operator||(const Mask& a, const Mask& b) { return Mask(a.m || b.m); }
QS_LANE_INLINE Mask operator!(const Mask& a) { return Mask(!a.m); }

/// Reductions over the lanes of a mask (for loop control only: never on a world's numbers).
QS_LANE_INLINE bool any(const Mask& a) { return stdx::any_of(a.m); }
QS_LANE_INLINE bool all(const Mask& a) { return stdx::all_of(a.m); }
QS_LANE_INLINE bool none(const Mask& a) { return stdx::none_of(a.m); }
QS_LANE_INLINE int count(const Mask& a) { return stdx::popcount(a.m); }
// The bool spellings (T = double) are in core/scalar_math.hpp, where kernels find them.

/// Per lane c ? a : b (core/scalar_math.hpp's select for double).
QS_LANE_INLINE Lane select(const Mask& c, const Lane& a, const Lane& b) {
  Lane out = b;
  stdx::where(c.m, out.v) = a.v;
  return out;
}
QS_LANE_INLINE Mask select(const Mask& c, const Mask& a, const Mask& b) { return Mask((c.m && a.m) || (!c.m && b.m)); }

// Defined through select so that NaN and signed-zero cases match the scalar a < b ? a : b.
QS_LANE_INLINE Lane min(const Lane& a, const Lane& b) { return select(a < b, a, b); }
QS_LANE_INLINE Lane max(const Lane& a, const Lane& b) { return select(a > b, a, b); }
QS_LANE_INLINE Lane clamp(const Lane& x, const Lane& lo, const Lane& hi) { return min(max(x, lo), hi); }
QS_LANE_INLINE Lane abs(const Lane& a) { return Lane(stdx::abs(a.v)); }
QS_LANE_INLINE Lane sqrt(const Lane& a) { return Lane(stdx::sqrt(a.v)); }  // IEEE: correctly rounded

namespace detail {
template <class F>
Lane per_lane(const Lane& a, F f) {
  Lane out;
  for (int i = 0; i < kLaneWidth; ++i) out.v[i] = f(a.v[i]);
  return out;
}
}  // namespace detail

QS_LANE_INLINE Lane sin(const Lane& a) { return detail::per_lane(a, [](double x) { return qs::sin(x); }); }
QS_LANE_INLINE Lane cos(const Lane& a) { return detail::per_lane(a, [](double x) { return qs::cos(x); }); }
QS_LANE_INLINE Lane atan2(const Lane& y, const Lane& x) {
  Lane out;
  for (int i = 0; i < kLaneWidth; ++i) out.v[i] = qs::atan2(y.v[i], x.v[i]);
  return out;
}

/// Lane i of a value, whether T is double (lane 0 only) or Lane: for gathers and scatters
/// written once for both.
inline double lane_of(double x, int) { return x; }
inline double lane_of(const Lane& x, int i) { return x[i]; }
QS_LANE_INLINE bool lane_of(bool x, int) { return x; }
QS_LANE_INLINE bool lane_of(const Mask& x, int i) { return x[i]; }

/// Lanes per value of T: 1 for double.
template <class T> inline constexpr int lanes_of = 1;
template <> inline constexpr int lanes_of<Lane> = kLaneWidth;

/// The mask type of T: bool for double.
template <class T> struct mask_of { using type = bool; };
template <> struct mask_of<Lane> { using type = Mask; };
template <class T> using Mask_t = typename mask_of<T>::type;

}  // namespace qs
