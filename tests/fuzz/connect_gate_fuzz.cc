// libFuzzer target for the socket addresses the gate reads from a caller's memory, and the route each gets
// (built with -Dfuzz=true and clang; see tests/fuzz/meson.build).
#include <arpa/inet.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/connect_gate.h"

using namespace confine;

namespace {

bool parses_as_address(const std::string& text) {
  unsigned char buf[16];
  return ::inet_pton(AF_INET, text.c_str(), buf) == 1 || ::inet_pton(AF_INET6, text.c_str(), buf) == 1;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Allowlist allow = [] {
    auto loopback = parse_allow_entry("127.0.0.1:9123");
    auto name = parse_allow_entry("api.example.com");
    return Allowlist(std::vector<AllowEntry>{*loopback, *name});
  }();
  static const RequestRules rules;
  static const SecretSet secrets;
  static AddressBook book;
  static const bool named = book.address_for("api.example.com").has_value();
  (void)named;
  auto to = read_socket_address(std::string_view(reinterpret_cast<const char*>(data), size));
  bool ip = to.kind == SocketAddress::Kind::ipv4 || to.kind == SocketAddress::Kind::ipv6;
  // An address the gate routes is always a real address; nothing else carries one.
  if (ip != !to.address.empty()) __builtin_trap();
  if (ip && !parses_as_address(to.address)) __builtin_trap();
  if (!ip) return 0;
  GatePolicy policy{allow, rules, secrets, false, false, {3128}};
  auto route = route_connect(policy, book, to);
  // Only what the allowlist names leaves from the host: the loopback port it lists, or the name it allows.
  if (route.kind == ConnectRoute::Kind::host) {
    bool listed = (route.host == "127.0.0.1" && route.port == 9123) || (route.host == "api.example.com" && route.port == 443);
    if (!listed) __builtin_trap();
  }
  return 0;
}
