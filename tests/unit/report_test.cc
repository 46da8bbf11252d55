#include <catch2/catch.hpp>

#include "core/report.h"

using namespace confine;

TEST_CASE("json_string escapes control characters and keeps the output valid UTF-8") {
  CHECK(json_string("a\"b\\c\n") == "\"a\\\"b\\\\c\\n\"");
  CHECK(json_string(std::string("\x01", 1)) == "\"\\u0001\"");
  CHECK(json_string("bücher") == "\"bücher\"");                        // valid UTF-8 passes
  CHECK(json_string("\xff\xfe@x") == "\"\\u00ff\\u00fe@x\"");          // bytes from the sandbox: escaped
  CHECK(json_string("\xc3") == "\"\\u00c3\"");                         // a truncated sequence
  // Sequences a strict reader refuses: an overlong "/", a surrogate, a code point past U+10FFFF.
  CHECK(json_string("\xe0\x80\xaf") == "\"\\u00e0\\u0080\\u00af\"");
  CHECK(json_string("\xed\xa0\x80") == "\"\\u00ed\\u00a0\\u0080\"");
  CHECK(json_string("\xf4\x90\x80\x80") == "\"\\u00f4\\u0090\\u0080\\u0080\"");
  CHECK(json_string("\xf0\x9f\x98\x80") == "\"\xf0\x9f\x98\x80\"");  // U+1F600 passes
  CHECK(json_array({"a", "b"}) == "[\"a\",\"b\"]");
}
