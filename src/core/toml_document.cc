#include "core/toml_document.h"

namespace confine {

sys::Result<toml::table> parse_toml_document(std::string_view text, const std::string& source, std::string_view format) {
  toml::table doc;
  try {
    doc = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    return sys::plain_error(source + ":" + std::to_string(e.source().begin.line) + ": " + std::string(e.description()));
  }
  if (doc["format"].value<std::string>() != format)
    return sys::plain_error(source + ": format: expected `format = \"" + std::string(format) + "\"`");
  return doc;
}

}  // namespace confine
