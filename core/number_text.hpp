// Numbers in one-line messages (a step's failure detail, a certificate): three significant
// digits, as printf's %.3g.
#pragma once

#include <cstdio>
#include <string>

namespace qs {

inline std::string three_digits(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace qs
