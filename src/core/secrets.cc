#include "core/secrets.h"

#include <arpa/inet.h>
#include <sys/random.h>

#include <algorithm>
#include <cstdlib>
#include <optional>

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

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// One --for item: a host name, or http://HOST[:PORT] (a host with a port that speaks only plain HTTP). Adds it to
// `s`; false if it is neither.
bool add_for_item(std::string_view item, SecretSpec& s) {
  constexpr std::string_view http = "http://";
  bool plain = item.size() > http.size() && iequals(item.substr(0, http.size()), http);
  std::optional<std::uint16_t> port;
  std::string host;
  if (!plain) {
    // A port or a path would look like a narrower rule than it is: the value goes to the host on any port.
    if (item.find_first_of(":/@") != std::string_view::npos) return false;
    host = normalize_host(item);
  } else {
    auto authority = item.substr(http.size());
    if (authority.ends_with("/")) authority.remove_suffix(1);  // "http://h:8080/" names the same place
    if (authority.empty() || authority.find_first_of("/?#@ \t\\") != std::string_view::npos) return false;
    std::string_view name = authority, port_text;
    if (authority.front() == '[') {  // [v6]:port
      auto close = authority.find(']');
      if (close == std::string_view::npos) return false;
      name = authority.substr(1, close - 1);
      if (close + 1 < authority.size()) {
        if (authority[close + 1] != ':') return false;
        port_text = authority.substr(close + 2);
        if (port_text.empty()) return false;
      }
    } else if (auto colon = authority.find(':'); colon != std::string_view::npos) {
      name = authority.substr(0, colon);
      port_text = authority.substr(colon + 1);
      if (port_text.empty()) return false;
    }
    port = port_text.empty() ? std::optional<std::uint16_t>(80) : port_number(port_text);
    if (!port) return false;
    host = normalize_host(name);
  }
  if (host.empty()) return false;
  if (std::find(s.hosts.begin(), s.hosts.end(), host) == s.hosts.end()) s.hosts.push_back(host);
  if (port) {
    PlainHttpPort p{host, *port};
    if (std::find(s.plain_http.begin(), s.plain_http.end(), p) == s.plain_http.end()) s.plain_http.push_back(p);
  }
  return true;
}

std::optional<std::string> parse_for(std::string_view name, std::string_view list, SecretSpec& s) {
  while (true) {
    auto comma = list.find(',');
    auto item = list.substr(0, comma);
    if (!add_for_item(item, s)) {
      auto prefix = "--secret " + std::string(name) + " --for `" + std::string(item) + "`: ";
      if (item.starts_with("https://"))
        return prefix + "give the host alone (HTTPS to it goes through a --broker, which puts the value in)";
      return prefix + "expected host names separated by commas (no port, no path), or http://HOST:PORT for a port "
                      "that speaks only plain HTTP";
    }
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return std::nullopt;
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

}  // namespace

bool is_loopback_address(std::string_view address) {
  std::string a(address);
  if (a.size() > 2 && a.front() == '[' && a.back() == ']') a = a.substr(1, a.size() - 2);
  unsigned char b[16];
  if (::inet_pton(AF_INET, a.c_str(), b) == 1) return b[0] == 127;
  if (::inet_pton(AF_INET6, a.c_str(), b) != 1) return false;
  static const unsigned char v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (std::equal(v4mapped, v4mapped + 12, b)) return b[12] == 127;
  return std::all_of(b, b + 15, [](unsigned char c) { return c == 0; }) && b[15] == 1;
}

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
  if (auto bad = parse_for(s.name, for_hosts, s)) return plain_error(*bad);
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
  auto local_port = port_number(spec.substr(0, eq));
  // The upstream is an endpoint URL with TLS and no path ("https://api.example/" names the same place).
  auto url = parse_endpoint_url(spec.substr(eq + 1), "--broker");
  if (!local_port || !url || !url->tls || !url->path.empty()) return bad;
  return BrokerSpec{*local_port, url->host, url->port, std::string(spec)};
}

