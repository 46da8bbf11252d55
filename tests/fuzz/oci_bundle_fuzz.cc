// libFuzzer target for the OCI bundle config reader (built with -Dfuzz=true and clang; see tests/fuzz/meson.build).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/oci_bundle.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto r = confine::parse_bundle_config(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.json");
  if (!r) return 0;
  // What it accepts is what confine run relies on: NAME=VALUE entries, an absolute cwd.
  for (const auto& e : r->env)
    if (e.empty() || e.front() == '=' || e.find('=') == std::string::npos) __builtin_trap();
  if (!r->cwd.empty() && r->cwd.front() != '/') __builtin_trap();
  return 0;
}
