#include "core/env_scrub.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace confine {
namespace {

// Substrings of an upper-cased name that mark a credential (MY_API_KEY, GITLAB_TOKEN, PGPASSWORD, …).
constexpr std::array kCredentialWords = {
    std::string_view{"KEY"},    std::string_view{"TOKEN"},      std::string_view{"SECRET"},
    std::string_view{"PASSWORD"}, std::string_view{"PASSWD"},   std::string_view{"CREDENTIAL"},
    std::string_view{"AUTH"},   std::string_view{"COOKIE"},     std::string_view{"SESSION"},
    std::string_view{"DSN"},    // SENTRY_DSN and its kind: a URL holding a key
};

// Endings of an upper-cased name that mark a password (MYSQL_PWD, SSHPASS); `PWD` alone is the working directory.
constexpr std::array kCredentialSuffixes = {std::string_view{"_PWD"}, std::string_view{"PASS"}};

// Prefixes of whole families of cloud and forge credentials.
constexpr std::array kCredentialPrefixes = {
    std::string_view{"AWS_"}, std::string_view{"GH_"},     std::string_view{"GITHUB_"}, std::string_view{"AZURE_"},
    std::string_view{"GOOGLE_"}, std::string_view{"GCLOUD_"}, std::string_view{"VAULT_"}, std::string_view{"NPM_CONFIG_//"},
};

// Exact names: handles to agents, buses and daemons that grant access without a secret in the value.
constexpr std::array kCredentialNames = {
    std::string_view{"SSH_AUTH_SOCK"},  std::string_view{"SSH_AGENT_PID"},   std::string_view{"GPG_AGENT_INFO"},
    std::string_view{"DBUS_SESSION_BUS_ADDRESS"}, std::string_view{"KUBECONFIG"}, std::string_view{"DOCKER_HOST"},
    std::string_view{"DOCKER_CONFIG"},  std::string_view{"XDG_RUNTIME_DIR"}, std::string_view{"DATABASE_URL"},
    std::string_view{"PGPASS"},         std::string_view{"PGPASSFILE"},      std::string_view{"NETRC"},
};

std::string upper(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return out;
}

std::string_view name_of(std::string_view entry) { return entry.substr(0, entry.find('=')); }

}  // namespace

void set_variable(std::vector<std::string>& env, const std::string& entry) {
  auto name = name_of(entry);
  auto same = [&](const std::string& e) { return name_of(e) == name; };
  env.erase(std::remove_if(env.begin(), env.end(), same), env.end());
  env.push_back(entry);
}

bool is_credential_variable(std::string_view name) {
  std::string n = upper(name);
  auto contains = [&](std::string_view w) { return n.find(w) != std::string::npos; };
  auto starts = [&](std::string_view p) { return n.starts_with(p); };
  auto ends = [&](std::string_view e) { return n.ends_with(e); };
  return std::any_of(kCredentialWords.begin(), kCredentialWords.end(), contains) ||
         std::any_of(kCredentialSuffixes.begin(), kCredentialSuffixes.end(), ends) ||
         std::any_of(kCredentialPrefixes.begin(), kCredentialPrefixes.end(), starts) ||
         std::find(kCredentialNames.begin(), kCredentialNames.end(), n) != kCredentialNames.end();
}

bool is_url_with_password(std::string_view value) {
  auto scheme_end = value.find("://");
  if (scheme_end == std::string_view::npos || scheme_end == 0) return false;
  auto authority = value.substr(scheme_end + 3);
  authority = authority.substr(0, authority.find_first_of("/?#"));
  auto at = authority.rfind('@');
  return at != std::string_view::npos && authority.substr(0, at).find(':') != std::string_view::npos;
}

ScrubbedEnvironment scrub_environment(const std::vector<std::string>& inherited, const std::vector<std::string>& pass,
                                      const std::vector<std::string>& set) {
  ScrubbedEnvironment out;
  for (const auto& entry : inherited) {
    auto name = name_of(entry);
    bool passed = std::find(pass.begin(), pass.end(), name) != pass.end();
    auto value = std::string_view(entry).substr(std::min(entry.size(), name.size() + 1));
    if ((is_credential_variable(name) || is_url_with_password(value)) && !passed)
      out.dropped_names.emplace_back(name);
    else
      out.kept.push_back(entry);
  }
  for (const auto& entry : set) set_variable(out.kept, entry);
  return out;
}

sys::Result<EnvFile> parse_env_file(std::string_view text, const std::string& source) {
  EnvFile out;
  std::size_t number = 0;
  while (!text.empty()) {
    auto eol = text.find('\n');
    auto line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view{} : text.substr(eol + 1);
    ++number;
    if (line.ends_with('\r')) line.remove_suffix(1);
    auto start = line.find_first_not_of(" \t");
    if (start == std::string_view::npos || line[start] == '#') continue;
    line.remove_prefix(start);
    auto eq = line.find('=');
    auto name = line.substr(0, eq);
    bool valid = !name.empty() && name.find_first_of(" \t") == std::string_view::npos && name.find('\0') == std::string_view::npos;
    if (!valid)
      return sys::plain_error(source + ":" + std::to_string(number) + ": expected NAME=VALUE or NAME, got `" +
                              std::string(line.substr(0, 60)) + "`");
    if (eq == std::string_view::npos) out.pass.emplace_back(name);
    else out.set.emplace_back(line);
  }
  return out;
}

}  // namespace confine
