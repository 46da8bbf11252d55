#include "core/request_rules.h"

#include <algorithm>
#include <fmt/format.h>

#include "core/allowlist.h"

namespace confine {
namespace {

bool is_method_token(std::string_view m) {
  if (m == "*") return true;
  return !m.empty() && m.size() <= 16 && std::all_of(m.begin(), m.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
}

// A path with a dot segment or an encoded '/', '.' or '\' can name, after the server decodes it, another path
// than the one checked: such a request is refused where rules apply, not matched.
bool is_plain_path(std::string_view path) {
  if (path.empty() || path.front() != '/' || path.find('\\') != std::string_view::npos) return false;
  std::string lower(path);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* encoded : {"%2e", "%2f", "%5c", "%00"})
    if (lower.find(encoded) != std::string::npos) return false;
  std::string_view rest = path.substr(1);
  while (true) {
    auto slash = rest.find('/');
    auto segment = rest.substr(0, slash);
    if (segment == "." || segment == "..") return false;
    if (slash == std::string_view::npos) return true;
    rest.remove_prefix(slash + 1);
  }
}

bool matches(const RequestRule& r, std::string_view method, std::string_view path) {
  if (r.method != "*" && r.method != method) return false;
  return r.prefix ? path.starts_with(r.path) : path == r.path;
}

}  // namespace

bool is_request_rule(std::string_view spec) { return spec.find(' ') != std::string_view::npos; }

sys::Result<RequestRule> parse_request_rule(std::string_view spec) {
  auto bad = [&](std::string_view why) {
    return sys::plain_error("--allow `" + std::string(spec) + "`: " + std::string(why) +
                            " (expected METHOD HOST[:PORT]/PATH, e.g. 'POST api.openai.com/v1/responses')");
  };
  auto space = spec.find(' ');
  RequestRule r;
  r.text = std::string(spec);
  r.method = std::string(spec.substr(0, space));
  if (!is_method_token(r.method)) return bad("the method must be upper-case letters or *");
  auto rest = spec.substr(space + 1);
  auto slash = rest.find('/');
  if (slash == std::string_view::npos) return bad("a path is missing");
  auto authority = rest.substr(0, slash);
  auto entry = parse_allow_entry(authority);
  if (!entry || entry->kind != AllowEntry::Kind::exact || entry->ports.size() != 1)
    return bad("the host must be one name with at most one port");
  r.host = entry->host;
  r.port = entry->ports.front();
  auto path = rest.substr(slash);
  if (path.ends_with("/*")) {
    r.prefix = true;
    path.remove_suffix(1);
  }
  if (path.find_first_of("?#* \t") != std::string_view::npos || !is_plain_path(path))
    return bad("the path must be plain (no query, no dot segments, no encoded / or .; * only as /* at the end)");
  r.path = std::string(path);
  return r;
}

bool RequestRules::restricts(std::string_view host, std::uint16_t port) const {
  return std::any_of(rules_.begin(), rules_.end(), [&](const RequestRule& r) { return r.host == host && r.port == port; });
}

std::string RequestRules::refusal(std::string_view method, std::string_view host, std::uint16_t port,
                                  std::string_view target) const {
  if (!restricts(host, port)) return {};
  auto path = target.substr(0, target.find_first_of("?#"));
  auto where = port == 443 ? std::string(host) : fmt::format("{}:{}", host, port);
  if (!is_plain_path(path))
    return fmt::format("{} {}{}: a path with dot segments or encoded / . \\ is refused on a host with method/path "
                       "rules", method, where, path);
  bool allowed = std::any_of(rules_.begin(), rules_.end(), [&](const RequestRule& r) {
    return r.host == host && r.port == port && matches(r, method, path);
  });
  if (allowed) return {};
  return fmt::format("{} {}{} is not allowed: {} allows only the requests of its --allow rules; "
                     "--allow '{} {}{}' would allow it", method, where, path, where, method, where, path);
}

}  // namespace confine
