// CLI11 registration that takes the names, placeholder and help from the flag table (flag_docs.h), so that no
// option's documentation is written anywhere else.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "cli/flag_docs.h"

namespace confine::cli {

template <typename T>
CLI::Option* add_documented_option(CLI::App& app, const FlagDoc& doc, T& into) {
  return app.add_option(std::string(doc.names), into, std::string(doc.help))->type_name(std::string(doc.value));
}

inline CLI::Option* add_documented_switch(CLI::App& app, const FlagDoc& doc, bool& into) {
  return app.add_flag(std::string(doc.names), into, std::string(doc.help));
}

}  // namespace confine::cli
