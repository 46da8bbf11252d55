// libFuzzer target for the ClientHello SNI parser (built with -Dfuzz=true and clang; see tests/fuzz/meson.build).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/tls_sni.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto r = confine::parse_client_hello_sni(std::string_view(reinterpret_cast<const char*>(data), size));
  if (r.kind == confine::SniResult::Kind::found && r.name.empty()) __builtin_trap();
  return 0;
}
