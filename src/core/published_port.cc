#include "core/published_port.h"

#include <arpa/inet.h>

#include <algorithm>
#include <fmt/format.h>

#include "core/allowlist.h"

namespace confine {
namespace {

constexpr std::string_view kForm = "expected [HOSTADDR:]HOSTPORT:PORT, e.g. 3000:3000 or 127.0.0.1:8080:80";

sys::Error bad(std::string_view spec, std::string_view why) {
  return sys::plain_error(fmt::format("--publish {}: {}", spec, why));
}

// A numeric address only: a name would be resolved at every run and could change what is exposed.
bool parse_address(std::string_view text, bool bracketed, PublishedPort& out) {
  // inet_pton reads up to a NUL: what follows one would be kept in the address unchecked.
  if (text.find('\0') != std::string_view::npos) return false;
  std::string addr(text);
  unsigned char buf[16];
  if (bracketed) {
    if (::inet_pton(AF_INET6, addr.c_str(), buf) != 1) return false;
    out.host_ipv6 = true;
  } else if (::inet_pton(AF_INET, addr.c_str(), buf) != 1) {
    return false;
  }
  out.host_address = std::move(addr);
  return true;
}

}  // namespace

std::string PublishedPort::host_endpoint() const {
  return host_ipv6 ? fmt::format("[{}]:{}", host_address, host_port) : fmt::format("{}:{}", host_address, host_port);
}

bool PublishedPort::reachable_from_network() const {
  unsigned char buf[16] = {};
  if (host_ipv6) return ::inet_pton(AF_INET6, host_address.c_str(), buf) == 1 && std::all_of(buf, buf + 16, [](auto b) { return b == 0; });
  return host_address == "0.0.0.0";
}

sys::Result<PublishedPort> parse_published_port(std::string_view spec) {
  PublishedPort out;
  out.spec = std::string(spec);
  std::string_view rest = spec;
  if (auto slash = rest.rfind('/'); slash != std::string_view::npos) {
    auto protocol = rest.substr(slash + 1);
    if (protocol == "udp" || protocol == "sctp") return bad(spec, "only TCP ports can be published");
    if (protocol != "tcp") return bad(spec, fmt::format("unknown protocol `{}` (only tcp)", protocol));
    rest = rest.substr(0, slash);
  }
  if (!rest.empty() && rest.front() == '[') {
    auto close = rest.find("]:");
    if (close == std::string_view::npos || !parse_address(rest.substr(1, close - 1), true, out))
      return bad(spec, "the host address is not an IPv6 address in brackets");
    rest = rest.substr(close + 2);
  } else if (auto first = rest.find(':'); first != std::string_view::npos && rest.find(':', first + 1) != std::string_view::npos) {
    if (!parse_address(rest.substr(0, first), false, out))
      return bad(spec, fmt::format("`{}` is not an IPv4 address (an IPv6 one goes in brackets)", rest.substr(0, first)));
    rest = rest.substr(first + 1);
  }
  auto colon = rest.find(':');
  if (colon == std::string_view::npos) return bad(spec, kForm);
  auto host_port = port_number(rest.substr(0, colon));
  if (!host_port) return bad(spec, fmt::format("host port `{}` is not a number from 1 to 65535", rest.substr(0, colon)));
  auto port = port_number(rest.substr(colon + 1));
  if (!port) return bad(spec, fmt::format("port `{}` is not a number from 1 to 65535", rest.substr(colon + 1)));
  out.host_port = *host_port;
  out.port = *port;
  return out;
}

}  // namespace confine
