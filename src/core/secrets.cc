#include "core/secrets.h"

#include <sys/random.h>

#include <algorithm>
#include <cstdlib>

#include "core/allowlist.h"

namespace confine {
namespace {

using sys::plain_error;

constexpr std::string_view kPlaceholderPrefix = "confine-placeholder-";

bool is_variable_name(std::string_view name) {
  if (name.empty() || (name.front() >= '0' && name.front() <= '9')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

sys::Result<SecretSource> parse_source(std::string_view name, std::string_view text) {
  auto bad = [&](std::string_view why) {
    return plain_error("--secret " + std::string(name) + "=" + std::string(text) + ": " + std::string(why));
  };
  auto after = [&](std::string_view prefix) { return text.substr(prefix.size()); };
  SecretSource s;
  if (text.starts_with("env:")) {
    s.kind = SecretSource::Kind::environment;
    s.where = after("env:");
    if (!is_variable_name(s.where)) return bad("env: needs a variable name");
  } else if (text.starts_with("file:")) {
    s.kind = SecretSource::Kind::file;
    s.where = after("file:");
    if (s.where.empty()) return bad("file: needs a path");
  } else if (text.starts_with("cmd:")) {
    s.kind = SecretSource::Kind::command;
    s.where = after("cmd:");
    if (s.where.find_first_not_of(" \t") == std::string::npos) return bad("cmd: needs a command");
  } else {
    return bad("expected env:VAR, file:PATH or cmd:COMMAND");
  }
  return s;
}

sys::Result<std::vector<std::string>> parse_hosts(std::string_view name, std::string_view list) {
  std::vector<std::string> hosts;
  while (true) {
    auto comma = list.find(',');
    auto item = list.substr(0, comma);
    auto host = normalize_host(item);
    // A port or a path would look like a narrower rule than it is: the value goes to the host on any port.
    if (host.empty() || item.find_first_of(":/@") != std::string_view::npos)
      return plain_error("--secret " + std::string(name) + " --for `" + std::string(item) +
                         "`: expected host names separated by commas (no port, no path)");
    hosts.push_back(std::move(host));
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return hosts;
}

// Replaces every occurrence of `from` in `text` with `to`; true if there was one.
bool replace_all(std::string& text, std::string_view from, std::string_view to) {
  bool found = false;
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
    found = true;
  }
  return found;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

sys::Result<SecretSpec> parse_secret(std::string_view spec, std::string_view for_hosts) {
  auto eq = spec.find('=');
  SecretSpec s;
  s.name = std::string(spec.substr(0, eq));
  if (!is_variable_name(s.name))
    return plain_error("--secret `" + std::string(spec) + "`: expected NAME[=SOURCE], NAME a variable name");
  if (eq == std::string_view::npos) {
    s.source = {SecretSource::Kind::environment, s.name};
  } else {
    auto source = parse_source(s.name, spec.substr(eq + 1));
    if (!source) return source.error();
    s.source = std::move(*source);
  }
  auto hosts = parse_hosts(s.name, for_hosts);
  if (!hosts) return hosts.error();
  s.hosts = std::move(*hosts);
  return s;
}

std::string placeholder_from_random(const unsigned char (&random)[32]) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(kPlaceholderPrefix);
  for (unsigned char b : random) {
    out += kHex[b >> 4];
    out += kHex[b & 0xf];
  }
  return out;
}

std::string make_placeholder() {
  unsigned char random[32];
  // getrandom() of at most 256 bytes does not return short once the pool is initialised; a failure here would
  // mean placeholders anyone could guess, so confine stops rather than run with one.
  if (::getrandom(random, sizeof random, 0) != static_cast<ssize_t>(sizeof random)) std::abort();
  return placeholder_from_random(random);
}

sys::Result<BrokerSpec> parse_broker(std::string_view spec) {
  auto bad = plain_error("--broker `" + std::string(spec) + "`: expected PORT=https://HOST[:PORT]");
  auto eq = spec.find('=');
  if (eq == std::string_view::npos) return bad;
  BrokerSpec b;
  b.text = std::string(spec);
  auto local_port = port_number(spec.substr(0, eq));
  if (!local_port) return bad;
  b.local_port = *local_port;
  auto url = spec.substr(eq + 1);
  constexpr std::string_view scheme = "https://";
  if (!url.starts_with(scheme)) return bad;
  auto authority = url.substr(scheme.size());
  if (authority.ends_with("/")) authority.remove_suffix(1);  // "https://api.example/" names the same place
  if (authority.empty() || authority.find_first_of("/?#@[] \t\\") != std::string_view::npos) return bad;
  if (auto colon = authority.find(':'); colon != std::string_view::npos) {
    auto port = port_number(authority.substr(colon + 1));
    if (!port) return bad;
    b.port = *port;
    authority = authority.substr(0, colon);
  }
  b.host = normalize_host(authority);
  if (b.host.empty()) return bad;
  return b;
}

HeaderSubstitution SecretSet::substitute_header(std::string_view header_name, std::string_view value,
                                                std::string_view host) const {
  HeaderSubstitution out{std::string(value), {}, {}};
  if (out.value.find(kPlaceholderPrefix) == std::string::npos) return out;  // the common case: nothing to look at
  bool names_destination = iequals(header_name, "Host");
  for (const auto& s : secrets_) {
    bool listed = !names_destination && std::find(s.spec.hosts.begin(), s.spec.hosts.end(), host) != s.spec.hosts.end();
    if (!listed) {
      if (out.value.find(s.spec.placeholder) != std::string::npos) out.withheld.push_back(s.spec.name);
    } else if (replace_all(out.value, s.spec.placeholder, s.value)) {
      out.substituted.push_back(s.spec.name);
    }
  }
  return out;
}

bool SecretSet::listed_for(std::string_view host) const {
  return std::any_of(secrets_.begin(), secrets_.end(), [&](const LoadedSecret& s) {
    return std::find(s.spec.hosts.begin(), s.spec.hosts.end(), host) != s.spec.hosts.end();
  });
}

bool SecretSet::any_value_in(std::string_view text) const {
  constexpr std::size_t kShortValue = 8;
  return std::any_of(secrets_.begin(), secrets_.end(), [&](const LoadedSecret& s) {
    return s.value.size() < kShortValue ? text == s.value : text.find(s.value) != std::string_view::npos;
  });
}

}  // namespace confine
