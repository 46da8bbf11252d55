// libFuzzer target for the secrets' substitution in request header values (untrusted bytes from the sandbox), for
// the first bytes of a connection that decide whether it is read as HTTP, and for the --secret/--broker parsers
// (built with -Dfuzz=true and clang; see tests/fuzz/meson.build).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/secrets.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  static const confine::SecretSet secrets = [] {
    auto spec = confine::parse_secret("KEY", "listed.example,http://plain.example:8080");
    spec->placeholder = "confine-placeholder-00ff";
    return confine::SecretSet({{*spec, "REAL-VALUE"}});
  }();
  auto to = [](const char* host, std::uint16_t port, bool tls, const char* address) {
    return confine::RequestDestination{host, port, tls, address};
  };
  bool has_placeholder = text.find("confine-placeholder-00ff") != std::string_view::npos;
  // The real value may only appear for the listed host, and only where the placeholder was.
  auto other = secrets.substitute_header("Authorization", text, to("other.example", 443, true, ""));
  if (other.value != text || !other.substituted.empty()) __builtin_trap();
  auto listed = secrets.substitute_header("Authorization", text, to("listed.example", 443, true, ""));
  if (!listed.withheld.empty() || !listed.refused.empty()) __builtin_trap();
  if (!has_placeholder && listed.value != text) __builtin_trap();
  auto host = secrets.substitute_header("Host", text, to("listed.example", 443, true, ""));
  if (host.value != text) __builtin_trap();
  // In clear text, never to a remote address but on the port named plain HTTP; always to loopback.
  auto remote = secrets.substitute_header("Authorization", text, to("listed.example", 80, false, "192.0.2.1"));
  if (remote.value != text || !remote.substituted.empty() || remote.refused.empty() != !has_placeholder) __builtin_trap();
  auto named = secrets.substitute_header("Authorization", text, to("plain.example", 8080, false, "192.0.2.1"));
  if (named.value != listed.value) __builtin_trap();
  auto other_port = secrets.substitute_header("Authorization", text, to("plain.example", 8081, false, "192.0.2.1"));
  if (other_port.value != text) __builtin_trap();
  auto local = secrets.substitute_header("Authorization", text, to("listed.example", 80, false, "127.0.0.1"));
  if (local.value != listed.value) __builtin_trap();
  (void)confine::classify_request_start(text);
  auto cut = text.find('\n');
  (void)confine::parse_secret(text.substr(0, cut), cut == std::string_view::npos ? "" : text.substr(cut + 1));
  (void)confine::parse_broker(text);
  return 0;
}
