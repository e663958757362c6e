#include "quasistep/core/json_node.hpp"

#include <algorithm>
#include <cstdio>
#include <new>
#include <utility>
#include <vector>

namespace qs::json_input {

std::string escape_text(std::string_view s, bool quotes_and_backslashes) {
  std::string out;
  out.reserve(s.size());
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '"':
      case '\\':
        if (quotes_and_backslashes) out += '\\';
        out += ch;
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  return out;
}

std::string json_quote(std::string_view s) {
  // Appended piecewise: GCC 12 warns falsely (-Wrestrict) on "\"" + std::string.
  std::string out(1, '"');
  out += escape_text(s);
  out += '"';
  return out;
}

namespace {

// release() recurses once per level; deeper documents are left to nlohmann's destructor.
constexpr size_t kMaxReleaseDepth = 10000;

/// Builds the document as nlohmann's own DOM parser does (each value is placed once, so the
/// time is linear in the text) and notes the first key repeated within one object. The
/// callback parser of nlohmann 3.11 rescans the parent at the end of every object, which is
/// quadratic in the number of siblings.
class DocumentBuilder final : public json::json_sax_t {
 public:
  explicit DocumentBuilder(json& root) : root_(root) {}

  bool null() override { return put(nullptr); }
  bool boolean(bool v) override { return put(v); }
  bool number_integer(json::number_integer_t v) override { return put(v); }
  bool number_unsigned(json::number_unsigned_t v) override { return put(v); }
  bool number_float(json::number_float_t v, const json::string_t& /*text*/) override { return put(v); }
  bool string(json::string_t& v) override { return put(std::move(v)); }
  bool binary(json::binary_t& v) override { return put(json::binary(std::move(v))); }

  bool start_object(std::size_t /*elements*/) override { return open(json::object()); }
  bool key(json::string_t& k) override {
    auto& members = open_.back().value->get_ref<json::object_t&>();
    auto [it, inserted] = members.try_emplace(k);
    if (!inserted && !has_duplicate_) {
      has_duplicate_ = true;
      duplicate_ = k;
      duplicate_in_ = path_of_open_object();
    }
    open_.back().key = std::move(k);
    slot_ = &it->second;
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t /*elements*/) override { return open(json::array()); }
  bool end_array() override { return close(); }

  bool parse_error(std::size_t /*position*/, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& e) override {
    throw JsonInputError("", "malformed JSON: " + without_prefix(e.what()));
  }

  /// The deepest nesting seen so far.
  size_t max_depth() const { return max_depth_; }
  /// Whether a key was repeated; the first such key and the path of the object holding it.
  bool has_duplicate() const { return has_duplicate_; }
  const std::string& duplicate() const { return duplicate_; }
  const std::string& duplicate_in() const { return duplicate_in_; }

  // nlohmann's messages: "[json.exception.parse_error.101] parse error at line L, column C: ..."
  // and, for a number beyond double range, "[json.exception.out_of_range.406] number overflow ...".
  static std::string without_prefix(const std::string& what) {
    const auto pos = what.find("] ");
    return pos == std::string::npos ? what : what.substr(pos + 2);
  }

 private:
  struct Open {
    json* value;
    std::string key;  // an object's latest key (for the path of what is nested under it)
  };

  /// Places a value where the parser stands: the root, the end of the open array, or the
  /// open object's latest key. Returns the value's place for open().
  json* place(json&& v) {
    if (open_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    json& parent = *open_.back().value;
    if (parent.is_array()) {
      auto& items = parent.get_ref<json::array_t&>();
      items.push_back(std::move(v));
      return &items.back();
    }
    *slot_ = std::move(v);
    return slot_;
  }
  template <class T>
  bool put(T&& v) {
    place(json(std::forward<T>(v)));
    return true;
  }
  bool open(json&& container) {
    open_.push_back({place(std::move(container)), {}});
    max_depth_ = std::max(max_depth_, open_.size());
    return true;
  }
  bool close() {
    open_.pop_back();
    return true;
  }

  /// The path of the innermost open object, in Node's notation.
  std::string path_of_open_object() const {
    std::string path;
    for (size_t i = 0; i + 1 < open_.size(); ++i) {
      const json& parent = *open_[i].value;
      if (parent.is_array()) {
        path += '[';  // appended piecewise: GCC 12 warns falsely (-Wrestrict) on "[" + std::string
        path += std::to_string(parent.size() - 1);
        path += ']';
      } else {
        path = child_path(path, open_[i].key);
      }
    }
    return path;
  }

  json& root_;
  std::vector<Open> open_;
  json* slot_ = nullptr;
  size_t max_depth_ = 0;
  bool has_duplicate_ = false;  // the key may be "", so duplicate_ cannot tell
  std::string duplicate_, duplicate_in_;
};

}  // namespace

namespace {

/// Frees a document without allocating: children before their container, each container
/// emptied from the back (an empty container's destructor allocates nothing). Recursive,
/// one frame per level of nesting.
void release(json& j) {
  if (j.is_array()) {
    auto& items = j.get_ref<json::array_t&>();
    while (!items.empty()) {
      release(items.back());
      items.pop_back();
    }
  } else if (j.is_object()) {
    auto& members = j.get_ref<json::object_t&>();
    while (!members.empty()) {
      release(members.begin()->second);
      members.erase(members.begin());
    }
  }
}

}  // namespace

json parse_document(std::string_view text) {
  json doc;
  DocumentBuilder builder(doc);
  try {
    json::sax_parse(text, &builder);
  } catch (const json::exception& e) {
    throw JsonInputError("", "malformed JSON: " + DocumentBuilder::without_prefix(e.what()));
  } catch (const std::bad_alloc&) {
    // The document takes about 15 times its text: a file too large for this machine is an
    // input error, not an abort. nlohmann's destructor allocates a stack as large as the
    // largest container, which fails now, so the partial document is taken apart here first.
    if (builder.max_depth() <= kMaxReleaseDepth) release(doc);
    throw JsonInputError("", "out of memory while reading " + std::to_string(text.size()) + " bytes of JSON");
  }
  // Reported after the whole text is read, so a later syntax error still comes first.
  if (builder.has_duplicate())
    throw JsonInputError(builder.duplicate_in(), "malformed JSON: duplicate key " + json_quote(builder.duplicate()));
  return doc;
}

}  // namespace qs::json_input
