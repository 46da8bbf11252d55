// Parsing JSON that comes from the user's files (seccomp profiles, OCI bundle configs) with nlohmann/json: bounded
// nesting (the library recurses), no exception escaping, and an error that says where the text went wrong.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "sys/result.h"

namespace confine {

// Errors: "SOURCE: file: nested more than N levels deep", "SOURCE: invalid JSON: parse error at line L, column C: …".
sys::Result<nlohmann::json> parse_bounded_json(std::string_view text, const std::string& source, int max_depth);

}  // namespace confine
