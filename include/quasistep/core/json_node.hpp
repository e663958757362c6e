// A JSON value together with its path in the document, and the checks every input field
// goes through (type, finiteness, range, unknown keys). Shared by the readers of scene files
// and problem files so that every input error reads the same way:
//   `bodies[2].shapes[0].radius: must be > 0`
#pragma once

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "quasistep/kernels/eigen.hpp"

#include "quasistep/core/vec2.hpp"

namespace qs {

namespace json_input {
/// `s` with control characters (U+0000..U+001F, U+007F) written as JSON escapes (\n, \r,
/// \t, \u0001, ...) and, when `quotes_and_backslashes`, '"' and '\' escaped too: user text
/// (keys, names, file names) can then never break an error message's single line.
std::string escape_text(std::string_view s, bool quotes_and_backslashes = true);
/// `s` as a JSON string literal, for quoting user text in messages: "a\nb".
std::string json_quote(std::string_view s);
/// The path of member `key` of the value at `parent` ("bodies[1]" -> "bodies[1].mass").
inline std::string child_path(const std::string& parent, std::string_view key) {
  return parent.empty() ? escape_text(key) : parent + "." + escape_text(key);
}
}  // namespace json_input

/// An input error: the JSON path of the field at fault ("" for the document as a whole) and
/// the cause; what() is "path: cause" on one line (control characters that reach it from
/// user text are escaped here as a last line of defence).
class JsonInputError : public std::runtime_error {
 public:
  JsonInputError(const std::string& path, const std::string& message)
      : std::runtime_error(json_input::escape_text(path.empty() ? message : path + ": " + message, false)),
        path_(json_input::escape_text(path, false)) {}
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

namespace json_input {

using json = nlohmann::json;

class Node {
 public:
  Node(const json& j, std::string path) : j_(&j), path_(std::move(path)) {}

  const std::string& path() const { return path_; }
  const json& raw() const { return *j_; }
  [[noreturn]] void fail(const std::string& message) const { throw JsonInputError(path_, message); }

  /// An object whose keys are all in `allowed` (plus "note", a free-text comment allowed
  /// in every object so that example files can document their choices).
  void expect_object(std::initializer_list<std::string_view> allowed) const {
    if (!j_->is_object()) fail("must be an object");
    for (const auto& item : j_->items()) {
      const std::string& key = item.key();
      if (key == "note") {
        child(key).string();
        continue;
      }
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        std::string known;
        for (std::string_view a : allowed) known += (known.empty() ? "" : ", ") + std::string(a);
        child(key).fail("unknown field (expected one of: " + known + ", note)");
      }
    }
  }
  bool has(std::string_view key) const { return j_->contains(key); }
  /// The value at an existing key (checked: indexing a missing key is a bug, not input).
  Node child(std::string_view key) const { return Node(j_->at(std::string(key)), child_path(path_, key)); }
  Node at(std::string_view key) const {
    if (!has(key)) throw JsonInputError(child_path(path_, key), "missing (required)");
    return child(key);
  }
  std::optional<Node> get(std::string_view key) const {
    if (!has(key)) return std::nullopt;
    return child(key);
  }
  Node item(size_t i) const { return Node((*j_)[i], path_ + "[" + std::to_string(i) + "]"); }

  size_t array(size_t min_size = 0) const {
    if (!j_->is_array()) fail("must be an array");
    if (j_->size() < min_size) fail("must have at least " + std::to_string(min_size) + " entries");
    return j_->size();
  }
  double number() const {
    if (!j_->is_number()) fail("must be a number");
    const double v = j_->get<double>();
    if (!std::isfinite(v)) fail("must be a finite number");
    return v;
  }
  double positive() const {
    const double v = number();
    if (!(v > 0)) fail("must be > 0");
    return v;
  }
  double nonnegative() const {
    const double v = number();
    if (!(v >= 0)) fail("must be >= 0");
    return v;
  }
  int integer(int min_value) const {
    if (!j_->is_number_integer()) fail("must be an integer");
    if (j_->is_number_unsigned() && j_->get<std::uint64_t>() > 1'000'000'000u) fail("must be <= 1000000000");
    const auto v = j_->get<std::int64_t>();
    if (v < min_value) fail("must be >= " + std::to_string(min_value));
    if (v > 1'000'000'000) fail("must be <= 1000000000");
    return static_cast<int>(v);
  }
  std::string string() const {
    if (!j_->is_string()) fail("must be a string");
    return j_->get<std::string>();
  }
  /// A name usable in parameter paths and CSV headers: letters, digits, '_' and '-'.
  std::string identifier() const {
    const std::string s = string();
    if (s.empty()) fail("must not be empty");
    for (char c : s)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'))
        fail(json_quote(s) + " may contain only letters, digits, '_' and '-'");
    return s;
  }
  template <class E>
  E choice(std::initializer_list<std::pair<std::string_view, E>> options) const {
    const std::string s = string();
    std::string known;
    for (const auto& [name, value] : options) {
      if (s == name) return value;
      known += (known.empty() ? "" : ", ") + std::string(name);
    }
    fail(json_quote(s) + " is not one of: " + known);
  }
  template <size_t N>
  std::array<double, N> fixed_vector() const {
    if (!j_->is_array() || j_->size() != N) fail("must be an array of " + std::to_string(N) + " numbers");
    std::array<double, N> v{};
    for (size_t i = 0; i < N; ++i) v[i] = item(i).number();
    return v;
  }
  Vec2<double> vec2() const {
    const auto v = fixed_vector<2>();
    return {v[0], v[1]};
  }
  Eigen::MatrixXd matrix(int rows, int cols) const {
    const std::string shape = std::to_string(rows) + " x " + std::to_string(cols);
    if (!j_->is_array() || static_cast<int>(j_->size()) != rows) fail("must be a " + shape + " matrix (array of rows)");
    Eigen::MatrixXd m(rows, cols);
    for (int r = 0; r < rows; ++r) {
      const Node row = item(r);
      if (!row.raw().is_array() || static_cast<int>(row.raw().size()) != cols)
        row.fail("must be a row of " + std::to_string(cols) + " numbers (matrix is " + shape + ")");
      for (int c = 0; c < cols; ++c) m(r, c) = row.item(c).number();
    }
    return m;
  }

 private:
  const json* j_;
  std::string path_;
};

/// Parses text in time linear in its length, turning every parser complaint (syntax, a
/// number beyond double range) into a one-line JsonInputError at the document level, and a
/// key given twice in one object into one at that object's path.
json parse_document(std::string_view text);

}  // namespace json_input
}  // namespace qs