sys::Result<EndpointUrl> parse_endpoint_url(std::string_view url, const std::string& what) {
  auto bad = plain_error(what + " `" + std::string(url) + "`: expected https://HOST[:PORT][/PATH]");
  EndpointUrl e;
  if (url.starts_with("https://")) url.remove_prefix(8);
  else if (url.starts_with("http://")) url.remove_prefix(7), e.tls = false, e.port = 80;
  else return bad;
  auto slash = url.find('/');
  auto authority = url.substr(0, slash);
  if (slash != std::string_view::npos) e.path = std::string(url.substr(slash));
  while (e.path.ends_with('/')) e.path.pop_back();
  if (authority.empty() || authority.find_first_of("@[]?# \t\\") != std::string_view::npos ||
      e.path.find_first_of("?# \t\\") != std::string::npos)
    return bad;
  for (char ch : e.path)
    if (static_cast<unsigned char>(ch) < 0x21 || static_cast<unsigned char>(ch) > 0x7e) return bad;
  if (auto colon = authority.find(':'); colon != std::string_view::npos) {
    auto port = port_number(authority.substr(colon + 1));
    if (!port) return bad;
    e.port = *port;
    authority = authority.substr(0, colon);
  }
  e.host = normalize_host(authority);
  if (e.host.empty()) return bad;
  return e;
}

bool may_substitute_in_clear(std::string_view address, std::uint16_t port, std::string_view host, const SecretSpec& spec) {
  if (is_loopback_address(address)) return true;
  return std::any_of(spec.plain_http.begin(), spec.plain_http.end(),
                     [&](const PlainHttpPort& p) { return p.host == host && p.port == port; });
}

RequestStart classify_request_start(std::string_view bytes) {
  constexpr std::size_t kLongestMethod = 20;  // every registered method is shorter, and upper-case letters only
  std::size_t i = 0, n = bytes.size();
  auto at = [&](std::size_t k) { return static_cast<unsigned char>(bytes[k]); };
  while (i < n && at(i) >= 'A' && at(i) <= 'Z' && i < kLongestMethod) ++i;
  if (i == n) return RequestStart::need_more;
  if (i == 0 || at(i) != ' ') return RequestStart::other;
  auto target = ++i;
  while (i < n && at(i) > 0x20 && at(i) < 0x7f) ++i;
  if (i == n) return RequestStart::need_more;
  if (i == target || at(i) != ' ') return RequestStart::other;
  ++i;
  for (char c : std::string_view("HTTP/1.")) {
    if (i == n) return RequestStart::need_more;
    if (bytes[i++] != c) return RequestStart::other;
  }
  if (i == n) return RequestStart::need_more;
  if (at(i) != '0' && at(i) != '1') return RequestStart::other;
  if (++i == n) return RequestStart::need_more;
  if (at(i) == '\r' && ++i == n) return RequestStart::need_more;
  return at(i) == '\n' ? RequestStart::http : RequestStart::other;
}

HeaderSubstitution SecretSet::substitute_header(std::string_view header_name, std::string_view value,
                                                const RequestDestination& to) const {
  HeaderSubstitution out{std::string(value), {}, {}, {}};
  if (out.value.find(kPlaceholderPrefix) == std::string::npos) return out;  // the common case: nothing to look at
  bool names_destination = iequals(header_name, "Host");
  for (const auto& s : secrets_) {
    if (out.value.find(s.spec.placeholder) == std::string::npos) continue;
    bool listed = !names_destination && std::find(s.spec.hosts.begin(), s.spec.hosts.end(), to.host) != s.spec.hosts.end();
    if (!listed) {
      out.withheld.push_back(s.spec.name);
    } else if (!to.tls && !may_substitute_in_clear(to.address, to.port, to.host, s.spec)) {
      out.refused.push_back(s.spec.name);
    } else {
      replace_all(out.value, s.spec.placeholder, s.value);
      out.substituted.push_back(s.spec.name);
    }
  }
  return out;
}

bool SecretSet::lists(std::string_view host) const {
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

std::vector<std::string> variables_holding_secrets(const std::vector<std::string>& env, const SecretSet& secrets) {
  std::vector<std::string> names;
  for (const auto& e : env)
    if (auto eq = e.find('='); eq != std::string::npos && secrets.any_value_in(std::string_view(e).substr(eq + 1)))
      names.push_back(e.substr(0, eq));
  return names;
}

}  // namespace confine
