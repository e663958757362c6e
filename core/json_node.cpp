#include "core/json_node.hpp"

#include <set>
#include <vector>

namespace qs::json_input {

json parse_document(std::string_view text) {
  // Duplicate keys are errors (nlohmann keeps the last silently): track keys per object.
  std::vector<std::set<std::string>> open_objects;
  std::string duplicate;
  auto callback = [&](int /*depth*/, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start: open_objects.emplace_back(); break;
      case json::parse_event_t::object_end: open_objects.pop_back(); break;
      case json::parse_event_t::key:
        if (!open_objects.back().insert(parsed.get<std::string>()).second && duplicate.empty())
          duplicate = parsed.get<std::string>();
        break;
      default: break;
    }
    return true;
  };
  json doc;
  try {
    doc = json::parse(text, callback);
  } catch (const json::exception& e) {
    // nlohmann's messages: "[json.exception.parse_error.101] parse error at line L, column C: ..."
    // and, for a number beyond double range, "[json.exception.out_of_range.406] number overflow ...".
    std::string what = e.what();
    const auto pos = what.find("] ");
    throw JsonInputError("", "malformed JSON: " + (pos == std::string::npos ? what : what.substr(pos + 2)));
  }
  if (!duplicate.empty()) throw JsonInputError("", "malformed JSON: duplicate key \"" + duplicate + "\"");
  return doc;
}

}  // namespace qs::json_input
