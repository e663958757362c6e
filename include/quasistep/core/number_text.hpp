// Numbers in one-line messages (a step's failure detail, a certificate): three significant
// digits, as printf's %.3g.
#pragma once

#include <charconv>
#include <cstdio>
#include <string>

namespace qs {

inline std::string three_digits(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

/// The shortest text that reads back as the same double (an input value quoted in an error).
inline std::string shortest_text(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

}  // namespace qs
