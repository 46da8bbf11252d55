// Reading a versioned TOML data file (seccomp/, landlock/): one place for the parse-error message
// ("FILE:LINE: what") and the `format = "…"` check.
#pragma once

#include <string>
#include <string_view>
#include <toml++/toml.h>

#include "sys/result.h"

namespace confine {

sys::Result<toml::table> parse_toml_document(std::string_view text, const std::string& source, std::string_view format);

// The built-in data files as documents, built by src/tools/tomlgen.cc at build time: a run reads the policy without
// parsing its text (tests/unit/data_test.cc checks each equals the parse of the embedded text).
toml::table builtin_seccomp_document();       // seccomp/default.toml
toml::table builtin_landlock_document();      // landlock/default.toml
toml::table builtin_secret_names_document();  // secrets/default.toml

}  // namespace confine
