// libFuzzer target for the secrets' substitution in request header values (untrusted bytes from the sandbox) and
// for the --secret/--broker parsers (built with -Dfuzz=true and clang; see tests/fuzz/meson.build).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/secrets.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  static const confine::SecretSet secrets = [] {
    auto spec = confine::parse_secret("KEY", "listed.example");
    spec->placeholder = "confine-placeholder-00ff";
    return confine::SecretSet({{*spec, "REAL-VALUE"}});
  }();
  // The real value may only appear for the listed host, and only where the placeholder was.
  auto other = secrets.substitute_header("Authorization", text, "other.example");
  if (other.value != text || !other.substituted.empty()) __builtin_trap();
  auto listed = secrets.substitute_header("Authorization", text, "listed.example");
  if (!listed.withheld.empty()) __builtin_trap();
  if (text.find("confine-placeholder-00ff") == std::string_view::npos && listed.value != text) __builtin_trap();
  auto host = secrets.substitute_header("Host", text, "listed.example");
  if (host.value != text) __builtin_trap();
  auto cut = text.find('\n');
  (void)confine::parse_secret(text.substr(0, cut), cut == std::string_view::npos ? "" : text.substr(cut + 1));
  (void)confine::parse_broker(text);
  return 0;
}
