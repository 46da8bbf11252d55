// libFuzzer target for --publish's hand-written parser (built with -Dfuzz=true and clang; see tests/fuzz/meson.build):
// any text either fails with an error naming the spec, or gives ports in range and an address that prints back.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/published_port.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view spec(reinterpret_cast<const char*>(data), size);
  auto parsed = confine::parse_published_port(spec);
  if (!parsed.ok()) {
    if (!parsed.error().what.starts_with("--publish ")) __builtin_trap();
    return 0;
  }
  if (parsed->port == 0 || parsed->host_port == 0 || parsed->spec != spec) __builtin_trap();
  auto again = confine::parse_published_port(parsed->host_endpoint() + ":" + std::to_string(parsed->port));
  if (!again.ok() || again->host_address != parsed->host_address || again->host_port != parsed->host_port) __builtin_trap();
  return 0;
}
