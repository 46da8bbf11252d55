// The egress allowlist (--allow HOST[:PORT]): parsing, normalisation and decisions. Pure, so every rule of the
// semantics has a unit test; the proxy (src/net/proxy) only asks it questions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sys/result.h"

namespace confine {

struct AllowEntry {
  enum class Kind { exact, wildcard, address } kind = Kind::exact;
  std::string host;            // normalised: lower-case ASCII (punycode), no trailing dot; wildcard: the suffix
  std::vector<std::uint16_t> ports;  // empty: any port
  std::string text;            // as given, for messages
};

// "example.com" (port 443), "example.com:80", "*.npmjs.org", "127.0.0.1:11434", "[::1]:8080", "Bücher.example".
sys::Result<AllowEntry> parse_allow_entry(std::string_view spec);

// The entries `entry` stands for: a name for the loopback (`localhost`, `*.localhost` names, RFC 6761; it cannot
// be rebound to another address) is itself and the loopback addresses on its ports, so a client that resolves it
// itself (to 127.0.0.1 or ::1) reaches the host's port as one that asks the proxy does; any other entry is itself.
std::vector<AllowEntry> expand_loopback_name(AllowEntry entry);

// A TCP port as written: digits only, 1..65535 ("+1", " 1", "0" and "8000-8010" are none). One parser for every
// place confine reads a port (--allow, --publish, --broker, --upstream-proxy, a request's authority).
std::optional<std::uint16_t> port_number(std::string_view text);

// Lower-case, drop one trailing dot, IDN to punycode; empty on a malformed host name.
std::string normalize_host(std::string_view host);

// True for address literals (IPv4 dotted quad, IPv6 with or without brackets).
bool is_ip_literal(std::string_view host);

// Loopback, RFC 1918, ULA, link-local, CGNAT, unspecified, multicast, cloud metadata: never reached by name.
bool is_internal_address(std::string_view address);

// The ports on which a name allowed on any port (`name:*`) is reached without the proxy: web traffic. A listener
// per port of the 65535 is not made; through the proxy, such a name is reached on every port.
inline constexpr std::uint16_t kAnyPortTransparent[] = {80, 443};

struct Decision {
  bool allowed = false;
  std::string reason;  // "allowed by *.npmjs.org", "not in the allowlist", …
};

class Allowlist {
 public:
  Allowlist() = default;
  explicit Allowlist(std::vector<AllowEntry> entries) : entries_(std::move(entries)) {}
  // `confine learn`: every host name is allowed on every port besides the entries (each connection is then a line
  // of the net log, which learn reads back), and so is the host's loopback by address (127.0.0.1, ::1: the local
  // services a strict profile allows by address); other addresses keep their rules, so another IP literal or a
  // name that resolves to an internal address still needs an address entry and is recorded as refused.
  static Allowlist every_name(std::vector<AllowEntry> entries) {
    Allowlist a(std::move(entries));
    a.every_name_ = true;
    return a;
  }

  // The request's target, before resolution. IP literals need an address entry.
  [[nodiscard]] Decision check_name(std::string_view host, std::uint16_t port) const;
  // A host name (not an address) that some entry allows on some port: the DNS stub gives it an address, and the
  // connection's port is checked when it is made.
  [[nodiscard]] bool allows_name_on_some_port(std::string_view host) const;
  // The ports a name is reached on without the proxy (confine listens on each at the name's address): every port
  // an entry for the name lists, sorted, once each; an entry for any port (`name:*`), or every_name, adds
  // kAnyPortTransparent.
  [[nodiscard]] std::vector<std::uint16_t> transparent_ports(std::string_view host) const;
  // A resolved address of an allowed name: internal addresses need an address entry (no SSRF, no rebinding).
  [[nodiscard]] Decision check_address(std::string_view address, std::uint16_t port) const;
  // An address the connection named itself (no name resolved to it): as check_address, but learning, the host's
  // loopback is recorded rather than refused.
  [[nodiscard]] Decision check_literal(std::string_view address, std::uint16_t port) const;
  // Address entries on the host's loopback: forwarded from the sandbox's loopback at the same port.
  [[nodiscard]] std::vector<std::pair<std::string, std::uint16_t>> loopback_forwards() const;
  [[nodiscard]] const std::vector<AllowEntry>& entries() const { return entries_; }

 private:
  [[nodiscard]] bool address_allowed(std::string_view address, std::uint16_t port) const;
  std::vector<AllowEntry> entries_;
  bool every_name_ = false;
};

}  // namespace confine
