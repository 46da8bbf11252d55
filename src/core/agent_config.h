// The agent's own configuration file a profile names ([config], Codex's ~/.codex/config.toml): the endpoints the
// user set there, and the edits that point the sandbox's copy of it at confine's brokers. Pure: cli/profiles.cc
// reads the file, resolve decides, run/session.cc writes the copy.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "core/policy.h"
#include "sys/result.h"

namespace confine {

// One of the user's providers: [TABLE.NAME] with `base_url` and `env_key`, Codex's model_providers.
struct ConfigProvider {
  std::string name;
  std::string url;           // base_url
  std::string key_variable;  // env_key: the variable the agent reads the provider's key from
};

// The file's text as a document; a TOML error is one line, "FILE:LINE: what".
sys::Result<toml::table> parse_agent_config(std::string_view text, const std::string& file);

// The string at a top-level key; empty when it is absent or not a string.
std::string config_string(const toml::table& doc, const std::string& key);

// Each entry of [TABLE.NAME] that has both a string `base_url` and a string `env_key`, in the file's order.
std::vector<ConfigProvider> config_providers(const toml::table& doc, const std::string& table);

// The copy's text with the edits made: each value set at its key, the tables on its way created. A file that is
// not there (nullopt) becomes one holding the edits alone.
sys::Result<std::string> apply_copy_edits(const std::optional<std::string>& text, const std::string& file,
                                          const std::vector<FsPolicy::CopyEdit>& edits);

}  // namespace confine
