#include <catch2/catch.hpp>

#include "core/report.h"

using namespace confine;

TEST_CASE("json_string escapes control characters and keeps the output valid UTF-8") {
  CHECK(json_string("a\"b\\c\n") == "\"a\\\"b\\\\c\\n\"");
  CHECK(json_string(std::string("\x01", 1)) == "\"\\u0001\"");
  CHECK(json_string("bücher") == "\"bücher\"");                        // valid UTF-8 passes
  CHECK(json_string("\xff\xfe@x") == "\"\\u00ff\\u00fe@x\"");          // bytes from the sandbox: escaped
  CHECK(json_string("\xc3") == "\"\\u00c3\"");                         // a truncated sequence
  CHECK(json_array({"a", "b"}) == "[\"a\",\"b\"]");
}
