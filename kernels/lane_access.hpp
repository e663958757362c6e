// Reading and writing one lane of a value whose type is either double (one world) or a
// lane type (batch/lane.hpp's Lane: one double per world of a lane group), for kernels written
// once on T. Kernels use these for per-lane bookkeeping (pivot choices, statuses); never for
// arithmetic on a world's numbers, which stays in T so both instantiations round alike.
#pragma once

#include <type_traits>

namespace qs::lane_access {

/// Lanes in one value of T: T::width for a lane type, 1 for double.
template <class T>
constexpr int lane_count() {
  if constexpr (requires { T::width; }) {
    return static_cast<int>(T::width);
  } else {
    return 1;
  }
}

template <class T>
double get(const T& x, int i) {
  if constexpr (std::is_same_v<T, double>) {
    return x;
  } else {
    return x[i];
  }
}

template <class T>
void set(T& x, int i, double v) {
  if constexpr (std::is_same_v<T, double>) {
    x = v;
  } else {
    x.set(i, v);
  }
}

template <class M>
bool get_mask(const M& m, int i) {
  if constexpr (std::is_same_v<M, bool>) {
    return m;
  } else {
    return m[i];
  }
}

template <class M>
void set_mask(M& m, int i, bool v) {
  if constexpr (std::is_same_v<M, bool>) {
    m = v;
  } else {
    m.set(i, v);
  }
}

}  // namespace qs::lane_access
