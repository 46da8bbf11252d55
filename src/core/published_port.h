// --publish [HOSTADDR:]HOSTPORT:PORT (docker's -p): a port of the sandbox reached through a socket confine listens on
// at the host. Parsed once here; nothing after resolve() sees the text again, except to name it in messages.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "sys/result.h"

namespace confine {

struct PublishedPort {
  std::string spec;                       // as the user wrote it, for messages
  std::string host_address = "127.0.0.1"; // numeric, without brackets; never 0.0.0.0 unless the user wrote it
  bool host_ipv6 = false;
  std::uint16_t host_port = 0;
  std::uint16_t port = 0;  // inside: the sandbox's own loopback, 127.0.0.1:port

  // "127.0.0.1:3000", "[::1]:8080"
  [[nodiscard]] std::string host_endpoint() const;
  // 0.0.0.0 or :: listens on every address of the host: other machines can connect.
  [[nodiscard]] bool reachable_from_network() const;
};

// docker's syntax: "3000:3000", "127.0.0.1:8080:80", "[::1]:8080:80", each with an optional "/tcp". An error names
// the spec and what is wrong with it, in one line ("--publish 1:2/udp: only TCP ports can be published").
sys::Result<PublishedPort> parse_published_port(std::string_view spec);

}  // namespace confine
