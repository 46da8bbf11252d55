#include "core/agent_config.h"

#include <sstream>

namespace confine {

sys::Result<toml::table> parse_agent_config(std::string_view text, const std::string& file) {
  try {
    return toml::parse(text, file);
  } catch (const toml::parse_error& e) {
    return sys::plain_error(file + ":" + std::to_string(e.source().begin.line) + ": " + std::string(e.description()));
  }
}

std::string config_string(const toml::table& doc, const std::string& key) {
  return doc[key].value<std::string>().value_or("");
}

std::vector<ConfigProvider> config_providers(const toml::table& doc, const std::string& table) {
  std::vector<ConfigProvider> out;
  const toml::table* providers = doc[table].as_table();
  if (providers == nullptr) return out;
  for (const auto& [name, node] : *providers) {
    const toml::table* p = node.as_table();
    if (p == nullptr) continue;
    auto url = (*p)["base_url"].value<std::string>();
    auto key = (*p)["env_key"].value<std::string>();
    if (url && key && !url->empty() && !key->empty()) out.push_back({std::string(name.str()), *url, *key});
  }
  return out;
}

sys::Result<std::string> apply_copy_edits(const std::optional<std::string>& text, const std::string& file,
                                          const std::vector<FsPolicy::CopyEdit>& edits) {
  toml::table doc;
  if (text) {
    auto parsed = parse_agent_config(*text, file);
    if (!parsed) return parsed.error();
    doc = std::move(*parsed);
  }
  for (const auto& edit : edits) {
    toml::table* at = &doc;
    for (std::size_t i = 0; i + 1 < edit.key.size(); ++i) {
      // A key on the way that holds something other than a table: the file is not what the edit is for.
      auto [it, added] = at->emplace<toml::table>(edit.key[i]);
      at = it->second.as_table();
      if (at == nullptr)
        return sys::plain_error(file + ": `" + edit.key[i] + "` is not a table; confine cannot point it at its broker");
    }
    at->insert_or_assign(edit.key.back(), edit.value);
  }
  std::ostringstream out;
  out << doc << "\n";
  return out.str();
}

}  // namespace confine
