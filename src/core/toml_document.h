// Reading a versioned TOML data file (seccomp/, landlock/): one place for the parse-error message
// ("FILE:LINE: what") and the `format = "…"` check.
#pragma once

#include <string>
#include <string_view>
#include <toml++/toml.h>

#include "sys/result.h"

namespace confine {

sys::Result<toml::table> parse_toml_document(std::string_view text, const std::string& source, std::string_view format);

}  // namespace confine
