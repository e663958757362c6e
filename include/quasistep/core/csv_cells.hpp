// Cells of the CSV files the CLI reads back (command files, sample CSVs, trajectories and
// forces for `render`): one number rule for all of them. A number is the whole cell, read
// by std::from_chars (locale-free; subnormal values such as 1e-320, which the CLI itself
// writes, are numbers), and finite.
#pragma once

#include <charconv>
#include <cmath>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

namespace qs::io {

/// The fields of a line between `sep`s, as written (a trailing separator gives a last,
/// empty field).
inline std::vector<std::string> split_fields(const std::string& line, char sep = ',') {
  std::vector<std::string> out;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, sep)) out.push_back(field);
  if (!line.empty() && line.back() == sep) out.emplace_back();
  return out;
}

/// A finite double spelling the whole cell; a leading '+' is allowed (from_chars is not).
inline bool parse_finite(const std::string& cell, double& v) {
  const char* first = cell.data() + (!cell.empty() && cell[0] == '+' ? 1 : 0);
  const char* last = cell.data() + cell.size();
  const auto r = std::from_chars(first, last, v);
  return first != last && r.ec == std::errc() && r.ptr == last && std::isfinite(v);
}

/// An integer spelling the whole cell.
template <class Int>
bool parse_integer(const std::string& cell, Int& v) {
  const auto r = std::from_chars(cell.data(), cell.data() + cell.size(), v);
  return !cell.empty() && r.ec == std::errc() && r.ptr == cell.data() + cell.size();
}

}  // namespace qs::io
