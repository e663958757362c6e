// The lane vocabulary, double and Lane side by side: the one place where geometry,
// kinematics and the kernels get their arithmetic functions, selections and reductions, for
// one world (T = double) and for a lane group (T = Lane: one double per world, kLaneWidth
// worlds in one value). Templates written once on T (quasistep/core/vec2.hpp, quasistep/core/contacts.hpp,
// quasistep/kernels/pgs.hpp, quasistep/kernels/lemke_lanes.hpp) find the right overload by argument-dependent
// lookup, so every path (single world, batch lanes, --scalar) calls the same functions and
// a world's numbers do not depend on which path computed them.
//
// Why GCC's <experimental/simd> (Parallelism TS v2) rather than xsimd or intrinsics: it is
// part of the compiler we already require (no new package; xsimd is not installed on the
// target machines), its native width follows the -march the build targets (8 doubles with
// AVX-512, 4 with AVX2, 2 with plain SSE2), and its + - * / and sqrt are the IEEE-exact
// element-wise operations, so with -ffp-contract=off a lane computes bit for bit what the
// scalar path computes. Templates only ever see Lane, Mask and the free functions below, so
// swapping the implementation touches this file only.
//
// What may not be vectorised: sin, cos and atan2 are evaluated lane by lane by the double
// functions (one implementation for both paths, as the batch engine's determinism promise
// requires; a vector libm would round differently). QUASISTEP_FORCE_SCALAR (CMake option)
// makes the width 1.
//
// The last section holds the kernels' loops on explicit native vectors (NativeSimd): the
// build passes -fno-tree-vectorize, so plain loops stay scalar.
#pragma once

#include <cmath>
#include <cstddef>

#include "quasistep/kernels/simd.hpp"

namespace qs {

namespace stdx = std::experimental;

// ---- one world: double ----------------------------------------------------------------------

inline double sqrt(double x) { return std::sqrt(x); }
inline double sin(double x) { return std::sin(x); }
inline double cos(double x) { return std::cos(x); }
inline double atan2(double y, double x) { return std::atan2(y, x); }
inline double abs(double x) { return std::fabs(x); }

/// select(c, a, b) = c ? a : b. For a lane type `c` is a mask and the choice is per lane.
inline double select(bool c, double a, double b) { return c ? a : b; }

inline double min(double a, double b) { return a < b ? a : b; }
inline double max(double a, double b) { return a > b ? a : b; }
inline double clamp(double x, double lo, double hi) { return min(max(x, lo), hi); }

/// Reductions over a mask for loop control; bool is the mask of double: one lane.
inline bool any(bool a) { return a; }
inline bool all(bool a) { return a; }
inline bool none(bool a) { return !a; }
inline int count(bool a) { return a ? 1 : 0; }

// ---- a lane group: Lane -------------------------------------------------------------------

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

/// Per lane c ? a : b (the select of double above, lane by lane).
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

/// Lanes per value of T: 1 for double.
template <class T> inline constexpr int lanes_of = 1;
template <> inline constexpr int lanes_of<Lane> = kLaneWidth;

/// The mask type of T: bool for double.
template <class T> struct mask_of { using type = bool; };
template <> struct mask_of<Lane> { using type = Mask; };
template <class T> using Mask_t = typename mask_of<T>::type;

// ---- one lane of a value, whether T is double (lane 0 only) or Lane -------------------------
// For per-lane bookkeeping (gathers, scatters, pivot choices, statuses); never for arithmetic
// on a world's numbers, which stays in T so both instantiations round alike.

inline double lane_of(double x, int) { return x; }
inline double lane_of(const Lane& x, int i) { return x[i]; }
QS_LANE_INLINE bool lane_of(bool x, int) { return x; }
QS_LANE_INLINE bool lane_of(const Mask& x, int i) { return x[i]; }

inline void set_lane(double& x, int, double v) { x = v; }
inline void set_lane(Lane& x, int i, double v) { x.set(i, v); }
QS_LANE_INLINE void set_lane(bool& x, int, bool v) { x = v; }
QS_LANE_INLINE void set_lane(Mask& x, int i, bool v) { x.set(i, v); }

// ---- explicit native vectors for the kernels' row loops -------------------------------------
// Only element-wise + - * / and comparisons (-ffp-contract=off: no fused multiply-add), each
// entry's terms in the order of the plain loop, so every number is bitwise what the scalar
// loop computes, whatever the alignment.

/// The widest vector of doubles the build targets (independent of QUASISTEP_FORCE_SCALAR:
/// these loops compute each entry as the scalar loop does). The helpers below are always
/// inlined: their names are the same for every instruction set but their types are not, so
/// an out-of-line copy from a program built for another one must never be called.
using NativeSimd = stdx::native_simd<double>;
inline constexpr int kNativeWidth = static_cast<int>(NativeSimd::size());

QS_LANE_INLINE NativeSimd load_native(const double* p) { return NativeSimd(p, stdx::element_aligned); }
QS_LANE_INLINE void store_native(const NativeSimd& v, double* p) { v.copy_to(p, stdx::element_aligned); }

/// Sums over a vector add in one order on every instruction set: in blocks of kSumWidth
/// doubles, one partial sum per position in the block (its terms in the order of the
/// blocks), the positions added in order at the end. kSumWidth is the widest registers'
/// width (AVX-512); with AVX2 a block is two registers, with SSE2 four, and each position's
/// partial sum gets the same terms in the same order, so the sum is bitwise the same. A
/// reduction over NativeSimd would add in another order on every register width.
inline constexpr int kSumWidth = 8;
using SumBlock = stdx::simd<double, stdx::simd_abi::deduce_t<double, kSumWidth>>;
QS_LANE_INLINE SumBlock load_sum_block(const double* p) { return SumBlock(p, stdx::element_aligned); }

/// m ? a : b lane by lane.
QS_LANE_INLINE NativeSimd select_native(const NativeSimd::mask_type& m, const NativeSimd& a, const NativeSimd& b) {
  NativeSimd out = b;
  where(m, out) = a;
  return out;
}

/// Lanes 0, 1, ..., kNativeWidth - 1: lane_index() == i - i0 selects row i in the vector at
/// row i0. Single entries of a vector are changed this way, in registers: a scalar store
/// followed by a vector load of the same bytes stalls (no store-to-load forwarding).
QS_LANE_INLINE NativeSimd native_lane_index() {
  return NativeSimd([](auto l) { return static_cast<double>(static_cast<int>(l)); });
}

}  // namespace qs
