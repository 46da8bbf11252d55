#include "core/json_text.h"

namespace confine {
namespace {

using nlohmann::json;

// nlohmann::json::parse(text, nullptr, false) says that the text is not JSON but not where: a second, event-only
// pass records the parser's message, which has the line and column.
struct ParseErrorLocator : nlohmann::json_sax<json> {
  std::string message;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    std::string_view what = e.what();  // "[json.exception.parse_error.101] parse error at line 1, column 2: ..."
    auto end_of_id = what.find("] ");
    message = std::string(end_of_id == std::string_view::npos ? what : what.substr(end_of_id + 2));
    return false;
  }
};

std::string locate_parse_error(std::string_view text) {
  ParseErrorLocator locator;
  json::sax_parse(text, &locator);
  return locator.message.empty() ? "not valid JSON" : locator.message;
}

bool nesting_within(std::string_view text, int limit) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return false;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return true;
}

}  // namespace

sys::Result<json> parse_bounded_json(std::string_view text, const std::string& source, int max_depth) {
  if (!nesting_within(text, max_depth))
    return sys::plain_error(source + ": file: nested more than " + std::to_string(max_depth) + " levels deep");
  try {
    json doc = json::parse(text, nullptr, false);
    if (doc.is_discarded()) return sys::plain_error(source + ": invalid JSON: " + locate_parse_error(text));
    return doc;
  } catch (const json::exception& e) {
    return sys::plain_error(source + ": invalid JSON: " + e.what());
  }
}

}  // namespace confine
