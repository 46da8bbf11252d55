#include "core/allowlist.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <idn2.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>
#include <string>
#include <vector>

namespace confine {
namespace {

constexpr std::uint16_t kDefaultPort = 443;

bool port_matches(const AllowEntry& e, std::uint16_t port) {
  return e.ports.empty() || std::find(e.ports.begin(), e.ports.end(), port) != e.ports.end();
}

// `host` is normalised. A wildcard covers names below its suffix, never the suffix itself.
bool name_matches(const AllowEntry& e, std::string_view host) {
  if (e.kind == AllowEntry::Kind::exact) return e.host == host;
  return e.kind == AllowEntry::Kind::wildcard && host.size() > e.host.size() + 1 && host.ends_with(e.host) &&
         host[host.size() - e.host.size() - 1] == '.';
}

// Canonical text of an address literal, so "::0001" and "::1" compare equal; empty if not a literal.
std::string canonical_address(std::string_view text) {
  std::string s(text);
  if (s.size() > 2 && s.front() == '[' && s.back() == ']') s = s.substr(1, s.size() - 2);
  char out[INET6_ADDRSTRLEN];
  unsigned char buf[16];
  if (::inet_pton(AF_INET, s.c_str(), buf) == 1) return ::inet_ntop(AF_INET, buf, out, sizeof out);
  if (::inet_pton(AF_INET6, s.c_str(), buf) == 1) return ::inet_ntop(AF_INET6, buf, out, sizeof out);
  return {};
}

// The host's loopback as a strict profile allows it by address (see Allowlist::loopback_forwards).
bool host_loopback(std::string_view address) {
  auto a = canonical_address(address);
  return a == "127.0.0.1" || a == "::1";
}

bool valid_label_chars(std::string_view host) {
  return !host.empty() && host.size() <= 253 && std::all_of(host.begin(), host.end(), [](unsigned char c) {
           return std::isalnum(c) || c == '-' || c == '.' || c == '_';
         }) && host.find("..") == std::string_view::npos && host.front() != '.' && host.front() != '-';
}

sys::Result<std::uint16_t> parse_port(std::string_view s, std::string_view spec) {
  if (auto port = port_number(s)) return *port;
  return sys::plain_error("--allow `" + std::string(spec) + "`: bad port `" + std::string(s) + "`");
}

// libidn2 is loaded on first use: only non-ASCII host names need it, and mapping it (and libunistring) at every
// start-up costs ~0.5 ms and 10 page faults (bench/startup). Null if the library cannot be loaded.
struct Idn2 {
  decltype(&idn2_to_ascii_8z) to_ascii = nullptr;
  decltype(&idn2_free) free = nullptr;
};

const Idn2& idn2() {
  static const Idn2 lib = [] {
    Idn2 l;
    void* h = ::dlopen("libidn2.so.0", RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) return l;
    l.to_ascii = reinterpret_cast<decltype(&idn2_to_ascii_8z)>(::dlsym(h, "idn2_to_ascii_8z"));
    l.free = reinterpret_cast<decltype(&idn2_free)>(::dlsym(h, "idn2_free"));
    if (l.to_ascii == nullptr || l.free == nullptr) l = {};
    return l;
  }();
  return lib;
}

// The parts of a URL around its host[:port]: `scheme://`, `user:password@` and `/path?query#fragment`.
struct UrlParts {
  std::string_view scheme;    // "https", or empty
  std::string_view userinfo;  // "user:password", or empty
  bool has_userinfo = false;
  std::string_view host_port;
  bool has_path = false;
};

UrlParts split_url(std::string_view spec) {
  UrlParts u;
  std::string_view rest = spec;
  if (auto sep = rest.find("://"); sep != std::string_view::npos) {
    u.scheme = rest.substr(0, sep);
    rest = rest.substr(sep + 3);
  }
  auto end = rest.find_first_of("/?#");
  u.has_path = end != std::string_view::npos;
  rest = rest.substr(0, end);
  if (auto at = rest.rfind('@'); at != std::string_view::npos) {
    u.has_userinfo = true;
    u.userinfo = rest.substr(0, at);
    rest = rest.substr(at + 1);
  }
  u.host_port = rest;
  return u;
}

// The entry as typed, but for a password in it (an error line ends up in logs).
std::string without_password(std::string_view spec, const UrlParts& u) {
  auto colon = u.userinfo.find(':');
  if (colon == std::string_view::npos) return std::string(spec);
  auto password_at = static_cast<std::size_t>(u.userinfo.data() - spec.data()) + colon + 1;
  return std::string(spec.substr(0, password_at)) + "***" + std::string(spec.substr(password_at + u.userinfo.size() - colon - 1));
}

// A URL given where a host is wanted (`https://api.example.com/v1`, `user@host`, `host/path`): the allowlist holds
// hosts and ports, so the message says what to give instead and which parts have no place in an entry.
std::optional<std::string> url_instead_of_host(std::string_view spec) {
  auto u = split_url(spec);
  if (u.scheme.empty() && !u.has_userinfo && !u.has_path) return std::nullopt;
  std::string host(u.host_port);
  std::vector<std::string> why;
  if (!u.scheme.empty()) {
    // An entry without a port means 443: a plain-text scheme's own port has to be given.
    bool plain = u.scheme == "http" || u.scheme == "ws";
    bool has_port = host.starts_with('[') ? host.find("]:") != std::string::npos : host.find(':') != std::string::npos;
    bool add_port = plain && !has_port && !host.empty();
    if (add_port) host += ":80";
    why.push_back("no `" + std::string(u.scheme) + "://`" + (add_port ? ", its port instead" : ""));
  }
  if (u.has_userinfo) why.emplace_back("no user name or password: the proxy sends none");
  if (u.has_path) why.emplace_back("no path: a host is allowed whole");
  std::string reasons;
  for (const auto& w : why) reasons += (reasons.empty() ? "" : "; ") + w;
  return "--allow `" + without_password(spec, u) + "`: give a host[:port], not a URL" +
         (host.empty() ? "" : ": --allow " + host) + " (" + reasons + ")";
}

}  // namespace

std::string normalize_host(std::string_view host) {
  std::string h(host);
  if (!h.empty() && h.back() == '.') h.pop_back();
  if (h.empty()) return {};
  if (auto a = canonical_address(h); !a.empty()) return a;
  bool ascii = std::all_of(h.begin(), h.end(), [](unsigned char c) { return c < 0x80; });
  if (!ascii) {
    const Idn2& idn = idn2();
    char* out = nullptr;
    if (idn.to_ascii == nullptr || idn.to_ascii(h.c_str(), &out, IDN2_NONTRANSITIONAL | IDN2_NFC_INPUT) != IDN2_OK) return {};
    h = out;
    idn.free(out);
  }
  std::transform(h.begin(), h.end(), h.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return valid_label_chars(h) ? h : std::string();
}

bool is_ip_literal(std::string_view host) { return !canonical_address(host).empty(); }

bool is_internal_address(std::string_view address) {
  auto a = canonical_address(address);
  unsigned char b[16];
  if (::inet_pton(AF_INET, a.c_str(), b) == 1) {
    return b[0] == 0 || b[0] == 10 || b[0] == 127 || (b[0] == 169 && b[1] == 254) ||
           (b[0] == 172 && (b[1] & 0xf0) == 16) || (b[0] == 192 && b[1] == 168) ||
           (b[0] == 100 && (b[1] & 0xc0) == 64) || b[0] >= 224;
  }
  if (::inet_pton(AF_INET6, a.c_str(), b) == 1) {
    static const unsigned char v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (std::equal(v4mapped, v4mapped + 12, b)) {
      char v4[INET_ADDRSTRLEN];
      return is_internal_address(::inet_ntop(AF_INET, b + 12, v4, sizeof v4));
    }
    bool unspecified_or_loopback = std::all_of(b, b + 15, [](unsigned char c) { return c == 0; }) && (b[15] <= 1);
    return unspecified_or_loopback || (b[0] & 0xfe) == 0xfc /*ULA*/ || (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) ||
           b[0] == 0xff /*multicast*/;
  }
  return true;  // not an address at all: treat as internal (refuse)
}

sys::Result<AllowEntry> parse_allow_entry(std::string_view spec) {
  if (auto url = url_instead_of_host(spec)) return sys::plain_error(*url);
  AllowEntry e;
  e.text = std::string(spec);
  std::string_view host = spec, port;
  if (spec.starts_with("[")) {  // [v6]:port
    auto close = spec.find(']');
    if (close == std::string_view::npos) return sys::plain_error("--allow `" + e.text + "`: missing `]`");
    host = spec.substr(1, close - 1);
    if (close + 1 < spec.size()) {
      if (spec[close + 1] != ':') return sys::plain_error("--allow `" + e.text + "`: expected `:PORT` after `]`");
      port = spec.substr(close + 2);
    }
  } else if (auto colon = spec.rfind(':'); colon != std::string_view::npos && spec.find(':') == colon) {
    host = spec.substr(0, colon);
    port = spec.substr(colon + 1);
  }
  if (port == "*") {
    e.ports.clear();
  } else if (!port.empty()) {
    auto p = parse_port(port, spec);
    if (!p) return p.error();
    e.ports = {*p};
  } else {
    e.ports = {kDefaultPort};
  }
  if (host.starts_with("*.")) {
    e.kind = AllowEntry::Kind::wildcard;
    e.host = normalize_host(host.substr(2));
  } else {
    e.host = normalize_host(host);
    if (is_ip_literal(e.host)) e.kind = AllowEntry::Kind::address;
  }
  if (e.host.empty()) return sys::plain_error("--allow `" + e.text + "`: not a valid host name or address");
  return e;
}

std::vector<AllowEntry> expand_loopback_name(AllowEntry entry) {
  bool loopback_name = entry.kind == AllowEntry::Kind::exact && (entry.host == "localhost" || entry.host.ends_with(".localhost"));
  if (!loopback_name) return {std::move(entry)};
  AllowEntry v4 = entry, v6 = entry;
  v4.kind = v6.kind = AllowEntry::Kind::address;
  v4.host = "127.0.0.1";
  v6.host = "::1";
  return {std::move(entry), std::move(v4), std::move(v6)};
}

std::optional<std::uint16_t> port_number(std::string_view text) {
  unsigned v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || v == 0 || v > 65535) return std::nullopt;
  return static_cast<std::uint16_t>(v);
}

Decision Allowlist::check_name(std::string_view host_in, std::uint16_t port) const {
  auto host = normalize_host(host_in);
  if (host.empty()) return {false, "malformed host name"};
  if (is_ip_literal(host)) {
    if (address_allowed(host, port)) return {true, "allowed by address"};
    if (every_name_ && host_loopback(host)) return {true, "recorded by confine learn"};
    return {false, "IP-literal destinations need an address entry"};
  }
  for (const auto& e : entries_)
    if (port_matches(e, port) && name_matches(e, host)) return {true, "allowed by " + e.text};
  if (every_name_) return {true, "recorded by confine learn"};
  return {false, "not in the allowlist"};
}

bool Allowlist::allows_name_on_some_port(std::string_view host_in) const {
  auto host = normalize_host(host_in);
  if (host.empty() || is_ip_literal(host)) return false;
  return every_name_ || std::any_of(entries_.begin(), entries_.end(), [&](const AllowEntry& e) { return name_matches(e, host); });
}

std::vector<std::uint16_t> Allowlist::transparent_ports(std::string_view host_in) const {
  auto host = normalize_host(host_in);
  std::vector<std::uint16_t> ports;
  if (host.empty() || is_ip_literal(host)) return ports;
  if (every_name_) ports.insert(ports.end(), std::begin(kAnyPortTransparent), std::end(kAnyPortTransparent));
  for (const auto& e : entries_) {
    if (!name_matches(e, host)) continue;
    if (e.ports.empty()) ports.insert(ports.end(), std::begin(kAnyPortTransparent), std::end(kAnyPortTransparent));
    else ports.insert(ports.end(), e.ports.begin(), e.ports.end());
  }
  std::sort(ports.begin(), ports.end());
  ports.erase(std::unique(ports.begin(), ports.end()), ports.end());
  return ports;
}

Decision Allowlist::check_address(std::string_view address, std::uint16_t port) const {
  if (!is_internal_address(address)) return {true, "public address"};
  if (address_allowed(address, port)) return {true, "allowed by address"};
  return {false, "resolves to an internal address (" + std::string(address) + "); allow it by address to reach it"};
}

Decision Allowlist::check_literal(std::string_view address, std::uint16_t port) const {
  if (every_name_ && !address_allowed(address, port) && host_loopback(address)) return {true, "recorded by confine learn"};
  return check_address(address, port);
}

bool Allowlist::address_allowed(std::string_view address, std::uint16_t port) const {
  auto a = canonical_address(address);
  return std::any_of(entries_.begin(), entries_.end(), [&](const AllowEntry& e) {
    return e.kind == AllowEntry::Kind::address && e.host == a && port_matches(e, port);
  });
}

std::vector<std::pair<std::string, std::uint16_t>> Allowlist::loopback_forwards() const {
  std::vector<std::pair<std::string, std::uint16_t>> out;
  for (const auto& e : entries_)
    if (e.kind == AllowEntry::Kind::address && (e.host == "127.0.0.1" || e.host == "::1"))
      for (auto p : e.ports)
        // Once each: `--allow localhost:P` and `--allow 127.0.0.1:P` name the same port.
        if (std::find(out.begin(), out.end(), std::pair<std::string, std::uint16_t>(e.host, p)) == out.end())
          out.emplace_back(e.host, p);
  return out;
}

}  // namespace confine
